/* hello: the launch and memory job. Every rank prints one line; rank 0 checks a sum over all
 * ranks. With "-hold FILE" every rank, after a barrier, waits (sleeping, not spinning) while
 * FILE exists -- the driver measures memory during that time -- then all meet in a barrier
 * and end. Rank 0 prints "HOLDING" (flushed) once every rank is inside the hold. */
#include "bench.h"
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *hold = NULL;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-hold") == 0) hold = argv[i + 1];
    printf("hello from rank %d of %d\n", rank, size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    /* in 64 bits: size * (size - 1) overflows an int from 46,341 ranks on (the sum itself
     * fits up to 65,536) */
    long long want = (long long)size * (size - 1) / 2;
    if (sum != want) BENCH_FAIL("sum of ranks %d, want %lld", sum, want);
    if (hold) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            printf("HOLDING\n");
            fflush(stdout);
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        while (access(hold, F_OK) == 0)
            nanosleep(&ts, NULL);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
