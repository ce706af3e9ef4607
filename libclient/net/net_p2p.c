/* net_p2p.c — inter-node point-to-point, sending side: the per-job net state, the eager push
 * with retained copies, three-phase sends, the sender's handling of CTS and ACK, lazy ACK
 * flushing and protocol errors (net_p2p.h; the receiving side is net_rx.c).
 *
 * Seed 000 §3.5, Fig. 8: eager (b) below net_eager_limit, three-phase (c) from it, and a
 * failed eager push (the receiver's pool was full) turned into three-phase by the receiver. */
#include "net_p2p.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "type_copy.h"
#include "wait.h"

/* A retained eager copy.  Kept until the receiver has stored it (cumulative ACK) or, when it
 * was HOLD-ACKed, until the DATA that answers its CTS has gone out.  Freed by whoever sets the
 * second of two bits: COPY_SENT (the EAGER frame's done ran: the agent no longer reads buf) and
 * COPY_RELEASED (it left the retained list for good and no DATA still reads it). */
enum { COPY_SENT = 1, COPY_RELEASED = 2 };

struct tm_net_copy {
    struct tm_dl link; /* tx->retained (tx lock) */
    uint64_t seq;
    void *buf; /* pool buffer; NULL for an empty message */
    size_t bytes;
    int held; /* the receiver dropped the payload (HOLD ACK): wait for its CTS (tx lock) */
    struct tm_net *net;
    int32_t src_w, dst_w, tag, ctx;
    _Atomic unsigned state;
};

/* A pending three-phase send (xfer table, TM_XFER_SEND, from RTS until CTS).  After CTS its
 * DATA frames are in flight: left counts their done callbacks plus one for the loop sending
 * them; whoever brings it to 0 completes the request. */
struct net_send_op {
    struct tm_net *net;
    struct tm_request *req; /* NULL: a buffered send, complete since it started */
    const void *buf;
    void *own; /* private copy of a buffered send */
    size_t bytes;
    int node, chan;
    int32_t src_w, dst_w, tag, ctx;
    _Atomic size_t left;
    _Atomic int err;
};

static inline struct tm_net_tx *tx_of(struct tm_net *n, int node, int chan)
{
    return &n->tx[node * TM_NET_NCHAN + chan];
}

static inline uint16_t chan_flag(int chan)
{
    return chan ? NETD_F_COLL : 0;
}

/* ---- job state ---- */

int tm_net_job_init(struct tm_job *j, const struct tmpi_rank_info *info)
{
    if (!info->net) return 0;
    if (info->nnodes < 2 || info->node < 0 || info->node >= info->nnodes || !info->node_of_rank)
        return -EINVAL;
    struct tm_net *n = calloc(1, sizeof *n);
    if (!n) return -ENOMEM;
    n->job = j;
    n->svc = j->svc;
    n->link = info->net;
    n->node = info->node;
    n->nnodes = info->nnodes;
    n->node_of_rank = info->node_of_rank;
    /* Taken as configured (0: everything three-phase); an eager frame is one frame, so it
     * stays within the DATA frame size the agent accepts. */
    n->eager_limit = j->svc->net_eager_limit;
    if (n->eager_limit > TM_NET_CHUNK) n->eager_limit = TM_NET_CHUNK;
    size_t nl = (size_t)n->nnodes * TM_NET_NCHAN;
    n->tx = calloc(nl, sizeof *n->tx);
    n->rx = calloc(nl, sizeof *n->rx);
    if (!n->tx || !n->rx || tm_xfer_init(&n->xfers) < 0) goto err;
    for (size_t i = 0; i < nl; i++) {
        pthread_mutex_init(&n->tx[i].order, NULL);
        pthread_mutex_init(&n->tx[i].lock, NULL);
        tm_dl_init(&n->tx[i].retained);
        pthread_mutex_init(&n->rx[i].lock, NULL);
    }
    pthread_mutex_init(&n->err_lock, NULL);
    j->net = n;
    return 0;
err:
    free(n->tx);
    free(n->rx);
    free(n);
    return -ENOMEM;
}

static void free_xfer(void *p, int kind, void *arg)
{
    (void)arg;
    if (kind == TM_XFER_SEND) {
        struct net_send_op *op = p;
        free(op->own);
        free(op);
    } else if (kind == TM_XFER_RECV) {
        tm_net_rx_op_free(p);
    } else if (kind == TM_XFER_RMA_GET) {
        free(p);
    } /* TM_XFER_RMA_ORIGIN: freed with its rank's window table (rma/win.c) */
}

