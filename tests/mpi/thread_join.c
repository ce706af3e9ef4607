/* thread_join.c — ranks that start and join a thread over and over (MPI_THREAD_MULTIPLE).
 *
 * Each round every rank starts one thread and joins it.  Most threads exchange a message with
 * the same round's thread of both neighbours in a ring (on a communicator of their own), so a
 * rank's join waits for its neighbours to have started theirs: with ranks on carriers
 * (TMPI_RANK_SWITCHING=user) the joins park the ranks and only the threads' ends and the
 * messages wake them.  Some threads end at once (the end races the join's park), and now and
 * then a rank computes for longer than a carrier's rescue time first, so that other carriers
 * take the ranks parked on its carrier.  A wake-up lost anywhere there is a hang. */
#include <pthread.h>
#include <time.h>

#include "check.h"

#define ROUNDS 300
#define BUSY_NS 8000000ll /* longer than carrier.c's rescue time (5 ms) */

static int rank, size;
static MPI_Comm ring;

struct round {
    int round, kind;
    int got_left, got_right;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *thread_main(void *arg)
{
    struct round *j = arg;
    if (j->kind == 0) return arg; /* ends before (or while) its rank parks in the join */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int out = rank * ROUNDS + j->round;
    /* the round is the tag: the neighbour's thread of another round never matches */
    CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, right, j->round, &j->got_left, 1, MPI_INT, left,
                           j->round, ring, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, left, j->round, &j->got_right, 1, MPI_INT, right,
                           j->round, ring, MPI_STATUS_IGNORE));
    return arg;
}

int main(int argc, char **argv)
{
    int provided;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &ring));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    unsigned seed = 2654435761u * (unsigned)(rank + 1);
    for (int i = 0; i < ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned how = (seed >> 16) % 64;
        if (how == 0) {
            volatile long long t0 = now_ns();
            while (now_ns() - t0 < BUSY_NS)
                ;
        }
        /* every rank agrees on the kind of round i: a silent thread's neighbours send nothing */
        struct round j = {.round = i, .kind = i % 8 != 3, .got_left = -1, .got_right = -1};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, thread_main, &j) == 0, "round %d: pthread_create", i);
        void *ret = NULL;
        CHECK(pthread_join(t, &ret) == 0, "round %d: pthread_join", i);
        CHECK(ret == &j, "round %d: joined another thread", i);
        if (j.kind) {
            CHECK(j.got_left == left * ROUNDS + i, "round %d: %d from the left", i, j.got_left);
            CHECK(j.got_right == right * ROUNDS + i, "round %d: %d from the right", i, j.got_right);
        }
    }
    CHECK_MPI(MPI_Comm_free(&ring));
    return finish_ok();
}
