/* carrier.c: ranks on carrier threads, switched in user space.  A job is built by hand (no
 * program is loaded: each rank's main is a function of this test) and run by carriers_start
 * like the job thread does.  Cases: carrier_wanted's choice; each carrier starts its own
 * block (contiguous by default, or every ncarriers-th rank); parking and handoff between ranks of
 * one carrier (ping-pong on one thread); yield's round robin; errno kept across a switch; a parked
 * rank woken from another thread through the sleepers protocol of svc.h after its carrier went to
 * sleep; sleeping ranks parked until their deadline, the others running meanwhile; a parked rank
 * rescued by another carrier while its own computes; a carrier woken for nothing beside a polling
 * rank sleeps again without spinning; exit (rank_end) and a crash of a carried rank end only that
 * rank, its carrier running the others on; a gate that never opens ends every rank as killed;
 * parking outside a carried rank refused; a stress of wakes across carriers racing with their sleep
 * (lost wake-ups); pthread_join on a carried rank parks it, not the carrier. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "agent.h"
#include "carrier.h"
#include "carrier_join.h"
#include "fault.h"
#include "host_app.h"
#include "job.h"
#include "log.h"
#include "rank.h"
#include "rank_argv.h"

/* Bound on any wait of the test: generous, the machine may be loaded (and sanitized). */
#define WAIT_NS (30ull * 1000000000ull)

static struct agent agent;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- a job built by hand ---- */

static char *argv0[] = {"carried", NULL};
static struct host_app app_host;
static struct job_app app = {
    .program_name = "carried", .argc = 1, .argv = argv0, .cwd = "/", .host = &app_host};

static struct job *job_make(uint32_t nprocs, int (*main_fn)(int, char **))
{
    struct job *j = calloc(1, sizeof *j);
    CHECK(j);
    j->agent = &agent;
    j->cfg = &agent.cfg;
    j->runnable_ranks = &agent.runnable_ranks;
    j->id = 1;
    j->nprocs = j->world_size = nprocs;
    /* the ranks' argument vectors come from the job's shared copy (rank_argv.h) */
    if (!app_host.args.offset) CHECK_EQ(rank_argv_src_init(&app_host.args, app.argc, app.argv), 0);
    j->apps = &app;
    j->napps = 1;
    j->nnodes = 1;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    pthread_mutex_init(&j->out_mu, NULL);
    pthread_mutex_init(&j->drain_mu, NULL);
    pthread_cond_init(&j->drain_cv, NULL);
    pthread_mutex_init(&j->client_mu, NULL);
    pthread_mutex_init(&j->children_mu, NULL);
    j->ranks = calloc(nprocs, sizeof *j->ranks);
    CHECK(j->ranks);
    for (uint32_t i = 0; i < nprocs; i++) {
        struct rank *r = &j->ranks[i];
        r->job = j;
        r->app = &app;
        r->image.main = main_fn;
        r->image.fd = -1;
        rank_vars_init(&r->vars); /* the loader's part (rank_vars.h) */
        r->info.rank = (int)i;
        r->info.size = (int)nprocs;
        r->info.local_rank = (int)i;
    }
    return j;
}

/* Runs the job's ranks on carriers (ncpus carriers at most) and waits until every one ended. */
static void job_run(struct job *j, int ncpus)
{
    agent.ncpus = ncpus;
    CHECK_EQ(carriers_start(j), j->nprocs);
    CHECK(j->cpool &&
          j->cpool->ncarriers == (uint32_t)(ncpus < (int)j->nprocs ? ncpus : (int)j->nprocs));
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += WAIT_NS / 1000000000u;
    pthread_mutex_lock(&j->mu);
    while (j->nfinished < j->nprocs)
        CHECK(pthread_cond_timedwait(&j->cv, &j->mu, &dl) != ETIMEDOUT,
              "every rank ended within the bound (%u of %u)", j->nfinished, j->nprocs);
    pthread_mutex_unlock(&j->mu);
    carriers_join(j);
    CHECK_EQ(atomic_load(&j->cpool->live), 0);
}

static void job_unmake(struct job *j)
{
    carriers_free(j);
    CHECK(j->cpool == NULL);
    for (uint32_t i = 0; i < j->nprocs; i++) {
        CHECK(j->ranks[i].carried == NULL);
        rank_argv_free(&j->ranks[i].args);
        rank_proc_free(&j->ranks[i].proc);
    }
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->out_mu);
    pthread_mutex_destroy(&j->drain_mu);
    pthread_cond_destroy(&j->drain_cv);
    pthread_mutex_destroy(&j->client_mu);
    CHECK(j->children == NULL, "every joinable thread was joined");
    pthread_mutex_destroy(&j->children_mu);
    free(j->ranks);
    free(j);
}

/* The carrier thread running the caller.  thread_self() is declared const: a compiler may
 * reuse its value across a switch, after which the rank may run on another carrier.  Through
 * a volatile pointer the call is made every time. */
