/* net_rx.c — inter-node point-to-point, receiving side: the receive daemon's handling of EAGER,
 * RTS and DATA frames, CTS answers (from the daemon or from a receiving rank), and cumulative
 * ACKs (net_p2p.h; the sending side is net_p2p.c).
 *
 * Mailbox order: a frame's unexpected entry is appended under the destination's mailbox lock
 * when the frame is handled, and frames of one link are handled one after the other, so the
 * arrival list keeps the sender's order for every kind of entry (stored, RTS, held). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "match.h"
#include "type_copy.h"
#include "net_p2p.h"
#include "wait.h"

/* A matched receive waiting for its DATA frames (xfer table, TM_XFER_RECV, named by the
 * rcookie of CTS and DATA).  Touched only by the daemon of its link once the CTS is out. */
struct net_recv_op {
    struct tm_request *rr;
    size_t msg_len, got;
    int node, chan;
    void *tmp; /* the current chunk, when it does not fit in the receive buffer */
    int err;
};

void tm_net_rx_op_free(void *p)
{
    struct net_recv_op *op = p;
    free(op->tmp);
    free(op);
}

static inline int chan_of(const struct netd_hdr *h)
{
    return (h->flags & NETD_F_COLL) ? 1 : 0;
}

static inline struct tm_net_rx *rx_of(struct tm_net *n, int node, int chan)
{
    return &n->rx[node * TM_NET_NCHAN + chan];
}

/* Completes a receive another thread owns: nothing may touch it after done. */
static void complete(struct tm_request *rr, int src, int tag, size_t msg_len, int err)
{
    struct tm_waker *w = &rr->owner->waker;
    size_t n = msg_len <= rr->cap ? msg_len : rr->cap;
    if (!err && msg_len > rr->cap) err = MPI_ERR_TRUNCATE;
    tm_req_set_done(rr, src, tag, n, err);
    tm_wake(w);
}

/* ---- cumulative ACKs ---- */

static void send_ack(struct tm_net *n, int node, int chan, int32_t here, int32_t there,
                     uint16_t flags, uint64_t seq)
{
    struct netd_hdr h = {
        .type = NETD_ACK,
        .flags = (uint16_t)(flags | (chan ? NETD_F_COLL : 0)),
        .src_rank = here,
        .dst_rank = there,
        .cookie = seq,
    };
    /* A lost ACK only keeps copies longer (until the next one or the job's end). */
    if (n->svc->net_send(n->link, node, chan + 1, &h, NULL, NULL, NULL) == 0)
        atomic_fetch_add_explicit(&n->n_acks_sent, 1, memory_order_relaxed);
}

/* The link's cumulative ACK if one is owed and forced or past a threshold, taken as said
 * (acked moves up to it); 0 if none.  Caller holds rx->lock. */
static uint64_t take_owed(struct tm_net_rx *rx, int force)
{
    if (rx->hi <= rx->acked ||
        !(force || rx->n_since >= TM_NET_ACK_MSGS || rx->bytes_since >= TM_NET_ACK_BYTES))
        return 0;
    rx->acked = rx->hi;
    rx->n_since = 0;
    rx->bytes_since = 0;
    return rx->acked;
}

uint64_t tm_net_ack_claim(struct tm_net *n, int node, int chan)
{
    struct tm_net_rx *rx = rx_of(n, node, chan);
    pthread_mutex_lock(&rx->lock);
    uint64_t seq = take_owed(rx, 1);
    pthread_mutex_unlock(&rx->lock);
    return seq;
}

/* Sends the link's cumulative ACK if one is owed (force) or a threshold is reached. */
static void ack_link(struct tm_net *n, int node, int chan, int force)
{
    struct tm_net_rx *rx = rx_of(n, node, chan);
    pthread_mutex_lock(&rx->lock);
    uint64_t seq = take_owed(rx, force);
    int32_t here = rx->here, there = rx->there;
    pthread_mutex_unlock(&rx->lock);
    if (seq) send_ack(n, node, chan, here, there, 0, seq);
}

/* An eager message of the link was stored, delivered or held.  Called after any HOLD ACK for
 * it went out: a cumulative ACK covering seq must not overtake it on the wire. */
