/* rndv.c — the three-phase exchange (seed 000 §3.5, Fig. 8 (c)): RTS, the CTS a matching
 * receive answers with (from the daemon or from the receiving rank), and the DATA frames that
 * go straight from the user's buffer into the receive buffer. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "match.h"
#include "net_int.h"
#include "type_copy.h"
#include "wait.h"

/* Three-phase: RTS now, DATA when the CTS comes (on_cts).  0 (buffered: complete at once), 1
 * (pending), or a negative errno. */
int tm_net_send_rts(struct tm_net *n, struct tm_rank *me, int node, int chan, int world_dst,
                    int ctx, int src, int tag, const void *buf, size_t bytes,
                    enum tm_send_mode mode, struct tm_request *req)
{
    struct net_send_op *op = calloc(1, sizeof *op);
    if (!op) return -ENOMEM;
    const int buffered = mode == TM_SEND_BUFFERED;
    /* DATA frames are sent from the buffer as it is: a buffered send's own copy, or the
     * packed form of non-contiguous data (made once, read by every chunk). */
    if ((buffered || req->dt) && bytes) {
        op->own = malloc(bytes);
        if (!op->own) {
            free(op);
            return -ENOMEM;
        }
        if (req->dt)
            tm_type_pack(op->own, buf, bytes / req->dt->psize, req->dt, 0, bytes);
        else
            memcpy(op->own, buf, bytes);
        buf = op->own;
    }
    op->net = n;
    op->req = buffered ? NULL : req;
    op->buf = buf;
    op->bytes = bytes;
    op->node = node;
    op->chan = chan;
    op->src_w = me->rank;
    op->dst_w = world_dst;
    op->tag = tag;
    op->ctx = ctx;
    uint64_t cookie;
    int r = tm_xfer_put(&n->xfers, TM_XFER_SEND, op, &cookie);
    if (r < 0) {
        free(op->own);
        free(op);
        return r;
    }
    struct tm_msg_hdr h = {
        .type = TM_MSG_RTS,
        .flags = (uint8_t)(mode == TM_SEND_SYNC ? TM_MSG_F_SSEND : 0),
        .src_rank = me->rank,
        .dst_rank = world_dst,
        .tag = tag,
        .context = ctx,
        .msg_len = bytes,
        .cookie = cookie,
        .comm_src = src,
    };
    atomic_fetch_add_explicit(&n->n_three_phase, 1, memory_order_relaxed);
    tm_net_note_send(req, chan, buffered ? TM_ENV_NET_RNDV_BUFFERED : TM_ENV_NET_RNDV, world_dst,
                     cookie, ctx, src, tag);
    /* From here on a daemon may take op (CTS) at any moment: do not touch it. */
    r = tm_net_send_frame(n, node, chan, &h, NULL, NULL, NULL);
    if (r < 0) {
        if (tm_xfer_take(&n->xfers, cookie, TM_XFER_SEND) == op) {
            free(op->own);
            free(op);
        }
        return r;
    }
    if (buffered) {
        tm_req_set_done(req, req->st_source, req->st_tag, bytes, MPI_SUCCESS);
        return 0;
    }
    return 1;
}

/* rr (unposted, owned by its rank until done) matched a three-phase or held message e from
 * another node: register it and ask the sender for the data.  Any thread. */
void tm_net_answer_cts(struct tm_net *n, struct tm_request *rr, const struct tm_envl *e, int here)
{
    rr->st_source = e->src;
    rr->st_tag = e->tag;
    struct net_recv_op *op = calloc(1, sizeof *op);
    uint64_t rc = 0;
    if (op) {
        /* Filled before it is published: the daemon that takes the DATA reads it under the
         * table's lock, which then orders these writes before its reads. */
        op->rr = rr;
        op->msg_len = e->bytes;
        op->node = e->node;
        op->chan = e->chan;
    }
    if (!op || tm_xfer_put(&n->xfers, TM_XFER_RECV, op, &rc) < 0) {
        free(op);
        tm_net_complete(rr, e->src, e->tag, 0, MPI_ERR_NO_MEM);
        return;
    }
    struct tm_msg_hdr h = {
        .type = TM_MSG_CTS,
        .flags = (uint8_t)(e->kind == TM_ENVL_NET_HELD ? TM_MSG_F_HOLD : 0),
        .src_rank = here,
        .dst_rank = e->wsrc,
        .tag = e->tag,
        .context = e->ctx,
        .msg_len = e->bytes,
        .cookie = e->cookie,
        .rcookie = rc,
    };
    /* After net_send the DATA may complete rr and free op on a daemon at any moment. */
    if (tm_net_send_frame(n, e->node, e->chan, &h, NULL, NULL, NULL) < 0) {
        if (tm_xfer_take(&n->xfers, rc, TM_XFER_RECV) == op) free(op);
        tm_net_complete(rr, e->src, e->tag, 0, MPI_ERR_OTHER);
    }
}

void tm_net_rts_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h)
{
    if (tm_net_check_hdr(n, node, h, 1) < 0) return;
    struct tm_envl *e = tm_net_env(node, h, TM_ENVL_NET_RTS);
    if (!e) {
        tm_net_proto_error(n, node, "out of memory for an RTS");
        return;
    }
    struct tm_request *rr = tm_net_queue_or_match(tm_job_rank(n->job, h->dst_rank), e);
    if (rr) {
        tm_net_answer_cts(n, rr, e, h->dst_rank);
        free(e);
    }
}

