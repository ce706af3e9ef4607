/* topo_graph.c — graph topologies: Graph_create (reorder 0 and 1) of a ring and a star,
 * Graphdims_get, Graph_get, Graph_neighbors(_count), Graph_map, Topo_test, Comm_dup keeping the
 * graph, a graph smaller than the communicator, an empty graph, and the error classes of bad
 * arguments. */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s (%d), got %d", #call, #cls, cls, e_);                  \
    } while (0)

/* A ring of n vertices: vertex i's neighbours are i - 1 then i + 1 (mod n); with n = 1 the
 * vertex is its own neighbour twice, with n = 2 the other vertex is its neighbour twice. */
static void ring(int n, int *index, int *edges)
{
    for (int i = 0; i < n; i++) {
        edges[2 * i] = (i - 1 + n) % n;
        edges[2 * i + 1] = (i + 1) % n;
        index[i] = 2 * i + 2;
    }
}

/* A star: vertex 0 is joined to every other vertex, each other vertex only to 0. */
static int star(int n, int *index, int *edges)
{
    int e = 0;
    for (int j = 1; j < n; j++)
        edges[e++] = j;
    index[0] = e;
    for (int i = 1; i < n; i++) {
        edges[e++] = 0;
        index[i] = e;
    }
    return e;
}

/* Checks every query of g against index/edges of n vertices. */
static void check_graph(MPI_Comm g, int n, const int *index, const int *edges)
{
    int st, nn, ne;
    CHECK_MPI(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH, "Topo_test: expected MPI_GRAPH (%d), got %d", MPI_GRAPH, st);
    CHECK_MPI(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == n && ne == index[n - 1], "Graphdims_get: %d nodes %d edges, expected %d %d", nn, ne,
          n, index[n - 1]);
    int *gi = malloc(sizeof *gi * (size_t)n), *ge = malloc(sizeof *ge * (size_t)(ne + 1));
    CHECK_MPI(MPI_Graph_get(g, n, ne, gi, ge));
    for (int i = 0; i < n; i++)
        CHECK(gi[i] == index[i], "Graph_get index[%d]: expected %d, got %d", i, index[i], gi[i]);
    for (int e = 0; e < ne; e++)
        CHECK(ge[e] == edges[e], "Graph_get edges[%d]: expected %d, got %d", e, edges[e], ge[e]);
    for (int v = 0; v < n; v++) {
        int lo = v ? index[v - 1] : 0, cnt, nb[64];
        CHECK_MPI(MPI_Graph_neighbors_count(g, v, &cnt));
        CHECK(cnt == index[v] - lo, "Graph_neighbors_count(%d): expected %d, got %d", v,
              index[v] - lo, cnt);
        if (cnt > 64) continue;
        CHECK_MPI(MPI_Graph_neighbors(g, v, 64, nb));
        for (int k = 0; k < cnt; k++)
            CHECK(nb[k] == edges[lo + k], "Graph_neighbors(%d)[%d]: expected %d, got %d", v, k,
                  edges[lo + k], nb[k]);
        /* maxneighbors smaller than the count: only that many are written */
        if (cnt >= 2) {
            int two[3] = {-7, -7, -7};
            CHECK_MPI(MPI_Graph_neighbors(g, v, 1, two));
            CHECK(two[0] == edges[lo] && two[1] == -7, "Graph_neighbors with maxneighbors 1");
        }
    }
    free(gi);
    free(ge);
}

/* Neighbours exchange their world ranks over point-to-point on g: the graph communicator is an
 * ordinary one besides its topology. */
static void exchange(MPI_Comm g)
{
    int me, cnt;
    MPI_Comm_rank(g, &me);
    CHECK_MPI(MPI_Graph_neighbors_count(g, me, &cnt));
    int *nb = malloc(sizeof *nb * (size_t)(cnt + 1)),
        *got = malloc(sizeof *got * (size_t)(cnt + 1));
    MPI_Request *q = malloc(sizeof *q * (size_t)(2 * cnt + 1));
    CHECK_MPI(MPI_Graph_neighbors(g, me, cnt, nb));
    for (int k = 0; k < cnt; k++) {
        CHECK_MPI(MPI_Irecv(&got[k], 1, MPI_INT, nb[k], 5, g, &q[k]));
        CHECK_MPI(MPI_Isend(&me, 1, MPI_INT, nb[k], 5, g, &q[cnt + k]));
    }
    CHECK_MPI(MPI_Waitall(2 * cnt, q, MPI_STATUSES_IGNORE));
    for (int k = 0; k < cnt; k++)
        CHECK(got[k] == nb[k], "message from neighbour %d says %d", nb[k], got[k]);
    free(nb);
    free(got);
    free(q);
}

