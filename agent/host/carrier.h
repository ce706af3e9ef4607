/* carrier.h — user-level switching of ranks (seed 003): a job's ranks on this node share a few
 * carrier threads, one per CPU, and switch between each other in user space when they wait.
 *
 * Why: with more ranks than CPUs, a rank thread that waits must give its core away, and on
 * Linux that is a kernel context switch (sched_yield or a futex sleep, ~2-3 us on this class
 * of machine, more under load) per hop of a message.  A carrier switches ranks with a plain
 * function call (ctx.h) and picks the next rank whose wait is over, so a hop between ranks of
 * one carrier costs a few cache lines.
 *
 * Model: the job thread makes min(ncpus, ranks) carriers and gives each a block of ranks
 * (carrier_cyclic): by default a contiguous one (neighbours in rank order talk most, and then
 * share a carrier: a token ring hops between carriers twice a lap), or every ncarriers-th rank,
 * so that the pairs (i, i + n/2) of the OSU multi-pair benchmarks, transposes and butterflies
 * share a carrier (n/2 a multiple of the carrier count) instead of every such message needing
 * a cross-carrier wake-up.  Neither wins everywhere (docs/bench/ANALYSIS.md "Ranks beyond
 * cores": osu_mbw_mr 4 ranks 8 B 37x faster cyclic, a 16-rank ring 2-6x slower).  A carrier's home
 * context is its scheduler: it starts the ranks of its block and resumes parked ranks once
 * their ready() condition holds, on the carrier they last ran on; a carrier that has run one
 * rank for over 5 ms (computing, or blocked in a system call) lets the others take its
 * parked ranks (a rank does not wait for seconds behind a busy neighbour while a core idles).
 * Moving is kept rare: code may keep errno's per-thread address across an MPI call.  A
 * rank parks only inside libtmpi's waits (svc rank_park, rank_yield): code outside MPI calls
 * runs until it returns to one, so a rank that computes or blocks in a system call holds its
 * carrier meanwhile (the others carry on).
 *
 * Per-thread state that follows the rank across switches: the agent's current rank (output,
 * getenv, exit), errno, and libtmpi's own (tmpi_client_ops tls_get/tls_set, moved by the
 * scheduler at every switch; NULL for a rank that starts).  A rank that sleeps (nanosleep and
 * friends, interpose_sleep.c) parks until its deadline, and one that joins a thread it started
 * parks until the thread ended (carrier_join.h).  Thread-local variables of
 * the program itself would be shared by the ranks of a carrier: programs that have them run
 * with one thread per rank (carrier_wanted).
 *
 * Sleeping: after the spin budget with nothing to run, a carrier counts itself in the job's
 * sleepers and sleeps on their futex word; wakers of a carried rank look at that count
 * (libtmpi's wait.h).  While another carrier runs a rank, the sleep ends after the rescue
 * time to look for its parked ranks; a carrier that starts a rank wakes those that fell
 * asleep without such a deadline (carrier_pool.untimed). */
#ifndef TMPI_AGENT_CARRIER_H
#define TMPI_AGENT_CARRIER_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ctx.h"
#include "svc.h"

struct job;
struct rank;

enum carrier_rank_state {
    CR_NEW = 0, /* not started; only its own carrier starts it */
    CR_RUNNING, /* its context runs (or a carrier is switching away from it) */
    CR_PARKED,  /* waits for ready(); any carrier may claim it */
    CR_CLAIMED, /* a carrier is calling its ready() */
    CR_RELOOK,  /* claimed, and another carrier looked meanwhile: the claimer looks again */
    CR_DONE,
};

/* A rank's part when it runs on carriers (struct rank.carried; NULL: a thread of its own). */
struct carried {
    struct carrier *home;         /* the carrier that starts it */
    struct carrier *_Atomic last; /* the carrier it runs or last ran on (resumes there) */
    struct ctx ctx;
    void *map; /* stack mapping, guard page first */
    size_t map_len;
    _Atomic int state; /* enum carrier_rank_state */
    int parking;       /* set by the rank before it switches away: park, not end */
    int saved_errno;
    int (*ready)(void *arg); /* while parked: resume once ready(arg) != 0 */
    void *ready_arg;
    _Atomic uint64_t deadline; /* CLOCK_MONOTONIC ns while parked in a sleep, else 0 */
    void *client_tls;          /* libtmpi's per-thread record while the context is stopped */
};

