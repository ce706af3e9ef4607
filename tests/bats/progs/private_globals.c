/* Each rank's globals are its own: a global set by a constructor, one main counts, and a
 * pointer to a global (relocated into each rank's copy) all hold this rank's values after
 * every rank wrote its own, and no two ranks share an address.  Rank 0 prints
 * "private globals ok SIZE". */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int from_ctor = -1;
static int runs;
int mine;
int *mine_ptr = &mine;

__attribute__((constructor)) static void ctor(void)
{
    from_ctor = 7; /* this copy's, not a value another copy's constructor left */
    runs = 0;
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    runs++;
    *mine_ptr = rank;
    from_ctor += rank;
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = mine != rank || mine_ptr != &mine || from_ctor != 7 + rank || runs != 1;
    if (bad)
        printf("rank %d: mine %d, from_ctor %d, runs %d, mine_ptr %s\n", rank, mine, from_ctor,
               runs, mine_ptr == &mine ? "own" : "foreign");
    uint64_t addr = (uint64_t)(uintptr_t)&mine, *all = rank == 0 ? malloc(8 * (size_t)size) : NULL;
    MPI_Gather(&addr, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int nbad = 0;
    MPI_Reduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(all, (size_t)size, 8, cmp);
        int shared = 0;
        for (int i = 1; i < size; i++)
            shared += all[i] == all[i - 1];
        if (nbad || shared)
            printf("private globals: %d ranks saw foreign values, %d share an address\n", nbad,
                   shared);
        else
            printf("private globals ok %d\n", size);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