static void test_ring_star(int size, int rank)
{
    int *index = malloc(sizeof *index * (size_t)size);
    int *edges = malloc(sizeof *edges * (size_t)(2 * size));
    MPI_Comm g;
    ring(size, index, edges);
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    CHECK(g != MPI_COMM_NULL, "Graph_create gave MPI_COMM_NULL");
    int gr, gs;
    MPI_Comm_rank(g, &gr);
    MPI_Comm_size(g, &gs);
    CHECK(gr == rank && gs == size, "reorder 0: rank %d size %d, expected %d %d", gr, gs, rank,
          size);
    check_graph(g, size, index, edges);
    exchange(g);
    /* dup keeps the graph, after the original is freed too */
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(g, &dup));
    CHECK_MPI(MPI_Comm_free(&g));
    check_graph(dup, size, index, edges);
    MPI_Comm_free(&dup);

    int ne = star(size, index, edges);
    CHECK(ne == 2 * (size - 1), "star edges");
    /* reorder 1: a permutation, the same graph */
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g));
    CHECK(g != MPI_COMM_NULL, "Graph_create (reorder 1) gave MPI_COMM_NULL");
    check_graph(g, size, index, edges);
    MPI_Comm_rank(g, &gr);
    int *all = malloc(sizeof *all * (size_t)size);
    CHECK_MPI(MPI_Allgather(&gr, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        for (int j = i + 1; j < size; j++)
            CHECK(all[i] != all[j], "ranks %d and %d both got %d", i, j, all[i]);
    int mapped;
    CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &mapped));
    CHECK(mapped == gr, "Graph_map says %d, Graph_create gave %d", mapped, gr);
    exchange(g);
    MPI_Comm_free(&g);
    free(all);
    free(index);
    free(edges);
}

static void test_small_and_empty(int size, int rank)
{
    /* a ring on the first half: the others get MPI_COMM_NULL and Graph_map MPI_UNDEFINED */
    int n = (size + 1) / 2;
    int *index = malloc(sizeof *index * (size_t)n);
    int *edges = malloc(sizeof *edges * (size_t)(2 * n));
    ring(n, index, edges);
    MPI_Comm g;
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    if (rank < n) {
        CHECK(g != MPI_COMM_NULL, "rank %d < %d got MPI_COMM_NULL", rank, n);
        check_graph(g, n, index, edges);
        exchange(g);
        MPI_Comm_free(&g);
    } else {
        CHECK(g == MPI_COMM_NULL, "rank %d >= %d got a communicator", rank, n);
    }
    int mapped;
    CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &mapped));
    CHECK(rank < n ? mapped >= 0 && mapped < n : mapped == MPI_UNDEFINED, "Graph_map: %d", mapped);
    /* vertices without edges */
    for (int i = 0; i < n; i++)
        index[i] = 0;
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    if (g != MPI_COMM_NULL) {
        int nn, ne, cnt;
        CHECK_MPI(MPI_Graphdims_get(g, &nn, &ne));
        CHECK(nn == n && ne == 0, "edgeless graph: %d nodes %d edges", nn, ne);
        CHECK_MPI(MPI_Graph_neighbors_count(g, 0, &cnt));
        CHECK_EQ(cnt, 0);
        MPI_Comm_free(&g);
    }
    /* no vertices at all: everybody gets MPI_COMM_NULL */
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, 0, index, edges, 0, &g));
    CHECK(g == MPI_COMM_NULL, "a graph of no vertices gave a communicator");
    free(index);
    free(edges);
}

static void test_errors(int size)
{
    int index[2] = {1, 2}, edges[2] = {1, 0}, nn, ne, cnt, nb[2], st;
    MPI_Comm g = MPI_COMM_NULL;
    int bad_edge[2] = {size, 0}, bad_index[2] = {2, 1};
    EXPECT(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g), MPI_ERR_ARG);
    EXPECT(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g), MPI_ERR_ARG);
    if (size >= 2) {
        EXPECT(MPI_Graph_create(MPI_COMM_WORLD, 2, index, bad_edge, 0, &g), MPI_ERR_ARG);
        EXPECT(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_index, edges, 0, &g), MPI_ERR_ARG);
        EXPECT(MPI_Graph_map(MPI_COMM_WORLD, 2, index, bad_edge, &nn), MPI_ERR_ARG);
    }
    EXPECT(MPI_Graph_create(MPI_COMM_NULL, 1, index, edges, 0, &g), MPI_ERR_COMM);
    EXPECT(MPI_Graph_map(MPI_COMM_WORLD, size + 1, index, edges, &nn), MPI_ERR_ARG);
    /* queries on a communicator without a graph */
    EXPECT(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Graph_get(MPI_COMM_WORLD, 2, 2, index, edges), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &cnt), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Graph_neighbors(MPI_COMM_WORLD, 0, 2, nb), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Graphdims_get(MPI_COMM_NULL, &nn, &ne), MPI_ERR_COMM);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    EXPECT(MPI_Graphdims_get(cart, &nn, &ne), MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&cart);
    /* bad ranks on a graph communicator */
    int one_index[1] = {0};
    CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, 1, one_index, edges, 0, &g));
    if (g != MPI_COMM_NULL) {
        CHECK_MPI(MPI_Topo_test(g, &st));
        CHECK_EQ(st, MPI_GRAPH);
        EXPECT(MPI_Graph_neighbors_count(g, 1, &cnt), MPI_ERR_RANK);
        EXPECT(MPI_Graph_neighbors_count(g, -1, &cnt), MPI_ERR_RANK);
        EXPECT(MPI_Graph_neighbors(g, 1, 2, nb), MPI_ERR_RANK);
        EXPECT(MPI_Graph_neighbors(g, 0, -1, nb), MPI_ERR_ARG);
        EXPECT(MPI_Graph_get(g, -1, 0, index, edges), MPI_ERR_ARG);
        MPI_Comm_free(&g);
    }
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_ring_star(size, rank);
    test_small_and_empty(size, rank);
    test_errors(size);
    return finish_ok();
}
