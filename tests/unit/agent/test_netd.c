/* netd: frames over real loopback TCP between two links — order and content under concurrent
 * senders, payloads larger than the socket buffers in both directions at once (the queue and
 * the daemons' non-blocking writes), dropped payloads, paused links, and every failure path: bad
 * header, oversized payload, peer gone, link freed from its own callback and from outside; the
 * daemons' spin after a read. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "netd.h"

#define SENDERS 4
#define PER_SENDER 1500
#define BIG (16u << 20)

/* Connected TCP sockets over loopback. */
static void tcp_pair(int fd[2])
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(ls >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    CHECK_EQ(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(listen(ls, 1), 0);
    CHECK_EQ(getsockname(ls, (struct sockaddr *)&a, &al), 0);
    fd[0] = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_EQ(connect(fd[0], (struct sockaddr *)&a, sizeof a), 0);
    fd[1] = accept(ls, NULL, NULL);
    CHECK(fd[1] >= 0);
    close(ls);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Waits up to 20 s for *v to reach want. */
static void wait_for(atomic_int *v, int want)
{
    for (int i = 0; i < 20000 && atomic_load(v) < want; i++)
        sleep_ms(1);
    CHECK_EQ(atomic_load(v), want);
}

static uint8_t pattern(int sender, int seq, size_t i)
{
    return (uint8_t)(sender * 31 + seq * 7 + i * 13);
}

static size_t size_of(int sender, int seq)
{
    static const size_t sizes[] = {0, 1, 7, 48, 100, 4096, 8191, 8192, 65536, 100000};
    return sizes[(sender + seq) % 10];
}

/* ---- receiver that checks order and content ---- */

struct rx {
    int next[SENDERS];
    atomic_int frames;
    atomic_int errors;
    atomic_int bad;
    int last_error;
    int drop_every;                     /* drop the payload of every Nth frame (0: never) */
    struct netd_link *free_me_on_frame; /* link to free from inside on_frame */
    atomic_int big_ok;
    atomic_int breaks;  /* on_break calls (resending links) */
    atomic_int rejoins; /* on_rejoin calls */
    void *inflight;     /* payload buffer of a frame not complete yet (callbacks are serial) */
};

/* The test's own protocol half (netd carries it opaquely): the frame's index q in its
 * sender's stream, in the first 4 bytes. */
static void set_q(struct netd_hdr *h, int q)
{
    memcpy(h->proto, &q, sizeof q);
}

static int get_q(const struct netd_hdr *h)
{
    int q;
    memcpy(&q, h->proto, sizeof q);
    return q;
}

static void *rx_header(void *arg, struct netd_link *l, const struct netd_hdr *h, void **ctx)
{
    (void)l;
    struct rx *r = arg;
    if (r->drop_every && (unsigned)get_q(h) % (unsigned)r->drop_every == 0) return NULL;
    void *buf = h->payload_len ? malloc(h->payload_len) : NULL;
    *ctx = buf;
    r->inflight = buf;
    return buf;
}

static void rx_frame(void *arg, struct netd_link *l, const struct netd_hdr *h, void *ctx)
{
    struct rx *r = arg;
    uint8_t *p = ctx;
    r->inflight = NULL;
    if (h->payload_len == BIG) {
        int ok = 1;
        for (size_t i = 0; i < BIG; i += 4099)
            ok &= p[i] == (uint8_t)(i * 5);
        atomic_fetch_add(&r->big_ok, ok);
    } else {
        int s = h->src_rank, q = get_q(h);
        if (s < 0 || s >= SENDERS || q != r->next[s] || h->payload_len != size_of(s, q))
            atomic_fetch_add(&r->bad, 1);
        else
            r->next[s]++;
        if (p)
            for (size_t i = 0; i < h->payload_len; i++)
                if (p[i] != pattern(s, q, i)) {
                    atomic_fetch_add(&r->bad, 1);
                    break;
                }
    }
    free(p);
    /* before the count: a test waiting for it may return and reuse r's stack (TSan) */
    if (r->free_me_on_frame == l) {
        r->free_me_on_frame = NULL;
        netd_link_free(l);
    }
    atomic_fetch_add(&r->frames, 1);
}

static void rx_error(void *arg, struct netd_link *l, int err)
{
    (void)l;
    struct rx *r = arg;
    r->last_error = err;
    atomic_fetch_add(&r->errors, 1);
}

static const struct netd_ops rx_ops = {rx_header, rx_frame, rx_error, NULL, NULL};

static int rx_break(void *arg, struct netd_link *l, int err)
{
    (void)l, (void)err;
    atomic_fetch_add(&((struct rx *)arg)->breaks, 1);
    return 0; /* the test brings a new socket */
}

static void rx_rejoin(void *arg, struct netd_link *l)
{
    (void)l;
    atomic_fetch_add(&((struct rx *)arg)->rejoins, 1);
}

static const struct netd_ops resend_ops = {rx_header, rx_frame, rx_error, rx_break, rx_rejoin};

/* Two links joined over loopback TCP: *la delivers to a, *lb to b (paused if b_paused). */
static void link_pair(struct netd *n, struct rx *a, struct rx *b, int b_paused,
                      struct netd_link **la, struct netd_link **lb)
{
    int fd[2];
    tcp_pair(fd);
    CHECK_EQ(netd_link_new(n, fd[0], &rx_ops, a, 0, la), 0);
    CHECK_EQ(netd_link_new(n, fd[1], &rx_ops, b, b_paused, lb), 0);
}

/* ---- concurrent senders ---- */

struct sender {
    struct netd_link *l;
    int id;
    atomic_int *done_calls;
    int tolerant; /* the peer goes away meanwhile: failures are expected */
    uint8_t *bufs[PER_SENDER];
};

static void count_any(void *arg, int err)
{
    (void)err;
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void count_done(void *arg, int err)
{
    CHECK_EQ(err, 0);
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void *sender_main(void *arg)
{
    struct sender *s = arg;
    for (int q = 0; q < PER_SENDER; q++) {
        size_t n = size_of(s->id, q);
        s->bufs[q] = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
            s->bufs[q][i] = pattern(s->id, q, i);
        struct netd_hdr h = {.channel = TMPI_CH_P2P, .payload_len = (uint32_t)n, .src_rank = s->id};
        set_q(&h, q);
        int rc =
            netd_send(s->l, &h, 0, s->bufs[q], s->tolerant ? count_any : count_done, s->done_calls);
        if (s->tolerant && rc == -EPIPE) continue;
        CHECK_EQ(rc, 0);
    }
    return NULL;
}

/* Rank threads that read a link themselves while they wait (netd_link_poll), racing the
 * daemon: every frame must still be handled exactly once, in order. */
struct poller {
    struct netd_link *l;
    atomic_int *stop;
    long frames;
};

static void *poller_main(void *arg)
{
    struct poller *p = arg;
    while (!atomic_load(p->stop))
        p->frames += netd_link_poll(p->l);
    return NULL;
}

static void test_order_and_content(struct netd *n, int drop_every, int npollers)
{
    struct rx a = {0}, b = {.drop_every = drop_every};
    struct netd_link *la, *lb;
    link_pair(n, &a, &b, 0, &la, &lb);
    atomic_int done_calls = 0, stop = 0;
    struct poller pl[2];
    pthread_t pt[2];
    for (int i = 0; i < npollers; i++) {
        pl[i] = (struct poller){.l = lb, .stop = &stop};
        CHECK_EQ(pthread_create(&pt[i], NULL, poller_main, &pl[i]), 0);
    }
    struct sender s[SENDERS];
    pthread_t t[SENDERS];
    for (int i = 0; i < SENDERS; i++) {
        s[i] = (struct sender){.l = la, .id = i, .done_calls = &done_calls};
        CHECK_EQ(pthread_create(&t[i], NULL, sender_main, &s[i]), 0);
    }
    for (int i = 0; i < SENDERS; i++)
        pthread_join(t[i], NULL);
    wait_for(&done_calls, SENDERS * PER_SENDER);
    wait_for(&b.frames, SENDERS * PER_SENDER);
    atomic_store(&stop, 1);
    long polled = 0;
    for (int i = 0; i < npollers; i++) {
        pthread_join(pt[i], NULL);
        polled += pl[i].frames;
    }
    /* (netd_link_poll counts a poll that read part of a frame as 1, so this is not a frame
     * count: that every frame came exactly once is checked below, per sender) */
    if (npollers)
        fprintf(stderr, "pollers moved something %ld times for %d frames\n", polled,
                SENDERS * PER_SENDER);
    CHECK_EQ(atomic_load(&b.bad), 0);
    CHECK_EQ(atomic_load(&b.errors), 0);
    for (int i = 0; i < SENDERS; i++) {
        CHECK_EQ(b.next[i], PER_SENDER);
        for (int q = 0; q < PER_SENDER; q++)
            free(s[i].bufs[q]);
    }
    netd_link_free(la);
    netd_link_free(lb);
}

/* Two resending links joined over loopback TCP (*la delivers to a, *lb to b); returns la's
 * descriptor number, which a reattach keeps. */
static int resend_pair(struct netd *n, struct rx *a, struct rx *b, struct netd_link **la,
                       struct netd_link **lb)
{
    int fd[2];
    tcp_pair(fd);
    CHECK_EQ(netd_link_new(n, fd[0], &resend_ops, a, 0, la), 0);
    CHECK_EQ(netd_link_new(n, fd[1], &resend_ops, b, 0, lb), 0);
    return fd[0];
}

/* Both ends push 16 MiB at each other at once: neither caller may block, both must finish. */
/* Resending links: the socket is cut twice under four senders (frames of 0 to 100,000 bytes,
 * so some are cut in their payload and some are kept by reference), once with both ends
 * noticing and once reattached at once, before the receiver may have noticed; every frame
 * arrives once, in order, with its bytes, and every done runs with 0.  A small resend limit
 * makes most frames wait for their acknowledgement (NETD_F_ACKREQ). */
static void test_resend(size_t resend_max)
{
    struct netd *n;
    CHECK_EQ(netd_new(2, 64u << 20, &n), 0);
    netd_set_resend_max(n, resend_max);
    struct rx a = {0}, b = {0};
    struct netd_link *la, *lb;
    int fd[2];
    int a_fd = resend_pair(n, &a, &b, &la, &lb);
    fd[0] = a_fd;
    atomic_int done_calls = 0;
    struct sender snd[SENDERS];
    pthread_t t[SENDERS];
    for (int i = 0; i < SENDERS; i++) {
        snd[i] = (struct sender){.l = la, .id = i, .done_calls = &done_calls};
        CHECK_EQ(pthread_create(&t[i], NULL, sender_main, &snd[i]), 0);
    }
    const int total = SENDERS * PER_SENDER;
    for (int cut = 1; cut <= 2; cut++) {
        for (int i = 0; i < 20000 && atomic_load(&b.frames) < total * cut / 3; i++)
            sleep_ms(1);
        /* what the sender's socket received unread is lost: the receiver's acks, and on the
         * second cut the sender's own bytes still queued */
        CHECK_EQ(shutdown(fd[0], SHUT_RDWR), 0);
        if (cut == 1) {
            for (int i = 0; i < 20000 && (!atomic_load(&a.breaks) || !atomic_load(&b.breaks)); i++)
                sleep_ms(1);
            CHECK(atomic_load(&a.breaks) >= 1 && atomic_load(&b.breaks) >= 1);
        }
        tcp_pair(fd);
        /* the first time la writes only after lb's acknowledgement came (wait_peer) */
        CHECK_EQ(netd_link_reattach(la, fd[0], cut == 1), 0);
        CHECK_EQ(netd_link_reattach(lb, fd[1], 0), 0);
        fd[0] = a_fd; /* the links keep their descriptor numbers, now the new sockets' */
    }
    for (int i = 0; i < SENDERS; i++)
        pthread_join(t[i], NULL);
    wait_for(&done_calls, total);
    wait_for(&b.frames, total);
    CHECK_EQ(atomic_load(&b.bad), 0);
    CHECK_EQ(atomic_load(&b.errors), 0);
    CHECK_EQ(atomic_load(&a.errors), 0);
    for (int i = 0; i < SENDERS; i++) {
        CHECK_EQ(b.next[i], PER_SENDER);
        for (int q = 0; q < PER_SENDER; q++)
            free(snd[i].bufs[q]);
    }
    struct netd_stats st;
    netd_get_stats(n, &st);
    fprintf(stderr, "resend (max %zu): %llu breaks, %llu reattached, %llu resent, %llu repeats\n",
            resend_max, (unsigned long long)st.breaks, (unsigned long long)st.reattached,
            (unsigned long long)st.resent, (unsigned long long)st.duplicates);
    CHECK(st.breaks >= 3 && st.reattached == 4);
    netd_link_free(la);
    netd_link_free(lb);
    netd_free(n);
}

/* on_rejoin tells when the peer answered on the new socket, not when the socket was given: a
 * link reattached to a socket whose other end nobody serves yet (the peer's job process
 * stopped) hears nothing, and both ends hear it once when the peer takes its socket. */
static void test_rejoin(void)
{
    struct netd *n;
    CHECK_EQ(netd_new(1, 1u << 20, &n), 0);
    struct rx a = {0}, b = {0};
    struct netd_link *la, *lb;
    int fd[2] = {resend_pair(n, &a, &b, &la, &lb), -1};
    struct netd_hdr h = {.channel = TMPI_CH_P2P, .src_rank = 0};
    CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
    wait_for(&b.frames, 1);
    CHECK_EQ(shutdown(fd[0], SHUT_RDWR), 0);
    wait_for(&a.breaks, 1);
    wait_for(&b.breaks, 1);
    tcp_pair(fd);
    CHECK_EQ(netd_link_reattach(la, fd[0], 0), 0);
    sleep_ms(200);
    CHECK(atomic_load(&a.rejoins) == 0, "no answer from a peer that has not taken its socket");
    CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
    CHECK_EQ(netd_link_reattach(lb, fd[1], 0), 0);
    wait_for(&a.rejoins, 1);
    wait_for(&b.rejoins, 1);
    wait_for(&b.frames, 2);
    sleep_ms(50);
    CHECK_EQ(atomic_load(&a.rejoins), 1);
    CHECK_EQ(atomic_load(&b.rejoins), 1);
    CHECK_EQ(atomic_load(&b.frames), 2);
    CHECK_EQ(atomic_load(&a.errors) + atomic_load(&b.errors), 0);
    netd_link_free(la);
    netd_link_free(lb);
    netd_free(n);
}

static void test_big_both_ways(struct netd *n)
{
    struct rx a = {0}, b = {0};
    struct netd_link *la, *lb;
    link_pair(n, &a, &b, 0, &la, &lb);
    uint8_t *big = malloc(BIG);
    for (size_t i = 0; i < BIG; i++)
        big[i] = (uint8_t)(i * 5);
    atomic_int done_calls = 0;
    struct netd_hdr h = {.channel = TMPI_CH_COLL, .payload_len = BIG};
    CHECK_EQ(netd_send(la, &h, 0, big, count_done, &done_calls), 0);
    CHECK_EQ(netd_send(lb, &h, 0, big, count_done, &done_calls), 0);
    wait_for(&done_calls, 2);
    wait_for(&a.frames, 1);
    wait_for(&b.frames, 1);
    CHECK_EQ(atomic_load(&a.big_ok) + atomic_load(&b.big_ok), 2);
    struct netd_stats st;
    netd_get_stats(n, &st);
    CHECK_EQ(st.queued_now, 0);
    netd_link_free(la);
    netd_link_free(lb);
    free(big);
}

static void test_paused(struct netd *n)
{
    struct rx b = {0};
    struct rx a = {0};
    struct netd_link *la, *lb;
    link_pair(n, &a, &b, 1, &la, &lb);
    struct netd_hdr h = {.channel = TMPI_CH_P2P, .src_rank = 0};
    CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
    sleep_ms(50);
    CHECK_EQ(atomic_load(&b.frames), 0);
    netd_link_resume(lb);
    wait_for(&b.frames, 1);
    netd_link_free(la);
    netd_link_free(lb);
}

/* A held link (a rank spinning on it): the daemon is not woken, the holder reads; bytes that
 * arrive while held and are never polled stay until the last holder has let go and the link's
 * short quiet time has passed, then the daemon reads them by itself; netd_link_release ends
 * that quiet time at once but never takes the link from a holder; a link freed while quiet
 * leaves nothing behind (ASan). */
static void test_hold(struct netd *n)
{
    struct rx a = {0}, b = {0};
    struct netd_link *la, *lb;
    link_pair(n, &a, &b, 0, &la, &lb);
    struct netd_hdr h = {.channel = TMPI_CH_P2P, .src_rank = 0};
    netd_link_hold(lb, 1);
    netd_link_hold(lb, 1); /* two holders */
    for (int q = 0; q < 50; q++) {
        set_q(&h, q);
        CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
    }
    long got = 0;
    for (int i = 0; i < 20000 && atomic_load(&b.frames) < 50; i++)
        got += netd_link_poll(lb);
    CHECK_EQ(atomic_load(&b.frames), 50);
    CHECK(got >= 1);
    CHECK_EQ(netd_link_poll(lb), 0); /* nothing moved */
    /* one more, never polled: while one holder remains, neither a release nor the daemon's
     * tick takes it; after the last one lets go the daemon reads it */
    set_q(&h, 50);
    CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
    sleep_ms(30);
    netd_link_hold(lb, 0);
    netd_link_release(lb);
    sleep_ms(30);
    CHECK_EQ(atomic_load(&b.frames), 50);
    netd_link_hold(lb, 0);
    wait_for(&b.frames, 51);
    /* released for good: the daemon delivers by itself */
    set_q(&h, 51);
    CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
    wait_for(&b.frames, 52);
    /* hold and stop, then release at once: the frame sent in between is read by the release
     * itself or the daemon, whichever comes first */
    netd_link_hold(lb, 1);
    set_q(&h, 52);
    CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
    sleep_ms(10);
    netd_link_hold(lb, 0);
    netd_link_release(lb);
    wait_for(&b.frames, 53);
    /* freed while quiet: the daemon's tick must not find it any more */
    netd_link_hold(lb, 1);
    netd_link_hold(lb, 0);
    netd_link_free(la);
    netd_link_free(lb);
    sleep_ms(5);
}

/* A poller reads a link that stayed empty for a while (16 polls) only on every 4th poll, and
 * one that just delivered on every poll; a frame on a quiet link waits 4 polls at most. */
static void test_quiet(struct netd *n)
{
    struct rx a = {0}, b = {0};
    struct netd_link *la, *lb;
    link_pair(n, &a, &b, 0, &la, &lb);
    netd_link_hold(lb, 1); /* the daemon leaves it to the poller */
    struct netd_hdr h = {.channel = TMPI_CH_P2P, .src_rank = 0};
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 40; i++)
            CHECK_EQ(netd_link_poll(lb), 0);
        set_q(&h, round);
        CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
        sleep_ms(5); /* on the socket now */
        int polls = 0;
        while (atomic_load(&b.frames) < 2 * round + 1) {
            CHECK(polls < 4);
            netd_link_poll(lb);
            polls++;
        }
        /* busy again: the next frame is read at the first poll */
        set_q(&h, 100 + round);
        CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
        sleep_ms(5);
        CHECK(netd_link_poll(lb) > 0);
        CHECK_EQ(atomic_load(&b.frames), 2 * round + 2);
    }
    netd_link_hold(lb, 0);
    netd_link_free(la);
    netd_link_free(lb);
}

/* A held link whose peer goes away while a rank spins on it, probing the receive queue
 * (SO_MEMINFO) before each read: the end of stream (FIN) and the reset (RST) are reported
 * once, by the poller or the daemon (a reset queues no bytes: only the daemon's event, or its
 * note to the poller, shows it). */
static void test_hold_peer_gone(struct netd *n)
{
    for (int rst = 0; rst < 2; rst++) {
        int fd[2];
        tcp_pair(fd);
        struct rx b = {0};
        struct netd_link *lb;
        CHECK_EQ(netd_link_new(n, fd[1], &rx_ops, &b, 0, &lb), 0);
        netd_link_hold(lb, 1);
        for (int i = 0; i < 100; i++)
            CHECK_EQ(netd_link_poll(lb), 0);
        if (rst) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0};
            CHECK_EQ(setsockopt(fd[0], SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
        }
        close(fd[0]);
        for (int i = 0; i < 20000 && atomic_load(&b.errors) == 0; i++) {
            netd_link_poll(lb);
            if (i % 100 == 99) sleep_ms(1);
        }
        CHECK_EQ(atomic_load(&b.errors), 1);
        CHECK(b.last_error < 0);
        if (!rst) CHECK_EQ(b.last_error, -EPIPE);
        netd_link_hold(lb, 0);
        netd_link_free(lb);
    }
}

/* A peer that sends garbage, or too much, or goes away: on_error once, with the reason.  Kinds
 * 3 and 4: a good frame (number 1), then one numbered 1 again (repeated) or 3 (one lost). */
static void test_errors(struct netd *n)
{
    static const struct {
        int kind;
        int want;
    } cases[] = {{0, -EPROTO}, {1, -EMSGSIZE}, {2, -EPIPE}, {3, -EPROTO}, {4, -EPROTO}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int fd[2];
        tcp_pair(fd);
        struct rx b = {0};
        struct netd_link *lb;
        CHECK_EQ(netd_link_new(n, fd[1], &rx_ops, &b, 0, &lb), 0);
        uint8_t wire[NETD_HDR_SIZE];
        if (cases[c].kind == 0) {
            memset(wire, 0x5a, sizeof wire);
            CHECK_EQ(write(fd[0], wire, sizeof wire), (ssize_t)sizeof wire);
        } else if (cases[c].kind == 1) {
            struct netd_hdr h = {.channel = TMPI_CH_P2P, .payload_len = 1u << 30, .seq = 1};
            netd_hdr_encode(&h, wire);
            CHECK_EQ(write(fd[0], wire, sizeof wire), (ssize_t)sizeof wire);
        } else if (cases[c].kind >= 3) {
            struct netd_hdr h = {.channel = TMPI_CH_P2P, .seq = 1};
            netd_hdr_encode(&h, wire);
            CHECK_EQ(write(fd[0], wire, sizeof wire), (ssize_t)sizeof wire);
            h.seq = cases[c].kind == 3 ? 1 : 3;
            netd_hdr_encode(&h, wire);
            CHECK_EQ(write(fd[0], wire, sizeof wire), (ssize_t)sizeof wire);
        } else {
            /* half a header, then EOF */
            struct netd_hdr h = {.channel = TMPI_CH_P2P, .seq = 1};
            netd_hdr_encode(&h, wire);
            CHECK_EQ(write(fd[0], wire, 20), 20);
            close(fd[0]);
        }
        wait_for(&b.errors, 1);
        CHECK_EQ(b.last_error, cases[c].want);
        CHECK_EQ(atomic_load(&b.frames), cases[c].kind >= 3 ? 1 : 0);
        /* the failed link refuses sends */
        struct netd_hdr h = {.channel = TMPI_CH_P2P};
        if (cases[c].kind == 2) {
            CHECK_EQ(netd_send(lb, &h, 0, NULL, NULL, NULL), -EPIPE);
        } else {
            close(fd[0]);
        }
        sleep_ms(20);
        CHECK_EQ(atomic_load(&b.errors), 1);
        netd_link_free(lb);
    }
}

/* The receiver frees its link from inside on_frame; later frames are not delivered. */
static void test_free_in_callback(struct netd *n)
{
    struct rx a = {0}, b = {0};
    struct netd_link *la, *lb;
    link_pair(n, &a, &b, 1, &la, &lb);
    b.free_me_on_frame = lb;
    struct netd_hdr h = {.channel = TMPI_CH_P2P, .src_rank = 0};
    for (int q = 0; q < 10; q++) {
        set_q(&h, q);
        CHECK_EQ(netd_send(la, &h, 0, NULL, NULL, NULL), 0);
    }
    sleep_ms(20);
    netd_link_resume(lb);
    wait_for(&b.frames, 1);
    sleep_ms(50);
    CHECK_EQ(atomic_load(&b.frames), 1);
    CHECK_EQ(atomic_load(&b.errors), 0);
    netd_link_free(la);
}

/* Freed from another thread while frames keep arriving: no callback after the free returns. */
static void test_free_under_traffic(struct netd *n)
{
    struct rx a = {0}, b = {0};
    struct netd_link *la, *lb;
    link_pair(n, &a, &b, 0, &la, &lb);
    atomic_int done_calls = 0;
    struct sender s = {.l = la, .id = 0, .done_calls = &done_calls, .tolerant = 1};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, sender_main, &s), 0);
    while (atomic_load(&b.frames) < 100)
        sleep_ms(1);
    netd_link_free(lb);
    free(b.inflight); /* a frame cut off by the free: no on_frame for it (netd.h) */
    int seen = atomic_load(&b.frames);
    pthread_join(t, NULL);
    sleep_ms(50);
    CHECK_EQ(atomic_load(&b.frames), seen);
    netd_link_free(la); /* may have failed (peer closed): free is still right */
    for (int q = 0; q < PER_SENDER; q++)
        free(s.bufs[q]);
}

