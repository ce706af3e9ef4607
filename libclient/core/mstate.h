/* mstate.h — what a rank is doing in MPI, published for the agent (tmpictl ranks, deadlock
 * detection; svc.h struct tmpi_rank_mpi).
 *
 * Two halves.  The owner half is written at the entry of a blocking call with a few plain
 * stores (the call's name, communicator, peer, tag; tm_mst_begin) and costs nothing else on a
 * call that completes without waiting or within its spin.  The published half is filled only
 * when the call waits longer (before it sleeps or parks, or after TM_MST_SPIN_NS of spinning
 * on the links: the clock is read, the communicator's name copied) and read by agent threads
 * under the rank's mst lock.
 *
 * Deadlock evidence (docs/ARCHITECTURE.md "Deadlock detection"): a rank about to sleep counts
 * itself in its waker's `sleeping`, then reads the waker's `wakes` (bumped by every wake that
 * takes the slow path, all seq_cst), then looks at its condition once more; only if that is
 * still false does it publish "asleep, having seen `wakes` = N".  A waker makes the condition
 * true before it loads `sleeping`, so either the rank saw the condition, or the waker saw it
 * sleeping and bumped `wakes` past N.  So "asleep and wakes == N" means no wake for its wait
 * has happened yet: nobody has made its condition true, or the one who did has not woken it
 * yet (it still runs, and may not get a core for a while: one sleeper proves nothing, coll_fin.c),
 * or runs on the carrier thread the rank is parked on (wait.c wake: not counted), which resumes
 * it before it could look asleep in two snapshots in a row with all the others. */
#ifndef TMPI_LIBCLIENT_MSTATE_H
#define TMPI_LIBCLIENT_MSTATE_H

#include <stdint.h>

#include "job.h"

int tm_mst_init(struct tm_rank *me);
void tm_mst_destroy(struct tm_rank *me);

/* Whether the calling thread keeps me's record: the rank's own thread, single-threaded MPI. */
static inline int tm_mst_on(const struct tm_rank *me);

/* A blocking call starts: returns 1 if it is the outermost one (pass it to tm_mst_end). */
static inline int tm_mst_begin(struct tm_rank *me, const char *call, struct tm_commref *cr,
                               MPI_Comm comm, int peer, int tag);
static inline void tm_mst_end(struct tm_rank *me, int began);
static inline void tm_mst_dest(struct tm_rank *me, int began);

/* A spin on the links that lasts this long is published as a wait (wait.c spin_net). */
#define TM_MST_SPIN_NS 1000000u

/* tm_wait's slow path: the call waits (publish it once; since_ns: when it began, 0: now),
 * sleeps (seen: the waker's wakes read after counting itself sleeping and before its last
 * look at the condition), wakes.  Waits shorter than the spin are never published. */
void tm_mst_publish(struct tm_rank *me, uint64_t since_ns);
void tm_mst_unpublish(struct tm_rank *me);
void tm_mst_asleep(struct tm_rank *me, uint32_t seen);
void tm_mst_awake(struct tm_rank *me);
/* The rank's last MPI model closed (MPI_Finalize, the last MPI_Session_finalize); one opened
 * again after that (a session after MPI_Finalize); MPI_Init_thread gave MPI_THREAD_MULTIPLE. */
void tm_mst_finalized(struct tm_rank *me);
void tm_mst_reopened(struct tm_rank *me);
void tm_mst_multiple(struct tm_rank *me);

/* tmpi_client_ops.rank_mpi and helpers_busy. */
int tm_mst_rank_mpi(void *state, int world_rank, struct tmpi_rank_mpi *out);
int tm_mst_helpers_busy(void *state);

/* ---- inline ---- */

static inline int tm_mst_on(const struct tm_rank *me)
{
    return !me->mt && !me->helper && !tm_cur_child;
}

static inline int tm_mst_begin(struct tm_rank *me, const char *call, struct tm_commref *cr,
                               MPI_Comm comm, int peer, int tag)
{
    struct tm_mstate *m = &me->mst;
    if (m->call || TM_UNLIKELY(me->mt)) return 0;
    m->call = call;
    m->cr = cr;
    m->comm = comm;
    m->peer = peer;
    m->tag = tag;
    m->peer_dest = 0;
    return 1;
}

/* The call that began (tm_mst_begin returned 1) waits for a send to its peer. */
static inline void tm_mst_dest(struct tm_rank *me, int began)
{
    if (began) me->mst.peer_dest = 1;
}

static inline void tm_mst_end(struct tm_rank *me, int began)
{
    if (!began) return;
    me->mst.call = NULL;
    if (TM_UNLIKELY(me->mst.published)) tm_mst_unpublish(me);
}

#endif
