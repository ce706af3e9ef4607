/* A correct program that only looks stuck: rank 0 computes for SECONDS (default 4) while every
 * other rank waits in MPI_Recv for its result (tag 5); then all finish and rank 0 prints
 * "done". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 4.0;
    volatile double acc = 0;
    if (rank == 0) {
        double end = mono_now() + seconds;
        while (mono_now() < end)
            for (int i = 0; i < 100000; i++)
                acc += i * 0.5;
        int r = acc > 0;
        for (int p = 1; p < size; p++)
            MPI_Send(&r, 1, MPI_INT, p, 5, MPI_COMM_WORLD);
    } else {
        int r;
        MPI_Recv(&r, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) puts("done");
    MPI_Finalize();
    return 0;
}
