/* count_narrow.c — MPI_Count arguments of the _c collectives to the engine's int (see .h). */
#include <stdio.h>
#include <stdlib.h>

#include "comm.h"
#include "count_narrow.h"
#include "errh.h"
#include "job.h"
#include "request.h"
#include "type.h"
#include "userop.h"

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

/* ---- folds (see the header) ---- */

static int add_tmp(struct tm_narrow *w, MPI_Datatype t)
{
    if (w->ntmp == w->captmp) {
        int nc = w->captmp ? 2 * w->captmp : 4;
        MPI_Datatype *p = realloc(w->tmp, sizeof *p * (size_t)nc);
        if (!p) {
            PMPI_Type_free(&t);
            fail(w, MPI_ERR_NO_MEM, "", 0);
            return -1;
        }
        w->tmp = p;
        w->captmp = nc;
    }
    w->tmp[w->ntmp++] = t;
    return 0;
}

static void *add_mem(struct tm_narrow *w, size_t bytes)
{
    void *p = w->nmem < TM_NARROW_MAX_MEM ? malloc(bytes ? bytes : 1) : NULL;
    if (!p) {
        fail(w, MPI_ERR_NO_MEM, "", 0);
        return NULL;
    }
    w->mem[w->nmem++] = p;
    return p;
}

/* A committed type, or the failure noted (the int call would refuse it too). */
static int usable(struct tm_narrow *w, MPI_Datatype t)
{
    if (tm_type_get(t)) return 1;
    if (!w->err) {
        w->err = MPI_ERR_TYPE;
        snprintf(w->why, sizeof w->why, "invalid datatype %d%s", t,
                 tm_type_query(t) ? " (not committed)" : "");
    }
    return 0;
}

/* A committed contiguous type of c elements of t in *ret (noted for freeing); 0 or -1. */
static int contig(struct tm_narrow *w, MPI_Count c, MPI_Datatype t, MPI_Datatype *ret)
{
    MPI_Datatype nt;
    if (PMPI_Type_contiguous_c(c, t, &nt) != MPI_SUCCESS || PMPI_Type_commit(&nt) != MPI_SUCCESS) {
        fail(w, MPI_ERR_NO_MEM, "", 0);
        return -1;
    }
    if (add_tmp(w, nt) < 0) return -1;
    *ret = nt;
    return 0;
}

MPI_Count tm_narrow_fold(struct tm_narrow *w, MPI_Count c, MPI_Datatype *type)
{
    if (w->err || c <= TM_COLL_COUNT_MAX || !usable(w, *type)) return c;
    return contig(w, c, *type, type) < 0 ? c : 1;
}

MPI_Count tm_narrow_fold_op(struct tm_narrow *w, MPI_Count c, MPI_Datatype *type, MPI_Op op)
{
    return op >= TM_OP_USER_FIRST ? c : tm_narrow_fold(w, c, type);
}

static int big(MPI_Count v)
{
    return v > TM_COLL_COUNT_MAX || v < INT_MIN;
}

