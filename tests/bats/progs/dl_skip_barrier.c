/* A collective one rank skips: every rank but 1 enters MPI_Barrier, rank 1 waits in MPI_Recv
 * for a message from rank 0 (tag 3) that rank 0 sends only after the barrier. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