struct carrier {
    struct carrier_pool *pool;
    pthread_t thread;
    int started;
    struct ctx home;
    struct rank **ranks; /* its block of the job's ranks */
    uint32_t n;
    uint32_t next;       /* round-robin position in its block */
    uint32_t steal_next; /* round-robin position in the job's ranks */
    uint32_t picks;      /* picks made: every other one looks at ranks from elsewhere first */
    /* Ranks of other blocks this carrier ran, so that pick_moved need not scan the job's ranks
     * for those that live here now.  Only this carrier touches the list; an entry whose rank
     * moved on (last != this) is dropped when seen.  moved_lost: an entry did not fit (out of
     * memory): pick_moved scans every rank again. */
    struct rank **moved;
    uint32_t nmoved, moved_cap, moved_next;
    int moved_lost;
    struct rank *cur; /* the rank whose context runs, NULL at home */
    _Atomic uint64_t
        busy_since; /* CLOCK_MONOTONIC ns the running rank got the carrier, 0 at home */
    /* CLOCK_MONOTONIC ns its last run of a rank began (busy_since without the reset): a
     * carrier that switches ranks (a rank in a loop of MPI_Test) is at home for moments only,
     * and counts as busy (idle()) */
    _Atomic uint64_t ran_at;
    /* it slept in idle() and nothing was ready when it woke: its next idle() sleeps again at
     * once instead of spinning (carrier thread only) */
    int woke_idle;
    uint64_t spins; /* spins idle() began (carrier thread only; read after carriers_join) */
};

/* A job's carriers (job.cpool). */
struct carrier_pool {
    struct job *job;
    struct carrier *carriers;
    uint32_t ncarriers;
    struct carried *carried; /* [nprocs] */
    struct rank **ranks;     /* [nprocs]: the carriers' blocks, one after the other */
    uint32_t nranks;
    _Atomic uint32_t live;      /* ranks not done */
    struct tmpi_sleepers sleep; /* svc.h: carriers asleep and their futex word */
    /* Carriers asleep without a deadline because no other carrier ran a rank when they looked
     * (carrier.c idle): a carrier that starts running a rank wakes them, so that they sleep
     * again with the rescue deadline (seq_cst, paired with busy_since). */
    _Atomic uint32_t untimed;
    /* Ranks parked in a sleep (carrier_sleep): without any, a carrier going to sleep need not
     * look for the earliest deadline among all ranks. */
    _Atomic uint32_t sleeping;
    /* libtmpi's ops once it has the job's state (job.client_ops; never changes afterwards) */
    const struct tmpi_client_ops *_Atomic client;
    /* The CPUs of all its carriers together, once they are pinned: where a carried rank may
     * run, which is what its sched_getaffinity answers (rank_proc.h) */
    cpu_set_t cpus;
};

/* Whether the job's ranks on this node run on carriers: tmpid.conf rank_switching (or the
 * job's TMPI_RANK_SWITCHING), "auto" meaning more ranks than kernel_ranks_per_cpu (the job's
 * TMPI_KERNEL_RANKS_PER_CPU wins) times the CPUs and a program without thread-local variables
 * that starts no threads.  1 yes, 0 no (*why says why, for the log), -EINVAL for a job
 * variable that is none of the three words or no count (*why is the job's error). */
int carrier_wanted(struct job *j, char *why, size_t whylen);

/* Which ranks a carrier starts: 0 block (contiguous), 1 cyclic (carrier c gets ranks c,
 * c + ncarriers, ...), from the job's TMPI_CARRIER_PLACEMENT or else tmpid.conf carrier_placement
 * (default block); -EINVAL for a job variable that is neither word (*why says why). */
int carrier_cyclic(struct job *j, char *why, size_t whylen);

/* How many carriers a job of this node's ranks runs on: one per CPU, at most one per rank. */
uint32_t carrier_count(const struct job *j);

/* Job thread: allocates rank stacks and starts the carriers; opens the job's start gate
 * (all or nothing, as start_ranks).  Returns the number of ranks started (all or 0). */
uint32_t carriers_start(struct job *j);

/* Job thread, after every started rank finished: joins the carriers, frees the stacks. */
void carriers_join(struct job *j);
/* Job thread, once libtmpi's state of the job is gone (its wakers point at the pool's sleep
 * record until then: a receive daemon or a cancel may still wake a rank that has ended). */
void carriers_free(struct job *j);

/* The rank whose context runs on the calling thread, if it is a carrier; else NULL. */
struct rank *carrier_running(void);

/* svc rank_park / rank_yield (svc.h).  The agent's own parks (a sleep, a yield) pass a NULL
 * target: nothing outside the agent wakes them. */
int carrier_park(int (*ready)(void *arg), void *arg, struct tmpi_sleepers *_Atomic *target);
void carrier_yield(void);

/* Wakes the pool's sleeping carriers, if any: call after a seq_cst store that makes a parked
 * rank's ready() true (the carriers count themselves asleep seq_cst, then look again). */
void carrier_wake(struct carrier_pool *p);

/* A carried rank sleeps until deadline (CLOCK_MONOTONIC ns) parked: 0 once it is over, or
 * -ENOTSUP when the calling thread is not a carried rank's context. */
int carrier_sleep(uint64_t deadline);

#endif
