/* topo_cart.c — Cartesian topologies: Dims_create against the standard's examples, Cart_create
 * (reorder 0 and 1), Cart_get/Cartdim_get/Cart_rank/Cart_coords, Cart_shift on periodic and
 * non-periodic dimensions, Cart_sub, Cart_map, Topo_test, Comm_dup keeping the topology, the
 * error classes of bad arguments, and reorder = 1 keeping grid neighbours on one node. */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s (%d), got %d", #call, #cls, cls, e_);                  \
    } while (0)

static void dims_case(int nnodes, int ndims, const int *in, const int *want)
{
    int d[8];
    memcpy(d, in, sizeof *d * (size_t)ndims);
    CHECK_MPI(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] expected %d, got %d", nnodes, ndims,
              i, want[i], d[i]);
}

static void test_dims(void)
{
    /* MPI 3.1 §7.5.2, Example 7.1 */
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_case(6, 3, (int[]){0, 3, 0}, (int[]){2, 3, 1});
    int bad[3] = {0, 3, 0};
    EXPECT(MPI_Dims_create(7, 3, bad), MPI_ERR_DIMS);
    /* balanced, non-increasing */
    dims_case(12, 2, (int[]){0, 0}, (int[]){4, 3});
    dims_case(16, 2, (int[]){0, 0}, (int[]){4, 4});
    dims_case(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    dims_case(16, 4, (int[]){0, 0, 0, 0}, (int[]){2, 2, 2, 2});
    dims_case(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims_case(60, 2, (int[]){0, 0}, (int[]){10, 6});
    dims_case(8, 3, (int[]){0, 4, 0}, (int[]){2, 4, 1});
    dims_case(9, 2, (int[]){3, 3}, (int[]){3, 3});
    dims_case(1000003, 2, (int[]){0, 0}, (int[]){1000003, 1}); /* a prime: fast */
    /* equal spread, the parts between as close as they can be: the smaller sum */
    dims_case(5616, 4, (int[]){0, 0, 0, 0}, (int[]){13, 9, 8, 6});
    dims_case(18576, 4, (int[]){0, 0, 0, 0}, (int[]){43, 9, 8, 6});
    dims_case(5616, 5, (int[]){0, 0, 13, 0, 0}, (int[]){6, 6, 13, 4, 3});
    int neg[2] = {-1, 0};
    EXPECT(MPI_Dims_create(4, 2, neg), MPI_ERR_DIMS);
    int full[2] = {2, 3};
    EXPECT(MPI_Dims_create(12, 2, full), MPI_ERR_DIMS);
    EXPECT(MPI_Dims_create(4, -1, full), MPI_ERR_DIMS);
}

/* A node id per rank: the lowest world rank sharing its node. */
static int node_id(void)
{
    int wr, id;
    MPI_Comm shm;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    CHECK_MPI(MPI_Allreduce(&wr, &id, 1, MPI_INT, MPI_MIN, shm));
    MPI_Comm_free(&shm);
    return id;
}

/* Neighbour pairs (+1 in each dimension, with wrap where periodic) on one node, over cart. */
static int local_pairs(MPI_Comm cart, int node)
{
    int n, nd, me;
    MPI_Comm_size(cart, &n);
    MPI_Comm_rank(cart, &me);
    CHECK_MPI(MPI_Cartdim_get(cart, &nd));
    int *nodes = malloc(sizeof *nodes * (size_t)n);
    CHECK_MPI(MPI_Allgather(&node, 1, MPI_INT, nodes, 1, MPI_INT, cart));
    int pairs = 0;
    for (int d = 0; d < nd; d++) {
        int src, dst;
        CHECK_MPI(MPI_Cart_shift(cart, d, 1, &src, &dst));
        if (dst != MPI_PROC_NULL && dst != me && nodes[dst] == node) pairs++;
    }
    int all = 0;
    CHECK_MPI(MPI_Allreduce(&pairs, &all, 1, MPI_INT, MPI_SUM, cart));
    free(nodes);
    return all;
}

static void test_grid(int size, int rank)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CHECK_MPI(MPI_Dims_create(size, 2, dims));
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK(cart != MPI_COMM_NULL, "Cart_create gave MPI_COMM_NULL to a member");
    int st, crank, csize;
    CHECK_MPI(MPI_Topo_test(cart, &st));
    CHECK(st == MPI_CART, "Topo_test: expected MPI_CART, got %d", st);
    CHECK_MPI(MPI_Topo_test(MPI_COMM_WORLD, &st));
    CHECK(st == MPI_UNDEFINED, "Topo_test(world): expected MPI_UNDEFINED, got %d", st);
    MPI_Comm_rank(cart, &crank);
    MPI_Comm_size(cart, &csize);
    CHECK(crank == rank && csize == size, "reorder 0: rank %d size %d", crank, csize);
    int nd, gd[2], gp[2], gc[2];
    CHECK_MPI(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2, "Cartdim_get: %d", nd);
    CHECK_MPI(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0,
          "Cart_get: dims %dx%d periods %d,%d", gd[0], gd[1], gp[0], gp[1]);
    CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1], "Cart_get coords (%d,%d) rank %d",
          gc[0], gc[1], rank);
    for (int r = 0; r < size; r++) {
        int c[2], back;
        CHECK_MPI(MPI_Cart_coords(cart, r, 2, c));
        CHECK(c[0] == r / dims[1] && c[1] == r % dims[1], "Cart_coords(%d): (%d,%d)", r, c[0],
              c[1]);
        CHECK_MPI(MPI_Cart_rank(cart, c, &back));
        CHECK(back == r, "Cart_rank(Cart_coords(%d)) = %d", r, back);
    }
    /* periodic dimension 0: coordinates wrap */
    int wrap[2] = {gc[0] + dims[0], gc[1]}, wr;
    CHECK_MPI(MPI_Cart_rank(cart, wrap, &wr));
    CHECK(wr == rank, "Cart_rank with wrapped coordinate: %d, expected %d", wr, rank);
    int negc[2] = {-dims[0] + gc[0], gc[1]};
    CHECK_MPI(MPI_Cart_rank(cart, negc, &wr));
    CHECK(wr == rank, "Cart_rank with negative periodic coordinate: %d", wr);
    /* shifts */
    for (int disp = -2; disp <= 2; disp++) {
        int src, dst;
        CHECK_MPI(MPI_Cart_shift(cart, 0, disp, &src, &dst));
        int es = ((gc[0] - disp) % dims[0] + dims[0]) % dims[0] * dims[1] + gc[1];
        int ed = ((gc[0] + disp) % dims[0] + dims[0]) % dims[0] * dims[1] + gc[1];
        CHECK(src == es && dst == ed, "periodic shift %d: src %d dst %d, expected %d %d", disp, src,
              dst, es, ed);
        CHECK_MPI(MPI_Cart_shift(cart, 1, disp, &src, &dst));
        int s1 = gc[1] - disp, d1 = gc[1] + disp;
        es = s1 < 0 || s1 >= dims[1] ? MPI_PROC_NULL : gc[0] * dims[1] + s1;
        ed = d1 < 0 || d1 >= dims[1] ? MPI_PROC_NULL : gc[0] * dims[1] + d1;
        CHECK(src == es && dst == ed, "non-periodic shift %d: src %d dst %d, expected %d %d", disp,
              src, dst, es, ed);
    }
    /* errors */
    int src, dst, c[2] = {0, dims[1]}, r;
    EXPECT(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_shift(cart, -1, 1, &src, &dst), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_rank(cart, c, &r), MPI_ERR_ARG);
    EXPECT(MPI_Cart_coords(cart, size, 2, c), MPI_ERR_RANK);
    EXPECT(MPI_Cart_coords(cart, -1, 2, c), MPI_ERR_RANK);
    EXPECT(MPI_Cart_coords(cart, 0, 1, c), MPI_ERR_ARG);
    EXPECT(MPI_Cart_get(cart, 1, gd, gp, gc), MPI_ERR_ARG);
    EXPECT(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cart_get(MPI_COMM_WORLD, 2, gd, gp, gc), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cartdim_get(MPI_COMM_NULL, &nd), MPI_ERR_COMM);
    EXPECT(MPI_Topo_test(MPI_COMM_NULL, &st), MPI_ERR_COMM);
    /* dup keeps the topology; split does not */
    MPI_Comm dup, split;
    CHECK_MPI(MPI_Comm_dup(cart, &dup));
    CHECK_MPI(MPI_Topo_test(dup, &st));
    CHECK(st == MPI_CART, "Topo_test(dup): %d", st);
    CHECK_MPI(MPI_Cart_get(dup, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gp[0] == 1 && gc[1] == rank % dims[1], "Cart_get(dup)");
    CHECK_MPI(MPI_Comm_split(cart, 0, rank, &split));
    CHECK_MPI(MPI_Topo_test(split, &st));
    CHECK(st == MPI_UNDEFINED, "Topo_test(split of cart): %d", st);
    MPI_Comm_free(&split);
    CHECK_MPI(MPI_Comm_free(&cart));
    /* still usable after the original is freed */
    CHECK_MPI(MPI_Cart_shift(dup, 0, 1, &src, &dst));
    /* sub-grids: keep dimension 1 (rows), then dimension 0 (columns), then none */
    MPI_Comm row, col, pt;
    CHECK_MPI(MPI_Cart_sub(dup, (int[]){0, 1}, &row));
    int rr, rs;
    MPI_Comm_rank(row, &rr);
    MPI_Comm_size(row, &rs);
    CHECK(rr == gc[1] && rs == dims[1], "row sub-grid: rank %d size %d", rr, rs);
    CHECK_MPI(MPI_Cart_get(row, 1, gd, gp, c));
    CHECK(gd[0] == dims[1] && gp[0] == 0 && c[0] == gc[1], "row Cart_get");
    int sum = 0, one = rank;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, row));
    int want = 0;
    for (int j = 0; j < dims[1]; j++)
        want += gc[0] * dims[1] + j;
    CHECK(sum == want, "row Allreduce: %d, expected %d", sum, want);
    CHECK_MPI(MPI_Cart_sub(dup, (int[]){1, 0}, &col));
    MPI_Comm_rank(col, &rr);
    MPI_Comm_size(col, &rs);
    CHECK(rr == gc[0] && rs == dims[0], "column sub-grid: rank %d size %d", rr, rs);
    CHECK_MPI(MPI_Cart_get(col, 1, gd, gp, c));
    CHECK(gd[0] == dims[0] && gp[0] == 1, "column Cart_get");
    CHECK_MPI(MPI_Cart_sub(dup, (int[]){0, 0}, &pt));
    MPI_Comm_size(pt, &rs);
    CHECK_MPI(MPI_Cartdim_get(pt, &nd));
    CHECK(rs == 1 && nd == 0, "zero-dimensional sub-grid: size %d ndims %d", rs, nd);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Comm_free(&pt);
    MPI_Comm_free(&dup);
}

