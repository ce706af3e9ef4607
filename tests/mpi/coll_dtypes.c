/* coll_dtypes.c — every collective with non-contiguous datatypes (a vector of ints with gaps,
 * a resized column), blocking and non-blocking, checked element by element and gap by gap:
 * the gaps of every receive buffer keep their values.  Run on one node and across agents
 * (where the inter-node phase runs on packed copies of each member's blocks). */
#include <string.h>

#include "check.h"

#define GAP (-7) /* what every gap holds before and after */

/* v2: 2 ints out of every 3 (one element = ints 0, 1; extent 2 ints, resized to 3) */
static MPI_Datatype v2;
static int rank, size;

/* Element e of a v2 buffer: ints 3e and 3e + 1; 3e + 2 is a gap. */
static void fill(int *b, int nelem, int base)
{
    for (int e = 0; e < nelem; e++) {
        b[3 * e] = base + 2 * e;
        b[3 * e + 1] = base + 2 * e + 1;
        b[3 * e + 2] = GAP;
    }
}

static void check_elems(const int *b, int nelem, int base, const char *what, int blk)
{
    for (int e = 0; e < nelem; e++) {
        CHECK(b[3 * e] == base + 2 * e && b[3 * e + 1] == base + 2 * e + 1,
              "%s block %d element %d: expected %d %d got %d %d", what, blk, e, base + 2 * e,
              base + 2 * e + 1, b[3 * e], b[3 * e + 1]);
        CHECK(b[3 * e + 2] == GAP, "%s block %d element %d: gap overwritten with %d", what, blk, e,
              b[3 * e + 2]);
    }
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    CHECK(*dt == v2, "user op: got datatype %d, expected the vector", *dt);
    /* the function walks the vector's layout: gaps must not be combined */
    int *a = in, *b = inout;
    for (int e = 0; e < *len; e++) {
        b[3 * e] += a[3 * e];
        b[3 * e + 1] += a[3 * e + 1];
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype v;
    CHECK_MPI(MPI_Type_vector(1, 2, 3, MPI_INT, &v));
    CHECK_MPI(MPI_Type_create_resized(v, 0, 3 * sizeof(int), &v2));
    CHECK_MPI(MPI_Type_commit(&v2));
    CHECK_MPI(MPI_Type_free(&v));
    const int K = 5; /* elements per block */
    const int n = size, root = size - 1;
    int *sb = malloc(sizeof(int) * 3 * (size_t)(K * n + 8)),
        *rb = malloc(sizeof(int) * 3 * (size_t)(K * n + 8));
    CHECK(sb && rb);

    for (int nb = 0; nb < 2; nb++) {
        MPI_Request rq;
#define RUN(call, icall)                                                                           \
    do {                                                                                           \
        if (nb) {                                                                                  \
            CHECK_MPI(icall);                                                                      \
            CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));                                           \
        } else {                                                                                   \
            CHECK_MPI(call);                                                                       \
        }                                                                                          \
    } while (0)
        /* Bcast */
        fill(rb, K, rank == root ? 1000 : -1000);
        RUN(MPI_Bcast(rb, K, v2, root, MPI_COMM_WORLD),
            MPI_Ibcast(rb, K, v2, root, MPI_COMM_WORLD, &rq));
        check_elems(rb, K, 1000, "bcast", 0);
        /* Gather: block q from rank q */
        fill(sb, K, rank * 100);
        fill(rb, K * n, -1);
        RUN(MPI_Gather(sb, K, v2, rb, K, v2, root, MPI_COMM_WORLD),
            MPI_Igather(sb, K, v2, rb, K, v2, root, MPI_COMM_WORLD, &rq));
        if (rank == root)
            for (int q = 0; q < n; q++)
                check_elems(rb + 3 * K * q, K, q * 100, "gather", q);
        /* Scatter */
        fill(sb, K * n, 0);
        for (int q = 0; q < n; q++)
            fill(sb + 3 * K * q, K, 50 * q + 7);
        fill(rb, K, -1);
        RUN(MPI_Scatter(sb, K, v2, rb, K, v2, root, MPI_COMM_WORLD),
            MPI_Iscatter(sb, K, v2, rb, K, v2, root, MPI_COMM_WORLD, &rq));
        check_elems(rb, K, 50 * rank + 7, "scatter", 0);
        /* Allgather, and Allgatherv with blocks in reverse order and a hole between them */
        fill(sb, K, rank * 10);
        fill(rb, K * n, -1);
        RUN(MPI_Allgather(sb, K, v2, rb, K, v2, MPI_COMM_WORLD),
            MPI_Iallgather(sb, K, v2, rb, K, v2, MPI_COMM_WORLD, &rq));
        for (int q = 0; q < n; q++)
            check_elems(rb + 3 * K * q, K, q * 10, "allgather", q);
        int counts[64], displs[64], sdispls[64];
        CHECK(n <= 64);
        for (int q = 0; q < n; q++) {
            counts[q] = 1 + q % 3;
            displs[q] = 4 * (n - 1 - q); /* 4 elements per slot, at most 3 used */
        }
        fill(sb, 3, rank * 10);
        fill(rb, 4 * n, -1);
        RUN(MPI_Allgatherv(sb, counts[rank], v2, rb, counts, displs, v2, MPI_COMM_WORLD),
            MPI_Iallgatherv(sb, counts[rank], v2, rb, counts, displs, v2, MPI_COMM_WORLD, &rq));
        for (int q = 0; q < n; q++) {
            check_elems(rb + 3 * displs[q], counts[q], q * 10, "allgatherv", q);
            check_elems(rb + 3 * (displs[q] + counts[q]), 4 - counts[q],
                        -1 + 2 * (displs[q] + counts[q]), "allgatherv hole", q);
        }
        /* Gatherv and Scatterv with the same layout */
        fill(rb, 4 * n, -1);
        RUN(MPI_Gatherv(sb, counts[rank], v2, rb, counts, displs, v2, root, MPI_COMM_WORLD),
            MPI_Igatherv(sb, counts[rank], v2, rb, counts, displs, v2, root, MPI_COMM_WORLD, &rq));
        if (rank == root)
            for (int q = 0; q < n; q++)
                check_elems(rb + 3 * displs[q], counts[q], q * 10, "gatherv", q);
        fill(sb, 4 * n, 0);
        for (int q = 0; q < n; q++)
            fill(sb + 3 * displs[q], counts[q], 30 * q);
        fill(rb, 3, -1);
        RUN(MPI_Scatterv(sb, counts, displs, v2, rb, counts[rank], v2, root, MPI_COMM_WORLD),
            MPI_Iscatterv(sb, counts, displs, v2, rb, counts[rank], v2, root, MPI_COMM_WORLD, &rq));
        check_elems(rb, counts[rank], 30 * rank, "scatterv", 0);
        /* Alltoall: block q of rank p holds 1000 p + 10 q */
        for (int q = 0; q < n; q++)
            fill(sb + 3 * K * q, K, 1000 * rank + 10 * q);
        fill(rb, K * n, -1);
        RUN(MPI_Alltoall(sb, K, v2, rb, K, v2, MPI_COMM_WORLD),
            MPI_Ialltoall(sb, K, v2, rb, K, v2, MPI_COMM_WORLD, &rq));
        for (int q = 0; q < n; q++)
            check_elems(rb + 3 * K * q, K, 1000 * q + 10 * rank, "alltoall", q);
        /* Alltoallv: counts[q] elements to q at 4q; from q, counts[rank] elements */
        int scnt[64], rcnt[64];
        for (int q = 0; q < n; q++) {
            scnt[q] = counts[q];
            rcnt[q] = counts[rank];
            sdispls[q] = 4 * q;
            displs[q] = 4 * q;
            fill(sb + 3 * 4 * q, 4, 1000 * rank + 10 * q);
        }
        fill(rb, 4 * n, -1);
        RUN(MPI_Alltoallv(sb, scnt, sdispls, v2, rb, rcnt, displs, v2, MPI_COMM_WORLD),
            MPI_Ialltoallv(sb, scnt, sdispls, v2, rb, rcnt, displs, v2, MPI_COMM_WORLD, &rq));
        for (int q = 0; q < n; q++) {
            check_elems(rb + 3 * 4 * q, counts[rank], 1000 * q + 10 * rank, "alltoallv", q);
            check_elems(rb + 3 * (4 * q + counts[rank]), 4 - counts[rank],
                        -1 + 2 * (4 * q + counts[rank]), "alltoallv hole", q);
        }
        /* Alltoallw: the same, displacements in bytes, one type per peer */
        MPI_Datatype ts[64];
        int bd[64], rbd[64];
        for (int q = 0; q < n; q++) {
            ts[q] = v2;
            bd[q] = sdispls[q] * 3 * (int)sizeof(int);
            rbd[q] = displs[q] * 3 * (int)sizeof(int);
        }
        fill(rb, 4 * n, -1);
        RUN(MPI_Alltoallw(sb, scnt, bd, ts, rb, rcnt, rbd, ts, MPI_COMM_WORLD),
            MPI_Ialltoallw(sb, scnt, bd, ts, rb, rcnt, rbd, ts, MPI_COMM_WORLD, &rq));
        for (int q = 0; q < n; q++)
            check_elems(rb + 3 * 4 * q, counts[rank], 1000 * q + 10 * rank, "alltoallw", q);
        /* Reductions: Allreduce, Reduce, Scan, Exscan, Reduce_scatter_block with MPI_SUM and a
         * user function; element e of rank p holds (p + 2e, p + 2e + 1) */
        MPI_Op uop;
        CHECK_MPI(MPI_Op_create(user_sum, 1, &uop));
        MPI_Op ops[2] = {MPI_SUM, uop};
        for (int oi = 0; oi < 2; oi++) {
            const int sum_p = n * (n - 1) / 2;
            fill(sb, K * n, rank);
            fill(rb, K * n, -1);
            RUN(MPI_Allreduce(sb, rb, K, v2, ops[oi], MPI_COMM_WORLD),
                MPI_Iallreduce(sb, rb, K, v2, ops[oi], MPI_COMM_WORLD, &rq));
            for (int e = 0; e < K; e++)
                CHECK(rb[3 * e] == sum_p + n * 2 * e && rb[3 * e + 1] == sum_p + n * (2 * e + 1) &&
                          rb[3 * e + 2] == GAP,
                      "allreduce (op %d) element %d: got %d %d %d", oi, e, rb[3 * e], rb[3 * e + 1],
                      rb[3 * e + 2]);
            fill(rb, K, -1);
            RUN(MPI_Reduce(sb, rb, K, v2, ops[oi], root, MPI_COMM_WORLD),
                MPI_Ireduce(sb, rb, K, v2, ops[oi], root, MPI_COMM_WORLD, &rq));
            if (rank == root)
                for (int e = 0; e < K; e++)
                    CHECK(rb[3 * e] == sum_p + n * 2 * e && rb[3 * e + 2] == GAP,
                          "reduce (op %d) element %d: got %d gap %d", oi, e, rb[3 * e],
                          rb[3 * e + 2]);
            fill(rb, K, -1);
            RUN(MPI_Scan(sb, rb, K, v2, ops[oi], MPI_COMM_WORLD),
                MPI_Iscan(sb, rb, K, v2, ops[oi], MPI_COMM_WORLD, &rq));
            const int pre = rank * (rank + 1) / 2; /* 0 + 1 + ... + rank */
            for (int e = 0; e < K; e++)
                CHECK(rb[3 * e] == pre + (rank + 1) * 2 * e && rb[3 * e + 2] == GAP,
                      "scan (op %d) element %d: got %d gap %d", oi, e, rb[3 * e], rb[3 * e + 2]);
            fill(rb, K, -1);
            RUN(MPI_Exscan(sb, rb, K, v2, ops[oi], MPI_COMM_WORLD),
                MPI_Iexscan(sb, rb, K, v2, ops[oi], MPI_COMM_WORLD, &rq));
            const int epre = rank * (rank - 1) / 2;
            for (int e = 0; rank > 0 && e < K; e++)
                CHECK(rb[3 * e] == epre + rank * 2 * e && rb[3 * e + 2] == GAP,
                      "exscan (op %d) element %d: got %d gap %d", oi, e, rb[3 * e], rb[3 * e + 2]);
            fill(rb, K, -1);
            RUN(MPI_Reduce_scatter_block(sb, rb, 1, v2, ops[oi], MPI_COMM_WORLD),
                MPI_Ireduce_scatter_block(sb, rb, 1, v2, ops[oi], MPI_COMM_WORLD, &rq));
            CHECK(rb[0] == sum_p + n * 2 * rank && rb[1] == sum_p + n * (2 * rank + 1) &&
                      rb[2] == GAP && rb[3] == -1 + 2,
                  "reduce_scatter_block (op %d): got %d %d %d %d", oi, rb[0], rb[1], rb[2], rb[3]);
        }
        CHECK_MPI(MPI_Op_free(&uop));
#undef RUN
    }
    CHECK_MPI(MPI_Type_free(&v2));
    free(sb);
    free(rb);
    return finish_ok();
}
