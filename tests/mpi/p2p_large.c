/* p2p_large.c — message sizes across the eager limit (up to 8 MiB), blocking and
 * nonblocking, Ssend, truncation reported with MPI_ERRORS_RETURN. */
#include <string.h>

#include "check.h"

static unsigned char pat(size_t i, int s)
{
    return (unsigned char)(i * 13 + s);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const size_t sizes[] = {0, 1, 1000, 16383, 16384, 16385, 100000, 1 << 20, 8 << 20};
    size_t max = 8 << 20;
    unsigned char *a = malloc(max), *b = malloc(max);
    CHECK(a && b, "out of memory");
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        for (size_t i = 0; i < n; i++)
            a[i] = pat(i, rank + (int)k);
        memset(b, 0, n);
        MPI_Request rq[2];
        MPI_Status st[2];
        CHECK_MPI(MPI_Irecv(b, (int)n, MPI_BYTE, left, (int)k, MPI_COMM_WORLD, &rq[0]));
        CHECK_MPI(MPI_Isend(a, (int)n, MPI_BYTE, right, (int)k, MPI_COMM_WORLD, &rq[1]));
        CHECK_MPI(MPI_Waitall(2, rq, st));
        int cnt = -1;
        MPI_Get_count(&st[0], MPI_BYTE, &cnt);
        CHECK(cnt == (int)n, "size %zu: count %d", n, cnt);
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == pat(i, left + (int)k), "size %zu byte %zu: expected %u got %u", n, i,
                  pat(i, left + (int)k), b[i]);
        /* blocking, ordered so it cannot deadlock for any size: even ranks send first */
        if (size > 1) {
            if (rank % 2 == 0) {
                CHECK_MPI(MPI_Ssend(a, (int)n, MPI_BYTE, right, 1000, MPI_COMM_WORLD));
                CHECK_MPI(
                    MPI_Recv(b, (int)n, MPI_BYTE, left, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                CHECK_MPI(
                    MPI_Recv(b, (int)n, MPI_BYTE, left, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK_MPI(MPI_Ssend(a, (int)n, MPI_BYTE, right, 1000, MPI_COMM_WORLD));
            }
            if (n)
                CHECK(b[n - 1] == pat(n - 1, left + (int)k), "Ssend size %zu: last byte wrong", n);
        }
    }
    /* truncation */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request rq;
    CHECK_MPI(MPI_Isend(a, 100000, MPI_BYTE, right, 5, MPI_COMM_WORLD, &rq));
    MPI_Status st;
    int e = MPI_Recv(b, 10, MPI_BYTE, left, 5, MPI_COMM_WORLD, &st);
    CHECK(e == MPI_ERR_TRUNCATE, "expected MPI_ERR_TRUNCATE, got %d", e);
    CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    free(a);
    free(b);
    return finish_ok();
}
