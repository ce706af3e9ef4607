/* count_narrow.c — MPI_Count arguments of the _c collectives to the engine's int (see .h). */
#include <stdio.h>
#include <stdlib.h>

#include "comm.h"
#include "count_narrow.h"
#include "errh.h"
#include "job.h"
#include "request.h"

static void fail(struct tm_narrow *w, int cls, const char *what, long long v)
{
    if (w->err) return;
    w->err = cls;
    if (cls == MPI_ERR_COUNT)
        snprintf(w->why, sizeof w->why,
                 "%s %lld exceeds the %d this implementation moves per block", what, v,
                 TM_COLL_COUNT_MAX);
    else
        snprintf(w->why, sizeof w->why, "out of memory");
}

static void degrees(struct tm_narrow *w)
{
    int topo = MPI_UNDEFINED, wt = 0;
    if (PMPI_Topo_test(w->comm, &topo) != MPI_SUCCESS) return;
    if (topo == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(w->comm, &w->indeg, &w->outdeg, &wt);
    } else if (topo == MPI_CART) {
        int nd = 0;
        PMPI_Cartdim_get(w->comm, &nd);
        w->indeg = w->outdeg = 2 * nd;
    } else if (topo == MPI_GRAPH) {
        int me = 0, nn = 0;
        PMPI_Comm_rank(w->comm, &me);
        PMPI_Graph_neighbors_count(w->comm, me, &nn);
        w->indeg = w->outdeg = nn;
    }
}

void tm_narrow_begin(struct tm_narrow *w, const char *fn, MPI_Comm comm, int nints, int root,
                     enum tm_narrow_kind kind)
{
    *w = (struct tm_narrow){.fn = fn, .comm = comm};
    if (kind == TM_NW_NONE) return;
    /* Queries go through the error handler only on an invalid communicator, and the int call
     * reports that one: keep them quiet by checking the handle first. */
    struct tm_rank *me = tm_self();
    if (!me || !tm_comm_get(&me->comms, comm)) return;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_size(comm, &w->size);
    w->peers = w->size;
    if (inter) PMPI_Comm_remote_size(comm, &w->peers);
    if (kind == TM_NW_ROOTED) {
        int rank = -1;
        PMPI_Comm_rank(comm, &rank);
        w->is_root = inter ? root == MPI_ROOT : root == rank;
    }
    if (kind == TM_NW_NBR) degrees(w);
    int most = w->size > w->peers ? w->size : w->peers;
    if (w->indeg > most) most = w->indeg;
    if (w->outdeg > most) most = w->outdeg;
    w->cap = nints * most;
    if (w->cap > 0) {
        w->ints = malloc((size_t)w->cap * sizeof *w->ints);
        if (!w->ints) fail(w, MPI_ERR_NO_MEM, "", 0);
    }
}

void tm_narrow_reserve(struct tm_narrow *w, int n)
{
    if (w->err || w->ints || n <= 0) return;
    w->ints = malloc((size_t)n * sizeof *w->ints);
    if (!w->ints)
        fail(w, MPI_ERR_NO_MEM, "", 0);
    else
        w->cap = n;
}

int tm_narrow_count(struct tm_narrow *w, const char *what, MPI_Count c)
{
    /* A negative count is passed on: the int call reports it as invalid. */
    if (c > TM_COLL_COUNT_MAX) {
        fail(w, MPI_ERR_COUNT, what, c);
        return 0;
    }
    return c < INT_MIN ? INT_MIN : (int)c;
}

int tm_narrow_disp(struct tm_narrow *w, const char *what, MPI_Count d)
{
    if (d > TM_COLL_COUNT_MAX || d < INT_MIN) {
        fail(w, MPI_ERR_COUNT, what, d);
        return 0;
    }
    return (int)d;
}

static int *room(struct tm_narrow *w, int n)
{
    if (w->err || n <= 0 || w->used + n > w->cap) return NULL;
    int *p = w->ints + w->used;
    w->used += n;
    return p;
}

const int *tm_narrow_counts(struct tm_narrow *w, const char *what, const MPI_Count *c, int n)
{
    int *out = c ? room(w, n) : NULL;
    for (int i = 0; out && i < n; i++) {
        if (c[i] > TM_COLL_COUNT_MAX) {
            char name[64];
            snprintf(name, sizeof name, "%s[%d]", what, i);
            fail(w, MPI_ERR_COUNT, name, c[i]);
            return NULL;
        }
        out[i] = c[i] < INT_MIN ? INT_MIN : (int)c[i];
    }
    return out;
}

/* One displacement into out[i]: 0, or -1 (with the error noted) when it has no int form. */
static int narrow_displ(struct tm_narrow *w, const char *what, int i, long long d, int *out)
{
    if (d > TM_COLL_COUNT_MAX || d < INT_MIN) {
        char name[64];
        snprintf(name, sizeof name, "%s[%d]", what, i);
        fail(w, MPI_ERR_COUNT, name, d);
        return -1;
    }
    out[i] = (int)d;
    return 0;
}

const int *tm_narrow_displs(struct tm_narrow *w, const char *what, const MPI_Aint *d, int n)
{
    int *out = d ? room(w, n) : NULL;
    for (int i = 0; out && i < n; i++)
        if (narrow_displ(w, what, i, d[i], out) < 0) return NULL;
    return out;
}

const int *tm_narrow_cdispls(struct tm_narrow *w, const char *what, const MPI_Count *d, int n)
{
    int *out = d ? room(w, n) : NULL;
    for (int i = 0; out && i < n; i++)
        if (narrow_displ(w, what, i, d[i], out) < 0) return NULL;
    return out;
}

int tm_narrow_fail(struct tm_narrow *w)
{
    free(w->ints);
    w->ints = NULL;
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, w->fn, TM_ERR_NOINIT);
    return tm_err(me, w->comm, w->err, w->fn, "%s", w->why);
}

int tm_narrow_end(struct tm_narrow *w, int e, MPI_Request *request)
{
    if (e == MPI_SUCCESS && request && *request != MPI_REQUEST_NULL && w->ints) {
        (*request)->keep = w->ints;
        return e;
    }
    free(w->ints);
    w->ints = NULL;
    return e;
}
