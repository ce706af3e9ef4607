/* bigcoll.c — collectives of more than 2^31 elements (bigcount.bats): MPI_Bcast_c of
 * 2^31 + 2^20 bytes (MPI_BYTE at the root, MPI_UINT8_T elsewhere: one signature), then
 * MPI_Allreduce_c (MPI_IN_PLACE, MPI_UINT8_T, MPI_SUM) of as many, checked every 4 KiB and at
 * both ends.  About 2 GiB per rank.  Any number of ranks >= 2, one node or several.
 * Prints OK at rank 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define N (((MPI_Count)1 << 31) + ((MPI_Count)1 << 20))
#define STEP 4096

int main(int argc, char **argv)
{
    int rank, size, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint8_t *b = malloc((size_t)N);
    if (!b) {
        fprintf(stderr, "rank %d: no memory for %lld bytes\n", rank, (long long)N);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* root: the bytes of 4 KiB page p are p * 7 + 3 (mod 256), so a piece moved to the wrong
     * place shows; the others start from zero */
    if (rank == 0)
        for (MPI_Count p = 0; p * STEP < N; p++)
            memset(b + p * STEP, (uint8_t)(p * 7 + 3),
                   (size_t)(N - p * STEP < STEP ? N - p * STEP : STEP));
    else
        memset(b, 0, (size_t)N);
    int e = MPI_Bcast_c(b, N, rank == 0 ? MPI_BYTE : MPI_UINT8_T, 0, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPI_Bcast_c failed (%d)\n", rank, e);
        bad++;
    }
    for (MPI_Count i = 0; i < N && bad < 5;
         i += (i + STEP < N ? STEP : (N - 1 - i > 0 ? N - 1 - i : 1)))
        if (b[i] != (uint8_t)(i / STEP * 7 + 3)) {
            fprintf(stderr, "rank %d: MPI_Bcast_c byte %lld is %u, not %u\n", rank, (long long)i,
                    b[i], (uint8_t)(i / STEP * 7 + 3));
            bad++;
        }
    /* every rank adds its rank + 1 to the broadcast bytes */
    memset(b, rank + 1, (size_t)N);
    e = MPI_Allreduce_c(MPI_IN_PLACE, b, N, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPI_Allreduce_c failed (%d)\n", rank, e);
        bad++;
    }
    uint8_t want = (uint8_t)(size * (size + 1) / 2);
    for (MPI_Count i = 0; i < N && bad < 10;
         i += (i + STEP < N ? STEP : (N - 1 - i > 0 ? N - 1 - i : 1)))
        if (b[i] != want) {
            fprintf(stderr, "rank %d: MPI_Allreduce_c byte %lld is %u, not %u\n", rank,
                    (long long)i, b[i], want);
            bad++;
        }
    free(b);
    int all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "FAILED (%d)\n" : "OK\n", all);
    MPI_Finalize();
    return all != 0;
}
