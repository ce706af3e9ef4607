/* nbround.c — the rounds of non-blocking collectives (coll_base.h), shared by the one-node
 * engine (coll/coll_nb.c, whose scheme and locking it follows) and the runners of rounds
 * across nodes (coll_net/coll_net_nb.c): a round collects a copy of every arriving member's
 * arguments and its request; whoever completes it releases what the members lent (derived
 * types held with tm_cargs_hold, staged copies) before it completes their requests. */
#include <errno.h>
#include <stdlib.h>

#include "coll_base.h"
#include "job.h"
#include "request.h"
#include "wait.h"

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
    uint64_t seq = cr->pround ? cr->pround : cr->nnbc;
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
    if (!cr->pround) cr->nnbc++; /* a persistent start keeps the number of its init */
    tm_cargs_hold(a, n);
    r->args[cr->rank] = *a;
    r->req[cr->rank] = q;
    if (++r->arrived < need) return 0;
    *pp = r->next; /* nobody will look for it again */
    r->next = NULL;
    *ret = r;
    return 1;
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
    tm_cargs_free_own(a);
}
