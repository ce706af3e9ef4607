/* test_fbox.c — the fast boxes (libclient/intra/fbox.c) on their own: when a ring is made and
 * refused, ring order through full rings and wrap-around, where a drained cell goes (posted
 * receive, the receive being started, the unexpected queue; several cells straight into a receive
 * buffer), readiness, and one producer thread against
 * one draining thread for a million messages (run under TSan by `make tsan`).
 *
 * fbox.c, match.c, envelope_pool.c and request.c are compiled in (libtmpi keeps its symbols
 * hidden); the ranks are plain structs, and the wake-up of a sleeping rank is counted here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "envelope_pool.h"
#include "fbox.h"
#include "job.h"
#include "match.h"
#include "p2p.h"

__thread struct tm_rank *tm_cur;
static _Atomic int wakes;

void tm_wake_slow(struct tm_waker *w)
{
    (void)w;
    atomic_fetch_add(&wakes, 1);
}

static struct tm_rank *ranks_new(int n)
{
    struct tm_rank *r = aligned_alloc(64, sizeof *r * (size_t)n);
    CHECK(r);
    memset(r, 0, sizeof *r * (size_t)n);
    static struct tm_job job = {.asym_fence = 1}; /* cells published with a release store */
    for (int i = 0; i < n; i++) {
        r[i].job = &job;
        r[i].rank = i;
        CHECK(tm_mbox_init(&r[i].mbox) == 0);
    }
    return r;
}

static void ranks_free(struct tm_rank *r, int n)
{
    for (int i = 0; i < n; i++) {
        tm_fb_free(&r[i]);
        tm_mbox_destroy(&r[i].mbox);
        tm_envl_pool_destroy(&r[i].envs);
    }
    free(r);
}

/* A ring from s to r, made by sending TM_FB_AFTER small messages' worth of lookups. */
static struct tm_fb_slot *ring(struct tm_rank *s, struct tm_rank *r)
{
    struct tm_fb_slot *fs = NULL;
    for (int i = 0; i < TM_FB_AFTER && !fs; i++)
        fs = tm_fb_out(s, r, 1);
    CHECK(fs);
    return fs;
}

static void push_int(struct tm_fb_slot *fs, int tag, int v)
{
    CHECK(tm_fb_push(fs, 7, 0, tag, &v, sizeof v));
}

/* Takes the next unexpected message of r (any source and tag) and returns its int. */
static int take_unexp(struct tm_rank *r, int want_tag)
{
    struct tm_envl *e = tm_match_unexp(&r->mbox, 7, MPI_ANY_SOURCE, MPI_ANY_TAG, 1);
    CHECK(e);
    CHECK_EQ(e->tag, want_tag);
    CHECK_EQ(e->bytes, sizeof(int));
    int v;
    memcpy(&v, e->data, sizeof v);
    tm_envl_release(r, e);
    return v;
}

static void t_made(void)
{
    struct tm_rank *r = ranks_new(3);
    /* large messages do not count; small ones make the ring on the TM_FB_AFTER-th */
    for (int i = 0; i < 3 * TM_FB_AFTER; i++)
        CHECK(!tm_fb_out(&r[0], &r[1], 0));
    for (int i = 1; i < TM_FB_AFTER; i++)
        CHECK(!tm_fb_out(&r[0], &r[1], 1));
    struct tm_fb_slot *fs = tm_fb_out(&r[0], &r[1], 1);
    CHECK(fs && fs->box);
    CHECK(tm_fb_out(&r[0], &r[1], 0) == fs); /* found for large ones too: they must drain it */
    CHECK_EQ(atomic_load(&r[1].fb_in.n), 1);
    CHECK(r[1].fb_in.box[0] == fs->box && fs->box->from == 0);
    /* never to oneself, never from a helper */
    for (int i = 0; i < 2 * TM_FB_AFTER; i++)
        CHECK(!tm_fb_out(&r[1], &r[1], 1));
    r[2].helper = 1;
    for (int i = 0; i < 2 * TM_FB_AFTER; i++)
        CHECK(!tm_fb_out(&r[2], &r[1], 1));
    CHECK_EQ(atomic_load(&r[1].fb_in.n), 1);
    ranks_free(r, 3);
}

