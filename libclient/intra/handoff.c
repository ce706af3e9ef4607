/* handoff.c — messages the sender packs and the receiver lays out (handoff.h). */
#include "handoff.h"

#include <errno.h>

#include "envelope_pool.h"
#include "job.h"
#include "match.h"
#include "request.h"
#include "type.h"
#include "type_copy.h"
#include "wait.h"

int tm_handoff_wanted(const struct tm_rank *me, const struct tm_request *rr, size_t bytes)
{
    return tm_type_sparse(rr->dt) && bytes <= me->job->eager_limit && rr->owner != me &&
           !rr->owner->helper;
}

int tm_handoff_send(struct tm_rank *me, struct tm_request *rr, int ctx, int src, int tag,
                    const void *buf, const struct tm_type *st, size_t bytes)
{
    struct tm_envl *e = tm_envl_eager_typed(me, ctx, src, tag, buf, st, bytes);
    if (!e) return -ENOMEM;
    e->sreq = rr;
    struct tm_rank *to = rr->owner;
    struct tm_envl *head = atomic_load_explicit(&to->handoff.head, memory_order_relaxed);
    do {
        e->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&to->handoff.head, &head, e,
                                                    memory_order_seq_cst, /* wait.h */
                                                    memory_order_relaxed));
    tm_wake(&to->waker);
    return 0;
}

void tm_handoff_take(struct tm_rank *me)
{
    struct tm_envl *e = atomic_exchange_explicit(&me->handoff.head, NULL, memory_order_acquire);
    while (e) {
        struct tm_envl *next = e->next;
        struct tm_request *rr = e->sreq;
        /* unpacks into rr's layout, then completes rr (truncation included) */
        tm_deliver(rr, e->data, e->bytes, e->src, e->tag);
        tm_envl_release(me, e);
        e = next;
    }
}

void tm_handoff_drop(struct tm_rank *r)
{
    struct tm_envl *e = atomic_exchange_explicit(&r->handoff.head, NULL, memory_order_acquire);
    while (e) {
        struct tm_envl *next = e->next;
        tm_envl_release(r, e);
        e = next;
    }
}
