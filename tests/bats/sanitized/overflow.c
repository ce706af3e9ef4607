/* Rank 1 writes one byte past a heap block after a barrier: under -fsanitize=address its report
 * must reach the launcher whole, and every rank's line before it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d before\n", rank);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && argc > 1) {
        char *p = malloc(8);
        volatile int i = 8;
        p[i] = 1;
        printf("not reached %d\n", p[0]);
        free(p);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d done\n", rank);
    MPI_Finalize();
    return 0;
}
