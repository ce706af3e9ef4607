/* test_coop.c — cooperative copies (libclient/intra/coop.c) on their own: which copies are
 * shared (the intra_coop_min weight, strided blocks counted, 0 for never, no helper, a helper
 * busy with another copy), the wake of a sleeping helper, and a helper thread that takes
 * chunks of contiguous and strided copies while the initiator copies the rest (run under
 * TSan by `make tsan`).  Every copy is checked byte for byte, and the bytes around it.
 *
 * coop.c and the datatype engine are compiled in (libtmpi keeps its symbols hidden); the
 * ranks are plain structs, and the wake-up of a sleeping rank is counted here. */
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "coop.h"
#include "job.h"
#include "request.h"
#include "type_copy.h"
#include "type_flat.h"

__thread struct tm_rank *tm_cur;
static _Atomic int wakes;

void tm_wake_slow(struct tm_waker *w)
{
    (void)w;
    atomic_fetch_add(&wakes, 1);
}

static int runnable(void)
{
    return 2;
}

static struct tmpi_svc svc = {.runnable_ranks = runnable, .ncpus = 2};
static struct tm_job job = {.svc = &svc};

static struct tm_rank *rank_new(void)
{
    struct tm_rank *r = aligned_alloc(64, sizeof *r);
    CHECK(r, "out of memory");
    memset(r, 0, sizeof *r);
    r->job = &job;
    return r;
}

static const struct tm_type dbl = {.size = 8,
                                   .extent = 8,
                                   .nbasic = 1,
                                   .basic = TM_T_DOUBLE,
                                   .name = "double",
                                   .contig = 1,
                                   .psize = 8,
                                   .true_ub = 8,
                                   .align = 8,
                                   .nelem = 1};

/* A column of n doubles in rows of `row` doubles (MPI_Type_vector(n, 1, row)). */
static struct tm_type *column(size_t n, size_t row)
{
    struct tm_flat f;
    tm_flat_init(&f);
    for (size_t i = 0; i < n; i++)
        CHECK(tm_flat_add(&f, (ptrdiff_t)(i * row * 8), 1, &dbl) == 0, "flat add");
    struct tm_dtype *t = calloc(1, sizeof *t);
    CHECK(t && tm_flat_finish(&f, &t->t, 0, 0, 0, 0) == 0, "flat finish");
    atomic_init(&t->refs, 1);
    CHECK(t->t.vn == n, "a column is a regular map (vn %zu)", t->t.vn);
    return &t->t;
}

static unsigned char pat(size_t i, int s)
{
    return (unsigned char)(i * 13 + (size_t)s + (i >> 11));
}

/* A receive of cap bytes (layout dt, NULL: plain) at buf. */
static struct tm_request recv_req(void *buf, size_t cap, const struct tm_type *dt)
{
    struct tm_request r;
    memset(&r, 0, sizeof r);
    r.kind = TM_REQ_RECV;
    r.buf = buf;
    r.cap = cap;
    r.dt = dt;
    return r;
}

/* A contiguous copy of n bytes (into a buffer with guard bytes either side); returns whether
 * the helper's slot was published (its claim word moved). */
static int copy_plain(struct tm_rank *me, struct tm_rank *helper, size_t n, int salt)
{
    unsigned char *src = malloc(n), *dst = malloc(n + 128);
    CHECK(src && dst, "out of memory");
    for (size_t i = 0; i < n; i++)
        src[i] = pat(i, salt);
    memset(dst, 0xee, n + 128);
    /* no job in the slot: one published meanwhile leaves its chunk count there */
    if (helper) atomic_store(&helper->coop.claim, 0);
    struct tm_request rr = recv_req(dst + 64, n, NULL);
    tm_coop_copy_in(me, helper, &rr, src, NULL, n);
    for (size_t i = 0; i < n; i++)
        CHECK(dst[64 + i] == pat(i, salt), "%zu bytes: byte %zu expected %u got %u", n, i,
              pat(i, salt), dst[64 + i]);
    for (size_t i = 0; i < 64; i++)
        CHECK(dst[i] == 0xee && dst[n + 64 + i] == 0xee, "%zu bytes: a guard byte written", n);
    free(src);
    free(dst);
    return helper && atomic_load(&helper->coop.claim) != 0;
}

/* Which copies are shared: from the weight on, never with intra_coop_min 0, never with
 * oneself or nobody, not while another initiator holds the helper's slot. */
