/* test_noagent.c — MPI_Init outside an agent (no tmpi_svc table in the process) must say how
 * to start the program and exit 1 (meson expects this test to fail). */
#include <stdio.h>

#include "mpi.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    fprintf(stderr, "MPI_Init returned outside an agent\n");
    return 0;
}
