/* request.c — the per-rank request pool (request.h). */
#include "request.h"

#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "objtab.h"

#define TM_REQ_CHUNK 16 /* small: thousands of ranks each get one */

/* Requests are allocated in chunks, chained so the whole pool can be
 * freed at job end even if the program leaked requests. */
struct req_chunk {
    struct req_chunk *next;
    struct tm_request r[TM_REQ_CHUNK];
};

static void drop_keep(struct tm_rank *me, struct tm_request *r)
{
    if (r->keep_free)
        r->keep_free(me, r->keep);
    else
        free(r->keep);
    r->keep = NULL;
    r->keep_free = NULL;
}

/* Orphans (Request_free on a pending request) go back to the pool once they are done. */
static void reap_orphans(struct tm_rank *me)
{
    struct tm_request **pp = &me->req_orphans;
    while (*pp) {
        struct tm_request *r = *pp;
        if (atomic_load_explicit(&r->done, memory_order_acquire)) {
            if (r->dt) me->job->type_release(r->dt);
            r->dt = NULL;
            drop_keep(me, r);
            *pp = r->next;
            r->next = me->req_free;
            me->req_free = r;
        } else {
            pp = &r->next;
        }
    }
}

struct tm_request *tm_req_alloc(struct tm_rank *me, enum tm_req_kind kind)
{
    tm_mt_lock(me);
    if (TM_UNLIKELY(!me->req_free)) {
        if (me->req_orphans) reap_orphans(me);
        if (!me->req_free) {
            struct req_chunk *c = malloc(sizeof *c);
            if (!c) {
                tm_mt_unlock(me);
                return NULL;
            }
            c->next = me->req_chunks;
            me->req_chunks = c;
            for (int i = 0; i < TM_REQ_CHUNK; i++) {
                c->r[i].next = me->req_free;
                me->req_free = &c->r[i];
            }
        }
    }
    struct tm_request *r = me->req_free;
    me->req_free = r->next;
    tm_mt_unlock(me);
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->owner = me;
    r->pooled = 1;
    return r;
}

void tm_req_init_stack(struct tm_request *r, struct tm_rank *me, enum tm_req_kind kind,
                       MPI_Comm comm)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->owner = me;
    r->comm = comm;
}

/* Fortran handles of requests: base + slot, so 0 stays MPI_REQUEST_NULL. */
#define FREQ_BASE 1

int tm_req_to_fint(struct tm_rank *me, struct tm_request *r)
{
    if (!r) return 0;
    if (r->fidx <= 0) r->fidx = tm_objtab_add(&me->freqs, FREQ_BASE, r);
    return r->fidx;
}

struct tm_request *tm_req_from_fint(struct tm_rank *me, int f)
{
    return tm_objtab_get(me->freqs, FREQ_BASE, f);
}

void tm_req_free(struct tm_rank *me, struct tm_request *r)
{
    if (!r->pooled) return;
    if (TM_UNLIKELY(r->fidx > 0)) { /* the handle dies with the request */
        tm_objtab_del(me->freqs, FREQ_BASE, r->fidx);
        r->fidx = 0;
    }
    if (TM_UNLIKELY(r->dt)) {
        /* The operation is over (or orphaned and no longer reads the type after done). */
        if (atomic_load_explicit(&r->done, memory_order_acquire)) {
            me->job->type_release(r->dt);
            r->dt = NULL;
        }
    }
    tm_mt_lock(me);
    if (!atomic_load_explicit(&r->done, memory_order_acquire)) {
        r->freed = 1;
        r->next = me->req_orphans;
        me->req_orphans = r;
    } else {
        drop_keep(me, r);
        r->next = me->req_free;
        me->req_free = r;
    }
    tm_mt_unlock(me);
}

static void keep(void *p)
{
    (void)p; /* the table only points at requests: the pool owns them */
}

void tm_req_pool_destroy(struct tm_rank *me)
{
    tm_objtab_free(me->freqs, keep);
    me->freqs = NULL;
    struct req_chunk *c = me->req_chunks;
    while (c) {
        struct req_chunk *next = c->next;
        free(c);
        c = next;
    }
    me->req_chunks = NULL;
    me->req_free = NULL;
    me->req_orphans = NULL;
}

void tm_status_empty(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    status->tm_cancelled = 0;
    status->tm_bytes = 0;
}

void tm_status_blank(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->tm_cancelled = 0;
    status->tm_bytes = 0;
}

void tm_req_status(const struct tm_request *r, MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = r->st_source;
    status->MPI_TAG = r->st_tag;
    status->tm_cancelled = r->st_cancelled;
    status->tm_bytes = (long long)r->st_bytes;
}

static inline void set_done(struct tm_request *r, int source, int tag, size_t bytes, int err,
                            memory_order mo)
{
    r->st_source = source;
    r->st_tag = tag;
    r->st_bytes = bytes;
    r->st_error = err;
    atomic_store_explicit(&r->done, 1, mo);
}

void tm_req_set_done(struct tm_request *r, int source, int tag, size_t bytes, int err)
{
    set_done(r, source, tag, bytes, err, memory_order_seq_cst); /* wait.h */
}

void tm_req_set_done_own(struct tm_request *r, int source, int tag, size_t bytes, int err)
{
    set_done(r, source, tag, bytes, err, memory_order_release);
}
