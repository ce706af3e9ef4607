/* topo.h — virtual topologies attached to communicators (MPI 3.1 chapter 7): Cartesian grids
 * (topo_cart.c), graphs (topo_graph.c), distributed graphs (topo_dist.c), and where reorder
 * puts the ranks (topo_map.c).
 *
 * A topology belongs to the shared part of a communicator (struct tm_comm.topo, read and
 * installed with __atomic builtins; topo_free drops the reference), so every
 * member on a node sees one copy.  The members that create the communicator each build the
 * same description and the first to install it wins (compare-and-swap); after that it is
 * immutable, except a distributed graph's per-member adjacency (dist.adj[r]), which only
 * member r writes (before its create call returns) and only member r reads.  Comm_dup shares
 * the object (reference counted); tm_comm_fini_shared drops the communicator's reference
 * through topo_free. */
#ifndef TMPI_LIBCLIENT_TOPO_H
#define TMPI_LIBCLIENT_TOPO_H

#include <stdatomic.h>

#include "comm.h"

struct tm_rank;

/* Limits on what a program can make the library allocate for one topology. */
#define TM_TOPO_MAX_DIMS 64 /* Cartesian dimensions */
/* Edges one member names in one MPI_Dist_graph_create call (each is sent to both its ends as
 * three ints, and Alltoallv counts are ints). */
#define TM_TOPO_MAX_EDGES (1 << 26)

/* One member's neighbours in a distributed graph, in the order the program gave them. */
struct tm_adj {
    int indeg, outdeg;
    int weighted;
    int *src, *srcw; /* indeg each (srcw NULL when unweighted) */
    int *dst, *dstw; /* outdeg each */
};

struct tm_topo {
    _Atomic int refs; /* communicators sharing it */
    int kind;         /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int n;            /* members of the communicator */
    union {
        struct {
            int ndims;
            int *dims, *periods; /* ndims each */
        } cart;
        struct {
            int nnodes, nedges;
            int *index, *edges; /* MPI_Graph_create's arrays */
        } graph;
        struct {
            struct tm_adj **adj; /* n entries; adj[r] written and read by member r only */
        } dist;
    };
};

void tm_adj_free(struct tm_adj *a);

/* Comm_dup: nc shares pc's topology (nothing to do when pc has none). */
void tm_topo_dup_hook(struct tm_comm *nc, const struct tm_comm *pc);

/* ---- inside the topology files ---- */

struct tm_topo *tm_topo_new(int kind, int n);
void tm_topo_release(struct tm_topo *t);
/* Installs t on c unless a member on this node did first; returns the installed one (t is
 * then released if it lost). */
struct tm_topo *tm_topo_install(struct tm_comm *c, struct tm_topo *t);
static inline struct tm_topo *tm_topo_of(const struct tm_comm *c)
{
    return __atomic_load_n(&c->topo, __ATOMIC_ACQUIRE);
}

/* Cartesian helpers: coordinates of rank r / rank of in-range coordinates (row-major). */
void tm_cart_coords(const struct tm_topo *t, int r, int *coords);
int tm_cart_rank(const struct tm_topo *t, const int *coords);
/* Source and destination of a shift by disp along dim (MPI_PROC_NULL off a non-periodic
 * edge). */
void tm_cart_shift(const struct tm_topo *t, int rank, int dim, int disp, int *src, int *dst);

/* Neighbour lists as the neighbourhood collectives use them (MPI 3.1 §7.6): sources (receive
 * blocks, in order) and destinations (send blocks).  Cartesian: for each dimension, the -1 then
 * the +1 neighbour (MPI_PROC_NULL at a non-periodic edge).  Graph: the adjacency list for both.
 * Distributed graph: the member's sources and destinations.  *src and *dst point into
 * memory of the topology or into *own (malloc'd, the caller frees it). */
int tm_topo_neighbors(const struct tm_topo *t, int rank, int *indeg, const int **src, int *outdeg,
                      const int **dst, int **own);

/* Where reorder puts the members (topo_map.c).  newrank[r]: the new rank of member r of the
 * old communicator c, MPI_UNDEFINED for members left out (beyond the first nnew).  Every member
 * computes the same answer from the same arguments. */
int tm_map_cart(struct tm_rank *me, const struct tm_comm *c, int ndims, const int *dims,
                const int *periods, int reorder, int *newrank);
int tm_map_graph(struct tm_rank *me, const struct tm_comm *c, int nnodes, const int *index,
                 const int *edges, int reorder, int *newrank);

/* The node of member r of c (0 when the job knows no layout). */
int tm_topo_node_of(struct tm_rank *me, const struct tm_comm *c, int r);

/* Creates the communicator of a topology: member r of cr's communicator gets rank newrank
 * (MPI_UNDEFINED: MPI_COMM_NULL), then t is installed on it (t is taken over).  *newcomm is
 * the new handle. */
int tm_topo_make_comm(struct tm_rank *me, MPI_Comm comm, const char *fn, int newrank,
                      struct tm_topo *t, MPI_Comm *newcomm);

/* Entry of the query calls: the calling rank (me), comm's entry (cr) and its topology (t),
 * which must be of kind want (0: any kind) or the call fails with MPI_ERR_TOPOLOGY. */
#define TM_TOPO_ENTRY(fn, comm, want)                                                              \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);                                    \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);      \
    const struct tm_topo *t = tm_topo_of(cr->c);                                                   \
    if (TM_UNLIKELY(!t || ((want) && t->kind != (want))))                                          \
        return tm_err(me, comm, MPI_ERR_TOPOLOGY, fn, "communicator %d has %s", comm,              \
                      tm_topo_name(t));

/* "no topology", "a Cartesian topology"... for error messages. */
const char *tm_topo_name(const struct tm_topo *t);

#endif
