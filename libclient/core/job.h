/* job.h — per-job and per-rank state.
 *
 * One struct tm_job per job, created once through svc->job_state() by the first rank that
 * calls MPI_Init, freed by the agent's destroy upcall after the job's last rank thread ended
 * (mpi/job_life.h).
 * It holds every rank's struct tm_rank (an array indexed by world rank), because a sender may
 * deliver into a receiver's mailbox before that receiver has called MPI_Init. */
#ifndef TMPI_LIBCLIENT_JOB_H
#define TMPI_LIBCLIENT_JOB_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bsbuf.h"
#include "coll_stats.h"
#include "comm_parts.h"
#include "intra_parts.h"
#include "lib.h"
#include "mbox_parts.h"
#include "net_yield.h"
#include "mstate_rec.h"
#include "wait.h"

struct tm_objtab;
struct tm_objs;
struct tm_net;
struct tm_win;
struct tm_envl;
struct tm_request;
struct tm_type;
struct tm_inter_ops;
struct tm_commref;
struct tm_info;

enum tm_rank_state { TM_RANK_NEW = 0, TM_RANK_INIT = 1, TM_RANK_FINALIZED = 2 };

/* One rank.  mbox: mailbox lock; waker and envpool.returned: atomics, any thread; the rest is
 * owner-only (the rank's thread, or whichever thread the rank funnels MPI calls through).
 * Under MPI_THREAD_MULTIPLE (mt) several threads of the rank call at once: the request pool
 * and the envelope cache are then taken under mt_lock (tm_mt_lock), the rank's sends skip the
 * fast boxes (one producer per ring) and its blocking receives post (fb_cand unused). */
struct tm_f90ent;
struct tm_spawn_rec;
struct tm_spawn_net;
struct tm_iop;
struct tm_port;
struct tm_pubname;

struct tm_rank {
    struct tm_mbox mbox;
    struct tm_waker waker;
    struct tm_envl_pool envs;

    struct tm_job *job;
    const struct tmpi_rank_info *info;
    int rank;                 /* world rank */
    enum tm_rank_state state; /* NEW until the first MPI_Init or MPI_Session_init */
    /* MPI_Init's model: 0 not called, 1 initialized, 2 finalized; and the sessions open
     * (session/session.c).  Both under job->open_lock (mpi/rank_open.h). */
    int world_model;
    int nsessions;
    int thread_level;
    int mt;              /* thread_level is MPI_THREAD_MULTIPLE (set by MPI_Init, then read-only) */
    _Atomic int mt_lock; /* request pool and envelope cache when mt (tm_mt_lock) */
    pthread_t main_thread;

    struct tm_request *req_free;    /* pool of requests */
    struct tm_request *req_orphans; /* freed by the user while pending */
    void *req_chunks;               /* allocation chunks, freed at job end */

    struct tm_commtab comms;
    struct tm_comm self; /* MPI_COMM_SELF's shared part (one member) */
    /* Groups, info objects, error handlers and codes, keyvals: objs.h (its own lock). */
    struct tm_objs *objs;

    void *scratch; /* reduction scratch, owner-only, lazily allocated */
    size_t scratch_size;

    /* derived datatypes (type_ctor.c) and user reduction ops (userop.c): the rank's threads
     * (objtab.h: lock-free lookups, adds and deletes under the table's mutex); made on first
     * use, or in MPI_Init_thread when MULTIPLE */
    struct tm_objtab *dtypes;
    struct tm_objtab *uops;
    struct tm_objtab *wins; /* RMA windows (rma/win.c): owner-only, made on first use */
    /* Fortran handles of requests (request.c) and messages (mprobe.c): pointers have no int
     * value, so MPI_Request_c2f / MPI_Message_c2f enter them here (same rules as dtypes) */
    struct tm_objtab *freqs;
    struct tm_objtab *fmsgs;
    /* MPI_Type_create_f90_* answers, so equal arguments give the same handle (type_f90.c):
     * a list only ever pushed onto (compare-and-swap), read without a lock */
    struct tm_f90ent *_Atomic f90;

    _Atomic uint64_t send_serial; /* serials of cancellable envelopes (p2p.c), any thread */
    /* the next data tags a partitioned receive takes (part/part.h channels), any thread */
    _Atomic uint32_t part_next;

    /* MPI_Buffer_attach: the rank's buffer for buffered sends (bsbuf.h: the rank is the
     * process MPI means, so one rank's attach is never another's) */
    struct tm_bsbuf bsend;

