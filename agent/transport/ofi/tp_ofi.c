/* tp_ofi.c — the libfabric transport (tp_ofi.h).
 *
 * Every message on the endpoint starts with a 16-byte prefix: the receiving link's secret
 * (rx_secret on its side) and the kind; EAGER and RTS carry the frame's encoded 80-byte header
 * next.  A message whose secret matches no link is counted and dropped before anything in it
 * is read.
 *
 *   EAGER  prefix | header | payload
 *   RTS    prefix | header | addr u64 | key u64 | 0 u64   (the receiver fi_reads payload)
 *   ACK    prefix | seq u64 | flags u32 | ask u32 | answer u32 | 0 u32
 *          (every frame up to seq is delivered: a large send completes; flags ACK_ASK: sent by
 *          a reattach, numbered ask, the peer answers it; ACK_ANSWER: answers the peer's ask)
 *   HELLO  prefix                                         (first contact, tp_ofi_link_start)
 *
 * Resending: every frame (EAGER, RTS) is kept by its sender until an ACK covers it, so that a
 * connection of the provider that breaks while both job hosts live (reset, timed out) loses
 * nothing.  The receiver acknowledges every TP_OFI_ACK_EVERY frames, a large frame at once
 * (its sender's buffer is held until then), and what is left within TP_OFI_ACK_DELAY_NS.  An
 * error completion on a link is a break (rx->on_break): the link keeps what it sends until
 * tp_reattach, which acknowledges what arrived, resends in order every frame not acknowledged,
 * and reads again a large frame whose read failed; the receiver drops the frames it has (by
 * number), so nothing is delivered twice.  The peer's answer to the ACK a reattach sends ends
 * the break (rx->on_rejoin): not any message, since ones it sent before it stopped (SIGSTOP)
 * may still arrive after the reattach.
 *
 * Queueing: no post waits for room in the provider's queue with a lock held.  A frame, a
 * control message or a one-sided operation the queue cannot take after TP_OFI_POST_TRIES
 * tries waits on its link (post_next: the first frame of the unacked list not posted yet;
 * ctl_h: control messages; rma_h: one-sided operations) and the progress thread posts it once
 * there is room (pump).  Before, a rank's send to a stopped peer spun in the full queue holding
 * the link's tx_mu, and the reattach that would have started the reconnect budget waited for
 * that lock for good.  A one-sided Put or Get whose completion is an error at a break is kept
 * the same way and posted again after tp_reattach (both may run twice: a write of the same
 * bytes, a read into the same buffer).
 *
 * Completions are handled under t->mu by whoever holds it (the progress thread or a polling
 * rank), so the receive callbacks never run concurrently.  A callback that sends (an ACK, a
 * CTS) may meet a full send queue: it then reads the completion queue itself and keeps what
 * it read in t->deferred for the holder of mu to handle after the callback returns. */
#include "tp_ofi.h"

#include <errno.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "be_bytes.h"
#include "ofi_lib.h"

#define PREFIX 16
#define RTS_EXTRA 24
/* the largest payload a header may announce (netd.h NETD_MAX_PAYLOAD) */
#define OFI_MAX_PAYLOAD (1u << 31)
enum { K_EAGER = 1, K_RTS = 2, K_ACK = 3, K_HELLO = 4 };
#define ACK_BODY 24
enum { ACK_ASK = 1, ACK_ANSWER = 2 };
/* The largest rx message: an eager frame. */
#define RX_BUF_SIZE (PREFIX + NETD_HDR_SIZE + TP_OFI_EAGER)

/* What a completion's context names (first member: the fi_context FI_CONTEXT mode wants). */
enum op_kind { OP_RECV = 1, OP_SEND, OP_RTS, OP_READ, OP_RMA };

struct op {
    struct fi_context fctx;
    enum op_kind kind;
};

struct ofi_link;

struct wait_frame;

struct rx_buf {
    struct op op;
    void *desc;
    struct fid_mr *mr;
    uint8_t data[RX_BUF_SIZE];
};

struct rts_op;

/* A frame (EAGER, RTS) or a control message (ACK, HELLO).  A frame's bytes live here until an
 * ACK covers it (it is in its link's unacked list: one ref) and its post completed (one ref
 * while posted); a control message, or the copy a resend posts of a frame still posted, only
 * until its send completes. */
struct tx_buf {
    struct op op;
    struct ofi_link *l;
    struct tx_buf *next; /* in its link's unacked list, in frame order (tx_mu) */
    atomic_int refs;
    int sent;           /* posted at least once (a quiet or broken link keeps it unposted) */
    uint64_t seq;       /* a frame's number, 0 for a control message */
    struct rts_op *rts; /* a large frame's send, completed by the ACK that covers it */
    size_t len;
    uint8_t data[];
};

struct mr_ent {
    const void *buf;
    size_t len;
    struct fid_mr *mr;
    unsigned refs;
    uint64_t used; /* LRU stamp */
    int own;       /* not in the cache (every entry was in use): freed with its last ref */
};

/* a large send, from its RTS until the ACK of its frame */
struct rts_op {
    struct mr_ent *mr;
    tp_done_fn done;
    void *arg;
    struct rts_op *next; /* completed by one ACK: run after the link's lock is let go */
};

/* a read of a large frame's payload into the buffer on_header chose */
struct read_op {
    struct op op;
    struct ofi_link *l;
    struct netd_hdr h;
    void *ctx;
    struct mr_ent *mr;
    void *dst;
    uint64_t raddr, key;
    int failed; /* the read failed at a break: tp_reattach reads again */
};

struct rma_op {
    struct op op;
    struct ofi_link *l;
    struct mr_ent *mr;
    tp_done_fn done;
    void *arg;
    int write;
    void *buf;
    size_t len;
    uint64_t raddr, key;
    struct rma_op *next; /* in its link's rma list while it waits to be posted (tx_mu) */
    /* an atomic (tp_atomic): its operation, the registrations of its result and compare
     * buffers where the provider wants local ones; to: the peer, or this endpoint (l NULL) */
    int atomic;
    struct tp_atomic a;
    struct mr_ent *rmr, *cmr;
    fi_addr_t to;
};

struct ofi_tp {
    struct tp base;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    int mr_local, mr_virt, prov_key;
    atomic_uint_fast64_t next_key; /* our keys when the provider does not make them */
    size_t max_msg;
    size_t eager; /* the largest payload sent as one message (tp_ofi_open) */
    char provider[64];
    uint8_t name[TP_OFI_NAME_MAX]; /* our endpoint's, to tell which side of a link speaks first */
    size_t name_len;
    pthread_mutex_t mu;    /* handles completions; guards links and deferred */
    pthread_mutex_t mr_mu; /* the registration cache: a leaf lock, taken by senders too */
    struct ofi_link **links;
    size_t nlinks, cap;
    struct fi_cq_msg_entry *deferred; /* read, not yet handled: [dhead, ndeferred) */
    size_t dhead, ndeferred, defcap;
    struct rx_buf *rx[TP_OFI_RX_BUFS];
    struct mr_ent cache[TP_OFI_MR_CACHE];
    uint64_t clock;
    pthread_t thread;
    int started;
    /* The completion queue's wait object (FI_WAIT_FD; -1 where the provider has none): the
     * progress thread sleeps in the kernel on it, woken when the provider's sockets have
     * something, or by fi_cq_signal when an operation is posted while it sleeps. */
    int wait_fd;
    atomic_int sleeping;
    atomic_uint_fast64_t wait_sleeps;
    atomic_int stop;
    atomic_uint_fast64_t rejected;
    atomic_int break_reqs; /* links with a break_req set: progress_locked reports them */
    atomic_int pumps;      /* links with pump_due set: the progress thread posts for them */
    /* Atomics (tp_atomic): the provider has FI_ATOMIC; self is this endpoint in the address
     * vector, for atomics on our own memory; self_atomics counts those. */
    int atomics;
    fi_addr_t self;
    atomic_uint_fast64_t self_atomics;
    /* Operations posted and not yet complete (sends, large sends until their FIN, reads,
     * one-sided): while any is, the progress thread does not back off (inflight_add). */
    atomic_int inflight;
};

struct ofi_link {
    struct tp_link base;
    struct ofi_tp *t;
    fi_addr_t peer; /* shared by every link to the same endpoint (peer_of) */
    uint8_t name[TP_OFI_NAME_MAX];
    size_t name_len;
    uint64_t tx_secret, rx_secret;
    const struct tp_rx_ops *rx;
    void *arg;
    pthread_mutex_t tx_mu; /* numbers and posts the link's frames in call order */
    uint64_t tx_seq, rx_seq;
    int paused, failed;
    /* This side speaks second (tp_ofi_link_start): the link's frames wait unposted in the
     * unacked list until the first message from the peer arrives (tx_mu). */
    atomic_int quiet;
    /* Frames sent and not acknowledged, in frame order (tx_mu). */
    struct tx_buf *unacked_h, **unacked_t;
    /* Queueing (tx_mu): the first frame of the unacked list not posted yet (NULL: all are),
     * how many from it on (also read unlocked, to wait for room), the control messages and
     * one-sided operations waiting to be posted; pump_due: something waits (the progress
     * thread posts it, t->pumps counts such links). */
    struct tx_buf *post_next;
    atomic_int queued;
    struct tx_buf *ctl_h, **ctl_t;
    struct rma_op *rma_h, **rma_t;
    atomic_int pump_due;
    atomic_int read_due; /* reading's fi_read found no room: the progress thread posts it */
    /* Resending: a break was seen (on_break said a reattach comes): frames wait unposted
     * (tx_mu to set, read unlocked as a hint); a break asked for outside progress (a post
     * that failed in a send): its error, reported by the holder of mu (atomic). */
    int broken;
    atomic_int break_req;
    /* reattached: on_rejoin at the peer's answer to ask_gen (1), or when it is first heard
     * (2: the link was quiet, no ask went) (mu) */
    int rejoin_wait;
    uint32_t ask_gen; /* reattaches of this link (mu) */
    int answer_due;   /* the peer asked (answer_gen) while we were broken (mu) */
    uint32_t answer_gen;
    uint64_t done_seq;         /* the last frame delivered whole (mu) */
    uint64_t ack_sent;         /* done_seq of the last ACK sent (mu) */
    uint64_t ack_due;          /* when frames up to done_seq must be acknowledged, ns (mu) */
    struct read_op *reading;   /* a large frame in flight: later frames wait (mu) */
    struct wait_frame *wait_h; /* frames waiting their turn, by frame number (mu) */
    atomic_uint_fast64_t frames_sent, bytes_sent, frames_received, bytes_received, rma_ops,
        rma_bytes, atomic_ops;
};

