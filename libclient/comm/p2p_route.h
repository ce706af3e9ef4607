/* p2p_route.h — point-to-point on a communicator.  A message goes to a rank of this node
 * through the intra-node engine (intra/p2p.h), or to another node through the network's
 * protocol (net/net_p2p.h): the choice is made here, above both, so neither includes the
 * other. */
#ifndef TMPI_LIBCLIENT_P2P_ROUTE_H
#define TMPI_LIBCLIENT_P2P_ROUTE_H

#include "comm.h"
#include "p2p.h"

/* Starts a send of bytes from buf to comm rank dest.  Returns 0 when the send is complete
 * (sreq done), 1 when it is pending in a rendezvous or three-phase exchange (sreq completes
 * later; st_error is set if the link failed meanwhile), -ENOMEM, or -EPIPE when the link to
 * the destination's node is gone.  MPI_PROC_NULL completes at once. */
int tm_send(struct tm_rank *me, struct tm_commref *cr, const void *buf, size_t bytes, int dest,
            int tag, enum tm_send_mode mode, struct tm_request *sreq);

/* MPI_Cancel of a nonblocking send: the engine that sent it takes its message back if no
 * receive has matched it yet (intra/p2p.h tm_cancel_send; another node's: net_p2p.h
 * tm_net_cancel_send, whose request then completes when that node answers).  1 if the cancel
 * succeeded or is being decided, 0 if it failed (the send completes as usual). */
int tm_send_cancel(struct tm_rank *me, struct tm_request *sreq);

/* The receives and probes on a communicator: the network queues what it brings into the same
 * mailbox (net_p2p.h), so they are the intra-node engine's, on the communicator's context. */
static inline void tm_recv(struct tm_rank *me, struct tm_commref *cr, void *buf, size_t cap,
                           int src, int tag, struct tm_request *rreq)
{
    tm_recv_ctx(me, cr->c->ctx, buf, cap, src, tag, rreq);
}
static inline void tm_recv_wait_small(struct tm_rank *me, struct tm_commref *cr, void *buf,
                                      size_t cap, int src, int tag, struct tm_request *rreq)
{
    tm_intra_recv_wait_small(me, cr->c->ctx, buf, cap, src, tag, rreq);
}
static inline int tm_mprobe(struct tm_rank *me, struct tm_commref *cr, int src, int tag, int block,
                            MPI_Status *status, struct tm_envl **ret)
{
    return tm_intra_mprobe(me, cr->c->ctx, src, tag, block, status, ret);
}
static inline int tm_probe(struct tm_rank *me, struct tm_commref *cr, int src, int tag, int block,
                           MPI_Status *status)
{
    return tm_intra_mprobe(me, cr->c->ctx, src, tag, block, status, NULL);
}

#endif
