/* test_tp_ofi.c — the libfabric transport (agent/transport/ofi/tp_ofi.h) on the tcp provider:
 * two endpoints linked with swapped secrets carry small frames and a 1 MiB frame (rendezvous:
 * the receiver reads it) byte for byte and in order (a small frame sent after a large one is
 * delivered after it); a paused link delivers nothing until resumed; an endpoint outside the
 * exchange that knows the address but not the secret cannot inject a frame (it is counted as
 * rejected, nothing is delivered); Put and Get to a registered buffer; a provider that is not
 * here fails open with -ENOENT and says why; nobody polling, the progress threads carry a 1 MiB
 * frame and its ACK alone, sleeping on the completion queue's wait object between arrivals.  Both
 * sides send before the links are started (tp_ofi_link_start): the side that speaks second holds
 * its frame until it hears the other.  Resending: links whose owner carries them on
 * (on_break) are reattached at both ends in the middle of a stream of small and large frames:
 * every frame arrives once, in order, every large send completes once, and the first message
 * after the reattach ends the break (on_rejoin). */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "tp_ofi.h"

#define BIG (1u << 20)

struct sink {
    atomic_int frames, errors;
    uint32_t lens[16];
    uint64_t tags[16];
    uint8_t *buf;
};

static void *on_header(void *arg, struct tp_link *l, const struct netd_hdr *h, void **ctx)
{
    struct sink *s = arg;
    int i = atomic_load(&s->frames);
    if (i < 16) {
        s->lens[i] = h->payload_len;
        memcpy(&s->tags[i], h->proto, 8);
    }
    return h->payload_len ? s->buf : NULL;
}

static void on_frame(void *arg, struct tp_link *l, const struct netd_hdr *h, void *ctx)
{
    atomic_fetch_add(&((struct sink *)arg)->frames, 1);
}

static void on_error(void *arg, struct tp_link *l, int err)
{
    atomic_fetch_add(&((struct sink *)arg)->errors, 1);
}

static const struct tp_rx_ops rx = {on_header, on_frame, on_error, NULL, NULL};

static atomic_int dones;
static void done(void *arg, int err)
{
    if (err == 0) atomic_fetch_add(&dones, 1);
}

/* Polls until *v reaches want or about 5 s passed. */
static int wait_for(struct tp_link *l, atomic_int *v, int want)
{
    for (int i = 0; i < 500000 && atomic_load(v) < want; i++) {
        tp_poll(l);
        if (i > 1000) {
            struct timespec ts = {0, 10000};
            nanosleep(&ts, NULL);
        }
    }
    return atomic_load(v);
}

/* Waits (no tp_poll: only the progress threads move anything) until *v reaches want or about
 * 5 s passed. */