static pthread_t (*volatile thread_self)(void) = pthread_self;

static int me(void)
{
    struct rank *r = rank_current();
    CHECK(r && carrier_running() == r, "a carried rank's context runs this");
    return r->info.rank;
}

/* Fails the rank (and so the test) when a wait of the test never ends. */
static void bound(uint64_t t0, const char *what)
{
    CHECK(now_ns() - t0 < WAIT_NS, "%s within the bound", what);
}

/* ---- carrier_wanted ---- */

static void test_wanted(void)
{
    struct job *j = job_make(4, NULL);
    char why[128];
    char *env[] = {NULL, NULL};
    j->env = env;
    agent.ncpus = 2;
    agent.cfg.rank_switching = "auto";
    agent.cfg.kernel_ranks_per_cpu = 1;
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 1); /* more ranks than CPUs */
    /* kernel_ranks_per_cpu: a thread per rank up to that many ranks a CPU */
    agent.cfg.kernel_ranks_per_cpu = 2;
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 0);
    CHECK(strstr(why, "at most 2 a CPU (kernel_ranks_per_cpu)"), "got \"%s\"", why);
    agent.ncpus = 1;
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 1);
    /* the job's TMPI_KERNEL_RANKS_PER_CPU wins, and a bad one fails the job */
    env[0] = "TMPI_KERNEL_RANKS_PER_CPU=4";
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 0);
    env[0] = "TMPI_KERNEL_RANKS_PER_CPU=3";
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 1);
    static const char *const bad[] = {"0", "1025", "-1", "4x", " 4", "many"};
    char var[64];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(var, sizeof var, "TMPI_KERNEL_RANKS_PER_CPU=%s", bad[i]);
        env[0] = var;
        CHECK_EQ(carrier_wanted(j, why, sizeof why), -EINVAL);
        CHECK(strstr(why, "expected 1 to 1024"), "%s: got \"%s\"", bad[i], why);
    }
    env[0] = NULL;
    agent.cfg.kernel_ranks_per_cpu = 1;
    agent.ncpus = 4;
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 0);
    CHECK(strstr(why, "4 ranks fit the 4 CPUs"), "got \"%s\"", why);
    agent.cfg.rank_switching = "user";
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 1);
    agent.cfg.rank_switching = "kernel";
    agent.ncpus = 1;
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 0);
    CHECK(strstr(why, "rank_switching = kernel"), "got \"%s\"", why);
    /* the job's variable wins over the agent's setting */
    env[0] = "TMPI_RANK_SWITCHING=user";
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 1);
    env[0] = "TMPI_RANK_SWITCHING=sometimes";
    CHECK_EQ(carrier_wanted(j, why, sizeof why), -EINVAL);
    CHECK(strstr(why, "expected auto, kernel or user"), "got \"%s\"", why);
    /* auto: programs with thread-local variables or threads of their own keep threads */
    env[0] = "TMPI_RANK_SWITCHING=auto";
    j->ranks[0].image.has_tls = 1;
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 0);
    CHECK(strstr(why, "thread-local"), "got \"%s\"", why);
    j->ranks[0].image.has_tls = 0;
    j->ranks[0].image.creates_threads = 1;
    CHECK_EQ(carrier_wanted(j, why, sizeof why), 0);
    CHECK(strstr(why, "starts threads"), "got \"%s\"", why);
    env[0] = NULL;
    agent.cfg.rank_switching = "auto";
    job_unmake(j);
}

/* ---- placement: each carrier starts the ranks of its own block ---- */

/* The tests below that say which carrier a rank starts on place contiguous blocks (the
 * default, named all the same). */
static char *block_env[] = {"TMPI_CARRIER_PLACEMENT=block", NULL};
static char *cyclic_env[] = {"TMPI_CARRIER_PLACEMENT=cyclic", NULL};

static pthread_t ran_on[8];

static int main_where(int argc, char **argv)
{
    CHECK(argc == 1 && strcmp(argv[0], "carried") == 0);
    ran_on[me()] = thread_self();
    return 0;
}

/* 5 ranks on 2 carriers; home[i]: the carrier rank i must start on */
static void check_placed(struct job *j, const int *home)
{
    struct carrier_pool *p = j->cpool;
    CHECK_EQ(p->carriers[0].n, 3);
    CHECK_EQ(p->carriers[1].n, 2);
    for (int i = 0; i < 5; i++) {
        CHECK(j->ranks[i].info.carried);
        CHECK(j->ranks[i].carried->home == &p->carriers[home[i]], "rank %d's home carrier %d", i,
              home[i]);
        CHECK_EQ(atomic_load(&j->ranks[i].carried->state), CR_DONE);
        CHECK(pthread_equal(ran_on[i], p->carriers[home[i]].thread),
              "rank %d started on its own carrier", i);
        CHECK_EQ(j->ranks[i].end_kind, RANK_END_CODE);
    }
    CHECK(!j->failed);
}