static void test_which(void)
{
    struct tm_rank *me = rank_new(), *h = rank_new();
    job.coop_min = 64 * 1024;
    CHECK(!copy_plain(me, h, 60000, 1), "a 60000-byte copy was shared (limit 64 KiB)");
    CHECK(copy_plain(me, h, 64 * 1024, 2), "a 64 KiB copy was not shared (limit 64 KiB)");
    uint64_t w = atomic_load(&h->coop.claim);
    CHECK((uint32_t)(w >> 32) >= 2 && (uint32_t)w >= (uint32_t)(w >> 32),
          "after the copy: %u of %u chunks claimed", (unsigned)(uint32_t)w, (unsigned)(w >> 32));
    CHECK(atomic_load(&h->coop.fin) == (uint32_t)(w >> 32) && atomic_load(&h->coop.busy) == 0,
          "after the copy: fin %u busy %d", atomic_load(&h->coop.fin), atomic_load(&h->coop.busy));
    CHECK(!copy_plain(me, me, 1 << 20, 3), "a copy was shared with the initiator itself");
    CHECK(!copy_plain(me, NULL, 1 << 20, 4), "no helper: copied");
    atomic_store(&h->coop.busy, 1);
    CHECK(!copy_plain(me, h, 1 << 20, 5), "shared with a helper another copy holds");
    atomic_store(&h->coop.busy, 0);
    job.coop_min = 0;
    CHECK(!copy_plain(me, h, 8 << 20, 6), "shared with intra_coop_min 0");

    /* strided: a column of 512 doubles (4 KiB of data, 512 blocks) weighs more than 64 KiB */
    job.coop_min = 64 * 1024;
    struct tm_type *col = column(512, 514), *small = column(64, 514);
    size_t cells = 512 * 514;
    double *m = malloc(cells * 8), *g = malloc(cells * 8);
    CHECK(m && g, "out of memory");
    for (size_t i = 0; i < cells; i++)
        m[i] = (double)i, g[i] = -1;
    /* Column to column: each sparse side is moved by its owner's core only, and a helper owns
     * at most one of them (handoff.h), so it is copied alone. */
    atomic_store(&h->coop.claim, 0);
    struct tm_request rr = recv_req(&g[3], 512 * 8, col);
    rr.owner = h;
    tm_coop_copy_in(me, h, &rr, &m[1], col, 512 * 8);
    CHECK(atomic_load(&h->coop.claim) == 0, "a column into a column was shared");
    for (size_t i = 0; i < cells; i++) {
        double want = i % 514 == 3 ? m[i - 2] : -1;
        CHECK(g[i] == want, "column: cell %zu expected %g got %g", i, want, g[i]);
    }
    /* Packed data into the helper's own column: shared. */
    double packed[512];
    for (size_t i = 0; i < 512; i++)
        packed[i] = 1000.0 + (double)i;
    tm_coop_copy_in(me, h, &rr, packed, NULL, 512 * 8);
    CHECK(atomic_load(&h->coop.claim) != 0, "packed data into the helper's column was not shared");
    for (size_t i = 0; i < cells; i++) {
        double want = i % 514 == 3 ? packed[i / 514] : -1;
        CHECK(g[i] == want, "into a column: cell %zu expected %g got %g", i, want, g[i]);
    }
    /* ... but not into a column of someone else's: the helper would write it from its core. */
    atomic_store(&h->coop.claim, 0);
    rr.owner = me;
    tm_coop_copy_in(me, h, &rr, packed, NULL, 512 * 8);
    CHECK(atomic_load(&h->coop.claim) == 0, "packed data into the initiator's column was shared");
    /* The helper's own column packed for the initiator's receive: shared. */
    double out[512];
    rr = recv_req(out, 512 * 8, NULL);
    rr.owner = me;
    tm_coop_copy_in(me, h, &rr, &m[1], col, 512 * 8);
    CHECK(atomic_load(&h->coop.claim) != 0, "the helper's column packed was not shared");
    for (size_t i = 0; i < 512; i++)
        CHECK(out[i] == m[i * 514 + 1], "column packed: element %zu", i);
    atomic_store(&h->coop.claim, 0);
    rr = recv_req(g, 64 * 8, NULL);
    tm_coop_copy_in(me, h, &rr, m, small, 64 * 8);
    CHECK(atomic_load(&h->coop.claim) == 0, "a column of 64 doubles was shared");
    for (size_t i = 0; i < 64; i++)
        CHECK(g[i] == m[i * 514], "small column packed: element %zu", i);
    tm_type_release(col);
    tm_type_release(small);
    free(m);
    free(g);
    free(me);
    free(h);
}

