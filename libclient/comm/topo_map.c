/* topo_map.c — where reorder = 1 places the members of a new Cartesian or graph communicator
 * (MPI_Cart_create / MPI_Graph_create, MPI_Cart_map / MPI_Graph_map).
 *
 * The library knows every member's node (tmpi_rank_info.node_of_rank).  Messages between
 * members of one node are memory copies; between nodes they cross the network, so the aim is
 * that most neighbour pairs of the topology share a node:
 *  - members used: whole nodes first (the nodes with the most members of the old
 *    communicator, then by lowest rank), lowest ranks of the last node used;
 *  - Cartesian grids: recursive coordinate bisection.  The nodes are split in two halves
 *    (by order), the grid points in two parts of the halves' sizes by cutting across the longest
 *    side of the points' bounding box, and each part goes on recursively, so every node gets
 *    one compact block of the grid;
 *  - graphs: the vertices in breadth-first order (from vertex 0, then the lowest unvisited),
 *    cut into consecutive runs of the nodes' sizes, so neighbours tend to fall in one run;
 *  - within a node the points go to its members in rank order;
 *  - the result is kept only if it puts strictly more neighbour pairs on one node than the old
 *    order does; otherwise (and with reorder = 0, or on one node) ranks stay as they were.
 * Every member computes the same answer from the same arguments. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "topo.h"

/* The members of the old communicator chosen to hold the N points, by node. */
struct groups {
    int ng;
    int *node;  /* ng: job node of group g */
    int *first; /* ng + 1: group g's members are mem[first[g] .. first[g+1]) */
    int *mem;   /* N member ranks, ascending within a group */
};

static void groups_free(struct groups *gs)
{
    free(gs->node);
    free(gs->first);
    free(gs->mem);
}

struct nodecount {
    int node, count, lowest;
};

static int nodecount_cmp(const void *a, const void *b)
{
    const struct nodecount *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return x->lowest < y->lowest ? -1 : x->lowest > y->lowest;
}

/* Groups for N points out of c's members; -ENOMEM. */
static int groups_make(struct tm_rank *me, const struct tm_comm *c, int N, struct groups *gs)
{
    int n = c->size, nnodes = me->info ? me->info->nnodes : 1;
    memset(gs, 0, sizeof *gs);
    struct nodecount *nc = calloc((size_t)nnodes, sizeof *nc);
    int *nodeof = malloc(sizeof *nodeof * (size_t)n);
    int *gnode = calloc((size_t)nnodes, sizeof *gnode);
    gs->node = malloc(sizeof *gs->node * (size_t)nnodes);
    gs->first = malloc(sizeof *gs->first * (size_t)(nnodes + 1));
    gs->mem = malloc(sizeof *gs->mem * (size_t)(N > 0 ? N : 1));
    int err = 0;
    if (!nc || !nodeof || !gnode || !gs->node || !gs->first || !gs->mem) {
        err = -ENOMEM;
        goto out;
    }
    for (int i = 0; i < nnodes; i++)
        nc[i] = (struct nodecount){i, 0, n};
    for (int r = 0; r < n; r++) {
        int nd = tm_topo_node_of(me, c, r);
        if (nd < 0 || nd >= nnodes) nd = 0;
        nodeof[r] = nd;
        if (!nc[nd].count++) nc[nd].lowest = r;
    }
    qsort(nc, (size_t)nnodes, sizeof *nc, nodecount_cmp);
    /* gnode: the group of each node taken, -1 for the others */
    int left = N;
    for (int i = 0; i < nnodes; i++)
        gnode[i] = -1;
    gs->first[0] = 0;
    for (int i = 0; i < nnodes && left > 0 && nc[i].count > 0; i++) {
        int take = nc[i].count < left ? nc[i].count : left;
        gnode[nc[i].node] = gs->ng;
        gs->node[gs->ng] = nc[i].node;
        gs->first[gs->ng + 1] = gs->first[gs->ng] + take;
        gs->ng++;
        left -= take;
    }
    /* Members in rank order into their group while it has room. */
    int *next = malloc(sizeof *next * (size_t)(gs->ng > 0 ? gs->ng : 1));
    if (!next) {
        err = -ENOMEM;
        goto out;
    }
    for (int g = 0; g < gs->ng; g++)
        next[g] = gs->first[g];
    for (int r = 0; r < n; r++) {
        int g = gnode[nodeof[r]];
        if (g >= 0 && next[g] < gs->first[g + 1]) gs->mem[next[g]++] = r;
    }
    free(next);
out:
    free(nc);
    free(nodeof);
    free(gnode);
    if (err) groups_free(gs);
    return err;
}

