/* bcast_rounds.c — blocking Bcast on one node, round after round: rotating roots, sizes on
 * both sides of the bytes that travel with the round (coll.c bcast_direct, 256), a strided
 * layout, members that lag by more rounds than the root's ring holds, a root that changes its
 * buffer as soon as the call returns, and a root of a small Bcast that does not wait for its
 * members (MPI 4.1 §6.4: a Bcast need not synchronise; Open MPI's and MPICH's small Bcasts
 * return at the root as well): rank 1 enters its Bcast only after a message the root sends
 * once its own Bcast returned (with the argument "early"; ranks on threads of their own only:
 * carried roots keep the lockstep, coll.c says why). */
#include <string.h>
#include <unistd.h>

#include "check.h"

/* ints: 256 bytes is 64 of them */
static const int sizes[] = {0, 1, 2, 16, 63, 64, 65, 256, 1024, 4096};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *buf = malloc(2 * 4096 * sizeof(int));
    CHECK(buf != NULL);
    MPI_Datatype one2; /* an int, then a gap of one */
    CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &one2));
    CHECK_MPI(MPI_Type_commit(&one2));
    for (int it = 0; it < 600; it++) {
        int root = it % size, n = sizes[it % NSIZES], strided = (it / NSIZES) % 2;
        /* the last rank lags now and then: the roots run ahead by more rounds than a ring */
        if (rank == size - 1 && it % 97 == 0) usleep(2000);
        for (int i = 0; i < 2 * n; i++)
            buf[i] = rank == root ? it * 7919 + i : -1;
        if (strided)
            CHECK_MPI(MPI_Bcast(buf, n, one2, root, MPI_COMM_WORLD));
        else
            CHECK_MPI(MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            int at = strided ? 2 * i : i;
            CHECK(buf[at] == it * 7919 + at, "it %d (root %d, %d ints%s): element %d is %d", it,
                  root, n, strided ? ", strided" : "", i, buf[at]);
        }
        if (strided && rank != root)
            for (int i = 1; i < 2 * n; i += 2)
                CHECK(buf[i] == -1, "it %d: the gap at %d was written", it, i);
        /* the root's buffer is its own again once the call returned */
        if (rank == root)
            for (int i = 0; i < 2 * n; i++)
                buf[i] = -2;
    }
    /* A small Bcast's root goes on before its members take the data. */
    if (size > 1 && argc > 1 && strcmp(argv[1], "early") == 0) {
        int v = rank == 0 ? 42 : 0, go = 1;
        if (rank == 0) {
            CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
            v = -1;
            CHECK_MPI(MPI_Send(&go, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        } else {
            if (rank == 1)
                CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
            CHECK(v == 42, "the early root's value: got %d", v);
        }
    }
    MPI_Type_free(&one2);
    free(buf);
    return finish_ok();
}
