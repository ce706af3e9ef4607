/* datatypes_coll.c — collectives with derived datatypes: Bcast of a column vector, Gather of
 * structs, Alltoall of vectors received as contiguous, Allreduce and Reduce of a vector of
 * doubles with MPI_SUM (the gaps between its blocks stay untouched), MINLOC on a contiguous
 * type of MPI_DOUBLE_INT, a user op on a vector. */
#include <string.h>

#include "check.h"

static int rank, size;

static void user_max(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    /* dt is a vector of 4 doubles with stride 2: the function sees that layout */
    double *a = in, *b = inout;
    for (int e = 0; e < *len; e++)
        for (int k = 0; k < 4; k++) {
            double *x = &a[e * 7 + 2 * k], *y = &b[e * 7 + 2 * k];
            if (*x > *y) *y = *x;
        }
    (void)dt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* vector of 4 doubles, stride 2 -> extent 7 doubles */
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &v));
    CHECK_MPI(MPI_Type_commit(&v));
    enum { CNT = 600 };
    double *a = malloc(sizeof *a * 7 * CNT), *b = malloc(sizeof *b * 7 * CNT);
    for (int i = 0; i < 7 * CNT; i++)
        a[i] = rank + i, b[i] = -1;

    /* Allreduce(SUM) of a vector: blocks summed, gaps untouched */
    CHECK_MPI(MPI_Allreduce(a, b, CNT, v, MPI_SUM, MPI_COMM_WORLD));
    double rs = size * (size - 1) / 2.0;
    for (int i = 0; i < 7 * CNT; i++) {
        int in = i % 7 % 2 == 0;
        double want = in ? rs + (double)size * i : -1;
        CHECK(b[i] == want, "Allreduce vector b[%d] expected %g got %g", i, want, b[i]);
    }
    /* Reduce to the last rank */
    for (int i = 0; i < 7 * CNT; i++)
        b[i] = -2;
    CHECK_MPI(MPI_Reduce(a, b, CNT, v, MPI_SUM, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1)
        for (int i = 0; i < 7 * CNT; i++) {
            double want = i % 7 % 2 == 0 ? rs + (double)size * i : -2;
            CHECK(b[i] == want, "Reduce vector b[%d] expected %g got %g", i, want, b[i]);
        }
    /* a user op on the vector */
    MPI_Op op;
    CHECK_MPI(MPI_Op_create(user_max, 1, &op));
    for (int i = 0; i < 7 * CNT; i++)
        b[i] = -3;
    CHECK_MPI(MPI_Allreduce(a, b, CNT, v, op, MPI_COMM_WORLD));
    for (int i = 0; i < 7 * CNT; i++) {
        double want = i % 7 % 2 == 0 ? (double)(size - 1 + i) : -3;
        CHECK(b[i] == want, "user op vector b[%d] expected %g got %g", i, want, b[i]);
    }
    CHECK_MPI(MPI_Op_free(&op));

    /* Bcast of the vector from rank 0 */
    for (int i = 0; i < 7 * CNT; i++)
        b[i] = rank ? -4 : (double)i;
    CHECK_MPI(MPI_Bcast(b, CNT, v, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 7 * CNT; i++) {
        double want = i % 7 % 2 == 0 || rank == 0 ? (double)i : -4;
        CHECK(b[i] == want, "Bcast vector b[%d] expected %g got %g", i, want, b[i]);
    }

    /* Gather one vector from each rank as 4 contiguous doubles at the root */
    double *g = malloc(sizeof *g * 4 * (size_t)size);
    CHECK_MPI(MPI_Gather(a, 1, v, g, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; r++)
            for (int k = 0; k < 4; k++)
                CHECK(g[4 * r + k] == r + 2 * k, "Gather g[%d] expected %d got %g", 4 * r + k,
                      r + 2 * k, g[4 * r + k]);
    free(g);

    /* MINLOC over a contiguous type of 3 MPI_DOUBLE_INT */
    struct {
        double v;
        int i;
    } p[3], q[3];
    MPI_Datatype c3;
    CHECK_MPI(MPI_Type_contiguous(3, MPI_DOUBLE_INT, &c3));
    CHECK_MPI(MPI_Type_commit(&c3));
    for (int k = 0; k < 3; k++)
        p[k].v = (rank * 7 + k * 3) % size, p[k].i = rank;
    CHECK_MPI(MPI_Allreduce(p, q, 1, c3, MPI_MINLOC, MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++) {
        int who = -1;
        for (int r = 0; r < size && who < 0; r++)
            if ((r * 7 + k * 3) % size == 0) who = r;
        CHECK(q[k].v == 0 && q[k].i == who, "MINLOC[%d] expected 0/%d got %g/%d", k, who, q[k].v,
              q[k].i);
    }
    /* MAXLOC over MPI_SHORT_INT, whose padding lies between value and index (packed 6 bytes) */
    struct {
        short v;
        int i;
    } sp[2], sq[2];
    for (int k = 0; k < 2; k++)
        sp[k].v = (short)(k ? -rank : rank), sp[k].i = rank;
    CHECK_MPI(MPI_Allreduce(sp, sq, 2, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(sq[0].v == size - 1 && sq[0].i == size - 1 && sq[1].v == 0 && sq[1].i == 0,
          "SHORT_INT MAXLOC got %d/%d %d/%d", sq[0].v, sq[0].i, sq[1].v, sq[1].i);
    CHECK_MPI(MPI_Type_free(&c3));
    CHECK_MPI(MPI_Type_free(&v));
    free(a);
    free(b);
    return finish_ok();
}
