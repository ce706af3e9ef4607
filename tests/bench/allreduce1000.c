/* allreduce1000: the global reduction benchmark of seed 002 (Bjørndalen et al., Fig. 4),
 * written afresh: 1000 MPI_Allreduce calls of one int (MPI_SUM) where every rank contributes
 * the iteration number i, so the result must be i * P; checked on every iteration (a wrong
 * sum aborts). Prints  RESULT name=allreduce1000 ranks=P iters=1000 usec=AVERAGE_PER_CALL
 * (-i ITERS changes the count). */
#include "bench.h"

int main(int argc, char **argv)
{
    bench_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = (int)bench_opt_long(argc, argv, "-i", 1000);
    int hit = 1, ghit = 0;
    /* one untimed call so every rank has started */
    MPI_Allreduce(&hit, &ghit, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (ghit != size) BENCH_FAIL("first Allreduce gave %d, want %d", ghit, size);
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Allreduce(&i, &ghit, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (ghit != i * size) BENCH_FAIL("iteration %d: %d != %d", i, ghit, i * size);
    }
    double t2 = MPI_Wtime();
    if (rank == 0)
        bench_result("name=allreduce1000 ranks=%d iters=%d usec=%.4f", size, iters,
                     (t2 - t1) / iters * 1e6);
    MPI_Finalize();
    return 0;
}
