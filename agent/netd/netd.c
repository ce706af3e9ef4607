/* netd.c — data-plane links and receive daemons (netd.h). */
#include "netd.h"
#include "netd_out.h"

#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Bytes read per recv() when the data is not going straight into a payload buffer.  Small
 * frames are parsed out of this staging buffer: one system call for many frames. */
#define NETD_STAGE 65536
/* Payload remainders at least this large are read straight into the payload buffer. */
#define NETD_DIRECT 8192
/* Polls (netd_link_poll) of a link that read nothing NETD_QUIET_AFTER times in a row read
 * it only every NETD_QUIET_EVERY-th time. */
#define NETD_QUIET_AFTER 16
#define NETD_QUIET_EVERY 4
/* Frames handled per readiness callback before other links of the daemon get a turn. */
#define NETD_BUDGET 64

struct netd_daemon {
    struct netd *n;
    struct event_base *base;
    pthread_t thread;
    int started;
    /* Links whose mark is up (netd_link_hold); the tick lowers a mark once its last holder
     * stopped NETD_LINGER_NS ago.  Armed while the list is not empty. */
    pthread_mutex_t linger_mu;
    struct netd_link *linger; /* linger_mu */
    int linger_armed;         /* linger_mu */
    unsigned tick_us;         /* the tick's current period (linger_mu) */
    struct event *linger_ev;
    atomic_uint reads; /* readiness callbacks that read something (the spin's clock) */
    /* loop rounds that could sleep / polled on (netd_stats): written by this daemon only, so
     * a polling daemon does not bounce the line the senders' counters share */
    atomic_uint_fast64_t sleeps, spin_polls;
    atomic_int stop;       /* netd_free: leave the loop */
    struct event *stop_ev; /* made active by netd_free to end a blocking loop */
};

struct netd {
    unsigned nthreads;
    size_t max_payload;
    struct netd_daemon *d;
    _Atomic uint64_t spin_ns; /* netd_set_spin */
    _Atomic(netd_may_spin_fn) may_spin;
    atomic_int spinning; /* daemons polling on after a read */
    void *_Atomic spin_arg;
    atomic_uint next;
    atomic_uint_fast64_t frames_sent, bytes_sent, frames_received, bytes_received;
    atomic_uint_fast64_t links, link_errors, queued_now;
    atomic_uint_fast64_t breaks, reattached, resent, duplicates;
    _Atomic size_t resend_max; /* netd_set_resend_max */
};

enum rx_state { RX_HEADER, RX_PAYLOAD };

struct netd_link {
    struct netd *n;
    struct netd_daemon *d;
    int fd;
    const struct netd_ops *ops;
    void *arg;
    struct event *rev, *wev;

    /* Send side, guarded by mu. */
    pthread_mutex_t mu;
    struct netd_out *qhead, *qtail;
    int failed;
    uint64_t tx_seq; /* last frame number stamped (netd_hdr.h seq) */
    /* Resending (netd.h), under mu but copied (read unlocked as a hint). */
    int resend;                             /* ops->on_break is set */
    size_t resend_max;                      /* bytes of payload copies it may hold */
    struct netd_out *sent_head, *sent_tail; /* written, not acknowledged yet */
    atomic_size_t copied;                   /* payload bytes of the copies held */
    uint64_t peer_acked;                    /* the peer's last acknowledgement */
    int broken;                             /* the socket broke: nothing is written */
    int await_peer;                         /* reattached: write once the peer's ack came */
    int rejoin_wait; /* reattached: ops->on_rejoin at the peer's first acknowledgement */
    int reading;     /* not paused: rev is wanted */

    /* Receive side, guarded by rx_mu: the daemon, or a rank thread polling while it waits
     * (netd_link_poll), runs the machine; whoever holds rx_mu is rx_owner. */
    pthread_mutex_t rx_mu;
    atomic_uintptr_t rx_owner;
    atomic_int rx_pending;   /* the daemon was told of new bytes while a poller held rx_mu */
    atomic_int pollers;      /* ranks spinning on this link (netd_link_hold) */
    pthread_mutex_t hold_mu; /* orders the socket option changes of holders */
    enum rx_state rx;
    struct netd_hdr h;
    uint64_t rx_seq; /* last frame number received; the next must be rx_seq + 1 */
    uint8_t *pbuf;   /* NULL: drop the payload */
    size_t pgot;
    void *ctx;
    uint8_t *stage;
    size_t s_beg, s_end;
    int in_cb;               /* a receive callback is on rx_owner's stack (rx_mu) */
    int rx_drained;          /* a poller's run: its last read came back short (rx_mu) */
    int no_probe;            /* SO_MEMINFO failed on this socket: pollers read blind (rx_mu) */
    int rx_polling;          /* the run is a poller's (rx_mu) */
    atomic_uint quiet_polls; /* polls in a row that read nothing (up to NETD_QUIET_AFTER) */
    atomic_uint poll_tick;   /* polls of a quiet link, to pick every NETD_QUIET_EVERY-th */
    int wr_in_cb;            /* a done callback is on the daemon's stack (daemon only) */
    int free_asked;          /* netd_link_free was called from inside one of those */
    int error_told;
    /* Resending, receive side (rx_mu). */
    int rx_broken;        /* the socket broke: the machine waits for netd_link_reattach */
    int resync;           /* since the reattach no new frame came: repeats are dropped */
    int dup;              /* the frame being read is such a repeat (payload dropped) */
    int partial;          /* a frame was cut in its payload: its repeat goes to pbuf */
    uint32_t partial_len; /* that frame's payload length */
    int peer_bye;         /* the peer said NETD_F_BYE: its end of stream is no break */
    uint8_t *partial_buf; /* and where its payload goes (pbuf, ctx of its on_header) */
    void *partial_ctx;
    unsigned rx_unacked;              /* frames received since the last acknowledgement */
    size_t rx_unacked_bytes;          /* and their bytes */
    unsigned burst;                   /* frames handled in the current readiness callback */
    size_t rx_bytes;                  /* bytes read from the socket, ever (rx_mu) */
    int lowat_high;                   /* the receive low-water mark is raised (hold_mu) */
    atomic_uint_fast64_t released_ns; /* when the last holder stopped */
    struct netd_link *linger_next;    /* d->linger, under d->linger_mu */
    int lingering;                    /* on d->linger (d->linger_mu) */
};

static void on_linger_tick(evutil_socket_t fd, short what, void *arg);

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg; /* daemon_main sees d->stop when the loop returns */
}

/* Whether d read within the spin time and may poll on (netd_set_spin).  *seen and *last: the
 * read count d had when last looked at, and when that was; me: d is counted in spinning. */