static __thread int in_progress; /* this thread holds t->mu in progress */

static const struct tp_ops ofi_ops;

/* ---- registrations ---- */

/* A key for a registration: each distinct, unless the provider picks them (FI_MR_PROV_KEY). */
static uint64_t new_key(struct ofi_tp *t)
{
    return t->prov_key ? 0 : atomic_fetch_add_explicit(&t->next_key, 1, memory_order_relaxed) + 1;
}

static void *mr_desc(struct ofi_tp *t, struct mr_ent *e)
{
    return e && t->mr_local ? fi_mr_desc(e->mr) : NULL;
}

static int mr_get_locked(struct ofi_tp *t, const void *buf, size_t len, struct mr_ent **ret);

/* A registration covering [buf, buf + len), from the cache when one is there. */
static int mr_get(struct ofi_tp *t, const void *buf, size_t len, uint64_t access,
                  struct mr_ent **ret)
{
    pthread_mutex_lock(&t->mr_mu);
    int r = mr_get_locked(t, buf, len, ret);
    pthread_mutex_unlock(&t->mr_mu);
    return r;
}

static int mr_get_locked(struct ofi_tp *t, const void *buf, size_t len, struct mr_ent **ret)
{
    struct mr_ent *free_e = NULL, *old = NULL;
    for (int i = 0; i < TP_OFI_MR_CACHE; i++) {
        struct mr_ent *e = &t->cache[i];
        if (e->mr && (const char *)e->buf <= (const char *)buf &&
            (const char *)buf + len <= (const char *)e->buf + e->len) {
            e->refs++;
            e->used = ++t->clock;
            *ret = e;
            return 0;
        }
        if (!e->mr && !free_e) free_e = e;
        if (e->mr && !e->refs && (!old || e->used < old->used)) old = e;
    }
    struct mr_ent *e = free_e ? free_e : old;
    if (!e) { /* TP_OFI_MR_CACHE transfers in flight: this one registers on its own */
        e = calloc(1, sizeof *e);
        if (!e) return -ENOMEM;
        e->own = 1;
    }
    if (e->mr) fi_close(&e->mr->fid);
    e->mr = NULL;
    int r = fi_mr_reg(t->domain, buf, len,
                      FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                      new_key(t), 0, &e->mr, NULL);
    if (r) {
        e->mr = NULL;
        if (e->own) free(e);
        return r;
    }
    e->buf = buf;
    e->len = len;
    e->refs = 1;
    e->used = ++t->clock;
    *ret = e;
    return 0;
}

/* The last transfer that used a registration is done: it goes.  A registration is shared by
 * the transfers in flight over one buffer, never kept for a later one: between two transfers
 * the program may free the buffer and get other pages at the same address (a large malloc is
 * an mmap), and a provider that pins pages (verbs, EFA) would then move the old ones.  The
 * providers that cache registrations do it themselves, with a monitor of unmapped memory
 * (libfabric's FI_MR_CACHE_MONITOR); for tcp a registration costs a table entry. */
static void mr_put(struct ofi_tp *t, struct mr_ent *e)
{
    if (!e) return;
    pthread_mutex_lock(&t->mr_mu);
    struct fid_mr *gone = NULL;
    if (--e->refs == 0) {
        gone = e->mr;
        e->mr = NULL;
    }
    pthread_mutex_unlock(&t->mr_mu);
    if (gone) fi_close(&gone->fid);
    if (gone && e->own) free(e);
}

/* ---- sending ---- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail_link(struct ofi_link *l, int err)
{
    if (l->failed) return;
    l->failed = 1;
    l->rx->on_error(l->arg, &l->base, err);
}

static ssize_t read_cq(struct ofi_tp *t);

/* The provider's queue is full: make it progress.  Completions read here are only kept (for
 * the holder of mu to handle in order): no callback runs inside a send, which may hold its
 * link's tx_mu. */
static void drive(struct ofi_tp *t)
{
    if (in_progress) {
        read_cq(t);
    } else if (pthread_mutex_trylock(&t->mu) == 0) {
        read_cq(t);
        pthread_mutex_unlock(&t->mu);
    } else { /* drives a manual-progress provider, takes no completion (thread safe domain) */
        fi_cq_read(t->cq, NULL, 0);
    }
}

/* A link's send lock.  Inside a callback the lock's holder may itself be waiting for the
 * provider to progress, which needs the completion queue read: so read it while waiting. */
static void tx_lock(struct ofi_link *l)
{
    if (!in_progress) {
        pthread_mutex_lock(&l->tx_mu);
        return;
    }
    while (pthread_mutex_trylock(&l->tx_mu)) {
        read_cq(l->t);
        sched_yield();
    }
}

/* Counts an operation in or out of flight.  The providers here progress manually (libfabric
 * tcp: a transfer moves only inside fi_cq_read), and a large transfer completes nothing until
 * its end: a progress thread that backed off to 1 ms sleeps after a few empty reads moved a
 * 4 MiB rendezvous one chunk a millisecond while every rank of the node computed (seconds,
 * tests/mpi/net_progress.c part 2).  So while anything is in flight the thread sleeps on the
 * wait object for TP_OFI_WAIT_BUSY_NS at most, and one asleep for longer is woken when an
 * operation is posted. */
static void inflight_add(struct ofi_tp *t, int d)
{
    atomic_fetch_add_explicit(&t->inflight, d, memory_order_seq_cst);
    /* seq_cst against the thread's sleeping store and its inflight load (progress_wait): one
     * of us sees the other */
    if (d > 0 && atomic_load_explicit(&t->sleeping, memory_order_seq_cst)) fi_cq_signal(t->cq);
}

/* A break seen where no callback may run (inside a send, tx_mu held): the holder of mu
 * reports it (progress_locked). */
static void break_later(struct ofi_tp *t, struct ofi_link *l, int err)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&l->break_req, &none, err ? err : -EIO)) {
        atomic_fetch_add(&t->break_reqs, 1);
        fi_cq_signal(t->cq);
    }
}

/* The link's way to the peer broke (mu held, in progress): a link whose owner carries it on
 * (rx->on_break said 0) keeps its frames until tp_reattach; any other fails. */
static void break_link(struct ofi_tp *t, struct ofi_link *l, int err)
{
    (void)t;
    if (l->failed || l->broken) return;
    if (!l->rx->on_break) {
        fail_link(l, err);
        return;
    }
    tx_lock(l);
    l->broken = 1;
    pthread_mutex_unlock(&l->tx_mu);
    l->rejoin_wait = 0;
    if (l->rx->on_break(l->arg, &l->base, err) != 0) fail_link(l, err);
}

static void tx_unref(struct tx_buf *b)
{
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) free(b);
}

/* Posts one message, TP_OFI_POST_TRIES times at most while the provider's queue is full
 * (-FI_EAGAIN then: the caller queues it).  The post holds a ref of b until its completion; on
 * failure b is the caller's as before. */
static int post_send(struct ofi_tp *t, struct ofi_link *l, struct tx_buf *b, void *desc)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    for (int i = 0;; i++) {
        ssize_t r = fi_send(t->ep, b->data, b->len, desc, l->peer, &b->op.fctx);
        if (r == 0) {
            inflight_add(t, 1);
            return 0;
        }
        if (r != -FI_EAGAIN || i + 1 == TP_OFI_POST_TRIES) {
            atomic_fetch_sub_explicit(&b->refs, 1, memory_order_relaxed);
            return (int)r;
        }
        drive(t);
        sched_yield();
    }
}

static struct tx_buf *tx_new(struct ofi_link *l, uint32_t kind, size_t body)
{
    struct tx_buf *b = malloc(sizeof *b + PREFIX + body);
    if (!b) return NULL;
    b->op.kind = OP_SEND;
    b->l = l;
    b->next = NULL;
    atomic_init(&b->refs, 0);
    b->sent = 0;
    b->seq = 0;
    b->rts = NULL;
    b->len = PREFIX + body;
    be_put64(b->data, l->tx_secret);
    be_put32(b->data + 8, kind);
    be_put32(b->data + 12, 0);
    return b;
}

/* tx buffers are not registered: providers that need FI_MR_LOCAL for sends get a copy in a
 * registered bounce of their own below. */
static int send_tx(struct ofi_tp *t, struct ofi_link *l, struct tx_buf *b)
{
    void *desc = NULL;
    struct mr_ent *e = NULL;
    if (t->mr_local) {
        int r = mr_get(t, b->data, b->len, 0, &e);
        if (r) return r;
        desc = mr_desc(t, e);
    }
    int r = post_send(t, l, b, desc);
    if (e) {
        mr_put(t, e);
    }
    return r;
}

/* Posts a frame of the unacked list (tx_mu held): itself, or a copy when it is still posted
 * (a resend after a break whose completion has not come: one context is posted once). */
static int post_frame(struct ofi_tp *t, struct ofi_link *l, struct tx_buf *b)
{
    if (b->sent && atomic_load_explicit(&b->refs, memory_order_acquire) > 1) {
        struct tx_buf *c = tx_new(l, 0, b->len - PREFIX);
        if (!c) return -ENOMEM;
        memcpy(c->data, b->data, b->len);
        int r = send_tx(t, l, c);
        if (r) free(c);
        return r;
    }
    int r = send_tx(t, l, b);
    if (r == 0) b->sent = 1;
    return r;
}

