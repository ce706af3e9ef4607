/* host_signal.c — SIGUSR1/SIGUSR2 delivered to a job's ranks in the job host (host_signal.h). */
#include "host_signal.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose_next.h"
#include "job.h"
#include "job_signal.h"
#include "log.h"
#include "rank.h"

/* The job host's one job and the pipe its handler reports killed ranks on.  job is set once
 * the job exists and cleared before it is freed (atomic: the handler reads it on any thread);
 * busy counts the handlers running now, and none runs once closed (any thread); the rest
 * belongs to the loop thread. */
static struct {
    _Atomic(struct job *) job;
    atomic_int busy;
    atomic_int closed;
    int pipe[2];
    struct event *ev;
    struct {
        void *_Atomic sigaction;
    } next; /* libc's (interpose_next.h) */
} sighost = {.pipe = {-1, -1}};

/* What the handler writes on the pipe: one record, well under PIPE_BUF, so never torn. */
struct sig_kill {
    int sig;
    int local_rank;
};

int host_signal_rank_action(struct rank *r, int sig, const struct sigaction *act,
                            struct sigaction *old)
{
    int s = job_signal_slot(sig);
    if (s < 0) return -EINVAL;
    struct rank_sigslot *slot = &r->sig[s];
    /* Only this rank writes its slots, so its own read needs no protocol. */
    if (old) *old = slot->act;
    if (!act) return 0;
    /* Block both signals here while the slot is odd: a handler on this very thread would
     * otherwise wait for the write it interrupted. */
    sigset_t both, saved;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR1);
    sigaddset(&both, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &both, &saved);
    /* acq_rel: the slot's new bytes cannot be written before the counter is odd */
    atomic_fetch_add_explicit(&slot->seq, 1, memory_order_acq_rel);
    slot->act = *act;
    atomic_fetch_add_explicit(&slot->seq, 1, memory_order_release);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return 0;
}

/* A consistent copy of a slot (seqlock read: retry while the rank rewrites it). */
static void read_slot(struct rank_sigslot *slot, struct sigaction *ret)
{
    for (;;) {
        unsigned a = atomic_load_explicit(&slot->seq, memory_order_acquire);
        if (a & 1) {
            sched_yield();
            continue;
        }
        memcpy(ret, &slot->act, sizeof *ret);
        /* a release RMW (adding nothing) keeps the copy before the second look at the
         * counter, without a fence (which ThreadSanitizer does not support) */
        if (atomic_fetch_add_explicit(&slot->seq, 0, memory_order_acq_rel) == a) return;
    }
}

/* Runs the handler of every local rank of j for sig, the ranks in order (async-signal-safe:
 * called from the process handler).  Returns the first local rank whose disposition is the
 * default (it is killed), or -1. */
static int run_handlers(struct job *j, int sig, siginfo_t *info, void *uctx)
{
    int s = job_signal_slot(sig);
    if (s < 0) return -1;
    /* Unloading waits for us (host_signal_close): no handler runs in an unloaded copy. */
    atomic_fetch_add_explicit(&sighost.busy, 1, memory_order_seq_cst);
    int killed = -1;
    if (!atomic_load_explicit(&sighost.closed, memory_order_seq_cst)) {
        struct rank *saved = rank_current();
        /* A signal a rank sent its own thread (raise, pthread_kill, and kill of its own pid,
         * which interpose_proc turns into one) is that rank's alone, as it would be its own
         * process's under mpirun: only its handler runs, and a default action kills that rank,
         * not the first.  Only a thread-directed one: a signal to the whole job host (kill of
         * the pid that carried ranks share) may land on any thread, and is every rank's.  The
         * real pid: on a rank's own thread getpid() answers the thread's id (interpose_proc.c),
         * and raise() there sends with the process's pid. */
        uint32_t first = 0, end = j->nprocs;
        if (saved && saved >= j->ranks && saved < j->ranks + j->nprocs && info &&
            info->si_pid == (pid_t)syscall(SYS_getpid) && info->si_code == SI_TKILL) {
            first = (uint32_t)(saved - j->ranks);
            end = first + 1;
        }
        for (uint32_t i = first; i < end; i++) {
            struct rank *r = &j->ranks[i];
            /* only a rank inside its main: before, it has no handler; after, it is gone */
            if (!atomic_load_explicit(&r->sig_live, memory_order_acquire)) continue;
            struct sigaction act;
            read_slot(&r->sig[s], &act);
            if (act.sa_handler == SIG_IGN) continue;
            if (act.sa_handler == SIG_DFL) {
                if (killed < 0) killed = (int)i;
                continue;
            }
            /* the handler's writes and output count as the rank's */
            rank_set_current(r);
            if (act.sa_flags & SA_SIGINFO)
                act.sa_sigaction(sig, info, uctx);
            else
                act.sa_handler(sig);
        }
        rank_set_current(saved);
    }
    atomic_fetch_sub_explicit(&sighost.busy, 1, memory_order_seq_cst);
    return killed;
}