static int keep_spinning(struct netd_daemon *d, unsigned *seen, uint64_t *last, int me)
{
    struct netd *n = d->n;
    uint64_t spin = atomic_load_explicit(&n->spin_ns, memory_order_acquire);
    if (!spin) return 0;
    uint64_t now = mono_ns();
    unsigned reads = atomic_load_explicit(&d->reads, memory_order_relaxed);
    if (reads != *seen) {
        *seen = reads;
        *last = now;
    }
    if (now - *last >= spin) return 0;
    netd_may_spin_fn may = atomic_load_explicit(&n->may_spin, memory_order_relaxed);
    int others = atomic_load_explicit(&n->spinning, memory_order_relaxed) - me;
    return !may || may(atomic_load_explicit(&n->spin_arg, memory_order_relaxed), others);
}

static void *daemon_main(void *arg)
{
    struct netd_daemon *d = arg;
    unsigned seen = atomic_load_explicit(&d->reads, memory_order_relaxed);
    uint64_t last = 0;
    int spinning = 0;
    /* One loop round at a time rather than one endless loop: between rounds the daemon picks
     * between polling (EVLOOP_NONBLOCK) and sleeping (EVLOOP_ONCE), and looks at d->stop (a
     * loopbreak would be lost between rounds: each round clears it). */
    while (!atomic_load_explicit(&d->stop, memory_order_acquire)) {
        int spin = keep_spinning(d, &seen, &last, spinning);
        if (spin != spinning) {
            atomic_fetch_add_explicit(&d->n->spinning, spin ? 1 : -1, memory_order_relaxed);
            spinning = spin;
        }
        atomic_fetch_add_explicit(spin ? &d->spin_polls : &d->sleeps, 1, memory_order_relaxed);
        if (spin) {
            event_base_loop(d->base, EVLOOP_NONBLOCK | EVLOOP_NO_EXIT_ON_EMPTY);
            sched_yield(); /* a runnable thread of this CPU goes first */
        } else {
            event_base_loop(d->base, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY);
        }
    }
    if (spinning) atomic_fetch_sub_explicit(&d->n->spinning, 1, memory_order_relaxed);
    return NULL;
}

void netd_set_spin(struct netd *n, uint64_t spin_ns, netd_may_spin_fn may_spin, void *arg)
{
    /* spin_ns last, with release: a daemon that sees it sees the gate that goes with it (the
     * daemons already run) */
    atomic_store_explicit(&n->spin_arg, arg, memory_order_relaxed);
    atomic_store_explicit(&n->may_spin, may_spin, memory_order_relaxed);
    atomic_store_explicit(&n->spin_ns, spin_ns, memory_order_release);
}

int netd_new(unsigned nthreads, size_t max_payload, struct netd **ret)
{
    if (nthreads < 1 || nthreads > 64) return -EINVAL;
    /* Rank threads add write events to the daemons' bases. */
    if (evthread_use_pthreads() < 0) return -ENOMEM;
    struct netd *n = calloc(1, sizeof *n);
    if (!n) return -ENOMEM;
    n->nthreads = nthreads;
    n->max_payload = max_payload;
    n->resend_max = NETD_RESEND_MAX_DEFAULT;
    n->d = calloc(nthreads, sizeof *n->d);
    if (!n->d) {
        free(n);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < nthreads; i++) {
        struct netd_daemon *d = &n->d[i];
        d->n = n;
        pthread_mutex_init(&d->linger_mu, NULL);
        d->base = event_base_new();
        if (d->base) {
            d->linger_ev = event_new(d->base, -1, 0, on_linger_tick, d);
            d->stop_ev = event_new(d->base, -1, 0, on_stop, d);
        }
        if (!d->linger_ev || !d->stop_ev || pthread_create(&d->thread, NULL, daemon_main, d) != 0) {
            netd_free(n);
            return -ENOMEM;
        }
        d->started = 1;
    }
    *ret = n;
    return 0;
}

void netd_free(struct netd *n)
{
    if (!n) return;
    for (unsigned i = 0; i < n->nthreads; i++) {
        struct netd_daemon *d = &n->d[i];
        if (d->started) {
            atomic_store_explicit(&d->stop, 1, memory_order_release);
            event_active(d->stop_ev, EV_READ, 0);
            pthread_join(d->thread, NULL);
        }
    }
    /* Every link must have been freed by its owner before this point (netd.h). */
    for (unsigned i = 0; i < n->nthreads; i++) {
        if (n->d[i].linger_ev) event_free(n->d[i].linger_ev);
        if (n->d[i].stop_ev) event_free(n->d[i].stop_ev);
        if (n->d[i].base) event_base_free(n->d[i].base);
        pthread_mutex_destroy(&n->d[i].linger_mu);
    }
    free(n->d);
    free(n);
}

/* ---- sending ---- */

/* Writes what the socket takes of o.  1: all of it, 0: EAGAIN, < 0: the link failed. */
static int out_write(int fd, struct netd_out *o)
{
    struct iovec iov[2];
    int cnt;
    while ((cnt = netd_out_iov(o, iov)) > 0) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)cnt};
        ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            return -errno;
        }
        o->done += (size_t)w;
    }
    return 1;
}

/* Marks the link failed and hands back its queue (caller holds mu). */
static struct netd_out *fail_locked(struct netd_link *l)
{
    struct netd_out *q = l->qhead;
    if (l->sent_head) { /* written but not acknowledged: they go too */
        l->sent_tail->next = q;
        q = l->sent_head;
        l->sent_head = l->sent_tail = NULL;
    }
    l->failed = 1;
    l->qhead = l->qtail = NULL;
    atomic_store_explicit(&l->copied, 0, memory_order_relaxed);
    return q;
}

/* A resending link's frame o is written whole (caller holds mu): it waits for its
 * acknowledgement on the sent list, unless the peer already acknowledged it (a repeat after a
 * reattach) or it is an acknowledgement itself; those go to *fin to be completed unlocked. */
static void sent_push_locked(struct netd_link *l, struct netd_out *o, struct netd_out ***fin)
{
    o->next = NULL;
    if (!o->ctl && o->seq > l->peer_acked) {
        if (l->sent_tail)
            l->sent_tail->next = o;
        else
            l->sent_head = o;
        l->sent_tail = o;
        return;
    }
    if (o->copy) atomic_fetch_sub_explicit(&l->copied, o->len, memory_order_relaxed);
    **fin = o;
    *fin = &o->next;
}

static void complete_all(struct netd *n, struct netd_out *q, int err)
{
    while (q) {
        struct netd_out *next = q->next;
        atomic_fetch_sub_explicit(&n->queued_now, NETD_HDR_SIZE + q->len - q->done,
                                  memory_order_relaxed);
        if (q->cb) q->cb(q->arg, err);
        free(q->copy);
        free(q);
        q = next;
    }
}

