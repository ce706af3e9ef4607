/* mn_acc_atomic.c — accumulates from origins on the target's node and on other nodes at once,
 * to one window of rank 0, in one lock_all epoch: Accumulate (SUM) of one element, Fetch_and_op
 * (SUM) whose fetched values must be every count from 0 to ranks x ROUNDS - 1 exactly once (no
 * two origins read the same value: the increments are atomic against each other), a counter
 * raised by Compare_and_swap loops, an Accumulate through a strided target datatype, and
 * Get_accumulate with MPI_NO_OP reading back.  Prints "acc atomic ok N" on rank 0. */
#include <stdio.h>
#include <stdlib.h>

#include "mpi.h"

#define ROUNDS 300
#define STRIDED 16

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static void fail(const char *what, long long got, long long want)
{
    fprintf(stderr, "mn_acc_atomic: %s: %lld, expected %lld\n", what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* [0] Accumulate counter, [1] Fetch_and_op counter, [2] CAS counter, then 2 x STRIDED ints */
    long long *base;
    MPI_Win win;
    MPI_Win_allocate(3 * sizeof(long long) + 2 * STRIDED * sizeof(int), 1, MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    int *strided = (int *)(base + 3);
    base[0] = base[1] = base[2] = 0;
    for (int i = 0; i < 2 * STRIDED; i++)
        strided[i] = 0;
    MPI_Datatype every_other;
    MPI_Type_vector(STRIDED, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int ones[STRIDED];
    for (int i = 0; i < STRIDED; i++)
        ones[i] = 1;
    long long *fetched = malloc(ROUNDS * sizeof *fetched);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int r = 0; r < ROUNDS; r++) {
        long long one = 1, old = -1, seen = 0;
        MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, sizeof(long long), MPI_SUM, win);
        MPI_Win_flush(0, win);
        fetched[r] = old;
        for (;;) { /* a CAS increment: retried until no other origin came between */
            long long want = seen + 1, was = -1;
            MPI_Compare_and_swap(&want, &seen, &was, MPI_LONG_LONG, 0, 2 * sizeof(long long), win);
            MPI_Win_flush(0, win);
            if (was == seen) break;
            seen = was;
        }
        MPI_Accumulate(ones, STRIDED, MPI_INT, 0, 3 * sizeof(long long), 1, every_other, MPI_SUM,
                       win);
    }
    MPI_Win_flush(0, win);
    long long now = -1;
    MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, &now, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG,
                       MPI_NO_OP, win);
    MPI_Win_unlock_all(win);
    if (now < ROUNDS) fail("Get_accumulate(MPI_NO_OP) after this rank's own rounds", now, ROUNDS);
    MPI_Barrier(MPI_COMM_WORLD);
    long long *all = rank == 0 ? malloc((size_t)size * ROUNDS * sizeof *all) : NULL;
    MPI_Gather(fetched, ROUNDS, MPI_LONG_LONG, all, ROUNDS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const long long n = (long long)size * ROUNDS;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        if (base[0] != n) fail("Accumulate counter", base[0], n);
        if (base[1] != n) fail("Fetch_and_op counter", base[1], n);
        if (base[2] != n) fail("Compare_and_swap counter", base[2], n);
        for (int i = 0; i < 2 * STRIDED; i++)
            if (strided[i] != (i % 2 ? 0 : size * ROUNDS))
                fail("strided Accumulate element", strided[i], i % 2 ? 0 : size * ROUNDS);
        MPI_Win_unlock(0, win);
        qsort(all, (size_t)n, sizeof *all, cmp_ll);
        for (long long i = 0; i < n; i++)
            if (all[i] != i) fail("sorted Fetch_and_op values at this place", all[i], i);
        printf("acc atomic ok %d\n", size);
        free(all);
    }
    free(fetched);
    MPI_Type_free(&every_other);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