/* A helper that sleeps (wait.h: sleeping counted) is woken when a copy of 1 MiB or more is
 * published. */
static void test_wake(void)
{
    struct tm_rank *me = rank_new(), *h = rank_new();
    job.coop_min = 64 * 1024;
    atomic_store(&wakes, 0);
    atomic_store(&h->waker.sleeping, 1);
    CHECK(copy_plain(me, h, 1 << 20, 7), "not shared");
    CHECK(atomic_load(&wakes) == 1, "sleeping helper: %d wakes, expected 1", atomic_load(&wakes));
    /* a copy shorter than a wake-up is shared only with a helper that still spins */
    CHECK(copy_plain(me, h, 256 * 1024, 9), "not shared");
    CHECK(atomic_load(&wakes) == 1, "sleeping helper woken for 256 KiB");
    atomic_store(&h->waker.sleeping, 0);
    CHECK(copy_plain(me, h, 1 << 20, 8), "not shared");
    CHECK(atomic_load(&wakes) == 1, "awake helper woken");
    free(me);
    free(h);
}

/* A helper thread polls as a waiting rank does; the initiator shares copies with it until the
 * helper has taken chunks of both kinds (a contiguous and a strided copy), every copy
 * checked.  The helper needs only to run: the number of rounds bounds a machine where it
 * never gets a core. */
struct helper_arg {
    struct tm_rank *h;
    _Atomic int stop;
};

static void *helper_main(void *arg)
{
    struct helper_arg *a = arg;
    while (!atomic_load(&a->stop))
        tm_coop_poll(&a->h->coop, a->h);
    return NULL;
}

/* Whether a deadline `sec` seconds after *start (set on the first call) is still ahead: on a
 * loaded machine the helper thread may wait long for a core, and only its first chunk counts. */
static int within(struct timespec *start, double sec)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (!start->tv_sec && !start->tv_nsec) *start = now;
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9 <
           sec;
}

static void test_shared(void)
{
    struct tm_rank *me = rank_new(), *h = rank_new();
    job.coop_min = 64 * 1024;
    struct helper_arg a = {.h = h};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, helper_main, &a) == 0, "pthread_create");
    uint64_t helped = 0;
    int round;
    struct timespec t0 = {0, 0};
    for (round = 0; within(&t0, 60) && !atomic_load(&h->coop.helped); round++)
        copy_plain(me, h, (4 << 20) + (size_t)round * 8, round);
    helped = atomic_load(&h->coop.helped);
    CHECK(helped > 0, "the helper took no chunk of %d contiguous copies", round);

    size_t n = 2048, row = n + 2, cells = n * row;
    struct tm_type *col = column(n, row);
    double *m = malloc(cells * 8), *g = malloc(cells * 8);
    CHECK(m && g, "out of memory");
    for (size_t i = 0; i < cells; i++)
        m[i] = (double)i;
    uint64_t start = atomic_load(&h->coop.helped);
    for (size_t i = 0; i < cells; i++)
        g[i] = -1;
    /* packed data into the helper's own column (a sparse side is the owner's: coop.c) */
    struct timespec t1 = {0, 0};
    for (round = 0; within(&t1, 60) && atomic_load(&h->coop.helped) == start; round++) {
        struct tm_request rr = recv_req(&g[row - 1], n * 8, col);
        rr.owner = h;
        size_t from = (size_t)(round % 2);
        tm_coop_copy_in(me, h, &rr, &m[from], NULL, n * 8);
        /* the column, and its neighbours on either side left alone */
        for (size_t i = 0; i < n; i++) {
            double *at = &g[i * row + row - 1];
            CHECK(*at == m[i + from], "column round %d: row %zu expected %g got %g", round, i,
                  m[i + from], *at);
            CHECK(at[-1] == -1 && (i + 1 == n || at[1] == -1),
                  "column round %d: row %zu: a "
                  "neighbour written",
                  round, i);
            *at = -1;
        }
    }
    CHECK(atomic_load(&h->coop.helped) > start, "the helper took no chunk of %d column copies",
          round);
    atomic_store(&a.stop, 1);
    pthread_join(th, NULL);
    tm_type_release(col);
    free(m);
    free(g);
    free(me);
    free(h);
}

int main(void)
{
    test_which();
    test_wake();
    test_shared();
    printf("coop: all checks passed\n");
    return 0;
}