/* The socket of a resending link failed on a write (caller holds mu): nothing more is written
 * and the reader, which sees the same failure, reports the break (on_break). */
static void write_broke_locked(struct netd_link *l)
{
    l->broken = 1;
    if (l->reading) event_active(l->rev, EV_READ, 0);
}

/* netd_send of a resending link: the frame is kept (copied or by reference) until the peer
 * acknowledges it. */
static int send_kept(struct netd_link *l, const struct netd_out *tmpl)
{
    struct netd *n = l->n;
    struct netd_out *q = malloc(sizeof *q);
    if (!q) return -ENOMEM;
    *q = *tmpl;
    /* The copy is made before mu, against an unlocked look at the budget: senders may go
     * over it together by a few copies at most. */
    if (q->len && q->len <= NETD_RESEND_COPY_MAX &&
        atomic_load_explicit(&l->copied, memory_order_relaxed) + q->len <= l->resend_max) {
        q->copy = malloc(q->len);
        if (q->copy) {
            memcpy(q->copy, q->payload, q->len);
            q->payload = q->copy;
        }
    }
    /* done at once when the payload is copied (or there is none), else at the ack */
    int now = q->copy || !q->len;
    netd_done_fn cb = q->cb;
    void *arg = q->arg;
    if (now)
        q->cb = NULL;
    else
        q->hdr[2] |= NETD_F_ACKREQ;
    struct netd_out *fin = NULL, **fin_tail = &fin;
    pthread_mutex_lock(&l->mu);
    if (l->failed) {
        pthread_mutex_unlock(&l->mu);
        free(q->copy);
        free(q);
        return -EPIPE;
    }
    q->seq = ++l->tx_seq;
    netd_hdr_set_seq(q->hdr, q->seq);
    if (q->copy) atomic_fetch_add_explicit(&l->copied, q->len, memory_order_relaxed);
    if (!l->qhead && !l->broken) {
        int rc = out_write(l->fd, q);
        if (rc == 1) {
            atomic_fetch_add_explicit(&n->frames_sent, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&n->bytes_sent, NETD_HDR_SIZE + q->len, memory_order_relaxed);
            sent_push_locked(l, q, &fin_tail);
            q = NULL;
        } else if (rc < 0) {
            write_broke_locked(l);
        }
    }
    if (q) {
        int was_empty = l->qhead == NULL;
        if (l->qtail)
            l->qtail->next = q;
        else
            l->qhead = q;
        l->qtail = q;
        atomic_fetch_add_explicit(&n->queued_now, NETD_HDR_SIZE + q->len - q->done,
                                  memory_order_relaxed);
        if (was_empty && !l->broken) event_add(l->wev, NULL);
    }
    pthread_mutex_unlock(&l->mu);
    complete_all(n, fin, 0);
    if (now && cb) cb(arg, 0);
    return 0;
}

int netd_send(struct netd_link *l, const struct netd_hdr *h, unsigned flags, const void *payload,
              netd_done_fn done, void *arg)
{
    struct netd *n = l->n;
    struct netd_out o = {
        .payload = payload, .len = h->payload_len, .flags = flags, .cb = done, .arg = arg};
    if (o.len && !payload) return -EINVAL;
    netd_hdr_encode(h, o.hdr);
    o.hdr[2] = 0; /* the flags are netd's own */
    if (l->resend) return send_kept(l, &o);

    pthread_mutex_lock(&l->mu);
    if (l->failed) {
        pthread_mutex_unlock(&l->mu);
        return -EPIPE;
    }
    /* Numbered under mu: the number order is the wire order. */
    netd_hdr_set_seq(o.hdr, ++l->tx_seq);
    if (!l->qhead) {
        int rc = out_write(l->fd, &o);
        if (rc == 1) {
            pthread_mutex_unlock(&l->mu);
            atomic_fetch_add_explicit(&n->frames_sent, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&n->bytes_sent, NETD_HDR_SIZE + o.len, memory_order_relaxed);
            if (done) done(arg, 0);
            return 0;
        }
        if (rc < 0) {
            /* The reader sees the same error and reports it through on_error. */
            struct netd_out *q = fail_locked(l);
            pthread_mutex_unlock(&l->mu);
            complete_all(n, q, -EPIPE);
            return -EPIPE;
        }
    }
    struct netd_out *q = malloc(sizeof *q);
    if (!q) {
        if (o.done == 0 && l->qhead == NULL) {
            pthread_mutex_unlock(&l->mu);
            return -ENOMEM;
        }
        /* Part of the frame is on the wire: it must be finished or the stream is garbage. */
        struct netd_out *lost = fail_locked(l);
        pthread_mutex_unlock(&l->mu);
        shutdown(l->fd, SHUT_RDWR);
        complete_all(n, lost, -EPIPE);
        return -EPIPE;
    }
    *q = o;
    int was_empty = l->qhead == NULL;
    if (l->qtail)
        l->qtail->next = q;
    else
        l->qhead = q;
    l->qtail = q;
    atomic_fetch_add_explicit(&n->queued_now, NETD_HDR_SIZE + q->len - q->done,
                              memory_order_relaxed);
    if (was_empty) event_add(l->wev, NULL);
    pthread_mutex_unlock(&l->mu);
    return 0;
}

static void link_destroy(struct netd_link *l);

/* Daemon: the socket can take more of the queue. */
/* Writes queued frames while the socket takes them (caller holds mu).  Finished frames go to
 * *done, the whole queue to *failed if the link broke; the caller completes them unlocked. */
static size_t flush_locked(struct netd_link *l, struct netd_out **done, struct netd_out **failed)
{
    struct netd *n = l->n;
    struct netd_out **done_tail = done;
    size_t wrote = 0;
    while (l->qhead && !l->broken) {
        struct netd_out *o = l->qhead;
        size_t before = o->done;
        int rc = out_write(l->fd, o);
        wrote += o->done - before;
        atomic_fetch_sub_explicit(&n->queued_now, o->done - before, memory_order_relaxed);
        if (rc == 0) break;
        if (rc < 0) {
            if (l->resend)
                write_broke_locked(l);
            else
                *failed = fail_locked(l);
            break;
        }
        l->qhead = o->next;
        if (!l->qhead) l->qtail = NULL;
        if (l->resend) {
            sent_push_locked(l, o, &done_tail);
        } else {
            o->next = NULL;
            *done_tail = o;
            done_tail = &o->next;
        }
        atomic_fetch_add_explicit(&n->frames_sent, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&n->bytes_sent, NETD_HDR_SIZE + o->len, memory_order_relaxed);
    }
    return wrote;
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    struct netd_link *l = arg;
    struct netd *n = l->n;
    struct netd_out *done_head = NULL, *failed = NULL;
    pthread_mutex_lock(&l->mu);
    flush_locked(l, &done_head, &failed);
    if (!l->qhead || l->broken) event_del(l->wev);
    pthread_mutex_unlock(&l->mu);

    l->wr_in_cb++;
    complete_all(n, done_head, 0);
    complete_all(n, failed, -EPIPE);
    l->wr_in_cb--;
    if (!l->wr_in_cb && l->free_asked) link_destroy(l);
}