/* A receiver takes at most TM_FB_MAX_IN rings; the next sender is refused for good. */
static void t_refused(void)
{
    int n = TM_FB_MAX_IN + 2;
    struct tm_rank *r = ranks_new(n);
    for (int s = 1; s <= TM_FB_MAX_IN; s++)
        ring(&r[s], &r[0]);
    CHECK_EQ(atomic_load(&r[0].fb_in.n), TM_FB_MAX_IN);
    for (int i = 0; i < 4 * TM_FB_AFTER; i++)
        CHECK(!tm_fb_out(&r[n - 1], &r[0], 1));
    struct tm_fb_slot *s = &r[n - 1].fb_out->slot[0];
    CHECK_EQ(s->sent, UINT32_MAX);
    CHECK_EQ(atomic_load(&r[0].fb_in.n), TM_FB_MAX_IN);
    ranks_free(r, n);
}

/* A full ring refuses a push; a drain keeps order and makes room; positions wrap. */
static void t_order(void)
{
    struct tm_rank *r = ranks_new(2);
    struct tm_fb_slot *fs = ring(&r[0], &r[1]);
    int next = 0, want = 0;
    CHECK(!tm_fb_ready(&r[1].fb_in));
    for (int round = 0; round < 50; round++) {
        int k = 0;
        while (tm_fb_push(fs, 7, 0, next % 5, &next, sizeof next))
            next++, k++;
        CHECK_EQ(k, TM_FB_CELLS); /* every round starts from an empty ring */
        CHECK(tm_fb_ready(&r[1].fb_in));
        CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
        CHECK(!tm_fb_ready(&r[1].fb_in));
        /* take part of what was drained now, the rest in a later round */
        int take = (round % 3 == 0) ? next - want : (next - want) / 2;
        for (int i = 0; i < take; i++, want++)
            CHECK_EQ(take_unexp(&r[1], want % 5), want);
    }
    while (want < next) {
        CHECK_EQ(take_unexp(&r[1], want % 5), want);
        want++;
    }
    CHECK(!tm_match_unexp(&r[1].mbox, 7, MPI_ANY_SOURCE, MPI_ANY_TAG, 0));
    CHECK(next > 50 * TM_FB_CELLS / 2);
    ranks_free(r, 2);
}

static void post(struct tm_rank *r, struct tm_request *q, int src, int tag, void *buf, size_t cap)
{
    tm_req_init_stack(q, r, TM_REQ_RECV, MPI_COMM_WORLD);
    q->ctx = 7;
    q->src = src;
    q->tag = tag;
    q->buf = buf;
    q->cap = cap;
    tm_post_recv(&r->mbox, q);
}

/* Where cells go: the earliest matching posted receive first, then the receive being started
 * (cand), then the unexpected queue; a drain stops after cand's cell; a short buffer
 * truncates. */
