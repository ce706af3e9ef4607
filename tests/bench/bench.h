/* bench.h: helpers shared by the TMPI benchmark programs (plain MPI C, built with tmpicc,
 * mpicc.openmpi and mpicc.mpich from the same source).
 *
 * Every program times itself with MPI_Wtime, checks what it received (a wrong answer calls
 * MPI_Abort), and prints one machine-readable line per measured point on rank 0:
 *     RESULT name=pingpong size=8 usec=0.49 ...
 * Iteration counts are calibrated at run time so that each point takes about BENCH_TARGET
 * seconds (argument -t), whatever the implementation's speed. */
#ifndef BENCH_H
#define BENCH_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double bench_target = 0.1; /* seconds per measured point (-t) */

#define BENCH_FAIL(...)                                                                            \
    do {                                                                                           \
        int r_;                                                                                    \
        MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                        \
        fprintf(stderr, "rank %d: VALIDATION FAILED at %s:%d: ", r_, __FILE__, __LINE__);          \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        fflush(stderr);                                                                            \
        MPI_Abort(MPI_COMM_WORLD, 3);                                                              \
    } while (0)

#define BENCH_CHECK(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) BENCH_FAIL(__VA_ARGS__);                                                      \
    } while (0)

static void bench_result(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("RESULT ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    fflush(stdout);
    va_end(ap);
}

/* Parses "-t SECONDS" and "-n ITERS" style options common to all programs; leaves others. */
static long bench_opt_long(int argc, char **argv, const char *name, long def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return atol(argv[i + 1]);
    return def;
}

static double bench_opt_double(int argc, char **argv, const char *name, double def)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return atof(argv[i + 1]);
    return def;
}

/* Pattern byte for position i of message number k: detects stale and misplaced data. */
static inline unsigned char bench_pat(size_t i, long k)
{
    return (unsigned char)(i * 31u + (unsigned long)k * 7u + 1u);
}

static void bench_fill(unsigned char *p, size_t n, long k)
{
    for (size_t i = 0; i < n; i++)
        p[i] = bench_pat(i, k);
}

/* Checks first, last and a stride of bytes (a full check of every byte of a 4 MiB message
 * per iteration would dominate the time being measured). */
static int bench_verify(const unsigned char *p, size_t n, long k)
{
    if (n == 0) return 1;
    size_t step = n > 4096 ? n / 61 : 1;
    for (size_t i = 0; i < n; i += step)
        if (p[i] != bench_pat(i, k)) return 0;
    return p[n - 1] == bench_pat(n - 1, k);
}

/* Runs fn(ctx, iters) with doubling iteration counts until it takes at least `chunk` / 4
 * seconds on the slowest rank, then returns the count expected to take `chunk`. All ranks of
 * comm agree (MPI_Allreduce MAX outside the timed region). */
typedef void (*bench_fn)(void *ctx, long iters);

static long bench_calibrate(MPI_Comm comm, bench_fn fn, void *ctx, double chunk, long max_iters)
{
    long n = 1;
    for (;;) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        fn(ctx, n);
        double tl = MPI_Wtime() - t0, t;
        MPI_Allreduce(&tl, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (t >= chunk / 4 || n >= max_iters) {
            double want = t > 0 ? chunk / t * (double)n : (double)max_iters;
            long w = want < 1 ? 1 : (long)want;
            return w > max_iters ? max_iters : w;
        }
        n *= 2;
    }
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define BENCH_CHUNKS 5

/* One measured point: calibrate a chunk of about bench_target / BENCH_CHUNKS seconds, then
 * time BENCH_CHUNKS chunks, each started by a barrier. A chunk's time is the longest any rank
 * took from the barrier to the end of its calls (so a root that runs ahead of a
 * non-synchronising Bcast does not count as done). Returns the median chunk's seconds per
 * call: a transient stall spoils one chunk, not the point. *iters_out gets the total number
 * of timed calls. */
static double bench_measure(MPI_Comm comm, bench_fn fn, void *ctx, long max_iters, long *iters_out)
{
    long n = bench_calibrate(comm, fn, ctx, bench_target / BENCH_CHUNKS, max_iters);
    double mine[BENCH_CHUNKS], per[BENCH_CHUNKS];
    for (int i = 0; i < BENCH_CHUNKS; i++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        fn(ctx, n);
        mine[i] = MPI_Wtime() - t0;
    }
    MPI_Allreduce(mine, per, BENCH_CHUNKS, MPI_DOUBLE, MPI_MAX, comm);
    for (int i = 0; i < BENCH_CHUNKS; i++)
        per[i] /= (double)n;
    qsort(per, BENCH_CHUNKS, sizeof per[0], bench_cmp_double);
    if (iters_out) *iters_out = n * BENCH_CHUNKS;
    return per[BENCH_CHUNKS / 2];
}

/* Everybody keeps exchanging tiny messages with a neighbour for `sec` seconds: processes and
 * threads are all up and scheduled before anything is measured. */
static void bench_warmup(MPI_Comm comm, double sec)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double t0 = MPI_Wtime();
    int go = 1, x = 0;
    while (go) {
        MPI_Allreduce(&rank, &x, 1, MPI_INT, MPI_SUM, comm);
        if (x != size * (size - 1) / 2) BENCH_FAIL("warm-up Allreduce gave %d", x);
        go = rank == 0 ? MPI_Wtime() - t0 < sec : 0;
        MPI_Bcast(&go, 1, MPI_INT, 0, comm);
    }
}

static void bench_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    bench_target = bench_opt_double(*argc, *argv, "-t", bench_target);
}

#endif