static void test_placement(void)
{
    /* block: ranks 0-2 and 3-4; cyclic: 0, 2, 4 and 1, 3 (pairs i, i + n/2 share a carrier) */
    static const int cyclic[5] = {0, 1, 0, 1, 0}, block[5] = {0, 0, 0, 1, 1};
    char *env[] = {NULL, NULL};
    struct job *j = job_make(5, main_where);
    job_run(j, 2);
    check_placed(j, block); /* the default */
    job_unmake(j);
    /* the agent's setting */
    agent.cfg.carrier_placement = "cyclic";
    j = job_make(5, main_where);
    job_run(j, 2);
    check_placed(j, cyclic);
    job_unmake(j);
    /* the job's variable wins */
    env[0] = "TMPI_CARRIER_PLACEMENT=block";
    j = job_make(5, main_where);
    j->env = env;
    job_run(j, 2);
    check_placed(j, block);
    job_unmake(j);
    agent.cfg.carrier_placement = "block";
    env[0] = "TMPI_CARRIER_PLACEMENT=cyclic";
    j = job_make(5, main_where);
    j->env = env;
    job_run(j, 2);
    check_placed(j, cyclic);
    job_unmake(j);
    /* a word that is neither: the job fails to start, and says why */
    env[0] = "TMPI_CARRIER_PLACEMENT=random";
    char why[128];
    j = job_make(5, main_where);
    j->env = env;
    CHECK_EQ(carrier_cyclic(j, why, sizeof why), -EINVAL);
    CHECK(strstr(why, "expected block or cyclic"), "got \"%s\"", why);
    agent.ncpus = 2;
    CHECK_EQ(carriers_start(j), 0);
    CHECK(j->failed && strstr(j->reason, "TMPI_CARRIER_PLACEMENT=\"random\""),
          "a bad TMPI_CARRIER_PLACEMENT fails the job, saying why (got \"%s\")", j->reason);
    carriers_join(j);
    job_unmake(j);
}

/* ---- parking and handoff on one carrier ---- */

#define ROUNDS 1000
static _Atomic int turn; /* whose turn: 0 or 1 */
static int ping_count[2];
static pthread_t ping_thread[2];

static int my_turn(void *arg)
{
    return atomic_load(&turn) == (int)(intptr_t)arg;
}

static int main_pingpong(int argc, char **argv)
{
    int r = me();
    ping_thread[r] = thread_self();
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_EQ(carrier_park(my_turn, (void *)(intptr_t)r, NULL), 0);
        CHECK(atomic_load(&turn) == r, "resumed only when ready");
        CHECK(pthread_equal(thread_self(), ping_thread[r]), "one carrier: never moved");
        ping_count[r]++;
        atomic_store(&turn, 1 - r);
    }
    return 0;
}

static void test_pingpong(void)
{
    struct job *j = job_make(2, main_pingpong);
    atomic_store(&turn, 0);
    job_run(j, 1);
    CHECK_EQ(ping_count[0], ROUNDS);
    CHECK_EQ(ping_count[1], ROUNDS);
    CHECK(pthread_equal(ping_thread[0], ping_thread[1]), "both ranks on the one carrier");
    job_unmake(j);
}

/* ---- yield: round robin among the ready ranks of a block; errno follows the rank ---- */

#define YIELDS 200
static int yield_log[3 * YIELDS];
static _Atomic int yield_n;

static int main_yield(int argc, char **argv)
{
    int r = me();
    for (int i = 0; i < YIELDS; i++) {
        yield_log[atomic_fetch_add(&yield_n, 1)] = r;
        errno = 1000 + r;
        carrier_yield();
        CHECK_EQ(errno, 1000 + r);
    }
    return 0;
}

static void test_yield(void)
{
    struct job *j = job_make(3, main_yield);
    atomic_store(&yield_n, 0);
    job_run(j, 1);
    CHECK_EQ(atomic_load(&yield_n), 3 * YIELDS);
    /* each yield lets every other ready rank run once: 0 1 2 0 1 2 ... */
    for (int i = 0; i < 3 * YIELDS; i++)
        CHECK_EQ(yield_log[i], i % 3);
    job_unmake(j);
}

/* ---- a wake from another thread, after the carrier went to sleep ---- */

static _Atomic int wake_flag;
static struct tmpi_sleepers *_Atomic wake_target;
static _Atomic int woken;

static int flag_set(void *arg)
{
    return atomic_load((_Atomic int *)arg) != 0;
}

static int main_wait_for_waker(int argc, char **argv)
{
    (void)me();
    CHECK_EQ(carrier_park(flag_set, &wake_flag, &wake_target), 0);
    CHECK(atomic_load(&wake_flag));
    atomic_store(&woken, 1);
    return 0;
}

