/* carrier_join.c — joins of a rank's threads that park the rank, not its carrier
 * (carrier_join.h). */
#include "carrier_join.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "carrier.h"
#include "job.h"
#include "rank.h"

struct carrier_child {
    struct carrier_child *next; /* children_mu: the job's list */
    pthread_t thread;
    _Atomic int ended; /* seq_cst, against the carriers' count of sleepers (carrier_wake) */
    int refs;          /* children_mu: the thread's and the list's */
};

/* Drops one reference (children_mu held). */
static void unref(struct carrier_child *c)
{
    if (--c->refs == 0) free(c);
}

struct carrier_child *carrier_child_new(struct job *j)
{
    /* Only a carried rank's own context waits parked: a thread that its threads start and
     * join is theirs, and a record nobody joins would stay until the job's end. */
    struct rank *r = carrier_running();
    if (!j->cpool || !r || r != rank_current()) return NULL;
    struct carrier_child *c = calloc(1, sizeof *c);
    if (c) c->refs = 2;
    return c;
}

void carrier_child_created(struct job *j, struct carrier_child *c, int rc, pthread_t t)
{
    if (!c) return;
    if (rc != 0) {
        free(c); /* the thread never ran */
        return;
    }
    pthread_mutex_lock(&j->children_mu);
    c->thread = t;
    c->next = j->children;
    j->children = c;
    pthread_mutex_unlock(&j->children_mu);
}

void carrier_child_ended(struct job *j, struct carrier_child *c)
{
    if (!c) return;
    pthread_mutex_lock(&j->children_mu);
    atomic_store_explicit(&c->ended, 1, memory_order_seq_cst);
    /* under children_mu: the pool is freed under it too (carriers_free) */
    if (j->cpool) carrier_wake(j->cpool);
    unref(c);
    pthread_mutex_unlock(&j->children_mu);
}

/* Unlinks t's record (children_mu held); NULL if it is not listed. */
static struct carrier_child *take(struct job *j, pthread_t t)
{
    for (struct carrier_child **at = &j->children; *at; at = &(*at)->next) {
        if (!pthread_equal((*at)->thread, t)) continue;
        struct carrier_child *c = *at;
        *at = c->next;
        return c;
    }
    return NULL;
}

static int ended(void *arg)
{
    struct carrier_child *c = arg;
    return atomic_load_explicit(&c->ended, memory_order_seq_cst);
}

int carrier_child_wait(struct job *j, pthread_t t)
{
    struct rank *r = carrier_running();
    if (!r || r != rank_current()) return -ENOTSUP;
    pthread_mutex_lock(&j->children_mu);
    struct carrier_child *c = take(j, t);
    pthread_mutex_unlock(&j->children_mu);
    if (!c) return -ENOTSUP;
    /* No poll: the thread's end wakes sleeping carriers after its seq_cst store, and the
     * carrier the rank lives on looks at ended() once more after it counted itself asleep
     * (carrier.c's wake-up invariant). */
    int rc = 0;
    while (rc == 0 && !ended(c))
        rc = carrier_park(ended, c, NULL);
    pthread_mutex_lock(&j->children_mu);
    unref(c);
    pthread_mutex_unlock(&j->children_mu);
    return rc;
}

void carrier_child_forget(struct job *j, pthread_t t)
{
    pthread_mutex_lock(&j->children_mu);
    struct carrier_child *c = take(j, t);
    if (c) unref(c);
    pthread_mutex_unlock(&j->children_mu);
}

void carrier_children_free(struct job *j)
{
    pthread_mutex_lock(&j->children_mu);
    while (j->children) {
        struct carrier_child *c = j->children;
        j->children = c->next;
        unref(c);
    }
    pthread_mutex_unlock(&j->children_mu);
}