/* ---- the receive daemons' spin after a read (netd_set_spin) ---- */

static atomic_int spin_allowed = 1;

static int may_spin(void *arg, int spinning)
{
    (void)arg;
    CHECK(spinning >= 0);
    return atomic_load(&spin_allowed);
}

/* Frame q of sender 0 from la to b, and its arrival. */
static void send_q(struct netd_link *la, struct rx *b, int q)
{
    static uint8_t buf[16];
    struct netd_hdr h = {.channel = TMPI_CH_P2P, .src_rank = 0};
    set_q(&h, q);
    h.payload_len = (uint32_t)size_of(0, q);
    for (size_t i = 0; i < h.payload_len; i++)
        buf[i] = pattern(0, q, i);
    CHECK_EQ(netd_send(la, &h, 0, buf, NULL, NULL), 0);
    wait_for(&b->frames, q + 1);
}

/* Statistics of a netd with one daemon (so that its rounds are the daemon's). */
static struct netd_stats stats_of(struct netd *n)
{
    struct netd_stats st;
    netd_get_stats(n, &st);
    return st;
}

/* A daemon that read polls on without sleeping for the spin time, so a frame 20 ms later is
 * read with no sleep between; then it sleeps and polls no more.  Without the spin time, or
 * while may_spin says no, it sleeps after every read and never polls.  Freeing the netd ends
 * a spinning daemon (the test would hang otherwise). */
