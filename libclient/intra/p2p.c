/* p2p.c — intra-node send and receive paths (p2p.h). */
#include "p2p.h"

#include <errno.h>
#include <string.h>

#include "asym_fence.h"
#include "coop.h"
#include "envelope_pool.h"
#include "fbox.h"
#include "handoff.h"
#include "job.h"
#include "match.h"
#include "t_event.h"
#include "wait.h"

int tm_req_done_cond(void *arg)
{
    struct tm_request *r = arg;
    return atomic_load_explicit(&r->done, memory_order_seq_cst); /* wait.h */
}

int tm_intra_send(struct tm_rank *me, int w, int ctx, int src, int dest, int tag, const void *buf,
                  size_t bytes, enum tm_send_mode mode, struct tm_request *sreq)
{
    struct tm_rank *r = tm_job_rank(me->job, w);
    struct tm_mbox *mb = &r->mbox;

    /* Non-contiguous data (sreq->dt) goes into a fast box packed, and the receiver lays it
     * out: each side touches only its own lines (handoff.h). */
    int small =
        bytes <= TM_FB_MAX_BYTES && bytes <= me->job->eager_limit && mode == TM_SEND_STANDARD;
    struct tm_fb_slot *fs = tm_fb_out(me, r, small);
    if (fs && small &&
        (TM_LIKELY(!sreq->dt) ? tm_fb_push(fs, ctx, src, tag, buf, bytes)
                              : tm_fb_push_typed(fs, ctx, src, tag, buf, sreq->dt, bytes))) {
        tmpi_asym_light(); /* the cell's store before the load of sleeping (asym_fence.h) */
        tm_wake(&r->waker);
        tm_req_set_done_own(sreq, dest, tag, bytes, MPI_SUCCESS);
        return 0;
    }

    pthread_mutex_lock(&mb->lock);
    /* What this rank put in its ring to r comes before this message (fbox.h). */
    if (fs && tm_fb_drain(me, r, fs->box, NULL) < 0) {
        pthread_mutex_unlock(&mb->lock);
        return -ENOMEM;
    }
    struct tm_request *rr = tm_match_posted(mb, ctx, src, tag);
    if (rr) {
        pthread_mutex_unlock(&mb->lock);
        /* A sparse receive layout is written by its own rank (handoff.h); a large or
         * strided copy is shared with the receiver's waits (coop.h). */
        if (TM_UNLIKELY(rr->dt) && tm_handoff_wanted(me, rr, bytes) &&
            tm_handoff_send(me, rr, ctx, src, tag, buf, sreq->dt, bytes) == 0) {
            tm_req_set_done(sreq, dest, tag, bytes, MPI_SUCCESS);
            return 0;
        }
        if (TM_UNLIKELY(sreq->dt || rr->dt || bytes >= me->job->coop_min)) {
            tm_coop_copy_in(me, rr->owner, rr, buf, sreq->dt, bytes <= rr->cap ? bytes : rr->cap);
            tm_deliver_done(rr, bytes, src, tag);
        } else {
            tm_deliver(rr, buf, bytes, src, tag);
        }
        tm_req_set_done(sreq, dest, tag, bytes, MPI_SUCCESS);
        return 0;
    }

    if (mode == TM_SEND_BUFFERED || (mode == TM_SEND_STANDARD && bytes <= me->job->eager_limit)) {
        /* Eager.  Copy outside the receiver's lock, then look again: a receive may have been
         * posted meanwhile.  Order is safe: this rank issues no other send in between. */
        pthread_mutex_unlock(&mb->lock);
        struct tm_envl *e = tm_envl_eager_typed(me, ctx, src, tag, buf, sreq->dt, bytes);
        if (!e) return -ENOMEM;
        pthread_mutex_lock(&mb->lock);
        rr = tm_match_posted(mb, ctx, src, tag);
        if (rr) {
            pthread_mutex_unlock(&mb->lock);
            tm_deliver(rr, e->data, bytes, src, tag);
            tm_envl_release(me, e);
        } else {
            if (sreq->pooled) { /* a nonblocking send: MPI_Cancel may take it back */
                e->serial = sreq->env_serial =
                    atomic_fetch_add_explicit(&me->send_serial, 1, memory_order_relaxed) + 1;
                sreq->env_dst1 = w + 1;
            }
            /* a buffered send's room in the attached buffer goes with the envelope */
            e->bsend = sreq->bsend;
            e->bsb = sreq->bsb;
            sreq->bsend = 0;
            tm_add_unexp(mb, e);
            pthread_mutex_unlock(&mb->lock);
            tm_wake(&r->waker); /* a Probe may be waiting */
        }
        tm_req_set_done(sreq, dest, tag, bytes, MPI_SUCCESS);
        return 0;
    }

    /* Rendezvous: the receiver copies from buf and completes sreq. */
    struct tm_envl *e = tm_envl_alloc(me, 0);
    if (!e) {
        pthread_mutex_unlock(&mb->lock);
        return -ENOMEM;
    }
    e->kind = TM_ENVL_RNDV;
    e->ctx = ctx;
    e->src = src;
    e->tag = tag;
    e->bytes = bytes;
    e->sbuf = buf;
    e->stype = sreq->dt;
    e->sreq = sreq;
    sreq->st_source = dest;
    sreq->st_tag = tag;
    if (sreq->pooled) {
        e->serial = sreq->env_serial =
            atomic_fetch_add_explicit(&me->send_serial, 1, memory_order_relaxed) + 1;
        sreq->env_dst1 = w + 1;
    }
    tm_add_unexp(mb, e);
    pthread_mutex_unlock(&mb->lock);
    tm_wake(&r->waker);
    return 1;
}