/* svc.h's protocol for a waker: make ready() true (seq_cst), then, if a carrier sleeps,
 * bump the word and wake them all. */
static void *waker(void *arg)
{
    uint64_t t0 = now_ns();
    struct tmpi_sleepers *s;
    while ((s = atomic_load(&wake_target)) == NULL || atomic_load(&s->sleepers) == 0) {
        /* the real event (the carrier asleep) has no notification: look every millisecond */
        if (now_ns() - t0 > WAIT_NS) return (void *)1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    atomic_store_explicit(&wake_flag, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&s->sleepers, memory_order_seq_cst)) {
        atomic_fetch_add_explicit(&s->word, 1, memory_order_seq_cst);
        syscall(SYS_futex, (uint32_t *)&s->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
    return NULL;
}

static void test_wake(void)
{
    struct job *j = job_make(1, main_wait_for_waker);
    atomic_store(&wake_flag, 0);
    atomic_store(&wake_target, NULL);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, waker, NULL), 0);
    job_run(j, 1);
    void *rc;
    CHECK_EQ(pthread_join(t, &rc), 0);
    CHECK(rc == NULL, "the carrier went to sleep (sleepers counted) before the bound");
    CHECK(atomic_load(&woken));
    CHECK(atomic_load(&wake_target) == &j->cpool->sleep, "the pool's sleep record published");
    job_unmake(j);
}

/* ---- sleeping ranks: parked until their deadline, the others run meanwhile ---- */

#define SLEEP_NS 20000000ull
static _Atomic int others_ran;
static uint64_t slept_at, woke_at;

static int main_sleep(int argc, char **argv)
{
    int r = me();
    if (r == 0) {
        slept_at = now_ns();
        CHECK_EQ(carrier_sleep(slept_at + SLEEP_NS), 0);
        woke_at = now_ns();
        CHECK(woke_at >= slept_at + SLEEP_NS, "not woken before the deadline");
        return 0;
    }
    /* rank 1 shares the carrier: it runs while rank 0 sleeps */
    atomic_fetch_add(&others_ran, 1);
    return 0;
}

static int main_all_sleep(int argc, char **argv)
{
    (void)me();
    uint64_t t = now_ns();
    /* nothing else to run: the carrier sleeps with the deadline as its futex timeout */
    CHECK_EQ(carrier_sleep(t + SLEEP_NS), 0);
    CHECK(now_ns() >= t + SLEEP_NS);
    return 0;
}

static void test_sleep(void)
{
    struct job *j = job_make(2, main_sleep);
    atomic_store(&others_ran, 0);
    job_run(j, 1);
    CHECK_EQ(atomic_load(&others_ran), 1);
    CHECK(woke_at >= slept_at + SLEEP_NS);
    job_unmake(j);
    j = job_make(3, main_all_sleep);
    job_run(j, 1);
    job_unmake(j);
}

/* ---- rescue: a parked rank moves to an idle carrier while its own computes ---- */

static _Atomic int phase;
static _Atomic int rescued;
static pthread_t busy_thread, rescued_thread;

static int always(void *arg)
{
    return 1;
}

static int main_rescue(int argc, char **argv)
{
    int r = me();
    uint64_t t0 = now_ns();
    if (r == 0) {
        /* let rank 1 start and park, then compute until it ran again */
        while (atomic_load(&phase) == 0) {
            carrier_yield();
            bound(t0, "rank 1 started");
        }
        busy_thread = thread_self();
        atomic_store(&phase, 2);
        while (!atomic_load(&rescued))
            bound(t0, "rank 1 rescued by the other carrier while rank 0 computes");
    } else if (r == 1) {
        atomic_store(&phase, 1);
        CHECK_EQ(carrier_park(always, NULL, NULL), 0);
        while (atomic_load(&phase) != 2) {
            /* resumed before rank 0 got busy: park again */
            CHECK_EQ(carrier_park(always, NULL, NULL), 0);
            bound(t0, "rank 0 busy");
        }
        rescued_thread = thread_self();
        atomic_store(&rescued, 1);
    }
    return 0;
}

static void test_rescue(void)
{
    /* 3 ranks on 2 carriers: ranks 0 and 1 share carrier 0, rank 2 ends at once */
    struct job *j = job_make(3, main_rescue);
    j->env = block_env;
    atomic_store(&phase, 0);
    atomic_store(&rescued, 0);
    job_run(j, 2);
    CHECK(atomic_load(&rescued));
    CHECK(!pthread_equal(busy_thread, rescued_thread), "rank 1 ran beside the busy carrier");
    job_unmake(j);
}

/* ---- a carrier woken for nothing sleeps again without spinning ---- */

/* Rank 0 switches at every call for POLL_NS (a loop of MPI_Test) while rank 1, on the other
 * carrier, waits for a flag rank 0 sets at the end.  Carrier 1 spins once, then sleeps; every
 * wake that finds nothing ready (its rescue deadline while carrier 0 runs, or carrier 0
 * starting a run) must send it back to sleep without a spin.  It used to spin after each:
 * woken at every switch of rank 0, the idle carriers of a job took the cores from the ranks. */
