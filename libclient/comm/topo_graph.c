/* topo_graph.c — graph topologies (MPI 3.1 §7.5.3, 7.5.5, 7.5.8): Graph_create, its queries
 * and Graph_map.  The graph is kept as the program gave it (index/edges arrays); self-loops and
 * repeated edges are allowed, as MPI 2.2 onwards says. */
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "topo.h"

/* Checks a graph of nnodes vertices against a communicator of size members. */
static int check_graph(struct tm_rank *me, MPI_Comm comm, const char *fn, int size, int nnodes,
                       const int *index, const int *edges)
{
    if (nnodes < 0 || nnodes > size)
        return tm_err(me, comm, MPI_ERR_ARG, fn,
                      "nnodes %d is outside 0 to the communicator's %d members", nnodes, size);
    if (nnodes == 0) return MPI_SUCCESS;
    if (!index) return tm_err(me, comm, MPI_ERR_ARG, fn, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return tm_err(me, comm, MPI_ERR_ARG, fn,
                          "index[%d] = %d is negative or less than the one before", i, index[i]);
    if (index[nnodes - 1] > 0 && !edges) return tm_err(me, comm, MPI_ERR_ARG, fn, "edges is NULL");
    for (int e = 0; e < index[nnodes - 1]; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return tm_err(me, comm, MPI_ERR_ARG, fn, "edges[%d] = %d is not a vertex (0 to %d)", e,
                          edges[e], nnodes - 1);
    return MPI_SUCCESS;
}

static struct tm_topo *graph_new(int nnodes, const int *index, const int *edges)
{
    struct tm_topo *t = tm_topo_new(MPI_GRAPH, nnodes);
    if (!t) return NULL;
    int ne = nnodes ? index[nnodes - 1] : 0;
    t->graph.nnodes = nnodes;
    t->graph.nedges = ne;
    t->graph.index = malloc(sizeof(int) * (size_t)(nnodes > 0 ? nnodes : 1));
    t->graph.edges = malloc(sizeof(int) * (size_t)(ne > 0 ? ne : 1));
    if (!t->graph.index || !t->graph.edges) {
        tm_topo_release(t);
        return NULL;
    }
    if (nnodes) memcpy(t->graph.index, index, sizeof(int) * (size_t)nnodes);
    if (ne) memcpy(t->graph.edges, edges, sizeof(int) * (size_t)ne);
    return t;
}

TM_API int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                             int reorder, MPI_Comm *comm_graph)
{
    const char *fn = "MPI_Graph_create";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm_old);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm_old);
    if (cr->c->inter)
        return tm_err(me, comm_old, MPI_ERR_COMM, fn, "communicator %d is an inter-communicator",
                      comm_old);
    if (!comm_graph) return tm_err(me, comm_old, MPI_ERR_ARG, fn, "comm_graph is NULL");
    int err = check_graph(me, comm_old, fn, cr->c->size, nnodes, index, edges);
    if (err) return err;
    int *newrank = malloc(sizeof *newrank * (size_t)cr->c->size);
    struct tm_topo *t = newrank ? graph_new(nnodes, index, edges) : NULL;
    if (!t || tm_map_graph(me, cr->c, nnodes, index, edges, reorder, newrank) < 0) {
        free(newrank);
        tm_topo_release(t);
        return tm_err(me, comm_old, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int mine = newrank[cr->rank];
    free(newrank);
    return tm_topo_make_comm(me, comm_old, fn, mine, t, comm_graph);
}
TM_ALIAS(Graph_create)

TM_API int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                          int *newrank)
{
    const char *fn = "MPI_Graph_map";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (cr->c->inter)
        return tm_err(me, comm, MPI_ERR_COMM, fn, "communicator %d is an inter-communicator", comm);
    if (!newrank) return tm_err(me, comm, MPI_ERR_ARG, fn, "newrank is NULL");
    int err = check_graph(me, comm, fn, cr->c->size, nnodes, index, edges);
    if (err) return err;
    int *map = malloc(sizeof *map * (size_t)cr->c->size);
    if (!map || tm_map_graph(me, cr->c, nnodes, index, edges, 1, map) < 0) {
        free(map);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *newrank = map[cr->rank];
    free(map);
    return MPI_SUCCESS;
}
TM_ALIAS(Graph_map)

TM_API int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    const char *fn = "MPI_Graphdims_get";
    TM_TOPO_ENTRY(fn, comm, MPI_GRAPH);
    if (!nnodes || !nedges) return tm_err(me, comm, MPI_ERR_ARG, fn, "nnodes or nedges is NULL");
    *nnodes = t->graph.nnodes;
    *nedges = t->graph.nedges;
    return MPI_SUCCESS;
}
TM_ALIAS(Graphdims_get)

TM_API int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    const char *fn = "MPI_Graph_get";
    TM_TOPO_ENTRY(fn, comm, MPI_GRAPH);
    if (maxindex < 0 || maxedges < 0)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "negative maxindex %d or maxedges %d", maxindex,
                      maxedges);
    int ni = maxindex < t->graph.nnodes ? maxindex : t->graph.nnodes;
    int ne = maxedges < t->graph.nedges ? maxedges : t->graph.nedges;
    if ((ni > 0 && !index) || (ne > 0 && !edges))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "index or edges is NULL");
    if (ni) memcpy(index, t->graph.index, sizeof *index * (size_t)ni);
    if (ne) memcpy(edges, t->graph.edges, sizeof *edges * (size_t)ne);
    return MPI_SUCCESS;
}
TM_ALIAS(Graph_get)

TM_API int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    const char *fn = "MPI_Graph_neighbors_count";
    TM_TOPO_ENTRY(fn, comm, MPI_GRAPH);
    if (rank < 0 || rank >= t->graph.nnodes)
        return tm_err(me, comm, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (!nneighbors) return tm_err(me, comm, MPI_ERR_ARG, fn, "nneighbors is NULL");
    *nneighbors = t->graph.index[rank] - (rank ? t->graph.index[rank - 1] : 0);
    return MPI_SUCCESS;
}
TM_ALIAS(Graph_neighbors_count)

TM_API int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    const char *fn = "MPI_Graph_neighbors";
    TM_TOPO_ENTRY(fn, comm, MPI_GRAPH);
    if (rank < 0 || rank >= t->graph.nnodes)
        return tm_err(me, comm, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (maxneighbors < 0)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "negative maxneighbors %d", maxneighbors);
    int lo = rank ? t->graph.index[rank - 1] : 0, n = t->graph.index[rank] - lo;
    if (n > maxneighbors) n = maxneighbors;
    if (n > 0 && !neighbors) return tm_err(me, comm, MPI_ERR_ARG, fn, "neighbors is NULL");
    if (n > 0) memcpy(neighbors, t->graph.edges + lo, sizeof *neighbors * (size_t)n);
    return MPI_SUCCESS;
}
TM_ALIAS(Graph_neighbors)