static MPI_Count gcd(MPI_Count a, MPI_Count b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        MPI_Count t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void tm_narrow_vfold(struct tm_narrow *w, int n, const MPI_Count **counts, const MPI_Aint **displs,
                     MPI_Datatype *type, MPI_Op op)
{
    const MPI_Count *c = *counts;
    const MPI_Aint *d = displs ? *displs : NULL;
    if (w->err || !c || n <= 0 || op >= TM_OP_USER_FIRST) return;
    int any = 0;
    MPI_Count g = 0;
    for (int i = 0; i < n; i++) {
        any |= big(c[i]) || (d && big(d[i]));
        g = gcd(g, c[i]);
        if (d) g = gcd(g, d[i]);
    }
    /* no factor: the narrowing refuses the value past int */
    if (!any || g <= 1 || !usable(w, *type)) return;
    MPI_Count *nc = add_mem(w, sizeof *nc * (size_t)n);
    MPI_Aint *nd = d ? add_mem(w, sizeof *nd * (size_t)n) : NULL;
    if (!nc || (d && !nd) || contig(w, g, *type, type) < 0) return;
    for (int i = 0; i < n; i++) {
        nc[i] = c[i] / g;
        if (d) nd[i] = d[i] / g;
    }
    *counts = nc;
    if (d) *displs = nd;
}

void tm_narrow_wfold(struct tm_narrow *w, int n, const MPI_Count **counts, const MPI_Aint **displs,
                     const MPI_Datatype **types)
{
    const MPI_Count *c = *counts;
    const MPI_Aint *d = *displs;
    const MPI_Datatype *t = *types;
    if (w->err || !c || !d || !t || n <= 0) return;
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= big(c[i]) || big(d[i]);
    if (!any) return;
    MPI_Count *nc = add_mem(w, sizeof *nc * (size_t)n);
    MPI_Aint *nd = add_mem(w, sizeof *nd * (size_t)n);
    MPI_Datatype *nt = add_mem(w, sizeof *nt * (size_t)n);
    if (!nc || !nd || !nt) return;
    for (int i = 0; i < n; i++) {
        nc[i] = c[i], nd[i] = d[i], nt[i] = t[i];
        if (!(c[i] > 0 && (big(c[i]) || big(d[i])))) continue;
        if (!usable(w, t[i])) return;
        /* one element that holds the block's c[i] elements at its byte displacement */
        MPI_Count disp = d[i];
        MPI_Datatype h;
        if (PMPI_Type_create_hindexed_c(1, &c[i], &disp, t[i], &h) != MPI_SUCCESS ||
            PMPI_Type_commit(&h) != MPI_SUCCESS || add_tmp(w, h) < 0) {
            fail(w, MPI_ERR_NO_MEM, "", 0);
            return;
        }
        nc[i] = 1, nd[i] = 0, nt[i] = h;
    }
    *counts = nc;
    *displs = nd;
    *types = nt;
}

/* What a request keeps of a _c call: the int copies and what the folds made. */
struct keep {
    int *ints;
    void *mem[TM_NARROW_MAX_MEM];
    int nmem;
    MPI_Datatype *tmp;
    int ntmp;
};

static void drop(struct tm_rank *me, int *ints, void *const *mem, int nmem, MPI_Datatype *tmp,
                 int ntmp)
{
    free(ints);
    for (int i = 0; i < nmem; i++)
        free(mem[i]);
    /* the handles only: operations still running hold their own references to the types */
    for (int i = 0; me && i < ntmp; i++)
        tm_type_handle_drop(me, tmp[i]);
    free(tmp);
}

static void keep_free(struct tm_rank *me, void *p)
{
    struct keep *k = p;
    drop(me, k->ints, k->mem, k->nmem, k->tmp, k->ntmp);
    free(k);
}

static void release(struct tm_narrow *w)
{
    drop(tm_self(), w->ints, w->mem, w->nmem, w->tmp, w->ntmp);
    w->ints = NULL;
    w->nmem = w->ntmp = w->captmp = 0;
    w->tmp = NULL;
}

int tm_narrow_fail(struct tm_narrow *w)
{
    release(w);
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, w->fn, TM_ERR_NOINIT);
    return tm_err(me, w->comm, w->err, w->fn, "%s", w->why);
}

int tm_narrow_end(struct tm_narrow *w, int e, MPI_Request *request)
{
    if (e == MPI_SUCCESS && request && *request != MPI_REQUEST_NULL) {
        if (!w->nmem && !w->ntmp) {
            (*request)->keep = w->ints;
            return e;
        }
        struct keep *k = malloc(sizeof *k);
        if (k) {
            *k = (struct keep){.ints = w->ints, .nmem = w->nmem, .tmp = w->tmp, .ntmp = w->ntmp};
            for (int i = 0; i < w->nmem; i++)
                k->mem[i] = w->mem[i];
            (*request)->keep = k;
            (*request)->keep_free = keep_free;
            return e;
        }
        /* out of memory: the operation may still read them; keeping them leaks less than a
         * use after free would cost */
        return e;
    }
    release(w);
    return e;
}