/* Takes a matched unexpected message into rreq (owned by the caller). */
void tm_recv_envl(struct tm_rank *me, struct tm_request *rreq, struct tm_envl *e)
{
    if (e->kind >= TM_ENVL_NET) { /* the network queued it: it answers (job.h net_consume) */
        me->job->net_consume(me, rreq, e);
        return;
    }
    const void *data = e->kind == TM_ENVL_EAGER ? (const void *)e->data : e->sbuf;
    size_t n = e->bytes <= rreq->cap ? e->bytes : rreq->cap;
    const struct tm_type *st = e->kind == TM_ENVL_RNDV ? e->stype : NULL;
    if (TM_UNLIKELY(st || rreq->dt || n >= me->job->coop_min)) {
        /* One copy, layout to layout, shared with the sender's waits (coop.h): a rendezvous
         * sender waits for this very copy; an eager one's envelope stays ours until released
         * below, whatever its sender waits for meanwhile. */
        struct tm_rank *peer = e->kind == TM_ENVL_RNDV ? e->sreq->owner : e->home;
        tm_coop_copy_in(me, peer, rreq, data, st, n);
    } else if (n) {
        memcpy(rreq->buf, data, n);
    }
    if (e->kind == TM_ENVL_RNDV) {
        struct tm_request *s = e->sreq;
        struct tm_waker *w = &s->owner->waker;
        s->st_bytes = e->bytes;
        atomic_store_explicit(&s->done, 1, memory_order_seq_cst);
        tm_wake(w);
    }
    tm_req_set_done(rreq, e->src, e->tag, n, e->bytes > rreq->cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    tm_envl_release(me, e);
}

/* Caller holds mb's lock: takes the earliest unexpected message rreq matches, drops the lock
 * and completes rreq (1); else 0, the lock still held. */
static int take_unexp(struct tm_rank *me, struct tm_mbox *mb, struct tm_request *rreq)
{
    struct tm_envl *e = tm_match_unexp(mb, rreq->ctx, rreq->src, rreq->tag, 1);
    if (!e) return 0;
    pthread_mutex_unlock(&mb->lock);
    struct tm_t_ev_unexpected ev = {e->src, e->tag, (int64_t)e->bytes};
    tm_recv_envl(me, rreq, e);
    tm_t_event(me, TM_T_EV_UNEXPECTED, &ev);
    return 1;
}

/* Sets rreq's key and buffer; 1 if that already completed it (MPI_PROC_NULL). */
static int recv_start(struct tm_request *rreq, int ctx, void *buf, size_t cap, int src, int tag)
{
    if (src == MPI_PROC_NULL) {
        tm_req_set_done(rreq, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_SUCCESS);
        return 1;
    }
    rreq->ctx = ctx;
    rreq->src = src;
    rreq->tag = tag;
    rreq->buf = buf;
    rreq->cap = cap;
    return 0;
}

void tm_recv_ctx(struct tm_rank *me, int ctx, void *buf, size_t cap, int src, int tag,
                 struct tm_request *rreq)
{
    tm_recv_box(me, me, ctx, buf, cap, src, tag, rreq);
}

void tm_recv_box(struct tm_rank *me, struct tm_rank *box, int ctx, void *buf, size_t cap, int src,
                 int tag, struct tm_request *rreq)
{
    if (recv_start(rreq, ctx, buf, cap, src, tag)) return;
    if (TM_UNLIKELY(me->job->wait_net)) me->job->wait_net->check(me); /* wait.h */
    struct tm_mbox *mb = &box->mbox;
    pthread_mutex_lock(&mb->lock);
    if (take_unexp(me, mb, rreq)) return;
    /* Then the fast boxes (fbox.h).  A helper receives from other nodes only, and its
     * envelopes must not outlive it: it leaves the rings to box's own thread. */
    if (!me->helper && tm_fb_drain_all(me, box, rreq) > 0) {
        pthread_mutex_unlock(&mb->lock);
        return;
    }
    tm_post_recv(mb, rreq);
    if (TM_UNLIKELY(atomic_load_explicit(&me->job->xdead, memory_order_seq_cst)))
        me->job->xdead_check(me, mb, rreq);
    pthread_mutex_unlock(&mb->lock);
}

struct arrival_wait {
    struct tm_mbox *mb;
    uint32_t seen;
    struct tm_request *r; /* or NULL */
};

static int arrival_cond(void *arg)
{
    struct arrival_wait *a = arg;
    return (a->r && atomic_load_explicit(&a->r->done, memory_order_seq_cst)) ||
           atomic_load_explicit(&a->mb->arrivals, memory_order_seq_cst) != a->seen;
}

void tm_intra_recv_wait_small(struct tm_rank *me, int ctx, void *buf, size_t cap, int src, int tag,
                              struct tm_request *rreq)
{
    if (recv_start(rreq, ctx, buf, cap, src, tag)) return;
    struct tm_mbox *mb = &me->mbox;
    struct arrival_wait a = {mb, 0, rreq};
    /* Nothing queued and no cell ready (the usual case when the message is still to come):
     * straight to the wait.  arrivals first: a message queued after that changes it. */
    a.seen = atomic_load_explicit(&mb->arrivals, memory_order_seq_cst);
    int look = atomic_load_explicit(&mb->nunexp, memory_order_relaxed) || tm_fb_ready(&me->fb_in);
    for (;; look = 1) {
        if (look) {
            pthread_mutex_lock(&mb->lock);
            if (take_unexp(me, mb, rreq)) return;
            int got = tm_fb_drain_all(me, me, rreq);
            a.seen = atomic_load_explicit(&mb->arrivals, memory_order_relaxed);
            pthread_mutex_unlock(&mb->lock);
            if (got > 0) return;
        }
        me->fb_cand = rreq; /* our waits' drains fill it (tm_fb_poll) */
        me->fb_cand_seen = a.seen;
        tm_wait(me, arrival_cond, &a);
        me->fb_cand = NULL;
        if (atomic_load_explicit(&rreq->done, memory_order_acquire)) return;
    }
}

int tm_intra_mprobe(struct tm_rank *me, int ctx, int src, int tag, int block, MPI_Status *status,
                    struct tm_envl **ret)
{
    if (src == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE) {
            tm_status_blank(status); /* one status: its MPI_ERROR stays the program's */
            status->MPI_SOURCE = MPI_PROC_NULL;
        }
        return 1;
    }
    struct tm_mbox *mb = &me->mbox;
    if (TM_UNLIKELY(me->job->wait_net)) me->job->wait_net->check(me); /* wait.h */
    for (;;) {
        pthread_mutex_lock(&mb->lock);
        (void)tm_fb_drain_all(me, me, NULL); /* -ENOMEM: those cells are not there yet */
        /* Mprobe takes the message out of matching: no other receive can have it. */
        struct tm_envl *e = tm_match_unexp(mb, ctx, src, tag, ret != NULL);
        if (e) {
            if (status != MPI_STATUS_IGNORE) {
                status->MPI_SOURCE = e->src;
                status->MPI_TAG = e->tag;
                status->tm_cancelled = 0;
                status->tm_bytes = (long long)e->bytes;
            }
            if (ret) *ret = e;
            pthread_mutex_unlock(&mb->lock);
            return 1;
        }
        struct arrival_wait a = {mb, atomic_load_explicit(&mb->arrivals, memory_order_relaxed),
                                 NULL};
        pthread_mutex_unlock(&mb->lock);
        /* nothing queued, and the other job of the communicator ended: nothing can come (the
         * job's end counts as an arrival, net/xjob.c on_gone, so a waiting probe sees it) */
        if (TM_UNLIKELY(atomic_load_explicit(&me->job->xdead, memory_order_seq_cst)) &&
            me->job->xdead_ctx(me->job, ctx))
            return -EPIPE;
        if (!block) return 0;
        tm_wait(me, arrival_cond, &a);
    }
}

