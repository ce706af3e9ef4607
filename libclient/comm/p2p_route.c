/* p2p_route.c — a send goes to this node's engine or to the network (p2p_route.h). */
#include "p2p_route.h"

#include "job.h"
#include "net_p2p.h"
#include "xjob.h"

int tm_send(struct tm_rank *me, struct tm_commref *cr, const void *buf, size_t bytes, int dest,
            int tag, enum tm_send_mode mode, struct tm_request *sreq)
{
    if (dest == MPI_PROC_NULL) {
        tm_req_set_done(sreq, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
        return 0;
    }
    struct tm_comm *c = cr->c;
    const int w = tm_comm_peer_world(c, dest);
    if (TM_UNLIKELY(tm_xrank(w))) /* a rank of another job (net/xjob.h) */
        return tm_xjob_send(me, w, c->ctx, cr->rank, dest, tag, buf, bytes, mode, sreq);
    struct tm_net *net = me->job->net;
    if (TM_UNLIKELY(net)) {
        tm_net_check(me, net);
        if (tm_net_remote(net, w)) {
            sreq->st_source = dest;
            sreq->st_tag = tag;
            return tm_net_isend(me, w, c->ctx, cr->rank, tag, buf, bytes, TMPI_CH_P2P, mode, sreq);
        }
    }
    return tm_intra_send(me, w, c->ctx, cr->rank, dest, tag, buf, bytes, mode, sreq);
}

int tm_send_cancel(struct tm_rank *me, struct tm_request *sreq)
{
    if (sreq->env_net) return tm_net_cancel_send(me, sreq) > 0;
    return tm_cancel_send(me, sreq);
}
