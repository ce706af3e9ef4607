/* coll_net_nb.c — non-blocking collectives on communicators that span nodes (coll_net.h).
 *
 * Why a thread.  The leader's share of a round waits for other nodes: run inside the last
 * member's MPI_I* call it would hold that call until the other nodes arrive, and a program
 * that sends point-to-point between I* start and wait (legal MPI) could deadlock.  Run on the
 * leader at its next MPI call it would only progress while the leader polls.  So each group
 * (communicator x node) gets a runner: a struct tm_rank of its own (waker, envelope cache,
 * scratch; helper = 1, so it is never counted as a rank) and a thread that runs the group's
 * rounds in the order the members started them (MPI 3.1 §5.12: the same order on every
 * member), each as the leader's share of a blocking round would run, on a context of its own
 * (odd negative ids: no blocking round or user message can match).  It acts for the leader:
 * its messages carry the leader's rank and it receives from the leader's mailbox (which is
 * locked, so two threads may post there), with requests it owns, so completions wake it.
 *
 * Lifetime.  A runner is made by the first member that needs it and listed in the job; its
 * thread starts with the first ready round and ends when the communicator is freed or the job
 * ends (after finishing what is queued).  The structure itself is freed with the job: its
 * envelope cache may lend envelopes to other ranks' mailboxes until those are gone.
 *
 * Persistent collectives.  Members may start them in different orders (MPI 4.0 §6.13: they
 * match in the order of their *_init calls), so one runner running rounds in start order
 * could run another round than the other nodes' runners and wait for each other forever.  So
 * each persistent request (its number, comm.h npinit) has a runner of its own in each group,
 * listed on the group's runner, which runs that request's starts in order (every member
 * starts it the same number of times); its tags carry the request's number modulo 2^11, so
 * the runners never take each other's messages (two requests of a communicator whose numbers
 * differ by a multiple of 2048, active at once across nodes, would). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll_net.h"
#include "envelope_pool.h"
#include "helper_thread.h"
#include "match.h"
#include "request.h"
#include "wait.h"

struct tm_cprog {
    struct tm_rank self; /* first: 64-byte aligned */
    struct tm_comm *c;
    struct tm_chier *h;
    int gi;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct tm_nbround *live;                /* some local members arrived (lock) */
    struct tm_nbround *ready, **ready_tail; /* every local member arrived (lock) */
    int stop, started, joined;              /* lock */
    pthread_t thread;
    uint32_t seq;   /* rounds run (message tags): the thread only */
    int persistent; /* the runner of one persistent collective (pid) */
    uint64_t pid;
    int nfreed; /* persistent: members of the group that freed its request (group's lock) */
    struct tm_cprog *pruns, *pnext; /* the group's runner: the persistent ones (lock) */
    struct tm_tplan *plan;          /* tree-file walk (coll_treerun.c): the thread only */
    struct tm_cprog *next;          /* job->progs (job->progs_lock) */
};

static void *prog_main(void *arg);

/* The runner works for every member of its group: the process's CPU mask (helper_thread.h). */
static int runner_start(struct tm_cprog *p)
{
    return tm_helper_thread_start(&p->thread, prog_main, p);
}

/* Context of the non-blocking rounds' messages (coll_net.c has the even ones). */
static int nb_ctx(const struct tm_comm *c)
{
    return -2 * c->ctx - 3;
}

/* The round number in the tags (coll_net.c keeps 22 bits): the group's runner's below 2^21,
 * a persistent runner's above, with 11 bits of its request's number and 10 of its count. */
static uint32_t tag_seq(struct tm_cprog *p)
{
    uint32_t k = p->seq++;
    if (!p->persistent) return k & 0x1fffffu;
    return 0x200000u | (uint32_t)(p->pid & 0x7ffu) << 10 | (k & 0x3ffu);
}