int tm_cancel_recv(struct tm_rank *me, struct tm_request *r)
{
    pthread_mutex_lock(&me->mbox.lock);
    int was = tm_unpost_recv(r);
    pthread_mutex_unlock(&me->mbox.lock);
    if (was) {
        r->st_cancelled = 1;
        tm_req_set_done(r, r->src, r->tag, 0, MPI_SUCCESS);
    }
    return was;
}

int tm_cancel_send(struct tm_rank *me, struct tm_request *r)
{
    if (!r->env_dst1) return 0;
    struct tm_rank *dst = tm_job_rank(me->job, r->env_dst1 - 1);
    struct tm_mbox *mb = &dst->mbox;
    struct tm_envl *found = NULL;
    pthread_mutex_lock(&mb->lock);
    /* The envelope is ours while it is queued; once taken it may be reused (another serial). */
    for (struct tm_dl *d = mb->unexp_order.next; d != &mb->unexp_order; d = d->next) {
        struct tm_envl *e = tm_dl_entry(d, struct tm_envl, order);
        if (e->home == me && e->serial == r->env_serial &&
            (e->kind == TM_ENVL_EAGER || e->kind == TM_ENVL_RNDV)) {
            found = e;
            tm_unexp_remove(mb, e);
            break;
        }
    }
    pthread_mutex_unlock(&mb->lock);
    r->env_dst1 = 0;
    if (!found) return 0;
    int rndv = found->kind == TM_ENVL_RNDV;
    tm_envl_release(me, found);
    r->st_cancelled = 1;
    if (rndv) tm_req_set_done(r, r->st_source, r->st_tag, 0, MPI_SUCCESS);
    return 1;
}
