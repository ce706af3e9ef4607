/* net_progress.c — messages from another node reach a rank while the ranks of its node that
 * last read the network are busy computing (no MPI call for seconds).  Needs at least two
 * nodes and two ranks on rank 0's node; the nodes must share one clock (agents on one machine:
 * the tests compare CLOCK_MONOTONIC readings of different ranks).
 *
 * 1. Sleeper: rank L (rank 0's node) blocks in MPI_Recv from a remote rank R; rank 0 then
 *    receives a message of its own from R (so it was the last to read the links) and computes
 *    for BUSY seconds.  R sends to L once rank 0 computes: L must have it long before rank 0
 *    is done.
 * 2. Posted receive, nobody waiting: rank 0 posts a large MPI_Irecv (three-phase across
 *    nodes) and computes, so does L; R's blocking MPI_Send of it must complete long before
 *    rank 0 calls MPI again (the agent answers the request while the ranks compute). */
#include <string.h>
#include <time.h>

#include "check.h"

#define BUSY 2.0      /* seconds of computing without MPI */
#define BIG (1 << 20) /* ints: 4 MiB, far above the eager limit */

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Who is on rank 0's node: L is its first neighbour, R the first rank elsewhere. */
    MPI_Comm node;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    /* on0: rank 0 is in my node's communicator; gathered, it marks rank 0's node. */
    int is0 = rank == 0, on0 = 0, *nodeof0 = malloc(sizeof(int) * (size_t)size);
    CHECK(nodeof0, "out of memory");
    CHECK_MPI(MPI_Allreduce(&is0, &on0, 1, MPI_INT, MPI_MAX, node));
    CHECK_MPI(MPI_Allgather(&on0, 1, MPI_INT, nodeof0, 1, MPI_INT, MPI_COMM_WORLD));
    int L = -1, R = -1;
    for (int i = 1; i < size; i++) {
        if (nodeof0[i] && L < 0) L = i;
        if (!nodeof0[i] && R < 0) R = i;
    }
    CHECK(L >= 0 && R >= 0, "needs two ranks on rank 0's node and a rank elsewhere (L %d, R %d)", L,
          R);

    /* 1. A sleeper behind a busy rank. */
    double t_done = 0, t_got = 0, t_sent = 0;
    int token = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == L) {
        CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, R, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        t_got = mono();
        CHECK(token == 11, "token %d", token);
    } else if (rank == 0) {
        CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, R, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == 22, "token %d", token);
        t_done = compute(BUSY);
    } else if (rank == R) {
        compute(0.2); /* L has fallen asleep */
        token = 22;
        CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
        compute(0.3); /* rank 0 computes */
        token = 11;
        t_sent = mono();
        CHECK_MPI(MPI_Send(&token, 1, MPI_INT, L, 1, MPI_COMM_WORLD));
    }
    double t[3] = {t_done, t_got, t_sent}, all[3];
    CHECK_MPI(MPI_Allreduce(t, all, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(all[1] < all[0] - BUSY / 2,
              "rank %d got the message %.3f s after it was sent, %.3f s "
              "before rank 0 stopped computing",
              L, all[1] - all[2], all[0] - all[1]);

    /* 2. A posted large receive while every rank of its node computes. */
    int *big = malloc(sizeof(int) * BIG);
    CHECK(big, "out of memory");
    MPI_Barrier(MPI_COMM_WORLD);
    t_done = t_got = t_sent = 0;
    if (rank == 0) {
        MPI_Request rq;
        memset(big, 0, sizeof(int) * BIG);
        CHECK_MPI(MPI_Irecv(big, BIG, MPI_INT, R, 3, MPI_COMM_WORLD, &rq));
        t_done = compute(BUSY);
        CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i++)
            CHECK(big[i] == i * 3 + 1, "element %d: %d", i, big[i]);
    } else if (rank == L) {
        compute(BUSY);
    } else if (rank == R) {
        for (int i = 0; i < BIG; i++)
            big[i] = i * 3 + 1;
        compute(0.2); /* the receive is posted */
        CHECK_MPI(MPI_Send(big, BIG, MPI_INT, 0, 3, MPI_COMM_WORLD));
        t_sent = mono();
    }
    double u[2] = {t_done, t_sent}, allu[2];
    CHECK_MPI(MPI_Allreduce(u, allu, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (rank == 0)
        CHECK(allu[1] < allu[0] - BUSY / 2,
              "rank %d's send completed only %.3f s before rank 0 "
              "stopped computing",
              R, allu[0] - allu[1]);
    free(big);
    free(nodeof0);
    MPI_Comm_free(&node);
    return finish_ok();
}
