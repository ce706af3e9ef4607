/* inter_nb.c — the schedules of non-blocking collectives on inter-communicators (inter_nb.h):
 * starting them, taking their steps, finishing them.
 *
 * Each rank keeps its started schedules in one list, in start order, under a busy flag of its
 * own (under MPI_THREAD_MULTIPLE several threads of the rank may wait or test at once; a thread
 * that finds it taken leaves the steps to the holder).  A flag, not a mutex: a carried rank
 * that parks inside a step resumes on another carrier thread, which must be able to release
 * it.  The list is registered as the
 * rank's progress (wait.h): ready looks at whether some schedule's current step is complete;
 * run takes every step it can, walking the list until nothing moves (a schedule that issued
 * its local collective may let a later one issue its own). */
#include "inter_nb.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "comm.h"
#include "job.h"
#include "request.h"
#include "wait.h"

/* Tags of the non-blocking operations' messages on the hidden inter-communicator: above the
 * blocking forms' (coll_inter.c), one per operation modulo the span (far more than can be
 * outstanding at once). */
#define TM_IS_TAG0 64
#define TM_IS_TAG_SPAN (1 << 24)
/* A persistent collective's starts (MPI 4.0 §6.13: matched by their *_init, whatever order
 * members start them in) take a tag of their request's above those (its number modulo the
 * span, comm.h npinit), and count among neither the non-blocking tags nor the reservations of
 * local collectives: theirs go out at once under round keys of their own on the local
 * communicator (tm_isched_lturn, lbegin). */
#define TM_IS_PTAG0 (TM_IS_TAG0 + TM_IS_TAG_SPAN)
#define TM_IS_PTAG_SPAN (1 << 20)

struct tm_isched {
    struct tm_isched *next;   /* the rank's list */
    struct tm_request *req;   /* the program's request */
    struct tm_commref *cr;    /* the inter-communicator's handle (its counters) */
    struct tm_is_where where; /* what the steps need */
    tm_is_step_fn step;
    tm_is_fin_fn fin;
    void *op;
    int stepno;
    int err;         /* first failure, an MPI class */
    int lwait;       /* waiting for its turn to issue a local collective */
    uint64_t lfirst; /* its first reserved local collective */
    int lk;          /* local collectives issued so far */
    int nl;          /* local collectives in all */
    uint64_t pround; /* a persistent start: its round key (comm.h), 0: non-blocking */
    int nq, cap;     /* operations of the current step */
    MPI_Request *q;
};

struct tm_iprog {
    _Atomic int busy; /* the list and the schedules' steps are being taken */
    struct tm_isched *head, **tail;
};

static int try_take(struct tm_iprog *p)
{
    return atomic_exchange_explicit(&p->busy, 1, memory_order_acquire) == 0;
}

static void take(struct tm_iprog *p)
{
    while (!try_take(p))
        sched_yield(); /* another thread of the rank is taking steps: a short while */
}

static void give(struct tm_iprog *p)
{
    atomic_store_explicit(&p->busy, 0, memory_order_release);
}

const struct tm_is_where *tm_isched_where(const struct tm_isched *s)
{
    return &s->where;
}

void *tm_isched_op(const struct tm_isched *s)
{
    return s->op;
}

int *tm_isched_stepno(struct tm_isched *s)
{
    return &s->stepno;
}

void tm_isched_fail(struct tm_isched *s, int e)
{
    if (e && !s->err) s->err = e;
}

void tm_isched_add(struct tm_isched *s, int e, MPI_Request q)
{
    if (e) {
        tm_isched_fail(s, e);
        return;
    }
    if (s->nq == s->cap) {
        int cap = s->cap ? 2 * s->cap : 4;
        MPI_Request *nq = realloc(s->q, sizeof *nq * (size_t)cap);
        if (!nq) {
            /* Cannot track it: wait for it here rather than lose it. */
            tm_isched_fail(s, PMPI_Wait(&q, MPI_STATUS_IGNORE));
            tm_isched_fail(s, MPI_ERR_NO_MEM);
            return;
        }
        s->q = nq;
        s->cap = cap;
    }
    s->q[s->nq++] = q;
}

int tm_isched_lturn(const struct tm_isched *s)
{
    return s->pround || s->cr->inb_lissued == s->lfirst + (uint64_t)s->lk;
}

/* The local communicator's handle of the rank, for a persistent start's round keys. */
static struct tm_commref *local_ref(const struct tm_isched *s)
{
    return s->pround ? tm_comm_get(&s->where.me->comms, s->where.L) : NULL;
}

void tm_isched_lbegin(struct tm_isched *s)
{
    struct tm_commref *l = local_ref(s);
    if (l)
        l->pround =
            tm_pround_key(tm_pround_pid(s->pround),
                          (uint64_t)tm_pround_start(s->pround) * (uint64_t)s->nl + (uint64_t)s->lk);
}

void tm_isched_lnext(struct tm_isched *s)
{
    struct tm_commref *l = local_ref(s);
    if (l) l->pround = 0;
    s->lk++;
    if (!s->pround) s->cr->inb_lissued++;
}

/* Whether every operation of s's current step is complete (wait.h: seq_cst). */
static int step_complete(const struct tm_isched *s)
{
    for (int i = 0; i < s->nq; i++)
        if (!tm_req_complete(s->q[i])) return 0;
    return 1;
}

