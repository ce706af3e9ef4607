/* carrier.c — ranks sharing carrier threads, switched in user space (carrier.h). */
#include "carrier.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "asym_fence.h"
#include "fault.h"
#include "job.h"
#include "job_bind.h"
#include "job_net.h"
#include "job_thread.h"
#include "log.h"
#include "rank.h"
#include "relax.h"
#include "stack_guard.h"

/* The carrier the calling thread is (NULL on every other thread). */
static __thread struct carrier *self;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int carrier_wanted(struct job *j, char *why, size_t whylen)
{
    /* checked whatever the mode: a job that sets it wrong hears so, also when it forces one */
    uint32_t per_cpu = j->agent->cfg.kernel_ranks_per_cpu;
    const char *v = job_getenv(j, "TMPI_KERNEL_RANKS_PER_CPU");
    if (v && *v) {
        char *end;
        errno = 0;
        unsigned long n = strtoul(v, &end, 10);
        if (*v < '0' || *v > '9' || *end || errno || n < 1 || n > CONFIG_KERNEL_RANKS_PER_CPU_MAX) {
            snprintf(why, whylen, "TMPI_KERNEL_RANKS_PER_CPU=\"%.16s\": expected 1 to %u", v,
                     CONFIG_KERNEL_RANKS_PER_CPU_MAX);
            return -EINVAL;
        }
        per_cpu = (uint32_t)n;
    }
    const char *mode = job_getenv(j, "TMPI_RANK_SWITCHING");
    if (!mode || !*mode) mode = j->agent->cfg.rank_switching;
    if (strcmp(mode, "kernel") == 0) {
        snprintf(why, whylen, "rank_switching = kernel");
        return 0;
    }
    if (strcmp(mode, "user") == 0) return 1;
    /* the config's word was checked when it was read; a job's is checked here */
    if (strcmp(mode, "auto") != 0) {
        snprintf(why, whylen, "TMPI_RANK_SWITCHING=\"%.32s\": expected auto, kernel or user", mode);
        return -EINVAL;
    }
    /* up to per_cpu ranks a CPU, a thread per rank is faster on the collectives and multi-pair
     * rates (a carrier that found nothing to run sleeps, and its futex wake costs 15-60 us on
     * a loaded VM; config.h); beyond it, the kernel's switches cost more than user space's */
    if ((uint64_t)j->nprocs <= (uint64_t)per_cpu * (uint64_t)j->agent->ncpus) {
        if (j->nprocs <= (uint32_t)j->agent->ncpus)
            snprintf(why, whylen, "%u ranks fit the %d CPUs", j->nprocs, j->agent->ncpus);
        else
            snprintf(why, whylen, "%u ranks on %d CPUs, at most %u a CPU (kernel_ranks_per_cpu)",
                     j->nprocs, j->agent->ncpus, per_cpu);
        return 0;
    }
    /* every program of the job (MPMD) must allow it: one rank of each is enough to look at */
    for (uint32_t i = 0; i < j->nprocs; i++) {
        if (i > 0 && j->ranks[i].app == j->ranks[i - 1].app) continue;
        if (j->ranks[i].image.has_tls) {
            snprintf(why, whylen, "the program has thread-local variables");
            return 0;
        }
        if (j->ranks[i].image.creates_threads) {
            snprintf(why, whylen, "the program starts threads");
            return 0;
        }
    }
    return 1;
}

/* ---- running on a carrier ---------------------------------------------------------------- */

/* A rank may resume on another carrier than the one it parked on.  errno's address comes from a
 * function the compiler may treat as constant and keep across the switch: read and write it
 * in calls of their own, after the switch. */
__attribute__((noinline)) static int errno_get(void)
{
    return errno;
}
__attribute__((noinline)) static void errno_set(int e)
{
    errno = e;
}
__attribute__((noinline)) static struct carrier *carrier_self(void)
{
    return self;
}

struct rank *carrier_running(void)
{
    struct carrier *c = self;
    return c ? c->cur : NULL;
}