static void eager_seen(struct tm_net *n, int node, int chan, const struct netd_hdr *h)
{
    struct tm_net_rx *rx = rx_of(n, node, chan);
    pthread_mutex_lock(&rx->lock);
    if (h->cookie > rx->hi) rx->hi = h->cookie;
    rx->n_since++;
    rx->bytes_since += h->payload_len;
    rx->here = h->dst_rank;
    rx->there = h->src_rank;
    pthread_mutex_unlock(&rx->lock);
    ack_link(n, node, chan, 0);
    /* Below the thresholds the ACK is owed lazily: the next rank thread of this node that is
     * about to block flushes it (tm_net_idle), and so does the next frame of another kind from
     * this link. */
    atomic_store_explicit(&n->ack_dirty, 1, memory_order_seq_cst);
}

void tm_net_flush_acks(struct tm_net *n)
{
    atomic_store_explicit(&n->ack_dirty, 0, memory_order_seq_cst);
    for (int node = 0; node < n->nnodes; node++)
        for (int chan = 0; chan < TM_NET_NCHAN; chan++)
            if (node != n->node) ack_link(n, node, chan, 1);
}

/* ---- CTS ---- */

/* rr (unposted, owned by its rank until done) matched a three-phase or held message e from
 * another node: register it and ask the sender for the data.  Any thread. */
static void answer_cts(struct tm_net *n, struct tm_request *rr, const struct tm_envl *e, int here)
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
        complete(rr, e->src, e->tag, 0, MPI_ERR_NO_MEM);
        return;
    }
    struct netd_hdr h = {
        .type = NETD_CTS,
        .flags = (uint16_t)((e->chan ? NETD_F_COLL : 0) |
                            (e->kind == TM_ENVL_NET_HELD ? NETD_F_HOLD : 0)),
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
        complete(rr, e->src, e->tag, 0, MPI_ERR_OTHER);
    }
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
        answer_cts(n, rreq, e, me->rank);
    }
    free(e);
}

/* ---- frames ---- */

/* Checks what the agent does not know about: ranks of this job on the right nodes, a
 * communicator rank and tag the matching code can take.  0 or -EPROTO (reported). */
static int check_hdr(struct tm_net *n, int node, const struct netd_hdr *h, int with_src)
{
    const int size = n->job->size;
    if (h->src_rank < 0 || h->src_rank >= size || h->dst_rank < 0 || h->dst_rank >= size ||
        n->node_of_rank[h->src_rank] != node || n->node_of_rank[h->dst_rank] != n->node) {
        tm_net_proto_error(n, node, "frame type %d from rank %d to rank %d: wrong nodes", h->type,
                           h->src_rank, h->dst_rank);
        return -EPROTO;
    }
    if (with_src && (h->comm_src > INT_MAX || h->tag == MPI_ANY_TAG)) {
        tm_net_proto_error(n, node, "frame type %d: source %llu / tag %d cannot be matched",
                           h->type, (unsigned long long)h->comm_src, h->tag);
        return -EPROTO;
    }
    return 0;
}

/* A header-only entry for a message from another node (heap: a daemon has no envelope
 * cache; tm_envl_release and tm_mbox_destroy free TM_ENVL_HEAP envelopes). */
static struct tm_envl *net_env(int node, const struct netd_hdr *h, enum tm_envl_kind kind)
{
    struct tm_envl *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->kind = kind;
    e->ctx = h->context;
    e->src = (int)h->comm_src;
    e->tag = h->tag;
    e->bytes = h->msg_len;
    e->cls = TM_ENVL_NCLASS; /* TM_ENVL_HEAP */
    e->node = node;
    e->chan = chan_of(h);
    e->wsrc = h->src_rank;
    e->flags = h->flags;
    e->cookie = h->cookie;
    return e;
}

/* Queues e for its destination, or hands it to a receive posted meanwhile.  Returns the
 * matched receive (e is then still the caller's) or NULL (queued). */
static struct tm_request *queue_or_match(struct tm_rank *r, struct tm_envl *e)
{
    struct tm_mbox *mb = &r->mbox;
    pthread_mutex_lock(&mb->lock);
    struct tm_request *rr = tm_match_posted(mb, e->ctx, e->src, e->tag);
    if (!rr) tm_add_unexp(mb, e);
    pthread_mutex_unlock(&mb->lock);
    if (!rr) tm_wake(&r->waker); /* a Probe may be waiting */
    return rr;
}

/* EAGER header: a posted receive takes the payload straight into its buffer; else a pool
 * buffer; else (pool full) the payload is dropped and the message held.  ctx: an envelope
 * describing which (sreq: the matched receive; pbuf: pool buffer, or the overflow buffer of a
 * too-long message for a matched receive). */
