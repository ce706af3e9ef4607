/* wait.h — how a rank thread waits for an event another rank thread causes (DESIGN.md layer 2,
 * "wait/signal for rank threads").
 *
 * Adaptive: spin for up to the agent's spin budget with a pause instruction, but only while the
 * node is not oversubscribed (runnable ranks <= cpus; otherwise spinning only steals the core
 * from the thread that would wake us), then block on a futex on the rank's wake word.
 *
 * Protocol (a Dekker handshake, no syscall on the fast path):
 *   waiter: seq = wake_seq; sleeping += 1; re-check the condition; futex_wait(wake_seq, seq);
 *           sleeping -= 1 (a count: under MPI_THREAD_MULTIPLE several threads of a rank may
 *           sleep at once, and every wake wakes them all; each re-checks its own condition).
 *   waker:  make the condition true; if sleeping: wake_seq++ and FUTEX_WAKE.
 * The store of sleeping, the stores that make a condition true and the loads of both are all
 * seq_cst, so they fall into one total order (no fences: ThreadSanitizer cannot check them).
 * Either the waiter sees the condition or the waker sees `sleeping`; a wake that lands between
 * the re-check and futex_wait changes wake_seq, so futex_wait returns at once.  The one waker
 * on the message-rate path, a fast-box sender, publishes with a release store and no fence
 * when the job's asym_fence is set: the waiter then calls membarrier between its count and its
 * re-check, which fences every running thread of the process for it (asym_fence.h).
 * Every wait also ends when the job is cancelled: the rank then leaves through rank_exit(1).
 *
 * A rank that runs as a context on a carrier thread (svc rank_park, agent/host/carrier.h) does not
 * spin or sleep itself: it parks, and a carrier resumes it once the condition holds.  Its
 * `sleeping` stays 1 and the slow path asks the job's carriers instead: a carrier about to
 * sleep counts itself in `sleepers` (seq_cst) and looks at every parked rank again, so either it
 * sees the condition or the waker sees it counted.  A waker that runs on the carrier thread the
 * rank parked on (a rank of the same carrier, or its scheduler's look) skips all of that: that
 * carrier is awake, and it looks at every rank that lives on it before it sleeps (carrier.c);
 * a wake per message then costs two loads instead of a locked read-modify-write (the
 * osu_mbw_mr pairs on one carrier, carrier.h placement). */
#ifndef TMPI_LIBCLIENT_WAIT_H
#define TMPI_LIBCLIENT_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

#include "svc.h"

struct tm_rank;

/* Per-rank wake word.  wake_seq: futex word, bumped by wakers; sleeping: how many threads of the
 * rank sleep on wake_seq (the rank's, and under MPI_THREAD_MULTIPLE the threads it created),
 * plus TM_WAKER_PARKED once its context has parked on a carrier (then for good).  Written by
 * any thread (atomics), lives as long as the job. */
#define TM_WAKER_PARKED (1 << 24)
struct tm_waker {
    _Atomic uint32_t wake_seq;
    _Atomic int sleeping;
    /* A carried rank's carriers (svc rank_park sets it at the first park; `sleeping` is then
     * 1 for good and a wake goes to the carriers if any of them sleeps).  NULL otherwise. */
    struct tmpi_sleepers *_Atomic carriers;
    /* Wakes that took the slow path (seq_cst), for the deadlock check's evidence (mstate.h). */
    _Atomic uint32_t wakes;
    /* The thread (its tm_thread_mark) a carried rank's context last parked on, written by the
     * rank before each park: a waker running on that very thread is the rank's carrier, awake,
     * and looks at the rank before it sleeps, so its wake costs nothing (wait.c wake). */
    const void *_Atomic parked_on;
} __attribute__((aligned(64)));

typedef int (*tm_cond_fn)(void *arg);

/* What every wait does for the layers above core, registered in the job by the one that makes
 * it (mpi/job_life.c) before any rank runs, then read-only (struct tm_job):
 *   wait_poll(me, help): every look at a wait's condition comes after it (intra/inbox.c: the
 *     messages handed to the rank and its fast boxes, so a posted receive they answer
 *     completes; help: the look runs in the rank's own time, which may then copy chunks of a
 *     copy another rank shares with it).  Required.
 *   wait_net, only in a job across nodes (net/net_wait.c): check on the turns of a wait that
 *     can end it (a protocol error a daemon found aborts the job there, not returning), idle
 *     before the rank sleeps (what it owes its peers, the lazy ACKs, goes out now), failed
 *     whether a wait must end for such an error, looked at again after the rank said it
 *     sleeps. */
