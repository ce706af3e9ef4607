/* Rank 1 (or the rank named by argv[1]) raises SIGUSR1 with no handler for it; the others
 * wait for a message that never comes.  The job must end naming that rank. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == (argc > 1 ? atoi(argv[1]) : 1)) raise(SIGUSR1);
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