static void wake_sleepers(struct carrier_pool *p)
{
    atomic_fetch_add_explicit(&p->sleep.word, 1, memory_order_seq_cst);
    syscall(SYS_futex, (uint32_t *)&p->sleep.word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void carrier_wake(struct carrier_pool *p)
{
    if (atomic_load_explicit(&p->sleep.sleepers, memory_order_seq_cst)) wake_sleepers(p);
}

/* libtmpi's ops, once it has created the job's state (before, no rank of the job has a
 * per-thread record: MPI_Init creates the state first). */
static const struct tmpi_client_ops *client_ops(struct carrier_pool *p)
{
    const struct tmpi_client_ops *ops = atomic_load_explicit(&p->client, memory_order_acquire);
    if (ops) return ops;
    struct job *j = p->job;
    pthread_mutex_lock(&j->client_mu);
    if (j->client_created && j->client_ops.tls_get && j->client_ops.tls_set) ops = &j->client_ops;
    pthread_mutex_unlock(&j->client_mu);
    if (ops) atomic_store_explicit(&p->client, ops, memory_order_release);
    return ops;
}

/* Notes that r, of another carrier's block, lives on c from now on (it is in c's list at
 * most once: moves are rare, the list short). */
static void moved_add(struct carrier *c, struct rank *r)
{
    if (c->moved_lost) return;
    for (uint32_t i = 0; i < c->nmoved; i++)
        if (c->moved[i] == r) return;
    if (c->nmoved == c->moved_cap) {
        uint32_t cap = c->moved_cap ? 2 * c->moved_cap : 8;
        struct rank **m = realloc(c->moved, cap * sizeof *m);
        if (!m) {
            c->moved_lost = 1; /* pick_moved falls back to looking at every rank */
            return;
        }
        c->moved = m;
        c->moved_cap = cap;
    }
    c->moved[c->nmoved++] = r;
}

/* Switches from the scheduler to rank r (claimed: CR_RUNNING) and back. */
static void run_rank(struct carrier *c, struct rank *r)
{
    struct carried *k = r->carried;
    const struct tmpi_client_ops *ops = client_ops(c->pool);
    if (ops) ops->tls_set(k->client_tls);
    c->cur = r;
    c->woke_idle = 0;
    k->parking = 0;
    if (k->home != c && atomic_load_explicit(&k->last, memory_order_relaxed) != c) moved_add(c, r);
    atomic_store_explicit(&k->last, c, memory_order_relaxed);
    /* seq_cst with the load of untimed: a carrier that fell asleep for good because we were at
     * home is woken to watch this run (its parked ranks may be ours to rescue, idle()); else it
     * saw us busy and sleeps with the rescue deadline */
    uint64_t t = now_ns();
    atomic_store_explicit(&c->ran_at, t, memory_order_relaxed);
    atomic_store_explicit(&c->busy_since, t, memory_order_seq_cst);
    if (atomic_load_explicit(&c->pool->untimed, memory_order_seq_cst)) wake_sleepers(c->pool);
    rank_set_current(r);
    rank_locale_enter(&r->libc.locale);
    ctx_switch(&c->home, &k->ctx);
    rank_locale_leave(&r->libc.locale);
    rank_set_current(NULL);
    atomic_store_explicit(&c->busy_since, 0, memory_order_relaxed);
    c->cur = NULL;
    ops = client_ops(c->pool);
    k->client_tls = ops ? ops->tls_get() : NULL;
    /* Only now is the context saved: another carrier may resume it from here on. */
    if (k->parking) {
        atomic_store_explicit(&k->state, CR_PARKED, memory_order_release);
        return;
    }
    atomic_store_explicit(&k->state, CR_DONE, memory_order_release);
    if (atomic_fetch_sub_explicit(&c->pool->live, 1, memory_order_acq_rel) == 1)
        wake_sleepers(c->pool); /* the last rank ended: every carrier leaves */
}

/* Context entry of a rank: its whole life, then home for good (to whichever carrier runs it
 * by then). */
static void rank_entry(void *arg)
{
    struct rank *r = arg;
    struct carried *k = r->carried;
    rank_life(r, 1);
    k->parking = 0;
    ctx_switch(&k->ctx, &carrier_self()->home);
    __builtin_trap(); /* a finished context is never resumed */
}

/* The wake-up invariant.  A waker makes a parked rank's ready() true (seq_cst), then reads the
 * pool's sleepers (seq_cst) and wakes them if any (carrier_wake, svc.h).  So every carrier
 * that may be the only one to look at a parked rank must look at its ready() after it counted
 * itself in sleepers and before it sleeps: then either that look sees the rank ready, or the
 * waker sees the count and bumps the word the carrier sleeps on.  The carrier a rank lives on
 * (k->last) is that carrier: it publishes the park (run_rank) and looks at the rank in every
 * pick from then on, the last pick of idle() included.
 *
 * A look must never be skipped.  Other carriers claim a parked rank too (a rescue, scan_all),
 * and a look that found the rank claimed (CR_CLAIMED) used to count for nothing: the claimer
 * had seen ready() false just before the waker's store, put the rank back, and nobody looked
 * again while its carrier slept with no deadline: a rank parked for good (test_carrier relook
 * holds that window open; the likely cause of a job across agents that hung in a rank's join
 * of its collectives' progress thread).  So a look at a
 * claimed rank is handed to the claimer (CR_RELOOK, an atomic read-modify-write even when
 * another looker set it already, so that it is ordered before the claimer's put-back), and
 * the claimer calls ready() once more before the rank is parked again. */

/* Takes r for carrier c if it can run now: a new rank of c's block, or a parked one whose
 * ready() holds (called with the rank claimed, so never twice at once). */
static int try_claim(struct carrier *c, struct rank *r)
{
    struct carried *k = r->carried;
    int st = atomic_load_explicit(&k->state, memory_order_acquire);
    for (;;) {
        if (st == CR_NEW && k->home == c) {
            atomic_store_explicit(&k->state, CR_RUNNING, memory_order_relaxed);
            return 1;
        }
        if (st == CR_CLAIMED || st == CR_RELOOK) {
            if (atomic_compare_exchange_weak_explicit(&k->state, &st, CR_RELOOK,
                                                      memory_order_seq_cst, memory_order_acquire))
                return 0; /* the claimer looks again for us */
            continue;
        }
        if (st != CR_PARKED) return 0;
        if (atomic_compare_exchange_weak_explicit(&k->state, &st, CR_CLAIMED, memory_order_seq_cst,
                                                  memory_order_acquire))
            break;
    }
    for (;;) {
        if (k->ready(k->ready_arg)) {
            atomic_store_explicit(&k->state, CR_RUNNING, memory_order_relaxed);
            return 1;
        }
        int claimed = CR_CLAIMED;
        if (atomic_compare_exchange_strong_explicit(&k->state, &claimed, CR_PARKED,
                                                    memory_order_seq_cst, memory_order_seq_cst))
            return 0;
        /* CR_RELOOK: another carrier looked while we held the rank */
        atomic_store_explicit(&k->state, CR_CLAIMED, memory_order_seq_cst);
    }
}

/* Whether carrier o has run one rank without a switch for longer than RESCUE_NS: its parked
 * ranks may then move to another carrier.  Moving is the exception: a compiler may keep the
 * address of errno (a per-thread variable) across an MPI call in the program's own code, and
 * a rank that moved would then reach the old thread's errno. */
#define RESCUE_NS 5000000u

static int stuck(const struct carrier *o, uint64_t *now)
{
    uint64_t since = atomic_load_explicit(&o->busy_since, memory_order_relaxed);
    if (!since) return 0;
    if (!*now) *now = now_ns();
    return *now > since && *now - since > RESCUE_NS;
}

/* Every rank of the job that lives on c but is of another block, or, rescued, is parked on a
 * carrier that is stuck in one rank: what pick_moved did for every pick before the lists. */
static struct rank *scan_all(struct carrier *c, uint64_t *now)
{
    struct carrier_pool *p = c->pool;
    for (uint32_t i = 0; i < p->nranks; i++) {
        uint32_t at = (c->steal_next + i) % p->nranks;
        struct rank *r = p->ranks[at];
        struct carried *k = r->carried;
        struct carrier *o = atomic_load_explicit(&k->last, memory_order_relaxed);
        if (o == c && k->home == c) continue; /* looked at in pick */
        if ((o == c || stuck(o, now)) && try_claim(c, r)) {
            c->steal_next = (at + 1) % p->nranks;
            return r;
        }
    }
    return NULL;
}

/* The ranks of c's list that still live here, round robin; the others leave the list. */
static struct rank *pick_listed(struct carrier *c)
{
    uint32_t seen = 0;
    while (seen < c->nmoved) {
        uint32_t at = (c->moved_next + seen) % c->nmoved;
        struct rank *r = c->moved[at];
        if (atomic_load_explicit(&r->carried->last, memory_order_relaxed) != c) {
            c->moved[at] = c->moved[--c->nmoved];
            continue;
        }
        if (try_claim(c, r)) {
            c->moved_next = at + 1;
            return r;
        }
        seen++;
    }
    return NULL;
}

/* Ranks that moved here, or, rescued, parked ranks of a carrier that is stuck in one rank.
 * Without a rank that moved here and with no carrier stuck, it costs a look at each carrier's
 * busy_since (a job of 8,192 ranks spent 5.8% of its CPU time scanning them all here). */
static struct rank *pick_moved(struct carrier *c)
{
    struct carrier_pool *p = c->pool;
    if (p->ncarriers == 1) return NULL;
    uint64_t now = 0;
    if (c->moved_lost) return scan_all(c, &now);
    struct rank *r = pick_listed(c);
    if (r) return r;
    for (uint32_t i = 0; i < p->ncarriers; i++) {
        struct carrier *o = &p->carriers[i];
        if (o != c && stuck(o, &now)) return scan_all(c, &now);
    }
    return NULL;
}

/* The next rank c can run: the ranks of its block that live here, round robin, and the ranks
 * pick_moved finds.  Those get every other turn first: a rank of the block that polls
 * (MPI_Test in a loop) is always ready, and a rank that moved here and waits for it to be
 * resumed would never be (seen: a ring of Isendrecv_replace + Test loops on 4 ranks and 2
 * carriers stopped for good). */
static struct rank *pick(struct carrier *c)
{
    struct rank *r;
    if ((c->picks++ & 1) && (r = pick_moved(c)) != NULL) return r;
    for (uint32_t i = 0; i < c->n; i++) {
        uint32_t at = (c->next + i) % c->n;
        r = c->ranks[at];
        if (atomic_load_explicit(&r->carried->last, memory_order_relaxed) == c && try_claim(c, r)) {
            c->next = (at + 1) % c->n;
            return r;
        }
    }
    return pick_moved(c);
}

/* Idle spin of a carrier of a job across nodes: like a waiting rank's (libtmpi spin_net), it
 * reads the job's links itself (the frames complete its ranks' requests here, no receive
 * daemon wake-up) and yields between polls (other agents on this machine do not count in our
 * runnable figure).  The budget counts from the last time anything moved.  The rank to run,
 * or NULL when the budget ran out or the ranks are all done. */
static struct rank *idle_net(struct carrier *c, void *net)
{
    struct carrier_pool *p = c->pool;
    struct agent *a = p->job->agent;
    uint64_t start = now_ns();
    struct rank *r = NULL;
    job_net_hold(net, 1);
    for (unsigned i = 1;; i++) {
        if (job_net_poll(net) > 0) start = 0;
        if ((r = pick(c)) != NULL) break;
        sched_yield();
        if ((r = pick(c)) != NULL) break;
        if ((i & 7) == 0) {
            uint64_t t = now_ns();
            if (start == 0) start = t;
            if (t - start >= a->cfg.spin_ns) break;
            if (atomic_load_explicit(&p->live, memory_order_acquire) == 0) break;
        }
    }
    job_net_hold(net, 0);
    return r;
}

/* The earliest deadline of a rank parked in a sleep, 0 if none.  A parked rank's deadline is
 * written before the rank is published as parked. */
static uint64_t earliest_deadline(struct carrier_pool *p)
{
    uint64_t best = 0;
    /* seq_cst after our count in sleepers: a rank that parks in a sleep after this look does
     * so on a carrier that looks again before it sleeps itself */
    if (!atomic_load_explicit(&p->sleeping, memory_order_seq_cst)) return 0;
    for (uint32_t i = 0; i < p->nranks; i++) {
        struct carried *k = p->ranks[i]->carried;
        /* claimed ranks too: their claimer may put them back after our look */
        int st = atomic_load_explicit(&k->state, memory_order_acquire);
        if (st != CR_PARKED && st != CR_CLAIMED && st != CR_RELOOK) continue;
        uint64_t d = atomic_load_explicit(&k->deadline, memory_order_relaxed);
        if (d && (!best || d < best)) best = d;
    }
    return best;
}

/* Nothing can run: spin for the spin budget (pause, or yield when the node is oversubscribed;
 * reading the links for a job across nodes).  The rank to run, or NULL. */
static struct rank *idle_spin(struct carrier *c)
{
    struct carrier_pool *p = c->pool;
    struct agent *a = p->job->agent;
    void *net = p->job->net;
    c->spins++;
    if (net) {
        struct rank *r = idle_net(c, net);
        /* from here the daemons read the links (after a spin they linger held) */
        if (!r) job_net_release(net);
        return r;
    }
    uint64_t start = now_ns();
    int over = atomic_load_explicit(&a->runnable_ranks, memory_order_relaxed) > a->ncpus;
    for (unsigned i = 1;; i++) {
        if (over)
            sched_yield();
        else
            tm_cpu_relax();
        struct rank *r = pick(c);
        if (r) return r;
        if ((i & 63) == 0) {
            if (now_ns() - start >= a->cfg.spin_ns) return NULL;
            if (atomic_load_explicit(&p->live, memory_order_acquire) == 0) return NULL;
        }
    }
}

/* Nothing can run: spin (idle_spin), then sleep until a waker or the last rank's end bumps
 * the pool's word.  The rank to run, or NULL to look again. */
static struct rank *idle(struct carrier *c)
{
    struct carrier_pool *p = c->pool;
    struct agent *a = p->job->agent;
    if (c->woke_idle) {
        /* We slept and nothing was ready when we woke: the wake was a rescue look's deadline,
         * a carrier that started a run (run_rank), or a rank another carrier took first.  A
         * spin now would only take a core from the ranks that run (seen: a rank in a loop of
         * MPI_Test woke its idle neighbour at every switch, which spun each time: a job of
         * neighbourhood collectives on carriers across 3 agents ran 30x slower). */
        c->woke_idle = 0;
    } else {
        struct rank *r = idle_spin(c);
        if (r) return r;
    }
    if (atomic_load_explicit(&p->live, memory_order_acquire) == 0) return NULL;
    /* wait.h's handshake: count ourselves asleep, then look once more */
    uint32_t seq = atomic_load_explicit(&p->sleep.word, memory_order_seq_cst);
    atomic_fetch_add_explicit(&p->sleep.sleepers, 1, memory_order_seq_cst);
    /* a fast-box sender publishes without a fence (asym_fence.h; fails harmlessly when the
     * process did not register, and then the senders fence) */
    tmpi_asym_heavy();
    struct rank *r = pick(c);
    if (!r && atomic_load_explicit(&p->live, memory_order_seq_cst) > 0) {
        /* A sleeping rank's deadline wakes us: nobody else will.  Nor does anyone tell us when
         * another carrier has been stuck in one rank long enough for us to take its parked
         * ones: look again after RESCUE_NS while another carrier runs a rank or ran one
         * within RESCUE_NS (ran_at).  With no carrier running one now, we count ourselves
         * untimed first: one that starts a rank after our look wakes us (run_rank), or we see
         * its busy_since here (both seq_cst), so we never sleep for good beside a carrier that
         * then computes for ever (seen: a parked rank stranded behind a rank that polled a flag
         * only it could set). */
        uint64_t dl = earliest_deadline(p), now = now_ns();
        int untimed = p->ncarriers > 1;
        if (untimed) atomic_fetch_add_explicit(&p->untimed, 1, memory_order_seq_cst);
        for (uint32_t i = 0; i < p->ncarriers; i++) {
            struct carrier *o = &p->carriers[i];
            if (o == c) continue;
            /* one that switches ranks often is at home for moments only: busy all the same */
            uint64_t ran = atomic_load_explicit(&o->ran_at, memory_order_relaxed);
            if (!atomic_load_explicit(&o->busy_since, memory_order_seq_cst) &&
                !(ran && ran + RESCUE_NS > now))
                continue;
            if (!dl || dl > now + RESCUE_NS) dl = now + RESCUE_NS;
            /* we will look again anyway: nobody needs to wake us for that */
            if (untimed) atomic_fetch_sub_explicit(&p->untimed, 1, memory_order_relaxed);
            untimed = 0;
            break;
        }
        struct timespec ts, *tmo = NULL;
        if (dl) {
            uint64_t left = dl > now ? dl - now : 0;
            ts = (struct timespec){(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
            tmo = &ts;
        }
        atomic_fetch_sub_explicit(&a->runnable_ranks, 1, memory_order_relaxed);
        if (!tmo || tmo->tv_sec || tmo->tv_nsec)
            syscall(SYS_futex, (uint32_t *)&p->sleep.word, FUTEX_WAIT_PRIVATE, seq, tmo, NULL, 0);
        atomic_fetch_add_explicit(&a->runnable_ranks, 1, memory_order_relaxed);
        if (untimed) atomic_fetch_sub_explicit(&p->untimed, 1, memory_order_relaxed);
        c->woke_idle = 1;
    }
    atomic_fetch_sub_explicit(&p->sleep.sleepers, 1, memory_order_relaxed);
    return r;
}

static void *carrier_main(void *arg)
{
    struct carrier *c = arg;
    struct carrier_pool *p = c->pool;
    struct job *j = p->job;
    struct agent *a = j->agent;
    self = c;
    ctx_init_thread(&c->home);
    fault_thread_setup();
    if (job_wait_gate(j) != 0) {
        /* The job never starts here (it failed to start, or was cancelled before this carrier
         * got past the gate while others run): each carrier reports its own block as killed
         * and leaves. */
        for (uint32_t i = 0; i < c->n; i++) {
            rank_life(c->ranks[i], 0);
            atomic_store_explicit(&c->ranks[i]->carried->state, CR_DONE, memory_order_relaxed);
        }
        if (atomic_fetch_sub_explicit(&p->live, c->n, memory_order_acq_rel) == c->n)
            wake_sleepers(p);
    } else {
        /* the carrier counts as one runnable thread for the node's spin-or-yield choice */
        atomic_fetch_add_explicit(&a->runnable_ranks, 1, memory_order_relaxed);
        while (atomic_load_explicit(&p->live, memory_order_acquire) > 0) {
            struct rank *r = pick(c);
            if (!r) r = idle(c);
            if (r) run_rank(c, r);
        }
        atomic_fetch_sub_explicit(&a->runnable_ranks, 1, memory_order_relaxed);
    }
    fault_thread_done();
    self = NULL;
    return NULL;
}

/* ---- parking (called on a rank's context, through svc) ---------------------------------- */

/* The carrier whose rank context calls, or NULL: only a carried rank's own context parks (not
 * a thread the rank started, not an agent thread). */
static struct carrier *caller_carrier(void)
{
    struct carrier *c = self;
    return c && c->cur && c->cur == rank_current() ? c : NULL;
}

int carrier_park(int (*ready)(void *arg), void *arg, struct tmpi_sleepers *_Atomic *target)
{
    struct carrier *c = caller_carrier();
    if (!c) return -ENOTSUP;
    struct carried *k = c->cur->carried;
    /* seq_cst: a waker that does not see this sees the rank parked and ready (svc.h) */
    if (target) atomic_store_explicit(target, &c->pool->sleep, memory_order_seq_cst);
    k->ready = ready;
    k->ready_arg = arg;
    k->saved_errno = errno_get();
    k->parking = 1;
    ctx_switch(&k->ctx, &c->home);
    /* resumed, perhaps on another carrier: c is stale here */
    errno_set(k->saved_errno);
    return 0;
}

static int deadline_over(void *arg)
{
    struct carried *k = arg;
    return now_ns() >= atomic_load_explicit(&k->deadline, memory_order_relaxed);
}

int carrier_sleep(uint64_t deadline)
{
    struct carrier *c = caller_carrier();
    if (!c) return -ENOTSUP;
    struct carried *k = c->cur->carried;
    struct carrier_pool *p = c->pool;
    atomic_store_explicit(&k->deadline, deadline ? deadline : 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->sleeping, 1, memory_order_seq_cst);
    int r = carrier_park(deadline_over, k, NULL);
    atomic_fetch_sub_explicit(&p->sleeping, 1, memory_order_relaxed);
    atomic_store_explicit(&k->deadline, 0, memory_order_relaxed);
    return r;
}

static int always(void *arg)
{
    (void)arg;
    return 1;
}

void carrier_yield(void)
{
    /* always ready: the scheduler's round robin runs every other ready rank of the block first */
    (void)carrier_park(always, NULL, NULL);
}

/* ---- setting up and tearing down (job thread) ------------------------------------------- */

static int stack_new(struct carried *k, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t p = page > 0 ? (size_t)page : 4096;
    size = (size + p - 1) / p * p;
    k->map_len = size + p;
    k->map = mmap(NULL, k->map_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (k->map == MAP_FAILED) {
        k->map = NULL;
        return -errno;
    }
    /* guard page: an overflow faults (fault.c ends the rank) instead of running into memory;
     * one that costs no map where the kernel allows (stack_guard.h) */
    int g = stack_guard_install(k->map, p);
    if (g < 0) {
        int e = g;
        munmap(k->map, k->map_len);
        k->map = NULL;
        return e;
    }
    return 0;
}

/* The stacks and contexts: nothing runs on them once the carriers are joined. */
static void stacks_free(struct job *j)
{
    struct carrier_pool *p = j->cpool;
    for (uint32_t i = 0; p->carried && i < j->nprocs; i++) {
        struct carried *k = &p->carried[i];
        if (k->map) {
            ctx_destroy(&k->ctx);
            munmap(k->map, k->map_len);
            k->map = NULL;
        }
    }
}

void carriers_free(struct job *j)
{
    struct carrier_pool *p = j->cpool;
    if (!p) return;
    stacks_free(j);
    for (uint32_t i = 0; i < j->nprocs; i++)
        j->ranks[i].carried = NULL;
    free(p->carried);
    for (uint32_t i = 0; p->carriers && i < p->ncarriers; i++)
        free(p->carriers[i].moved);
    free(p->carriers);
    free(p->ranks);
    /* a thread a rank started may still end and wake the carriers (carrier_join.c) */
    pthread_mutex_lock(&j->children_mu);
    j->cpool = NULL;
    pthread_mutex_unlock(&j->children_mu);
    free(p);
}

uint32_t carrier_count(const struct job *j)
{
    uint32_t nc = (uint32_t)j->agent->ncpus;
    if (nc > j->nprocs) nc = j->nprocs;
    return nc ? nc : 1;
}

int carrier_cyclic(struct job *j, char *why, size_t whylen)
{
    const char *v = job_getenv(j, "TMPI_CARRIER_PLACEMENT");
    const char *w = v && *v ? config_carrier_placement_word(v) : j->agent->cfg.carrier_placement;
    if (!w) {
        snprintf(why, whylen, "TMPI_CARRIER_PLACEMENT=\"%.32s\": expected block or cyclic", v);
        return -EINVAL;
    }
    return strcmp(w, "cyclic") == 0;
}

static int prepare(struct job *j, char *reason, size_t rlen)
{
    uint32_t nc = carrier_count(j);
    struct carrier_pool *p = calloc(1, sizeof *p);
    j->cpool = p;
    if (p) {
        p->carried = calloc(j->nprocs, sizeof *p->carried);
        p->carriers = calloc(nc, sizeof *p->carriers);
        p->ranks = calloc(j->nprocs, sizeof *p->ranks);
    }
    if (!p || !p->carried || !p->carriers || !p->ranks) {
        snprintf(reason, rlen, "out of memory for %u rank contexts", j->nprocs);
        return -ENOMEM;
    }
    p->job = j;
    p->ncarriers = nc;
    p->nranks = j->nprocs;
    atomic_init(&p->live, j->nprocs);
    int cyclic = carrier_cyclic(j, reason, rlen);
    if (cyclic < 0) return cyclic;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t stack = j->agent->cfg.rank_stack_size;
    uint32_t first = 0;
    for (uint32_t ci = 0; ci < nc; ci++) {
        struct carrier *c = &p->carriers[ci];
        /* the first (nprocs % nc) carriers get one rank more */
        uint32_t n = j->nprocs / nc + (ci < j->nprocs % nc);
        c->pool = p;
        c->ranks = &p->ranks[first];
        c->n = n;
        for (uint32_t i = 0; i < n; i++) {
            /* cyclic: ranks ci, ci + nc, ...; block: the n ranks from first on */
            uint32_t at = cyclic ? ci + i * nc : first + i;
            struct rank *r = &j->ranks[at];
            struct carried *k = &p->carried[at];
            c->ranks[i] = r;
            k->home = c;
            atomic_init(&k->last, c);
            int rc = stack_new(k, stack);
            if (rc == 0)
                rc = ctx_init(&k->ctx, (char *)k->map + pg, k->map_len - pg, rank_entry, r);
            if (rc < 0) {
                snprintf(reason, rlen, "cannot make a context for rank %u: %s", at, strerror(-rc));
                return rc;
            }
            r->carried = k;
            r->info.carried = 1;
        }
        first += n;
    }
    return 0;
}

uint32_t carriers_start(struct job *j)
{
    char reason[256];
    int rc = prepare(j, reason, sizeof reason);
    uint32_t started = 0;
    if (rc == 0) {
        log_info("job %llu: %u ranks on %u carrier thread(s), switched in user space",
                 (unsigned long long)j->id, j->nprocs, j->cpool->ncarriers);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        /* the carrier's own stack runs only the scheduler and the fault handler's set-up */
        pthread_attr_setstacksize(&attr, 256 * 1024);
        for (uint32_t ci = 0; ci < j->cpool->ncarriers; ci++) {
            struct carrier *c = &j->cpool->carriers[ci];
            rc = pthread_create(&c->thread, &attr, carrier_main, c);
            if (rc != 0) {
                snprintf(reason, sizeof reason, "cannot start carrier %u: %s", ci, strerror(rc));
                rc = -rc;
                break;
            }
            c->started = 1;
            for (uint32_t i = 0; i < c->n; i++) {
                c->ranks[i]->thread = c->thread;
                c->ranks[i]->thread_started = 1;
            }
            started += c->n;
            /* --bind-to pins the carriers: a carried rank runs wherever it is resumed */
            rc = job_bind_thread(j, ci, c->thread, reason, sizeof reason);
            if (rc < 0) break;
        }
        pthread_attr_destroy(&attr);
    }
    if (rc == 0 && started == j->nprocs) job_bind_report(j);
    if (rc == 0) {
        CPU_ZERO(&j->cpool->cpus);
        for (uint32_t ci = 0; ci < j->cpool->ncarriers; ci++) {
            cpu_set_t one;
            if (pthread_getaffinity_np(j->cpool->carriers[ci].thread, sizeof one, &one) == 0)
                CPU_OR(&j->cpool->cpus, &j->cpool->cpus, &one);
        }
    }
    if (rc != 0) job_cancel(j, 1, reason);
    /* All or nothing: started carriers see the gate closed for good and end their ranks as
     * killed (each rank is reported once, by its carrier). */
    job_open_gate(j, rc == 0 && started == j->nprocs);
    return started;
}

void carriers_join(struct job *j)
{
    struct carrier_pool *p = j->cpool;
    if (!p) return;
    for (uint32_t ci = 0; ci < p->ncarriers; ci++)
        if (p->carriers[ci].started) pthread_join(p->carriers[ci].thread, NULL);
    stacks_free(j);
}
