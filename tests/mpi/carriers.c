/* carriers.c — what must hold when ranks share carrier threads (user-level switching,
 * agent/host/carrier.h), and equally with one thread per rank.  Run with 4+ ranks on a 2-CPU
 * machine, or with TMPI_RANK_SWITCHING=user, so that several ranks share a carrier.
 *
 * 1. MPI_Initialized is false before MPI_Init, even when ranks that ran before on the same
 *    carrier thread have initialized (libtmpi's per-thread state is the rank's, not the
 *    thread's).
 * 2. A loop of MPI_Test / MPI_Iprobe / MPI_Testany / MPI_Testall / MPI_Testsome waiting for a
 *    message from the next rank finishes: a rank polling without blocking lets the ranks of
 *    its carrier run.
 * 3. A rank blocked in MPI_Recv gets its message while the rank next to it (same carrier)
 *    computes for seconds without an MPI call: another carrier runs it.
 * 4. errno set before a blocking call that waits is what the rank finds after it (other
 *    ranks ran on the thread meanwhile and set their own; one-node jobs).
 * 5. Ranks that sleep (nanosleep, sleep) for 2 s, one per carrier, do not stop the others:
 *    a ping-pong between the other ranks ends long before, and the sleepers slept it all. */
#include <errno.h>
#include <unistd.h>
#include <time.h>

#include "check.h"

#define BUSY 2.0

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* errno read afresh: the compiler may keep errno's address from before the MPI call, and a
 * rank that moved to another carrier while it waited would read the old thread's (the agent
 * moves ranks only off a carrier stuck for 5 ms in one rank: agent/host/carrier.h). */
__attribute__((noinline)) static int errno_now(void)
{
    return errno;
}

static volatile double sink;

static double compute(double seconds)
{
    double t0 = mono(), x = 0;
    while (mono() - t0 < seconds)
        for (int i = 0; i < 1000; i++)
            x += (double)i * 1e-9;
    sink = x;
    return mono();
}

/* Every rank waits by polling for a message from the previous rank, which sends it only after
 * it got its own from the rank before it (rank 0 starts): a ring of pollers. */
static void poll_ring(int rank, int size, int how)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, tok = -1, flag = 0;
    MPI_Request rq;
    if (rank != 0) {
        if (how == 1) { /* Iprobe, then Recv */
            MPI_Status st;
            while (!flag)
                CHECK_MPI(MPI_Iprobe(prev, 5, MPI_COMM_WORLD, &flag, &st));
            CHECK_MPI(MPI_Recv(&tok, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            CHECK_MPI(MPI_Irecv(&tok, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &rq));
            int idx = -1, outcount = 0, indices[1];
            while (!flag) {
                if (how == 0) CHECK_MPI(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
                if (how == 2) CHECK_MPI(MPI_Testany(1, &rq, &idx, &flag, MPI_STATUS_IGNORE));
                if (how == 3) CHECK_MPI(MPI_Testall(1, &rq, &flag, MPI_STATUSES_IGNORE));
                if (how == 4) {
                    CHECK_MPI(MPI_Testsome(1, &rq, &outcount, indices, MPI_STATUSES_IGNORE));
                    flag = outcount == 1;
                }
            }
        }
        CHECK(tok == prev, "poll ring %d: token %d from rank %d", how, tok, prev);
    }
    if (size > 1) {
        tok = rank;
        CHECK_MPI(MPI_Send(&tok, 1, MPI_INT, next, 5, MPI_COMM_WORLD));
        if (rank == 0)
            CHECK_MPI(MPI_Recv(&tok, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    int before = -1;
    MPI_Initialized(&before);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(before == 0, "MPI_Initialized said %d before MPI_Init", before);

    for (int how = 0; how < 5; how++)
        poll_ring(rank, size, how);

    /* 3: rank 1 computes; rank 0 waits for rank 2 (or the last rank), which sends once rank 1
     * is busy.  Ranks 0 and 1 share a carrier whenever ranks are switched in user space. */
    if (size >= 3) {
        int src = 2, tok = 0;
        double t[2] = {0, 0}, all[2];
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            CHECK_MPI(MPI_Recv(&tok, 1, MPI_INT, src, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            t[1] = mono();
            CHECK(tok == 66, "token %d", tok);
        } else if (rank == 1) {
            compute(0.1);
            t[0] = compute(BUSY);
        } else if (rank == src) {
            compute(0.3);
            tok = 66;
            CHECK_MPI(MPI_Send(&tok, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        }
        CHECK_MPI(MPI_Allreduce(t, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        if (rank == 0)
            CHECK(all[1] < all[0] - BUSY / 2,
                  "rank 0 got its message only %.3f s before rank 1 stopped computing",
                  all[0] - all[1]);
    }

    /* 4: errno across a wait (every rank sets its own value, then waits in a barrier).  Only
     * in a one-node job: across nodes the barrier's own sends may set errno (EAGAIN) before
     * the wait, which MPI allows. */
    MPI_Comm node;
    int nsize = 0;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    CHECK_MPI(MPI_Comm_size(node, &nsize));
    if (nsize == size) {
        errno = 1000 + rank;
        MPI_Barrier(MPI_COMM_WORLD);
        int e = errno_now();
        CHECK(e == 1000 + rank, "errno %d after MPI_Barrier, set %d", e, 1000 + rank);
    }
    CHECK_MPI(MPI_Comm_free(&node));

    /* 5: with 4 ranks on 2 carriers, ranks 1 and 3 sit on different carriers */
    if (size >= 4) {
        double t[2] = {0, 0}, all[2];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = mono();
        if (rank == 1) {
            struct timespec ts = {2, 0};
            CHECK(nanosleep(&ts, NULL) == 0, "nanosleep: errno %d", errno);
            t[1] = mono() - t0;
        } else if (rank == 3) {
            CHECK(sleep(2) == 0, "sleep returned early");
            t[1] = mono() - t0;
        } else if (rank == 0 || rank == 2) {
            int peer = 2 - rank, x = rank;
            for (int i = 0; i < 100; i++) {
                if (rank == 0) {
                    CHECK_MPI(MPI_Send(&x, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
                    CHECK_MPI(MPI_Recv(&x, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                } else {
                    CHECK_MPI(MPI_Recv(&x, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    CHECK_MPI(MPI_Send(&x, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
                }
            }
            t[0] = mono() - t0;
        }
        CHECK_MPI(MPI_Allreduce(t, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        if (rank == 0) {
            CHECK(all[0] < 1.0, "the ping-pong took %.3f s beside two sleeping ranks", all[0]);
            CHECK(all[1] >= 1.95, "a sleeper woke after %.3f s of 2", all[1]);
        }
    }

    return finish_ok();
}