#define POLL_NS 50000000ull
static _Atomic int poll_flag;

static int main_poll_beside_parked(int argc, char **argv)
{
    if (me() == 0) {
        uint64_t t0 = now_ns();
        while (now_ns() - t0 < POLL_NS)
            carrier_yield();
        /* svc.h's protocol for a waker */
        atomic_store_explicit(&poll_flag, 1, memory_order_seq_cst);
        carrier_wake(rank_current()->job->cpool);
        return 0;
    }
    CHECK_EQ(carrier_park(flag_set, &poll_flag, &wake_target), 0);
    CHECK(atomic_load(&poll_flag));
    return 0;
}

static void test_woken_for_nothing(void)
{
    struct job *j = job_make(2, main_poll_beside_parked);
    j->env = block_env;
    atomic_store(&poll_flag, 0);
    atomic_store(&wake_target, NULL);
    job_run(j, 2);
    /* carrier 1: one spin after rank 1 parked, one after it ended; none for the wakes */
    uint64_t spins = j->cpool->carriers[1].spins;
    CHECK(spins <= 3, "carrier 1 spun %llu times beside a polling rank", (unsigned long long)spins);
    job_unmake(j);
}

/* ---- a look at a rank another carrier has claimed is not lost ---- */

/* The window of carrier.c's wake-up invariant, held open.  Ranks 0 and 1 live on carrier 0;
 * rank 1 parks, rank 0 computes past the rescue time, so carrier 1 claims rank 1 and calls its
 * ready().  That call reads the flag (not set), then sets it and wakes by svc.h's protocol (no
 * carrier sleeps: nobody to wake), lets rank 0 end, and returns its stale answer only once
 * carrier 0 counted itself asleep: carrier 0's last look found rank 1 claimed.  Had that look
 * counted for nothing, carrier 1 would park rank 1 again and both carriers would sleep with no
 * deadline for good (nobody else runs a rank); the claimer must look again. */
static _Atomic int relook_flag, relook_stage;
static pthread_t relook_parked_on;

static int relook_ready(void *arg)
{
    int v = atomic_load_explicit(&relook_flag, memory_order_seq_cst);
    int stage = 1;
    if (v || pthread_equal(pthread_self(), relook_parked_on) ||
        !atomic_compare_exchange_strong(&relook_stage, &stage, 2))
        return v;
    /* the rescuer's first call: the wake lands after its read */
    struct tmpi_sleepers *s = atomic_load(&wake_target);
    int asleep = atomic_load_explicit(&s->sleepers, memory_order_seq_cst);
    atomic_store_explicit(&relook_flag, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&s->sleepers, memory_order_seq_cst)) {
        atomic_fetch_add_explicit(&s->word, 1, memory_order_seq_cst);
        syscall(SYS_futex, (uint32_t *)&s->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
    atomic_store(&relook_stage, 3); /* rank 0 stops computing and ends */
    uint64_t t0 = now_ns();
    while (atomic_load_explicit(&s->sleepers, memory_order_seq_cst) <= asleep)
        bound(t0, "carrier 0 counted itself asleep");
    /* from its count to its futex wait: its last look, then a few system calls */
    struct timespec ms = {0, 5000000};
    nanosleep(&ms, NULL);
    return v;
}

static int main_relook(int argc, char **argv)
{
    int r = me();
    uint64_t t0 = now_ns();
    if (r == 0) {
        while (atomic_load(&relook_stage) == 0) {
            carrier_yield(); /* rank 1 parks */
            bound(t0, "rank 1 parked");
        }
        while (atomic_load(&relook_stage) != 3)
            bound(t0, "carrier 1 claimed rank 1 while rank 0 computes");
    } else if (r == 1) {
        relook_parked_on = thread_self();
        atomic_store(&relook_stage, 1);
        CHECK_EQ(carrier_park(relook_ready, NULL, &wake_target), 0);
        CHECK(atomic_load(&relook_flag), "resumed once ready");
    }
    return 0;
}

static void test_relook(void)
{
    /* 3 ranks on 2 carriers: ranks 0 and 1 on carrier 0, rank 2 ends at once */
    struct job *j = job_make(3, main_relook);
    j->env = block_env;
    atomic_store(&relook_flag, 0);
    atomic_store(&relook_stage, 0);
    atomic_store(&wake_target, NULL);
    job_run(j, 2);
    CHECK_EQ(atomic_load(&relook_stage), 3);
    for (uint32_t i = 0; i < 3; i++)
        CHECK_EQ(j->ranks[i].end_kind, RANK_END_CODE);
    job_unmake(j);
}

/* ---- stress: wakes across carriers land while the peer's carrier goes to sleep ---- */

/* Pairs of ranks (r, r + n/2: with contiguous blocks, mostly on different carriers) pass a
 * ball back and forth, each parked while it is not its turn and woken by svc.h's waker
 * protocol.  Before each throw a rank waits a random time: none (the peer's carrier is then
 * still spinning), about the spin budget (it is falling asleep: a wake between its last look
 * and its futex wait is the lost wake-up this is after), a sleep of its own (deadlines), or
 * now and then past the rescue time (ranks move between carriers and live on another one's
 * list).  A lost wake-up leaves both carriers asleep for good: the bound fails the test. */
#define STRESS_PAIRS_MAX 8
#define STRESS_ROUNDS 1000

static _Atomic uint32_t ball[STRESS_PAIRS_MAX];
static struct tmpi_sleepers *_Atomic stress_target;

struct ball_turn {
    _Atomic uint32_t *ball;
    uint32_t want;
};

static int ball_at(void *arg)
{
    const struct ball_turn *t = arg;
    return atomic_load_explicit(t->ball, memory_order_seq_cst) == t->want;
}

static void compute_for(uint64_t ns)
{
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < ns)
        ;
}