/* ---- receiving ---- */

static void link_error(struct netd_link *l, int err)
{
    struct netd *n = l->n;
    event_del(l->rev);
    pthread_mutex_lock(&l->mu);
    struct netd_out *q = fail_locked(l);
    pthread_mutex_unlock(&l->mu);
    /* Not under mu: from a polling rank thread, event_del waits for a running on_writable,
     * which takes mu. */
    event_del(l->wev);
    complete_all(n, q, -EPIPE);
    if (!l->error_told && !l->free_asked) {
        l->error_told = 1;
        atomic_fetch_add_explicit(&n->link_errors, 1, memory_order_relaxed);
        l->ops->on_error(l->arg, l, err);
    }
}

/* Reads into buf; > 0 bytes, 0 would block, < 0 error (-EPIPE at EOF).  For a polling rank
 * a read that came back short emptied the socket: the rest of its run does not ask again (a
 * recv that can only say EAGAIN costs a system call on the latency path; the rank polls again
 * anyway, and finds an end of stream then).  The daemon reads until EAGAIN: its events are
 * edge-triggered, and an EOF queued behind the data raises no new edge. */
static ssize_t rx_read(struct netd_link *l, void *buf, size_t len)
{
    if (l->rx_drained && l->rx_polling) return 0;
    for (;;) {
        ssize_t r = recv(l->fd, buf, len, MSG_DONTWAIT);
        if (r > 0) {
            if ((size_t)r < len) l->rx_drained = 1;
            l->rx_bytes += (size_t)r;
            atomic_fetch_add_explicit(&l->n->bytes_received, (uint64_t)r, memory_order_relaxed);
            return r;
        }
        if (r == 0) return -EPIPE;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        return -errno;
    }
}

/* Refills the staging buffer.  > 0, 0 (would block), < 0 error. */
static ssize_t stage_fill(struct netd_link *l)
{
    if (l->s_beg == l->s_end) {
        l->s_beg = l->s_end = 0;
    } else if (l->s_beg > 0) {
        memmove(l->stage, l->stage + l->s_beg, l->s_end - l->s_beg);
        l->s_end -= l->s_beg;
        l->s_beg = 0;
    }
    ssize_t r = rx_read(l, l->stage + l->s_end, NETD_STAGE - l->s_end);
    if (r > 0) l->s_end += (size_t)r;
    return r;
}

/* Queues an acknowledgement of every frame up to seq: written at once when nothing waits,
 * else right behind the frame being written (frames are independent on the wire).  Caller
 * holds rx_mu.  Out of memory it is skipped: a later one covers it. */
static void ack_send(struct netd_link *l, uint64_t seq)
{
    struct netd *n = l->n;
    l->rx_unacked = 0;
    l->rx_unacked_bytes = 0;
    struct netd_out *o = calloc(1, sizeof *o);
    if (!o) return;
    struct netd_hdr h = {.channel = TMPI_CH_P2P, .flags = NETD_F_ACK, .seq = seq};
    netd_hdr_encode(&h, o->hdr);
    o->ctl = 1;
    pthread_mutex_lock(&l->mu);
    if (l->failed || l->broken) { /* a reattach acknowledges anew */
        pthread_mutex_unlock(&l->mu);
        free(o);
        return;
    }
    if (!l->qhead) {
        int rc = out_write(l->fd, o);
        if (rc == 1) {
            pthread_mutex_unlock(&l->mu);
            free(o);
            return;
        }
        if (rc < 0) write_broke_locked(l);
        l->qhead = l->qtail = o;
        if (!l->broken) event_add(l->wev, NULL);
    } else {
        o->next = l->qhead->next;
        l->qhead->next = o;
        if (l->qtail == l->qhead) l->qtail = o;
    }
    atomic_fetch_add_explicit(&n->queued_now, NETD_HDR_SIZE - o->done, memory_order_relaxed);
    pthread_mutex_unlock(&l->mu);
}

/* The peer acknowledged every frame up to seq: their copies go, their deferred dones run.
 * Caller holds rx_mu (not mu). */
static void ack_take(struct netd_link *l, uint64_t seq)
{
    struct netd_out *fin = NULL, **tail = &fin;
    pthread_mutex_lock(&l->mu);
    if (l->await_peer) { /* the peer's first bytes on a new socket: our turn to write */
        l->await_peer = 0;
        l->broken = 0;
        if (l->qhead) event_add(l->wev, NULL);
    }
    int rejoined = l->rejoin_wait;
    l->rejoin_wait = 0;
    if (seq > l->peer_acked && seq <= l->tx_seq) l->peer_acked = seq;
    while (l->sent_head && l->sent_head->seq <= l->peer_acked) {
        struct netd_out *o = l->sent_head;
        l->sent_head = o->next;
        if (!l->sent_head) l->sent_tail = NULL;
        if (o->copy) atomic_fetch_sub_explicit(&l->copied, o->len, memory_order_relaxed);
        o->next = NULL;
        *tail = o;
        tail = &o->next;
    }
    pthread_mutex_unlock(&l->mu);
    complete_all(l->n, fin, 0);
    if (rejoined && l->ops->on_rejoin) l->ops->on_rejoin(l->arg, l);
}

static void frame_complete(struct netd_link *l)
{
    l->rx = RX_HEADER;
    if (l->dup) { /* a repeat of a frame delivered before the reattach */
        l->dup = 0;
        return;
    }
    atomic_fetch_add_explicit(&l->n->frames_received, 1, memory_order_relaxed);
    l->burst++;
    l->ops->on_frame(l->arg, l, &l->h, l->ctx);
    if (!l->resend || l->free_asked) return;
    l->rx_unacked++;
    l->rx_unacked_bytes += l->h.payload_len;
    if ((l->h.flags & NETD_F_ACKREQ) || l->rx_unacked >= NETD_ACK_EVERY ||
        l->rx_unacked_bytes >= NETD_ACK_BYTES)
        ack_send(l, l->rx_seq);
}

/* A header of a resending link after a reattach (caller holds rx_mu): 1 if it is a repeat of a
 * frame already delivered, whose payload is read and dropped; 0 if it is new. */
