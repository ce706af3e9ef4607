/* envelope_pool.c — per-rank envelope caches (envelope_pool.h). */
#include "envelope_pool.h"

#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "type_copy.h"

static unsigned size_class(size_t bytes)
{
    unsigned c = 0;
    size_t cap = 64;
    while (cap < bytes) {
        cap <<= 1;
        if (++c == TM_ENVL_NCLASS) return TM_ENVL_HEAP;
    }
    return c;
}

static size_t class_bytes(unsigned c)
{
    return (size_t)64 << c;
}

static unsigned class_cap(unsigned c)
{
    size_t n = TM_ENVL_CACHE_BYTES / class_bytes(c);
    return n < 4 ? 4 : (unsigned)n;
}

/* Moves everything receivers gave back into the private lists (owner only). */
static void drain_returned(struct tm_envl_pool *p)
{
    struct tm_envl *e = atomic_exchange_explicit(&p->returned, NULL, memory_order_acquire);
    while (e) {
        struct tm_envl *next = e->next;
        if (p->nfree[e->cls] < class_cap(e->cls)) {
            e->next = p->free[e->cls];
            p->free[e->cls] = e;
            p->nfree[e->cls]++;
        } else {
            free(e);
        }
        e = next;
    }
}

struct tm_envl *tm_envl_alloc(struct tm_rank *me, size_t bytes)
{
    struct tm_envl_pool *p = &me->envs;
    unsigned c = size_class(bytes);
    struct tm_envl *e = NULL;
    if (c != TM_ENVL_HEAP) {
        tm_mt_lock(me); /* several threads of the rank send at once (job.h: mt) */
        if (!p->free[c] && atomic_load_explicit(&p->returned, memory_order_relaxed))
            drain_returned(p);
        e = p->free[c];
        if (e) {
            p->free[c] = e->next;
            p->nfree[c]--;
        }
        tm_mt_unlock(me);
    }
    if (!e) {
        size_t payload = c == TM_ENVL_HEAP ? bytes : class_bytes(c);
        e = malloc(sizeof *e + payload);
        if (!e) return NULL;
    }
    e->cls = c;
    e->home = me;
    e->next = NULL;
    e->sreq = NULL;
    e->sbuf = NULL;
    e->stype = NULL;
    e->serial = 0;
    e->bsend = 0;
    return e;
}

struct tm_envl *tm_envl_eager(struct tm_rank *me, int ctx, int src, int tag, const void *data,
                              size_t bytes)
{
    return tm_envl_eager_typed(me, ctx, src, tag, data, NULL, bytes);
}

struct tm_envl *tm_envl_eager_typed(struct tm_rank *me, int ctx, int src, int tag, const void *data,
                                    const struct tm_type *dt, size_t bytes)
{
    struct tm_envl *e = tm_envl_alloc(me, bytes);
    if (!e) return NULL;
    e->kind = TM_ENVL_EAGER;
    e->ctx = ctx;
    e->src = src;
    e->tag = tag;
    e->bytes = bytes;
    if (TM_UNLIKELY(dt))
        tm_type_pack(e->data, data, bytes / dt->psize, dt, 0, bytes);
    else if (bytes)
        memcpy(e->data, data, bytes);
    return e;
}

void tm_bsend_release(struct tm_bsbuf *b, size_t bytes)
{
    /* under the lock from the decrement to the last touch of b: once used is 0 the owner may
     * free b, and it takes the lock first (bsbuf.h).  An iflush registers under the lock too,
     * so either it sees used at 0 or this release sees its request. */
    void (*complete)(void *) = b->complete;
    pthread_mutex_lock(&b->lock);
    size_t left = atomic_fetch_sub_explicit(&b->used, bytes, memory_order_seq_cst) - bytes;
    tm_wake(b->waker);
    void *done = NULL;
    if (left == 0) {
        done = b->flushers;
        b->flushers = NULL;
    }
    pthread_mutex_unlock(&b->lock);
    if (done) complete(done);
}

void tm_envl_release(struct tm_rank *me, struct tm_envl *e)
{
    /* a buffered message has left its sender's attached buffer once it is received */
    if (TM_UNLIKELY(e->bsend)) tm_bsend_release(e->bsb, e->bsend);
    if (e->cls == TM_ENVL_HEAP) {
        free(e);
        return;
    }
    struct tm_envl_pool *p = &e->home->envs;
    if (e->home == me) {
        tm_mt_lock(me);
        int keep = p->nfree[e->cls] < class_cap(e->cls);
        if (keep) {
            e->next = p->free[e->cls];
            p->free[e->cls] = e;
            p->nfree[e->cls]++;
        }
        tm_mt_unlock(me);
        if (!keep) free(e);
        return;
    }
    /* Another rank's envelope: push onto its return stack (Treiber push; only pushes race,
     * the owner takes the whole stack, so no ABA). */
    struct tm_envl *head = atomic_load_explicit(&p->returned, memory_order_relaxed);
    do {
        e->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&p->returned, &head, e, memory_order_release,
                                                    memory_order_relaxed));
}

void tm_envl_pool_destroy(struct tm_envl_pool *p)
{
    drain_returned(p);
    for (unsigned c = 0; c < TM_ENVL_NCLASS; c++) {
        while (p->free[c]) {
            struct tm_envl *e = p->free[c];
            p->free[c] = e->next;
            free(e);
        }
        p->nfree[c] = 0;
    }
}
