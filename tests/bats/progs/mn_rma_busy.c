/* mn_rma_busy.c — Put, Get and their flushes to a target on another node complete while the
 * target rank computes without calling MPI; then every synchronisation ends what it covers:
 * a fence, a post/start/complete/wait epoch and exclusive lock/unlock from every rank, with
 * large transfers that cross the links' 4 MiB pieces at an odd offset, every byte checked.
 * Prints "rma busy ok" from rank 0.  On the OFI transport the Puts and Gets go as remote
 * memory access (the node's log says so at job end, multinode_ofi.bats), on TCP as frames. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUSY_S 3.0
#define BIG ((size_t)9 * 1024 * 1024 + 3) /* three pieces of 4 MiB, the last a short one */
#define ODD 5                             /* a byte offset no piece is aligned on */
#define WIN (BIG + 64)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* the same clock in every job host of this machine */
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fail(int rank, const char *what)
{
    fprintf(stderr, "rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(size_t i, int salt)
{
    return (unsigned char)(i * 131u + (unsigned)salt * 7u + (i >> 12));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the target: the first rank that is not on rank 0's node */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int first = rank, target = size;
    MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, node);
    int cand = first != 0 ? rank : size;
    MPI_Allreduce(&cand, &target, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (target == size) fail(rank, "every rank is on one node");
    unsigned char *base;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, WIN);
    unsigned char *src = malloc(BIG), *back = malloc(BIG);
    if (!src || !back) fail(rank, "out of memory");
    MPI_Barrier(MPI_COMM_WORLD);

    /* 1. passive target, busy: rank 0 only */
    double done = 0, busy_end = 0;
    if (rank == target) {
        double t0 = now();
        volatile double acc = 1.0;
        while ((busy_end = now()) - t0 < BUSY_S)
            for (int k = 0; k < 100000; k++)
                acc = acc * 1.0000001 + 1e-9;
    } else if (rank == 0) {
        long long v = 4242, got = 0;
        for (size_t i = 0; i < BIG; i++)
            src[i] = pat(i, 1);
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
        MPI_Put(&v, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
        MPI_Win_flush(target, win);
        MPI_Get(&got, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
        MPI_Win_flush(target, win);
        if (got != v) fail(rank, "small get after put + flush");
        MPI_Put(src, (int)BIG, MPI_BYTE, target, ODD, (int)BIG, MPI_BYTE, win);
        MPI_Win_flush(target, win);
        MPI_Request rq;
        MPI_Rget(back, (int)BIG, MPI_BYTE, target, ODD, (int)BIG, MPI_BYTE, win, &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        if (memcmp(src, back, BIG)) fail(rank, "large get after put + flush");
        MPI_Win_unlock(target, win);
        done = now();
    }
    MPI_Bcast(&busy_end, 1, MPI_DOUBLE, target, MPI_COMM_WORLD);
    if (rank == 0 && done >= busy_end)
        fail(rank, "the puts and gets did not complete while the target computed");

    /* 2. fence: every other rank puts its slot of 8 bytes, the target checks after the fence;
     * the target puts its slot into rank 0's window (the other direction) */
    MPI_Win_fence(0, win);
    long long mine = 1000 + rank;
    MPI_Put(&mine, 8, MPI_BYTE, rank != target ? target : 0, 8 * (MPI_Aint)rank, 8, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        long long v;
        memcpy(&v, base + 8 * target, 8);
        if (v != 1000 + target) fail(rank, "the target's put before the fence is missing");
    }
    if (rank == target)
        for (int r = 0; r < size; r++) {
            long long v;
            memcpy(&v, base + 8 * r, 8);
            if (r != target && v != 1000 + r) fail(rank, "a put before the fence is missing");
        }
    MPI_Win_fence(0, win);

    /* 3. post/start/complete/wait: rank 0 puts the large block again (another pattern) */
    MPI_Group world, one;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    if (rank == 0) {
        for (size_t i = 0; i < BIG; i++)
            src[i] = pat(i, 2);
        MPI_Group_incl(world, 1, &target, &one);
        MPI_Win_start(one, 0, win);
        MPI_Put(src, (int)BIG, MPI_BYTE, target, ODD, (int)BIG, MPI_BYTE, win);
        MPI_Win_complete(win);
        MPI_Group_free(&one);
    } else if (rank == target) {
        int zero = 0;
        MPI_Group_incl(world, 1, &zero, &one);
        MPI_Win_post(one, 0, win);
        MPI_Win_wait(win);
        for (size_t i = 0; i < BIG; i++)
            if (base[ODD + i] != pat(i, 2)) fail(rank, "a put before Win_complete is missing");
        MPI_Group_free(&one);
    }
    MPI_Group_free(&world);
    MPI_Barrier(MPI_COMM_WORLD);

    /* 4. exclusive locks: each origin in turn reads the counter, writes it plus one */
    if (rank == target) memset(base, 0, 8);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != target)
        for (int i = 0; i < 10; i++) {
            long long c = 0;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
            MPI_Get(&c, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
            MPI_Win_flush(target, win);
            c++;
            MPI_Put(&c, 8, MPI_BYTE, target, 0, 8, MPI_BYTE, win);
            MPI_Win_unlock(target, win);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        long long c;
        memcpy(&c, base, 8);
        if (c != 10LL * (size - 1)) fail(rank, "an unlock did not wait for its put");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(src);
    free(back);
    MPI_Comm_free(&node);
    if (rank == 0) printf("rma busy ok %d\n", size);
    MPI_Finalize();
    return 0;
}