static int rx_repeat(struct netd_link *l)
{
    if (!l->resync || l->h.seq > l->rx_seq) return 0;
    atomic_fetch_add_explicit(&l->n->duplicates, 1, memory_order_relaxed);
    l->dup = 1;
    l->pbuf = NULL;
    l->pgot = 0;
    if (l->h.payload_len == 0)
        frame_complete(l);
    else
        l->rx = RX_PAYLOAD;
    return 1;
}

/* One step of the receive machine.  1: progress, 0: would block, < 0: link error. */
static int rx_step(struct netd_link *l)
{
    if (l->rx == RX_HEADER) {
        if (l->s_end - l->s_beg < NETD_HDR_SIZE) {
            ssize_t r = stage_fill(l);
            return r < 0 ? (int)r : r > 0;
        }
        int rc = netd_hdr_decode(l->stage + l->s_beg, l->n->max_payload, &l->h);
        if (rc < 0) return rc;
        if (l->h.flags & NETD_F_ACK) { /* outside the numbering */
            l->s_beg += NETD_HDR_SIZE;
            if (l->h.flags & NETD_F_BYE)
                l->peer_bye = 1;
            else if (l->resend)
                ack_take(l, l->h.seq);
            return 1;
        }
        l->s_beg += NETD_HDR_SIZE;
        if (rx_repeat(l)) return 1;
        if (l->h.seq != l->rx_seq + 1) return -EPROTO; /* a frame lost, repeated or forged */
        l->rx_seq++;
        l->resync = 0;
        l->pgot = 0;
        if (l->partial) {
            /* the frame cut by the break, again: into the buffer on_header gave it then */
            l->partial = 0;
            if (l->h.payload_len != l->partial_len) return -EPROTO;
            l->pbuf = l->partial_buf;
            l->ctx = l->partial_ctx;
            l->rx = RX_PAYLOAD;
            return 1;
        }
        l->ctx = NULL;
        l->pbuf = l->ops->on_header(l->arg, l, &l->h, &l->ctx);
        if (l->free_asked) return 1;
        if (l->h.payload_len == 0) {
            frame_complete(l);
            return 1;
        }
        l->rx = RX_PAYLOAD;
        return 1;
    }
    size_t want = l->h.payload_len - l->pgot;
    size_t have = l->s_end - l->s_beg;
    if (have) {
        size_t take = have < want ? have : want;
        if (l->pbuf) memcpy(l->pbuf + l->pgot, l->stage + l->s_beg, take);
        l->s_beg += take;
        l->pgot += take;
    } else if (l->pbuf && want >= NETD_DIRECT) {
        ssize_t r = rx_read(l, l->pbuf + l->pgot, want);
        if (r <= 0) return (int)r;
        l->pgot += (size_t)r;
    } else {
        ssize_t r = stage_fill(l);
        if (r <= 0) return (int)r;
    }
    if (l->pgot == l->h.payload_len) frame_complete(l);
    return 1;
}

/* Moves a broken resending link's frames back into the queue (caller holds mu): every frame
 * not acknowledged is written again, in number order, on the next socket; the frame being
 * written starts over; acknowledgements queued for the old socket go. */
static void break_locked(struct netd_link *l)
{
    struct netd *n = l->n;
    l->broken = 1;
    l->await_peer = 0;
    struct netd_out *keep = NULL, **kt = &keep;
    for (struct netd_out *o = l->qhead, *next; o; o = next) {
        next = o->next;
        atomic_fetch_add_explicit(&n->queued_now, o->done, memory_order_relaxed);
        o->done = 0;
        if (o->ctl) {
            atomic_fetch_sub_explicit(&n->queued_now, NETD_HDR_SIZE, memory_order_relaxed);
            free(o);
            continue;
        }
        *kt = o;
        kt = &o->next;
    }
    *kt = NULL;
    uint64_t again = 0;
    for (struct netd_out *o = l->sent_head; o; o = o->next) {
        o->done = 0;
        atomic_fetch_add_explicit(&n->queued_now, NETD_HDR_SIZE + o->len, memory_order_relaxed);
        again++;
    }
    atomic_fetch_add_explicit(&n->resent, again, memory_order_relaxed);
    if (l->sent_head) {
        l->sent_tail->next = keep;
        keep = l->sent_head;
    }
    l->sent_head = l->sent_tail = NULL;
    l->qhead = keep;
    l->qtail = NULL;
    for (struct netd_out *o = keep; o; o = o->next)
        l->qtail = o;
}

/* The receive half of a break (caller holds rx_mu): what was staged of the old stream goes; a
 * frame cut in its payload keeps its buffer for its repeat and is not counted as received. */
static void rx_break(struct netd_link *l)
{
    if (l->rx == RX_PAYLOAD && !l->dup) {
        l->partial = 1;
        l->partial_len = l->h.payload_len;
        l->partial_buf = l->pbuf;
        l->partial_ctx = l->ctx;
        l->rx_seq--;
    }
    l->dup = 0;
    l->rx = RX_HEADER;
    l->s_beg = l->s_end = 0;
    l->rx_broken = 1;
    l->rx_unacked = 0;
    l->rx_unacked_bytes = 0;
    atomic_fetch_add_explicit(&l->n->breaks, 1, memory_order_relaxed);
}

/* The socket of l failed with err (caller holds rx_mu): 0 if the link waits for a new one
 * (on_break said so), -1 if it fails. */
static int link_break(struct netd_link *l, int err)
{
    if (!l->resend || l->peer_bye || err == -EPROTO || err == -EMSGSIZE) return -1;
    event_del(l->rev);
    pthread_mutex_lock(&l->mu);
    if (l->failed) {
        pthread_mutex_unlock(&l->mu);
        return -1;
    }
    break_locked(l);
    pthread_mutex_unlock(&l->mu);
    event_del(l->wev); /* not under mu, as in link_error */
    rx_break(l);
    return l->ops->on_break(l->arg, l, err) == 0 ? 0 : -1;
}

/* Runs the receive machine for up to NETD_BUDGET frames; the caller holds rx_mu.  Returns 1
 * if bytes may remain staged (budget used up), and tells through *destroy whether the link
 * was freed from one of the callbacks (the caller destroys it after dropping rx_mu). */
