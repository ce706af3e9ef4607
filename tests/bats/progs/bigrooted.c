/* bigrooted.c — MPI_Gather_c, MPI_Scatter_c, MPI_Allgather_c and MPI_Alltoall_c of blocks of
 * more than 2^31 elements (bigcount.bats): bigrooted gather|scatter|allgather|alltoall.
 * Blocks of N = 2^31 + 2^20 + 3 bytes (MPI_BYTE on one side, MPI_UINT8_T on the other: one
 * signature), in place where the call allows it.  A sender's block is zero but for a marker
 * byte every MiB and at its end, so it costs little memory (untouched pages read as zero);
 * the receiver checks each marker and a zero beside it.  Any number of ranks >= 2 (memory
 * grows with them: allgather and alltoall write (ranks - 1) blocks on every rank).  Prints OK
 * at rank 0. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define N (((MPI_Count)1 << 31) + ((MPI_Count)1 << 20) + 3)
#define MARK ((MPI_Count)1 << 20)

static int bad;

/* The marker of byte i of the block rank `from` sends to rank `to`. */
static uint8_t mark(int from, int to, MPI_Count i)
{
    return (uint8_t)((from * 31 + to * 17 + i / MARK * 7 + 3) | 1);
}

static void fill(uint8_t *blk, int from, int to)
{
    for (MPI_Count i = 0; i < N; i += MARK)
        blk[i] = mark(from, to, i);
    blk[N - 1] = mark(from, to, N - 1);
}

static void check(const char *what, const uint8_t *blk, int from, int to)
{
    for (MPI_Count i = 0; i < N && bad < 5; i += MARK)
        if (blk[i] != mark(from, to, i) || (i + 1 < N - 1 && blk[i + 1] != 0)) {
            fprintf(stderr, "%s: block of rank %d at rank %d: byte %lld is %u (then %u), not %u\n",
                    what, from, to, (long long)i, blk[i], blk[i + 1], mark(from, to, i));
            bad++;
        }
    if (blk[N - 1] != mark(from, to, N - 1)) {
        fprintf(stderr, "%s: block of rank %d at rank %d: its last byte is %u\n", what, from, to,
                blk[N - 1]);
        bad++;
    }
}

static uint8_t *room(MPI_Count bytes)
{
    uint8_t *b = calloc(1, (size_t)bytes);
    if (!b) {
        fprintf(stderr, "no memory for %lld bytes\n", (long long)bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return b;
}

static void call(const char *what, int e)
{
    if (e == MPI_SUCCESS) return;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(e, msg, &len);
    fprintf(stderr, "%s failed: %s\n", what, msg);
    bad++;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *mode = argc > 1 ? argv[1] : "";
    int root = size - 1; /* not rank 0: the pieces must not assume it */
    if (strcmp(mode, "gather") == 0) {
        if (rank == root) {
            uint8_t *all = room(N * size);
            fill(all + (size_t)N * (size_t)root, root, root);
            call("MPI_Gather_c", MPI_Gather_c(MPI_IN_PLACE, N, MPI_BYTE, all, N, MPI_UINT8_T, root,
                                              MPI_COMM_WORLD));
            for (int r = 0; r < size; r++)
                check("MPI_Gather_c", all + (size_t)N * (size_t)r, r, root);
            free(all);
        } else {
            uint8_t *mine = room(N);
            fill(mine, rank, root);
            call("MPI_Gather_c",
                 MPI_Gather_c(mine, N, MPI_BYTE, NULL, 0, MPI_BYTE, root, MPI_COMM_WORLD));
            free(mine);
        }
    } else if (strcmp(mode, "scatter") == 0) {
        if (rank == root) {
            uint8_t *all = room(N * size);
            for (int r = 0; r < size; r++)
                fill(all + (size_t)N * (size_t)r, root, r);
            call("MPI_Scatter_c", MPI_Scatter_c(all, N, MPI_UINT8_T, MPI_IN_PLACE, N, MPI_BYTE,
                                                root, MPI_COMM_WORLD));
            check("MPI_Scatter_c", all + (size_t)N * (size_t)root, root, root);
            free(all);
        } else {
            uint8_t *mine = room(N);
            call("MPI_Scatter_c",
                 MPI_Scatter_c(NULL, 0, MPI_BYTE, mine, N, MPI_BYTE, root, MPI_COMM_WORLD));
            check("MPI_Scatter_c", mine, root, rank);
            free(mine);
        }
    } else if (strcmp(mode, "allgather") == 0) {
        uint8_t *all = room(N * size);
        fill(all + (size_t)N * (size_t)rank, rank, 0);
        call("MPI_Allgather_c", MPI_Allgather_c(MPI_IN_PLACE, 0, MPI_BYTE, all, N,
                                                rank % 2 ? MPI_BYTE : MPI_UINT8_T, MPI_COMM_WORLD));
        for (int r = 0; r < size; r++)
            check("MPI_Allgather_c", all + (size_t)N * (size_t)r, r, 0);
        free(all);
    } else if (strcmp(mode, "alltoall") == 0) {
        uint8_t *all = room(N * size);
        for (int r = 0; r < size; r++)
            fill(all + (size_t)N * (size_t)r, rank, r);
        call("MPI_Alltoall_c", MPI_Alltoall_c(MPI_IN_PLACE, 0, MPI_BYTE, all, N,
                                              rank % 2 ? MPI_BYTE : MPI_UINT8_T, MPI_COMM_WORLD));
        /* block r now holds what rank r had for us; ours stays */
        for (int r = 0; r < size; r++)
            check("MPI_Alltoall_c", all + (size_t)N * (size_t)r, r, rank);
        free(all);
    } else {
        fprintf(stderr, "usage: bigrooted gather|scatter|allgather|alltoall\n");
        bad++;
    }
    int total = 0;
    MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf(total ? "FAILED (%d)\n" : "OK\n", total);
    MPI_Finalize();
    return total != 0;
}
