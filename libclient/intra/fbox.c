/* fbox.c — fast boxes (fbox.h). */
#include "fbox.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "envelope_pool.h"
#include "job.h"
#include "match.h"
#include "type.h"
#include "type_copy.h"

static struct tm_fbox *box_new(int from)
{
    struct tm_fbox *f = aligned_alloc(TM_CACHELINE, sizeof *f);
    if (!f) return NULL;
    memset(f, 0, sizeof *f);
    atomic_init(&f->q, 0);
    f->from = from;
    for (uint32_t i = 0; i < TM_FB_CELLS; i++)
        atomic_init(&f->cell[i].seq, 0);
    return f;
}

/* Registers a new ring from me into r; NULL when r has all it takes or memory is short (the
 * pair keeps using the mailbox). */
static struct tm_fbox *box_attach(struct tm_rank *me, struct tm_rank *r)
{
    struct tm_fb_in *in = &r->fb_in;
    if (atomic_load_explicit(&in->n, memory_order_relaxed) >= TM_FB_MAX_IN) return NULL;
    struct tm_fbox *f = box_new(me->rank);
    if (!f) return NULL;
    pthread_mutex_lock(&r->mbox.lock);
    int n = atomic_load_explicit(&in->n, memory_order_relaxed);
    if (n < TM_FB_MAX_IN) {
        in->box[n] = f;
        atomic_store_explicit(&in->n, n + 1, memory_order_release);
    }
    pthread_mutex_unlock(&r->mbox.lock);
    if (n >= TM_FB_MAX_IN) {
        free(f);
        return NULL;
    }
    return f;
}

struct tm_fb_slot *tm_fb_out(struct tm_rank *me, struct tm_rank *r, int small)
{
    struct tm_fb_out *o = me->fb_out;
    if (TM_UNLIKELY(!o)) {
        if (!small || me->helper || r == me || me->mt) return NULL; /* job.h: mt */
        if (!(o = me->fb_out = calloc(1, sizeof *o))) return NULL;
    }
    struct tm_fb_slot *s = &o->slot[r->rank & (TM_FB_OUT - 1)];
    if (TM_LIKELY(s->dest1 == r->rank + 1)) {
        if (TM_LIKELY(s->box != NULL)) return s;
        if (!small || s->sent == UINT32_MAX || ++s->sent < TM_FB_AFTER) return NULL;
        if (!(s->box = box_attach(me, r))) s->sent = UINT32_MAX;
        s->light = me->job->asym_fence;
        return s->box ? s : NULL;
    }
    /* A slot that holds a ring keeps it: the ring lives as long as the job, and its receiver
     * drains it whenever it waits. */
    if (s->box || !small || r == me) return NULL; /* (a helper never gets a table) */
    s->dest1 = r->rank + 1;
    s->sent = 1;
    return NULL;
}

/* Takes the line of cell p into this core's cache for writing, without a store: the stores
 * that fill it later then find it owned.  Without it each cell's first store waited for the
 * line to be taken from the receiver's cache (it read the cell one lap before), the stores of
 * a few messages filled the store buffer, and an 8 B isend stalled on its next store: 75 ns a
 * message, 29 with it (issue 37, ANALYSIS.md "Message rate: the cell's line"). */
static inline void own_ahead(struct tm_fbox *f, uint32_t p)
{
#if defined(__x86_64__) || defined(__i386__)
    /* prefetchw: AMD64 and Intel since Broadwell; older Intel decodes it as a no-op.  (GCC's
     * write prefetch for a generic x86-64 target is a read prefetch: the line comes shared.) */
    __asm__ volatile("prefetchw %0" : : "m"(f->cell[p & (TM_FB_CELLS - 1)]));
#else
    __builtin_prefetch(&f->cell[p & (TM_FB_CELLS - 1)], 1, 3);
#endif
}

static uint32_t cells_for(size_t bytes)
{
    return bytes <= TM_FB_PAYLOAD
               ? 1
               : 1 + (uint32_t)((bytes - TM_FB_PAYLOAD + TM_FB_MORE - 1) / TM_FB_MORE);
}

