/* Rank 0 prints "started"; then every rank waits in MPI for a message that never comes, so
 * only a cancel (or a timeout) ends the job. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        puts("started");
        fflush(stdout);
    }
    MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
