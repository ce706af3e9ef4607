/* net.c — inter-node point-to-point, the entry points: tm_net_isend picks eager or
 * three-phase, tm_net_consume hands a matched remote message to its receive; the receive daemon
 * upcalls (net.h) decode the header and dispatch by frame type to eager.c, rndv.c and ack.c,
 * or to the handlers another protocol registered for its type (net_proto.h).
 * Runs on a rank thread, an agent receive daemon, or a rank thread inside svc net_poll.
 *
 * Mailbox order: a frame's unexpected entry is appended under the destination's mailbox lock
 * when the frame is handled, and frames of one link are handled one after the other, so the
 * arrival list keeps the sender's order for every kind of entry (stored, RTS, held). */
#include "net.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "match.h"
#include "msg_hdr.h"
#include "net_int.h"
#include "net_proto.h"
#include "type_copy.h"

/* *ctx of a frame whose protocol half was refused: net_frame drops it. */
static const char bad_frame;

/* The frame types that are not point-to-point's are other protocols' (net_proto.h). */
static int other_proto(unsigned type)
{
    return !tm_msg_is_p2p(type);
}

static const struct tm_net_proto *proto_of(struct tm_job *j, unsigned type)
{
    return j->net && type < TM_MSG_NTYPES ? j->net->protos[type] : NULL;
}

int tm_net_proto_register(struct tm_job *j, int type, const struct tm_net_proto *p)
{
    if (!j->net || type < 1 || tm_msg_is_p2p((unsigned)type) || type >= TM_MSG_NTYPES || !p ||
        !p->header || !p->frame)
        return -EINVAL;
    j->net->protos[type] = p;
    return 0;
}

void *tm_net_header(void *state, int node, const struct netd_hdr *h, void **ctx)
{
    struct tm_job *j = state;
    struct tm_msg_hdr m;
    if (j->net) tm_net_hb_recv(j->net);
    if (tm_msg_hdr_decode(h, &m) < 0) {
        if (j->net)
            tm_net_proto_error(j->net, node, "frame %llu: malformed protocol header (type %u)",
                               (unsigned long long)h->seq, h->proto[0]);
        *ctx = (void *)&bad_frame;
        return NULL;
    }
    if (other_proto(m.type)) {
        const struct tm_net_proto *p = proto_of(j, m.type);
        if (p) return p->header(j, node, &m, ctx);
        if (j->net)
            tm_net_proto_error(j->net, node, "frame %llu: no protocol takes type %u here",
                               (unsigned long long)h->seq, m.type);
        *ctx = (void *)&bad_frame;
        return NULL;
    }
    return tm_net_p2p_header(j, node, &m, ctx);
}

void tm_net_frame(void *state, int node, const struct netd_hdr *h, void *ctx)
{
    struct tm_job *j = state;
    struct tm_msg_hdr m;
    /* net_header has decoded the same bytes successfully */
    if (ctx == &bad_frame || tm_msg_hdr_decode(h, &m) < 0) return;
    if (other_proto(m.type)) {
        const struct tm_net_proto *p = proto_of(j, m.type);
        if (p) p->frame(j, node, &m, ctx);
        return;
    }
    tm_net_p2p_frame(j, node, &m, ctx);
}

int tm_net_isend(struct tm_rank *me, int world_dst, int ctx, int src, int tag, const void *buf,
                 size_t bytes, int channel, enum tm_send_mode mode, struct tm_request *req)
{
    struct tm_net *n = me->job->net;
    if (!n || world_dst < 0 || world_dst >= me->job->size || !tm_net_remote(n, world_dst) ||
        (channel != TMPI_CH_P2P && channel != TMPI_CH_COLL))
        return -EINVAL;
    const int node = n->node_of_rank[world_dst], chan = channel - 1;
    if (mode != TM_SEND_SYNC && bytes < n->eager_limit) {
        int r = tm_net_send_eager(n, me, node, chan, world_dst, ctx, src, tag, buf, bytes, req);
        if (r != -EAGAIN) return r;
        /* No pool room for a copy: three-phase needs none. */
    }
    return tm_net_send_rts(n, me, node, chan, world_dst, ctx, src, tag, buf, bytes, mode, req);
}

