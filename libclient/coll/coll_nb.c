/* coll_nb.c — non-blocking collectives on one node: who runs their rounds (coll.h; the round
 * record and its functions are coll_base/nbround.c's, shared with the rounds across nodes).
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
/* The finisher: every member has arrived. */
static void round_run(struct tm_rank *me, struct tm_commref *cr, struct tm_nbround *r)
{
    struct tm_cwork w = {.me = me, .wrank = cr->rank, .n = r->n, .args = r->args};
    int err = 0;
    /* a member's earlier call failed its checks: the round may hold different calls */
    if (TM_UNLIKELY(atomic_load_explicit(&cr->c->coll.failures, memory_order_acquire)))
        for (int k = 1; k < r->n; k++)
            if (r->args[k].sig != r->args[0].sig) {
                tm_nbround_finish(r, MPI_ERR_OTHER);
                return;
            }
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
    if (last) round_run(me, cr, r);
    return 0;
}
