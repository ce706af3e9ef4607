/* Rank 1 recurses without end on its own stack, writing every frame; the other ranks wait in
 * a receive that never completes, so only the fault ends the job.  Rank 1 prints the address
 * of a local of main ("stack top 0x...") first: the fault's address shows where the overflow
 * was stopped (at the stack's guard page, not in a neighbouring rank's stack). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int deeper(volatile char *prev, int depth)
{
    volatile char frame[1024];
    memset((char *)frame, depth & 0xff, sizeof frame);
    frame[0] = prev ? prev[0] : 0;
    return deeper(frame, depth + 1) + frame[1];
}

int main(int argc, char **argv)
{
    int rank, x;
    volatile char top = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        printf("stack top %p\n", (void *)&top);
        fflush(stdout);
        return deeper(&top, 0);
    }
    MPI_Recv(&x, 1, MPI_INT, 1, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