static int rma_post(struct ofi_tp *t, struct rma_op *op);
static int rma_keep(struct ofi_tp *t, struct rma_op *op, int err);

/* Something of l waits for room (tx_mu held): the progress thread posts it. */
static void pump_later(struct ofi_tp *t, struct ofi_link *l)
{
    if (atomic_exchange(&l->pump_due, 1)) return;
    atomic_fetch_add(&t->pumps, 1);
    if (atomic_load_explicit(&t->sleeping, memory_order_seq_cst)) fi_cq_signal(t->cq);
}

/* Posts what waits on l, in order: control messages, one-sided operations, then the frames
 * from post_next (tx_mu held).  What finds no room stays (pump_later).  Returns how many went,
 * or a negative errno of a post that failed otherwise (a break: the caller reports it). */
static int pump(struct ofi_tp *t, struct ofi_link *l)
{
    int n = 0, r = 0;
    if (l->failed || l->broken || l->quiet) return 0; /* the reattach / the peer's first message */
    /* next is read before the post: once posted, the progress thread may see the completion
     * and free the message (or the operation) before this thread looks at it again */
    while (l->ctl_h && !r) {
        struct tx_buf *b = l->ctl_h, *next = b->next;
        r = send_tx(t, l, b);
        if (r) break;
        l->ctl_h = next;
        if (!l->ctl_h) l->ctl_t = &l->ctl_h;
        n++;
    }
    while (l->rma_h && !r) {
        struct rma_op *op = l->rma_h, *next = op->next;
        r = rma_post(t, op);
        if (r) break;
        l->rma_h = next;
        if (!l->rma_h) l->rma_t = &l->rma_h;
        n++;
    }
    while (l->post_next && !r) {
        r = post_frame(t, l, l->post_next);
        if (r) break;
        l->post_next = l->post_next->next;
        atomic_fetch_sub_explicit(&l->queued, 1, memory_order_relaxed);
        n++;
    }
    if (r == -FI_EAGAIN) {
        pump_later(t, l);
        r = 0;
    } else if (!r && !atomic_load(&l->read_due) && atomic_exchange(&l->pump_due, 0)) {
        atomic_fetch_sub(&t->pumps, 1);
    }
    return r ? r : n;
}

/* Queues control message b on l and posts what it can (tx_mu held). */
static int ctl_send(struct ofi_tp *t, struct ofi_link *l, struct tx_buf *b)
{
    b->next = NULL;
    *l->ctl_t = b;
    l->ctl_t = &b->next;
    int r = pump(t, l);
    return r < 0 ? r : 0;
}

static int ofi_send(struct tp_link *tl, const struct netd_hdr *h, unsigned flags,
                    const void *payload, tp_done_fn done, void *arg)
{
    struct ofi_link *l = (struct ofi_link *)tl;
    struct ofi_tp *t = l->t;
    if (l->failed) return -EPIPE;
    size_t plen = h->payload_len;
    int large = plen > t->eager;
    struct tx_buf *b =
        tx_new(l, large ? K_RTS : K_EAGER, NETD_HDR_SIZE + (large ? RTS_EXTRA : plen));
    if (!b) return -ENOMEM;
    struct rts_op *op = NULL;
    if (large) {
        op = calloc(1, sizeof *op);
        if (!op) {
            free(b);
            return -ENOMEM;
        }
        int r = mr_get(t, payload, plen, 0, &op->mr);
        if (r) {
            free(op);
            free(b);
            return r;
        }
        op->done = done;
        op->arg = arg;
        uint8_t *x = b->data + PREFIX + NETD_HDR_SIZE;
        /* without FI_MR_VIRT_ADDR a peer names the payload by its offset in the registration
         * (which may be a larger cached one) */
        be_put64(x, t->mr_virt ? (uint64_t)(uintptr_t)payload
                               : (uint64_t)((const char *)payload - (const char *)op->mr->buf));
        be_put64(x + 8, fi_mr_key(op->mr->mr));
        be_put64(x + 16, 0);
        b->rts = op;
    } else if (plen) {
        memcpy(b->data + PREFIX + NETD_HDR_SIZE, payload, plen);
    }
    if (op) inflight_add(t, 1); /* before the RTS: its ACK may be handled before we return */
    /* A peer that reads nothing: wait for room (not in a callback, which the room waits for;
     * never with tx_mu, which a reattach needs) */
    while (!in_progress && !l->failed &&
           atomic_load_explicit(&l->queued, memory_order_relaxed) >= TP_OFI_QUEUED_MAX) {
        drive(t);
        sched_yield();
    }
    tx_lock(l);
    netd_hdr_encode(h, b->data + PREFIX);
    b->seq = ++l->tx_seq;
    netd_hdr_set_seq(b->data + PREFIX, b->seq);
    atomic_store_explicit(&b->refs, 1, memory_order_relaxed); /* the unacked list's */
    *l->unacked_t = b;
    l->unacked_t = &b->next;
    if (!l->post_next) l->post_next = b;
    atomic_fetch_add_explicit(&l->queued, 1, memory_order_relaxed);
    int r = pump(t, l);
    pthread_mutex_unlock(&l->tx_mu);
    /* kept: a link that resends sends it again after the break this is */
    if (r < 0) break_later(t, l, r);
    atomic_fetch_add_explicit(&l->frames_sent, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->bytes_sent, NETD_HDR_SIZE + plen, memory_order_relaxed);
    /* an eager payload was copied: the caller's buffer is free now */
    if (!large && done) done(arg, 0);
    return 0;
}

/* An ACK of every frame up to done_seq (mu held), or NULL (out of memory: the link failed). */
static struct tx_buf *ack_new(struct ofi_link *l, uint32_t flags, uint32_t ask, uint32_t answer)
{
    struct tx_buf *b = tx_new(l, K_ACK, ACK_BODY);
    if (!b) {
        fail_link(l, -ENOMEM);
        return NULL;
    }
    uint8_t *x = b->data + PREFIX;
    be_put64(x, l->done_seq);
    be_put32(x + 8, flags);
    be_put32(x + 12, ask);
    be_put32(x + 16, answer);
    be_put32(x + 20, 0);
    return b;
}

/* Acknowledges every frame up to done_seq (mu held), answering the peer's ask with answer. */
static void send_ack_answer(struct ofi_tp *t, struct ofi_link *l, uint32_t flags, uint32_t answer)
{
    l->ack_due = 0;
    if (l->failed || l->broken || l->quiet) return; /* a reattach acknowledges */
    struct tx_buf *b = ack_new(l, flags, 0, answer);
    if (!b) return;
    tx_lock(l);
    /* a plain ACK still queued (no room): it acknowledges up to done_seq instead */
    struct tx_buf *q = NULL;
    for (q = flags ? NULL : l->ctl_h; q; q = q->next)
        if (be_get32(q->data + 8) == K_ACK && !be_get32(q->data + PREFIX + 8)) break;
    int r = 0;
    if (q) {
        be_put64(q->data + PREFIX, l->done_seq);
        free(b);
    } else {
        r = ctl_send(t, l, b); /* queued: it stays queued also when r says a break */
    }
    pthread_mutex_unlock(&l->tx_mu);
    if (r) {
        break_link(t, l, r);
        return;
    }
    l->ack_sent = l->done_seq;
}

static void send_ack(struct ofi_tp *t, struct ofi_link *l)
{
    send_ack_answer(t, l, 0, 0);
}

/* Frame seq of l is delivered whole (mu held): acknowledged now (now: a large frame, whose
 * sender holds its buffer until then) or soon. */
static void frame_done(struct ofi_tp *t, struct ofi_link *l, uint64_t seq, int now)
{
    l->done_seq = seq;
    if (now || seq - l->ack_sent >= TP_OFI_ACK_EVERY)
        send_ack(t, l);
    else if (!l->ack_due)
        l->ack_due = now_ns() + TP_OFI_ACK_DELAY_NS;
}

/* The peer has every frame up to seq (mu held): they go, and the large ones' sends complete. */
static void on_ack(struct ofi_tp *t, struct ofi_link *l, uint64_t seq)
{
    struct rts_op *done_h = NULL, **done_t = &done_h;
    tx_lock(l);
    if (seq > l->tx_seq) {
        pthread_mutex_unlock(&l->tx_mu);
        fail_link(l, -EPROTO);
        return;
    }
    while (l->unacked_h && l->unacked_h->seq <= seq) {
        struct tx_buf *b = l->unacked_h;
        l->unacked_h = b->next;
        if (l->post_next == b) { /* resent after a reattach, here before: no need */
            l->post_next = b->next;
            atomic_fetch_sub_explicit(&l->queued, 1, memory_order_relaxed);
        }
        if (!l->unacked_h) l->unacked_t = &l->unacked_h;
        if (b->rts) {
            b->rts->next = NULL;
            *done_t = b->rts;
            done_t = &b->rts->next;
            b->rts = NULL;
        }
        tx_unref(b);
    }
    pthread_mutex_unlock(&l->tx_mu);
    while (done_h) {
        struct rts_op *op = done_h;
        done_h = op->next;
        inflight_add(t, -1);
        mr_put(t, op->mr);
        if (op->done) op->done(op->arg, 0);
        free(op);
    }
}

/* ---- receiving (mu held) ---- */

static int post_recv(struct ofi_tp *t, struct rx_buf *b)
{
    for (;;) {
        ssize_t r = fi_recv(t->ep, b->data, sizeof b->data, b->desc, FI_ADDR_UNSPEC, &b->op.fctx);
        if (r != -FI_EAGAIN) return (int)r;
        drive(t);
    }
}

static struct ofi_link *link_of(struct ofi_tp *t, uint64_t secret)
{
    for (size_t i = 0; i < t->nlinks; i++)
        if (t->links[i]->rx_secret == secret) return t->links[i];
    return NULL;
}

/* Reads a large frame's payload into the buffer on_header chose (mu held); with no room in
 * the provider's queue the progress thread posts it later (read_due). */
