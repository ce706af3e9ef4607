/* topo_dist.c — distributed graph topologies: Dist_graph_create_adjacent (weighted and
 * MPI_UNWEIGHTED) and Dist_graph_create with edges named by other ranks than their ends (a ring
 * split over its members, a star given by rank 0 alone with MPI_WEIGHTS_EMPTY elsewhere, an
 * empty graph), Dist_graph_neighbors(_count), Topo_test, Comm_dup keeping the graph, info, and
 * the error classes of bad arguments. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s (%d), got %d", #call, #cls, cls, e_);                  \
    } while (0)

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* (rank, weight) pairs in sorted order, for lists whose order the standard leaves open. */
static void sorted_pairs(int n, const int *r, const int *w, int *out)
{
    for (int i = 0; i < n; i++) {
        out[2 * i] = r[i];
        out[2 * i + 1] = w ? w[i] : 0;
    }
    qsort(out, (size_t)n, 2 * sizeof *out, cmp_pair);
}

/* g's lists of this member must be (as multisets, or in order when ordered) the given ones. */
static void check_lists(MPI_Comm g, int ordered, int weighted, int indeg, const int *src,
                        const int *srcw, int outdeg, const int *dst, const int *dstw)
{
    int st, in, out, w;
    CHECK_MPI(MPI_Topo_test(g, &st));
    CHECK(st == MPI_DIST_GRAPH, "Topo_test: expected MPI_DIST_GRAPH (%d), got %d", MPI_DIST_GRAPH,
          st);
    CHECK_MPI(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    CHECK(in == indeg && out == outdeg && w == weighted,
          "Dist_graph_neighbors_count: in %d out %d weighted %d, expected %d %d %d", in, out, w,
          indeg, outdeg, weighted);
    int *s = malloc(sizeof *s * (size_t)(in + 1)), *sw = malloc(sizeof *sw * (size_t)(in + 1));
    int *d = malloc(sizeof *d * (size_t)(out + 1)), *dw = malloc(sizeof *dw * (size_t)(out + 1));
    for (int i = 0; i <= in; i++)
        sw[i] = -5;
    for (int i = 0; i <= out; i++)
        dw[i] = -5;
    CHECK_MPI(MPI_Dist_graph_neighbors(g, in, s, weighted ? sw : MPI_UNWEIGHTED, out, d,
                                       weighted ? dw : MPI_UNWEIGHTED));
    if (ordered) {
        for (int i = 0; i < in; i++)
            CHECK(s[i] == src[i] && (!weighted || sw[i] == srcw[i]),
                  "source %d: (%d, %d), expected (%d, %d)", i, s[i], sw[i], src[i],
                  weighted ? srcw[i] : 0);
        for (int i = 0; i < out; i++)
            CHECK(d[i] == dst[i] && (!weighted || dw[i] == dstw[i]),
                  "destination %d: (%d, %d), expected (%d, %d)", i, d[i], dw[i], dst[i],
                  weighted ? dstw[i] : 0);
    } else {
        int *a = malloc(sizeof *a * (size_t)(2 * in + 2)), *b = malloc(sizeof *b * (2 * in + 2));
        sorted_pairs(in, s, weighted ? sw : NULL, a);
        sorted_pairs(in, src, weighted ? srcw : NULL, b);
        for (int i = 0; i < 2 * in; i++)
            CHECK(a[i] == b[i], "sorted sources [%d]: %d, expected %d", i, a[i], b[i]);
        free(a);
        free(b);
        a = malloc(sizeof *a * (size_t)(2 * out + 2));
        b = malloc(sizeof *b * (size_t)(2 * out + 2));
        sorted_pairs(out, d, weighted ? dw : NULL, a);
        sorted_pairs(out, dst, weighted ? dstw : NULL, b);
        for (int i = 0; i < 2 * out; i++)
            CHECK(a[i] == b[i], "sorted destinations [%d]: %d, expected %d", i, a[i], b[i]);
        free(a);
        free(b);
    }
    if (!weighted) {
        /* weight arrays of an unweighted graph are left alone */
        int sw2[2] = {-9, -9};
        if (in > 0) {
            CHECK_MPI(MPI_Dist_graph_neighbors(g, 1, s, sw2, 0, d, MPI_UNWEIGHTED));
            CHECK(sw2[0] == -9, "unweighted graph wrote a source weight %d", sw2[0]);
        }
    }
    /* fewer than there are: only that many are written */
    if (in >= 2) {
        int two[2] = {-7, -7};
        CHECK_MPI(MPI_Dist_graph_neighbors(g, 1, two, MPI_UNWEIGHTED, 0, d, MPI_UNWEIGHTED));
        CHECK(two[1] == -7, "maxindegree 1 wrote a second source");
    }
    free(s);
    free(sw);
    free(d);
    free(dw);
}

static void test_adjacent(int size, int rank)
{
    int l = (rank - 1 + size) % size, r = (rank + 1) % size;
    /* a directed ring with a second edge to the right: in from the left (weight 10*left+me)
     * and the right, out to the right twice */
    int src[2] = {l, r}, srcw[2] = {10 * l + rank, 1000 + r};
    int dst[3] = {r, r, l}, dstw[3] = {10 * rank + r, 7, 1000 + rank};
    MPI_Comm g, dup;
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "some_hint", "true"));
    CHECK_MPI(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, srcw, 3, dst, dstw, info, 0, &g));
    MPI_Info_free(&info);
    int gr, gs;
    MPI_Comm_rank(g, &gr);
    MPI_Comm_size(g, &gs);
    CHECK(gr == rank && gs == size, "rank %d size %d, expected %d %d", gr, gs, rank, size);
    check_lists(g, 1, 1, 2, src, srcw, 3, dst, dstw);
    CHECK_MPI(MPI_Comm_dup(g, &dup));
    CHECK_MPI(MPI_Comm_free(&g));
    check_lists(dup, 1, 1, 2, src, srcw, 3, dst, dstw);
    MPI_Comm_free(&dup);
    /* unweighted, reorder allowed */
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 3, dst,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &g));
    check_lists(g, 1, 0, 2, src, NULL, 3, dst, NULL);
    MPI_Comm_free(&g);
    /* no edges at all, weighted with MPI_WEIGHTS_EMPTY */
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
                                             MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    check_lists(g, 1, 1, 0, NULL, NULL, 0, NULL, NULL);
    MPI_Comm_free(&g);
}