static int rx_run(struct netd_link *l, int polling, int *destroy)
{
    int rc = 1, more = 0;
    atomic_store_explicit(&l->rx_owner, (uintptr_t)pthread_self(), memory_order_relaxed);
    l->in_cb++;
    l->burst = 0;
    l->rx_drained = 0;
    l->rx_polling = polling;
    while (!l->free_asked && !l->error_told && !l->rx_broken) {
        rc = rx_step(l);
        if (rc <= 0) break;
        if (l->burst >= NETD_BUDGET) {
            more = 1;
            break;
        }
    }
    if (rc < 0 && !l->free_asked && !l->rx_broken && link_break(l, rc) < 0) link_error(l, rc);
    l->in_cb--;
    atomic_store_explicit(&l->rx_owner, 0, memory_order_relaxed);
    *destroy = l->free_asked;
    return more && !*destroy;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    struct netd_link *l = arg;
    /* The event is edge-triggered, so a poller holding the link cannot make us spin: we leave
     * a note instead, and the poller reads again after it lets go (netd_link_poll).  The note
     * goes first: if the poller lets go after our trylock failed, it will see it. */
    atomic_store_explicit(&l->rx_pending, 1, memory_order_seq_cst);
    if (pthread_mutex_trylock(&l->rx_mu) != 0) return;
    atomic_store_explicit(&l->rx_pending, 0, memory_order_relaxed);
    size_t before = l->rx_bytes;
    int destroy, more = rx_run(l, 0, &destroy);
    int read = l->rx_bytes != before;
    pthread_mutex_unlock(&l->rx_mu);
    if (read) atomic_fetch_add_explicit(&l->d->reads, 1, memory_order_relaxed);
    if (destroy) {
        link_destroy(l);
        return;
    }
    /* Staged bytes do not make the socket readable again: come back explicitly. */
    if (more) event_active(l->rev, EV_READ, 0);
}

/* 1 if a poller can skip this link's read: nothing staged would let the machine move and the
 * socket's receive queue and backlog are empty.  recv on an empty TCP socket takes the socket
 * lock, which the sender's softirq needs to queue the very bytes being waited for (perf: 7 %
 * of a spinning rank's cycles in lock_sock); SO_MEMINFO reads the queue sizes without it,
 * as epoll readiness does for Open MPI and MPICH, which a raised low-water mark (netd_link_hold)
 * rules out here.  Caller holds rx_mu. */
static int rx_idle(struct netd_link *l)
{
    size_t have = l->s_end - l->s_beg;
    if (l->no_probe || (l->rx == RX_HEADER ? have >= NETD_HDR_SIZE : have > 0)) return 0;
    uint32_t mi[SK_MEMINFO_VARS];
    socklen_t ml = sizeof mi;
    if (getsockopt(l->fd, SOL_SOCKET, SO_MEMINFO, mi, &ml) < 0 || ml < sizeof mi) {
        l->no_probe = 1;
        return 0;
    }
    return mi[SK_MEMINFO_RMEM_ALLOC] == 0 && mi[SK_MEMINFO_BACKLOG] == 0;
}

int netd_link_poll(struct netd_link *l)
{
    int moved = 0;
    /* A large send that did not fit the socket is queued: a rank waiting for it to leave
     * pushes it on instead of waking the daemon for every drained socket buffer. */
    if (pthread_mutex_trylock(&l->mu) == 0) {
        struct netd_out *done = NULL, *failed = NULL;
        if (l->qhead && flush_locked(l, &done, &failed)) moved = 1;
        pthread_mutex_unlock(&l->mu);
        complete_all(l->n, done, 0);
        complete_all(l->n, failed, -EPIPE);
    }
    /* A link that stayed empty for a while (a job's collective channel during point-to-point
     * traffic) is read on every NETD_QUIET_EVERY-th poll only: each read of an empty socket
     * is a system call in the poller's spin.  Bytes on it wait a few polls at most. */
    unsigned quiet = atomic_load_explicit(&l->quiet_polls, memory_order_relaxed);
    if (quiet >= NETD_QUIET_AFTER &&
        atomic_fetch_add_explicit(&l->poll_tick, 1, memory_order_relaxed) % NETD_QUIET_EVERY)
        return moved;
    int got = 0, told = 0;
    for (;;) {
        if (pthread_mutex_trylock(&l->rx_mu) != 0) return moved; /* the reader reads */
        if (l->error_told || l->free_asked || l->rx_broken) {
            pthread_mutex_unlock(&l->rx_mu);
            return moved;
        }
        /* After a note from the daemon, read for real: what it saw may be an end of stream
         * or an error, which the probe does not show. */
        int destroy = 0, more = 0;
        if (told || !rx_idle(l)) {
            size_t before = l->rx_bytes;
            more = rx_run(l, 1, &destroy);
            moved += (int)l->burst;
            if (!l->burst && l->rx_bytes != before) moved++; /* part of a frame */
            got |= l->rx_bytes != before;
        }
        pthread_mutex_unlock(&l->rx_mu);
        atomic_store_explicit(&l->quiet_polls, got ? 0 : quiet + (quiet < NETD_QUIET_AFTER),
                              memory_order_relaxed);
        if (destroy) {
            link_destroy(l);
            return moved;
        }
        if (more) {
            event_active(l->rev, EV_READ, 0);
            return moved;
        }
        /* Bytes that arrived while we held the link were announced to the daemon, which
         * found it taken: they are ours to read. */
        if (!atomic_exchange_explicit(&l->rx_pending, 0, memory_order_seq_cst)) return moved;
        told = 1;
    }
}

int netd_link_new(struct netd *n, int fd, const struct netd_ops *ops, void *arg, int paused,
                  struct netd_link **ret)
{
    struct netd_link *l = calloc(1, sizeof *l);
    int rc = -ENOMEM;
    if (!l) goto fail_fd;
    l->stage = malloc(NETD_STAGE);
    if (!l->stage) goto fail_link;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        rc = -errno;
        goto fail_link;
    }
    int one = 1; /* a header alone must not wait for more bytes (Nagle) */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    l->n = n;
    l->fd = fd;
    l->ops = ops;
    l->arg = arg;
    l->resend = ops->on_break != NULL;
    l->resend_max = atomic_load_explicit(&n->resend_max, memory_order_relaxed);
    l->reading = !paused;
    l->d = &n->d[atomic_fetch_add_explicit(&n->next, 1, memory_order_relaxed) % n->nthreads];
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->rx_mu, NULL);
    pthread_mutex_init(&l->hold_mu, NULL);
    l->rev = event_new(l->d->base, fd, EV_READ | EV_PERSIST | EV_ET, on_readable, l);
    l->wev = event_new(l->d->base, fd, EV_WRITE | EV_PERSIST, on_writable, l);
    if (!l->rev || !l->wev) {
        if (l->rev) event_free(l->rev);
        if (l->wev) event_free(l->wev);
        pthread_mutex_destroy(&l->mu);
        pthread_mutex_destroy(&l->rx_mu);
        pthread_mutex_destroy(&l->hold_mu);
        goto fail_link;
    }
    if (!paused) event_add(l->rev, NULL);
    atomic_fetch_add_explicit(&n->links, 1, memory_order_relaxed);
    *ret = l;
    return 0;
fail_link:
    if (l) free(l->stage);
    free(l);
fail_fd:
    close(fd);
    return rc;
}

