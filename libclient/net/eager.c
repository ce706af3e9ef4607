/* eager.c — the eager push (seed 000 §3.5, Fig. 8 (b)): the sender's retained copy, the
 * receiver's EAGER header and frame (straight into a posted receive, into a pool buffer, or
 * dropped and held), and the DATA that answers the CTS for a held message. */
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

void tm_net_copy_put(struct tm_net_copy *c, unsigned bit)
{
    unsigned old = atomic_fetch_or_explicit(&c->state, bit, memory_order_acq_rel);
    if ((old | bit) != (COPY_SENT | COPY_RELEASED)) return;
    if (c->buf) c->net->svc->pool_free(c->buf, c->bytes);
    free(c);
}

static void copy_sent(void *arg, int err)
{
    (void)err; /* a failed link loses the message either way; the copy only has to go */
    tm_net_copy_put(arg, COPY_SENT);
}

void tm_net_copy_data_sent(void *arg, int err)
{
    (void)err;
    tm_net_copy_put(arg, COPY_RELEASED);
}

/* Eager push: 0 (req tm_net_complete), -EAGAIN (the pool has no room: use three-phase), or a
 * negative errno. */
int tm_net_send_eager(struct tm_net *n, struct tm_rank *me, int node, int chan, int world_dst,
                      int ctx, int src, int tag, const void *buf, size_t bytes,
                      struct tm_request *req)
{
    struct tm_net_copy *c = malloc(sizeof *c);
    if (!c) return -ENOMEM;
    c->buf = NULL;
    if (bytes) {
        c->buf = n->svc->pool_alloc(bytes);
        if (!c->buf) {
            free(c);
            return -EAGAIN;
        }
        if (TM_UNLIKELY(req->dt)) /* packed straight into the frame's buffer */
            tm_type_pack(c->buf, buf, bytes / req->dt->psize, req->dt, 0, bytes);
        else
            memcpy(c->buf, buf, bytes);
    }
    c->bytes = bytes;
    c->held = 0;
    c->net = n;
    c->src_w = me->rank;
    c->dst_w = world_dst;
    c->tag = tag;
    c->ctx = ctx;
    atomic_init(&c->state, 0);
    struct tm_msg_hdr h = {
        .type = TM_MSG_EAGER,
        .payload_len = (uint32_t)bytes,
        .src_rank = me->rank,
        .dst_rank = world_dst,
        .tag = tag,
        .context = ctx,
        .msg_len = bytes,
        .comm_src = src,
    };
    struct tm_net_tx *tx = tx_of(n, node, chan);
    /* Sequence order must be wire order (cumulative ACKs): both happen under order; copy_sent
     * may run inside net_send and takes no lock. */
    pthread_mutex_lock(&tx->order);
    pthread_mutex_lock(&tx->lock);
    c->seq = h.cookie = ++tx->next_seq;
    tm_dl_append(&tx->retained, &c->link);
    tx->retained_bytes += bytes;
    pthread_mutex_unlock(&tx->lock);
    int r = tm_net_send_frame(n, node, chan, &h, c->buf, copy_sent, c);
    pthread_mutex_unlock(&tx->order);
    if (r < 0) {
        /* Not sent, so no done callback: the copy is ours again, unless a (misbehaving) peer's
         * ACK or CTS naming its number took it meanwhile; then only the sent mark is owed. */
        int mine = 0;
        pthread_mutex_lock(&tx->lock);
        for (struct tm_dl *d = tx->retained.next; d != &tx->retained && !mine; d = d->next)
            mine = d == &c->link;
        if (mine) {
            tm_dl_unlink(&c->link);
            tx->retained_bytes -= bytes;
        }
        pthread_mutex_unlock(&tx->lock);
        if (!mine) {
            tm_net_copy_put(c, COPY_SENT);
        } else {
            if (c->buf) n->svc->pool_free(c->buf, bytes);
            free(c);
        }
        return r;
    }
    atomic_fetch_add_explicit(&n->n_eager, 1, memory_order_relaxed);
    tm_net_note_send(req, chan, TM_ENV_NET_EAGER, world_dst, h.cookie, ctx, src, tag);
    tm_req_set_done(req, req->st_source, req->st_tag, bytes, MPI_SUCCESS);
    return 0;
}

/* EAGER header: a posted receive takes the payload straight into its buffer; else a pool
 * buffer; else (pool full) the payload is dropped and the message held.  ctx: an envelope
 * describing which (sreq: the matched receive; pbuf: pool buffer, or the overflow buffer of a
 * too-long message for a matched receive). */
