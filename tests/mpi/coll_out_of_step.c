/* coll_out_of_step.c — under MPI_ERRORS_RETURN a collective that fails its argument check
 * takes no part (a call made on one member only, to see it refused, leaves the others alone,
 * as in MPICH's errors/coll tests); where the others did make it, the failing member's next
 * call meets theirs: a different call fails on every member with MPI_ERR_OTHER ("out of
 * step") and reads no other call's buffers, the same call pairs.  Failures on every member
 * keep the communicator usable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define BIG 4000 /* ints: above the small Allreduce's 4096 bytes, the engine's two barriers */

static int rank, size;

static MPI_Comm fresh(void)
{
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    return c;
}

static int class_of(int e)
{
    int cls = -1;
    MPI_Error_class(e, &cls);
    return cls;
}

/* e is the out-of-step error: its class and its reason */
static void expect_out_of_step(int e, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK(class_of(e) == MPI_ERR_OTHER, "rank %d %s: class %d, not MPI_ERR_OTHER", rank, what,
          class_of(e));
    MPI_Error_string(e, msg, &len);
    CHECK(strstr(msg, "out of step"), "rank %d %s: reason \"%s\"", rank, what, msg);
}

/* Every member fails the same check: still in step. */
static void symmetric(void)
{
    MPI_Comm c = fresh();
    int v[4] = {rank, rank, rank, rank}, s[4], *big = malloc(sizeof *big * BIG),
        *bs = malloc(sizeof *bs * BIG);
    CHECK(big && bs, "out of memory");
    CHECK(class_of(MPI_Bcast(v, -1, MPI_INT, 0, c)) == MPI_ERR_COUNT, "bad count accepted");
    CHECK(class_of(MPI_Allreduce(v, s, 4, MPI_INT, MPI_NO_OP, c)) == MPI_ERR_OP, "NO_OP");
    CHECK_MPI(MPI_Allreduce(v, s, 4, MPI_INT, MPI_SUM, c));
    CHECK(s[3] == size * (size - 1) / 2, "small allreduce %d", s[3]);
    for (int i = 0; i < BIG; i++)
        big[i] = i + rank;
    CHECK_MPI(MPI_Allreduce(big, bs, BIG, MPI_INT, MPI_SUM, c));
    CHECK(bs[BIG - 1] == size * (BIG - 1) + size * (size - 1) / 2, "big allreduce %d", bs[BIG - 1]);
    CHECK_MPI(MPI_Barrier(c));
    for (int i = 0; i < 4; i++)
        v[i] = rank == 0 ? 40 + i : -1;
    CHECK_MPI(MPI_Bcast(v, 4, MPI_INT, 0, c));
    CHECK(v[0] == 40 && v[3] == 43, "bcast %d %d", v[0], v[3]);
    MPI_Request q;
    CHECK_MPI(MPI_Iallreduce(v, s, 4, MPI_INT, MPI_SUM, c, &q));
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(s[0] == 40 * size, "iallreduce %d", s[0]);
    free(big);
    free(bs);
    MPI_Comm_free(&c);
}

/* The last rank's Allreduce fails its check; its next (small) one meets the others' large
 * one: every member's call fails, none reads the others' buffers. */
static void asym_allreduce(void)
{
    MPI_Comm c = fresh();
    int v[4] = {1, 2, 3, 4}, s[4], *big = calloc(BIG, sizeof *big), *bs = calloc(BIG, sizeof *bs);
    CHECK(big && bs, "out of memory");
    if (rank == size - 1) {
        CHECK(class_of(MPI_Allreduce(v, s, -1, MPI_INT, MPI_SUM, c)) == MPI_ERR_COUNT,
              "bad count accepted");
        expect_out_of_step(MPI_Allreduce(v, s, 4, MPI_INT, MPI_SUM, c), "small allreduce");
    } else {
        expect_out_of_step(MPI_Allreduce(big, bs, BIG, MPI_INT, MPI_SUM, c), "large allreduce");
    }
    free(big);
    free(bs);
    MPI_Comm_free(&c);
}

