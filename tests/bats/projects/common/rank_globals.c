/* rank_globals — the program every project in tests/bats/projects/ builds (CMake, Meson,
 * pkg-config with make, autotools, tmpicc -o).  Each rank bumps a global of the program and one
 * of a library once, then all compare: with private globals every rank sees 1, and the sums
 * over the ranks are the rank count; shared ones would count every rank of the node.  An
 * Allreduce of rank + 1 checks that MPI itself works. */
#include <mpi.h>
#include <stdio.h>

#include "counter.h"

int program_value;
static int my_rank = -1;

int main(int argc, char **argv)
{
    int rank, size, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    my_rank = rank;
    program_value++;
    counter_bump();
    /* Every rank has bumped before any rank looks. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (program_value != 1 || counter_value != 1 || my_rank != rank) {
        printf("rank %d: program_value %d, counter_value %d, my_rank %d; expected 1, 1, %d\n", rank,
               program_value, counter_value, my_rank, rank);
        fails++;
    }
    int mine[3] = {program_value, counter_value, rank + 1}, sum[3];
    MPI_Allreduce(mine, sum, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum[0] != size || sum[1] != size || sum[2] != size * (size + 1) / 2) {
        printf("rank %d: sums %d %d %d, expected %d %d %d\n", rank, sum[0], sum[1], sum[2], size,
               size, size * (size + 1) / 2);
        fails++;
    }
    int all_fails;
    MPI_Allreduce(&fails, &all_fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all_fails == 0) printf("%d ranks, each with its own globals\nOK\n", size);
    MPI_Finalize();
    return all_fails != 0;
}
