/* topo.c — what every kind of topology shares (topo.h): the object's life, the communicator
 * it is made on, MPI_Topo_test, and the neighbour lists of the neighbourhood collectives. */
#include "topo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"

struct tm_topo *tm_topo_new(int kind, int n)
{
    struct tm_topo *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    atomic_init(&t->refs, 1);
    t->kind = kind;
    t->n = n;
    if (kind == MPI_DIST_GRAPH) {
        t->dist.adj = calloc((size_t)(n > 0 ? n : 1), sizeof *t->dist.adj);
        if (!t->dist.adj) {
            free(t);
            return NULL;
        }
    }
    return t;
}

void tm_adj_free(struct tm_adj *a)
{
    if (!a) return;
    free(a->src);
    free(a->srcw);
    free(a->dst);
    free(a->dstw);
    free(a);
}

void tm_topo_release(struct tm_topo *t)
{
    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1) return;
    switch (t->kind) {
    case MPI_CART:
        free(t->cart.dims);
        free(t->cart.periods);
        break;
    case MPI_GRAPH:
        free(t->graph.index);
        free(t->graph.edges);
        break;
    case MPI_DIST_GRAPH:
        for (int i = 0; i < t->n; i++)
            tm_adj_free(t->dist.adj[i]);
        free(t->dist.adj);
        break;
    }
    free(t);
}

/* struct tm_comm.topo_free: tm_comm_fini_shared drops the communicator's reference. */
static void topo_free(void *t)
{
    tm_topo_release(t);
}

struct tm_topo *tm_topo_install(struct tm_comm *c, struct tm_topo *t)
{
    void *old = NULL;
    if (__atomic_compare_exchange_n(&c->topo, &old, t, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* Only the winner writes it; tm_comm_fini_shared reads it after every member has
         * released the communicator (acq_rel on refs). */
        c->topo_free = topo_free;
        return t;
    }
    tm_topo_release(t);
    return old;
}

void tm_topo_dup_hook(struct tm_comm *nc, const struct tm_comm *pc)
{
    struct tm_topo *t = tm_topo_of(pc);
    if (!t) return;
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    nc->topo_free = topo_free;
    __atomic_store_n(&nc->topo, t, __ATOMIC_RELEASE);
}

int tm_topo_node_of(struct tm_rank *me, const struct tm_comm *c, int r)
{
    const struct tmpi_rank_info *info = me->info;
    if (!info || !info->node_of_rank) return 0;
    return info->node_of_rank[tm_comm_world_rank(c, r)];
}

int tm_topo_make_comm(struct tm_rank *me, MPI_Comm comm, const char *fn, int newrank,
                      struct tm_topo *t, MPI_Comm *newcomm)
{
    /* Comm_split orders by key: the new ranks are the keys.  Its own failures (out of memory)
     * are reported under its name through the same handler. */
    MPI_Comm h = MPI_COMM_NULL;
    int err = PMPI_Comm_split(comm, newrank == MPI_UNDEFINED ? MPI_UNDEFINED : 0,
                              newrank == MPI_UNDEFINED ? 0 : newrank, &h);
    if (err != MPI_SUCCESS || h == MPI_COMM_NULL) {
        tm_topo_release(t);
        *newcomm = MPI_COMM_NULL;
        return err;
    }
    struct tm_commref *ncr = tm_comm_get_user(&me->comms, h);
    if (!ncr || ncr->rank != newrank) {
        tm_topo_release(t);
        PMPI_Comm_free(&h);
        return tm_err(me, comm, MPI_ERR_INTERN, fn, "new communicator has rank %d, not %d",
                      ncr ? ncr->rank : -1, newrank);
    }
    tm_topo_install(ncr->c, t);
    *newcomm = h;
    return MPI_SUCCESS;
}

int tm_topo_neighbors(const struct tm_topo *t, int rank, int *indeg, const int **src, int *outdeg,
                      const int **dst, int **own)
{
    *own = NULL;
    switch (t->kind) {
    case MPI_CART: {
        int nd = t->cart.ndims;
        int *v = malloc(sizeof *v * (size_t)(2 * nd > 0 ? 2 * nd : 1));
        if (!v) return -ENOMEM;
        for (int d = 0; d < nd; d++)
            tm_cart_shift(t, rank, d, 1, &v[2 * d], &v[2 * d + 1]);
        *own = v;
        *indeg = *outdeg = 2 * nd;
        *src = *dst = v;
        return 0;
    }
    case MPI_GRAPH: {
        int lo = rank ? t->graph.index[rank - 1] : 0;
        *indeg = *outdeg = t->graph.index[rank] - lo;
        *src = *dst = t->graph.edges + lo;
        return 0;
    }
    case MPI_DIST_GRAPH: {
        const struct tm_adj *a = t->dist.adj[rank];
        *indeg = a->indeg;
        *outdeg = a->outdeg;
        *src = a->src;
        *dst = a->dst;
        return 0;
    }
    }
    return -EINVAL;
}

TM_API int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    const char *fn = "MPI_Topo_test";
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (!status) return tm_err(me, comm, MPI_ERR_ARG, fn, "status is NULL");
    const struct tm_topo *t = tm_topo_of(cr->c);
    *status = t ? t->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
TM_ALIAS(Topo_test)

const char *tm_topo_name(const struct tm_topo *t)
{
    if (!t) return "no topology";
    switch (t->kind) {
    case MPI_CART:
        return "a Cartesian topology";
    case MPI_GRAPH:
        return "a graph topology";
    case MPI_DIST_GRAPH:
        return "a distributed graph topology";
    }
    return "an unknown topology";
}
