/* error_classes.c — misuse in the newer areas returns the class the standard names, under
 * MPI_ERRORS_RETURN, and leaves the objects working: groups (invalid handles, ranks out of
 * range, bad ranges), graph and distributed-graph topologies, neighbourhood collectives on
 * communicators without a topology or with bad arguments, and one-sided calls with derived
 * datatypes (uncommitted, reaching outside the window, mixing basic types in an Accumulate,
 * user ops). */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call), c_ = e_;                                                                  \
        if (e_ != MPI_SUCCESS) MPI_Error_class(e_, &c_);                                           \
        CHECK(c_ == (cls), "%s: expected %s, got class %d", #call, #cls, c_);                      \
    } while (0)

static int rank, size;

static void groups(void)
{
    MPI_Group w, g;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &w));
    int r = size, res;
    EXPECT(MPI_Group_incl(w, 1, &r, &g), MPI_ERR_RANK);
    EXPECT(MPI_Group_excl(w, 1, &r, &g), MPI_ERR_RANK);
    int twice[2] = {0, 0};
    if (size > 1) EXPECT(MPI_Group_incl(w, 2, twice, &g), MPI_ERR_RANK); /* distinct ranks */
    int bad_range[1][3] = {{0, size, 1}};
    EXPECT(MPI_Group_range_excl(w, 1, bad_range, &g), MPI_ERR_RANK);
    int zero_stride[1][3] = {{0, 0, 0}};
    EXPECT(MPI_Group_range_incl(w, 1, zero_stride, &g), MPI_ERR_ARG);
    EXPECT(MPI_Group_union(w, (MPI_Group)9999, &g), MPI_ERR_GROUP);
    EXPECT(MPI_Group_intersection(MPI_GROUP_NULL, w, &g), MPI_ERR_GROUP);
    EXPECT(MPI_Group_difference(w, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);
    EXPECT(MPI_Group_compare(w, (MPI_Group)9999, &res), MPI_ERR_GROUP);
    int in = size, out;
    EXPECT(MPI_Group_translate_ranks(w, 1, &in, w, &out), MPI_ERR_RANK);
    EXPECT(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &(MPI_Comm){0}), MPI_ERR_GROUP);
    /* still fine */
    CHECK_MPI(MPI_Group_compare(w, w, &res));
    CHECK(res == MPI_IDENT, "compare %d", res);
    CHECK_MPI(MPI_Group_free(&w));
}

static void topologies(void)
{
    MPI_Comm g;
    int idx[1] = {1}, edges[1] = {size}; /* an edge to a node that does not exist */
    EXPECT(MPI_Graph_create(MPI_COMM_WORLD, 1, idx, edges, 0, &g), MPI_ERR_ARG);
    int nnodes = size + 1, idx2[64], e2[1] = {0};
    for (int i = 0; i < 64; i++)
        idx2[i] = 0;
    EXPECT(MPI_Graph_create(MPI_COMM_WORLD, nnodes, idx2, e2, 0, &g), MPI_ERR_ARG);
    int src = 0, deg = 1, dst = size, w = 1;
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &deg, &dst, &w, MPI_INFO_NULL, 0, &g),
           MPI_ERR_ARG);
    int neg = -1;
    EXPECT(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, neg, &src, MPI_UNWEIGHTED, 0, NULL,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
           MPI_ERR_ARG);
    int n;
    EXPECT(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &n), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &n, &n, &n), MPI_ERR_TOPOLOGY);
    /* a ring as a distributed graph: queries out of range */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    int a[1], b[1];
    EXPECT(MPI_Dist_graph_neighbors(g, -1, a, MPI_UNWEIGHTED, 1, b, MPI_UNWEIGHTED), MPI_ERR_ARG);
    EXPECT(MPI_Graph_neighbors(g, 0, 1, a), MPI_ERR_TOPOLOGY);

    /* neighbourhood collectives */
    int x = rank, y[2];
    EXPECT(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    MPI_Request q;
    EXPECT(MPI_Ineighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &q),
           MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Neighbor_allgather(&x, -1, MPI_INT, y, 1, MPI_INT, g), MPI_ERR_COUNT);
    EXPECT(MPI_Neighbor_alltoall(&x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, g), MPI_ERR_TYPE);
    int c1[1] = {1}, d1[1] = {0};
    EXPECT(MPI_Neighbor_alltoallv(&x, c1, d1, MPI_INT, y, c1, d1, (MPI_Datatype)5555, g),
           MPI_ERR_TYPE);
    /* and after all that, it works */
    CHECK_MPI(MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, g));
    CHECK(y[0] == left, "neighbour value %d, expected %d", y[0], left);
    CHECK_MPI(MPI_Comm_free(&g));
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void rma(void)
{
    enum { N = 16 };
    int *base;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < N; i++)
        base[i] = 0;
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* zeroed before anyone Puts */
    int target = (rank + 1) % size, buf[2 * N];
    for (int i = 0; i < 2 * N; i++)
        buf[i] = i;
    MPI_Datatype loose, wide, mixed;
    CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &loose)); /* not committed */
    CHECK_MPI(MPI_Type_vector(N, 1, 2, MPI_INT, &wide));  /* spans 2N - 1 ints */
    CHECK_MPI(MPI_Type_commit(&wide));
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, sizeof(double)};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT};
    CHECK_MPI(MPI_Type_create_struct(2, bl, dp, ty, &mixed));
    CHECK_MPI(MPI_Type_commit(&mixed));
    MPI_Op op;
    CHECK_MPI(MPI_Op_create(user_sum, 1, &op));

    CHECK_MPI(MPI_Win_lock_all(0, win));
    EXPECT(MPI_Put(buf, 4, MPI_INT, target, 0, 1, loose, win), MPI_ERR_TYPE);
    EXPECT(MPI_Get(buf, 1, loose, target, 0, 4, MPI_INT, win), MPI_ERR_TYPE);
    EXPECT(MPI_Put(buf, N, MPI_INT, target, 0, 1, wide, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Get(buf, N, MPI_INT, target, 2, 1, wide, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Accumulate(buf, 1, mixed, target, 0, 1, mixed, MPI_SUM, win), MPI_ERR_TYPE);
    EXPECT(MPI_Accumulate(buf, 2, MPI_INT, target, 0, 2, MPI_INT, op, win), MPI_ERR_OP);
    EXPECT(MPI_Accumulate(buf, N, MPI_INT, target, 0, 1, wide, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(buf, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    /* a vector that fits still works, in the same epoch */
    MPI_Datatype fits;
    CHECK_MPI(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &fits));
    CHECK_MPI(MPI_Type_commit(&fits));
    CHECK_MPI(MPI_Put(buf, N / 2, MPI_INT, target, 0, 1, fits, win));
    CHECK_MPI(MPI_Win_unlock_all(win));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int i = 0; i < N; i++)
        CHECK(base[i] == (i % 2 ? 0 : i / 2), "window slot %d = %d", i, base[i]);
    CHECK_MPI(MPI_Win_unlock(rank, win));
    MPI_Datatype all[] = {loose, wide, mixed, fits};
    for (int i = 0; i < 4; i++)
        CHECK_MPI(MPI_Type_free(&all[i]));
    CHECK_MPI(MPI_Op_free(&op));
    CHECK_MPI(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    groups();
    topologies();
    rma();
    return finish_ok();
}
