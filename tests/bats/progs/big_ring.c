/* A token goes once round the ring of all ranks, each rank adding its rank, then an Allreduce
 * sums the ranks; small per rank so that 16,384 ranks fit one node.  Rank 0 prints
 * "big ring ok SIZE" when both sums are right. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long token = 0, expect = (long)size * (size - 1) / 2;
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank;
        MPI_Send(&token, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
    }
    long mine = rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (token != expect || sum != expect) {
            printf("big ring: expected %ld, got token %ld allreduce %ld\n", expect, token, sum);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        printf("big ring ok %d\n", size);
    }
    MPI_Finalize();
    return 0;
}
