/* coll_fin.c — the rendezvous of MPI_Finalize on one node (coll.h tm_coll_finalize_sync).
 *
 * MPI_Finalize is collective over MPI_COMM_WORLD, and no rank may leave while a peer may still
 * read its memory.  Its rendezvous has a counter of its own: on the collectives' counting
 * barrier a Finalize would pair with a peer's MPI_Allreduce (an erroneous program, but one
 * that must end with an error, not a crash) and let the finalizing rank leave while the peer
 * reads its freed arguments.  With its own counter the finalizing rank instead sees, on the
 * collectives' counter, an arrival at a round it will never join, and ends the job saying so.
 * Collectives that do not count arrivals there (a Bcast waits for its root alone) show in the
 * peers' published waits (mstate.h): a peer asleep in a collective on MPI_COMM_WORLD that
 * nobody woke, seen twice in the same sleep, waits for a round this rank never joins.
 * Finalize is not a hot path, but it ends every job: the wait yields first (a job whose ranks
 * finalize together leaves at once) and then polls.  Only the first rank to arrive looks at the
 * peers' published waits: a look reads every rank's record under its lock, and 4,096 finalizing
 * ranks each looking at 4,096 peers every 20 ms kept the ranks' locks so busy that the unit
 * test of 4,096 ranks did not finish in two minutes.  The first arrival waits longest, so it
 * sees whatever a later one could. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "coll.h"
#include "mstate.h"
#include "wait.h"

/* How often a finalizing rank looks at its peers, and how long it gives a peer that arrived
 * at a round to publish which call it is in (mstate.h: after TM_MST_SPIN_NS of waiting). */
#define TM_FIN_POLL_NS 1000000L
#define TM_FIN_NAME_POLLS 50
#define TM_FIN_LOOK_POLLS 20   /* polls between two looks at the peers' published waits */
#define TM_FIN_YIELD_POLLS 200 /* polls that yield the processor instead of sleeping */

static void nap(void)
{
    struct timespec ts = {0, TM_FIN_POLL_NS};
    nanosleep(&ts, NULL);
}

/* A rank of the job waiting in a collective on MPI_COMM_WORLD other than MPI_Finalize (if
 * blocked_only: asleep, nobody woke it since): its world rank, call (static storage) and
 * sleep count; -1 if none. */
static int find_waiter(struct tm_rank *me, int blocked_only, const char **ret_call,
                       uint64_t *ret_sleeps)
{
    for (int q = 0; q < me->job->size; q++) {
        struct tmpi_rank_mpi st;
        if (q == me->rank || tm_mst_rank_mpi(me->job, q, &st) < 0) continue;
        if (st.call && st.comm_world && st.peer == TMPI_PEER_ALL &&
            strcmp(st.call, "MPI_Finalize") != 0 && (st.blocked || !blocked_only)) {
            *ret_call = st.call;
            *ret_sleeps = st.sleeps;
            return q;
        }
    }
    return -1;
}

int tm_coll_finalize_sync(struct tm_rank *me, struct tm_commref *cr, char *why, size_t len)
{
    struct tm_comm *c = cr->c;
    const uint64_t n = (uint64_t)c->size, mine = cr->nbarrier * n;
    /* the round this arrival belongs to ends at the next multiple of n: a communicator whose
     * counter outlived an earlier job's rendezvous (the unit tests' harness) still counts */
    const uint64_t prev = atomic_fetch_add_explicit(&c->coll.fin_arrive, 1, memory_order_seq_cst);
    const uint64_t target = (prev / n + 1) * n;
    const int looker = prev % n == 0; /* the round's first arrival (see above) */
    const char *call = NULL;
    int q = -1, seen = -1;
    uint64_t sleeps = 0, seen_sleeps = 0;
    uint64_t last = 0;
    for (unsigned i = 1, stall = 0;; i++, stall++) {
        uint64_t got = atomic_load_explicit(&c->coll.fin_arrive, memory_order_seq_cst);
        if (got >= target) return 0;
        if (got != last) last = got, stall = 0;
        if (atomic_load_explicit(&c->coll.arrive, memory_order_seq_cst) > mine) break;
        if (looker && i > TM_FIN_YIELD_POLLS && stall && stall % TM_FIN_LOOK_POLLS == 0) {
            q = find_waiter(me, 1, &call, &sleeps);
            if (q >= 0 && q == seen && sleeps == seen_sleeps) break;
            seen = q, seen_sleeps = sleeps;
        }
        tm_progress_poll(me);
        if (i <= TM_FIN_YIELD_POLLS)
            sched_yield();
        else
            nap();
    }
    for (int i = 0; i < TM_FIN_NAME_POLLS && q < 0; i++, nap())
        q = find_waiter(me, 0, &call, &sleeps);
    if (q >= 0)
        snprintf(why, len,
                 "rank %d called MPI_Finalize while rank %d waits in %s on MPI_COMM_WORLD, a "
                 "collective rank %d never joins (every collective must complete before "
                 "MPI_Finalize)",
                 me->rank, q, call, me->rank);
    else
        snprintf(why, len,
                 "rank %d called MPI_Finalize while another rank waits in a collective on "
                 "MPI_COMM_WORLD that rank %d never joins (every collective must complete "
                 "before MPI_Finalize)",
                 me->rank, me->rank);
    return -EPROTO;
}