struct tm_job;
struct tm_wait_net {
    void (*check)(struct tm_rank *me);
    void (*idle)(struct tm_rank *me);
    int (*failed)(struct tm_job *j);
};
typedef void (*tm_wait_poll_fn)(struct tm_rank *me, int help);

/* Work the rank's own pending operations need from the rank itself, registered by the layer
 * that has such work (coll_inter/inter_nb.c: the steps of non-blocking collectives on
 * inter-communicators that wait for an earlier step).  ready: whether run would advance
 * anything now, without side effects, from any thread (a carried rank's conditions run on a
 * carrier); run: advances what it can, on a thread of the rank.  state: the registrant's (set
 * once, with the functions before it, then pending); pending: non-zero while it has work, so a rank
 * without any pays one load per wait. */
struct tm_progress {
    int (*ready)(struct tm_rank *me);
    void (*run)(struct tm_rank *me);
    void (*fini)(struct tm_rank *me); /* the job ends: frees state (no thread of it runs) */
    void *_Atomic state;
    _Atomic int pending;
};

/* Wakes the owner of w if it announced sleep; call after publishing the event with a seq_cst
 * store or read-modify-write, or with a release store and tmpi_asym_light where the job's
 * asym_fence says the sleepers fence for the waker (asym_fence.h). */
static inline void tm_wake(struct tm_waker *w);

/* Returns when cond(arg) is true.  Leaves via rank_exit(1) if the job is cancelled. */
void tm_wait(struct tm_rank *me, tm_cond_fn cond, void *arg);

void tm_wake_slow(struct tm_waker *w);

/* tm_wait for the calls where MPI says a rank's pending operations make progress (MPI_Wait
 * and friends, blocking point-to-point): runs the rank's registered progress whenever it can
 * advance, until cond(arg) holds.  Never inside a collective's own waits (a step started there
 * could reuse the collective's scratch). */
void tm_wait_prog(struct tm_rank *me, tm_cond_fn cond, void *arg);
/* Runs the rank's registered progress once (MPI_Test and friends). */
void tm_progress_poll(struct tm_rank *me);
/* A wait that polls instead of calling tm_wait (coll_fin.c) ends as every wait does: leaves
 * via rank_exit(1) if the job is cancelled. */
void tm_wait_check_cancel(struct tm_rank *me);

static inline void tm_wake(struct tm_waker *w)
{
    if (atomic_load_explicit(&w->sleeping, memory_order_seq_cst)) tm_wake_slow(w);
}

/* Whether the calling thread of me is a carried rank's context (svc rank_park): its waits
 * park, and a system call it makes holds its carrier, so the carrier's other ranks wait. */
int tm_wait_parks(const struct tm_rank *me);

/* A carried rank (tm_wait_parks) parks until cond(arg) holds, the carriers running its job's
 * other ranks meanwhile; wake it with tm_wake after a seq_cst store.  Unlike tm_wait it does
 * not end when the job is cancelled: what it waits for is a system call another thread makes
 * on the rank's memory (io/io_pool.h), which must be over before the rank may go (it leaves
 * at its next wait).  -ENOTSUP, at once, when the calling thread is no carried context. */
int tm_park_until(struct tm_rank *me, tm_cond_fn cond, void *arg);

/* Gives the calling thread's core to another runnable thread (sched_yield) when the node has
 * more runnable ranks than cores and each rank is a thread; nothing on a carried rank or when
 * every rank has a core.  A hint of who should run first, not a wait: returns at once when
 * nobody else wants the core.  1 if it yielded. */
int tm_wait_cede(struct tm_rank *me);

/* Wakes w unconditionally (job cancellation). */
void tm_wake_force(struct tm_waker *w);

/* A poll (MPI_Test and friends, Iprobe) found nothing: a rank that shares a carrier thread with
 * others lets them run first (else a loop of tests would never let the awaited peer run). */
void tm_poll_idle(struct tm_rank *me);

#endif
