#include <mpi.h>
#include <stdio.h>

/* Every rank adds its rank + 1: the sum is size * (size + 1) / 2 everywhere. */
int main(int argc, char **argv)
{
    int rank, size, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size + 1) / 2) {
        printf("rank %d: sum %d, expected %d\n", rank, sum, size * (size + 1) / 2);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("sum over %d ranks is %d\nOK\n", size, sum);
    MPI_Finalize();
    return 0;
}