void host_signal_close(void)
{
    atomic_store_explicit(&sighost.closed, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&sighost.busy, memory_order_seq_cst) > 0)
        sched_yield();
}

/* Fails j: a rank with no handler was killed by sig.  Loop thread. */
static void rank_killed(struct job *j, int sig, int local_rank)
{
    char reason[160];
    int g = j->global_rank ? j->global_rank[local_rank] : local_rank;
    snprintf(reason, sizeof reason, "rank %d killed by signal %d (%s): it has no handler for it", g,
             sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
    job_cancel(j, 128 + sig, reason);
}

/* The process handler of a job host.  Async-signal-safe: the ranks' handlers (which must be
 * themselves), atomics, write(). */
static void on_forwarded(int sig, siginfo_t *info, void *uctx)
{
    int saved_errno = errno;
    struct job *j = atomic_load_explicit(&sighost.job, memory_order_acquire);
    if (j) {
        int k = run_handlers(j, sig, info, uctx);
        if (k >= 0) {
            struct sig_kill rec = {.sig = sig, .local_rank = k};
            long n = syscall(SYS_write, sighost.pipe[1], &rec, sizeof rec);
            (void)n; /* a full pipe: a kill is already on its way */
        }
    }
    errno = saved_errno;
}

static void on_kill_record(evutil_socket_t fd, short what, void *arg)
{
    struct sig_kill rec;
    while (read(fd, &rec, sizeof rec) == (ssize_t)sizeof rec) {
        struct job *j = atomic_load_explicit(&sighost.job, memory_order_acquire);
        if (j && rec.local_rank >= 0 && (uint32_t)rec.local_rank < j->nprocs)
            rank_killed(j, rec.sig, rec.local_rank);
    }
}

int host_signal_install(struct job *j, struct event_base *base)
{
    if (pipe2(sighost.pipe, O_CLOEXEC | O_NONBLOCK) < 0) return -errno;
    sighost.ev = event_new(base, sighost.pipe[0], EV_READ | EV_PERSIST, on_kill_record, NULL);
    if (!sighost.ev || event_add(sighost.ev, NULL) < 0) return -ENOMEM;
    atomic_store_explicit(&sighost.job, j, memory_order_release);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_forwarded;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    /* libc's sigaction, not the override ranks see (interpose_signal.c): this is the process's
     * own handler */
    if (INTERPOSE_NEXT(sighost.next, sigaction)(SIGUSR1, &sa, NULL) < 0 ||
        INTERPOSE_NEXT(sighost.next, sigaction)(SIGUSR2, &sa, NULL) < 0)
        return -errno;
    return 0;
}

void host_signal_forget(void)
{
    atomic_store_explicit(&sighost.job, NULL, memory_order_release);
    if (sighost.ev) event_free(sighost.ev);
    sighost.ev = NULL;
}