static int read_post(struct ofi_tp *t, struct read_op *op)
{
    for (int i = 0;; i++) {
        ssize_t e = fi_read(t->ep, op->dst, op->h.payload_len, mr_desc(t, op->mr), op->l->peer,
                            op->raddr, op->key, &op->op.fctx);
        if (e == 0) {
            inflight_add(t, 1);
            return 0;
        }
        if (e != -FI_EAGAIN) return (int)e;
        if (i + 1 == TP_OFI_POST_TRIES) {
            op->l->read_due = 1;
            tx_lock(op->l);
            pump_later(t, op->l);
            pthread_mutex_unlock(&op->l->tx_mu);
            return 0;
        }
        drive(t);
    }
}

/* The read of l->reading failed (mu held): at a break it is kept, and read again when the
 * link is reattached (its on_header ran: the frame is not delivered a second time); else the
 * link fails. */
static void read_failed(struct ofi_tp *t, struct read_op *op, int err)
{
    struct ofi_link *l = op->l;
    if (l->rx->on_break && !l->failed) {
        op->failed = 1;
        break_link(t, l, err);
        if (!l->failed) return;
    }
    l->reading = NULL;
    mr_put(t, op->mr);
    free(op);
    fail_link(l, err);
}

/* Delivers one frame (EAGER or RTS) of l.  Returns 1 when b may be reposted now. */
static int deliver(struct ofi_tp *t, struct ofi_link *l, const uint8_t *data, size_t len)
{
    uint32_t kind = be_get32(data + 8);
    struct netd_hdr h = {0};
    if (len < PREFIX + NETD_HDR_SIZE || netd_hdr_decode(data + PREFIX, OFI_MAX_PAYLOAD, &h) < 0 ||
        h.seq != l->rx_seq + 1) {
        fail_link(l, -EPROTO);
        return 1;
    }
    size_t body = len - PREFIX - NETD_HDR_SIZE;
    if ((kind == K_EAGER && body != h.payload_len) ||
        (kind == K_RTS && (body != RTS_EXTRA || h.payload_len == 0))) {
        fail_link(l, -EPROTO);
        return 1;
    }
    l->rx_seq = h.seq;
    void *ctx = NULL;
    void *dst = l->rx->on_header(l->arg, &l->base, &h, &ctx);
    if (l->failed) return 1;
    if (kind == K_EAGER) {
        if (dst && h.payload_len) memcpy(dst, data + PREFIX + NETD_HDR_SIZE, h.payload_len);
        atomic_fetch_add_explicit(&l->frames_received, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->bytes_received, NETD_HDR_SIZE + h.payload_len,
                                  memory_order_relaxed);
        l->rx->on_frame(l->arg, &l->base, &h, ctx);
        if (!l->failed) frame_done(t, l, h.seq, 0);
        return 1;
    }
    const uint8_t *x = data + PREFIX + NETD_HDR_SIZE;
    uint64_t raddr = be_get64(x), key = be_get64(x + 8);
    if (!dst) { /* dropped: the sender's buffer is free all the same */
        l->rx->on_frame(l->arg, &l->base, &h, ctx);
        if (!l->failed) frame_done(t, l, h.seq, 1);
        return 1;
    }
    struct read_op *op = calloc(1, sizeof *op);
    int r = op ? mr_get(t, dst, h.payload_len, 0, &op->mr) : -ENOMEM;
    if (r) {
        free(op);
        fail_link(l, r);
        return 1;
    }
    op->op.kind = OP_READ;
    op->l = l;
    op->h = h;
    op->ctx = ctx;
    op->dst = dst;
    op->raddr = raddr;
    op->key = key;
    l->reading = op;
    r = read_post(t, op);
    if (r) read_failed(t, op, r);
    return 1;
}

/* A frame that arrived before its turn (the link paused, a read of an earlier frame in flight,
 * or the provider completed a later message first: send-after-send order is about matching,
 * not about the order of completions), copied so that its receive buffer goes back at once. */
struct wait_frame {
    struct wait_frame *next;
    uint64_t seq;
    size_t len;
    uint8_t data[];
};

/* Delivers l's waiting frames while the first is the next and nothing is in flight. */
static void run_waiting(struct ofi_tp *t, struct ofi_link *l)
{
    while (!l->paused && !l->reading && l->wait_h && l->wait_h->seq == l->rx_seq + 1 &&
           !l->failed) {
        struct wait_frame *w = l->wait_h;
        l->wait_h = w->next;
        deliver(t, l, w->data, w->len);
        free(w);
    }
}

/* Keeps a copy of the frame in data in l's list, in frame order. */
static void keep_waiting(struct ofi_link *l, uint64_t seq, const uint8_t *data, size_t len)
{
    struct wait_frame *w = malloc(sizeof *w + len);
    if (!w) {
        fail_link(l, -ENOMEM);
        return;
    }
    w->seq = seq;
    w->len = len;
    memcpy(w->data, data, len);
    struct wait_frame **p = &l->wait_h;
    while (*p && (*p)->seq < seq)
        p = &(*p)->next;
    if (*p && (*p)->seq == seq) { /* resent after a break: this one is here already */
        free(w);
        return;
    }
    w->next = *p;
    *p = w;
}

/* The first message from l's peer is in (mu held): its connection is up, this side may speak.
 * The frames kept meanwhile go out first, in their order (at a break: after tp_reattach). */
static void hear(struct ofi_tp *t, struct ofi_link *l)
{
    int err = 0;
    if (l->rejoin_wait == 2) { /* reattached before the peer was first heard */
        l->rejoin_wait = 0;
        if (l->rx->on_rejoin) l->rx->on_rejoin(l->arg, &l->base);
    }
    tx_lock(l);
    l->quiet = 0;
    int r = pump(t, l);
    pthread_mutex_unlock(&l->tx_mu);
    if (r < 0) err = r;
    if (err) break_link(t, l, err);
}

static void on_recv(struct ofi_tp *t, struct rx_buf *b, size_t len)
{
    if (len < PREFIX) goto repost;
    struct ofi_link *l = link_of(t, be_get64(b->data));
    if (!l) {
        atomic_fetch_add_explicit(&t->rejected, 1, memory_order_relaxed);
        goto repost;
    }
    if (l->failed) goto repost;
    if (l->quiet) hear(t, l);
    uint32_t kind = be_get32(b->data + 8);
    if (kind == K_HELLO) goto repost;
    if (kind == K_ACK) {
        if (len != PREFIX + ACK_BODY) {
            fail_link(l, -EPROTO);
            goto repost;
        }
        const uint8_t *x = b->data + PREFIX;
        uint32_t flags = be_get32(x + 8);
        on_ack(t, l, be_get64(x));
        if ((flags & ACK_ANSWER) && l->rejoin_wait && be_get32(x + 16) == l->ask_gen) {
            /* the peer is there on the way our reattach made */
            l->rejoin_wait = 0;
            if (l->rx->on_rejoin) l->rx->on_rejoin(l->arg, &l->base);
        }
        if ((flags & ACK_ASK) && !l->failed) {
            if (l->broken) { /* answered by our own reattach */
                l->answer_due = 1;
                l->answer_gen = be_get32(x + 12);
            } else {
                send_ack_answer(t, l, ACK_ANSWER, be_get32(x + 12));
            }
        }
        goto repost;
    }
    if ((kind != K_EAGER && kind != K_RTS) || len < PREFIX + NETD_HDR_SIZE) {
        fail_link(l, -EPROTO);
        goto repost;
    }
    uint64_t seq = be_get64(b->data + PREFIX + 24); /* netd_hdr.h: seq at 24 */
    if (seq <= l->rx_seq) goto repost;              /* resent after a break: delivered before */
    if (l->paused || l->reading || l->wait_h || seq != l->rx_seq + 1) {
        keep_waiting(l, seq, b->data, len);
        run_waiting(t, l); /* it may be the one the list waited for */
        goto repost;
    }
    deliver(t, l, b->data, len);
    run_waiting(t, l);
repost:
    post_recv(t, b);
}

static void on_read_done(struct ofi_tp *t, struct read_op *op, int err)
{
    struct ofi_link *l = op->l;
    inflight_add(t, -1);
    if (err) {
        read_failed(t, op, err);
        if (l->reading) return; /* read again after the reattach */
    } else {
        mr_put(t, op->mr);
        l->reading = NULL;
        atomic_fetch_add_explicit(&l->frames_received, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->bytes_received, NETD_HDR_SIZE + op->h.payload_len,
                                  memory_order_relaxed);
        l->rx->on_frame(l->arg, &l->base, &op->h, op->ctx);
        if (!l->failed) frame_done(t, l, op->h.seq, 1);
        free(op);
    }
    run_waiting(t, l);
}

static void handle(struct ofi_tp *t, const struct fi_cq_msg_entry *c, int err)
{
    struct op *op = c->op_context;
    switch (op->kind) {
    case OP_RECV:
        if (err)
            post_recv(t, (struct rx_buf *)op);
        else
            on_recv(t, (struct rx_buf *)op, c->len);
        break;
    case OP_SEND: {
        struct tx_buf *b = (struct tx_buf *)op;
        inflight_add(t, -1);
        if (err) break_link(t, b->l, err);
        tx_unref(b);
        break;
    }
    case OP_READ:
        on_read_done(t, (struct read_op *)op, err);
        break;
    case OP_RMA: {
        struct rma_op *r = (struct rma_op *)op;
        inflight_add(t, -1);
        if (err && rma_keep(t, r, err)) break;
        mr_put(t, r->mr);
        mr_put(t, r->rmr);
        mr_put(t, r->cmr);
        if (r->done) r->done(r->arg, err);
        free(r);
        break;
    }
    case OP_RTS:
        break;
    }
}

/* Appends what the completion queue has to t->deferred (mu held by this thread): completions
 * are handled in the order the provider gave them, also when a callback reads more (a receive
 * read inside a callback must not overtake one read before it).  0 or -FI_EAVAIL / -EAGAIN. */
