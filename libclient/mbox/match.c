/* match.c — the receive-side queues and MPI matching rules (match.h). */
#include "match.h"

#include <stdlib.h>
#include <string.h>

#include "envelope_pool.h"
#include "job.h"
#include "type_copy.h"
#include "wait.h"

static inline unsigned bucket(int ctx, int src, int tag)
{
    uint32_t h = (uint32_t)ctx * 0x9e3779b1u;
    h ^= (uint32_t)src * 0x85ebca6bu;
    h ^= (uint32_t)tag * 0xc2b2ae35u;
    h ^= h >> 15;
    return h & (TM_MATCH_BUCKETS - 1);
}

int tm_mbox_init(struct tm_mbox *mb)
{
    /* Adaptive: a sender that finds the receiver inside its short critical section (posting
     * a receive, draining its fast boxes) spins briefly instead of going to sleep on the
     * futex at once, which costs both sides a system call (seen in perf as lll_lock_wait /
     * lll_lock_wake in the 64 B ping-pong). */
    pthread_mutexattr_t attr;
    int r = pthread_mutexattr_init(&attr);
    if (r) return -r;
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    r = pthread_mutex_init(&mb->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    if (r) return -r;
    tm_dl_init(&mb->unexp_order);
    tm_dl_init(&mb->posted_wild);
    for (int i = 0; i < TM_MATCH_BUCKETS; i++) {
        tm_dl_init(&mb->unexp_hash[i]);
        tm_dl_init(&mb->posted_hash[i]);
    }
    mb->post_seq = 0;
    atomic_init(&mb->arrivals, 0);
    atomic_init(&mb->nunexp, 0);
    return 0;
}

void tm_mbox_destroy(struct tm_mbox *mb)
{
    if (!mb->unexp_order.next) /* never initialised */
        return;
    while (!tm_dl_empty(&mb->unexp_order)) {
        struct tm_envl *e = tm_dl_entry(mb->unexp_order.next, struct tm_envl, order);
        tm_dl_unlink(&e->order);
        tm_dl_unlink(&e->chain);
        free(e);
    }
    pthread_mutex_destroy(&mb->lock);
}

struct tm_request *tm_match_posted(struct tm_mbox *mb, int ctx, int src, int tag)
{
    struct tm_request *exact = NULL, *wild = NULL;
    struct tm_dl *h = &mb->posted_hash[bucket(ctx, src, tag)];
    for (struct tm_dl *n = h->next; n != h; n = n->next) {
        struct tm_request *r = tm_dl_entry(n, struct tm_request, link);
        if (r->ctx == ctx && r->src == src && r->tag == tag) {
            exact = r;
            break;
        }
    }
    /* Wildcard receives are rare; the list is usually empty. */
    for (struct tm_dl *n = mb->posted_wild.next; n != &mb->posted_wild; n = n->next) {
        struct tm_request *r = tm_dl_entry(n, struct tm_request, link);
        if (exact && r->seq > exact->seq) break;
        if (tm_req_matches(r, ctx, src, tag)) {
            wild = r;
            break;
        }
    }
    struct tm_request *r = wild ? wild : exact;
    if (r) {
        tm_dl_unlink(&r->link);
        r->posted = 0;
    }
    return r;
}

void tm_post_recv(struct tm_mbox *mb, struct tm_request *r)
{
    r->seq = ++mb->post_seq;
    r->wild = r->src == MPI_ANY_SOURCE || r->tag == MPI_ANY_TAG;
    r->posted = 1;
    if (r->wild)
        tm_dl_append(&mb->posted_wild, &r->link);
    else
        tm_dl_append(&mb->posted_hash[bucket(r->ctx, r->src, r->tag)], &r->link);
}

int tm_unpost_ctx(struct tm_mbox *mb, int (*pick)(void *arg, int ctx), void *arg,
                  struct tm_request **out, int max)
{
    int k = 0;
    for (int b = -1; b < TM_MATCH_BUCKETS && k < max; b++) {
        struct tm_dl *h = b < 0 ? &mb->posted_wild : &mb->posted_hash[b];
        for (struct tm_dl *n = h->next, *next; n != h && k < max; n = next) {
            next = n->next;
            struct tm_request *r = tm_dl_entry(n, struct tm_request, link);
            if (!pick(arg, r->ctx)) continue;
            tm_dl_unlink(&r->link);
            r->posted = 0;
            out[k++] = r;
        }
    }
    return k;
}

int tm_unpost_recv(struct tm_request *r)
{
    if (!r->posted) return 0;
    tm_dl_unlink(&r->link);
    r->posted = 0;
    return 1;
}

struct tm_envl *tm_match_unexp(struct tm_mbox *mb, int ctx, int src, int tag, int take)
{
    struct tm_envl *found = NULL;
    if (src != MPI_ANY_SOURCE && tag != MPI_ANY_TAG) {
        struct tm_dl *h = &mb->unexp_hash[bucket(ctx, src, tag)];
        for (struct tm_dl *n = h->next; n != h; n = n->next) {
            struct tm_envl *e = tm_dl_entry(n, struct tm_envl, chain);
            if (e->ctx == ctx && e->src == src && e->tag == tag) {
                found = e;
                break;
            }
        }
    } else {
        for (struct tm_dl *n = mb->unexp_order.next; n != &mb->unexp_order; n = n->next) {
            struct tm_envl *e = tm_dl_entry(n, struct tm_envl, order);
            if (e->ctx == ctx && (src == MPI_ANY_SOURCE || e->src == src) &&
                (tag == MPI_ANY_TAG || e->tag == tag)) {
                found = e;
                break;
            }
        }
    }
    if (found && take) tm_unexp_remove(mb, found);
    return found;
}

void tm_unexp_remove(struct tm_mbox *mb, struct tm_envl *e)
{
    tm_dl_unlink(&e->order);
    tm_dl_unlink(&e->chain);
    uint32_t n = atomic_load_explicit(&mb->nunexp, memory_order_relaxed);
    atomic_store_explicit(&mb->nunexp, n - 1, memory_order_relaxed);
}

struct tm_envl *tm_unexp_take_if(struct tm_mbox *mb, int ctx, int src, int tag,
                                 int (*is)(const struct tm_envl *e, const void *arg),
                                 const void *arg)
{
    struct tm_dl *h = &mb->unexp_hash[bucket(ctx, src, tag)];
    for (struct tm_dl *n = h->next; n != h; n = n->next) {
        struct tm_envl *e = tm_dl_entry(n, struct tm_envl, chain);
        if (e->ctx == ctx && e->src == src && e->tag == tag && is(e, arg)) {
            tm_unexp_remove(mb, e);
            return e;
        }
    }
    return NULL;
}

void tm_add_unexp(struct tm_mbox *mb, struct tm_envl *e)
{
    tm_dl_append(&mb->unexp_order, &e->order);
    tm_dl_append(&mb->unexp_hash[bucket(e->ctx, e->src, e->tag)], &e->chain);
    uint32_t n = atomic_load_explicit(&mb->nunexp, memory_order_relaxed);
    atomic_store_explicit(&mb->nunexp, n + 1, memory_order_relaxed);
    /* last: a reader that sees the new arrivals count sees nunexp's too */
    atomic_fetch_add_explicit(&mb->arrivals, 1, memory_order_seq_cst); /* wait.h */
}

void tm_copy_in(struct tm_request *rr, const void *data, const struct tm_type *st, size_t n)
{
    if (!n) return;
    const struct tm_type *dt = rr->dt;
    if (!st) {
        if (!dt)
            memcpy(rr->buf, data, n);
        else
            tm_type_unpack(rr->buf, rr->cap / dt->psize, dt, 0, data, n);
    } else if (!dt) {
        tm_type_pack(rr->buf, data, (n + st->psize - 1) / st->psize, st, 0, n);
    } else {
        /* Whole source elements only reach here truncated by the receive's size: the copy
         * stops at the end of the shorter side. */
        tm_type_copy(rr->buf, rr->cap / dt->psize, dt, data, (n + st->psize - 1) / st->psize, st);
    }
}

void tm_deliver_typed(struct tm_request *rr, const void *data, const struct tm_type *st,
                      size_t bytes, int src, int tag)
{
    size_t n = bytes <= rr->cap ? bytes : rr->cap;
    tm_copy_in(rr, data, st, n);
    int err = bytes > rr->cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    struct tm_rank *owner = rr->owner;
    if (owner == tm_cur && !owner->mt) { /* as tm_deliver */
        tm_req_set_done_own(rr, src, tag, n, err);
        return;
    }
    tm_req_set_done(rr, src, tag, n, err);
    tm_wake(&owner->waker);
}

void tm_deliver(struct tm_request *rr, const void *data, size_t bytes, int src, int tag)
{
    size_t n = bytes <= rr->cap ? bytes : rr->cap;
    if (TM_UNLIKELY(rr->dt))
        tm_copy_in(rr, data, NULL, n);
    else if (n)
        memcpy(rr->buf, data, n);
    tm_deliver_done(rr, bytes, src, tag);
}

void tm_deliver_done(struct tm_request *rr, size_t bytes, int src, int tag)
{
    size_t n = bytes <= rr->cap ? bytes : rr->cap;
    int err = bytes > rr->cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
    struct tm_rank *owner = rr->owner;
    /* our own receive (a fast box drained in our wait); under THREAD_MULTIPLE another thread
     * of the rank may be the one waiting for it */
    if (owner == tm_cur && !owner->mt) {
        tm_req_set_done_own(rr, src, tag, n, err);
        return;
    }
    tm_req_set_done(rr, src, tag, n, err);
    tm_wake(&owner->waker);
}
