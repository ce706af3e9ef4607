/* p2p_order.c — non-overtaking order with exact tags, ANY_TAG and ANY_SOURCE. */
#include "check.h"

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int per = 100;
    if (size == 1) {
        /* messages to oneself keep their order too */
        for (int i = 0; i < per; i++)
            CHECK_MPI(MPI_Send(&i, 1, MPI_INT, 0, i % 4, MPI_COMM_WORLD));
        for (int i = 0; i < per; i++) {
            int v = -1;
            CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
            CHECK(v == i, "expected %d, got %d", i, v);
        }
        return finish_ok();
    }
    if (rank == 0) {
        int *next = calloc((size_t)size, sizeof *next);
        for (int i = 0; i < per * (size - 1); i++) {
            int v[2];
            MPI_Status st;
            CHECK_MPI(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(v[0] == st.MPI_SOURCE, "payload says source %d, status %d", v[0], st.MPI_SOURCE);
            CHECK(v[1] == next[v[0]], "from rank %d: expected message %d, got %d", v[0], next[v[0]],
                  v[1]);
            CHECK(st.MPI_TAG == v[1] % 3, "tag: expected %d got %d", v[1] % 3, st.MPI_TAG);
            next[v[0]]++;
        }
        free(next);
    } else {
        for (int i = 0; i < per; i++) {
            int v[2] = {rank, i};
            CHECK_MPI(MPI_Send(v, 2, MPI_INT, 0, i % 3, MPI_COMM_WORLD));
        }
    }
    /* exact tags received in reverse tag order (after a barrier: the ANY_TAG receives above
     * must not see these) */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        for (int i = 0; i < per; i++)
            CHECK_MPI(MPI_Send(&i, 1, MPI_INT, 0, 10 + i % 2, MPI_COMM_WORLD));
    } else if (rank == 0) {
        for (int t = 11; t >= 10; t--)
            for (int i = t - 10; i < per; i += 2) {
                int v = -1;
                CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, 1, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(v == i, "tag %d: expected %d got %d", t, i, v);
            }
    }
    return finish_ok();
}