static ssize_t read_cq(struct ofi_tp *t)
{
    struct fi_cq_msg_entry c[16];
    ssize_t got = fi_cq_read(t->cq, c, 16);
    if (got <= 0) return got;
    if (t->ndeferred + (size_t)got > t->defcap) {
        if (t->dhead) { /* slide the unhandled ones to the front first */
            memmove(t->deferred, t->deferred + t->dhead,
                    (t->ndeferred - t->dhead) * sizeof *t->deferred);
            t->ndeferred -= t->dhead;
            t->dhead = 0;
        }
        if (t->ndeferred + (size_t)got > t->defcap) {
            size_t cap = t->defcap ? t->defcap * 2 : 64;
            while (cap < t->ndeferred + (size_t)got)
                cap *= 2;
            void *p = realloc(t->deferred, cap * sizeof *t->deferred);
            if (!p) abort(); /* a lost completion would stall its link for good */
            t->deferred = p;
            t->defcap = cap;
        }
    }
    memcpy(t->deferred + t->ndeferred, c, (size_t)got * sizeof *c);
    t->ndeferred += (size_t)got;
    return got;
}

/* Posts what waits for room on every link that has some (mu held, in progress): a read of a
 * large frame's payload, then what pump posts.  A failed link's one-sided operations that
 * waited complete with -EPIPE.  Returns how many went. */
static int pump_all(struct ofi_tp *t)
{
    int n = 0;
    for (size_t i = 0; i < t->nlinks; i++) {
        struct ofi_link *l = t->links[i];
        if (!atomic_load_explicit(&l->pump_due, memory_order_acquire)) continue;
        if (atomic_load(&l->read_due) && l->reading && !l->broken && !l->failed) {
            atomic_store(&l->read_due, 0);
            int e = read_post(t, l->reading);
            if (e) read_failed(t, l->reading, e);
        }
        if (pthread_mutex_trylock(&l->tx_mu)) continue; /* a sender has it: it pumps itself */
        struct rma_op *gone = NULL;
        int r = 0;
        if (l->failed) {
            gone = l->rma_h;
            l->rma_h = NULL;
            l->rma_t = &l->rma_h;
            atomic_store(&l->read_due, 0);
            if (atomic_exchange(&l->pump_due, 0)) atomic_fetch_sub(&t->pumps, 1);
        } else {
            r = pump(t, l);
        }
        pthread_mutex_unlock(&l->tx_mu);
        while (gone) {
            struct rma_op *op = gone;
            gone = op->next;
            mr_put(t, op->mr);
            mr_put(t, op->rmr);
            mr_put(t, op->cmr);
            if (op->done) op->done(op->arg, -EPIPE);
            free(op);
        }
        if (r > 0) n += r;
        if (r < 0) break_link(t, l, r);
    }
    return n;
}

/* Handles what the completion queue has (mu held by this thread, callbacks may run). */
static int progress_locked(struct ofi_tp *t)
{
    int n = 0;
    in_progress++;
    if (atomic_load_explicit(&t->break_reqs, memory_order_acquire)) {
        atomic_store(&t->break_reqs, 0);
        for (size_t i = 0; i < t->nlinks; i++) {
            struct ofi_link *l = t->links[i];
            int e = atomic_exchange(&l->break_req, 0);
            if (e) break_link(t, l, e);
        }
    }
    if (atomic_load_explicit(&t->pumps, memory_order_acquire)) n += pump_all(t);
    for (;;) {
        if (t->dhead == t->ndeferred) {
            t->dhead = t->ndeferred = 0;
            ssize_t got = read_cq(t);
            if (got == -FI_EAVAIL) {
                struct fi_cq_err_entry e = {0};
                if (fi_cq_readerr(t->cq, &e, 0) == 1) {
                    struct fi_cq_msg_entry m = {.op_context = e.op_context, .len = e.len};
                    handle(t, &m, -(e.err ? (int)e.err : EIO));
                    n++;
                }
                continue;
            }
            if (got <= 0) break;
        }
        struct fi_cq_msg_entry c = t->deferred[t->dhead++];
        handle(t, &c, 0);
        n++;
    }
    in_progress--;
    return n;
}

/* The progress thread has nothing to do: it sleeps on the completion queue's wait object until
 * the provider has something (the sockets under it are in the wait set: a frame that arrives
 * wakes it as one arriving on a TCP link wakes a receive daemon), for at most
 * TP_OFI_WAIT_BUSY_NS while a transfer is in flight (the provider may need a turn to write
 * what a full socket did not take) and TP_OFI_WAIT_IDLE_NS otherwise.  A thread that sleeps
 * in the kernel is scheduled at once when it wakes on a busy node; one that polls with short
 * sleeps used its share, and on a loaded 2-core machine waited its turn behind every
 * computing thread for each piece of a large transfer (net_progress part 2 took seconds). */