int tm_fb_push(struct tm_fb_slot *s, int ctx, int src, int tag, const void *buf, size_t bytes)
{
    uint32_t p = s->head, k = cells_for(bytes);
    if (p + k - s->qseen > TM_FB_CELLS) {
        /* acquire: the consumer's reads of the cells happened before it moved q past them */
        s->qseen = atomic_load_explicit(&s->box->q, memory_order_acquire);
        if (p + k - s->qseen > TM_FB_CELLS) return 0;
    }
    struct tm_fbox *f = s->box;
    /* The line of each cell TM_FB_AHEAD past this message's, where the receiver is done with
     * it (a hint only: a cell still to be read would be taken from the receiver's cache).
     * Messages of up to TM_FB_AHEAD_MAX cells only: 1 KiB (18 cells) with it ran osu_bw at
     * 296 MB/s against 4,100 without (RESULTS.md, branch s46-rate), 64-512 B gained. */
    for (uint32_t i = 0; k <= TM_FB_AHEAD_MAX && i < k; i++) {
        uint32_t a = p + TM_FB_AHEAD + i;
        if (a + 1 - s->qseen <= TM_FB_CELLS) own_ahead(f, a);
    }
    const unsigned char *b = buf;
    size_t off = bytes < TM_FB_PAYLOAD ? bytes : TM_FB_PAYLOAD;
    for (uint32_t i = 1; i < k; i++, off += TM_FB_MORE) {
        struct tm_fb_cell *m = &f->cell[(p + i) & (TM_FB_CELLS - 1)];
        atomic_store_explicit(&m->seq, p + i, memory_order_relaxed); /* not a first cell */
        /* a constant size is a few inlined moves; a call to memcpy per 60 bytes cost half
         * of a 512 B message's instructions */
        if (bytes - off >= TM_FB_MORE)
            memcpy(m->more, b + off, TM_FB_MORE);
        else
            memcpy(m->more, b + off, bytes - off);
    }
    struct tm_fb_cell *c = &f->cell[p & (TM_FB_CELLS - 1)];
    c->bytes = (uint32_t)bytes;
    c->ctx = ctx;
    c->src = src;
    c->tag = tag;
    if (bytes > TM_FB_PAYLOAD) /* a constant size again: inlined */
        memcpy(c->data, b, TM_FB_PAYLOAD);
    else if (bytes)
        memcpy(c->data, b, bytes);
    /* then tm_wake (wait.h): a release store where a receiver that goes to sleep fences for
     * both sides (asym_fence.h); a full fence per message was 95 % of this function's time */
    if (TM_LIKELY(s->light)) /* (a memory order known only at run time compiles as seq_cst) */
        atomic_store_explicit(&c->seq, p + 1, memory_order_release);
    else
        atomic_store_explicit(&c->seq, p + 1, memory_order_seq_cst);
    s->head = p + k;
    return 1;
}

int tm_fb_push_typed(struct tm_fb_slot *s, int ctx, int src, int tag, const void *buf,
                     const struct tm_type *dt, size_t bytes)
{
    /* Packed here, from the sender's own memory, and laid out by the receiver's drain
     * (deliver_typed): each side touches only its own lines (handoff.h says why). */
    unsigned char packed[TM_FB_MAX_BYTES];
    if (bytes) tm_type_pack(packed, buf, bytes / dt->psize, dt, 0, bytes);
    return tm_fb_push(s, ctx, src, tag, packed, bytes);
}

/* Copies the first n bytes of the message whose first cell c is at position q into dst: the
 * cells go straight to where the message lands (a receive buffer or an envelope). */
static void gather(const struct tm_fbox *f, uint32_t q, const struct tm_fb_cell *c,
                   unsigned char *dst, size_t n)
{
    size_t off = n < TM_FB_PAYLOAD ? n : TM_FB_PAYLOAD;
    if (off == TM_FB_PAYLOAD)
        memcpy(dst, c->data, TM_FB_PAYLOAD);
    else
        memcpy(dst, c->data, off);
    for (uint32_t i = 1; off < n; i++, off += TM_FB_MORE) {
        const struct tm_fb_cell *m = &f->cell[(q + i) & (TM_FB_CELLS - 1)];
        if (n - off >= TM_FB_MORE)
            memcpy(dst + off, m->more, TM_FB_MORE);
        else
            memcpy(dst + off, m->more, n - off);
    }
}

/* A typed receive unpacks from one contiguous run.  Not inlined: the run (up to 3.8 KiB) is
 * on the stack of this rare path only, not of every drain on a rank's stack. */
static __attribute__((noinline)) void deliver_typed(const struct tm_fbox *f, uint32_t q,
                                                    const struct tm_fb_cell *c,
                                                    struct tm_request *rr)
{
    unsigned char whole[TM_FB_MAX_BYTES]; /* the producer keeps bytes <= TM_FB_MAX_BYTES */
    gather(f, q, c, whole, c->bytes);
    tm_deliver(rr, whole, c->bytes, c->src, c->tag);
}

/* Delivers the message at q (first cell c) into the matched receive rr. */
static void deliver_cells(const struct tm_fbox *f, uint32_t q, const struct tm_fb_cell *c,
                          struct tm_request *rr)
{
    size_t bytes = c->bytes;
    if (bytes <= TM_FB_PAYLOAD) {
        tm_deliver(rr, c->data, bytes, c->src, c->tag);
    } else if (TM_UNLIKELY(rr->dt)) {
        deliver_typed(f, q, c, rr);
    } else {
        gather(f, q, c, rr->buf, bytes <= rr->cap ? bytes : rr->cap);
        tm_deliver_done(rr, bytes, c->src, c->tag);
    }
}