static int main_stress(int argc, char **argv)
{
    int r = me(), half = rank_current()->info.size / 2;
    int pair = r % half, side = r / half;
    unsigned seed = (unsigned)r * 7919u + 1u;
    for (uint32_t i = (uint32_t)side; i < 2 * STRESS_ROUNDS; i += 2) {
        struct ball_turn t = {&ball[pair], i};
        uint64_t t0 = now_ns();
        while (!ball_at(&t)) {
            CHECK_EQ(carrier_park(ball_at, &t, &stress_target), 0);
            bound(t0, "the peer's throw woke this rank");
        }
        seed = seed * 1103515245u + 12345u;
        unsigned how = (seed >> 16) % 128;
        if (how == 0)
            compute_for(6000000); /* past the rescue time (carrier.c RESCUE_NS) */
        else if (how < 48)
            compute_for(how * agent.cfg.spin_ns / 24);
        else if (how < 56)
            CHECK_EQ(carrier_sleep(now_ns() + how * 2000), 0);
        atomic_store_explicit(&ball[pair], i + 1, memory_order_seq_cst);
        struct tmpi_sleepers *s = atomic_load_explicit(&stress_target, memory_order_seq_cst);
        if (s && atomic_load_explicit(&s->sleepers, memory_order_seq_cst)) {
            atomic_fetch_add_explicit(&s->word, 1, memory_order_seq_cst);
            syscall(SYS_futex, (uint32_t *)&s->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
        }
    }
    return 0;
}

static void test_stress(uint32_t nranks, int ncpus, char **env)
{
    CHECK(nranks % 2 == 0 && nranks / 2 <= STRESS_PAIRS_MAX);
    struct job *j = job_make(nranks, main_stress);
    j->env = env;
    for (int i = 0; i < STRESS_PAIRS_MAX; i++)
        atomic_store(&ball[i], 0);
    atomic_store(&stress_target, NULL);
    job_run(j, ncpus);
    for (uint32_t i = 0; i < nranks / 2; i++)
        CHECK_EQ(atomic_load(&ball[i]), 2 * STRESS_ROUNDS);
    for (uint32_t i = 0; i < nranks; i++)
        CHECK_EQ(j->ranks[i].end_kind, RANK_END_CODE);
    job_unmake(j);
}

/* Ranks against a thread outside the carriers (as libtmpi's receive daemons and a rank's own
 * threads are): each rank throws its ball to the echo thread and parks; the echo thread
 * throws it back after a random wait around the spin budget and wakes by the protocol.  No
 * other carrier is busy meanwhile, so a carrier that misses the wake sleeps without a deadline:
 * the lost wake-up is a hang, not a delay the rescue deadline hides. */
static _Atomic uint32_t echo_seq; /* futex word: bumped by a rank that threw */

static int main_echo(int argc, char **argv)
{
    _Atomic uint32_t *b = &ball[me()];
    for (uint32_t i = 0; i < 2 * STRESS_ROUNDS; i += 2) {
        struct ball_turn t = {b, i};
        uint64_t t0 = now_ns();
        while (!ball_at(&t)) {
            CHECK_EQ(carrier_park(ball_at, &t, &stress_target), 0);
            bound(t0, "the echo thread's throw woke this rank");
        }
        atomic_store_explicit(b, i + 1, memory_order_seq_cst);
        atomic_fetch_add_explicit(&echo_seq, 1, memory_order_seq_cst);
        syscall(SYS_futex, (uint32_t *)&echo_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    return 0;
}

static void *echo(void *arg)
{
    uint32_t nballs = (uint32_t)(uintptr_t)arg, done = 0;
    unsigned seed = 12345;
    uint64_t t0 = now_ns();
    while (done < nballs) {
        uint32_t seq = atomic_load_explicit(&echo_seq, memory_order_seq_cst);
        int threw = 0;
        done = 0;
        for (uint32_t k = 0; k < nballs; k++) {
            uint32_t v = atomic_load_explicit(&ball[k], memory_order_seq_cst);
            if (v >= 2 * STRESS_ROUNDS) done++;
            if (!(v & 1)) continue;
            seed = seed * 1103515245u + 12345u;
            compute_for(((seed >> 16) % 48) * agent.cfg.spin_ns / 24);
            atomic_store_explicit(&ball[k], v + 1, memory_order_seq_cst);
            struct tmpi_sleepers *s = atomic_load_explicit(&stress_target, memory_order_seq_cst);
            if (s && atomic_load_explicit(&s->sleepers, memory_order_seq_cst)) {
                atomic_fetch_add_explicit(&s->word, 1, memory_order_seq_cst);
                syscall(SYS_futex, (uint32_t *)&s->word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL,
                        0);
            }
            threw = 1;
        }
        if (now_ns() - t0 > WAIT_NS) return (void *)1;
        struct timespec sec = {1, 0}; /* the rank's throw wakes us; the bound is looked at */
        if (!threw && done < nballs)
            syscall(SYS_futex, (uint32_t *)&echo_seq, FUTEX_WAIT_PRIVATE, seq, &sec, NULL, 0);
    }
    return NULL;
}

static void test_echo(uint32_t nranks, int ncpus)
{
    CHECK(nranks <= STRESS_PAIRS_MAX);
    struct job *j = job_make(nranks, main_echo);
    for (int i = 0; i < STRESS_PAIRS_MAX; i++)
        atomic_store(&ball[i], 0);
    atomic_store(&stress_target, NULL);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, echo, (void *)(uintptr_t)nranks), 0);
    job_run(j, ncpus);
    void *rc;
    CHECK_EQ(pthread_join(t, &rc), 0);
    CHECK(rc == NULL, "the echo thread saw every ball home within the bound");
    for (uint32_t i = 0; i < nranks; i++)
        CHECK_EQ(atomic_load(&ball[i]), 2 * STRESS_ROUNDS);
    job_unmake(j);
}

/* ---- join: a rank that joins its thread parks; its carrier runs the others meanwhile ---- */

static pthread_mutex_t join_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t join_cv = PTHREAD_COND_INITIALIZER;
static int join_flag;

/* A thread of rank 0 that ends only once rank 1 ran: rank 1 shares rank 0's only carrier. */
static void *wait_for_rank1(void *arg)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += WAIT_NS / 1000000000u;
    int rc = 0;
    pthread_mutex_lock(&join_mu);
    while (!join_flag && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&join_cv, &join_mu, &dl);
    int ok = join_flag;
    pthread_mutex_unlock(&join_mu);
    return ok ? arg : NULL;
}

