/* job_spawn.h — ranks a job starts while it runs (MPI_Comm_spawn, svc spawn).
 *
 * A spawned rank is one more thread of the job host, loaded like the job's own ranks (its own
 * copy of its program, its own libc state): the job's world of ranks grows into the slots the
 * universe leaves (world ranks world_size .. universe - 1, never reused), the job ends when
 * the last of them all has ended, and a spawned rank that fails fails the job.  The rank
 * thread that spawns posts the request; the job thread, which loads and unloads every image,
 * serves it between the waits of wait_ranks (one spawn at a time, the others queue).
 *
 * The universe (MPI_UNIVERSE_SIZE): on one node the job's TMPI_UNIVERSE_SIZE (tmpi-launch
 * --universe-size), else the larger of the world size and this node's CPUs.  A job across
 * nodes: the world plus the spawn slots the launcher gave each of its nodes (NodePlacement
 * spawn_slots: the host file's free slots, or --universe-size), world ranks world_size on
 * filling node 0's slots, then node 1's ... (job_new_member fixes node_of_rank for them all).
 * A spawn there starts on each node the ranks its slots hold: the root's node here, the
 * others on request of the root's host over the job's links (libclient/comm/dyn_net.h),
 * each by this same call. */
#ifndef TMPI_AGENT_JOB_SPAWN_H
#define TMPI_AGENT_JOB_SPAWN_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "svc.h"

struct job;
struct rank;
struct agent_config;

/* Job thread, before the ranks' infos are made: the universe and the world-rank tables grown
 * to it, with the agent's settings spawned ranks follow (cfg, kept for the job's life) and its
 * CPUs.  0, or a negative errno after cancelling the job with the reason. */
int job_spawn_prepare(struct job *j, const struct agent_config *cfg, int ncpus);
/* The job's universe (world_size before job_spawn_prepare). */
uint32_t job_spawn_universe(const struct job *j);

/* A rank thread of j (svc spawn): posts the spawn and waits until the job thread started its
 * ranks or refused.  0 or a negative errno with the reason in err. */
int job_spawn_request(struct job *j, const struct tmpi_spawn_app *apps, int napps, int first,
                      char *err, size_t errlen);

/* A spawned rank's thread, before its main: waits until every node of its spawn started its
 * share (job_spawn_gate).  1 run main, 0 the spawn failed elsewhere (end without running it,
 * no failure), -1 the job is ending. */
int job_spawn_wait_go(struct rank *r);
/* Any thread (svc spawn_gate): the ranks of the spawn from world rank first started here run
 * (go) or end unrun.  0, or -ENOENT: no such spawn waits here. */
int job_spawn_gate(struct job *j, int first, int go);

/* Job thread, j->mu held (wait_ranks): serves a posted spawn, if any (the lock is dropped
 * meanwhile).  1 if it served one. */
int job_spawn_serve_locked(struct job *j);
/* Job thread, j->mu not held: tells the agent (RanksSpawned, no new ranks) of the spawned
 * ranks here that ended since it last told, so that the coordinator sees a spare node whose
 * spawned ranks all ended as idle again (it releases the job's nodes only then). */
void job_spawn_tell_ended(struct job *j);
/* Any thread (the loop thread's rank queries): the spawned ranks that have a thread, the
 * newest spawn first; how many there are, of which the first cap go into out.  They stay
 * until job_spawn_free (job_free). */
uint32_t job_spawn_ranks(struct job *j, struct rank **out, uint32_t cap);
/* Job thread, once every rank ended (it serves no more): a spawn posted or posted later fails
 * with -ECANCELED (a request another node's root sent late is answered, not left waiting). */
void job_spawn_close(struct job *j);
/* j->mu held: spawned rank threads started so far. */
uint32_t job_spawn_started_locked(const struct job *j);

/* Job thread, once the job is over: joins the spawned threads (before libtmpi's state goes)
 * and runs their images' destructors (with the job's own ranks'); job_free frees the rest. */
void job_spawn_join(struct job *j);
void job_spawn_unload(struct job *j);
void job_spawn_free(struct job *j);

#endif
