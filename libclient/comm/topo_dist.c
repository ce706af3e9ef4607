/* topo_dist.c — distributed graph topologies (MPI 3.1 §7.5.4, §7.5.5): Dist_graph_create_adjacent,
 * Dist_graph_create and the queries Dist_graph_neighbors(_count).
 *
 * Each member keeps only its own neighbours (struct tm_adj in the topology's dist.adj[rank]),
 * in the order they were given: Dist_graph_create_adjacent's arrays as they are; for
 * Dist_graph_create, which may name an edge on any member, every edge s -> d goes to s (as an
 * out-edge) and to d (as an in-edge) in one Alltoallv over the old communicator, so each
 * member's lists come in the order (contributing rank, position in its arrays).  Ranks keep
 * their numbers: reorder is allowed to do nothing (docs/COLLECTIVES.md), and the info
 * argument carries no hint TMPI uses.  Weights are stored when the graph is weighted
 * (anything but MPI_UNWEIGHTED; MPI_WEIGHTS_EMPTY stands for a weighted member without edges). */
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "info.h"
#include "job.h"
#include "topo.h"

/* The checks of the old communicator, the info and the result pointer every creation shares;
 * *ret_cr: comm_old's entry. */
static int check_common(struct tm_rank *me, const char *fn, MPI_Comm comm, MPI_Info info,
                        MPI_Comm *newcomm, struct tm_commref **ret_cr)
{
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (cr->c->inter)
        return tm_err(me, comm, MPI_ERR_COMM, fn, "communicator %d is an inter-communicator", comm);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, fn, "comm_dist_graph is NULL");
    if (info != MPI_INFO_NULL && !tm_info_get(me, info))
        return tm_err(me, comm, MPI_ERR_INFO, fn, "invalid info %d", info);
    *ret_cr = cr;
    return MPI_SUCCESS;
}

/* n ranks of a communicator of size members, named what in errors. */
static int check_ranks(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                       const int *v, int n, int size)
{
    if (n > 0 && !v) return tm_err(me, comm, MPI_ERR_ARG, fn, "%s is NULL", what);
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= size)
            return tm_err(me, comm, MPI_ERR_ARG, fn, "%s[%d] = %d is not a rank (0 to %d)", what, i,
                          v[i], size - 1);
    return MPI_SUCCESS;
}

/* n weights of a weighted graph: given (unless n is 0) and non-negative. */
static int check_weights(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                         const int *w, int n)
{
    if (n == 0) return MPI_SUCCESS;
    if (!w || w == MPI_WEIGHTS_EMPTY)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "%s is %s with %d edges", what,
                      w ? "MPI_WEIGHTS_EMPTY" : "NULL", n);
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return tm_err(me, comm, MPI_ERR_ARG, fn, "%s[%d] = %d is negative", what, i, w[i]);
    return MPI_SUCCESS;
}

static int *copy_ints(const int *v, int n)
{
    int *c = malloc(sizeof *c * (size_t)(n > 0 ? n : 1));
    if (c && n > 0) memcpy(c, v, sizeof *c * (size_t)n);
    return c;
}

/* A member's adjacency (weights ignored when !weighted); NULL when out of memory. */
static struct tm_adj *adj_new(int indeg, const int *src, const int *srcw, int outdeg,
                              const int *dst, const int *dstw, int weighted)
{
    struct tm_adj *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->indeg = indeg;
    a->outdeg = outdeg;
    a->weighted = weighted;
    a->src = copy_ints(src, indeg);
    a->dst = copy_ints(dst, outdeg);
    int ok = a->src && a->dst;
    if (weighted) {
        a->srcw = copy_ints(srcw, indeg);
        a->dstw = copy_ints(dstw, outdeg);
        ok = ok && a->srcw && a->dstw;
    }
    if (!ok) {
        tm_adj_free(a);
        return NULL;
    }
    return a;
}

/* Makes the communicator (ranks unchanged) and gives this member's adjacency a (taken over)
 * to its topology. */