/* The message whose first cell is at q into box's queues (or cand).  1: cand completed, 0:
 * placed, -ENOMEM. */
static int take_cell(struct tm_rank *me, struct tm_rank *box, const struct tm_fbox *f, uint32_t q,
                     struct tm_request *cand)
{
    const struct tm_fb_cell *c = &f->cell[q & (TM_FB_CELLS - 1)];
    struct tm_mbox *mb = &box->mbox;
    struct tm_request *rr = tm_match_posted(mb, c->ctx, c->src, c->tag);
    if (rr) {
        deliver_cells(f, q, c, rr);
        return 0;
    }
    if (cand && !atomic_load_explicit(&cand->done, memory_order_relaxed) &&
        tm_req_matches(cand, c->ctx, c->src, c->tag)) {
        deliver_cells(f, q, c, cand);
        return 1;
    }
    struct tm_envl *e = tm_envl_alloc(me, c->bytes);
    if (!e) return -ENOMEM;
    e->kind = TM_ENVL_EAGER;
    e->ctx = c->ctx;
    e->src = c->src;
    e->tag = c->tag;
    e->bytes = c->bytes;
    gather(f, q, c, e->data, c->bytes);
    tm_add_unexp(mb, e);
    if (me != box) tm_wake(&box->waker); /* a Probe may be waiting */
    return 0;
}

int tm_fb_drain(struct tm_rank *me, struct tm_rank *box, struct tm_fbox *f, struct tm_request *cand)
{
    uint32_t q = atomic_load_explicit(&f->q, memory_order_relaxed);
    int got = 0, err = 0;
    for (;;) {
        struct tm_fb_cell *c = &f->cell[q & (TM_FB_CELLS - 1)];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) != q + 1) break;
        int r = take_cell(me, box, f, q, cand);
        if (r < 0) {
            err = r;
            break;
        }
        q += cells_for(c->bytes);
        /* The receive being started has its message: the cells after it stay in the ring for
         * the next receive, which takes its own straight from there.  Drained on, they went
         * through the unexpected queue, an envelope and a second copy each: a window of
         * isends usually arrives before its irecvs are posted (osu_bw, issue 37). */
        if (r) {
            got = 1;
            break;
        }
    }
    /* Release for the producer (the cells before q may be written again); seq_cst for a
     * thread of box that goes to sleep after this: it must read the new position (wait.h
     * handshake: the sender's next cell is at q, and the sleeper must look at that cell). */
    if (q == atomic_load_explicit(&f->q, memory_order_relaxed))
        ;
    else if (me == box) /* (a memory order chosen at run time compiles as seq_cst) */
        atomic_store_explicit(&f->q, q, memory_order_release);
    else
        atomic_store_explicit(&f->q, q, memory_order_seq_cst);
    return got ? 1 : err;
}

int tm_fb_drain_all(struct tm_rank *me, struct tm_rank *box, struct tm_request *cand)
{
    int n = atomic_load_explicit(&box->fb_in.n, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        int r = tm_fb_drain(me, box, box->fb_in.box[i], cand);
        if (r) return r; /* cand has its message (the other rings wait, tm_fb_drain) or -ENOMEM */
    }
    return 0;
}

int tm_fb_ready(const struct tm_fb_in *in)
{
    int n = atomic_load_explicit(&in->n, memory_order_acquire);
    for (int i = 0; i < n; i++) {
        const struct tm_fbox *f = in->box[i];
        uint32_t q = atomic_load_explicit(&f->q, memory_order_seq_cst);
        if (atomic_load_explicit(&f->cell[q & (TM_FB_CELLS - 1)].seq, memory_order_seq_cst) ==
            q + 1)
            return 1;
    }
    return 0;
}

void tm_fb_poll(struct tm_rank *me)
{
    if (me->helper || !tm_fb_ready(&me->fb_in)) return;
    pthread_mutex_lock(&me->mbox.lock);
    /* A waiting unposted receive may take a cell only if nothing was queued since it looked:
     * an older message that matches it may be there (a sender drained its ring). */
    struct tm_request *cand = me->fb_cand;
    if (cand && atomic_load_explicit(&me->mbox.arrivals, memory_order_relaxed) != me->fb_cand_seen)
        cand = NULL;
    /* -ENOMEM: the cells wait for the next poll */
    (void)tm_fb_drain_all(me, me, cand);
    pthread_mutex_unlock(&me->mbox.lock);
}

void tm_fb_free(struct tm_rank *r)
{
    int n = atomic_load_explicit(&r->fb_in.n, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        free(r->fb_in.box[i]);
    atomic_store_explicit(&r->fb_in.n, 0, memory_order_relaxed);
    free(r->fb_out);
    r->fb_out = NULL;
}