/* Drops k references of a DATA exchange; the last completes the send. */
static void op_put(struct net_send_op *op, size_t k)
{
    if (atomic_fetch_sub_explicit(&op->left, k, memory_order_acq_rel) != k) return;
    struct tm_request *req = op->req;
    if (req) {
        struct tm_waker *w = &req->owner->waker;
        int err = atomic_load_explicit(&op->err, memory_order_relaxed);
        tm_req_set_done(req, req->st_source, req->st_tag, op->bytes,
                        err ? MPI_ERR_OTHER : MPI_SUCCESS);
        tm_wake(w);
    }
    free(op->own);
    free(op);
}

static void data_sent(void *arg, int err)
{
    struct net_send_op *op = arg;
    if (err < 0) atomic_store_explicit(&op->err, err, memory_order_relaxed);
    op_put(op, 1);
}

/* CTS for a three-phase send: the message goes as DATA frames of at most TM_NET_CHUNK bytes,
 * straight from the user's buffer; their done callbacks complete the send. */
static void send_data(struct tm_net *n, struct net_send_op *op, uint64_t cookie, uint64_t rcookie)
{
    size_t nch = op->bytes ? (op->bytes + TM_NET_CHUNK - 1) / TM_NET_CHUNK : 1, unsent = 0;
    atomic_init(&op->left, nch + 1);
    for (size_t k = 0; k < nch; k++) {
        size_t off = k * TM_NET_CHUNK, len = op->bytes - off;
        if (len > TM_NET_CHUNK) len = TM_NET_CHUNK;
        struct tm_msg_hdr h = {
            .type = TM_MSG_DATA,
            .payload_len = (uint32_t)len,
            .src_rank = op->src_w,
            .dst_rank = op->dst_w,
            .tag = op->tag,
            .context = op->ctx,
            .msg_len = op->bytes,
            .cookie = cookie,
            .rcookie = rcookie,
        };
        int r = tm_net_send_frame(n, op->node, op->chan, &h, (const char *)op->buf + off, data_sent,
                                  op);
        if (r < 0) {
            atomic_store_explicit(&op->err, r, memory_order_relaxed);
            unsent = nch - k;
            break;
        }
    }
    op_put(op, unsent + 1);
}

void tm_net_on_cts(struct tm_net *n, int node, int chan, const struct tm_msg_hdr *h)
{
    if (h->flags & TM_MSG_F_HOLD) {
        tm_net_send_held(n, node, chan, h);
        return;
    }
    struct net_send_op *op = tm_xfer_take(&n->xfers, h->cookie, TM_XFER_SEND);
    if (!op) {
        tm_net_proto_error(n, node, "CTS names no pending send (cookie %#llx)",
                           (unsigned long long)h->cookie);
        return;
    }
    if (op->node != node || op->chan != chan || op->dst_w != h->src_rank ||
        op->bytes != h->msg_len) {
        /* Not ours after all: put nothing back (the cookie is spent) and fail the send. */
        tm_net_proto_error(n, node, "CTS does not fit send %#llx (node %d, rank %d, %llu bytes)",
                           (unsigned long long)h->cookie, op->node, op->dst_w,
                           (unsigned long long)op->bytes);
        atomic_init(&op->left, 1);
        atomic_store_explicit(&op->err, -EPROTO, memory_order_relaxed);
        op_put(op, 1);
        return;
    }
    send_data(n, op, h->cookie, h->rcookie);
}

/* DATA header: the chunk goes straight into the receive buffer at the offset reached so far
 * (chunks of one message arrive in order on one link); the part past a too-small buffer goes
 * to a temporary and is dropped.  ctx: the receive transfer. */
void *tm_net_data_header(struct tm_net *n, int node, const struct tm_msg_hdr *h, void **ctx)
{
    if (tm_net_check_hdr(n, node, h, 0) < 0) return NULL;
    struct net_recv_op *op = tm_xfer_get(&n->xfers, h->rcookie, TM_XFER_RECV);
    if (!op || op->node != node || op->chan != h->chan || h->msg_len != op->msg_len ||
        h->payload_len > op->msg_len - op->got) {
        tm_net_proto_error(n, node, "DATA (rcookie %#llx, %u of %llu bytes) fits no receive",
                           (unsigned long long)h->rcookie, h->payload_len,
                           (unsigned long long)h->msg_len);
        return NULL;
    }
    *ctx = op;
    struct tm_request *rr = op->rr;
    if (op->got + h->payload_len <= rr->cap && !rr->dt) return (char *)rr->buf + op->got;
    /* The part past a too-small buffer, or a chunk of non-contiguous data: unpacked at its
     * offset when the frame is in (data_frame). */
    op->tmp = malloc(h->payload_len ? h->payload_len : 1);
    if (!op->tmp) op->err = MPI_ERR_NO_MEM;
    return op->tmp;
}

void tm_net_data_frame(struct tm_net *n, const struct tm_msg_hdr *h, struct net_recv_op *op)
{
    struct tm_request *rr = op->rr;
    if (op->tmp) {
        size_t k = rr->cap - op->got < h->payload_len ? rr->cap - op->got : h->payload_len;
        if (op->got >= rr->cap)
            k = 0;
        else if (rr->dt)
            tm_type_unpack(rr->buf, rr->cap / rr->dt->psize, rr->dt, op->got, op->tmp, k);
        else
            memcpy((char *)rr->buf + op->got, op->tmp, k);
        free(op->tmp);
        op->tmp = NULL;
    }
    op->got += h->payload_len;
    if (op->got < op->msg_len) return;
    tm_xfer_take(&n->xfers, h->rcookie, TM_XFER_RECV);
    tm_net_complete(rr, rr->st_source, rr->st_tag, op->msg_len, op->err);
    free(op);
}

void tm_net_rx_op_free(void *p)
{
    struct net_recv_op *op = p;
    free(op->tmp);
    free(op);
}