    struct tm_fb_in fb_in;     /* fast boxes into this rank (fbox.h) */
    struct tm_handoff handoff; /* messages packed for this rank to lay out (handoff.h) */
    struct tm_fb_out *fb_out;  /* this rank's rings to others, owner-only, made on first use */
    /* a blocking receive waiting unposted (p2p.c), owner-only, and the mailbox's arrivals
     * count when it last found no match there: while that holds, a drain may fill it */
    struct tm_request *fb_cand;
    uint32_t fb_cand_seen;

    int helper; /* not a rank: a thread of libtmpi's own (coll_net_nb.c), not counted as one */
    /* spin_net's yields (net_yield.h): kept across waits; relaxed, a hint */
    struct tm_net_yield net_yield;

    /* what the rank is doing in MPI, for the agent (mstate.h) */
    struct tm_mstate mst;

    /* steps of the rank's non-blocking operations that only the rank can take (wait.h) */
    struct tm_progress prog;

    /* a large copy another rank shares with this one's waits (coop.h: atomics, any thread) */
    struct tm_coop coop;

    /* A spawned rank (dynproc/spawn.h): its MPI_COMM_WORLD (the ranks spawned with it) and its
     * rank there, and the spawn that made it, set by the spawning root before the rank starts;
     * NULL for the job's own ranks.  parent: the handle MPI_Comm_get_parent gave (owner-only,
     * made on first call; parent_made once made). */
    struct tm_comm *world;
    int world_rank;
    struct tm_spawn_rec *spawn;
    int parent_made;
    MPI_Comm parent;
    /* a spawned rank that finalized gave its world rank back (dyn_net.h tm_spawn_release),
     * under job->open_lock: MPI cannot open in it again; cleared when a later spawn's rank
     * takes the slot (mpi/init.c) */
    int slot_freed;

    /* MPI_T events (core/t_event.h): set by the rank's first event handle (tools_if), then
     * the layers report their events through it; NULL until then */
    void (*_Atomic t_event)(struct tm_rank *me, int kind, const void *data);
} __attribute__((aligned(64)));