static void test_create_errors(int size, int rank)
{
    MPI_Comm c = MPI_COMM_NULL;
    int d1[1] = {size + 1}, p1[1] = {0}, d0[1] = {0}, dn[1] = {-2};
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 1, d0, p1, 0, &c), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 1, dn, p1, 0, &c), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, -1, d1, p1, 0, &c), MPI_ERR_DIMS);
    EXPECT(MPI_Cart_create(MPI_COMM_NULL, 1, d1, p1, 0, &c), MPI_ERR_COMM);
    EXPECT(MPI_Cart_map(MPI_COMM_WORLD, 1, d1, p1, &rank), MPI_ERR_DIMS);
    /* a grid smaller than the communicator: the others get MPI_COMM_NULL */
    int dh[1] = {(size + 1) / 2}, wr;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dh, p1, 0, &c));
    if (wr < dh[0]) {
        CHECK(c != MPI_COMM_NULL, "rank %d < %d got MPI_COMM_NULL", wr, dh[0]);
        MPI_Comm_free(&c);
    } else {
        CHECK(c == MPI_COMM_NULL, "rank %d >= %d got a communicator", wr, dh[0]);
    }
    int nr;
    CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 1, dh, p1, &nr));
    CHECK(wr < dh[0] ? nr >= 0 && nr < dh[0] : nr == MPI_UNDEFINED, "Cart_map: %d", nr);
    /* zero dimensions: one member */
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c));
    CHECK(wr == 0 ? c != MPI_COMM_NULL : c == MPI_COMM_NULL, "zero-dimensional grid");
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
}

