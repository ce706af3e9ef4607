/* test_coll.c — Barrier, Bcast, Reduce, Allreduce on 1..64 ranks: results, MPI_IN_PLACE,
 * pair types, determinism, and back-to-back collectives with changing roots. */
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const int sizes[] = {1, 2, 3, 4, 7, 16, 64};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static int run_sizes(th_rank_fn fn)
{
    for (int i = 0; i < NSIZES; i++) {
        struct th_opts o = {.nranks = sizes[i]};
        struct th_result res;
        if (th_run(&o, fn, NULL, &res)) {
            fprintf(stderr, "  with %d ranks: rank %d failed (code %d)%s%s\n", sizes[i],
                    res.failed_rank, res.code, res.aborted ? ": " : "",
                    res.aborted ? res.abort_why : "");
            return 1;
        }
    }
    return 0;
}

/* Barrier: nobody leaves round k before everyone entered it. */
static int rank_barrier(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static _Atomic int entered[100];
    if (rank == 0) {
        for (int i = 0; i < 100; i++)
            atomic_store(&entered[i], 0);
    }
    TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < 100; k++) {
        atomic_fetch_add(&entered[k], 1);
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        int e = atomic_load(&entered[k]);
        TH_CHECK(e == size, "barrier %d: left with %d of %d ranks entered", k, e, size);
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_barrier(void)
{
    return run_sizes(rank_barrier);
}

static int rank_bcast(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static const int counts[] = {0, 1, 3, 1000, 300000};
    int *buf = malloc(300000 * sizeof(int));
    for (int round = 0; round < 10; round++) {
        int root = (round * 7) % size;
        int n = counts[round % 5];
        for (int i = 0; i < n; i++)
            buf[i] = rank == root ? i * 3 + round : -1;
        TH_MPI(MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            TH_CHECK(buf[i] == i * 3 + round, "round %d root %d: element %d expected %d got %d",
                     round, root, i, i * 3 + round, buf[i]);
    }
    free(buf);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_bcast(void)
{
    return run_sizes(rank_bcast);
}

/* Bcasts back to back with a rotating root while one member lags (it yields its core now and
 * then): faster members run rounds ahead, and every root scribbles over its buffer the moment
 * its Bcast returns, so a root that left before every copy was made shows up as a wrong value.
 * A small Allreduce after each Bcast, checked and scribbled over the same way. */
static int rank_bcast_lag(int rank, int size, void *arg)
{
    (void)arg;
    TH_MPI(MPI_Init(NULL, NULL));
    int buf[64];
    for (int round = 0; round < 400; round++) {
        int root = round % size, n = 1 + round % 64;
        for (int i = 0; i < n; i++)
            buf[i] = rank == root ? round * 100 + i : -1;
        if (rank == size - 1 && round % 3 == 0) sched_yield();
        TH_MPI(MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            TH_CHECK(buf[i] == round * 100 + i, "round %d root %d: element %d is %d", round, root,
                     i, buf[i]);
            buf[i] = -7;
        }
        /* small Allreduces (one synchronisation, one shared result buffer),
         * the same lagging member, every input and output scribbled over on return */
        int in[3], out[3], m = 1 + round % 3;
        for (int i = 0; i < m; i++)
            in[i] = rank + round + i;
        TH_MPI(MPI_Allreduce(in, out, m, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < m; i++) {
            int want = size * (size - 1) / 2 + size * (round + i);
            TH_CHECK(out[i] == want, "round %d allreduce element %d: %d, expected %d", round, i,
                     out[i], want);
            in[i] = out[i] = -9;
        }
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_bcast_lag(void)
{
    return run_sizes(rank_bcast_lag);
}

static int rank_reduce(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    static const int counts[] = {0, 1, 5, 1000, 100000};
    int maxn = 100000;
    int *in = malloc((size_t)maxn * sizeof(int)), *out = malloc((size_t)maxn * sizeof(int));
    double *din = malloc((size_t)maxn * sizeof(double));
    double *dout = malloc((size_t)maxn * sizeof(double));
    for (int round = 0; round < 10; round++) {
        int n = counts[round % 5], root = (round * 3) % size;
        for (int i = 0; i < n; i++) {
            in[i] = rank + i;
            out[i] = -7;
        }
        /* Reduce SUM */
        TH_MPI(MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < n; i++)
                TH_CHECK(out[i] == size * (size - 1) / 2 + size * i,
                         "reduce round %d elem %d: expected %d got %d", round, i,
                         size * (size - 1) / 2 + size * i, out[i]);
        /* Reduce IN_PLACE at root, MAX */
        for (int i = 0; i < n; i++)
            out[i] = rank * 2 - i;
        TH_MPI(MPI_Reduce(rank == root ? MPI_IN_PLACE : out, rank == root ? out : NULL, n, MPI_INT,
                          MPI_MAX, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < n; i++)
                TH_CHECK(out[i] == (size - 1) * 2 - i,
                         "reduce in place elem %d: expected %d got %d", i, (size - 1) * 2 - i,
                         out[i]);
        /* Allreduce SUM */
        for (int i = 0; i < n; i++)
            out[i] = -1;
        TH_MPI(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            TH_CHECK(out[i] == size * (size - 1) / 2 + size * i,
                     "allreduce elem %d: expected %d got %d", i, size * (size - 1) / 2 + size * i,
                     out[i]);
        /* Allreduce IN_PLACE, MIN */
        for (int i = 0; i < n; i++)
            out[i] = 100 - rank + i;
        TH_MPI(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            TH_CHECK(out[i] == 100 - (size - 1) + i,
                     "allreduce in place elem %d: expected %d got %d", i, 100 - (size - 1) + i,
                     out[i]);
        /* doubles: the same bits on every rank (deterministic order) */
        for (int i = 0; i < n; i++)
            din[i] = 1.0 / (rank + 1 + i);
        TH_MPI(MPI_Allreduce(din, dout, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        double ref = 0;
        if (n) {
            for (int r = size - 1; r >= 0; r--)
                ref = 1.0 / (r + 1) + ref;
            TH_CHECK(memcmp(&ref, &dout[0], sizeof ref) == 0,
                     "double sum: expected %.17g got %.17g", ref, dout[0]);
        }
        double first = n ? dout[n - 1] : 0, root_first = first;
        TH_MPI(MPI_Bcast(&root_first, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        TH_CHECK(memcmp(&first, &root_first, sizeof first) == 0,
                 "ranks disagree on the sum: %.17g vs %.17g", first, root_first);
    }
    /* MAXLOC on DOUBLE_INT */
    struct {
        double v;
        int i;
    } p = {(double)((rank * 7) % size), rank}, q = {-1, -1};
    TH_MPI(MPI_Allreduce(&p, &q, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    double best = -1;
    int bi = -1;
    for (int r = 0; r < size; r++)
        if ((double)((r * 7) % size) > best) {
            best = (double)((r * 7) % size);
            bi = r;
        }
    TH_CHECK(q.v == best && q.i == bi, "MAXLOC: expected (%g,%d) got (%g,%d)", best, bi, q.v, q.i);
    free(in);
    free(out);
    free(din);
    free(dout);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_reduce(void)
{
    return run_sizes(rank_reduce);
}

/* Collectives on two communicators interleaved, p2p traffic in between. */
static int rank_mixed(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    MPI_Comm dup;
    TH_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int k = 0; k < 50; k++) {
        int a = rank, b = 1, sa = 0, sb = 0;
        TH_MPI(MPI_Allreduce(&a, &sa, 1, MPI_INT, MPI_SUM, k % 2 ? dup : MPI_COMM_WORLD));
        TH_MPI(MPI_Allreduce(&b, &sb, 1, MPI_INT, MPI_SUM, k % 2 ? MPI_COMM_WORLD : dup));
        TH_CHECK(sa == size * (size - 1) / 2 && sb == size, "round %d: got %d and %d", k, sa, sb);
        int v = k, w = -1;
        TH_MPI(MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, k, &w, 1, MPI_INT,
                            (rank + size - 1) % size, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        TH_CHECK(w == k, "ring round %d: got %d", k, w);
    }
    TH_MPI(MPI_Comm_free(&dup));
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_mixed(void)
{
    return run_sizes(rank_mixed);
}

/* Thousands of ranks on a few cores: collectives must neither crawl nor use O(n^2) memory. */
static int rank_many(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    for (int k = 0; k < 3; k++) {
        TH_MPI(MPI_Barrier(MPI_COMM_WORLD));
        long v = rank, sum = 0;
        TH_MPI(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        TH_CHECK(sum == (long)size * (size - 1) / 2, "allreduce: expected %ld got %ld",
                 (long)size * (size - 1) / 2, sum);
        int b = rank == k ? 1234 + k : 0;
        TH_MPI(MPI_Bcast(&b, 1, MPI_INT, k, MPI_COMM_WORLD));
        TH_CHECK(b == 1234 + k, "bcast: expected %d got %d", 1234 + k, b);
    }
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_many(void)
{
    struct th_opts o = {.nranks = 4096};
    struct th_result res;
    if (th_run(&o, rank_many, NULL, &res)) {
        fprintf(stderr, "  rank %d failed (code %d)\n", res.failed_rank, res.code);
        return 1;
    }
    printf("  4096 ranks: %.3f s\n", res.seconds);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {
        {"barrier", t_barrier}, {"bcast", t_bcast}, {"bcast_laggard", t_bcast_lag},
        {"reduce", t_reduce},   {"mixed", t_mixed}, {"many", t_many},
        {NULL, NULL},
    };
    return th_main(argc, argv, tests);
}