void tm_net_job_fini(struct tm_job *j)
{
    struct tm_net *n = j->net;
    if (!n) return;
    /* Unexpected eager messages hold pool buffers; the mailbox frees the envelopes. */
    for (int i = 0; i < j->size; i++) {
        struct tm_mbox *mb = &j->ranks[i].mbox;
        if (!mb->unexp_order.next) continue;
        for (struct tm_dl *d = mb->unexp_order.next; d != &mb->unexp_order; d = d->next) {
            struct tm_envl *e = tm_dl_entry(d, struct tm_envl, order);
            if (e->kind == TM_ENVL_NET && e->pbuf) n->svc->pool_free(e->pbuf, e->bytes);
            e->pbuf = NULL;
        }
    }
    size_t nl = (size_t)n->nnodes * TM_NET_NCHAN;
    for (size_t i = 0; i < nl; i++) {
        struct tm_net_tx *tx = &n->tx[i];
        while (!tm_dl_empty(&tx->retained)) {
            struct tm_net_copy *c = tm_dl_entry(tx->retained.next, struct tm_net_copy, link);
            tm_dl_unlink(&c->link);
            if (c->buf) n->svc->pool_free(c->buf, c->bytes);
            free(c);
        }
        pthread_mutex_destroy(&tx->order);
        pthread_mutex_destroy(&tx->lock);
        pthread_mutex_destroy(&n->rx[i].lock);
    }
    tm_xfer_fini(&n->xfers, free_xfer, NULL);
    pthread_mutex_destroy(&n->err_lock);
    free(n->tx);
    free(n->rx);
    free(n);
    j->net = NULL;
}

/* ---- protocol errors ---- */

void tm_net_proto_error(struct tm_net *n, int node, const char *fmt, ...)
{
    pthread_mutex_lock(&n->err_lock);
    if (!n->first_err[0]) {
        int k = snprintf(n->first_err, sizeof n->first_err,
                         "inter-node protocol error (frame from node %d): ", node);
        va_list ap;
        va_start(ap, fmt);
        if (k > 0 && (size_t)k < sizeof n->first_err)
            vsnprintf(n->first_err + k, sizeof n->first_err - (size_t)k, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&n->err_lock);
    atomic_fetch_add_explicit(&n->net_errors, 1, memory_order_seq_cst);
    /* Ranks blocked in a wait look at net_errors when they wake (tm_net_check in wait.c). */
    struct tm_job *j = n->job;
    for (int i = 0; i < j->size; i++)
        if (n->node_of_rank[i] == n->node) tm_wake_force(&j->ranks[i].waker);
}

void tm_net_check_slow(struct tm_rank *me)
{
    struct tm_net *n = me->job->net;
    if (atomic_load_explicit(&n->net_errors, memory_order_seq_cst)) {
        char why[sizeof n->first_err];
        pthread_mutex_lock(&n->err_lock);
        memcpy(why, n->first_err, sizeof why);
        pthread_mutex_unlock(&n->err_lock);
        fprintf(stderr, "rank %d: %s\n", me->rank, why);
        n->svc->job_abort(1, why);
    }
}

/* ---- retained copies ---- */

static void copy_put(struct tm_net_copy *c, unsigned bit)
{
    unsigned old = atomic_fetch_or_explicit(&c->state, bit, memory_order_acq_rel);
    if ((old | bit) != (COPY_SENT | COPY_RELEASED)) return;
    if (c->buf) c->net->svc->pool_free(c->buf, c->bytes);
    free(c);
}

static void copy_sent(void *arg, int err)
{
    (void)err; /* a failed link loses the message either way; the copy only has to go */
    copy_put(arg, COPY_SENT);
}

static void copy_data_sent(void *arg, int err)
{
    (void)err;
    copy_put(arg, COPY_RELEASED);
}

int tm_net_send_frame(struct tm_net *n, int node, int chan, struct netd_hdr *h, const void *payload,
                      void (*done)(void *arg, int err), void *arg)
{
    h->ack = tm_net_ack_claim(n, node, chan);
    return n->svc->net_send(n->link, node, chan + 1, h, payload, done, arg);
}

/* Eager push: 0 (req complete), -EAGAIN (the pool has no room: use three-phase), or a
 * negative errno. */
static int send_eager(struct tm_net *n, struct tm_rank *me, int node, int chan, int world_dst,
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
    struct netd_hdr h = {
        .type = NETD_EAGER,
        .flags = chan_flag(chan),
        .payload_len = (uint32_t)bytes,
        .src_rank = me->rank,
        .dst_rank = world_dst,
        .tag = tag,
        .context = ctx,
        .msg_len = bytes,
        .comm_src = (uint64_t)(uint32_t)src,
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
            copy_put(c, COPY_SENT);
        } else {
            if (c->buf) n->svc->pool_free(c->buf, bytes);
            free(c);
        }
        return r;
    }
    atomic_fetch_add_explicit(&n->n_eager, 1, memory_order_relaxed);
    tm_req_set_done(req, req->st_source, req->st_tag, bytes, MPI_SUCCESS);
    return 0;
}

/* Three-phase: RTS now, DATA when the CTS comes (on_cts).  0 (buffered: complete at once), 1
 * (pending), or a negative errno. */