static void run_round(struct tm_cprog *p, struct tm_nbround *r)
{
    struct tm_cnet x;
    tm_cnet_setup(&x, &p->self, p->c, p->h, p->gi, r->al->kind, tag_seq(p), nb_ctx(p->c));
    x.nbargs = r->args;
    x.plan = &p->plan;
    int err = r->al->net ? r->al->net(&x) : -ENOSYS;
    tm_nbround_finish(r, tm_coll_errclass(err));
}

static void *prog_main(void *arg)
{
    struct tm_cprog *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->ready && !p->stop)
            pthread_cond_wait(&p->cond, &p->lock);
        struct tm_nbround *r = p->ready;
        if (!r) break; /* stopped, nothing queued */
        p->ready = r->next;
        if (!p->ready) p->ready_tail = &p->ready;
        pthread_mutex_unlock(&p->lock);
        run_round(p, r);
        atomic_fetch_sub_explicit(&p->self.job->helpers_busy, 1, memory_order_seq_cst);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static struct tm_cprog *prog_new(struct tm_rank *me, struct tm_comm *c, struct tm_chier *h, int gi)
{
    struct tm_cprog *p = aligned_alloc(TM_CACHELINE, sizeof *p);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    if (tm_mbox_init(&p->self.mbox) < 0) {
        free(p);
        return NULL;
    }
    struct tm_rank *s = &p->self;
    s->job = me->job;
    s->info = me->info; /* a rank of this node: same links, same job layout */
    s->rank = tm_comm_world_rank(c, h->g[gi].members[0]);
    s->helper = 1;
    p->c = c;
    p->h = h;
    p->gi = gi;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    p->ready_tail = &p->ready;
    return p;
}

static void prog_destroy(struct tm_cprog *p)
{
    tm_cprog_stop(p);
    for (struct tm_nbround *r = p->live, *n; r; r = n) {
        n = r->next;
        tm_nbround_abandon(r);
    }
    tm_mbox_destroy(&p->self.mbox);
    tm_req_pool_destroy(&p->self);
    tm_envl_pool_destroy(&p->self.envs);
    free(p->self.scratch);
    tm_tplan_free(p->plan);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Listed in the job: stopped and freed with it. */
static void prog_list(struct tm_job *j, struct tm_cprog *p)
{
    pthread_mutex_lock(&j->progs_lock);
    p->next = j->progs;
    j->progs = p;
    pthread_mutex_unlock(&j->progs_lock);
}

/* Group gi's runner, made by the first member that needs it. */
static struct tm_cprog *prog_get(struct tm_rank *me, struct tm_comm *c, struct tm_chier *h, int gi)
{
    struct tm_cgroup *g = &h->g[gi];
    struct tm_cprog *p = atomic_load_explicit(&g->prog, memory_order_acquire);
    if (p) return p;
    if (!(p = prog_new(me, c, h, gi))) return NULL;
    struct tm_cprog *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&g->prog, &expected, p, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        prog_destroy(p); /* another member installed one first; ours never ran */
        return expected;
    }
    prog_list(me->job, p);
    return p;
}

/* The runner of persistent collective pid in group runner m's list, or NULL (m->lock held). */
static struct tm_cprog *prun_find(struct tm_cprog *m, uint64_t pid)
{
    struct tm_cprog *p = m->pruns;
    while (p && p->pid != pid)
        p = p->pnext;
    return p;
}

/* The runner of persistent collective pid in m's group, made by the first member that needs
 * it (listed in the job like m, freed with it). */
static struct tm_cprog *prog_persistent(struct tm_rank *me, struct tm_cprog *m, uint64_t pid)
{
    pthread_mutex_lock(&m->lock);
    struct tm_cprog *p = prun_find(m, pid);
    if (!p && (p = prog_new(me, m->c, m->h, m->gi))) {
        p->persistent = 1;
        p->pid = pid;
        p->pnext = m->pruns;
        m->pruns = p;
        prog_list(me->job, p);
    }
    pthread_mutex_unlock(&m->lock);
    return p;
}