struct tm_job {
    const struct tmpi_svc *svc;
    int size;       /* world ranks this job's state holds: the universe (spawned ranks too) */
    int world_size; /* the job's own MPI_COMM_WORLD */
    uint64_t id;
    size_t eager_limit;
    size_t coop_min; /* copies from this weight are shared by both ranks (coop.h); 0: never */
    uint64_t spin_ns;
    int asym_fence;             /* the process registered for asym_fence.h: wakers need no fence */
    _Atomic int cancelled;      /* set by wake_all */
    _Atomic int net_nonreaders; /* threads of a job across nodes waiting without reading links */
    _Atomic int helpers_busy;   /* libtmpi's own threads running a round (coll_net_nb.c) */
    _Atomic int next_ctx;       /* context ids for new communicators */
    struct tm_ctxs ctxs;        /* reusable ids and communicators being made (ctx.h) */
    struct tm_comm world;
    struct tm_coll_stats coll_stats;
    struct tm_rank *ranks; /* size entries */
    struct tm_net *net;    /* inter-node state (net_p2p.h); NULL when the job has one node */
    struct tm_xjob *xjob;  /* the other jobs it is connected to (net/xjob.h) */
    /* one of them ended: a receive posted afterwards on a communicator with its ranks fails at
     * once (xdead_check, the mailbox lock held; net/xjob.h) */
    _Atomic int xdead;
    /* wake timers armed (core/wake_timer.h), under wt_lock: stopped at the job's end */
    pthread_mutex_t wt_lock;
    struct tm_wake_timer *wtimers;
    void (*xdead_check)(struct tm_rank *me, struct tm_mbox *mb, struct tm_request *r);
    /* whether context ctx names a communicator with ranks of a job that ended (a probe on it
     * fails instead of waiting; net/xjob.h); read only once xdead is set */
    int (*xdead_ctx)(struct tm_job *j, int ctx);
    /* what the waits do for the layers above (wait.h), set when the job is made */
    tm_wait_poll_fn wait_poll;
    const struct tm_wait_net *wait_net; /* NULL when the job has one node */
    /* a receive took an entry the network queued (TM_ENVL_NET*, mbox/match.h): the network
     * answers it (net_p2p.h tm_net_consume), set with net */
    void (*net_consume)(struct tm_rank *me, struct tm_request *rreq, struct tm_envl *e);
    /* a published wait's communicator, peer and tag, as the agent's deadlock report shows
     * them (mstate.h): filled by the layer that knows communicators (comm/comm_mst.c) */
    void (*mst_comm)(struct tm_rank *me, const struct tm_mstate *m, struct tmpi_rank_mpi *p);
    /* a request's datatype reference dropped with the request (typecore/type.h
     * tm_type_release): core/request.c holds the reference without knowing types */
    void (*type_release)(const struct tm_type *t);
    /* the inter-communicator collectives, for coll/'s entry points (coll/coll_inter_ops.h) */
    const struct tm_inter_ops *inter;
    /* MPI_Comm_idup of an inter-communicator, for comm/'s entry point (comm/comm_idup.c): it
     * runs on the inter-communicator collectives, a folder above comm/ (coll_inter/inter_nbops.h
     * tm_inb_idup) */
    int (*inter_idup)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                      const struct tm_info *hints, MPI_Comm *newcomm, MPI_Request *request);
    pthread_mutex_t progs_lock;
    struct tm_cprog *progs; /* runners of non-blocking collectives across nodes (progs_lock) */
    /* RMA windows with a member on this node, by id (rma/win.c): looked up by origins and
     * receive daemons, changed by creation and Win_free, all under wins_lock. */
    pthread_mutex_t wins_lock;
    struct tm_win *wins;
    /* Ranks' world_model and nsessions (mpi/rank_open.h): opens and closes of any rank. */
    pthread_mutex_t open_lock;
    /* MPI_Comm_spawn (dynproc/spawn.h): the next world rank to spawn (size: none left), and
     * its spawns' records; the job's open ports and published names (dynproc/port.h); all
     * under spawn_lock, freed at the job's end by spawn_free (set by the first user). */
    _Atomic int spawn_next;
    /* [size]: the world ranks of the universe a spawn reserved (node 0's, or a one-node job's;
     * dyn_net.h tm_spawn_reserve), under spawn_lock; NULL until the first reservation */
    uint8_t *spawn_taken;
    /* roots waiting for a spawned rank to give its slot back (comm/dyn_net.c), under
     * spawn_lock */
    struct tm_slot_wait *spawn_waiters;
    pthread_mutex_t spawn_lock;
    struct tm_spawn_rec *spawns;
    struct tm_port *ports;
    struct tm_pubname *names;
    _Atomic int next_port;
    void (*spawn_free)(struct tm_job *j);
    /* The node's hardware topology (an hwloc_topology_t) for MPI_Comm_split_type's hardware
     * kinds and MPI_Get_hw_resource_info (mpi/split_hw.c): loaded on first use under hw_lock,
     * then read-only; freed at the job's end by hw_free (set by the loader). */
    pthread_mutex_t hw_lock;
    void *hw_topo;
    void (*hw_free)(struct tm_job *j);
    /* The job's file system threads (io/io_pool.h): made by the first rank that opens a file
     * (published with a compare-and-swap), stopped and freed at the job's end by iop_free
     * (set by the rank that made them, after it published; read once every rank ended). */
    struct tm_iop *_Atomic iop;
    void (*iop_free)(struct tm_job *j);
    /* a job across nodes: the spawn requests between its hosts (comm/dyn_net.h) */
    struct tm_spawn_net *spawn_net;
};

/* The rank's own pools under MPI_THREAD_MULTIPLE: a spin lock (held for a few pointer moves,
 * yielding if the holder was preempted); nothing when the rank is single-threaded. */
static inline void tm_mt_lock_slow(struct tm_rank *me)
{
    for (unsigned i = 1;; i++) {
        if (!atomic_load_explicit(&me->mt_lock, memory_order_relaxed) &&
            !atomic_exchange_explicit(&me->mt_lock, 1, memory_order_acquire))
            return;
        if ((i & 63) == 0) sched_yield();
    }
}
static inline void tm_mt_lock(struct tm_rank *me)
{
    if (TM_UNLIKELY(me->mt)) tm_mt_lock_slow(me);
}
static inline void tm_mt_unlock(struct tm_rank *me)
{
    if (TM_UNLIKELY(me->mt)) atomic_store_explicit(&me->mt_lock, 0, memory_order_release);
}

static inline struct tm_rank *tm_job_rank(struct tm_job *j, int world_rank)
{
    return &j->ranks[world_rank];
}

#endif
