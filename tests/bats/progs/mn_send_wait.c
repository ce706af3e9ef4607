/* Rank 0 sends 64 KiB to the last rank (on another node when there are several), which
 * receives it and prints "received"; then every rank waits for a message that never comes, so
 * only a cancel ends the job (its traffic is there to be seen while it runs). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    static char buf[65536];
    int rank, size, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) MPI_Send(buf, (int)sizeof buf, MPI_CHAR, size - 1, 1, MPI_COMM_WORLD);
    if (rank == size - 1) {
        MPI_Recv(buf, (int)sizeof buf, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        puts("received");
        fflush(stdout);
    }
    MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
