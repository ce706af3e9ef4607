/* For concurrent jobs: each rank counts in a global and reports it with the job's tag. */
#include <mpi.h>
#include <stdio.h>

static int counter;

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 200; i++) {
        counter++;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    printf("%s rank %d counter %d\n", argc > 1 ? argv[1] : "?", rank, counter);
    MPI_Finalize();
    return counter == 200 ? 0 : 1;
}
