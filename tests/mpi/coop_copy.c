/* coop_copy.c — large copies that both ranks of a match share (libclient/intra/coop.h): pairs
 * of ranks exchange large contiguous and strided messages both ways at once, with the receives
 * posted before the sends and after them, truncated, from several threads, persistent, and a
 * cancelled send; every element is checked, and every byte a receive must not touch. */
#include <pthread.h>
#include <string.h>

#include "check.h"

static int rank, size, partner;

static unsigned char pat(size_t i, int s)
{
    return (unsigned char)(i * 7 + (size_t)s * 131 + (i >> 12));
}

/* Both of a pair at the same point (a rank without a partner pairs with itself). */
static void pair_sync(int tag)
{
    CHECK_MPI(MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, tag, NULL, 0, MPI_BYTE, partner, tag,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* One exchange with the partner: the receive posted before the send (posted_first) or after
 * the partner's send is queued. */
static void exchange(void *sbuf, int scount, MPI_Datatype st, void *rbuf, int rcount,
                     MPI_Datatype rt, int tag, int posted_first, MPI_Status *ret_st)
{
    MPI_Request rq[2];
    if (posted_first) {
        CHECK_MPI(MPI_Irecv(rbuf, rcount, rt, partner, tag, MPI_COMM_WORLD, &rq[0]));
        pair_sync(tag + 1);
        CHECK_MPI(MPI_Isend(sbuf, scount, st, partner, tag, MPI_COMM_WORLD, &rq[1]));
    } else {
        CHECK_MPI(MPI_Isend(sbuf, scount, st, partner, tag, MPI_COMM_WORLD, &rq[1]));
        pair_sync(tag + 1);
        CHECK_MPI(MPI_Irecv(rbuf, rcount, rt, partner, tag, MPI_COMM_WORLD, &rq[0]));
    }
    MPI_Status st2[2];
    CHECK_MPI(MPI_Waitall(2, rq, st2));
    *ret_st = st2[0];
}

static void contiguous(void)
{
    static const size_t sizes[] = {65536 + 4097,       (256 << 10) - 1, 256 << 10,
                                   (256 << 10) + 4097, (1 << 20) + 3,   (8 << 20) + 5};
    size_t max = (8 << 20) + 5 + 64;
    unsigned char *a = malloc(max), *b = malloc(max);
    CHECK(a && b, "out of memory");
    for (int first = 0; first < 2; first++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            size_t n = sizes[k];
            int salt = (int)k + 10 * first;
            for (size_t i = 0; i < n; i++)
                a[i] = pat(i, rank + salt);
            memset(b, 0xee, max);
            MPI_Status st;
            exchange(a, (int)n, MPI_BYTE, b, (int)n + 64, MPI_BYTE, 100 + (int)k * 2, first, &st);
            int cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == (int)n, "contiguous %zu (posted first %d): count %d", n, first, cnt);
            for (size_t i = 0; i < n; i++)
                CHECK(b[i] == pat(i, partner + salt),
                      "contiguous %zu (posted first %d): byte %zu expected %u got %u", n, first, i,
                      pat(i, partner + salt), b[i]);
            for (size_t i = n; i < n + 64; i++)
                CHECK(b[i] == 0xee, "contiguous %zu: byte %zu past the message written", n, i);
        }
    free(a);
    free(b);
}

/* A matrix of nr x nc doubles; column j as MPI_Type_vector(nr, 1, nc). */
static double val(int r, size_t i, size_t j)
{
    return r * 1e9 + (double)i * 1e4 + (double)j;
}

static void strided(void)
{
    /* rows x row length: a halo's column, and a long column of narrow rows (4096 blocks:
     * above intra_coop_min's default weight, so shared when the helper is the column's owner:
     * coop.c) */
    static const int dims[][2] = {{512, 514}, {4096, 18}};
    for (int d = 0; d < 2; d++) {
        int n = dims[d][0], nc = dims[d][1];
        size_t cells = (size_t)n * (size_t)nc;
        double *m = malloc(cells * sizeof *m), *g = malloc(cells * sizeof *g);
        double *flat = malloc((size_t)n * sizeof *flat);
        CHECK(m && g && flat, "out of memory");
        for (size_t i = 0; i < (size_t)n; i++)
            for (size_t j = 0; j < (size_t)nc; j++)
                m[i * (size_t)nc + j] = val(rank, i, j);
        MPI_Datatype col, idx;
        CHECK_MPI(MPI_Type_vector(n, 1, nc, MPI_DOUBLE, &col));
        CHECK_MPI(MPI_Type_commit(&col));
        /* the same column as an indexed type of two-element blocks (another block length:
         * not the regular fast path on both sides) */
        int *bl = malloc((size_t)n / 2 * sizeof *bl), *dp = malloc((size_t)n / 2 * sizeof *dp);
        CHECK(bl && dp, "out of memory");
        for (int i = 0; i < n / 2; i++)
            bl[i] = 2, dp[i] = i * 2 * nc;
        CHECK_MPI(MPI_Type_indexed(n / 2, bl, dp, MPI_DOUBLE, &idx));
        CHECK_MPI(MPI_Type_commit(&idx));
        free(bl);
        free(dp);
        for (int first = 0; first < 2; first++) {
            /* column 1 of the sender into column nc - 1 of the receiver */
            for (size_t i = 0; i < cells; i++)
                g[i] = -1.0;
            MPI_Status st;
            exchange(&m[1], 1, col, &g[nc - 1], 1, col, 300 + 10 * d, first, &st);
            int cnt = -1;
            MPI_Get_count(&st, col, &cnt);
            CHECK(cnt == 1, "column %d: count %d", n, cnt);
            for (size_t i = 0; i < (size_t)n; i++)
                for (size_t j = 0; j < (size_t)nc; j++) {
                    double want = j == (size_t)nc - 1 ? val(partner, i, 1) : -1.0;
                    CHECK(g[i * (size_t)nc + j] == want,
                          "column %d (posted first %d): cell %zu,%zu expected %g got %g", n, first,
                          i, j, want, g[i * (size_t)nc + j]);
                }
            /* a column into contiguous doubles, and back into a column */
            for (size_t i = 0; i < (size_t)n; i++)
                flat[i] = -2.0;
            exchange(&m[2], 1, col, flat, n, MPI_DOUBLE, 304 + 10 * d, first, &st);
            for (size_t i = 0; i < (size_t)n; i++)
                CHECK(flat[i] == val(partner, i, 2), "column %d to doubles: element %zu", n, i);
            for (size_t i = 0; i < cells; i++)
                g[i] = -1.0;
            exchange(flat, n, MPI_DOUBLE, &g[0], 1, col, 306 + 10 * d, first, &st);
            for (size_t i = 0; i < (size_t)n; i++)
                CHECK(g[i * (size_t)nc] == val(rank, i, 2) && g[i * (size_t)nc + 1] == -1.0,
                      "doubles to column %d (posted first %d): row %zu", n, first, i);
            /* column to indexed */
            for (size_t i = 0; i < cells; i++)
                g[i] = -1.0;
            exchange(&m[3], 1, col, &g[4], 1, idx, 308 + 10 * d, first, &st);
            /* element k of the column lands in row k - k % 2, column 4 + k % 2 */
            for (size_t k = 0; k < (size_t)n; k++) {
                size_t at = (k - k % 2) * (size_t)nc + 4 + k % 2;
                CHECK(g[at] == val(partner, k, 3) && g[(k | 1) * (size_t)nc + 4] == -1.0,
                      "column %d to indexed (posted first %d): element %zu", n, first, k);
            }
        }
        MPI_Type_free(&col);
        MPI_Type_free(&idx);
        free(m);
        free(g);
        free(flat);
    }
}

/* A message larger than the receive: MPI_ERR_TRUNCATE, the buffer's worth delivered, nothing
 * beyond it written. */
static void truncation(void)
{
    size_t n = (2 << 20) + 100, cap = (1 << 20) + 7;
    unsigned char *a = malloc(n), *b = malloc(n);
    CHECK(a && b, "out of memory");
    for (size_t i = 0; i < n; i++)
        a[i] = pat(i, rank + 77);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int first = 0; first < 2; first++) {
        memset(b, 0xee, n);
        MPI_Request rq[2];
        int tag = 400 + first * 2;
        if (first) {
            CHECK_MPI(MPI_Irecv(b, (int)cap, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &rq[0]));
            pair_sync(tag + 1);
            CHECK_MPI(MPI_Isend(a, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &rq[1]));
        } else {
            CHECK_MPI(MPI_Isend(a, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &rq[1]));
            pair_sync(tag + 1);
            CHECK_MPI(MPI_Irecv(b, (int)cap, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &rq[0]));
        }
        MPI_Status st[2];
        int e = MPI_Waitall(2, rq, st);
        CHECK(e == MPI_ERR_IN_STATUS, "truncation: Waitall returned %d", e);
        CHECK(st[0].MPI_ERROR == MPI_ERR_TRUNCATE, "truncation: receive error %d", st[0].MPI_ERROR);
        CHECK(st[1].MPI_ERROR == MPI_SUCCESS, "truncation: send error %d", st[1].MPI_ERROR);
        int cnt = -1;
        MPI_Get_count(&st[0], MPI_BYTE, &cnt);
        CHECK(cnt == (int)cap, "truncation: count %d, expected %zu", cnt, cap);
        for (size_t i = 0; i < cap; i++)
            CHECK(b[i] == pat(i, partner + 77), "truncation: byte %zu", i);
        for (size_t i = cap; i < n; i++)
            CHECK(b[i] == 0xee, "truncation: byte %zu past the receive buffer written", i);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(a);
    free(b);
}

/* Several threads of each rank exchange at once, each on its own tag. */
#define NTHREADS 3
struct thr {
    int id;
};

static void *thread_main(void *arg)
{
    struct thr *t = arg;
    size_t n = (3 << 20) + (size_t)t->id * 4099;
    unsigned char *a = malloc(n), *b = malloc(n);
    CHECK(a && b, "out of memory");
    for (int round = 0; round < 3; round++) {
        int salt = t->id * 10 + round;
        for (size_t i = 0; i < n; i++)
            a[i] = pat(i, rank + salt);
        memset(b, 0, n);
        MPI_Request rq[2];
        int tag = 500 + t->id;
        CHECK_MPI(MPI_Irecv(b, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_MPI(MPI_Isend(a, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &rq[1]));
        CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == pat(i, partner + salt), "thread %d round %d: byte %zu", t->id, round, i);
    }
    free(a);
    free(b);
    return NULL;
}

static void threads(int level)
{
    if (level < MPI_THREAD_MULTIPLE) return;
    pthread_t th[NTHREADS];
    struct thr t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        t[i].id = i;
        CHECK(pthread_create(&th[i], NULL, thread_main, &t[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
}

/* Persistent requests started several times, and a large send cancelled unmatched. */
static void persistent_and_cancel(void)
{
    size_t n = (1 << 20) + 12;
    unsigned char *a = malloc(n), *b = malloc(n);
    CHECK(a && b, "out of memory");
    MPI_Request rq[2];
    CHECK_MPI(MPI_Recv_init(b, (int)n, MPI_BYTE, partner, 600, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Send_init(a, (int)n, MPI_BYTE, partner, 600, MPI_COMM_WORLD, &rq[1]));
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < n; i++)
            a[i] = pat(i, rank + round);
        memset(b, 0, n);
        CHECK_MPI(MPI_Startall(2, rq));
        MPI_Status st[2];
        CHECK_MPI(MPI_Waitall(2, rq, st));
        int cnt = -1;
        MPI_Get_count(&st[0], MPI_BYTE, &cnt);
        CHECK(cnt == (int)n, "persistent round %d: count %d", round, cnt);
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == pat(i, partner + round), "persistent round %d: byte %zu", round, i);
        pair_sync(601); /* a's next pattern only once the partner has it */
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);

    /* Cancel takes back a message no receive has matched, on this node or on another (the
     * receiver's node takes it out of its queue: net/cancel.c) */
    MPI_Request s;
    CHECK_MPI(MPI_Isend(a, (int)n, MPI_BYTE, partner, 602, MPI_COMM_WORLD, &s));
    CHECK_MPI(MPI_Cancel(&s));
    MPI_Status st;
    CHECK_MPI(MPI_Wait(&s, &st));
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled, "a large send nobody received was not cancelled");
    pair_sync(603);
    /* nothing of it is left to match: a message sent now is the one received */
    a[0] = 42;
    unsigned char got = 0;
    CHECK_MPI(MPI_Sendrecv(a, 1, MPI_BYTE, partner, 602, &got, 1, MPI_BYTE, partner, 602,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == 42, "after the cancel: received %u", got);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    int level;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    partner = rank ^ 1;
    if (partner >= size) partner = rank;
    contiguous();
    strided();
    truncation();
    persistent_and_cancel();
    threads(level);
    return finish_ok();
}