static int main_join(int argc, char **argv)
{
    if (me() == 0) {
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, wait_for_rank1, (void *)&join_flag), 0);
        void *ret = NULL;
        errno = 1234;
        CHECK_EQ(pthread_join(t, &ret), 0);
        CHECK(ret == &join_flag, "the thread saw rank 1 run while rank 0 joined it");
        CHECK_EQ(errno, 1234);
    } else {
        pthread_mutex_lock(&join_mu);
        join_flag = 1;
        pthread_cond_broadcast(&join_cv);
        pthread_mutex_unlock(&join_mu);
    }
    return 0;
}

static void test_join(void)
{
    struct job *j = job_make(2, main_join);
    join_flag = 0;
    job_run(j, 1);
    for (uint32_t i = 0; i < 2; i++)
        CHECK_EQ(j->ranks[i].end_kind, RANK_END_CODE);
    CHECK_EQ(atomic_load(&j->child_threads), 0);
    job_unmake(j);
}

/* ---- stress: ranks that start and join threads, the threads' ends racing the carriers ---- */

/* Every rank starts a thread and joins it, over and over: the join parks the rank, and the
 * thread's end (outside the carriers, as a rank's own threads are) is its only wake-up.  The
 * thread lives a random time around the carriers' spin budget (it ends while its rank's
 * carrier falls asleep), and now and then a rank computes past the rescue time first, so that
 * the other carriers claim ranks parked on its carrier and look at their ready() while their
 * own carrier comes home and goes to sleep.  Nothing else wakes a carrier: all ranks parked, a
 * lost wake-up is a hang and the bound fails the test. */
#define JOIN_ROUNDS 400

static void *join_child(void *arg)
{
    compute_for((uint64_t)(uintptr_t)arg);
    return arg;
}

static int main_join_stress(int argc, char **argv)
{
    unsigned seed = (unsigned)me() * 40503u + 7u;
    for (int i = 0; i < JOIN_ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned how = (seed >> 16) % 64;
        if (how == 0) compute_for(6000000); /* past the rescue time (carrier.c RESCUE_NS) */
        uintptr_t life = 1 + (how % 48) * agent.cfg.spin_ns / 24;
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, join_child, (void *)life), 0);
        void *ret = NULL;
        CHECK_EQ(pthread_join(t, &ret), 0);
        CHECK(ret == (void *)life, "joined the thread this rank started");
    }
    return 0;
}

