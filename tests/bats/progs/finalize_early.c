/* An erroneous program: rank 0 calls MPI_Finalize while the others wait in a collective on
 * MPI_COMM_WORLD (argv[1]: allreduce, the default, or bcast with root 0).  The job must end
 * with an error naming both, never crash. */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, v = 1, r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        if (argc > 1 && strcmp(argv[1], "bcast") == 0)
            MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
        else
            MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
