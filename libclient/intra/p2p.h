/* p2p.h — the intra-node point-to-point engine: the four send modes over eager copy and
 * in-memory rendezvous, and receives (DESIGN.md "Point-to-point", seed 004 for the modes).
 *
 *  - A send that finds its receive posted copies straight into the receive buffer (one copy),
 *    unless that buffer's layout is sparse: then the receiver lays it out (handoff.h).
 *  - Otherwise a standard send up to the eager limit (and any buffered send) copies into an
 *    envelope from the sender's cache and queues it as unexpected; the send is then complete.
 *  - Otherwise (large standard, synchronous) it queues a rendezvous envelope pointing at the
 *    sender's buffer; the receiver copies from there (one copy) and completes the send.
 * Each sender issues its sends one after the other into the receiver's queues under the
 * receiver's lock, so messages of one sender on one communicator arrive in order. */
#ifndef TMPI_LIBCLIENT_P2P_H
#define TMPI_LIBCLIENT_P2P_H

#include <stddef.h>

#include "mpi.h"
#include "request.h"
#include "send_mode.h"

struct tm_rank;
struct tm_envl;

/* Starts a send of bytes from buf to world rank w of this node, as rank src of context ctx
 * (dest: that rank in the sender's communicator, for sreq's status).  Returns 0 when the send
 * is complete (sreq done), 1 when it is pending in a rendezvous (sreq completes later), or
 * -ENOMEM.  A send to any rank (this node or another) is comm/p2p_route.h tm_send. */
int tm_intra_send(struct tm_rank *me, int w, int ctx, int src, int dest, int tag, const void *buf,
                  size_t bytes, enum tm_send_mode mode, struct tm_request *sreq);

/* Starts a receive into rreq (matches at once or is posted) on context id ctx (src: the
 * sender's rank in that context's communicator, or a wildcard).  On a communicator:
 * comm/p2p_route.h tm_recv; without one, e.g. the collectives' inter-node phase (net_p2p.h
 * tm_net_isend sends to it), this. */
void tm_recv_ctx(struct tm_rank *me, int ctx, void *buf, size_t cap, int src, int tag,
                 struct tm_request *rreq);
/* The same into box's mailbox on behalf of me (rreq's owner, woken when it completes): the
 * runner of non-blocking collectives receives the leader's messages (coll_net.h). */
void tm_recv_box(struct tm_rank *me, struct tm_rank *box, int ctx, void *buf, size_t cap, int src,
                 int tag, struct tm_request *rreq);

/* A blocking receive (complete on return) that waits without posting: for small buffers in
 * jobs on one node, where the message comes through a fast box or as an eager copy, so
 * nothing is lost by not letting the sender copy into the buffer, and the post and its
 * removal under the mailbox lock are saved (fbox.h). */
void tm_intra_recv_wait_small(struct tm_rank *me, int ctx, void *buf, size_t cap, int src, int tag,
                              struct tm_request *rreq);

/* Looks for a matching unexpected message on context ctx; with block, waits for one.  Returns
 * 1 if found (status filled), else 0.  Given ret, also takes the message out of the queues
 * (MPI_Mprobe): *ret is then the caller's until tm_recv_envl.  On a communicator:
 * comm/p2p_route.h tm_probe, tm_mprobe. */
/* -EPIPE: nothing is queued and the communicator has ranks of a job that ended (net/xjob.h). */
int tm_intra_mprobe(struct tm_rank *me, int ctx, int src, int tag, int block, MPI_Status *status,
                    struct tm_envl **ret);
/* Receives the unexpected message e (taken from the queues) into rreq, whose buf and cap are
 * set; rreq completes now, or (a three-phase message from another node) when its data came. */
void tm_recv_envl(struct tm_rank *me, struct tm_request *rreq, struct tm_envl *e);

/* Cancels a nonblocking send whose envelope still waits unmatched in an intra-node
 * receiver's queue (eager or rendezvous); 1 if it was taken back (r is then done and marked
 * cancelled).  A message in a fast box cannot be taken back (0); one sent to another node is
 * the network's to cancel (net_p2p.h tm_net_cancel_send, chosen by comm/p2p_route.h). */
int tm_cancel_send(struct tm_rank *me, struct tm_request *r);

/* Cancels a pending receive; returns 1 if it was cancelled. */
int tm_cancel_recv(struct tm_rank *me, struct tm_request *r);

/* Condition for tm_wait: the request (arg) is done. */
int tm_req_done_cond(void *arg);

#endif