static void test_spin(void)
{
    for (int mode = 0; mode < 3; mode++) { /* spinning, spin_ns 0, may_spin says no */
        struct netd *n;
        CHECK_EQ(netd_new(1, 1u << 20, &n), 0);
        atomic_store(&spin_allowed, mode != 2);
        netd_set_spin(n, mode == 1 ? 0 : 300 * 1000000ull, may_spin, NULL);
        struct rx a = {0}, b = {0};
        struct netd_link *la, *lb;
        link_pair(n, &a, &b, 0, &la, &lb);
        send_q(la, &b, 0);
        struct netd_stats s0 = stats_of(n);
        sleep_ms(20);
        send_q(la, &b, 1);
        struct netd_stats s1 = stats_of(n);
        if (mode == 0) {
            CHECK_EQ(s1.sleeps, s0.sleeps); /* no sleep between the two reads */
            CHECK(s1.spin_polls > s0.spin_polls);
        } else {
            /* the daemon goes back to sleep after the read (its next round may begin only
             * after the frame was delivered) */
            for (int i = 0; i < 20000 && stats_of(n).sleeps <= s0.sleeps; i++)
                sleep_ms(1);
            CHECK(stats_of(n).sleeps > s0.sleeps);
            CHECK_EQ(stats_of(n).spin_polls, 0);
        }
        if (mode == 0) {
            /* the spin time runs out: the daemon sleeps and stops polling */
            sleep_ms(600);
            struct netd_stats s2 = stats_of(n);
            sleep_ms(100);
            struct netd_stats s3 = stats_of(n);
            CHECK(s2.sleeps > s1.sleeps);
            CHECK_EQ(s3.spin_polls, s2.spin_polls);
            send_q(la, &b, 2); /* spinning again, and freed while it spins */
        }
        CHECK_EQ(atomic_load(&b.bad), 0);
        netd_link_free(la);
        netd_link_free(lb);
        netd_free(n);
    }
}

int main(void)
{
    struct netd *n;
    CHECK_EQ(netd_new(0, 1, &n), -EINVAL);
    CHECK_EQ(netd_new(3, 64u << 20, &n), 0);
    test_order_and_content(n, 0, 0);
    test_order_and_content(n, 3, 0);
    test_order_and_content(n, 0, 2);
    test_big_both_ways(n);
    test_paused(n);
    test_hold(n);
    test_quiet(n);
    test_hold_peer_gone(n);
    test_errors(n);
    test_free_in_callback(n);
    test_free_under_traffic(n);
    test_spin();
    test_resend(NETD_RESEND_MAX_DEFAULT);
    test_resend(64 * 1024);
    test_rejoin();
    struct netd_stats st;
    netd_get_stats(n, &st);
    CHECK(st.frames_sent >= 2 * SENDERS * PER_SENDER);
    CHECK(st.link_errors >= 3);
    netd_free(n);
    return 0;
}