/* While ranks spin on a link they read it themselves; a daemon woken for every arrival would
 * only take a core from them (one context switch per message).  The socket's receive low-water
 * mark keeps epoll quiet meanwhile: TCP does not signal readiness below it.
 *
 * When the last holder stops, the mark stays raised for NETD_LINGER_NS at least: a rank that
 * returns from one wait usually starts the next within microseconds, and raising and lowering
 * the mark around every wait cost four system calls per message, on the latency path (8 B
 * ping-pong across two agents).  The daemon's tick lowers it after that (lowering it makes TCP
 * signal bytes already waiting), and a rank about to wait without reading (yielding or asleep)
 * lowers it at once (netd_link_release).
 *
 * The tick runs while any mark of the daemon's links is up, and only a mark going up arms it
 * (rare: the first wait after a quiet spell).  It used to be armed by the end of every wait and
 * dropped by the next tick that found the link held: during a stream of 1 MiB messages that was
 * two daemon wake-ups per millisecond (the arming's write to the daemon's eventfd, then the
 * timer), each taking a core from a spinning rank (docs/bench/ANALYSIS.md, issue 20).  Its
 * period doubles from NETD_TICK_US up to NETD_TICK_MAX_US while the list stays non-empty: a
 * busy link costs the daemon one wake-up every few milliseconds, and a link whose ranks went
 * off to compute is read by the daemon again within NETD_TICK_MAX_US + NETD_LINGER_NS (a tick
 * that comes sooner would only help a rank that stopped right after the previous one). */
#define NETD_HOLD_LOWAT (1 << 30)
#define NETD_LINGER_NS 200000
#define NETD_TICK_US 250
#define NETD_TICK_MAX_US 4000

/* Raises or lowers the mark (caller holds hold_mu).  1 if it changed. */
static int lowat_set(struct netd_link *l, int high)
{
    if (l->lowat_high == high) return 0;
    int v = high ? NETD_HOLD_LOWAT : 1;
    setsockopt(l->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v);
    l->lowat_high = high;
    return 1;
}

/* Arms the tick (caller holds linger_mu): 0, or -1 when it could not (out of memory). */
static int tick_arm(struct netd_daemon *d, unsigned us)
{
    struct timeval tv = {0, (suseconds_t)us};
    d->tick_us = us;
    if (event_add(d->linger_ev, &tv) < 0) return -1;
    d->linger_armed = 1;
    return 0;
}

/* Lowers the mark now, and has the daemon read what came in while it was up (TCP may not
 * signal bytes that arrived below the old mark). */
static void mark_down(struct netd_link *l)
{
    pthread_mutex_lock(&l->hold_mu);
    int lowered = lowat_set(l, 0);
    pthread_mutex_unlock(&l->hold_mu);
    if (lowered) event_active(l->rev, EV_READ, 0);
}

/* A mark went up: the link goes on the tick's list.  Without a tick (out of memory) the mark
 * comes down again, so that nothing waits for a tick that never comes; the holders then read
 * beside a daemon that is woken for arrivals. */
static void linger_add(struct netd_link *l)
{
    struct netd_daemon *d = l->d;
    pthread_mutex_lock(&d->linger_mu);
    if (!l->lingering) {
        l->lingering = 1;
        l->linger_next = d->linger;
        d->linger = l;
    }
    int failed = !d->linger_armed && tick_arm(d, NETD_TICK_US) < 0;
    pthread_mutex_unlock(&d->linger_mu);
    if (failed) mark_down(l);
}

static void linger_remove(struct netd_link *l)
{
    struct netd_daemon *d = l->d;
    pthread_mutex_lock(&d->linger_mu);
    for (struct netd_link **pp = &d->linger; l->lingering && *pp; pp = &(*pp)->linger_next)
        if (*pp == l) {
            *pp = l->linger_next;
            l->lingering = 0;
            break;
        }
    pthread_mutex_unlock(&d->linger_mu);
}

static void on_linger_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    struct netd_daemon *d = arg;
    uint64_t now = mono_ns();
    pthread_mutex_lock(&d->linger_mu);
    struct netd_link **pp = &d->linger;
    while (*pp) {
        struct netd_link *l = *pp;
        int keep = 0, lowered = 0;
        pthread_mutex_lock(&l->hold_mu);
        if (!l->lowat_high) {
            /* lowered by netd_link_release: nothing left to do */
        } else if (atomic_load_explicit(&l->pollers, memory_order_acquire) > 0 ||
                   now - atomic_load_explicit(&l->released_ns, memory_order_relaxed) <
                       NETD_LINGER_NS) {
            keep = 1;
        } else {
            lowered = lowat_set(l, 0);
        }
        pthread_mutex_unlock(&l->hold_mu);
        if (lowered) event_active(l->rev, EV_READ, 0); /* in case TCP said nothing */
        if (keep) {
            pp = &l->linger_next;
        } else {
            *pp = l->linger_next;
            l->lingering = 0;
        }
    }
    /* Under linger_mu: a mark that goes up after this finds the tick disarmed and arms it. */
    d->linger_armed = 0;
    if (d->linger) {
        unsigned us = 2 * d->tick_us;
        if (tick_arm(d, us > NETD_TICK_MAX_US ? NETD_TICK_MAX_US : us) < 0) {
            /* no tick any more (out of memory): every mark comes down now */
            for (struct netd_link *l = d->linger; l; l = l->linger_next) {
                mark_down(l);
                l->lingering = 0;
            }
            d->linger = NULL;
        }
    }
    pthread_mutex_unlock(&d->linger_mu);
}

void netd_link_hold(struct netd_link *l, int on)
{
    if (on) {
        if (atomic_fetch_add_explicit(&l->pollers, 1, memory_order_seq_cst) == 0) {
            pthread_mutex_lock(&l->hold_mu);
            int raised =
                atomic_load_explicit(&l->pollers, memory_order_acquire) > 0 && lowat_set(l, 1);
            pthread_mutex_unlock(&l->hold_mu);
            if (raised) linger_add(l);
        }
        return;
    }
    /* The mark stays up; the tick, armed since it went up, lowers it once this is old enough. */
    atomic_store_explicit(&l->released_ns, mono_ns(), memory_order_relaxed);
    atomic_fetch_sub_explicit(&l->pollers, 1, memory_order_seq_cst);
}

void netd_link_release(struct netd_link *l)
{
    pthread_mutex_lock(&l->hold_mu);
    int lowered = atomic_load_explicit(&l->pollers, memory_order_seq_cst) == 0 && lowat_set(l, 0);
    pthread_mutex_unlock(&l->hold_mu);
    /* Bytes that came in while the mark was up: read them now rather than rely on TCP. */
    if (lowered) netd_link_poll(l);
}

