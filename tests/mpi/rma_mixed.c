/* rma_mixed.c — an application-style one-sided program: fence epochs and passive-target epochs
 * on the same window, with derived datatypes on both sides, for a window from MPI_Win_allocate
 * and one from MPI_Win_create on the program's memory.
 *
 *  1. fence: every rank Puts a contiguous block into the even slots of its right neighbour
 *     (a strided vector on the target);
 *  2. passive, lock_all: every rank Accumulates (MPI_SUM) into rank 0's counters through an
 *     indexed type, takes a ticket with MPI_Fetch_and_op, flushes;
 *  3. passive, exclusive lock on the left neighbour: MPI_Get of its odd slots through an
 *     indexed-block type into a strided origin layout, then MPI_Compare_and_swap;
 *  4. fence again: MPI_Get_accumulate with MPI_NO_OP reads what phase 3 changed. */
#include <string.h>

#include "check.h"

#define N 32 /* ints per window */
#define NCNT 4

static int rank, size;

static void run(MPI_Win win, int *base, const char *kind)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype even, cnt_t, odd, strided;
    CHECK_MPI(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &even));
    int idx_len[NCNT] = {1, 1, 1, 1}, idx_disp[NCNT] = {N - 1, N - 3, N - 5, N - 7};
    CHECK_MPI(MPI_Type_indexed(NCNT, idx_len, idx_disp, MPI_INT, &cnt_t));
    int odd_disp[N / 4];
    for (int i = 0; i < N / 4; i++)
        odd_disp[i] = 2 * i + 1; /* the odd slots of the first half */
    CHECK_MPI(MPI_Type_create_indexed_block(N / 4, 1, odd_disp, MPI_INT, &odd));
    CHECK_MPI(MPI_Type_vector(N / 4, 1, 3, MPI_INT, &strided));
    MPI_Datatype all[] = {even, cnt_t, odd, strided};
    for (int i = 0; i < 4; i++)
        CHECK_MPI(MPI_Type_commit(&all[i]));

    /* 1. fence */
    for (int i = 0; i < N; i++)
        base[i] = -1;
    int block[N / 2];
    for (int i = 0; i < N / 2; i++)
        block[i] = rank * 100 + i;
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    CHECK_MPI(MPI_Put(block, N / 2, MPI_INT, right, 0, 1, even, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < N / 2; i++)
        CHECK(base[2 * i] == left * 100 + i && base[2 * i + 1] == -1,
              "%s fence: slot %d = %d, %d = %d", kind, 2 * i, base[2 * i], 2 * i + 1,
              base[2 * i + 1]);
    /* rank 0's counters start at 0 (its own memory, between the epochs) */
    if (rank == 0) {
        for (int k = 0; k < NCNT; k++)
            base[idx_disp[k]] = 0;
        base[N - 2] = -1; /* the ticket counter */
    }
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* 2. passive, shared: concurrent accumulates and tickets on rank 0 */
    int add[NCNT] = {1, rank, 2 * rank, 7}, one = 1, ticket = -1;
    CHECK_MPI(MPI_Win_lock_all(0, win));
    CHECK_MPI(MPI_Accumulate(add, NCNT, MPI_INT, 0, 0, 1, cnt_t, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK_MPI(MPI_Fetch_and_op(&one, &ticket, MPI_INT, 0, N - 2, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        int want[NCNT] = {size, size * (size - 1) / 2, size * (size - 1), 7 * size};
        for (int k = 0; k < NCNT; k++)
            CHECK(base[idx_disp[k]] == want[k], "%s accumulate: counter %d = %d, expected %d", kind,
                  k, base[idx_disp[k]], want[k]);
        CHECK(base[N - 2] == -1 + size, "%s tickets: %d, expected %d", kind, base[N - 2], size - 1);
        CHECK_MPI(MPI_Win_unlock(0, win));
    }
    int maxt = -1;
    CHECK_MPI(MPI_Allreduce(&ticket, &maxt, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(ticket >= -1 && maxt == size - 2, "%s: ticket %d, largest %d", kind, ticket, maxt);

    /* 3. passive, exclusive on the left neighbour: strided Get of its odd slots, CAS */
    int got[3 * (N / 4)];
    for (int i = 0; i < 3 * (N / 4); i++)
        got[i] = -9;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, left, 0, win));
    CHECK_MPI(MPI_Get(got, 1, strided, left, 0, 1, odd, win));
    CHECK_MPI(MPI_Win_unlock(left, win));
    for (int i = 0; i < N / 4; i++) {
        int slot = 2 * i + 1;
        /* left's odd slots: -1, except its counters/ticket if left is rank 0 */
        int want = -1;
        if (left == 0 && slot == N - 1) want = size;
        CHECK(got[3 * i] == want, "%s Get: slot %d of rank %d = %d, expected %d", kind, slot, left,
              got[3 * i], want);
        CHECK(got[3 * i + 1] == -9 && got[3 * i + 2] == -9, "%s Get wrote between blocks", kind);
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int cmp = -1, nv = 1000 + rank, old = 0;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    CHECK_MPI(MPI_Compare_and_swap(&nv, &cmp, &old, MPI_INT, right, 1, win));
    CHECK_MPI(MPI_Win_unlock(right, win));
    CHECK(old == -1, "%s CAS: old value %d", kind, old);

    /* 4. fence: read back what the CAS wrote, atomically */
    int seen = -5, dummy = 0;
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    CHECK_MPI(MPI_Get_accumulate(&dummy, 0, MPI_INT, &seen, 1, MPI_INT, right, 1, 1, MPI_INT,
                                 MPI_NO_OP, win));
    CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(seen == 1000 + rank && base[1] == 1000 + left, "%s: slot 1 here %d, at right %d", kind,
          base[1], seen);
    for (int i = 0; i < 4; i++)
        CHECK_MPI(MPI_Type_free(&all[i]));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *base;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    run(win, base, "Win_allocate");
    CHECK_MPI(MPI_Win_free(&win));

    int mem[N];
    CHECK_MPI(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    run(win, mem, "Win_create");
    CHECK_MPI(MPI_Win_free(&win));
    return finish_ok();
}
