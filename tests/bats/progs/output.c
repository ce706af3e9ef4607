/* Every rank writes two lines to stdout and one to stderr, and ends without a newline. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("out %d first\n", rank);
    fflush(stdout);
    fprintf(stderr, "err %d\n", rank);
    printf("out %d second\n", rank);
    printf("last %d", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
