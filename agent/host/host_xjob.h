/* host_xjob.h — the job host's end of the path between two jobs of one user (svc xjob_send,
 * client upcall xjob_frame; docs/PROTOCOL.md "Between jobs"): a frame goes to the agent as an
 * XFrame on the host's channel, and the agent's XFrame / XGone for this job go up to libtmpi.
 * The agent relays (agent/control/xrelay.h): it stamps the sender's job and carries a frame
 * only between jobs of one user. */
#ifndef TMPI_AGENT_HOST_XJOB_H
#define TMPI_AGENT_HOST_XJOB_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"

struct bufferevent;
struct job;

/* The channel to the agent (NULL: it is gone; sends fail with -EPIPE).  Loop thread. */
void host_xjob_channel(struct bufferevent *chan);
/* svc xjob_send (proto/svc/svc.h).  Any thread; never blocks. */
int host_xjob_send(uint64_t to_job, uint32_t to_node, const void *hdr, size_t hlen,
                   const void *payload, size_t len);
/* The agent's XFrame / XGone for job j (loop thread): to libtmpi's upcall, dropped when the
 * job's libtmpi state does not exist (nobody can wait for it yet). */
void host_xjob_frame(struct job *j, const Tmpi__XFrame *f);
void host_xjob_gone(struct job *j, const Tmpi__XGone *g);

#endif
