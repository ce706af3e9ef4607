/* xconn.h — MPI_Comm_connect / accept between two jobs of one user: the handshake on the path
 * between jobs (net/xjob.h, frames CONNECT, CONNECT_ANS, CANCEL; docs/PROTOCOL.md "Between
 * jobs").  The connecting root sends its group (world ranks of its job) and the port name to
 * the port's job; there the connect waits in the port's queue like any (dyn_tab.h, remote 2),
 * the accepting root answers with the inter-communicator's context ids (from the agent:
 * ctx.h, so neither job has them) and its group.  Each side names the other's ranks as
 * foreign ranks (TM_XRANK).  Each group goes with the nodes of its ranks in their job, so that
 * either job may run across several nodes: every host sends to each foreign rank's node (the
 * agents route by job and node, agent/control/xrelay.h), the connect to the port's node (the
 * last number of its name), the answer to the connecting root's.  The jobs may run on one
 * agent or on several.  A group with ranks of two jobs (a merged communicator) neither
 * connects to nor accepts a third job (-EXDEV). */
#ifndef TMPI_LIBCLIENT_XCONN_H
#define TMPI_LIBCLIENT_XCONN_H

#include <stdint.h>

#include "job.h"

struct tm_conn_req;

/* The group cmap[0..cn) connects to port of job `job`: waits for the accept, at most ms
 * milliseconds before it asks to be dropped.  0 with the ids and the accepting group as
 * foreign ranks (*ret_amap, malloc'd), an MPI error class the acceptor gave, or a negative
 * errno: -ENOENT no such port, -EBUSY too many connects wait there, -ETIMEDOUT, -EPIPE the
 * job cannot be reached (the agent's words in why[wlen]: it ended, it is on another agent),
 * -ENOTSUP no path (an agent without it), -EXDEV cmap has foreign ranks, -ENOSPC. */
int tm_xconn_connect(struct tm_rank *me, uint64_t job, const char *port, const int32_t *cmap,
                     int cn, int64_t ms, int32_t ctx[3], int32_t **ret_amap, int *ret_an, char *why,
                     size_t wlen);
/* The acceptor's answer to a connect of another job (r->remote 2): sends it, frees r. */
void tm_xconn_answer(struct tm_job *j, struct tm_conn_req *r);
/* Registers the handshake's frames with the job's path (net/xjob.h tm_xjob_set_ctl). */
void tm_xconn_register(struct tm_job *j);

#endif
