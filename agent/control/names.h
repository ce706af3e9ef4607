/* names.h — the agents' name service: MPI_Publish_name, MPI_Unpublish_name and MPI_Lookup_name
 * for every job of a user (MPI 4.1 §11.10), as Open MPI's ompi-server or MPICH's hydra name
 * server would serve them, but held by the agents themselves (docs/PROTOCOL.md "Names").
 *
 * Scope: a name belongs to the user who published it (the job's owner, as the agent checked
 * it at submission or assignment); another user neither sees it nor can unpublish it, and
 * may publish the same service name for themselves.
 *
 * Where names live: on the agent of the node where the publishing rank runs, with the job
 * that published it, until it is unpublished or that job ends.  A lookup, a publish (which
 * must find no other) and an unpublish first look at this agent's table; what is not here is
 * asked of every configured peer ([mesh] peers) at once, one mesh control connection each
 * (fanout.h, `[mesh] query_timeout_ms`).  A peer answers from its own table only.  Two
 * publishes of one name racing on two agents may both succeed (each looked before the other
 * entered it); a lookup then finds either.
 *
 * Loop thread only. */
#ifndef TMPI_AGENT_NAMES_H
#define TMPI_AGENT_NAMES_H

#include <stdint.h>
#include <sys/types.h>

#include "control.pb-c.h"

struct mesh;
struct agent_config;
struct event_base;
struct job;
struct mesh_conn;

/* Names one user may hold on one agent: a publish past it fails with -ENOSPC. */
#define NAMES_PER_USER_MAX 256
/* Requests of the agent's job hosts waiting for their peers' answers at once: more fail with
 * -EAGAIN (each holds a connection per peer until the round's deadline). */
#define NAMES_QUERIES_MAX 64

struct names;

/* The agent's job of that id, NULL when it is gone. */
typedef struct job *(*names_job_fn)(void *arg, uint64_t job_id);

/* The service over mesh (it connects to cfg's peers, query_timeout_ms bounds a round;
 * cfg stays valid and may be reloaded).  0 or -ENOMEM. */
int names_new(struct mesh *mesh, struct event_base *base, const struct agent_config *cfg,
              names_job_fn job_of, void *job_arg, struct names **ret);
/* The table and the requests in flight (their hosts get no answer: the agent is going). */
void names_free(struct names *n);

/* A rank of job j asked (its host's NameRequest, checked by jobhost_check.h): answered with a
 * NameReply to j's host, now or once the peers answered (nothing if j ended meanwhile). */
void names_host_request(struct names *n, struct job *j, const Tmpi__NameRequest *rq);
/* A peer's question on mesh connection c: answered from this table and closed. */
void names_answer(struct names *n, struct mesh_conn *c, const Tmpi__NameRequest *rq);
/* The context ids between jobs (NameRequest op 7) of one agent are 1 / NAMES_XCTX_SLICES of
 * svc.h's range, the slice of its node number modulo this (job_id.h): unique across the mesh
 * while the agents' node numbers differ modulo it, TMPI_XCTX_COUNT / NAMES_XCTX_SLICES / 3
 * (21845) communicators between jobs per agent until it restarts. */
#define NAMES_XCTX_SLICES 4096u

/* A find (op 6) of a port of job job_id (uid's) was answered by the peer at address, which
 * runs the job's node `node`. */
typedef void (*names_found_fn)(void *arg, uint64_t job_id, uint32_t node, uid_t uid,
                               const char *address);
/* The agent's node number (its slice of the context ids) and who hears of found ports. */
void names_set_xjob(struct names *n, uint32_t node_number, names_found_fn found, void *arg);
/* A job find is over: node `node` of job job_id runs for uid at the peer at address (err
 * 0), or no peer runs it (address NULL, err -ENOENT; -EACCES: for another user). */
typedef void (*names_where_fn)(void *arg, uint64_t job_id, uint32_t node, uid_t uid,
                               const char *address, int err);
/* Asks every configured peer whether it runs node `node` of job job_id for uid (NameRequest
 * op 8; asker: the job that needs it, for the log): where(arg, ...) once they answered (never
 * from inside this call), or a negative errno and where never runs: -ENOENT no peers,
 * -EAGAIN NAMES_QUERIES_MAX requests wait already, -ENOMEM. */
int names_find_job(struct names *n, uint64_t job_id, uint32_t node, uid_t uid, uint64_t asker,
                   names_where_fn where, void *arg);
/* Job job_id ended here: its names go. */
void names_job_gone(struct names *n, uint64_t job_id);

#endif
