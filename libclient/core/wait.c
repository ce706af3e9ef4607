/* wait.c — adaptive spin-then-block waiting (wait.h has the protocol). */
#include "wait.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "asym_fence.h"
#include "job.h"
#include "mstate.h"
#include "relax.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *w, uint32_t val)
{
    /* EINTR / EAGAIN just mean "look again"; the caller loops. */
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void bump(_Atomic uint32_t *t, memory_order mo)
{
    atomic_fetch_add_explicit(t, 1, mo);
    futex_wake_all(t);
}

/* The calling thread, as wait.h's parked_on names it: a carrier runs many ranks' contexts,
 * and all of them see its mark. */
static __thread char tm_thread_mark __attribute__((tls_model("initial-exec")));

/* A wake goes to the rank's own word when a thread sleeps on it (the rank's, or under
 * THREAD_MULTIPLE any of the threads it created), and to its job's carriers when its context
 * is parked and a carrier sleeps (or always, with force).  Not at all when the rank's context
 * parked on the calling thread and no thread of it sleeps (wait.h): this carrier runs, and
 * looks at the rank in its picks, its last look before it sleeps included.  If the rank has
 * moved on since (a rescue) it parks again elsewhere, and that carrier looks at it before it
 * sleeps, after a fence that either shows it our event or shows us its new parked_on.  Nor
 * does such a wake count in `wakes`: the rank's carrier resumes it before every rank of the
 * job could be seen asleep twice (mstate.h). */
static void wake(struct tm_waker *w, int force, memory_order mo)
{
    int s = atomic_load_explicit(&w->sleeping, memory_order_seq_cst);
    if (!force && s == TM_WAKER_PARKED &&
        atomic_load_explicit(&w->parked_on, memory_order_seq_cst) == &tm_thread_mark)
        return;
    atomic_fetch_add_explicit(&w->wakes, 1, memory_order_seq_cst); /* mstate.h */
    /* seq_cst: against the agent's store of it before a first park (svc.h) */
    struct tmpi_sleepers *q = atomic_load_explicit(&w->carriers, memory_order_seq_cst);
    if (!q || force || (s & ~TM_WAKER_PARKED)) bump(&w->wake_seq, mo);
    if (q && (force || atomic_load_explicit(&q->sleepers, memory_order_seq_cst) != 0))
        bump(&q->word, mo);
}

void tm_wake_slow(struct tm_waker *w)
{
    wake(w, 0, memory_order_release);
}

void tm_wake_force(struct tm_waker *w)
{
    wake(w, 1, memory_order_seq_cst);
}

/* A cancelled job's thread ends here.  A helper (coll_net_nb.c) is not a rank: in the agent
 * it counts as a thread its creating rank started (svc rank_exit ends such a thread), and
 * where nobody claims it, it just ends; it holds no lock while it waits. */
static void end_cancelled(struct tm_rank *me)
{
    const struct tmpi_svc *svc = me->job->svc;
    if (me->helper && !svc->rank_self()) pthread_exit(NULL);
    svc->rank_exit(1);
}

static void check_cancel(struct tm_rank *me)
{
    struct tm_job *j = me->job;
    if (TM_UNLIKELY(atomic_load_explicit(&j->cancelled, memory_order_acquire))) end_cancelled(me);
    if (TM_UNLIKELY(j->wait_net)) j->wait_net->check(me);
}

void tm_wait_check_cancel(struct tm_rank *me)
{
    check_cancel(me);
}

/* Spin phase of a rank whose job spans nodes: it reads the job's links itself, and while it
 * does the receive daemons are not woken for them (svc net_hold): on a busy node a daemon
 * wake-up per message costs more than the message.  1 if cond became true. */
static int spin_net(struct tm_rank *me, tm_cond_fn cond, void *arg, void *net)
{
    struct tm_job *j = me->job;
    const struct tmpi_svc *svc = j->svc;
    uint64_t start = now_ns(), first = start;
    int ok = 0;
    if (svc->net_hold) svc->net_hold(net, 1);
    int moved = 0;
    for (unsigned i = 1;; i++) {
        int m = svc->net_poll(net);
        moved |= m;
        if (m && cond(arg)) { /* what we read was it: no yield on the way out */
            ok = 1;
            break;
        }
        /* Give the core to a peer that shares it, not to a program that keeps it
         * (net_yield.h). */
        if (tm_net_yield_turn(&me->net_yield, i)) {
            uint64_t y = now_ns();
            if (tm_net_yield_allowed(&me->net_yield, y)) {
                sched_yield();
                tm_net_yield_took(&me->net_yield, y, now_ns());
            }
        }
        if (cond(arg)) {
            ok = 1;
            break;
        }
        /* A poll is a system call per link: look at the clock more often than when idle. */
        if ((i & 7) == 0) {
            /* The budget counts from the last time anything moved: a large message streams
             * in (or out) for far longer than the budget, and handing it to the daemon
             * mid-way costs a daemon wake-up per socket buffer's worth and a rank wake-up. */
            uint64_t t = now_ns();
            if (moved) start = t, moved = 0;
            if (t - start >= j->spin_ns) break;
            /* a long transfer keeps the spin going: it is a wait all the same */
            if (TM_UNLIKELY(t - first >= TM_MST_SPIN_NS) && !me->mst.published && tm_mst_on(me))
                tm_mst_publish(me, first);
            if (atomic_load_explicit(&j->cancelled, memory_order_relaxed)) break;
            if ((i & 255) == 0 && svc->runnable_ranks() > svc->ncpus) break;
        }
    }
    /* The links stay quiet a little longer in case we wait again soon, unless a thread of the
     * job waits without reading them and needs the daemons to read for it (seq_cst against
     * its increment: one of us sees the other).  A spin that failed releases in tm_wait. */
    if (svc->net_hold) svc->net_hold(net, 0);
    ok = ok || cond(arg);
    if (ok && svc->net_release && atomic_load_explicit(&j->net_nonreaders, memory_order_seq_cst))
        svc->net_release(net);
    return ok;
}

/* What ends a wait besides its condition (check_cancel acts on it).  Looked at again after the
 * rank said it sleeps: a protocol error counted between check_cancel and then woke nobody (its
 * wake-up came before the rank read the sequence, or before it parked), and the rank slept for
 * ever (TSan run of test_net_p2p's protocol_error_aborts). */
static int must_end(struct tm_job *j)
{
    return atomic_load_explicit(&j->cancelled, memory_order_seq_cst) ||
           (j->wait_net && j->wait_net->failed(j));
}

/* Sleeps on the rank's waker until cond holds (or the job is cancelled: does not return). */
static void block(struct tm_rank *me, tm_cond_fn cond, void *arg)
{
    struct tm_job *j = me->job;
    const struct tmpi_svc *svc = j->svc;
    struct tm_waker *w = &me->waker;
    /* The agent counts the rank runnable or not; a thread the rank created does not change
     * that (the rank's own thread may be running). */
    const int counted = !me->helper && !tm_cur_child;
    const int mst = tm_mst_on(me);
    /* Only a wait that outlasts the spin says what it waits for: publishing costs a clock
     * read and a lock, which the latency path cannot afford (mstate.h). */
    if (mst && !me->mst.published) tm_mst_publish(me, 0);
    for (;;) {
        check_cancel(me);
        if (TM_UNLIKELY(j->wait_net)) j->wait_net->idle(me);
        uint32_t seq = atomic_load_explicit(&w->wake_seq, memory_order_acquire);
        /* a count: under THREAD_MULTIPLE several threads of the rank may sleep on wake_seq */
        atomic_fetch_add_explicit(&w->sleeping, 1, memory_order_seq_cst);
        /* a fast-box sender publishes without a fence (asym_fence.h) */
        if (j->asym_fence) tmpi_asym_heavy();
        /* between counting itself and the last look (mstate.h) */
        uint32_t seen = atomic_load_explicit(&w->wakes, memory_order_seq_cst);
        if (cond(arg) || must_end(j)) {
            atomic_fetch_sub_explicit(&w->sleeping, 1, memory_order_relaxed);
            check_cancel(me);
            return;
        }
        if (counted) svc->rank_blocking(-1);
        if (mst) tm_mst_asleep(me, seen);
        futex_wait(&w->wake_seq, seq);
        if (mst) tm_mst_awake(me);
        if (counted) svc->rank_blocking(+1);
        atomic_fetch_sub_explicit(&w->sleeping, 1, memory_order_relaxed);
        if (me->helper ? atomic_load_explicit(&j->cancelled, memory_order_acquire)
                       : svc->job_cancelled())
            end_cancelled(me);
        if (cond(arg)) return;
    }
}

/* Spin phase of every other wait.  With a core for every runnable rank: spin.
 * Oversubscribed: give the core away, for as long as the same budget lasts.  The peer we wait
 * for usually runs in those slices, which is far cheaper than a futex round trip; and a core
 * left idle by sleepers is expensive to wake again (on a virtual machine an idle vCPU costs an
 * inter-processor interrupt and a host reschedule, ~20 us, measured: ring hop at 4 ranks on 2
 * cores 25 us when every waiter slept).  A yield is a system call: look at the clock more
 * often then.  1 if cond became true. */
static int spin(struct tm_rank *me, tm_cond_fn cond, void *arg)
{
    struct tm_job *j = me->job;
    const struct tmpi_svc *svc = j->svc;
    int over = svc->runnable_ranks() > svc->ncpus;
    unsigned check = over ? 7 : 63;
    uint64_t start = now_ns();
    for (unsigned i = 1;; i++) {
        if (over)
            sched_yield();
        else
            tm_cpu_relax();
        if (cond(arg)) return 1;
        if ((i & check) == 0) {
            if (now_ns() - start >= j->spin_ns) return 0;
            check_cancel(me);
            if (!over && (i & 1023) == 0 && svc->runnable_ranks() > svc->ncpus) return 0;
        }
    }
}

/* Every look at a wait's condition comes after the job's wait_poll (wait.h: intra/inbox.c lays
 * out what senders handed to the rank and drains its fast boxes), with help 1 except on a
 * carrier (help 0): a parked rank's condition runs there, for the carrier's other ranks' time. */
struct fb_cond {
    struct tm_rank *me;
    tm_cond_fn cond;
    void *arg;
    int help;
};

static int fb_cond(void *arg)
{
    struct fb_cond *f = arg;
    f->me->job->wait_poll(f->me, f->help);
    return f->cond(f->arg);
}

/* A carried rank's wait (wait.h): parks until cond holds or the job is cancelled. */
struct park_cond {
    struct fb_cond *fc;
    struct tm_job *job;
    uint32_t seen; /* the waker's wakes, read after the rank said it parks (mstate.h) */
    int mst;       /* the rank's record is kept (tm_mst_on) */
    int asleep;    /* published: a look at the condition after `seen` found it false */
};

/* Runs on a carrier, one call at a time for a rank (svc.h). */
static int park_ready(void *arg)
{
    struct park_cond *p = arg;
    int ready = fb_cond(p->fc) || must_end(p->job);
    if (!ready && p->mst && !p->asleep) {
        tm_mst_asleep(p->fc->me, p->seen);
        p->asleep = 1;
    }
    return ready;
}

/* A thread the rank created is a real thread: it never parks (tm_cur_child). */
static int carried(const struct tm_rank *me)
{
    return !me->helper && me->info && me->info->carried && me->job->svc->rank_park && !tm_cur_child;
}

/* Writes errno through a call of its own: inside one function the compiler may compute errno's
 * (per-thread) address once, before a switch after which the rank runs on another carrier. */
__attribute__((noinline)) static void errno_put(int e)
{
    errno = e;
}

/* errno: the value to leave the program with.  It is put back before each switch, on this
 * thread: the agent keeps it with the rank, and the rank may resume on another carrier, where an
 * errno address computed here would be the old thread's. */
static void park(struct tm_rank *me, struct fb_cond *fc, int saved_errno)
{
    struct tm_job *j = me->job;
    const struct tmpi_svc *svc = j->svc;
    /* the daemons read the links for a parked rank (it never spins on them itself) */
    void *links = me->info->net;
    int need_daemon = TM_UNLIKELY(links) && svc->net_release;
    if (need_daemon) {
        atomic_fetch_add_explicit(&j->net_nonreaders, 1, memory_order_seq_cst);
        svc->net_release(links);
    }
    struct park_cond pc = {fc, j, 0, tm_mst_on(me), 0};
    fc->help = 0;
    if (pc.mst && !me->mst.published) tm_mst_publish(me, 0);
    for (;;) {
        check_cancel(me);
        if (TM_UNLIKELY(j->wait_net)) j->wait_net->idle(me);
        /* ordered before the park by the read-modify-write that follows (wait.h parked_on) */
        atomic_store_explicit(&me->waker.parked_on, &tm_thread_mark, memory_order_relaxed);
        /* wakers take the slow path, which asks the carriers whether any sleeps */
        atomic_fetch_or_explicit(&me->waker.sleeping, TM_WAKER_PARKED, memory_order_seq_cst);
        pc.seen = atomic_load_explicit(&me->waker.wakes, memory_order_seq_cst);
        pc.asleep = 0;
        errno_put(saved_errno);
        svc->rank_park(park_ready, &pc, &me->waker.carriers);
        if (pc.asleep) tm_mst_awake(me);
        if (fb_cond(fc)) break;
    }
    if (need_daemon) atomic_fetch_sub_explicit(&j->net_nonreaders, 1, memory_order_relaxed);
}

int tm_wait_parks(const struct tm_rank *me)
{
    return carried(me);
}

int tm_park_until(struct tm_rank *me, tm_cond_fn cond, void *arg)
{
    if (!carried(me)) return -ENOTSUP;
    if (cond(arg)) return 0;
    struct tm_job *j = me->job;
    const struct tmpi_svc *svc = j->svc;
    int saved = errno;
    /* the daemons read the links for a parked rank, as in park() */
    void *links = me->info->net;
    int need_daemon = TM_UNLIKELY(links) && svc->net_release;
    if (need_daemon) {
        atomic_fetch_add_explicit(&j->net_nonreaders, 1, memory_order_seq_cst);
        svc->net_release(links);
    }
    do {
        /* wakers take the slow path, which asks the carriers whether any sleeps */
        atomic_fetch_or_explicit(&me->waker.sleeping, TM_WAKER_PARKED, memory_order_seq_cst);
        errno_put(saved);
        svc->rank_park(cond, arg, &me->waker.carriers);
    } while (!cond(arg));
    if (need_daemon) atomic_fetch_sub_explicit(&j->net_nonreaders, 1, memory_order_relaxed);
    errno_put(saved);
    return 0;
}

void tm_poll_idle(struct tm_rank *me)
{
    /* A loop of polls that find nothing (HPL's panel broadcast probes with MPI_Iprobe) must
     * let the thread it waits for have the processor: with more runnable threads than cores,
     * a poller that keeps its time slice makes the rank or receive daemon that would answer
     * wait its turn, a slice per message (12-15 ms per hop of an Iprobe ring, 4 ranks on each
     * of 3 agents on 2 cores; 7 us with the yield).  A carried rank first lets the ranks of
     * its carrier run, then the carrier gives the core to the other threads (the job's
     * receive daemons, other jobs' carriers): carriers are as many as cores, so the kernel
     * never sees them oversubscribed, yet each one busy with pollers starved the daemons
     * (4 ms per hop; 11 us with the yield).  When nothing else is runnable the yield returns
     * at once; a job on one node has no daemon to starve, and there the system call per
     * poll cost its carried ranks (0.9 against 2.7 us per hop of a 4-rank ring on 2 cores). */
    const struct tmpi_svc *svc = me->job->svc;
    if (!carried(me)) {
        if (svc->runnable_ranks && svc->runnable_ranks() > svc->ncpus) sched_yield();
        return;
    }
    check_cancel(me);
    svc->rank_yield();
    if (TM_UNLIKELY(me->info->net)) sched_yield(); /* alone on the node, no daemon to starve */
}

int tm_wait_cede(struct tm_rank *me)
{
    const struct tmpi_svc *svc = me->job->svc;
    if (carried(me) || !svc->runnable_ranks || svc->runnable_ranks() <= svc->ncpus) return 0;
    sched_yield();
    return 1;
}

static void wait_slow(struct tm_rank *me, struct fb_cond *fc);

void tm_wait(struct tm_rank *me, tm_cond_fn cond_in, void *arg_in)
{
    struct fb_cond fc = {me, cond_in, arg_in, 1};
    if (fb_cond(&fc)) return;
    /* The waiting's own system calls (futex EAGAIN, a poll's recv) are no business of the
     * program's errno. */
    int saved = errno;
    int was_published = me->mst.published;
    if (carried(me)) {
        park(me, &fc, saved);
    } else {
        wait_slow(me, &fc);
        errno = saved;
    }
    /* a wait in a call that did not say what it waits for is published for the wait only */
    if (TM_UNLIKELY(me->mst.published && !was_published && !me->mst.call)) tm_mst_unpublish(me);
}

static void wait_slow(struct tm_rank *me, struct fb_cond *fc)
{
    tm_cond_fn cond = fb_cond;
    void *arg = fc;
    struct tm_job *j = me->job;
    const struct tmpi_svc *svc = j->svc;

    /* A rank of a job across nodes with a core of its own reads its links itself. */
    void *net = me->info ? me->info->net : NULL;
    int net_spin = TM_UNLIKELY(net) && svc->net_poll && svc->runnable_ranks() <= svc->ncpus;
    if (net_spin && spin_net(me, cond, arg, net)) return;

    /* From here this thread does not read the links: the daemons must read for it, now, not
     * after a spinner's lingering hold (counted in net_nonreaders, which a spinner that stops
     * looks at).  Oversubscribed ranks of a job across nodes spin here too, yielding. */
    int need_daemon = TM_UNLIKELY(net) && svc->net_release;
    if (need_daemon) {
        atomic_fetch_add_explicit(&j->net_nonreaders, 1, memory_order_seq_cst);
        svc->net_release(net);
    }
    if (net_spin || !spin(me, cond, arg)) block(me, cond, arg);
    if (need_daemon) atomic_fetch_sub_explicit(&j->net_nonreaders, 1, memory_order_relaxed);
}

/* What tm_wait_prog waits for: its caller's condition, or a step of the rank's own to take. */
struct prog_cond {
    struct tm_rank *me;
    tm_cond_fn cond;
    void *arg;
};

static int prog_cond(void *p)
{
    struct prog_cond *c = p;
    return c->cond(c->arg) || (atomic_load_explicit(&c->me->prog.pending, memory_order_acquire) &&
                               c->me->prog.ready(c->me));
}

void tm_progress_poll(struct tm_rank *me)
{
    if (TM_UNLIKELY(atomic_load_explicit(&me->prog.pending, memory_order_acquire)))
        me->prog.run(me);
}

void tm_wait_prog(struct tm_rank *me, tm_cond_fn cond, void *arg)
{
    if (TM_LIKELY(!atomic_load_explicit(&me->prog.pending, memory_order_acquire))) {
        tm_wait(me, cond, arg);
        return;
    }
    struct prog_cond pc = {me, cond, arg};
    for (;;) {
        me->prog.run(me);
        if (cond(arg)) return;
        if (!atomic_load_explicit(&me->prog.pending, memory_order_acquire)) {
            tm_wait(me, cond, arg);
            return;
        }
        tm_wait(me, prog_cond, &pc);
    }
}