/* reorder = 1 puts at least as many grid neighbours on one node as the old order does. */
static void test_reorder(int size, int rank)
{
    int node = node_id();
    int dims[2] = {0, 0}, periods[2] = {0, 1};
    CHECK_MPI(MPI_Dims_create(size, 2, dims));
    int swap = dims[0];
    dims[0] = dims[1];
    dims[1] = swap; /* the short side first: row-major order splits columns */
    MPI_Comm c0, c1;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c0));
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c1));
    int before = local_pairs(c0, node), after = local_pairs(c1, node);
    CHECK(after >= before, "reorder 1 put %d neighbour pairs on one node, reorder 0 %d", after,
          before);
    /* every rank got a distinct point, consistent on every member */
    int r1, *all = malloc(sizeof *all * (size_t)size);
    MPI_Comm_rank(c1, &r1);
    CHECK_MPI(MPI_Allgather(&r1, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        for (int j = i + 1; j < size; j++)
            CHECK(all[i] != all[j], "ranks %d and %d both got %d", i, j, all[i]);
    int nr;
    CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr));
    CHECK(nr == r1, "Cart_map says %d, Cart_create gave %d", nr, r1);
    /* k ranks on every node and a (k, size / k) grid: at least as many neighbour pairs on one node
     * as one column per node gives */
    int nodes_k = 0, local = 0;
    MPI_Comm shm;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    MPI_Comm_size(shm, &local);
    MPI_Comm_free(&shm);
    int lmin, lmax;
    CHECK_MPI(MPI_Allreduce(&local, &lmin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Allreduce(&local, &lmax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    nodes_k = lmin == lmax && lmin < size ? lmin : 0;
    if (nodes_k > 1 && size % nodes_k == 0) {
        int d2[2] = {nodes_k, size / nodes_k}, p2[2] = {0, 0};
        MPI_Comm c2;
        CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 1, &c2));
        int got = local_pairs(c2, node), want = (size / nodes_k) * (nodes_k - 1);
        CHECK(got >= want,
              "reorder 1 on a %dx%d grid with %d ranks per node: %d neighbour pairs on one node, "
              "expected at least %d (one column per node)",
              d2[0], d2[1], nodes_k, got, want);
        if (rank == 0)
            printf("reorder: %d ranks per node, %d neighbour pairs on one node (columns: %d)\n",
                   nodes_k, got, want);
        MPI_Comm_free(&c2);
    }
    if (rank == 0) printf("reorder: %d local neighbour pairs, %d without\n", after, before);
    free(all);
    MPI_Comm_free(&c0);
    MPI_Comm_free(&c1);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_dims();
    test_grid(size, rank);
    test_create_errors(size, rank);
    test_reorder(size, rank);
    return finish_ok();
}
