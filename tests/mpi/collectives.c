/* collectives.c — Barrier, Bcast, Reduce, Allreduce (with MPI_IN_PLACE), MINLOC, and
 * collectives on a split communicator. */
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int n = 50000;
    int *a = malloc(n * sizeof(int)), *b = malloc(n * sizeof(int));
    for (int it = 0; it < 20; it++) {
        int root = it % size;
        CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            a[i] = rank == root ? i + it : -1;
        CHECK_MPI(MPI_Bcast(a, n, MPI_INT, root, MPI_COMM_WORLD));
        CHECK(a[n - 1] == n - 1 + it && a[0] == it, "Bcast it %d: got %d", it, a[n - 1]);
        for (int i = 0; i < n; i++)
            a[i] = rank + i;
        CHECK_MPI(MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < n; i += 997)
                CHECK(b[i] == size * (size - 1) / 2 + size * i, "Reduce elem %d: got %d", i, b[i]);
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < n; i += 991)
            CHECK(a[i] == size - 1 + i, "Allreduce in place elem %d: expected %d got %d", i,
                  size - 1 + i, a[i]);
        double d = rank + 0.5, s = 0;
        CHECK_MPI(MPI_Allreduce(&d, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        CHECK(s == size * (size - 1) / 2.0 + 0.5 * size, "double sum: got %g", s);
    }
    struct {
        int v, i;
    } mine = {(rank * 5 + 3) % (size + 1), rank}, best;
    CHECK_MPI(MPI_Allreduce(&mine, &best, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    int bv = 1 << 30, bi = -1;
    for (int r = 0; r < size; r++)
        if ((r * 5 + 3) % (size + 1) < bv) {
            bv = (r * 5 + 3) % (size + 1);
            bi = r;
        }
    CHECK(best.v == bv && best.i == bi, "MINLOC: expected (%d,%d) got (%d,%d)", bv, bi, best.v,
          best.i);

    MPI_Comm half;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    int hs, x = 1, sum = 0;
    MPI_Comm_size(half, &hs);
    CHECK_MPI(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, half));
    CHECK(sum == hs, "split allreduce: expected %d got %d", hs, sum);
    CHECK_MPI(MPI_Comm_free(&half));
    free(a);
    free(b);
    return finish_ok();
}
