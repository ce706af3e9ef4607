/* What a pooled library (OpenBLAS, OpenMP) reads when it loads: its constructor runs as the
 * job host loads the program, before any rank starts. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static char seen[2][32];

__attribute__((constructor)) static void at_load(void)
{
    const char *b = getenv("OPENBLAS_NUM_THREADS"), *o = getenv("OMP_NUM_THREADS");
    snprintf(seen[0], sizeof seen[0], "%s", b ? b : "unset");
    snprintf(seen[1], sizeof seen[1], "%s", o ? o : "unset");
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("at load: OPENBLAS_NUM_THREADS=%s OMP_NUM_THREADS=%s\n", seen[0], seen[1]);
    MPI_Finalize();
    return 0;
}