void netd_link_drain(struct netd_link *l)
{
    if (atomic_load_explicit(&l->rx_owner, memory_order_relaxed) == (uintptr_t)pthread_self())
        return; /* called from this link's own callback: nothing else is running */
    pthread_mutex_lock(&l->rx_mu);
    pthread_mutex_unlock(&l->rx_mu);
}

void netd_link_resume(struct netd_link *l)
{
    pthread_mutex_lock(&l->mu);
    l->reading = 1;
    int broken = l->broken;
    pthread_mutex_unlock(&l->mu);
    if (!broken) event_add(l->rev, NULL);
}

void netd_set_resend_max(struct netd *n, size_t bytes)
{
    atomic_store_explicit(&n->resend_max, bytes, memory_order_relaxed);
}

int netd_link_reattach(struct netd_link *l, int fd, int wait_peer)
{
    struct netd *n = l->n;
    if (!l->resend) {
        close(fd);
        return -EINVAL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct netd_out *ack = calloc(1, sizeof *ack);
    if (!ack) {
        close(fd);
        return -ENOMEM;
    }
    ack->ctl = 1;
    /* No receive machine runs while we hold rx_mu, and none starts: rx_broken stays set until
     * the new socket is in place. */
    pthread_mutex_lock(&l->rx_mu);
    if (!l->rx_broken) {
        /* the peer saw the break first: the old socket goes as if it broke here */
        event_del(l->rev);
        pthread_mutex_lock(&l->mu);
        int failed = l->failed;
        if (!failed) break_locked(l);
        pthread_mutex_unlock(&l->mu);
        event_del(l->wev);
        if (failed) {
            pthread_mutex_unlock(&l->rx_mu);
            free(ack);
            close(fd);
            return -EPIPE;
        }
        rx_break(l);
    }
    /* The same descriptor number, now the new socket: events and pollers keep using l->fd. */
    if (dup2(fd, l->fd) < 0) {
        int err = -errno;
        pthread_mutex_unlock(&l->rx_mu);
        free(ack);
        close(fd);
        return err;
    }
    close(fd);
    pthread_mutex_lock(&l->hold_mu);
    l->lowat_high = 0; /* the new socket's mark is the default */
    pthread_mutex_unlock(&l->hold_mu);
    l->rx_broken = 0;
    l->resync = 1;
    l->no_probe = 0;
    struct netd_hdr h = {.channel = TMPI_CH_P2P, .flags = NETD_F_ACK, .seq = l->rx_seq};
    netd_hdr_encode(&h, ack->hdr);
    pthread_mutex_lock(&l->mu);
    int failed = l->failed;
    if (!failed) {
        /* our acknowledgement first: the peer drops what we have before it resends */
        ack->next = l->qhead;
        l->qhead = ack;
        if (!l->qtail) l->qtail = ack;
        atomic_fetch_add_explicit(&n->queued_now, NETD_HDR_SIZE, memory_order_relaxed);
        l->rejoin_wait = 1;
        if (wait_peer) {
            l->await_peer = 1; /* broken stays set: nothing is written until then */
        } else {
            l->broken = 0;
            event_add(l->wev, NULL);
        }
    }
    int reading = l->reading;
    pthread_mutex_unlock(&l->mu);
    pthread_mutex_unlock(&l->rx_mu);
    if (failed) {
        free(ack);
        return -EPIPE;
    }
    atomic_fetch_add_explicit(&n->reattached, 1, memory_order_relaxed);
    if (reading) {
        event_add(l->rev, NULL);
        event_active(l->rev, EV_READ, 0);
    }
    return 0;
}

static void link_destroy(struct netd_link *l)
{
    linger_remove(l);
    event_free(l->rev);
    event_free(l->wev);
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->rx_mu);
    pthread_mutex_destroy(&l->hold_mu);
    close(l->fd);
    free(l->stage);
    free(l);
}

void netd_link_free(struct netd_link *l)
{
    if (!l) return;
    pthread_mutex_lock(&l->mu);
    if (l->resend && !l->broken && !l->failed && !l->qhead) {
        /* Best effort, between frames: the peer takes our end of stream for a close, not a
         * break it should reconnect (a full socket means a peer not reading anyway). */
        uint8_t bye[NETD_HDR_SIZE];
        struct netd_hdr h = {.channel = TMPI_CH_P2P, .flags = NETD_F_ACK | NETD_F_BYE};
        netd_hdr_encode(&h, bye);
        (void)send(l->fd, bye, sizeof bye, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    struct netd_out *q = fail_locked(l);
    pthread_mutex_unlock(&l->mu);
    /* From another thread, event_del waits for a running callback of the event to return
     * (libevent with threads), so nothing of the link runs once we are past it. */
    event_del(l->rev);
    event_del(l->wev);
    shutdown(l->fd, SHUT_RDWR);
    complete_all(l->n, q, -ECANCELED);
    uintptr_t self = (uintptr_t)pthread_self();
    if ((pthread_equal(pthread_self(), l->d->thread) && l->wr_in_cb) ||
        atomic_load_explicit(&l->rx_owner, memory_order_relaxed) == self) {
        l->free_asked = 1; /* the callback on our stack finishes the job */
        return;
    }
    /* A rank thread may be polling the link: wait until it is out. */
    pthread_mutex_lock(&l->rx_mu);
    pthread_mutex_unlock(&l->rx_mu);
    link_destroy(l);
}

void netd_get_stats(struct netd *n, struct netd_stats *s)
{
    s->frames_sent = atomic_load_explicit(&n->frames_sent, memory_order_relaxed);
    s->bytes_sent = atomic_load_explicit(&n->bytes_sent, memory_order_relaxed);
    s->frames_received = atomic_load_explicit(&n->frames_received, memory_order_relaxed);
    s->bytes_received = atomic_load_explicit(&n->bytes_received, memory_order_relaxed);
    s->links = atomic_load_explicit(&n->links, memory_order_relaxed);
    s->link_errors = atomic_load_explicit(&n->link_errors, memory_order_relaxed);
    s->queued_now = atomic_load_explicit(&n->queued_now, memory_order_relaxed);
    s->breaks = atomic_load_explicit(&n->breaks, memory_order_relaxed);
    s->reattached = atomic_load_explicit(&n->reattached, memory_order_relaxed);
    s->resent = atomic_load_explicit(&n->resent, memory_order_relaxed);
    s->duplicates = atomic_load_explicit(&n->duplicates, memory_order_relaxed);
    s->sleeps = s->spin_polls = 0;
    for (unsigned i = 0; i < n->nthreads; i++) {
        s->sleeps += atomic_load_explicit(&n->d[i].sleeps, memory_order_relaxed);
        s->spin_polls += atomic_load_explicit(&n->d[i].spin_polls, memory_order_relaxed);
    }
}
