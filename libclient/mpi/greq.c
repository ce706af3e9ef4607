/* greq.c — MPI_Grequest_start / MPI_Grequest_complete and the status setters (greq.h). */
#include "greq.h"

#include <stdlib.h>

#include "errh.h"
#include "job.h"
#include "request.h"
#include "wait.h"

/* The program's callbacks.  state: GREQ_COMPLETE and GREQ_FREED, set once each by any thread
 * (acq_rel); whoever sets the second releases the request. */
enum { GREQ_COMPLETE = 1, GREQ_FREED = 2 };

struct tm_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    _Atomic int state;
};

TM_API int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                               MPI_Grequest_free_function *free_fn,
                               MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                               MPI_Request *request)
{
    struct tm_rank *me = tm_self();
    const char *fn = "MPI_Grequest_start";
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!query_fn || !free_fn || !cancel_fn || !request)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "a callback or request is NULL");
    struct tm_request *r = calloc(1, sizeof *r);
    struct tm_greq *g = calloc(1, sizeof *g);
    if (!r || !g) {
        free(r);
        free(g);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    g->query = query_fn;
    g->free = free_fn;
    g->cancel = cancel_fn;
    g->extra = extra_state;
    r->kind = TM_REQ_GREQ;
    r->owner = me;
    r->comm = MPI_COMM_WORLD;
    r->gr = g;
    *request = r;
    return MPI_SUCCESS;
}
TM_ALIAS(Grequest_start)

static void release(struct tm_request *r)
{
    free(r->gr);
    free(r);
}

/* Sets bit; 1 if the other one was already set (the caller releases). */
static int mark(struct tm_greq *g, int bit)
{
    return atomic_fetch_or_explicit(&g->state, bit, memory_order_acq_rel) != 0;
}

TM_API int PMPI_Grequest_complete(MPI_Request request)
{
    const char *fn = "MPI_Grequest_complete";
    if (!request || request->kind != TM_REQ_GREQ)
        return tm_err_noco(MPI_ERR_REQUEST, fn, "not a generalized request");
    struct tm_greq *g = request->gr;
    if (atomic_load_explicit(&request->done, memory_order_acquire))
        return tm_err_noco(MPI_ERR_REQUEST, fn, "the request is already complete");
    struct tm_waker *w = &request->owner->waker;
    /* freed while pending: nobody waits, the free function runs here (§12.2) */
    if (atomic_load_explicit(&g->state, memory_order_acquire) & GREQ_FREED) {
        int err = g->free(g->extra);
        atomic_store_explicit(&request->done, 1, memory_order_seq_cst);
        if (mark(g, GREQ_COMPLETE)) release(request);
        return err;
    }
    atomic_store_explicit(&request->done, 1, memory_order_seq_cst); /* wait.h */
    tm_wake(w);
    return MPI_SUCCESS;
}
TM_ALIAS(Grequest_complete)

static int query(struct tm_greq *g, MPI_Status *status)
{
    MPI_Status st = {.MPI_SOURCE = MPI_UNDEFINED, .MPI_TAG = MPI_UNDEFINED};
    int err = g->query(g->extra, &st);
    if (!st.MPI_ERROR) st.MPI_ERROR = err;
    if (status != MPI_STATUS_IGNORE) *status = st;
    return err;
}

int tm_greq_status(struct tm_rank *me, struct tm_request *r, MPI_Status *status)
{
    int err = query(r->gr, status);
    return err ? tm_err(me, r->comm, err, "MPI_Request_get_status", "query function failed")
               : MPI_SUCCESS;
}

int tm_greq_finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status)
{
    (void)me;
    struct tm_request *r = *rp;
    struct tm_greq *g = r->gr;
    int err = query(g, status);
    int ferr = g->free(g->extra);
    *rp = MPI_REQUEST_NULL;
    /* complete (we waited for it) and now freed */
    atomic_store_explicit(&g->state, GREQ_COMPLETE | GREQ_FREED, memory_order_relaxed);
    release(r);
    return err ? err : ferr;
}

void tm_greq_free(struct tm_rank *me, struct tm_request *r)
{
    (void)me;
    struct tm_greq *g = r->gr;
    if (atomic_load_explicit(&r->done, memory_order_acquire)) {
        (void)g->free(g->extra); /* Request_free has no way to report it */
        release(r);
        return;
    }
    /* Still pending: MPI_Grequest_complete calls free_fn.  Whoever marks second releases. */
    if (mark(g, GREQ_FREED)) release(r);
}

int tm_greq_cancel(struct tm_rank *me, struct tm_request *r)
{
    struct tm_greq *g = r->gr;
    int complete = atomic_load_explicit(&r->done, memory_order_acquire) != 0;
    int err = g->cancel(g->extra, complete);
    return err ? tm_err(me, r->comm, err, "MPI_Cancel", "cancel function failed") : MPI_SUCCESS;
}

/* MPI_Status_set_elements(_x): datatype/type_query.c (counts basic elements through the
 * type's signature, so derived types round-trip with MPI_Get_elements). */