static void progress_wait(struct ofi_tp *t)
{
    atomic_store_explicit(&t->sleeping, 1, memory_order_seq_cst);
    int busy = atomic_load_explicit(&t->inflight, memory_order_seq_cst) > 0 ||
               atomic_load_explicit(&t->pumps, memory_order_seq_cst) > 0;
    struct fid *f = &t->cq->fid;
    if (fi_trywait(t->fabric, &f, 1) == FI_SUCCESS) {
        struct timespec ts = {0, busy ? TP_OFI_WAIT_BUSY_NS : TP_OFI_WAIT_IDLE_NS};
        struct pollfd p = {.fd = t->wait_fd, .events = POLLIN};
        ppoll(&p, 1, &ts, NULL);
        atomic_fetch_add_explicit(&t->wait_sleeps, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&t->sleeping, 0, memory_order_relaxed);
}

/* Acknowledges what waited TP_OFI_ACK_DELAY_NS (mu held, nothing else to do). */
static void flush_acks(struct ofi_tp *t)
{
    uint64_t now = 0;
    in_progress++;
    for (size_t i = 0; i < t->nlinks; i++) {
        struct ofi_link *l = t->links[i];
        if (!l->ack_due) continue;
        if (!now) now = now_ns();
        if (now >= l->ack_due) send_ack(t, l);
    }
    in_progress--;
}

static void *progress_thread(void *arg)
{
    struct ofi_tp *t = arg;
    unsigned idle = 0;
    while (!atomic_load(&t->stop)) {
        int n = 0;
        if (pthread_mutex_trylock(&t->mu) == 0) {
            n = progress_locked(t);
            if (!n) flush_acks(t);
            pthread_mutex_unlock(&t->mu);
        }
        if (n) {
            idle = 0;
            continue;
        }
        if (++idle < 64) {
            sched_yield();
        } else if (t->wait_fd >= 0) {
            progress_wait(t);
        } else if (atomic_load_explicit(&t->inflight, memory_order_relaxed) > 0) {
            /* no wait object: back off to 20 us sleeps while a transfer is in flight
             * (inflight_add), to 1 ms when nothing is */
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        } else {
            struct timespec ts = {0, idle < 1024 ? 20000 : 1000000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* ---- links ---- */

/* Another link to the endpoint called name (mu held), or NULL.  The links of both channels to
 * one node go to one endpoint: it is in the address vector once.  Two entries for one peer
 * made ofi_rxm keep two connections to it, and the peer's answer to a connection of one could
 * meet the other (a link failed with ENOTCONN now and then when both sides sent at once). */
static struct ofi_link *peer_of(struct ofi_tp *t, const void *name, size_t len,
                                const struct ofi_link *except)
{
    for (size_t i = 0; i < t->nlinks; i++) {
        struct ofi_link *o = t->links[i];
        if (o != except && o->name_len == len && !memcmp(o->name, name, len)) return o;
    }
    return NULL;
}

static int ofi_connect(struct tp *tt, const struct tp_addr *a, const struct tp_rx_ops *rx,
                       void *arg, int paused, struct tp_link **ret)
{
    struct ofi_tp *t = (struct ofi_tp *)tt;
    if (!a->name || !a->name_len || a->name_len > TP_OFI_NAME_MAX) return -EINVAL;
    struct ofi_link *l = calloc(1, sizeof *l);
    if (!l) return -ENOMEM;
    l->base.ops = &ofi_ops;
    l->t = t;
    l->tx_secret = a->tx_secret;
    l->rx_secret = a->rx_secret;
    l->rx = rx;
    l->arg = arg;
    l->paused = paused;
    pthread_mutex_init(&l->tx_mu, NULL);
    memcpy(l->name, a->name, a->name_len);
    l->name_len = a->name_len;
    l->unacked_t = &l->unacked_h;
    l->ctl_t = &l->ctl_h;
    l->rma_t = &l->rma_h;
    /* Of two endpoints the one with the lower name opens the connection (see
     * tp_ofi_link_start); both sides compare the same two names. */
    size_t m = a->name_len < t->name_len ? a->name_len : t->name_len;
    int c = memcmp(t->name, a->name, m);
    l->quiet = c > 0 || (c == 0 && t->name_len > a->name_len);
    pthread_mutex_lock(&t->mu);
    struct ofi_link *same = peer_of(t, a->name, a->name_len, NULL);
    int r = 1;
    if (same)
        l->peer = same->peer;
    else
        r = fi_av_insert(t->av, a->name, 1, &l->peer, 0, NULL);
    if (r != 1) {
        pthread_mutex_unlock(&t->mu);
        pthread_mutex_destroy(&l->tx_mu);
        free(l);
        return r < 0 ? r : -EHOSTUNREACH;
    }
    if (link_of(t, a->rx_secret)) r = -EEXIST;
    if (r == 1 && t->nlinks == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        void *p = realloc(t->links, cap * sizeof *t->links);
        if (p) {
            t->links = p;
            t->cap = cap;
        } else {
            r = -ENOMEM;
        }
    }
    if (r != 1) {
        if (!same) fi_av_remove(t->av, &l->peer, 1, 0);
        pthread_mutex_unlock(&t->mu);
        pthread_mutex_destroy(&l->tx_mu);
        free(l);
        return r;
    }
    t->links[t->nlinks++] = l;
    pthread_mutex_unlock(&t->mu);
    *ret = &l->base;
    return 0;
}

static int ofi_poll(struct tp_link *tl)
{
    struct ofi_tp *t = ((struct ofi_link *)tl)->t;
    if (in_progress || pthread_mutex_trylock(&t->mu)) return 0;
    int n = progress_locked(t);
    pthread_mutex_unlock(&t->mu);
    return n;
}

static void ofi_resume(struct tp_link *tl)
{
    struct ofi_link *l = (struct ofi_link *)tl;
    struct ofi_tp *t = l->t;
    if (!in_progress) pthread_mutex_lock(&t->mu);
    l->paused = 0;
    if (!in_progress) {
        in_progress++;
        run_waiting(t, l);
        in_progress--;
        pthread_mutex_unlock(&t->mu);
    }
}

/* After a break (on_break said a reattach comes), or at any time: the way to the peer is made
 * anew by the provider itself (ofi_rxm connects again with the next message to the address),
 * so addr says nothing new.  Acknowledges what arrived, resends every frame not acknowledged,
 * in order, reads again a large frame whose read failed, and waits for the peer's first
 * message (on_rejoin).  Not from the link's callbacks. */
static int ofi_reattach(struct tp_link *tl, const struct tp_addr *addr)
{
    struct ofi_link *l = (struct ofi_link *)tl;
    struct ofi_tp *t = l->t;
    (void)addr;
    if (in_progress) return -EDEADLK;
    pthread_mutex_lock(&t->mu);
    if (l->failed) {
        pthread_mutex_unlock(&t->mu);
        return -EPIPE;
    }
    in_progress++;
    atomic_store(&l->break_req, 0);
    int err = 0;
    tx_lock(l);
    l->broken = 0;
    if (!l->quiet) {
        /* asks the peer to answer (on_rejoin then), and answers its ask if one came */
        struct tx_buf *a =
            ack_new(l, ACK_ASK | (l->answer_due ? ACK_ANSWER : 0), ++l->ask_gen, l->answer_gen);
        l->answer_due = 0;
        err = a ? 0 : -ENOMEM;
        /* everything not acknowledged goes again, after what waited to be posted already */
        int n = 0;
        for (struct tx_buf *b = l->unacked_h; b; b = b->next)
            n++;
        l->post_next = l->unacked_h;
        atomic_store_explicit(&l->queued, n, memory_order_relaxed);
        if (a) {
            err = ctl_send(t, l, a);
        }
    }
    pthread_mutex_unlock(&l->tx_mu);
    l->ack_sent = l->done_seq;
    l->ack_due = 0;
    if (!err && l->reading && l->reading->failed) {
        l->reading->failed = 0;
        err = read_post(t, l->reading);
        if (err) l->reading->failed = 1;
    }
    /* quiet: nothing was heard from the peer yet, so no ask went: hearing it ends the break */
    l->rejoin_wait = l->quiet ? 2 : 1;
    if (err) break_link(t, l, err);
    in_progress--;
    pthread_mutex_unlock(&t->mu);
    return 0;
}

static void ofi_drain(struct tp_link *tl)
{
    struct ofi_tp *t = ((struct ofi_link *)tl)->t;
    if (in_progress) return;
    pthread_mutex_lock(&t->mu); /* no callback runs while we hold it */
    pthread_mutex_unlock(&t->mu);
}

static void ofi_close(struct tp_link *tl)
{
    struct ofi_link *l = (struct ofi_link *)tl;
    struct ofi_tp *t = l->t;
    int nested = in_progress;
    if (!nested) pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->nlinks; i++)
        if (t->links[i] == l) {
            t->links[i] = t->links[--t->nlinks];
            break;
        }
    while (l->wait_h) {
        struct wait_frame *w = l->wait_h;
        l->wait_h = w->next;
        free(w);
    }
    /* a frame still posted goes with its completion; a large one's send never completes */
    while (l->unacked_h) {
        struct tx_buf *b = l->unacked_h;
        l->unacked_h = b->next;
        tx_unref(b);
    }
    while (l->ctl_h) { /* never posted */
        struct tx_buf *b = l->ctl_h;
        l->ctl_h = b->next;
        free(b);
    }
    while (l->rma_h) { /* never posted: the job ends, nobody waits for them */
        struct rma_op *op = l->rma_h;
        l->rma_h = op->next;
        mr_put(t, op->mr);
        mr_put(t, op->rmr);
        mr_put(t, op->cmr);
        free(op);
    }
    if (atomic_exchange(&l->pump_due, 0)) atomic_fetch_sub(&t->pumps, 1);
    if (!peer_of(t, l->name, l->name_len, l)) fi_av_remove(t->av, &l->peer, 1, 0);
    if (!nested) pthread_mutex_unlock(&t->mu);
    /* A read or send still in flight names l: it is kept (leaked) rather than freed under
     * them; links close at job end, when nothing is in flight. */
    if (l->reading) return;
    pthread_mutex_destroy(&l->tx_mu);
    free(l);
}

static void ofi_stats(struct tp_link *tl, struct tp_link_stats *ret)
{
    struct ofi_link *l = (struct ofi_link *)tl;
    memset(ret, 0, sizeof *ret);
    ret->frames_sent = atomic_load_explicit(&l->frames_sent, memory_order_relaxed);
    ret->bytes_sent = atomic_load_explicit(&l->bytes_sent, memory_order_relaxed);
    ret->frames_received = atomic_load_explicit(&l->frames_received, memory_order_relaxed);
    ret->bytes_received = atomic_load_explicit(&l->bytes_received, memory_order_relaxed);
    ret->rma_ops = atomic_load_explicit(&l->rma_ops, memory_order_relaxed);
    ret->rma_bytes = atomic_load_explicit(&l->rma_bytes, memory_order_relaxed);
    ret->atomic_ops = atomic_load_explicit(&l->atomic_ops, memory_order_relaxed);
    snprintf(ret->carrier, sizeof ret->carrier, "ofi:%s", l->t->provider);
}

/* ---- one-sided ---- */

struct tp_mr {
    struct fid_mr *mr;
};

static int ofi_mr_reg(struct tp *tt, void *buf, size_t len, struct tp_mr **ret, uint64_t *key,
                      uint64_t *addr)
{
    struct ofi_tp *t = (struct ofi_tp *)tt;
    struct tp_mr *m = calloc(1, sizeof *m);
    if (!m) return -ENOMEM;
    int r = fi_mr_reg(t->domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE, 0,
                      new_key(t), 0, &m->mr, NULL);
    if (r) {
        free(m);
        return r;
    }
    *key = fi_mr_key(m->mr);
    *addr = t->mr_virt ? (uint64_t)(uintptr_t)buf : 0;
    *ret = m;
    return 0;
}

static void ofi_mr_dereg(struct tp_mr *m)
{
    if (!m) return;
    fi_close(&m->mr->fid);
    free(m);
}

/* Posts op, TP_OFI_POST_TRIES times at most while the provider's queue is full (-FI_EAGAIN
 * then: the caller queues it). */
static ssize_t atomic_post_once(struct ofi_tp *t, struct rma_op *op);

static ssize_t rma_post_once(struct ofi_tp *t, struct rma_op *op)
{
    /* a Put is done when the data is in the target's memory (a flush after it means that),
     * not only when it left */
    struct iovec iov = {.iov_base = op->buf, .iov_len = op->len};
    void *desc = mr_desc(t, op->mr);
    struct fi_rma_iov riov = {.addr = op->raddr, .len = op->len, .key = op->key};
    struct fi_msg_rma m = {.msg_iov = &iov,
                           .desc = &desc,
                           .iov_count = 1,
                           .addr = op->to,
                           .rma_iov = &riov,
                           .rma_iov_count = 1,
                           .context = &op->op.fctx};
    return op->write ? fi_writemsg(t->ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE)
                     : fi_readmsg(t->ep, &m, FI_COMPLETION);
}

static int rma_post(struct ofi_tp *t, struct rma_op *op)
{
    for (int i = 0;; i++) {
        ssize_t e = op->atomic ? atomic_post_once(t, op) : rma_post_once(t, op);
        if (e == 0) {
            inflight_add(t, 1);
            return 0;
        }
        if (e != -FI_EAGAIN || i + 1 == TP_OFI_POST_TRIES) return (int)e;
        drive(t);
        sched_yield();
    }
}

/* Appends op to l's one-sided operations waiting to be posted (tx_mu held). */
static void rma_queue(struct ofi_tp *t, struct ofi_link *l, struct rma_op *op)
{
    op->next = NULL;
    *l->rma_t = op;
    l->rma_t = &op->next;
    pump_later(t, l);
}

/* A one-sided operation completed with an error (mu held): at a break of a link that is
 * carried on, it is kept and posted again after tp_reattach (1); otherwise 0, and it completes
 * with the error. */
static int rma_keep(struct ofi_tp *t, struct rma_op *op, int err)
{
    struct ofi_link *l = op->l;
    /* an atomic may have been applied before the break: going again could apply it twice,
     * so it fails (the window's error) */
    if (!l || op->atomic || !l->rx->on_break || l->failed) return 0;
    break_link(t, l, err);
    if (l->failed) return 0;
    tx_lock(l);
    rma_queue(t, l, op);
    pthread_mutex_unlock(&l->tx_mu);
    return 1;
}

/* Posts op on l, or queues it for the progress thread: the side that speaks second opens no
 * connection with a one-sided operation either, a broken link posts after its reattach, and a
 * full queue when there is room. */
static int rma_start(struct ofi_tp *t, struct ofi_link *l, struct rma_op *op)
{
    tx_lock(l);
    int r = l->quiet || l->broken || l->rma_h ? -FI_EAGAIN : rma_post(t, op);
    if (r == -FI_EAGAIN) {
        rma_queue(t, l, op);
        r = 0;
    }
    pthread_mutex_unlock(&l->tx_mu);
    return r;
}

static int rma(struct tp_link *tl, int write, void *buf, size_t len, uint64_t raddr, uint64_t key,
               tp_done_fn done, void *arg)
{
    struct ofi_link *l = (struct ofi_link *)tl;
    struct ofi_tp *t = l->t;
    if (len > t->max_msg) return -EMSGSIZE;
    if (l->failed) return -EPIPE;
    struct rma_op *op = calloc(1, sizeof *op);
    if (!op) return -ENOMEM;
    *op = (struct rma_op){.op.kind = OP_RMA,
                          .l = l,
                          .to = l->peer,
                          .done = done,
                          .arg = arg,
                          .write = write,
                          .buf = buf,
                          .len = len,
                          .raddr = raddr,
                          .key = key};
    int r = mr_get(t, buf, len, 0, &op->mr);
    if (r) {
        free(op);
        return r;
    }
    r = rma_start(t, l, op);
    if (r) {
        mr_put(t, op->mr);
        free(op);
        return r;
    }
    atomic_fetch_add_explicit(&l->rma_ops, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->rma_bytes, len, memory_order_relaxed);
    return 0;
}

/* ---- atomics ---- */

static const enum fi_op fi_op_of[TP_AOP__COUNT] = {
    [TP_AOP_SUM] = FI_SUM,     [TP_AOP_PROD] = FI_PROD,          [TP_AOP_MIN] = FI_MIN,
    [TP_AOP_MAX] = FI_MAX,     [TP_AOP_LAND] = FI_LAND,          [TP_AOP_LOR] = FI_LOR,
    [TP_AOP_LXOR] = FI_LXOR,   [TP_AOP_BAND] = FI_BAND,          [TP_AOP_BOR] = FI_BOR,
    [TP_AOP_BXOR] = FI_BXOR,   [TP_AOP_WRITE] = FI_ATOMIC_WRITE, [TP_AOP_READ] = FI_ATOMIC_READ,
    [TP_AOP_CSWAP] = FI_CSWAP,
};
static const enum fi_datatype fi_type_of[TP_AT__COUNT] = {
    [TP_AT_INT8] = FI_INT8,
    [TP_AT_INT16] = FI_INT16,
    [TP_AT_INT32] = FI_INT32,
    [TP_AT_INT64] = FI_INT64,
    [TP_AT_UINT8] = FI_UINT8,
    [TP_AT_UINT16] = FI_UINT16,
    [TP_AT_UINT32] = FI_UINT32,
    [TP_AT_UINT64] = FI_UINT64,
    [TP_AT_FLOAT] = FI_FLOAT,
    [TP_AT_DOUBLE] = FI_DOUBLE,
    [TP_AT_FLOAT_COMPLEX] = FI_FLOAT_COMPLEX,
    [TP_AT_DOUBLE_COMPLEX] = FI_DOUBLE_COMPLEX,
};
static const size_t at_size[TP_AT__COUNT] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 8, 16};

static ssize_t atomic_post_once(struct ofi_tp *t, struct rma_op *op)
{
    const struct tp_atomic *a = &op->a;
    /* FI_ATOMIC_READ reads no operand, but the providers want a buffer all the same */
    struct fi_ioc ioc = {.addr = (void *)(a->buf ? a->buf : a->result), .count = a->count};
    struct fi_ioc res = {.addr = a->result, .count = a->count};
    struct fi_ioc cmp = {.addr = (void *)a->cmp, .count = a->count};
    void *desc = mr_desc(t, op->mr), *rdesc = mr_desc(t, op->rmr), *cdesc = mr_desc(t, op->cmr);
    struct fi_rma_ioc rioc = {.addr = a->raddr, .count = a->count, .key = a->key};
    struct fi_msg_atomic m = {.msg_iov = &ioc,
                              .desc = &desc,
                              .iov_count = 1,
                              .addr = op->to,
                              .rma_iov = &rioc,
                              .rma_iov_count = 1,
                              .datatype = fi_type_of[a->type],
                              .op = fi_op_of[a->op],
                              .context = &op->op.fctx};
    if (a->op == TP_AOP_CSWAP)
        return fi_compare_atomicmsg(t->ep, &m, &cmp, &cdesc, 1, &res, &rdesc, 1, FI_COMPLETION);
    if (a->result) return fi_fetch_atomicmsg(t->ep, &m, &res, &rdesc, 1, FI_COMPLETION);
    /* done once applied at the target, as a Put (a flush after it means that) */
    return fi_atomicmsg(t->ep, &m, FI_COMPLETION | FI_DELIVERY_COMPLETE);
}

static int ofi_atomic_ok(struct tp *tt, int op, int type, int fetch, unsigned *ret_flags)
{
    struct ofi_tp *t = (struct ofi_tp *)tt;
    if (ret_flags) *ret_flags = 0;
    if (!t->atomics || op < 0 || op >= TP_AOP__COUNT || type < 0 || type >= TP_AT__COUNT)
        return -ENOTSUP;
    struct fi_atomic_attr attr = {0};
    uint64_t flags = op == TP_AOP_CSWAP ? FI_COMPARE_ATOMIC : fetch ? FI_FETCH_ATOMIC : 0;
    if (fi_query_atomic(t->domain, fi_type_of[type], fi_op_of[op], &attr, flags) != 0 ||
        attr.count == 0)
        return -ENOTSUP;
    const uint64_t all =
        FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;
    if (ret_flags && (t->info->tx_attr->msg_order & all) == all) *ret_flags = TP_ATOMIC_ORDERED;
    return attr.count > INT32_MAX ? INT32_MAX : (int)attr.count;
}

static int ofi_atomic(struct tp *tt, struct tp_link *tl, const struct tp_atomic *a, tp_done_fn done,
                      void *arg)
{
    struct ofi_tp *t = (struct ofi_tp *)tt;
    struct ofi_link *l = (struct ofi_link *)tl;
    if (!t->atomics) return -ENOTSUP;
    if (a->op < 0 || a->op >= TP_AOP__COUNT || a->type < 0 || a->type >= TP_AT__COUNT ||
        !a->count || (a->op != TP_AOP_READ && !a->buf) ||
        ((a->op == TP_AOP_READ || a->op == TP_AOP_CSWAP) && !a->result) ||
        (a->op == TP_AOP_CSWAP && !a->cmp))
        return -EINVAL;
    if (l && l->failed) return -EPIPE;
    const size_t len = a->count * at_size[a->type];
    struct rma_op *op = calloc(1, sizeof *op);
    if (!op) return -ENOMEM;
    *op = (struct rma_op){.op.kind = OP_RMA,
                          .l = l,
                          .to = l ? l->peer : t->self,
                          .done = done,
                          .arg = arg,
                          .atomic = 1,
                          .a = *a,
                          .len = len};
    int r = 0;
    if (t->mr_local) {
        if (a->buf) r = mr_get(t, a->buf, len, 0, &op->mr);
        if (!r && a->result) r = mr_get(t, a->result, len, 0, &op->rmr);
        if (!r && a->cmp) r = mr_get(t, a->cmp, len, 0, &op->cmr);
    }
    if (!r && !l) { /* our own memory: our own progress makes room */
        while ((r = rma_post(t, op)) == -FI_EAGAIN)
            if (!in_progress) sched_yield();
        if (!r) atomic_fetch_add_explicit(&t->self_atomics, 1, memory_order_relaxed);
    } else if (!r) {
        r = rma_start(t, l, op);
        if (!r) atomic_fetch_add_explicit(&l->atomic_ops, 1, memory_order_relaxed);
    }
    if (r) {
        mr_put(t, op->mr);
        mr_put(t, op->rmr);
        mr_put(t, op->cmr);
        free(op);
    }
    return r;
}

uint64_t tp_ofi_self_atomics(struct tp *tt)
{
    return atomic_load_explicit(&((struct ofi_tp *)tt)->self_atomics, memory_order_relaxed);
}

static int ofi_put(struct tp_link *tl, const void *buf, size_t len, uint64_t raddr, uint64_t key,
                   tp_done_fn done, void *arg)
{
    return rma(tl, 1, (void *)buf, len, raddr, key, done, arg);
}

static int ofi_get(struct tp_link *tl, void *buf, size_t len, uint64_t raddr, uint64_t key,
                   tp_done_fn done, void *arg)
{
    return rma(tl, 0, buf, len, raddr, key, done, arg);
}

/* ---- the endpoint ---- */

static void ofi_free(struct tp *tt)
{
    struct ofi_tp *t = (struct ofi_tp *)tt;
    if (!t) return;
    if (t->started) {
        atomic_store(&t->stop, 1);
        if (t->wait_fd >= 0) fi_cq_signal(t->cq); /* asleep on the wait object: now, not later */
        pthread_join(t->thread, NULL);
    }
    if (t->ep) fi_close(&t->ep->fid);
    for (int i = 0; i < TP_OFI_RX_BUFS; i++)
        if (t->rx[i]) {
            if (t->rx[i]->mr) fi_close(&t->rx[i]->mr->fid);
            free(t->rx[i]);
        }
    for (int i = 0; i < TP_OFI_MR_CACHE; i++)
        if (t->cache[i].mr) fi_close(&t->cache[i].mr->fid);
    if (t->av) fi_close(&t->av->fid);
    if (t->cq) fi_close(&t->cq->fid);
    if (t->domain) fi_close(&t->domain->fid);
    if (t->fabric) fi_close(&t->fabric->fid);
    if (t->info) ofi_lib_get(NULL, 0)->freeinfo(t->info); /* loaded: info came from it */
    pthread_mutex_destroy(&t->mu);
    pthread_mutex_destroy(&t->mr_mu);
    free(t->links);
    free(t->deferred);
    free(t);
}

static const struct tp_ops ofi_ops = {
    .name = "ofi",
    .connect = ofi_connect,
    .send = ofi_send,
    .poll = ofi_poll,
    .resume = ofi_resume,
    .drain = ofi_drain,
    .close = ofi_close,
    .stats = ofi_stats,
    .reattach = ofi_reattach,
    .mr_reg = ofi_mr_reg,
    .mr_dereg = ofi_mr_dereg,
    .put = ofi_put,
    .get = ofi_get,
    .atomic_ok = ofi_atomic_ok,
    .atomic = ofi_atomic,
    .free = ofi_free,
};

static struct fi_info *hints_for(const struct ofi_lib *L, const char *provider, int atomics)
{
    struct fi_info *h = L->dupinfo(NULL);
    if (!h) return NULL;
    h->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
              (atomics ? FI_ATOMIC : 0);
    h->mode = FI_CONTEXT;
    h->ep_attr->type = FI_EP_RDM;
    h->domain_attr->threading = FI_THREAD_SAFE;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
    if (provider && *provider) h->fabric_attr->prov_name = strdup(provider);
    return h;
}

/* ofi_rxm carries a message above its buffer size (FI_OFI_RXM_BUFFER_SIZE, 16 KiB unless set)
 * by segments or by a rendezvous of its own, and libfabric 1.17 keeps such a message that
 * arrived before its receive with the connection it came on: when that connection breaks
 * (a reset: tp_reattach carries the link on), the next fi_recv crashed the job host inside
 * rxm (SIGSEGV under fi_recv, liveness.bats reset test, 3 of 8 runs).  So on rxm a frame goes
 * as one message only within rxm's buffer (what our prefix and header and rxm's own header
 * leave of it), and a larger one by our rendezvous, whose fi_read fails cleanly at a break. */
#define RXM_BUFFER_DEFAULT 16384
#define RXM_HEADER_RESERVE 128
static size_t eager_limit(const char *provider)
{
    if (!strstr(provider, "ofi_rxm")) return TP_OFI_EAGER;
    size_t buf = RXM_BUFFER_DEFAULT;
    const char *e = getenv("FI_OFI_RXM_BUFFER_SIZE");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 0);
        if (*end == '\0' && v > 0) buf = (size_t)v;
    }
    size_t over = PREFIX + NETD_HDR_SIZE + RXM_HEADER_RESERVE;
    size_t lim = buf > over + 64 ? buf - over : 64;
    return lim < TP_OFI_EAGER ? lim : TP_OFI_EAGER;
}

#define WHY(...) (why ? (void)snprintf(why, why_len, __VA_ARGS__) : (void)0)

int tp_ofi_open(const char *provider, struct tp **ret, char *why, size_t why_len)
{
    const struct ofi_lib *L = ofi_lib_get(why, why_len);
    if (!L) return -ENOENT;
    struct ofi_tp *t = calloc(1, sizeof *t);
    if (!t) return -ENOMEM;
    t->base.ops = &ofi_ops;
    t->wait_fd = -1;
    pthread_mutex_init(&t->mu, NULL);
    pthread_mutex_init(&t->mr_mu, NULL);
    /* with atomics where the provider has them (accumulates then go as fi_atomic), else
     * without */
    int r = -FI_ENODATA;
    for (int atomics = 1; atomics >= 0 && r; atomics--) {
        struct fi_info *h = hints_for(L, provider, atomics);
        if (!h) {
            free(t);
            return -ENOMEM;
        }
        r = L->getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &t->info);
        L->freeinfo(h);
        t->atomics = atomics && !r;
    }
    if (r) {
        WHY("no libfabric provider %s with reliable datagrams here (%s)",
            provider && *provider ? provider : "(any)", L->strerror(-r));
        t->info = NULL;
        ofi_free(&t->base);
        return -ENOENT;
    }
    struct fi_info *i = t->info;
    snprintf(t->provider, sizeof t->provider, "%s", i->fabric_attr->prov_name);
    t->mr_local = !!(i->domain_attr->mr_mode & FI_MR_LOCAL);
    t->mr_virt = !!(i->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    t->prov_key = !!(i->domain_attr->mr_mode & FI_MR_PROV_KEY);
    t->max_msg = i->ep_attr->max_msg_size;
    t->eager = eager_limit(t->provider);
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD, .size = 4096};
    struct fi_av_attr ava = {.type = FI_AV_UNSPEC};
    const char *step = "fabric";
    r = L->fabric(i->fabric_attr, &t->fabric, NULL);
    if (!r) step = "domain", r = fi_domain(t->fabric, i, &t->domain, NULL);
    if (!r) {
        step = "completion queue";
        r = fi_cq_open(t->domain, &cqa, &t->cq, NULL);
        if (r) { /* no wait object here: the progress thread polls */
            cqa.wait_obj = FI_WAIT_NONE;
            r = fi_cq_open(t->domain, &cqa, &t->cq, NULL);
        } else if (fi_control(&t->cq->fid, FI_GETWAIT, &t->wait_fd) != 0) {
            t->wait_fd = -1;
        }
    }
    if (!r) step = "address vector", r = fi_av_open(t->domain, &ava, &t->av, NULL);
    if (!r) step = "endpoint", r = fi_endpoint(t->domain, i, &t->ep, NULL);
    if (!r) step = "binding", r = fi_ep_bind(t->ep, &t->av->fid, 0);
    if (!r) r = fi_ep_bind(t->ep, &t->cq->fid, FI_TRANSMIT | FI_RECV);
    if (!r) step = "enable", r = fi_enable(t->ep);
    for (int k = 0; !r && k < TP_OFI_RX_BUFS; k++) {
        step = "receive buffers";
        struct rx_buf *b = calloc(1, sizeof *b);
        if (!b) {
            r = -ENOMEM;
            break;
        }
        t->rx[k] = b;
        b->op.kind = OP_RECV;
        if (t->mr_local) {
            r = fi_mr_reg(t->domain, b->data, sizeof b->data, FI_RECV, 0, new_key(t), 0, &b->mr,
                          NULL);
            if (r) break;
            b->desc = fi_mr_desc(b->mr);
        }
        r = post_recv(t, b);
    }
    if (r) {
        WHY("libfabric provider %s: %s: %s", t->provider, step, L->strerror(-r));
        ofi_free(&t->base);
        return r < 0 ? r : -EIO;
    }
    t->name_len = sizeof t->name;
    r = fi_getname(&t->ep->fid, t->name, &t->name_len);
    if (r) {
        WHY("libfabric provider %s: endpoint name: %s", t->provider, L->strerror(-r));
        ofi_free(&t->base);
        return r < 0 ? r : -EIO;
    }
    /* shm's atomics lost updates here (libfabric 1.17: rma_basic's Accumulate from 6 ranks
     * on 3 loopback nodes read 18 and 23 for 21 after the fence), where tcp;ofi_rxm's hold:
     * on shm accumulates stay frames */
    if (!strncmp(t->provider, "shm", 3) || !strncmp(t->provider, "sm2", 3)) t->atomics = 0;
    if (t->atomics && fi_av_insert(t->av, t->name, 1, &t->self, 0, NULL) != 1)
        t->atomics = 0; /* no way to our own memory: accumulates stay frames */
    r = pthread_create(&t->thread, NULL, progress_thread, t);
    if (r) {
        WHY("libfabric provider %s: progress thread: %s", t->provider, strerror(r));
        ofi_free(&t->base);
        return -r;
    }
    t->started = 1;
    *ret = &t->base;
    return 0;
}

