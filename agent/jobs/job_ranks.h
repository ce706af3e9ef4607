/* job_ranks.h — what every rank of a job is doing (tmpictl ranks) and the deadlock watch.
 *
 * The job host answers the agent's RanksQuery (host/host_ranks.h).  Here, the agent's side:
 * a `ranks_gather` asks every part of a job (its one job host, or for a job across nodes
 * every member through the coordinator) and merges the RanksReply parts into one snapshot;
 * tools waiting for it (tmpictl ranks) and the job's deadlock watch are its waiters.  One
 * query is out at a time; requests that come meanwhile share the next one (an answer never
 * predates its request: a rank spawned just before it is in).  The watch asks every
 * deadlock_check_ms and hands consecutive snapshots to deadlock.h.  Loop thread only. */
#ifndef TMPI_AGENT_JOB_RANKS_H
#define TMPI_AGENT_JOB_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"
#include "deadlock.h"

struct job;
struct agent;

/* Exit status of a job ended for a deadlock (tmpi-launch --on-deadlock=abort): as a job whose
 * --timeout ran out, for it would never have finished either. */
#define JOB_DEADLOCK_STATUS 124
struct event_base;

void ranks_snap_free(struct ranks_snap *s);
/* A RanksReply of the snapshot for a tool (rank order; pointers into s: free only the array). */
int ranks_snap_reply(const struct ranks_snap *s, uint64_t job_id, Tmpi__RanksReply *out);

struct ranks_gather;
struct ranks_waiter;

/* How a gather reaches the job's parts: send_query(arg, query) asks them all; a part's answer
 * comes back through ranks_gather_part.  part_name (may be NULL) names a part that did not
 * answer.  The parts get [mesh] query_timeout_ms to answer (fanout.h, the agent's one fan-out
 * engine). */
struct ranks_gather_ops {
    int (*send_query)(void *arg, uint64_t query);
    const char *(*part_name)(void *arg, uint32_t part);
};

/* For a job of nranks ranks in nparts parts (nodes), which may spawn ranks up to world rank
 * universe - 1 (MPI_Comm_spawn: parts report them when they run; a snapshot is complete with
 * the world's ranks). */
struct ranks_gather *ranks_gather_new(struct agent *a, uint32_t nranks, uint32_t universe,
                                      uint32_t nparts, const struct ranks_gather_ops *ops,
                                      void *arg);
/* Every waiter is told the job is gone (err), the watch stops, and g is freed. */
void ranks_gather_free(struct ranks_gather *g, const char *err);

/* done(arg, snap, err): snap when every part answered (err NULL), else err; the snapshot is
 * the callee's to keep (ranks_snap_free) or free.  The waiter is freed after done returns. */
typedef void (*ranks_done_fn)(void *arg, struct ranks_snap *snap, const char *err);
/* Asks now (or in the next query, when one is out).  NULL when out of memory. */
struct ranks_waiter *ranks_gather_ask(struct ranks_gather *g, ranks_done_fn done, void *arg);
/* The waiter's asker went away: done is never called. */
void ranks_waiter_cancel(struct ranks_waiter *w);

/* A part's RanksReply (the envelope stays the caller's: what is kept is copied). */
void ranks_gather_part(struct ranks_gather *g, const Tmpi__RanksReply *r);

/* The deadlock watch: every interval_ms (0: never) a snapshot goes to deadlock.h; found(arg,
 * report) runs once per deadlock found (a later change of state re-arms it). */
int ranks_watch_start(struct ranks_gather *g, uint32_t interval_ms,
                      void (*found)(void *arg, const char *report), void *arg);

/* The watch found job job_id deadlocked: logs report and fills *env (with *d) with the
 * Deadlock frame for the launcher.  Returns 1 when the job asked for --on-deadlock=abort (the
 * caller then ends it), else 0.  Shared by the coordinator and the agent's side of a single
 * node's job host (jobhost.c). */
int ranks_deadlock_frame(uint64_t job_id, Tmpi__DeadlockAction action, const char *report,
                         Tmpi__Deadlock *d, Tmpi__Envelope *env);

#endif