void tm_net_consume(struct tm_rank *me, struct tm_request *rreq, struct tm_envl *e)
{
    struct tm_net *n = me->job->net;
    if (e->kind == TM_ENVL_NET) {
        size_t k = e->bytes <= rreq->cap ? e->bytes : rreq->cap;
        tm_copy_in(rreq, e->pbuf, NULL, k);
        if (e->pbuf) n->svc->pool_free(e->pbuf, e->bytes);
        tm_req_set_done(rreq, e->src, e->tag, k,
                        e->bytes > rreq->cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    } else {
        tm_net_answer_cts(n, rreq, e, me->rank);
    }
    free(e);
}

/* Checks what the agent does not know about: ranks of this job on the right nodes, a
 * communicator rank and tag the matching code can take.  0 or -EPROTO (reported). */
int tm_net_check_hdr(struct tm_net *n, int node, const struct tm_msg_hdr *h, int with_src)
{
    const int size = n->job->size;
    if (h->src_rank < 0 || h->src_rank >= size || h->dst_rank < 0 || h->dst_rank >= size ||
        n->node_of_rank[h->src_rank] != node || n->node_of_rank[h->dst_rank] != n->node) {
        tm_net_proto_error(n, node, "frame type %d from rank %d to rank %d: wrong nodes", h->type,
                           h->src_rank, h->dst_rank);
        return -EPROTO;
    }
    if (with_src && (h->comm_src < 0 || h->tag == MPI_ANY_TAG)) {
        tm_net_proto_error(n, node, "frame type %d: source %d / tag %d cannot be matched", h->type,
                           h->comm_src, h->tag);
        return -EPROTO;
    }
    return 0;
}

/* A header-only entry for a message from another node (heap: a daemon has no envelope
 * cache; tm_envl_release and tm_mbox_destroy free TM_ENVL_HEAP envelopes). */
struct tm_envl *tm_net_env(int node, const struct tm_msg_hdr *h, enum tm_envl_kind kind)
{
    struct tm_envl *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->kind = kind;
    e->ctx = h->context;
    e->src = h->comm_src;
    e->tag = h->tag;
    e->bytes = h->msg_len;
    e->cls = TM_ENVL_NCLASS; /* TM_ENVL_HEAP */
    e->node = node;
    e->chan = h->chan;
    e->wsrc = h->src_rank;
    e->flags = h->flags;
    e->cookie = h->cookie;
    return e;
}

/* Queues e for its destination, or hands it to a receive posted meanwhile.  Returns the
 * matched receive (e is then still the caller's) or NULL (queued). */
struct tm_request *tm_net_queue_or_match(struct tm_rank *r, struct tm_envl *e)
{
    struct tm_mbox *mb = &r->mbox;
    pthread_mutex_lock(&mb->lock);
    struct tm_request *rr = tm_match_posted(mb, e->ctx, e->src, e->tag);
    if (!rr) tm_add_unexp(mb, e);
    pthread_mutex_unlock(&mb->lock);
    if (!rr) tm_wake(&r->waker); /* a Probe may be waiting */
    return rr;
}

void *tm_net_p2p_header(struct tm_job *j, int node, const struct tm_msg_hdr *h, void **ctx)
{
    struct tm_net *n = j->net;
    *ctx = NULL;
    if (!n || node < 0 || node >= n->nnodes || node == n->node) return NULL;
    switch (h->type) {
    case TM_MSG_EAGER:
        return tm_net_eager_header(n, node, h, ctx);
    case TM_MSG_DATA:
        return tm_net_data_header(n, node, h, ctx);
    default:
        return NULL; /* RTS, CTS, ACK: no payload */
    }
}

void tm_net_p2p_frame(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx)
{
    struct tm_net *n = j->net;
    if (!n || node < 0 || node >= n->nnodes || node == n->node) {
        if (n) tm_net_proto_error(n, node, "frame from a node that is not a peer");
        return;
    }
    const int chan = h->chan;
    /* First: the frames it names were sent before this one (HOLD ACKs included). */
    if (h->ack) tm_net_acked(n, node, chan, h->ack, 0);
    switch (h->type) {
    case TM_MSG_EAGER:
        if (ctx) tm_net_eager_frame(n, node, h, ctx);
        return; /* the thresholds decide on the ACK */
    case TM_MSG_RTS:
        tm_net_rts_frame(n, node, h);
        break;
    case TM_MSG_DATA:
        if (ctx) tm_net_data_frame(n, h, ctx);
        break;
    case TM_MSG_CTS:
        if (tm_net_check_hdr(n, node, h, 0) == 0) tm_net_on_cts(n, node, chan, h);
        break;
    case TM_MSG_ACK:
        if (tm_net_check_hdr(n, node, h, 0) == 0)
            tm_net_acked(n, node, chan, h->cookie, (h->flags & TM_MSG_F_HOLD) != 0);
        break;
    case TM_MSG_CANCEL:
        if (tm_net_check_hdr(n, node, h, 1) == 0) tm_net_cancel_frame(n, node, h);
        break;
    case TM_MSG_CANCEL_ANS:
        if (tm_net_check_hdr(n, node, h, 0) == 0) tm_net_cancel_ans_frame(n, node, h);
        break;
    default:
        tm_net_proto_error(n, node, "unexpected frame type %d", h->type);
        return;
    }
    /* The peer is active on this link: pay what we owe it. */
    tm_net_ack_link(n, node, chan, 1);
}