static void t_targets(void)
{
    struct tm_rank *r = ranks_new(2);
    tm_cur = &r[1]; /* the draining thread is rank 1's */
    struct tm_fb_slot *fs = ring(&r[0], &r[1]);
    int a = -1, b = -1, c = -1;
    struct tm_request pa, pb, cand;
    post(&r[1], &pa, 0, 3, &a, sizeof a);                        /* exact */
    post(&r[1], &pb, MPI_ANY_SOURCE, MPI_ANY_TAG, &b, sizeof b); /* wildcard, later */
    push_int(fs, 4, 40);                                         /* matches pb only */
    push_int(fs, 3, 30);                                         /* pa (posted earlier than pb) */
    push_int(fs, 3, 31);                                         /* pb is taken: cand */
    push_int(fs, 3, 32);                                         /* cand is done: stays */
    tm_req_init_stack(&cand, &r[1], TM_REQ_RECV, MPI_COMM_WORLD);
    cand.ctx = 7;
    cand.src = 0;
    cand.tag = 3;
    cand.buf = &c;
    cand.cap = sizeof c;
    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], &cand), 1);
    CHECK(atomic_load(&pb.done) && b == 40 && pb.st_tag == 4 && pb.st_source == 0);
    CHECK(atomic_load(&pa.done) && a == 30 && pa.st_error == MPI_SUCCESS);
    CHECK(atomic_load(&cand.done) && c == 31 && cand.st_bytes == sizeof c);
    /* the drain stopped at cand's cell: the next one waits in the ring for the next receive,
     * not in the unexpected queue (an envelope and a second copy) */
    CHECK(tm_match_unexp(&r[1].mbox, 7, MPI_ANY_SOURCE, MPI_ANY_TAG, 0) == NULL);
    CHECK(tm_fb_ready(&r[1].fb_in));
    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
    CHECK(!tm_fb_ready(&r[1].fb_in));
    CHECK_EQ(take_unexp(&r[1], 3), 32);
    /* nothing matches: a drain with a cand that stays open */
    push_int(fs, 9, 90);
    tm_req_init_stack(&cand, &r[1], TM_REQ_RECV, MPI_COMM_WORLD);
    cand.ctx = 7;
    cand.src = 0;
    cand.tag = 3;
    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], &cand), 0);
    CHECK(!atomic_load(&cand.done));
    CHECK_EQ(take_unexp(&r[1], 9), 90);
    /* truncation: a 44-byte cell into 2 bytes */
    unsigned char big[TM_FB_PAYLOAD], small[2] = {0, 0};
    for (int i = 0; i < TM_FB_PAYLOAD; i++)
        big[i] = (unsigned char)(i + 1);
    CHECK(tm_fb_push(fs, 7, 0, 5, big, sizeof big));
    post(&r[1], &pa, 0, 5, small, sizeof small);
    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
    CHECK(atomic_load(&pa.done) && pa.st_error == MPI_ERR_TRUNCATE && pa.st_bytes == 2);
    CHECK(small[0] == 1 && small[1] == 2);
    /* a sender draining for a receiver (tm_cur is not the receiver): delivery wakes a
     * sleeping owner */
    tm_cur = &r[0];
    post(&r[1], &pa, 0, 6, &a, sizeof a);
    atomic_store(&r[1].waker.sleeping, 1);
    int w0 = atomic_load(&wakes);
    push_int(fs, 6, 60);
    CHECK_EQ(tm_fb_drain(&r[0], &r[1], fs->box, NULL), 0);
    CHECK(atomic_load(&pa.done) && a == 60);
    CHECK_EQ(atomic_load(&wakes), w0 + 1);
    atomic_store(&r[1].waker.sleeping, 0);
    tm_cur = NULL;
    ranks_free(r, 2);
}

/* A receive being started takes one cell: the drain leaves the other senders' rings alone
 * (their cells wait for the receives that follow), and a later drain finds them in order. */
static void t_cand_stops(void)
{
    struct tm_rank *r = ranks_new(3);
    tm_cur = &r[1];
    struct tm_fb_slot *f0 = ring(&r[0], &r[1]), *f2 = ring(&r[2], &r[1]);
    push_int(f0, 3, 1);
    push_int(f0, 3, 2);
    push_int(f2, 3, 20);
    int got[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++) {
        struct tm_request cand;
        tm_req_init_stack(&cand, &r[1], TM_REQ_RECV, MPI_COMM_WORLD);
        cand.ctx = 7;
        cand.src = MPI_ANY_SOURCE;
        cand.tag = 3;
        cand.buf = &got[i];
        cand.cap = sizeof got[i];
        CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], &cand), 1);
        CHECK(atomic_load(&cand.done));
        CHECK(tm_match_unexp(&r[1].mbox, 7, MPI_ANY_SOURCE, MPI_ANY_TAG, 0) == NULL);
        CHECK(tm_fb_ready(&r[1].fb_in) == (i < 2));
    }
    CHECK(got[0] == 1 && got[1] == 2 && got[2] == 20); /* rings in the order they were made */
    tm_cur = NULL;
    ranks_free(r, 3);
}

/* Messages of several cells: content across cell borders and the ring's end, a push refused
 * while fewer cells are free than the message needs (and taken once they are), truncation. */
static size_t multi_size(int i)
{
    static const size_t sizes[] = {4, 44, 45, 104, 105, 300, TM_FB_MAX_BYTES - 1, TM_FB_MAX_BYTES};
    return sizes[i % (int)(sizeof sizes / sizeof *sizes)];
}

static unsigned char multi_byte(int i, size_t j)
{
    return (unsigned char)(i * 31 + (int)j * 7 + 1);
}