int tm_cnet_nb_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                     const struct tm_calgo *al, const struct tm_cargs *a,
                     struct tm_request **ret_req)
{
    struct tm_comm *c = cr->c;
    struct tm_chier *h = tm_chier_get(me, c);
    if (!h) return -ENOMEM;
    int gi = h->group_of[cr->rank];
    struct tm_cprog *p = prog_get(me, c, h, gi);
    if (p && cr->pround) p = prog_persistent(me, p, tm_pround_pid(cr->pround));
    if (!p) return -ENOMEM;
    struct tm_request *q = tm_req_alloc(me, TM_REQ_COLL);
    if (!q) return -ENOMEM;
    q->comm = comm;

    pthread_mutex_lock(&p->lock);
    struct tm_nbround *r = NULL;
    int last = tm_nbround_join(&p->live, me, cr, al, a, q, h->g[gi].n, &r);
    if (last >= 0) *ret_req = q;
    if (last <= 0) {
        pthread_mutex_unlock(&p->lock);
        return last;
    }
    *p->ready_tail = r;
    p->ready_tail = &r->next;
    /* busy from queued to run: the deadlock check never takes a round about to run for a
     * stuck one (mstate.h) */
    atomic_fetch_add_explicit(&me->job->helpers_busy, 1, memory_order_seq_cst);
    int err = 0;
    if (!p->started && !p->stop) {
        /* In the agent this thread counts as one the creating rank started (interpose): its
         * crash fails the job like the rank's own would. */
        err = runner_start(p);
        p->started = err == 0;
    }
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (err) {
        /* No thread: run what is queued here, as the blocking path would. */
        pthread_mutex_lock(&p->lock);
        r = p->ready;
        p->ready = NULL;
        p->ready_tail = &p->ready;
        pthread_mutex_unlock(&p->lock);
        while (r) {
            struct tm_nbround *n = r->next;
            run_round(p, r);
            atomic_fetch_sub_explicit(&me->job->helpers_busy, 1, memory_order_seq_cst);
            r = n;
        }
    }
    return 0;
}

void tm_cprog_stop(struct tm_cprog *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    int join = p->started && !p->joined;
    p->joined = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    if (join) pthread_join(p->thread, NULL);
}

void tm_cprog_stop_group(struct tm_cprog *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    struct tm_cprog *q = p->pruns;
    pthread_mutex_unlock(&p->lock);
    /* the list only grows at its head, and its entries live as long as the job */
    for (; q; q = q->pnext)
        tm_cprog_stop(q);
    tm_cprog_stop(p);
}

void tm_cnet_nb_pfree(struct tm_commref *cr, uint64_t pid)
{
    struct tm_chier *h = atomic_load_explicit(&cr->c->coll.hier, memory_order_acquire);
    if (!h) return; /* never ran across nodes: no runner */
    int gi = h->group_of[cr->rank];
    struct tm_cprog *m = atomic_load_explicit(&h->g[gi].prog, memory_order_acquire);
    if (!m) return;
    pthread_mutex_lock(&m->lock);
    struct tm_cprog *p = prun_find(m, pid);
    /* Every member frees it (MPI 4.0 §6.13 makes freeing an active one erroneous), so the
     * last free comes after the last start of every member here: the runner is idle, or ends
     * a round already complete for all of them, and the join is short. */
    int last = p && ++p->nfreed == h->g[gi].n;
    pthread_mutex_unlock(&m->lock);
    if (last) tm_cprog_stop(p);
}

struct tm_cprog *tm_cprog_next(struct tm_cprog *p)
{
    return p->next;
}

void tm_cprog_wake_all(struct tm_job *j)
{
    pthread_mutex_lock(&j->progs_lock);
    for (struct tm_cprog *p = j->progs; p; p = p->next)
        tm_wake_force(&p->self.waker);
    pthread_mutex_unlock(&j->progs_lock);
}

void tm_cprog_free_all(struct tm_job *j)
{
    pthread_mutex_lock(&j->progs_lock);
    struct tm_cprog *p = j->progs;
    j->progs = NULL;
    pthread_mutex_unlock(&j->progs_lock);
    while (p) {
        struct tm_cprog *n = p->next;
        prog_destroy(p);
        p = n;
    }
}