/* Collects the complete step's errors and gives its requests back. */
static void step_reap(struct tm_rank *me, struct tm_isched *s)
{
    for (int i = 0; i < s->nq; i++) {
        tm_isched_fail(s, s->q[i]->st_error);
        tm_req_free(me, s->q[i]);
    }
    s->nq = 0;
}

/* Completes the program's request and frees s. */
static void finish(struct tm_isched *s)
{
    int cls = s->fin(s, s->err);
    struct tm_request *q = s->req;
    struct tm_waker *wk = &q->owner->waker; /* q may be freed once done is set */
    free(s->q);
    free(s);
    tm_req_set_done(q, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, cls);
    tm_wake(wk);
}

/* Takes s's steps while they are complete: 1 if every step is (finish s), 0 if it waits. */
static int advance(struct tm_rank *me, struct tm_isched *s, int *moved)
{
    for (;;) {
        if (!step_complete(s)) return 0;
        step_reap(me, s);
        enum tm_is_state st = s->step(s);
        s->lwait = st == TM_IS_WAIT_L;
        if (s->lwait) return 0;
        *moved = 1;
        if (st == TM_IS_DONE && s->nq == 0) return 1;
    }
}

/* With p taken. */
static void run_locked(struct tm_rank *me, struct tm_iprog *p)
{
    int moved = 1;
    while (moved && p->head) {
        moved = 0;
        struct tm_isched **pp = &p->head;
        while (*pp) {
            struct tm_isched *s = *pp;
            if (advance(me, s, &moved)) {
                *pp = s->next;
                if (p->tail == &s->next) p->tail = pp;
                finish(s);
            } else {
                pp = &s->next;
            }
        }
    }
    if (!p->head) atomic_store_explicit(&me->prog.pending, 0, memory_order_release);
}

static void prog_run(struct tm_rank *me)
{
    struct tm_iprog *p = atomic_load_explicit(&me->prog.state, memory_order_acquire);
    if (!try_take(p)) return; /* another thread of the rank runs them */
    run_locked(me, p);
    give(p);
}

/* Pure: may run on a carrier thread while the rank is parked. */
static int prog_ready(struct tm_rank *me)
{
    struct tm_iprog *p = atomic_load_explicit(&me->prog.state, memory_order_acquire);
    if (!try_take(p)) return 0; /* its holder takes the steps */
    int ready = 0;
    for (struct tm_isched *s = p->head; s && !ready; s = s->next)
        ready = s->lwait ? tm_isched_lturn(s) : step_complete(s);
    give(p);
    return ready;
}

/* The job ends: what is still outstanding is abandoned (its requests go with the rank's
 * pool). */
static void prog_fini(struct tm_rank *me)
{
    struct tm_iprog *p = atomic_load_explicit(&me->prog.state, memory_order_acquire);
    for (struct tm_isched *s = p->head, *n; s; s = n) {
        n = s->next;
        s->fin(s, TM_IS_ABANDON);
        free(s->q);
        free(s);
    }
    free(p);
    atomic_store_explicit(&me->prog.state, NULL, memory_order_relaxed);
}

/* The rank's list, registered on first use. */
static struct tm_iprog *prog_get(struct tm_rank *me)
{
    struct tm_iprog *p = atomic_load_explicit(&me->prog.state, memory_order_acquire);
    if (p) return p;
    if (!(p = calloc(1, sizeof *p))) return NULL;
    p->tail = &p->head;
    struct tm_iprog *expected = NULL;
    me->prog.ready = prog_ready;
    me->prog.run = prog_run;
    me->prog.fini = prog_fini;
    if (!atomic_compare_exchange_strong_explicit(&me->prog.state, (void **)&expected, p,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        free(p); /* another thread of the rank registered first */
        return expected;
    }
    return p;
}

int tm_isched_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, int nl, void *op,
                    tm_is_step_fn step, tm_is_fin_fn fin, MPI_Request *request)
{
    struct tm_iprog *p = prog_get(me);
    struct tm_isched *s = p ? calloc(1, sizeof *s) : NULL;
    struct tm_request *q = s ? tm_req_alloc(me, TM_REQ_COLL) : NULL;
    if (!q) {
        free(s);
        struct tm_isched gone = {.op = op};
        fin(&gone, MPI_ERR_NO_MEM);
        return MPI_ERR_NO_MEM;
    }
    q->comm = comm;
    s->req = q;
    s->cr = cr;
    s->op = op;
    s->step = step;
    s->fin = fin;
    s->where = (struct tm_is_where){.I = cr->coll_inter,
                                    .L = cr->coll_local,
                                    .r = cr->rank,
                                    .n = cr->c->size,
                                    .rn = cr->c->remote_size,
                                    .me = me};
    s->nl = nl;
    s->pround = cr->pround;
    take(p);
    if (s->pround) {
        s->where.tag = TM_IS_PTAG0 + (int)(tm_pround_pid(s->pround) % TM_IS_PTAG_SPAN);
    } else {
        s->where.tag = TM_IS_TAG0 + (int)(cr->inb_started++ % TM_IS_TAG_SPAN);
        s->lfirst = cr->inb_lres;
        cr->inb_lres += (uint64_t)nl;
    }
    *p->tail = s;
    p->tail = &s->next;
    atomic_store_explicit(&me->prog.pending, 1, memory_order_release);
    /* The first step (and any that needs nothing from others) goes now. */
    run_locked(me, p);
    give(p);
    *request = q;
    return MPI_SUCCESS;
}
