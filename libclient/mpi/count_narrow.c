/* count_narrow.c — MPI_Count scalar counts of the _c collectives to the engine's int (see .h). */
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

void tm_narrow_begin(struct tm_narrow *w, const char *fn, MPI_Comm comm, int root,
                     enum tm_narrow_kind kind)
{
    *w = (struct tm_narrow){.fn = fn, .comm = comm};
    if (kind != TM_NW_ROOTED) return;
    /* An invalid communicator: the int call reports it. */
    struct tm_rank *me = tm_self();
    const struct tm_commref *cr = me ? tm_comm_get(&me->comms, comm) : NULL;
    if (cr) w->is_root = cr->c->inter ? root == MPI_ROOT : root == cr->rank;
}

int tm_narrow_count(struct tm_narrow *w, const char *what, MPI_Count c)
{
    if (c > TM_COLL_COUNT_MAX) {
        fail(w, MPI_ERR_COUNT, what, c);
        return 0;
    }
    return c < INT_MIN ? INT_MIN : (int)c;
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

MPI_Count tm_narrow_fold(struct tm_narrow *w, MPI_Count c, MPI_Datatype *type)
{
    if (w->err || c <= TM_COLL_COUNT_MAX || !usable(w, *type)) return c;
    MPI_Datatype nt;
    if (w->ntmp == TM_NARROW_MAX_TMP || PMPI_Type_contiguous_c(c, *type, &nt) != MPI_SUCCESS) {
        fail(w, MPI_ERR_NO_MEM, "", 0);
        return c;
    }
    w->tmp[w->ntmp++] = nt;
    if (PMPI_Type_commit(&nt) != MPI_SUCCESS) {
        fail(w, MPI_ERR_NO_MEM, "", 0);
        return c;
    }
    *type = nt;
    return 1;
}

MPI_Count tm_narrow_fold_op(struct tm_narrow *w, MPI_Count c, MPI_Datatype *type, MPI_Op op)
{
    return op >= TM_OP_USER_FIRST ? c : tm_narrow_fold(w, c, type);
}

/* What a request keeps of a _c call: the folded types. */
struct keep {
    MPI_Datatype tmp[TM_NARROW_MAX_TMP];
    int ntmp;
};

static void drop(struct tm_rank *me, const MPI_Datatype *tmp, int ntmp)
{
    /* the handles only: operations still running hold their own references to the types */
    for (int i = 0; me && i < ntmp; i++)
        tm_type_handle_drop(me, tmp[i]);
}

static void keep_free(struct tm_rank *me, void *p)
{
    struct keep *k = p;
    drop(me, k->tmp, k->ntmp);
    free(k);
}

int tm_narrow_fail(struct tm_narrow *w)
{
    struct tm_rank *me = tm_self();
    drop(me, w->tmp, w->ntmp);
    w->ntmp = 0;
    if (!me) return tm_err_noco(MPI_ERR_OTHER, w->fn, TM_ERR_NOINIT);
    return tm_err(me, w->comm, w->err, w->fn, "%s", w->why);
}

int tm_narrow_end(struct tm_narrow *w, int e, MPI_Request *request)
{
    if (w->ntmp && e == MPI_SUCCESS && request && *request != MPI_REQUEST_NULL) {
        struct keep *k = malloc(sizeof *k);
        if (k) {
            *k = (struct keep){.ntmp = w->ntmp};
            for (int i = 0; i < w->ntmp; i++)
                k->tmp[i] = w->tmp[i];
            (*request)->keep = k;
            (*request)->keep_free = keep_free;
            return e;
        }
        /* out of memory: the operation may still name them; keeping them leaks less than a
         * use after free would cost */
        return e;
    }
    drop(tm_self(), w->tmp, w->ntmp);
    w->ntmp = 0;
    return e;
}