/* ofi_rxm (and the verbs and tcp connections under it) opens a connection with the first
 * message to a peer; when both sides send their first at once it resolves the collision
 * itself, but not always alike on both (libfabric issue 7396): now and then a link failed with
 * ENOTCONN at job start.  So only one side of each pair speaks first, the other holds its
 * messages until it hears (hear): the side with the lower name sends a HELLO here, once both
 * sides made the link (the other's address vector has us, so the HELLO is not dropped). */
int tp_ofi_link_start(struct tp_link *tl)
{
    struct ofi_link *l = (struct ofi_link *)tl;
    if (l->quiet) return 0;
    struct tx_buf *b = tx_new(l, K_HELLO, 0);
    if (!b) return -ENOMEM;
    tx_lock(l);
    int r = ctl_send(l->t, l, b); /* queued: it stays queued also on an error (a break) */
    pthread_mutex_unlock(&l->tx_mu);
    return r ? -EPIPE : 0;
}

int tp_ofi_name(struct tp *tt, void *buf, size_t len)
{
    struct ofi_tp *t = (struct ofi_tp *)tt;
    size_t n = len;
    int r = fi_getname(&t->ep->fid, buf, &n);
    if (r) return r == -FI_ETOOSMALL ? -ENOSPC : r;
    return (int)n;
}