static int send_rts(struct tm_net *n, struct tm_rank *me, int node, int chan, int world_dst,
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
    struct netd_hdr h = {
        .type = NETD_RTS,
        .flags = (uint16_t)(chan_flag(chan) | (mode == TM_SEND_SYNC ? NETD_F_SSEND : 0)),
        .src_rank = me->rank,
        .dst_rank = world_dst,
        .tag = tag,
        .context = ctx,
        .msg_len = bytes,
        .cookie = cookie,
        .comm_src = (uint64_t)(uint32_t)src,
    };
    atomic_fetch_add_explicit(&n->n_three_phase, 1, memory_order_relaxed);
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

int tm_net_isend(struct tm_rank *me, int world_dst, int ctx, int src, int tag, const void *buf,
                 size_t bytes, int channel, enum tm_send_mode mode, struct tm_request *req)
{
    struct tm_net *n = me->job->net;
    if (!n || world_dst < 0 || world_dst >= me->job->size || !tm_net_remote(n, world_dst) ||
        (channel != TMPI_NET_P2P && channel != TMPI_NET_COLL))
        return -EINVAL;
    const int node = n->node_of_rank[world_dst], chan = channel - 1;
    if (mode != TM_SEND_SYNC && bytes < n->eager_limit) {
        int r = send_eager(n, me, node, chan, world_dst, ctx, src, tag, buf, bytes, req);
        if (r != -EAGAIN) return r;
        /* No pool room for a copy: three-phase needs none. */
    }
    return send_rts(n, me, node, chan, world_dst, ctx, src, tag, buf, bytes, mode, req);
}

/* ---- the sender's daemon side: CTS and ACK ---- */

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
        struct netd_hdr h = {
            .type = NETD_DATA,
            .flags = chan_flag(op->chan),
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

/* CTS for a HOLD-ACKed eager message: DATA from the retained copy, which then goes. */
static void send_held(struct tm_net *n, int node, int chan, const struct netd_hdr *h)
{
    struct tm_net_tx *tx = tx_of(n, node, chan);
    struct tm_net_copy *c = NULL;
    pthread_mutex_lock(&tx->lock);
    for (struct tm_dl *d = tx->retained.next; d != &tx->retained; d = d->next) {
        struct tm_net_copy *x = tm_dl_entry(d, struct tm_net_copy, link);
        if (x->seq == h->cookie) {
            if (x->held) c = x;
            break;
        }
    }
    if (c) {
        tm_dl_unlink(&c->link);
        tx->retained_bytes -= c->bytes;
    }
    pthread_mutex_unlock(&tx->lock);
    if (!c) {
        tm_net_proto_error(n, node, "CTS names eager message %llu, which is not held",
                           (unsigned long long)h->cookie);
        return;
    }
    struct netd_hdr d = {
        .type = NETD_DATA,
        .flags = chan_flag(chan),
        .payload_len = (uint32_t)c->bytes,
        .src_rank = c->src_w,
        .dst_rank = c->dst_w,
        .tag = c->tag,
        .context = c->ctx,
        .msg_len = c->bytes,
        .cookie = c->seq,
        .rcookie = h->rcookie,
    };
    if (tm_net_send_frame(n, node, chan, &d, c->buf, copy_data_sent, c) < 0)
        copy_put(c, COPY_RELEASED);
}

void tm_net_on_cts(struct tm_net *n, int node, int chan, const struct netd_hdr *h)
{
    if (h->flags & NETD_F_HOLD) {
        send_held(n, node, chan, h);
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

void tm_net_acked(struct tm_net *n, int node, int chan, uint64_t seq, int hold)
{
    struct tm_net_tx *tx = tx_of(n, node, chan);
    struct tm_dl done;
    tm_dl_init(&done);
    int bad = 0, never = 0;
    pthread_mutex_lock(&tx->lock);
    if (seq > tx->next_seq) {
        bad = never = 1;
    } else if (hold) {
        bad = 1;
        for (struct tm_dl *d = tx->retained.next; d != &tx->retained; d = d->next) {
            struct tm_net_copy *c = tm_dl_entry(d, struct tm_net_copy, link);
            if (c->seq == seq) {
                c->held = 1;
                bad = 0;
                break;
            }
        }
    } else {
        /* Cumulative: everything up to cookie is stored or delivered, except what was held. */
        struct tm_dl *d = tx->retained.next;
        while (d != &tx->retained) {
            struct tm_net_copy *c = tm_dl_entry(d, struct tm_net_copy, link);
            if (c->seq > seq) break;
            d = d->next;
            if (c->held) continue;
            tm_dl_unlink(&c->link);
            tx->retained_bytes -= c->bytes;
            tm_dl_append(&done, &c->link);
        }
    }
    pthread_mutex_unlock(&tx->lock);
    while (!tm_dl_empty(&done)) {
        struct tm_net_copy *c = tm_dl_entry(done.next, struct tm_net_copy, link);
        tm_dl_unlink(&c->link);
        copy_put(c, COPY_RELEASED);
    }
    if (bad)
        tm_net_proto_error(n, node, "%sACK for eager message %llu, which %s", hold ? "HOLD " : "",
                           (unsigned long long)seq, never ? "was never sent" : "is not retained");
}

size_t tm_net_retained_bytes(struct tm_net *n)
{
    size_t sum = 0, nl = (size_t)n->nnodes * TM_NET_NCHAN;
    for (size_t i = 0; i < nl; i++) {
        pthread_mutex_lock(&n->tx[i].lock);
        sum += n->tx[i].retained_bytes;
        pthread_mutex_unlock(&n->tx[i].lock);
    }
    return sum;
}
