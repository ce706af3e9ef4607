/* rma_passive.c — passive-target progress: rank 0 computes for two seconds without calling MPI
 * while every other rank Puts, Gets and Accumulates into its window and flushes; each flush
 * must complete well within that time (< 500 ms: a bound on progress, not on speed), also when
 * the origin is on another node and only that node's receive daemon can apply the operation. */
#include <unistd.h>

#include "check.h"

#define OPS 20
#define COMPUTE_S 2.0
#define FLUSH_MAX_S 0.5

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long long *base;
    MPI_Win win;
    CHECK_MPI(MPI_Win_allocate((size + 1) * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                               MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i <= size; i++)
        base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* No MPI call here: only the agent's receive path can serve the origins. */
        double t0 = MPI_Wtime(), end = t0;
        volatile double acc = 1.0;
        while (end - t0 < COMPUTE_S) {
            for (int k = 0; k < 100000; k++)
                acc = acc * 1.0000001 + 1e-9;
            end = MPI_Wtime();
        }
        (void)acc;
    } else {
        double worst = 0, started = MPI_Wtime();
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (int i = 0; i < OPS; i++) {
            long long v = rank * 1000 + i, one = 1, back = -1;
            CHECK_MPI(MPI_Put(&v, 1, MPI_LONG_LONG, 0, rank, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
            double t = MPI_Wtime();
            CHECK_MPI(MPI_Win_flush(0, win));
            CHECK_MPI(MPI_Get(&back, 1, MPI_LONG_LONG, 0, rank, 1, MPI_LONG_LONG, win));
            CHECK_MPI(MPI_Win_flush(0, win));
            t = MPI_Wtime() - t;
            if (t > worst) worst = t;
            CHECK(back == v, "get after put+flush: expected %lld got %lld", v, back);
            usleep(10000);
        }
        CHECK_MPI(MPI_Win_unlock(0, win));
        double all = MPI_Wtime() - started;
        CHECK(worst < FLUSH_MAX_S, "slowest flush took %.3f s (bound %.1f s)", worst, FLUSH_MAX_S);
        CHECK(all < COMPUTE_S, "the %d operations took %.3f s: not done while rank 0 computed", OPS,
              all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(base[0] == (long long)OPS * (size - 1), "accumulated %lld, expected %lld", base[0],
              (long long)OPS * (size - 1));
        for (int r = 1; r < size; r++)
            CHECK(base[r] == r * 1000 + OPS - 1, "slot %d: expected %d got %lld", r,
                  r * 1000 + OPS - 1, base[r]);
    }
    CHECK_MPI(MPI_Win_free(&win));
    return finish_ok();
}