/* The same with a barrier meeting an Allreduce. */
static void asym_barrier(void)
{
    MPI_Comm c = fresh();
    int v[4] = {1, 2, 3, 4}, s[4];
    if (rank == size - 1) {
        CHECK(class_of(MPI_Allreduce(v, s, 4, MPI_INT, MPI_OP_NULL, c)) == MPI_ERR_OP,
              "bad op accepted");
        expect_out_of_step(MPI_Barrier(c), "barrier");
    } else {
        expect_out_of_step(MPI_Allreduce(v, s, 4, MPI_INT, MPI_SUM, c), "allreduce");
    }
    MPI_Comm_free(&c);
}

/* The small Allgather (one barrier, a shared stage) meeting an Allreduce: both fail. */
static void asym_allgather(void)
{
    MPI_Comm c = fresh();
    int v[4] = {1, 2, 3, 4}, s[4], *g = calloc((size_t)size, sizeof *g);
    CHECK(g, "out of memory");
    if (rank == size - 1) {
        CHECK(class_of(MPI_Allgather(v, -1, MPI_INT, g, 1, MPI_INT, c)) == MPI_ERR_COUNT,
              "bad count accepted");
        expect_out_of_step(MPI_Allgather(v, 1, MPI_INT, g, 1, MPI_INT, c), "allgather");
    } else {
        expect_out_of_step(MPI_Allreduce(v, s, 4, MPI_INT, MPI_SUM, c), "allreduce");
    }
    free(g);
    MPI_Comm_free(&c);
}

/* Non-blocking: the rounds pair by their order, and a round of different calls fails. */
static void asym_nonblocking(void)
{
    MPI_Comm c = fresh();
    int v[4] = {1, 2, 3, 4}, s[4];
    MPI_Request q;
    if (rank == size - 1) {
        CHECK(class_of(MPI_Ibcast(v, -5, MPI_INT, 0, c, &q)) == MPI_ERR_COUNT,
              "bad count accepted");
        CHECK_MPI(MPI_Iallreduce(v, s, 4, MPI_INT, MPI_SUM, c, &q));
    } else {
        CHECK_MPI(MPI_Ibcast(v, 4, MPI_INT, 0, c, &q));
    }
    int e = MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(class_of(e) == MPI_ERR_OTHER, "rank %d: a round of Ibcast and Iallreduce gave class %d",
          rank, class_of(e));
    MPI_Comm_free(&c);
}

/* Bcast: the failing member's next Bcast is the same call as the others' (root, bytes): it
 * takes the root's round and its data. */
static void asym_bcast(void)
{
    MPI_Comm c = fresh();
    int v[100];
    for (int i = 0; i < 100; i++)
        v[i] = rank == 0 ? 7 * i : -1;
    if (rank == size - 1)
        CHECK(class_of(MPI_Bcast(v, -1, MPI_INT, 0, c)) == MPI_ERR_COUNT, "bad count accepted");
    CHECK_MPI(MPI_Bcast(v, 100, MPI_INT, 0, c));
    CHECK(v[99] == 7 * 99, "rank %d bcast got %d", rank, v[99]);
    MPI_Comm_free(&c);
}

/* A call made on one member only and refused there leaves the others in step. */
static void one_member(void)
{
    MPI_Comm c = fresh();
    int v[4] = {rank, rank, rank, rank}, s[4];
    if (rank == 0) {
        CHECK(class_of(MPI_Gather(v, 4, MPI_INT, v, 4, MPI_INT, 0, c)) == MPI_ERR_BUFFER,
              "aliased gather accepted");
        CHECK(class_of(MPI_Reduce(v, s, 4, MPI_INT, MPI_OP_NULL, 0, c)) == MPI_ERR_OP,
              "bad op accepted");
    }
    CHECK_MPI(MPI_Allreduce(v, s, 4, MPI_INT, MPI_SUM, c));
    CHECK(s[2] == size * (size - 1) / 2, "allreduce after one member's errors: %d", s[2]);
    CHECK_MPI(MPI_Barrier(c));
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    symmetric();
    if (size > 1) {
        asym_allreduce();
        asym_barrier();
        asym_allgather();
        asym_nonblocking();
        asym_bcast();
        one_member();
    }
    /* MPI_COMM_WORLD's calls stayed in step */
    int one = 1, n = 0;
    CHECK_MPI(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(n == size, "world allreduce %d", n);
    return finish_ok();
}