static int make(struct tm_rank *me, MPI_Comm comm, const char *fn, struct tm_commref *cr,
                struct tm_adj *a, MPI_Comm *newcomm)
{
    struct tm_topo *t = a ? tm_topo_new(MPI_DIST_GRAPH, cr->c->size) : NULL;
    if (!t) {
        tm_adj_free(a);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int rank = cr->rank;
    int err = tm_topo_make_comm(me, comm, fn, rank, t, newcomm);
    if (err != MPI_SUCCESS) {
        tm_adj_free(a);
        return err;
    }
    /* The installed topology may be another member's (the first on this node wins): this
     * member's slot is its own to write either way (topo.h). */
    struct tm_commref *ncr = tm_comm_get_user(&me->comms, *newcomm);
    struct tm_topo *it = tm_topo_of(ncr->c);
    it->dist.adj[rank] = a;
    return MPI_SUCCESS;
}

TM_API int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                           const int *sourceweights, int outdegree,
                                           const int destinations[], const int *destweights,
                                           MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    const char *fn = "MPI_Dist_graph_create_adjacent";
    (void)reorder;
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = NULL;
    int err = check_common(me, fn, comm_old, info, comm_dist_graph, &cr);
    if (err) return err;
    int size = cr->c->size;
    if (indegree < 0 || outdegree < 0)
        return tm_err(me, comm_old, MPI_ERR_ARG, fn, "negative indegree %d or outdegree %d",
                      indegree, outdegree);
    if ((err = check_ranks(me, comm_old, fn, "sources", sources, indegree, size)) ||
        (err = check_ranks(me, comm_old, fn, "destinations", destinations, outdegree, size)))
        return err;
    /* Unweighted: MPI_UNWEIGHTED for both (a side without edges may say anything). */
    int su = sourceweights == MPI_UNWEIGHTED, du = destweights == MPI_UNWEIGHTED;
    int weighted = !su && !du;
    if (!weighted && ((!su && indegree > 0) || (!du && outdegree > 0)))
        return tm_err(me, comm_old, MPI_ERR_ARG, fn,
                      "MPI_UNWEIGHTED for one side of the edges and weights for the other");
    if (weighted &&
        ((err = check_weights(me, comm_old, fn, "sourceweights", sourceweights, indegree)) ||
         (err = check_weights(me, comm_old, fn, "destweights", destweights, outdegree))))
        return err;
    struct tm_adj *a =
        adj_new(indegree, sources, sourceweights, outdegree, destinations, destweights, weighted);
    return make(me, comm_old, fn, cr, a, comm_dist_graph);
}
TM_ALIAS(Dist_graph_create_adjacent)

/* One edge end as Dist_graph_create sends it to the member it belongs to. */
struct edge_rec {
    int out;  /* 1: an edge out of the receiver to peer; 0: into it from peer */
    int peer; /* the other end */
    int w;    /* weight (0 when unweighted) */
};