const char *tp_ofi_provider(struct tp *tt)
{
    return ((struct ofi_tp *)tt)->provider;
}

uint64_t tp_ofi_secret(void)
{
    uint64_t s = 0;
    while (!s)
        if (getrandom(&s, sizeof s, 0) != sizeof s) s = 0;
    return s;
}

uint64_t tp_ofi_wait_sleeps(struct tp *tt)
{
    return atomic_load_explicit(&((struct ofi_tp *)tt)->wait_sleeps, memory_order_relaxed);
}

uint64_t tp_ofi_rejected(struct tp *tt)
{
    return atomic_load_explicit(&((struct ofi_tp *)tt)->rejected, memory_order_relaxed);
}

/* The providers that run over plain sockets (or memory) and so are no reason to leave TCP: a
 * layered name ("tcp;ofi_rxm") is judged by its core, the first part. */
static int socket_provider(const char *name)
{
    static const char *const plain[] = {"tcp", "udp", "sockets", "shm", "net", "sm2"};
    size_t n = strcspn(name, ";");
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
        if (strlen(plain[i]) == n && !strncmp(name, plain[i], n)) return 1;
    return 0;
}

int tp_ofi_fabric_present(char *name, size_t len)
{
    const struct ofi_lib *L = ofi_lib_get(NULL, 0);
    if (!L) return 0; /* no libfabric: no fabric */
    struct fi_info *h = hints_for(L, NULL, 0), *list = NULL;
    if (!h) return 0;
    int found = 0;
    if (L->getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &list) == 0) {
        for (struct fi_info *i = list; i && !found; i = i->next)
            if (!socket_provider(i->fabric_attr->prov_name)) {
                found = 1;
                if (name) snprintf(name, len, "%s", i->fabric_attr->prov_name);
            }
        L->freeinfo(list);
    }
    L->freeinfo(h);
    return found;
}
