/* Rank 0 prints its argc, each argument and the variables named by TMPI_TEST_SHOW. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("argc=%d\n", argc);
        for (int i = 1; i < argc; i++)
            printf("arg%d=%s\n", i, argv[i]);
        for (const char *v = getenv("TMPI_TEST_SHOW"); v && *v;) {
            size_t n = strcspn(v, ",");
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)n, v);
            const char *val = getenv(name);
            printf("env %s=%s\n", name, val ? val : "(unset)");
            v += n + (v[n] == ',');
        }
    }
    MPI_Finalize();
    return 0;
}
