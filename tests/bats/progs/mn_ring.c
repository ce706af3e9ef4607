/* A token and a 1 MiB block (three-phase across nodes) go round the ring of all ranks, each
 * rank adding its rank to every word; rank 0 checks both and prints "ring ok SIZE". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define WORDS (256 * 1024)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned *block = malloc(WORDS * sizeof *block);
    if (!block) MPI_Abort(MPI_COMM_WORLD, 2);
    long token = 0;
    if (rank == 0) {
        for (int i = 0; i < WORDS; i++)
            block[i] = (unsigned)i;
        MPI_Send(&token, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
        MPI_Send(block, WORDS, MPI_UNSIGNED, right, 2, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(block, WORDS, MPI_UNSIGNED, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        unsigned add = (unsigned)(size * (size - 1) / 2);
        for (int i = 0; i < WORDS; i++)
            if (block[i] != (unsigned)i + add) {
                printf("ring bad word %d: %u\n", i, block[i]);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
        if (token != (long)size * (size - 1) / 2) {
            printf("ring bad token %ld\n", token);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        printf("ring ok %d\n", size);
    } else {
        MPI_Recv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(block, WORDS, MPI_UNSIGNED, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank;
        for (int i = 0; i < WORDS; i++)
            block[i] += (unsigned)rank;
        MPI_Send(&token, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
        MPI_Send(block, WORDS, MPI_UNSIGNED, right, 2, MPI_COMM_WORLD);
    }
    free(block);
    MPI_Finalize();
    return 0;
}
