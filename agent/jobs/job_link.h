/* job_link.h — the agent's side of a member job's data links: it opens and takes them and
 * hands each one to the job's host.
 *
 * Per pair of member nodes two links (channel 1 point-to-point, channel 2 collectives): node i
 * opens them to every node j > i (mesh handshake with the cluster key for that channel, then
 * the join record), node j takes them by job uid when they arrive (mesh.c, job_link_accept).
 * Each authenticated socket goes to the member's job host at once (jobhost_pass_link: the fd
 * over the host's links socket), and the agent keeps no copy: the host's own receive daemons
 * read it (job_net.h), so the data path is the same as when the ranks ran in the agent, and
 * the host, which never holds the key, gets exactly its own job's links.  The host says
 * JobLinked once it holds every link; a link this agent cannot open is reported here
 * (JobLinked with the error, job_member_linked).  A first dial that fails on the way (a
 * handshake that timed out under loss, a reset) is retried like a relink's, within
 * link_reconnect_timeout_ms of JobConnect; one the peer refuses (another key) fails at once.
 *
 * A link that breaks while the job runs (job_net.h, "Reconnecting") is asked for again by the
 * host (job_link_relink): the node below dials again, as at the start, at most once every
 * JOB_LINK_REDIAL_MS, until the socket is up or the job ends (the host's
 * link_reconnect_timeout_ms bounds the wait); the node above takes the peer's new connection
 * for a link it handed over before and hands it over again.
 *
 * Loop thread only. */
#ifndef TMPI_AGENT_JOB_LINK_H
#define TMPI_AGENT_JOB_LINK_H

#include <stdint.h>

#include "control.pb-c.h"
#include "mesh.h"
#include "mesh_auth.h"

struct agent;
struct job;
struct job_link;
struct mesh_conn;

/* One link of the table: to node `node` on channel `channel`. */
struct job_link_slot {
    struct job_link *jl;
    int node, channel;
    struct mesh_conn *dial; /* outgoing connection in progress */
    int fd;                 /* authenticated socket not yet taken by the host, else -1 */
    int handed;             /* the host has it */
    int relink;             /* the host asked for it anew: dial failures are retried */
    struct event *redial;   /* the next dial of a relink (JOB_LINK_REDIAL_MS) */
    uint64_t dialled_ms;    /* when the last dial of this slot started (monotonic) */
};

/* Dials of one link anew at most this often (a peer that takes the connection and drops it
 * at once, its job's process gone, is not dialled in a loop). */
#define JOB_LINK_REDIAL_MS 500

struct job_link {
    struct job *job;
    uint64_t uid;
    int self, nnodes;
    char (*addr)[300];           /* "HOST:PORT" of every node */
    struct job_link_slot *slots; /* [nnodes * 2]: node * 2 + channel - 1 */
    int connecting;              /* JobConnect arrived */
    /* The first set-up of the links: dials that fail on the way are retried until then
     * (monotonic ms), link_reconnect_timeout_ms after JobConnect, as a reconnect is. */
    uint64_t setup_deadline_ms;
    uint32_t setup_budget_ms;
    int failed; /* a failure was reported: no more reports */
};

/* The link table of member job j, node self of the job's nodes.  0, -ENOMEM. */
int job_link_new(struct job *j, uint64_t uid, int self, size_t nnodes,
                 Tmpi__NodePlacement *const *nodes, struct job_link **ret);
/* JobConnect arrived: dial every node above us. */
void job_link_connect(struct job_link *jl);
/* An authenticated data connection with this join record arrived (mesh.c); fd is ours. */
void job_link_accept(struct agent *a, const uint8_t join[MESH_JOIN_SIZE], uint32_t channel, int fd,
                     const char *peer);
/* The host asks for link (node, channel) anew: its socket broke.  0, or -EINVAL when there is
 * no such link. */
int job_link_relink(struct job_link *jl, int node, int channel);
/* The host's links socket can take more: hand over what waits. */
void job_link_flush(struct job_link *jl);
/* Frees the table, closing what was not handed over and every dial in progress. */
void job_link_free(struct job_link *jl);

#endif
