/* coll_nb.c — non-blocking collectives: rounds, and who runs them (coll.h).
 *
 * Scheme.  Members number their non-blocking collectives on a communicator (MPI requires all
 * members to start collectives in the same order, so the k-th is the same operation on
 * every member).  The k-th has a round: a shared record, created by the first member to
 * arrive, holding a copy of every member's arguments and a pointer to its request.  A member
 * arriving copies its arguments in and leaves at once; its buffers stay valid until its
 * request completes (MPI's rule for non-blocking calls).  The last member to arrive finds
 * every member's arguments in place, runs every part of the algorithm (the same parts as the
 * blocking path), completes every member's request and frees the round.
 *
 * So progress needs no polling: a member that never waits (or waits on something else) does
 * not hold anyone back, because the work runs inside the last MPI_I* call, on that caller's
 * thread.  The price is that one thread moves all the data of that operation; the waiters only
 * wait (tm_wait on their request's done flag, woken by the finisher).
 *
 * Locking.  nb->lock protects the list of live rounds and each round's arrival count and
 * argument copies until the round is complete; the finisher then owns the round alone (every
 * member has arrived and none touches it again: a member only holds its own request).
 * Requests are completed like point-to-point ones: result fields, then done (seq_cst), then a
 * wake of the owner; nothing touches a request after its done is set.
 *
 * Lifetime of what members lend: derived datatypes are referenced (tm_type_hold) until the
 * round ends; user-op function pointers are copied; counts/displacements arrays are the
 * caller's, valid until its request completes. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "coll.h"
#include "job.h"
#include "request.h"
#include "wait.h"

struct tm_coll_nb {
    pthread_mutex_t lock;
    struct tm_nbround *live; /* rounds some but not all members have arrived at */
};

int tm_coll_nb_init(struct tm_coll *co)
{
    co->nb = calloc(1, sizeof *co->nb);
    if (!co->nb) return -ENOMEM;
    pthread_mutex_init(&co->nb->lock, NULL);
    return 0;
}

struct tm_nbround *tm_nbround_new(int n, uint64_t seq, const struct tm_calgo *al)
{
    struct tm_nbround *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->args = calloc((size_t)n, sizeof *r->args);
    r->req = calloc((size_t)n, sizeof *r->req);
    if (!r->args || !r->req) {
        tm_nbround_free(r);
        return NULL;
    }
    r->seq = seq;
    r->n = n;
    r->al = al;
    return r;
}

void tm_nbround_free(struct tm_nbround *r)
{
    free(r->args);
    free(r->req);
    free(r);
}

void tm_nbround_finish(struct tm_nbround *r, int cls)
{
    for (int k = 0; k < r->n; k++)
        if (r->req[k]) {
            tm_cstage_finish(&r->args[k], cls == MPI_SUCCESS); /* before the request is done */
            tm_cargs_release(&r->args[k], r->n);
        }
    for (int k = 0; k < r->n; k++) {
        struct tm_request *q = r->req[k];
        if (!q) continue;
        struct tm_waker *wk = &q->owner->waker; /* q may be freed once done is set */
        tm_req_set_done(q, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, cls);
        tm_wake(wk);
    }
    tm_nbround_free(r);
}

/* The members of r that have arrived so far (erroneous program, or a job torn down). */
void tm_nbround_abandon(struct tm_nbround *r)
{
    for (int k = 0; k < r->n; k++)
        if (r->req[k]) {
            tm_cstage_finish(&r->args[k], 0);
            tm_cargs_release(&r->args[k], 1);
        }
    tm_nbround_free(r);
}

int tm_nbround_join(struct tm_nbround **live, struct tm_rank *me, struct tm_commref *cr,
                    const struct tm_calgo *al, const struct tm_cargs *a, struct tm_request *q,
                    int need, struct tm_nbround **ret)
{
    int n = cr->c->size;
    uint64_t seq = cr->nnbc;
    struct tm_nbround **pp = live, *r;
    while ((r = *pp) && r->seq != seq)
        pp = &r->next;
    if (!r) {
        if (!(r = tm_nbround_new(n, seq, al))) {
            tm_req_set_done(q, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
            tm_req_free(me, q);
            return -ENOMEM;
        }
        *pp = r;
    }
    cr->nnbc++;
    tm_cargs_hold(a, n);
    r->args[cr->rank] = *a;
    r->req[cr->rank] = q;
    if (++r->arrived < need) return 0;
    *pp = r->next; /* nobody will look for it again */
    r->next = NULL;
    *ret = r;
    return 1;
}

void tm_coll_nb_fini(struct tm_coll *co)
{
    if (!co->nb) return;
    /* Rounds not every member reached (an erroneous program, or a job torn down). */
    struct tm_nbround *r = co->nb->live;
    while (r) {
        struct tm_nbround *next = r->next;
        tm_nbround_abandon(r);
        r = next;
    }
    pthread_mutex_destroy(&co->nb->lock);
    free(co->nb);
    co->nb = NULL;
}

void tm_cargs_hold(const struct tm_cargs *a, int n)
{
    tm_type_hold(a->stype);
    tm_type_hold(a->rtype);
    for (int k = 0; a->stypes && k < n; k++)
        tm_type_hold(a->stypes[k]);
    for (int k = 0; a->rtypes && k < n; k++)
        tm_type_hold(a->rtypes[k]);
}

/* n: the communicator's size when held (non-blocking), 0 when nothing was held. */
void tm_cargs_release(struct tm_cargs *a, int n)
{
    if (n) {
        tm_type_release(a->stype);
        tm_type_release(a->rtype);
        for (int k = 0; a->stypes && k < n; k++)
            tm_type_release(a->stypes[k]);
        for (int k = 0; a->rtypes && k < n; k++)
            tm_type_release(a->rtypes[k]);
    }
    free(a->own);
    a->own = NULL;
}

/* The finisher: every member has arrived. */
static void round_run(struct tm_rank *me, int wrank, struct tm_nbround *r)
{
    struct tm_cwork w = {.me = me, .wrank = wrank, .n = r->n, .args = r->args};
    int err = 0;
    size_t np = r->al->nparts(&w);
    for (size_t p = 0; p < np; p++) {
        int e = r->al->part(&w, p);
        if (e < 0 && !err) err = e;
    }
    tm_nbround_finish(r, tm_coll_errclass(err));
}

int tm_coll_nb_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                     const struct tm_calgo *al, const struct tm_cargs *a,
                     struct tm_request **ret_req)
{
    struct tm_comm *c = cr->c;
    struct tm_coll_nb *nb = c->coll.nb;
    struct tm_request *q = tm_req_alloc(me, TM_REQ_COLL);
    if (!q) return -ENOMEM;
    q->comm = comm;

    pthread_mutex_lock(&nb->lock);
    struct tm_nbround *r = NULL;
    int last = tm_nbround_join(&nb->live, me, cr, al, a, q, c->size, &r);
    pthread_mutex_unlock(&nb->lock);
    if (last < 0) return last;

    *ret_req = q;
    if (last) round_run(me, cr->rank, r);
    return 0;
}