static void test_join_stress(uint32_t nranks, int ncpus)
{
    struct job *j = job_make(nranks, main_join_stress);
    job_run(j, ncpus);
    for (uint32_t i = 0; i < nranks; i++)
        CHECK_EQ(j->ranks[i].end_kind, RANK_END_CODE);
    CHECK_EQ(atomic_load(&j->child_threads), 0);
    job_unmake(j);
}

/* ---- a rank that exits or crashes ends alone; its carrier runs the others on ---- */

static volatile int *volatile null_ptr; /* read at run time: the compiler sees no UB */
/* neither UBSan nor TSan (the same store from two ranks is no data race to report) */
__attribute__((noinline, no_sanitize("undefined", "thread"))) static void crash(void)
{
    *null_ptr = 1;
}

static _Atomic int finished_normally;
static volatile int deep_sink;

/* Deeper frames after a crash: a carrier whose stack shadow was left poisoned by the fault's
 * jump fails here under ASan. */
__attribute__((noinline)) static int deep(int n)
{
    char buf[256];
    memset(buf, n, sizeof buf);
    return n ? deep(n - 1) + buf[n % sizeof buf] : buf[0];
}

static int main_ends(int argc, char **argv)
{
    int r = me();
    carrier_yield(); /* every rank started before any ends */
    if (r == 1) rank_end(RANK_END_CODE, 4, NULL);
    if (r == 2) crash();
    carrier_yield();
    deep_sink = deep(20);
    atomic_fetch_add(&finished_normally, 1);
    return 0;
}

static void test_ends(void)
{
    CHECK_EQ(fault_init(), 0);
    struct job *j = job_make(5, main_ends);
    atomic_store(&finished_normally, 0);
    job_run(j, 1);
    CHECK_EQ(atomic_load(&finished_normally), 3);
    CHECK_EQ(j->ranks[1].end_kind, RANK_END_CODE);
    CHECK_EQ(j->ranks[1].end_code, 4);
    CHECK_EQ(j->ranks[2].end_kind, RANK_END_FAULT);
    CHECK_EQ(j->ranks[2].end_code, 128 + SIGSEGV);
    CHECK(strstr(j->ranks[2].end_msg, "killed by signal 11"), "got \"%s\"", j->ranks[2].end_msg);
    /* the first failure is the job's */
    CHECK(j->failed);
    CHECK(j->fail_rank == 1 || j->fail_rank == 2, "rank 1 or 2 failed the job, got %d",
          j->fail_rank);
    job_unmake(j);
}

/* ---- a gate that never opens: every rank ends killed, no main runs ---- */

static _Atomic int mains_run;

static int main_count(int argc, char **argv)
{
    atomic_fetch_add(&mains_run, 1);
    return 0;
}

static void test_gate_closed(void)
{
    struct job *j = job_make(4, main_count);
    atomic_store(&mains_run, 0);
    atomic_store(&j->cancelled, 1); /* cancelled before the gate opens */
    job_run(j, 2);
    CHECK_EQ(atomic_load(&mains_run), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(j->ranks[i].end_kind, RANK_END_KILLED);
    job_unmake(j);
}

static int never(void *arg)
{
    return 0;
}

int main(void)
{
    log_set_level(LOG_CRIT);
    CHECK_EQ(config_defaults(&agent.cfg), 0);
    agent.cfg.spin_ns = 100000; /* carriers go to sleep soon: their sleep is under test too */
    agent.cfg.rank_stack_size = 256 * 1024;

    /* not a carried rank: nothing parks, nothing runs on a carrier */
    CHECK(carrier_running() == NULL);
    CHECK_EQ(carrier_park(never, NULL, NULL), -ENOTSUP);
    CHECK_EQ(carrier_sleep(now_ns() + 1000), -ENOTSUP);

    test_wanted();
    test_placement();
    test_pingpong();
    test_yield();
    test_wake();
    test_sleep();
    test_rescue();
    test_woken_for_nothing();
    test_relook();
    test_stress(2, 2, block_env); /* one rank per carrier: nothing else wakes a carrier */
    test_stress(4, 2, block_env);
    test_stress(8, 2, block_env);
    test_stress(6, 3, block_env);
    test_stress(8, 2, cyclic_env); /* the pairs share a carrier, rescues move them apart */
    test_echo(1, 1);
    test_echo(2, 2);
    test_echo(4, 2);
    test_join();
    test_join_stress(2, 2);
    test_join_stress(6, 2);
    test_join_stress(6, 3);
    test_ends();
    test_gate_closed();
    config_free(&agent.cfg);
    return 0;
}