/* Message i: its number in the first 4 bytes, a pattern after. */
static void multi_fill(unsigned char *b, int i, size_t n)
{
    memcpy(b, &i, sizeof i);
    for (size_t j = sizeof i; j < n; j++)
        b[j] = multi_byte(i, j);
}

static void multi_check(const unsigned char *b, int i, size_t n)
{
    int v;
    memcpy(&v, b, sizeof v);
    CHECK_EQ(v, i);
    for (size_t j = sizeof i; j < n; j++)
        if (b[j] != multi_byte(i, j)) {
            fprintf(stderr, "message %d (%zu bytes): byte %zu is %d, want %d\n", i, n, j, b[j],
                    multi_byte(i, j));
            CHECK(0);
        }
}

static void t_multi(void)
{
    struct tm_rank *r = ranks_new(2);
    struct tm_fb_slot *fs = ring(&r[0], &r[1]);
    unsigned char b[TM_FB_MAX_BYTES];
    int next = 0, want = 0;
    for (int round = 0; round < 40; round++) {
        int pushed = 0;
        for (;;) {
            size_t n = multi_size(next);
            multi_fill(b, next, n);
            if (!tm_fb_push(fs, 7, 0, 1, b, n)) break;
            next++, pushed++;
        }
        CHECK(pushed >= 1); /* a drained ring takes any message up to TM_FB_MAX_BYTES */
        CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
        for (; want < next; want++) {
            struct tm_envl *e = tm_match_unexp(&r[1].mbox, 7, 0, 1, 1);
            CHECK(e);
            CHECK_EQ(e->bytes, multi_size(want));
            multi_check(e->data, want, e->bytes);
            tm_envl_release(&r[1], e);
        }
    }
    /* positions went round the ring many times, at every offset */
    CHECK(fs->head > 20 * TM_FB_CELLS);
    /* room for a one-cell message but not for a full one: refused, then taken after a drain */
    while (tm_fb_push(fs, 7, 0, 2, b, 4))
        ;
    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
    for (int i = 0; i < TM_FB_CELLS - 1; i++)
        CHECK(tm_fb_push(fs, 7, 0, 2, b, 4));
    multi_fill(b, 1000, TM_FB_MAX_BYTES);
    CHECK(!tm_fb_push(fs, 7, 0, 3, b, TM_FB_MAX_BYTES));
    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
    CHECK(tm_fb_push(fs, 7, 0, 3, b, TM_FB_MAX_BYTES));
    /* into a posted receive of 100 bytes: truncated, the first 100 bytes right */
    unsigned char small[100];
    struct tm_request q;
    tm_req_init_stack(&q, &r[1], TM_REQ_RECV, MPI_COMM_WORLD);
    q.ctx = 7;
    q.src = 0;
    q.tag = 3;
    q.buf = small;
    q.cap = sizeof small;
    tm_post_recv(&r[1].mbox, &q);
    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
    CHECK(atomic_load(&q.done) && q.st_error == MPI_ERR_TRUNCATE && q.st_bytes == sizeof small);
    multi_check(small, 1000, sizeof small);
    ranks_free(r, 2);
}

/* Messages of several cells copied straight into receive buffers (posted, or the receive being
 * started): every size into a buffer of its size and into smaller ones (inside the first cell,
 * at cell borders, one short), never a byte past the buffer. */
