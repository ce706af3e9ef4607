/* A classic deadlock: ranks 0 and 1 both receive first (tag 7), so neither ever sends.  Rank 0
 * prints "started" first; ranks beyond 1 finish at once. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        puts("started");
        fflush(stdout);
    }
    if (rank < 2) {
        MPI_Recv(&x, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&x, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
