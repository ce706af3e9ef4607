/* An atexit handler prints: it runs when the agent unloads the rank's image. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int rank;
static void bye(void)
{
    printf("rank %d: atexit handler ran\n", rank);
}
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    atexit(bye);
    MPI_Finalize();
    return 0;
}