static void *eager_header(struct tm_net *n, int node, const struct netd_hdr *h, void **ctx)
{
    if (check_hdr(n, node, h, 1) < 0) return NULL;
    struct tm_envl *e = net_env(node, h, TM_ENVL_NET);
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

static void eager_frame(struct tm_net *n, int node, const struct netd_hdr *h, struct tm_envl *e)
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
        complete(rr, e->src, e->tag, h->msg_len, err);
        free(e);
    } else if (e->kind == TM_ENVL_NET_HELD) {
        /* The sender keeps its copy until our CTS; the HOLD ACK must leave before anything
         * can send that CTS (and before a cumulative ACK covers this sequence number). */
        atomic_fetch_add_explicit(&n->n_held, 1, memory_order_relaxed);
        send_ack(n, node, e->chan, h->dst_rank, h->src_rank, NETD_F_HOLD, h->cookie);
        rr = queue_or_match(r, e);
        if (rr) {
            answer_cts(n, rr, e, h->dst_rank);
            free(e);
        }
    } else {
        rr = queue_or_match(r, e);
        if (rr) {
            size_t k = e->bytes <= rr->cap ? e->bytes : rr->cap;
            tm_copy_in(rr, e->pbuf, NULL, k);
            if (e->pbuf) n->svc->pool_free(e->pbuf, e->bytes);
            complete(rr, e->src, e->tag, e->bytes, MPI_SUCCESS);
            free(e);
        }
    }
    eager_seen(n, node, chan_of(h), h);
}

static void rts_frame(struct tm_net *n, int node, const struct netd_hdr *h)
{
    if (check_hdr(n, node, h, 1) < 0) return;
    struct tm_envl *e = net_env(node, h, TM_ENVL_NET_RTS);
    if (!e) {
        tm_net_proto_error(n, node, "out of memory for an RTS");
        return;
    }
    struct tm_request *rr = queue_or_match(tm_job_rank(n->job, h->dst_rank), e);
    if (rr) {
        answer_cts(n, rr, e, h->dst_rank);
        free(e);
    }
}

/* DATA header: the chunk goes straight into the receive buffer at the offset reached so far
 * (chunks of one message arrive in order on one link); the part past a too-small buffer goes
 * to a temporary and is dropped.  ctx: the receive transfer. */
static void *data_header(struct tm_net *n, int node, const struct netd_hdr *h, void **ctx)
{
    if (check_hdr(n, node, h, 0) < 0) return NULL;
    struct net_recv_op *op = tm_xfer_get(&n->xfers, h->rcookie, TM_XFER_RECV);
    if (!op || op->node != node || op->chan != chan_of(h) || h->msg_len != op->msg_len ||
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

static void data_frame(struct tm_net *n, const struct netd_hdr *h, struct net_recv_op *op)
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
    complete(rr, rr->st_source, rr->st_tag, op->msg_len, op->err);
    free(op);
}

void *tm_net_p2p_header(struct tm_job *j, int node, const struct netd_hdr *h, void **ctx)
{
    struct tm_net *n = j->net;
    *ctx = NULL;
    if (!n || node < 0 || node >= n->nnodes || node == n->node) return NULL;
    switch (h->type) {
    case NETD_EAGER:
        return eager_header(n, node, h, ctx);
    case NETD_DATA:
        return data_header(n, node, h, ctx);
    default:
        return NULL; /* RTS, CTS, ACK: no payload */
    }
}

void tm_net_p2p_frame(struct tm_job *j, int node, const struct netd_hdr *h, void *ctx)
{
    struct tm_net *n = j->net;
    if (!n || node < 0 || node >= n->nnodes || node == n->node) {
        if (n) tm_net_proto_error(n, node, "frame from a node that is not a peer");
        return;
    }
    const int chan = chan_of(h);
    /* First: the frames it names were sent before this one (HOLD ACKs included). */
    if (h->ack) tm_net_acked(n, node, chan, h->ack, 0);
    switch (h->type) {
    case NETD_EAGER:
        if (ctx) eager_frame(n, node, h, ctx);
        return; /* the thresholds decide on the ACK */
    case NETD_RTS:
        rts_frame(n, node, h);
        break;
    case NETD_DATA:
        if (ctx) data_frame(n, h, ctx);
        break;
    case NETD_CTS:
        if (check_hdr(n, node, h, 0) == 0) tm_net_on_cts(n, node, chan, h);
        break;
    case NETD_ACK:
        if (check_hdr(n, node, h, 0) == 0)
            tm_net_acked(n, node, chan, h->cookie, (h->flags & NETD_F_HOLD) != 0);
        break;
    default:
        tm_net_proto_error(n, node, "unexpected frame type %d", h->type);
        return;
    }
    /* The peer is active on this link: pay what we owe it. */
    ack_link(n, node, chan, 1);
}