static void test_general(int size, int rank)
{
    /* Rank k names the edges (k+1) -> k and (k+1) -> (k+2) (mod size), weight 100 s + d: so
     * rank x has the out-edges x -> x-1 and x -> x+1 (named by x-1) and the in-edges
     * (x+1) -> x (named by x) and (x-1) -> x (named by x-2). */
    int s = (rank + 1) % size, dsts[2] = {rank, (rank + 2) % size};
    int w[2] = {100 * s + dsts[0], 100 * s + dsts[1]}, deg[1] = {2};
    MPI_Comm g;
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &s, deg, dsts, w, MPI_INFO_NULL, 0, &g));
    int l = (rank - 1 + size) % size, r = (rank + 1) % size;
    int esrc[2] = {r, l}, esrcw[2] = {100 * r + rank, 100 * l + rank};
    int edst[2] = {l, r}, edstw[2] = {100 * rank + l, 100 * rank + r};
    check_lists(g, 0, 1, 2, esrc, esrcw, 2, edst, edstw);
    MPI_Comm_free(&g);
    /* the same unweighted */
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &s, deg, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                    1, &g));
    check_lists(g, 0, 0, 2, esrc, NULL, 2, edst, NULL);
    MPI_Comm_free(&g);

    /* a star given by rank 0 alone: 0 -> j (weight j) and j -> 0 (weight 50 + j) */
    int n = rank == 0 ? size : 0;
    int *srcs = malloc(sizeof *srcs * (size_t)size), *degs = malloc(sizeof *degs * (size_t)size);
    int *ds = malloc(sizeof *ds * (size_t)(2 * size)),
        *ws = malloc(sizeof *ws * (size_t)(2 * size));
    int e = 0;
    srcs[0] = 0;
    degs[0] = size - 1;
    for (int j = 1; j < size; j++) {
        ds[e] = j;
        ws[e++] = j;
    }
    for (int j = 1; j < size; j++) {
        srcs[j] = j;
        degs[j] = 1;
        ds[e] = 0;
        ws[e++] = 50 + j;
    }
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, ds,
                                    rank == 0 ? ws : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    if (rank == 0) {
        int *in = malloc(sizeof *in * (size_t)size), *inw = malloc(sizeof *inw * (size_t)size);
        for (int j = 1; j < size; j++) {
            in[j - 1] = j;
            inw[j - 1] = 50 + j;
        }
        check_lists(g, 0, 1, size - 1, in, inw, size - 1, ds, ws);
        free(in);
        free(inw);
    } else {
        int z = 0, wi = rank, wo = 50 + rank;
        check_lists(g, 0, 1, 1, &z, &wi, 1, &z, &wo);
    }
    MPI_Comm_free(&g);
    /* nobody names an edge */
    CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, 0, NULL, NULL, NULL, MPI_UNWEIGHTED,
                                    MPI_INFO_NULL, 0, &g));
    check_lists(g, 1, 0, 0, NULL, NULL, 0, NULL, NULL);
    MPI_Comm_free(&g);
    free(srcs);
    free(degs);
    free(ds);
    free(ws);
}

