/* Every rank creates DIR/rank.R (DIR = argv[1]): a test can tell which ranks ran at all. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank;
    char path[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof path, "%s/rank.%d", argc > 1 ? argv[1] : ".", rank);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    MPI_Finalize();
    return 0;
}