void *tm_net_eager_header(struct tm_net *n, int node, const struct tm_msg_hdr *h, void **ctx)
{
    if (tm_net_check_hdr(n, node, h, 1) < 0) return NULL;
    struct tm_envl *e = tm_net_env(node, h, TM_ENVL_NET);
    if (!e) {
        tm_net_proto_error(n, node, "out of memory for an eager message");
        return NULL;
    }
    *ctx = e;
    struct tm_rank *r = tm_job_rank(n->job, h->dst_rank);
    pthread_mutex_lock(&r->mbox.lock);
    struct tm_request *rr = tm_match_posted(&r->mbox, e->ctx, e->src, e->tag);
    pthread_mutex_unlock(&r->mbox.lock);
    if (rr) {
        e->sreq = rr;
        if (h->payload_len <= rr->cap && !rr->dt) return rr->buf;
        /* Truncated (keep the part that fits) or non-contiguous (unpacked from here). */
        e->pbuf = malloc(h->payload_len ? h->payload_len : 1);
        return e->pbuf;
    }
    if (!h->payload_len) return NULL;
    e->pbuf = n->svc->pool_alloc(h->payload_len);
    if (!e->pbuf) e->kind = TM_ENVL_NET_HELD;
    return e->pbuf;
}

void tm_net_eager_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h, struct tm_envl *e)
{
    struct tm_rank *r = tm_job_rank(n->job, h->dst_rank);
    struct tm_request *rr = e->sreq;
    if (rr) {
        int err = MPI_SUCCESS;
        if (h->payload_len > rr->cap || rr->dt) {
            size_t k = h->payload_len <= rr->cap ? h->payload_len : rr->cap;
            if (e->pbuf) tm_copy_in(rr, e->pbuf, NULL, k);
            if (!e->pbuf) err = MPI_ERR_NO_MEM;
            free(e->pbuf);
        }
        tm_net_complete(rr, e->src, e->tag, h->msg_len, err);
        free(e);
    } else if (e->kind == TM_ENVL_NET_HELD) {
        /* The sender keeps its copy until our CTS; the HOLD ACK must leave before anything
         * can send that CTS (and before a cumulative ACK covers this sequence number). */
        atomic_fetch_add_explicit(&n->n_held, 1, memory_order_relaxed);
        tm_net_send_ack(n, node, e->chan, h->dst_rank, h->src_rank, TM_MSG_F_HOLD, h->cookie);
        rr = tm_net_queue_or_match(r, e);
        if (rr) {
            tm_net_answer_cts(n, rr, e, h->dst_rank);
            free(e);
        }
    } else {
        rr = tm_net_queue_or_match(r, e);
        if (rr) {
            size_t k = e->bytes <= rr->cap ? e->bytes : rr->cap;
            tm_copy_in(rr, e->pbuf, NULL, k);
            if (e->pbuf) n->svc->pool_free(e->pbuf, e->bytes);
            tm_net_complete(rr, e->src, e->tag, e->bytes, MPI_SUCCESS);
            free(e);
        }
    }
    tm_net_eager_seen(n, node, h->chan, h);
}

struct tm_net_copy *tm_net_take_held(struct tm_net *n, int node, int chan, uint64_t seq)
{
    struct tm_net_tx *tx = tx_of(n, node, chan);
    struct tm_net_copy *c = NULL;
    pthread_mutex_lock(&tx->lock);
    for (struct tm_dl *d = tx->retained.next; d != &tx->retained; d = d->next) {
        struct tm_net_copy *x = tm_dl_entry(d, struct tm_net_copy, link);
        if (x->seq == seq) {
            if (x->held) c = x;
            break;
        }
    }
    if (c) {
        tm_dl_unlink(&c->link);
        tx->retained_bytes -= c->bytes;
    }
    pthread_mutex_unlock(&tx->lock);
    return c;
}

/* CTS for a HOLD-ACKed eager message: DATA from the retained copy, which then goes. */
void tm_net_send_held(struct tm_net *n, int node, int chan, const struct tm_msg_hdr *h)
{
    struct tm_net_copy *c = tm_net_take_held(n, node, chan, h->cookie);
    if (!c) {
        tm_net_proto_error(n, node, "CTS names eager message %llu, which is not held",
                           (unsigned long long)h->cookie);
        return;
    }
    struct tm_msg_hdr d = {
        .type = TM_MSG_DATA,
        .payload_len = (uint32_t)c->bytes,
        .src_rank = c->src_w,
        .dst_rank = c->dst_w,
        .tag = c->tag,
        .context = c->ctx,
        .msg_len = c->bytes,
        .cookie = c->seq,
        .rcookie = h->rcookie,
    };
    if (tm_net_send_frame(n, node, chan, &d, c->buf, tm_net_copy_data_sent, c) < 0)
        tm_net_copy_put(c, COPY_RELEASED);
}