static void test_errors(int size)
{
    MPI_Comm g = MPI_COMM_NULL;
    int ok[1] = {0}, bad[1] = {size}, neg[1] = {-1}, w[1] = {1}, one[1] = {1};
    int in, out, wt, v[1];
    const char *fa = "MPI_Dist_graph_create_adjacent";
    (void)fa;
    EXPECT(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, ok, w, 0, ok, w, MPI_INFO_NULL, 0, &g),
        MPI_ERR_ARG);
    EXPECT(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, w, 0, ok, w, MPI_INFO_NULL, 0, &g),
        MPI_ERR_ARG);
    EXPECT(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, ok, w, 1, neg, w, MPI_INFO_NULL, 0, &g),
        MPI_ERR_ARG);
    EXPECT(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok, neg, 0, ok, w, MPI_INFO_NULL, 0, &g),
        MPI_ERR_ARG);
    EXPECT(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok, NULL, 1, ok, w, MPI_INFO_NULL, 0, &g),
        MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok, MPI_UNWEIGHTED, 1, ok, w,
                                          MPI_INFO_NULL, 0, &g),
           MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create_adjacent(MPI_COMM_NULL, 0, ok, w, 0, ok, w, MPI_INFO_NULL, 0, &g),
           MPI_ERR_COMM);
    EXPECT(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, ok, w, 0, ok, w, (MPI_Info)12345, 0, &g),
        MPI_ERR_INFO);
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, ok, one, ok, w, MPI_INFO_NULL, 0, &g),
           MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, bad, one, ok, w, MPI_INFO_NULL, 0, &g),
           MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, one, bad, w, MPI_INFO_NULL, 0, &g),
           MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, neg, ok, w, MPI_INFO_NULL, 0, &g),
           MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, one, ok, neg, MPI_INFO_NULL, 0, &g),
           MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, one, ok, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL,
                                 0, &g),
           MPI_ERR_ARG);
    int huge[1] = {INT_MAX};
    EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, huge, ok, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &g),
           MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create(MPI_COMM_NULL, 0, ok, one, ok, w, MPI_INFO_NULL, 0, &g),
           MPI_ERR_COMM);
    /* queries on communicators without a distributed graph */
    EXPECT(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &wt), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Dist_graph_neighbors(MPI_COMM_WORLD, 1, v, w, 1, v, w), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Dist_graph_neighbors_count(MPI_COMM_NULL, &in, &out, &wt), MPI_ERR_COMM);
    int dims[1] = {size}, periods[1] = {0};
    MPI_Comm cart;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    EXPECT(MPI_Dist_graph_neighbors_count(cart, &in, &out, &wt), MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&cart);
    CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, ok, MPI_UNWEIGHTED, 0, ok,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    EXPECT(MPI_Dist_graph_neighbors(g, -1, v, w, 0, v, w), MPI_ERR_ARG);
    EXPECT(MPI_Graphdims_get(g, &in, &out), MPI_ERR_TOPOLOGY);
    EXPECT(MPI_Cartdim_get(g, &in), MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&g);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_adjacent(size, rank);
    test_general(size, rank);
    test_errors(size);
    return finish_ok();
}