static void t_multi_direct(void)
{
    struct tm_rank *r = ranks_new(2);
    struct tm_fb_slot *fs = ring(&r[0], &r[1]);
    unsigned char b[TM_FB_MAX_BYTES], got[TM_FB_MAX_BYTES + 1];
    int id = 0;
    for (int k = 0; k < 8; k++) {
        size_t n = multi_size(k);
        const size_t caps[] = {n, 10, TM_FB_PAYLOAD, TM_FB_PAYLOAD + TM_FB_MORE, n - 1};
        for (int ci = 0; ci < 5; ci++) {
            size_t cap = caps[ci] < n ? caps[ci] : n;
            for (int as_cand = 0; as_cand < 2; as_cand++, id++) {
                multi_fill(b, id, n);
                CHECK(tm_fb_push(fs, 7, 0, 4, b, n));
                memset(got, 0xa5, sizeof got);
                struct tm_request q;
                tm_req_init_stack(&q, &r[1], TM_REQ_RECV, MPI_COMM_WORLD);
                q.ctx = 7;
                q.src = 0;
                q.tag = 4;
                q.buf = got;
                q.cap = cap;
                if (as_cand) {
                    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], &q), 1);
                } else {
                    tm_post_recv(&r[1].mbox, &q);
                    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
                }
                CHECK(atomic_load(&q.done));
                CHECK_EQ(q.st_bytes, cap);
                CHECK_EQ(q.st_error, cap < n ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
                if (cap >= sizeof id) multi_check(got, id, cap);
                CHECK_EQ(got[cap], 0xa5);
            }
        }
    }
    CHECK(!tm_match_unexp(&r[1].mbox, 7, MPI_ANY_SOURCE, MPI_ANY_TAG, 0));
    ranks_free(r, 2);
}

/* One producer (as tm_send: push, or drain under the receiver's lock when full and send
 * through the queue) and one consumer (as a waiting rank: poll, drain, take in order), with
 * messages of one to TM_FB_MAX_CELLS cells. */
#define STRESS_N 1000000
struct stress {
    struct tm_rank *r;
    int via_queue; /* messages the producer sent through the queue */
};

static void *producer(void *arg)
{
    struct stress *s = arg;
    struct tm_rank *r = s->r;
    tm_cur = &r[0];
    struct tm_fb_slot *fs = ring(&r[0], &r[1]);
    unsigned char b[TM_FB_MAX_BYTES];
    for (int i = 0; i < STRESS_N; i++) {
        size_t n = multi_size(i);
        multi_fill(b, i, n);
        if (tm_fb_push(fs, 7, 0, i & 3, b, n)) continue;
        pthread_mutex_lock(&r[1].mbox.lock);
        CHECK(tm_fb_drain(&r[0], &r[1], fs->box, NULL) >= 0);
        struct tm_envl *e = tm_envl_eager(&r[0], 7, 0, i & 3, b, n);
        CHECK(e);
        tm_add_unexp(&r[1].mbox, e);
        pthread_mutex_unlock(&r[1].mbox.lock);
        s->via_queue++;
    }
    return NULL;
}

static void t_stress(void)
{
    struct tm_rank *r = ranks_new(2);
    struct stress s = {r, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, producer, &s) == 0);
    tm_cur = &r[1];
    for (int want = 0; want < STRESS_N;) {
        tm_fb_poll(&r[1]);
        pthread_mutex_lock(&r[1].mbox.lock);
        struct tm_envl *e;
        while ((e = tm_match_unexp(&r[1].mbox, 7, 0, want & 3, 1))) {
            CHECK_EQ(e->bytes, multi_size(want));
            multi_check(e->data, want, e->bytes);
            tm_envl_release(&r[1], e);
            want++;
        }
        pthread_mutex_unlock(&r[1].mbox.lock);
    }
    CHECK(pthread_join(t, NULL) == 0);
    tm_cur = NULL;
    printf("  stress: %d messages, %d through the queue\n", STRESS_N, s.via_queue);
    ranks_free(r, 2);
}

/* A window of back-to-back isends waits in the ring for the receiver: 28 messages of 1 KiB
 * (18 cells each) before it is full (with 128 cells, 7: osu_bw's window of 64 went through
 * the mailbox; fbox.h). */
static void t_window(void)
{
    struct tm_rank *r = ranks_new(2);
    struct tm_fb_slot *fs = ring(&r[0], &r[1]);
    unsigned char b[1024];
    int n = 0;
    while (n < 1000 && tm_fb_push(fs, 7, 0, 1, b, sizeof b))
        n++;
    CHECK_EQ(n, TM_FB_CELLS / 18);
    CHECK(n >= 28, "%d messages of 1 KiB fit", n);
    CHECK_EQ(tm_fb_drain_all(&r[1], &r[1], NULL), 0);
    ranks_free(r, 2);
}

int main(void)
{
    t_made();
    t_refused();
    t_order();
    t_targets();
    t_cand_stops();
    t_multi();
    t_multi_direct();
    t_window();
    t_stress();
    printf("fbox: all passed\n");
    return 0;
}