static int wait_unpolled(atomic_int *v, int want)
{
    for (int i = 0; i < 5000 && atomic_load(v) < want; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return atomic_load(v);
}

/* A resending link's receiver: every frame's tag in arrival order. */
#define RS_FRAMES 240
struct rsink {
    atomic_int frames, errors, rejoins, breaks;
    uint64_t tags[RS_FRAMES];
    uint8_t *buf;
};

static void *rs_header(void *arg, struct tp_link *l, const struct netd_hdr *h, void **ctx)
{
    struct rsink *s = arg;
    int i = atomic_load(&s->frames);
    if (i < RS_FRAMES) memcpy(&s->tags[i], h->proto, 8);
    return h->payload_len ? s->buf : NULL;
}

static void rs_frame(void *arg, struct tp_link *l, const struct netd_hdr *h, void *ctx)
{
    atomic_fetch_add(&((struct rsink *)arg)->frames, 1);
}

static void rs_error(void *arg, struct tp_link *l, int err)
{
    atomic_fetch_add(&((struct rsink *)arg)->errors, 1);
}

static int rs_break(void *arg, struct tp_link *l, int err)
{
    atomic_fetch_add(&((struct rsink *)arg)->breaks, 1);
    return 0;
}

static void rs_rejoin(void *arg, struct tp_link *l)
{
    atomic_fetch_add(&((struct rsink *)arg)->rejoins, 1);
}

static const struct tp_rx_ops rs_rx = {rs_header, rs_frame, rs_error, rs_break, rs_rejoin};

static struct netd_hdr frame(uint32_t len, uint64_t tag)
{
    struct netd_hdr h;
    memset(&h, 0, sizeof h);
    h.channel = TMPI_CH_P2P;
    h.payload_len = len;
    h.job_id = 7;
    h.src_rank = 0;
    h.dst_rank = 1;
    memcpy(h.proto, &tag, 8);
    return h;
}

int main(void)
{
    char why[300] = "";
    struct tp *bogus = NULL;
    CHECK_EQ(tp_ofi_open("no-such-provider", &bogus, why, sizeof why), -ENOENT);
    CHECK(strstr(why, "no-such-provider") != NULL);

    /* Three endpoints by the order of their names: b has the highest, so that the outsider c
     * (the lowest) speaks first to b and what it sends goes out at once.  Drawing c until one
     * fell below b failed whenever b had the lowest name of every try. */
    struct tp *ep[3] = {NULL, NULL, NULL};
    uint8_t names[3][TP_OFI_NAME_MAX];
    int lens[3];
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(tp_ofi_open("tcp", &ep[k], why, sizeof why), 0);
        lens[k] = tp_ofi_name(ep[k], names[k], sizeof names[k]);
        CHECK(lens[k] > 0 && lens[k] == lens[0]);
    }
    int hi = 0, lo = 0;
    for (int k = 1; k < 3; k++) {
        if (memcmp(names[k], names[hi], (size_t)lens[0]) > 0) hi = k;
        if (memcmp(names[k], names[lo], (size_t)lens[0]) < 0) lo = k;
    }
    CHECK(hi != lo, "three endpoints with one name");
    int mid = 3 - hi - lo;
    struct tp *a = ep[mid], *b = ep[hi], *c = ep[lo];
    CHECK(strstr(tp_ofi_provider(a), "tcp") != NULL);
    uint8_t na[TP_OFI_NAME_MAX], nb[TP_OFI_NAME_MAX];
    int la = lens[mid], lb = lens[hi];
    memcpy(na, names[mid], (size_t)la);
    memcpy(nb, names[hi], (size_t)lb);

    struct sink sa = {.buf = calloc(1, BIG)}, sb = {.buf = calloc(1, BIG)}, sc = {.buf = NULL};
    uint64_t s_ab = tp_ofi_secret(), s_ba = tp_ofi_secret(); /* a->b frames carry s_ab */
    CHECK(s_ab != s_ba);
    struct tp_link *ab = NULL, *ba = NULL, *cb = NULL;
    CHECK_EQ(
        tp_connect(
            a,
            &(struct tp_addr){
                .fd = -1, .name = nb, .name_len = (size_t)lb, .tx_secret = s_ab, .rx_secret = s_ba},
            &rx, &sa, 0, &ab),
        0);
    /* b's link starts paused: nothing is delivered before the resume */
    CHECK_EQ(
        tp_connect(
            b,
            &(struct tp_addr){
                .fd = -1, .name = na, .name_len = (size_t)la, .tx_secret = s_ba, .rx_secret = s_ab},
            &rx, &sb, 1, &ba),
        0);

    uint8_t *big = malloc(BIG);
    for (uint32_t i = 0; i < BIG; i++)
        big[i] = (uint8_t)(i * 7 + 3);
    struct netd_hdr h1 = frame(5, 1), h2 = frame(BIG, 2), h3 = frame(3, 3);
    CHECK_EQ(tp_send(ab, &h1, 0, "hello", done, NULL), 0);
    CHECK_EQ(tp_send(ab, &h2, 0, big, done, NULL), 0);
    CHECK_EQ(tp_send(ab, &h3, 0, "end", done, NULL), 0);
    struct netd_hdr h0 = frame(5, 9);
    CHECK_EQ(tp_send(ba, &h0, 0, "early", NULL, NULL), 0);
    CHECK_EQ(tp_ofi_link_start(ab), 0);
    CHECK_EQ(tp_ofi_link_start(ba), 0);
    CHECK_EQ(wait_for(ab, &sa.frames, 1), 1);
    CHECK(memcmp(sa.buf, "early", 5) == 0 && sa.tags[0] == 9);
    for (int i = 0; i < 20000; i++)
        tp_poll(ba);
    CHECK_EQ(atomic_load(&sb.frames), 0);
    tp_resume(ba);
    CHECK_EQ(wait_for(ba, &sb.frames, 3), 3);
    CHECK_EQ(sb.lens[0], 5);
    CHECK_EQ(sb.lens[1], BIG);
    CHECK_EQ(sb.lens[2], 3);
    CHECK_EQ(sb.tags[0], 1);
    CHECK_EQ(sb.tags[1], 2);
    CHECK_EQ(sb.tags[2], 3);
    CHECK(memcmp(sb.buf, "end", 3) == 0); /* the last frame landed last */
    CHECK(memcmp(sb.buf + 3, big + 3, BIG - 3) == 0);
    CHECK_EQ(wait_for(ab, &dones, 3), 3); /* the large send completed on the FIN */

    /* the other way */
    struct netd_hdr h4 = frame(4, 4);
    CHECK_EQ(tp_send(ba, &h4, 0, "back", NULL, NULL), 0);
    CHECK_EQ(wait_for(ab, &sa.frames, 2), 2);
    CHECK(memcmp(sa.buf, "back", 4) == 0);

    /* c knows b's address but not the secret of any of b's links */
    CHECK_EQ(tp_connect(c,
                        &(struct tp_addr){.fd = -1,
                                          .name = nb,
                                          .name_len = (size_t)lb,
                                          .tx_secret = s_ab ^ 1,
                                          .rx_secret = 99},
                        &rx, &sc, 0, &cb),
             0);
    CHECK_EQ(tp_ofi_link_start(cb), 0); /* its HELLO is rejected too */
    struct netd_hdr h5 = frame(6, 5);
    CHECK_EQ(tp_send(cb, &h5, 0, "inject", NULL, NULL), 0);
    for (int i = 0; i < 500000 && tp_ofi_rejected(b) < 2; i++) {
        tp_poll(ba);
        tp_poll(cb);
    }
    CHECK_EQ(tp_ofi_rejected(b), 2);
    CHECK_EQ(atomic_load(&sb.frames), 3);
    CHECK_EQ(atomic_load(&sb.errors), 0);

    /* one-sided: a's Put into b's registered buffer, then a Get back */
    struct tp_mr *mr = NULL;
    uint64_t key = 0, raddr = 0;
    uint8_t *win = calloc(1, 4096), got[16];
    CHECK_EQ(tp_mr_reg(b, win, 4096, &mr, &key, &raddr), 0);
    atomic_store(&dones, 0);
    CHECK_EQ(tp_put(ab, "one-sided", 9, raddr + 100, key, done, NULL), 0);
    CHECK_EQ(wait_for(ab, &dones, 1), 1);
    CHECK(memcmp(win + 100, "one-sided", 9) == 0);
    memcpy(win + 200, "get me", 6);
    CHECK_EQ(tp_get(ab, got, 6, raddr + 200, key, done, NULL), 0);
    CHECK_EQ(wait_for(ab, &dones, 2), 2);
    CHECK(memcmp(got, "get me", 6) == 0);

    /* nobody polls: b's progress thread reads the frame, a's serves the read and takes the FIN;
     * both slept on their wait objects meanwhile */
    atomic_store(&dones, 0);
    struct netd_hdr h6 = frame(BIG, 6);
    big[0] = 0x5a;
    CHECK_EQ(tp_send(ab, &h6, 0, big, done, NULL), 0);
    CHECK_EQ(wait_unpolled(&sb.frames, 4), 4);
    CHECK_EQ(wait_unpolled(&dones, 1), 1);
    CHECK(sb.buf[0] == 0x5a && memcmp(sb.buf + 1, big + 1, BIG - 1) == 0);
    /* on a loaded machine the transfer may end before either thread ran out of work: they
     * sleep on the wait object once idle, which is what this shows */
    for (int i = 0; i < 2000 && !(tp_ofi_wait_sleeps(a) > 0 && tp_ofi_wait_sleeps(b) > 0); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    CHECK(tp_ofi_wait_sleeps(a) > 0 && tp_ofi_wait_sleeps(b) > 0);

    struct tp_link_stats st;
    tp_stats(ab, &st);
    CHECK_EQ(st.frames_sent, 4);
    CHECK_EQ(st.rma_ops, 2);
    CHECK(strncmp(st.carrier, "ofi:", 4) == 0);

    /* Resending links between the same endpoints: 200 frames a -> b, every 20th a large one;
     * both ends are reattached (as both agents hand a new socket over) after 120 of them,
     * with frames unacknowledged and a large one possibly in flight. */
    struct rsink ra = {.buf = calloc(1, BIG)}, rb = {.buf = calloc(1, BIG)};
    uint64_t r_ab = tp_ofi_secret(), r_ba = tp_ofi_secret();
    struct tp_link *ab2 = NULL, *ba2 = NULL;
    CHECK_EQ(
        tp_connect(
            a,
            &(struct tp_addr){
                .fd = -1, .name = nb, .name_len = (size_t)lb, .tx_secret = r_ab, .rx_secret = r_ba},
            &rs_rx, &ra, 0, &ab2),
        0);
    CHECK_EQ(
        tp_connect(
            b,
            &(struct tp_addr){
                .fd = -1, .name = na, .name_len = (size_t)la, .tx_secret = r_ba, .rx_secret = r_ab},
            &rs_rx, &rb, 0, &ba2),
        0);
    CHECK_EQ(tp_ofi_link_start(ab2), 0);
    CHECK_EQ(tp_ofi_link_start(ba2), 0);
    atomic_store(&dones, 0);
    int nbig = 0;
    for (int i = 0; i < 200; i++) {
        int large = i % 20 == 7;
        nbig += large;
        struct netd_hdr hr = frame(large ? BIG : 8, 1000 + (uint64_t)i);
        CHECK_EQ(tp_send(ab2, &hr, 0, large ? (const char *)big : "resend!", done, NULL), 0);
        if (i == 120) {
            CHECK_EQ(tp_reattach(ab2, &(struct tp_addr){.fd = -1}), 0);
            CHECK_EQ(tp_reattach(ba2, &(struct tp_addr){.fd = -1}), 0);
        }
    }
    CHECK_EQ(wait_for(ba2, &rb.frames, 200), 200);
    CHECK_EQ(wait_for(ab2, &dones, 200), 200); /* every large send completed on its ACK */
    for (int i = 0; i < 200; i++)
        CHECK_EQ(rb.tags[i], 1000 + (uint64_t)i);
    CHECK(nbig == 10);
    /* b's acknowledgement after its reattach reached a, and the other way */
    CHECK_EQ(wait_for(ab2, &ra.rejoins, 1), 1);
    struct netd_hdr hz = frame(2, 7);
    CHECK_EQ(tp_send(ab2, &hz, 0, "ok", NULL, NULL), 0);
    CHECK_EQ(wait_for(ba2, &rb.rejoins, 1), 1);
    CHECK_EQ(wait_for(ba2, &rb.frames, 201), 201);
    for (int i = 0; i < 20000; i++)
        tp_poll(ba2);
    CHECK_EQ(atomic_load(&rb.frames), 201); /* nothing twice */
    CHECK_EQ(atomic_load(&rb.errors) + atomic_load(&ra.errors), 0);
    tp_close(ab2);
    tp_close(ba2);
    free(ra.buf);
    free(rb.buf);

    b->ops->mr_dereg(mr);
    tp_close(ab);
    tp_close(ba);
    tp_close(cb);
    a->ops->free(a);
    b->ops->free(b);
    c->ops->free(c);
    free(big);
    free(win);
    free(sa.buf);
    free(sb.buf);
    return 0;
}