TM_API int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                  const int degrees[], const int destinations[], const int *weights,
                                  MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    const char *fn = "MPI_Dist_graph_create";
    (void)reorder;
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = NULL;
    int err = check_common(me, fn, comm_old, info, comm_dist_graph, &cr);
    if (err) return err;
    int size = cr->c->size;
    if (n < 0) return tm_err(me, comm_old, MPI_ERR_ARG, fn, "negative n %d", n);
    if (n > 0 && !degrees) return tm_err(me, comm_old, MPI_ERR_ARG, fn, "degrees is NULL");
    if ((err = check_ranks(me, comm_old, fn, "sources", sources, n, size))) return err;
    long total = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return tm_err(me, comm_old, MPI_ERR_ARG, fn, "degrees[%d] = %d is negative", i,
                          degrees[i]);
        total += degrees[i];
        if (total > TM_TOPO_MAX_EDGES)
            return tm_err(me, comm_old, MPI_ERR_ARG, fn, "more than %d edges (TM_TOPO_MAX_EDGES)",
                          TM_TOPO_MAX_EDGES);
    }
    if ((err = check_ranks(me, comm_old, fn, "destinations", destinations, (int)total, size)))
        return err;
    int weighted = weights != MPI_UNWEIGHTED;
    if (weighted && (err = check_weights(me, comm_old, fn, "weights", weights, (int)total)))
        return err;

    /* Every edge end to its member: counts first, then the records. */
    int *scnt = calloc((size_t)size, sizeof *scnt), *rcnt = calloc((size_t)size, sizeof *rcnt);
    int *sdis = calloc((size_t)size, sizeof *sdis), *rdis = calloc((size_t)size, sizeof *rdis);
    struct edge_rec *sv = malloc(sizeof *sv * (size_t)(2 * total + 1)), *rv = NULL;
    struct tm_adj *a = NULL;
    int *at = calloc((size_t)size, sizeof *at);
    if (!scnt || !rcnt || !sdis || !rdis || !sv || !at) {
        err = tm_err(me, comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
        goto out;
    }
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            scnt[sources[i]] += 3;
            scnt[destinations[e]] += 3;
        }
    for (int r = 1; r < size; r++)
        sdis[r] = sdis[r - 1] + scnt[r - 1];
    for (int r = 0; r < size; r++)
        at[r] = sdis[r] / 3;
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int s = sources[i], d = destinations[e], w = weighted ? weights[e] : 0;
            sv[at[s]++] = (struct edge_rec){1, d, w};
            sv[at[d]++] = (struct edge_rec){0, s, w};
        }
    err = PMPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, comm_old);
    if (err) goto out;
    long rtotal = 0;
    for (int r = 0; r < size; r++) {
        rdis[r] = (int)rtotal;
        rtotal += rcnt[r];
    }
    rv = malloc(sizeof(int) * (size_t)(rtotal + 3));
    if (!rv) {
        err = tm_err(me, comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
        goto out;
    }
    err = PMPI_Alltoallv(sv, scnt, sdis, MPI_INT, rv, rcnt, rdis, MPI_INT, comm_old);
    if (err) goto out;
    int nrec = (int)(rtotal / 3), indeg = 0, outdeg = 0;
    for (int i = 0; i < nrec; i++)
        rv[i].out ? outdeg++ : indeg++;
    a = calloc(1, sizeof *a);
    if (a) {
        a->indeg = indeg;
        a->outdeg = outdeg;
        a->weighted = weighted;
        a->src = malloc(sizeof(int) * (size_t)(indeg + 1));
        a->dst = malloc(sizeof(int) * (size_t)(outdeg + 1));
        if (weighted) {
            a->srcw = malloc(sizeof(int) * (size_t)(indeg + 1));
            a->dstw = malloc(sizeof(int) * (size_t)(outdeg + 1));
        }
    }
    if (!a || !a->src || !a->dst || (weighted && (!a->srcw || !a->dstw))) {
        tm_adj_free(a);
        a = NULL;
        err = tm_err(me, comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
        goto out;
    }
    for (int i = 0, ni = 0, no = 0; i < nrec; i++) {
        if (rv[i].out) {
            if (weighted) a->dstw[no] = rv[i].w;
            a->dst[no++] = rv[i].peer;
        } else {
            if (weighted) a->srcw[ni] = rv[i].w;
            a->src[ni++] = rv[i].peer;
        }
    }
    err = make(me, comm_old, fn, cr, a, comm_dist_graph);
out:
    free(scnt);
    free(rcnt);
    free(sdis);
    free(rdis);
    free(sv);
    free(rv);
    free(at);
    return err;
}
TM_ALIAS(Dist_graph_create)

TM_API int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                           int *weighted)
{
    const char *fn = "MPI_Dist_graph_neighbors_count";
    TM_TOPO_ENTRY(fn, comm, MPI_DIST_GRAPH);
    if (!indegree || !outdegree || !weighted)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "indegree, outdegree or weighted is NULL");
    const struct tm_adj *a = t->dist.adj[cr->rank];
    *indegree = a->indeg;
    *outdegree = a->outdeg;
    *weighted = a->weighted;
    return MPI_SUCCESS;
}
TM_ALIAS(Dist_graph_neighbors_count)

/* Weight arrays the caller wants filled: not MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY or NULL. */
static int wants(const int *w)
{
    return w && w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY;
}

TM_API int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                     int *sourceweights, int maxoutdegree, int destinations[],
                                     int *destweights)
{
    const char *fn = "MPI_Dist_graph_neighbors";
    TM_TOPO_ENTRY(fn, comm, MPI_DIST_GRAPH);
    if (maxindegree < 0 || maxoutdegree < 0)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "negative maxindegree %d or maxoutdegree %d",
                      maxindegree, maxoutdegree);
    const struct tm_adj *a = t->dist.adj[cr->rank];
    int ni = maxindegree < a->indeg ? maxindegree : a->indeg;
    int no = maxoutdegree < a->outdeg ? maxoutdegree : a->outdeg;
    if ((ni > 0 && !sources) || (no > 0 && !destinations))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "sources or destinations is NULL");
    if (ni > 0) memcpy(sources, a->src, sizeof *sources * (size_t)ni);
    if (no > 0) memcpy(destinations, a->dst, sizeof *destinations * (size_t)no);
    if (a->weighted && ni > 0 && wants(sourceweights))
        memcpy(sourceweights, a->srcw, sizeof *sourceweights * (size_t)ni);
    if (a->weighted && no > 0 && wants(destweights))
        memcpy(destweights, a->dstw, sizeof *destweights * (size_t)no);
    return MPI_SUCCESS;
}
TM_ALIAS(Dist_graph_neighbors)
