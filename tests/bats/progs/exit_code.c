/* Rank RANK (argv[2], default 0) returns CODE (argv[1]); the others return 0. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int code = argc > 1 ? atoi(argv[1]) : 0;
    int who = argc > 2 ? atoi(argv[2]) : 0;
    MPI_Finalize();
    return rank == who ? code : 0;
}