/* newrank from part (point -> group): group g's points in increasing order go to its members
 * in rank order. */
static void assign(const struct groups *gs, const int *part, int N, int n, int *newrank)
{
    for (int r = 0; r < n; r++)
        newrank[r] = MPI_UNDEFINED;
    int *next = malloc(sizeof *next * (size_t)(gs->ng > 0 ? gs->ng : 1));
    if (!next) return; /* the caller checks every member got a point */
    for (int g = 0; g < gs->ng; g++)
        next[g] = gs->first[g];
    for (int p = 0; p < N; p++)
        newrank[gs->mem[next[part[p]]++]] = p;
    free(next);
}

static void identity(int N, int n, int *newrank)
{
    for (int r = 0; r < n; r++)
        newrank[r] = r < N ? r : MPI_UNDEFINED;
}

/* ---- Cartesian grids ---- */

struct grid {
    int nd;
    const int *dims, *periods;
    long stride[TM_TOPO_MAX_DIMS];
};

static int coord(const struct grid *g, int p, int d)
{
    return (int)((p / g->stride[d]) % g->dims[d]);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Gives the points pts[0..np) to groups g0..g1 (their sizes in cap) by recursive coordinate
 * bisection; key: scratch of np entries. */
static void rcb(const struct grid *g, int *pts, int np, const struct groups *gs, int g0, int g1,
                int *part, uint64_t *key)
{
    if (g1 - g0 == 1 || np == 0) {
        for (int i = 0; i < np; i++)
            part[pts[i]] = g0;
        return;
    }
    int gm = (g0 + g1) / 2;
    int na = gs->first[gm] - gs->first[g0];
    if (na > np) na = np;
    int best = 0, ext = -1;
    for (int d = 0; d < g->nd; d++) {
        int lo = g->dims[d], hi = -1;
        for (int i = 0; i < np; i++) {
            int v = coord(g, pts[i], d);
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        if (hi - lo > ext) {
            ext = hi - lo;
            best = d;
        }
    }
    for (int i = 0; i < np; i++)
        key[i] = (uint64_t)coord(g, pts[i], best) << 32 | (uint32_t)pts[i];
    qsort(key, (size_t)np, sizeof *key, cmp_u64);
    for (int i = 0; i < np; i++)
        pts[i] = (int)(uint32_t)key[i];
    rcb(g, pts, na, gs, g0, gm, part, key);
    rcb(g, pts + na, np - na, gs, gm, g1, part, key);
}

/* Neighbour pairs (p, its +1 neighbour in each dimension) whose nodes (nodeof[p]) agree. */
static long grid_local_pairs(const struct grid *g, int N, const int *nodeof)
{
    long same = 0;
    for (int p = 0; p < N; p++)
        for (int d = 0; d < g->nd; d++) {
            int v = coord(g, p, d), q;
            if (v + 1 < g->dims[d])
                q = p + (int)g->stride[d];
            else if (g->periods[d] && g->dims[d] > 1)
                q = p - (int)(v * g->stride[d]);
            else
                continue;
            same += nodeof[p] == nodeof[q];
        }
    return same;
}

int tm_map_cart(struct tm_rank *me, const struct tm_comm *c, int ndims, const int *dims,
                const int *periods, int reorder, int *newrank)
{
    int n = c->size, N = 1;
    for (int d = 0; d < ndims; d++)
        N *= dims[d];
    identity(N, n, newrank);
    if (!reorder || !me->info || me->info->nnodes <= 1 || ndims == 0 || N <= 1) return 0;
    struct groups gs;
    if (groups_make(me, c, N, &gs) < 0) return -ENOMEM;
    int err = 0;
    if (gs.ng <= 1) goto out;
    struct grid g = {.nd = ndims, .dims = dims, .periods = periods};
    long s = 1;
    for (int d = ndims - 1; d >= 0; d--) {
        g.stride[d] = s;
        s *= dims[d];
    }
    int *pts = malloc(sizeof *pts * (size_t)N), *part = malloc(sizeof *part * (size_t)N);
    int *nodeof = malloc(sizeof *nodeof * (size_t)N);
    int *cand = malloc(sizeof *cand * (size_t)n);
    uint64_t *key = malloc(sizeof *key * (size_t)N);
    if (!pts || !part || !nodeof || !cand || !key) {
        err = -ENOMEM;
    } else {
        for (int p = 0; p < N; p++)
            pts[p] = p;
        rcb(&g, pts, N, &gs, 0, gs.ng, part, key);
        for (int p = 0; p < N; p++)
            nodeof[p] = tm_topo_node_of(me, c, p);
        long before = grid_local_pairs(&g, N, nodeof);
        for (int p = 0; p < N; p++)
            nodeof[p] = gs.node[part[p]];
        long after = grid_local_pairs(&g, N, nodeof);
        if (after > before) {
            assign(&gs, part, N, n, cand);
            int got = 0;
            for (int i = 0; i < n; i++)
                got += cand[i] != MPI_UNDEFINED;
            if (got == N) memcpy(newrank, cand, sizeof *newrank * (size_t)n);
        }
    }
    free(pts);
    free(part);
    free(nodeof);
    free(cand);
    free(key);
out:
    groups_free(&gs);
    return err;
}

/* ---- graphs ---- */

static long graph_local_edges(int N, const int *index, const int *edges, const int *nodeof)
{
    long same = 0;
    for (int v = 0; v < N; v++)
        for (int e = v ? index[v - 1] : 0; e < index[v]; e++)
            same += nodeof[v] == nodeof[edges[e]];
    return same;
}

int tm_map_graph(struct tm_rank *me, const struct tm_comm *c, int N, const int *index,
                 const int *edges, int reorder, int *newrank)
{
    int n = c->size;
    identity(N, n, newrank);
    if (!reorder || !me->info || me->info->nnodes <= 1 || N <= 1) return 0;
    struct groups gs;
    if (groups_make(me, c, N, &gs) < 0) return -ENOMEM;
    int err = 0;
    if (gs.ng <= 1) goto out;
    int *order = malloc(sizeof *order * (size_t)N), *part = malloc(sizeof *part * (size_t)N);
    int *nodeof = malloc(sizeof *nodeof * (size_t)N);
    int *cand = malloc(sizeof *cand * (size_t)n);
    unsigned char *seen = calloc((size_t)N, 1);
    if (!order || !part || !nodeof || !cand || !seen) {
        err = -ENOMEM;
    } else {
        /* Breadth-first order; the queue is order itself. */
        int len = 0;
        for (int s = 0; s < N; s++) {
            if (seen[s]) continue;
            seen[s] = 1;
            order[len++] = s;
            for (int h = len - 1; h < len; h++) {
                int v = order[h];
                for (int e = v ? index[v - 1] : 0; e < index[v]; e++)
                    if (!seen[edges[e]]) {
                        seen[edges[e]] = 1;
                        order[len++] = edges[e];
                    }
            }
        }
        for (int i = 0, g = 0; i < N; i++) {
            while (i >= gs.first[g + 1])
                g++;
            part[order[i]] = g;
        }
        for (int v = 0; v < N; v++)
            nodeof[v] = tm_topo_node_of(me, c, v);
        long before = graph_local_edges(N, index, edges, nodeof);
        for (int v = 0; v < N; v++)
            nodeof[v] = gs.node[part[v]];
        long after = graph_local_edges(N, index, edges, nodeof);
        if (after > before) {
            assign(&gs, part, N, n, cand);
            int got = 0;
            for (int i = 0; i < n; i++)
                got += cand[i] != MPI_UNDEFINED;
            if (got == N) memcpy(newrank, cand, sizeof *newrank * (size_t)n);
        }
    }
    free(order);
    free(part);
    free(nodeof);
    free(cand);
    free(seen);
out:
    groups_free(&gs);
    return err;
}
