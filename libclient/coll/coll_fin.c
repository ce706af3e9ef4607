/* coll_fin.c — the rendezvous of MPI_Finalize on one node (coll.h tm_coll_finalize_sync).
 *
 * MPI_Finalize is collective over MPI_COMM_WORLD, and no rank may leave while a peer may still
 * read its memory.  Its rendezvous has a counter of its own: on the collectives' counting
 * barrier a Finalize would pair with a peer's MPI_Allreduce (an erroneous program, but one
 * that must end with an error, not a crash) and let the finalizing rank leave while the peer
 * reads its freed arguments.  With its own counter the finalizing rank instead sees, on the
 * collectives' counter, an arrival at a round it will never join, and ends the job saying so
 * (unless the rendezvous is complete by then: a member that saw it complete goes on to
 * Finalize's barrier, which counts on that counter too).
 * Collectives that do not count arrivals there (a Bcast waits for its root alone) show in the
 * peers' published waits (mstate.h), by the rule of the agent's deadlock check: in two looks
 * in a row, every other rank is either in MPI_Finalize or asleep, nobody having woken it, in
 * the same sleep, in a collective on MPI_COMM_WORLD, and at least one is asleep.  Then nothing
 * can end those sleeps (a rank that computes, or one that made a sleeper's condition true and
 * has yet to wake it, would show as running), and their collectives wait for the finalizing
 * ranks, which never join.  One peer seen asleep twice proves nothing: under load the rank
 * that completed its collective may not run for tens of milliseconds between its store and
 * its wake-up (the last arrival of an Allreduce wakes 63 members one by one), which the first
 * version took for an erroneous program and ended correct jobs of test_client_coll with.
 * Finalize is not a hot path, but it ends every job: the wait yields first (a job whose ranks
 * finalize together leaves at once; a rank on a carrier yields to the carrier's other ranks,
 * so one whose wake-up a neighbour skipped, wait.c, runs before a look could see it asleep
 * twice) and then polls.  Only the first rank to arrive looks at the peers' published waits: a
 * look reads every rank's record under its lock, and 4,096 finalizing ranks each looking at
 * 4,096 peers every 20 ms kept the ranks' locks so busy that the unit test of 4,096 ranks did
 * not finish in two minutes.  The first arrival waits longest, so it sees whatever a later one
 * could.  Like every wait, this one ends when the job is cancelled. */
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

/* Whether rank st waits in a collective on MPI_COMM_WORLD other than MPI_Finalize (if
 * blocked_only: asleep, nobody woke it since). */
static int world_waiter(const struct tmpi_rank_mpi *st, int blocked_only)
{
    return st->call && st->comm_world && st->peer == TMPI_PEER_ALL &&
           strcmp(st->call, "MPI_Finalize") != 0 && (st->blocked || !blocked_only);
}

/* A rank of the job waiting in a collective on MPI_COMM_WORLD other than MPI_Finalize: its
 * world rank, call (static storage) and sleep count; -1 if none. */
static int find_waiter(struct tm_rank *me, const char **ret_call, uint64_t *ret_sleeps)
{
    for (int q = 0; q < me->job->size; q++) {
        struct tmpi_rank_mpi st;
        if (q == me->rank || tm_mst_rank_mpi(me->job, q, &st) < 0) continue;
        if (world_waiter(&st, 0)) {
            *ret_call = st.call;
            *ret_sleeps = st.sleeps;
            return q;
        }
    }
    return -1;
}

/* One look at the other ranks: stuck is 1 if every one of them is in MPI_Finalize or asleep
 * (nobody woke it since) in a collective on MPI_COMM_WORLD; asleep counts the latter and
 * sleeps sums their sleep counts.  Between two such looks no rank leaves MPI_Finalize's
 * rendezvous unless it completes, and a sleeper only wakes to a new sleep (its count grows)
 * or to another state, so two looks with the same count and sum saw the very same sleeps. */
struct fin_look {
    int stuck, asleep;
    uint64_t sleeps;
};

static struct fin_look look(struct tm_rank *me)
{
    struct fin_look l = {1, 0, 0};
    for (int q = 0; q < me->job->size && l.stuck; q++) {
        struct tmpi_rank_mpi st;
        if (q == me->rank) continue;
        if (tm_mst_rank_mpi(me->job, q, &st) < 0) {
            l.stuck = 0;
        } else if (world_waiter(&st, 1)) {
            l.asleep++;
            l.sleeps += st.sleeps;
        } else if (!st.call || strcmp(st.call, "MPI_Finalize") != 0) {
            l.stuck = 0;
        }
    }
    return l;
}

static void yield(struct tm_rank *me)
{
    if (tm_wait_parks(me))
        me->job->svc->rank_yield();
    else
        sched_yield();
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
    struct fin_look seen = {0, 0, 0};
    uint64_t last = 0;
    for (unsigned i = 1, stall = 0;; i++, stall++) {
        tm_wait_check_cancel(me);
        uint64_t got = atomic_load_explicit(&c->coll.fin_arrive, memory_order_seq_cst);
        if (got >= target) return 0;
        /* the wait shows (tmpictl ranks) and a looker tells it from one that computes */
        if (i == 1 && tm_mst_on(me) && !me->mst.published) tm_mst_publish(me, 0);
        if (got != last) last = got, stall = 0;
        /* an arrival beyond our last round: a member's Finalize barrier (it saw the rendezvous
         * complete after our load above, seq_cst), or a collective we never join */
        if (atomic_load_explicit(&c->coll.arrive, memory_order_seq_cst) > mine) {
            if (atomic_load_explicit(&c->coll.fin_arrive, memory_order_seq_cst) >= target) return 0;
            break;
        }
        if (looker && i > TM_FIN_YIELD_POLLS && stall && stall % TM_FIN_LOOK_POLLS == 0) {
            struct fin_look l = look(me);
            if (l.stuck && l.asleep && seen.stuck && l.asleep == seen.asleep &&
                l.sleeps == seen.sleeps)
                break;
            seen = l;
        }
        tm_progress_poll(me);
        if (i <= TM_FIN_YIELD_POLLS)
            yield(me);
        else
            nap();
    }
    const char *call = NULL;
    uint64_t sleeps = 0;
    int q = -1;
    for (int i = 0; i < TM_FIN_NAME_POLLS && q < 0; i++, nap())
        q = find_waiter(me, &call, &sleeps);
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
