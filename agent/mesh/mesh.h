/* mesh.h — connections between agents, each authenticated with the cluster key before
 * anything else is read (mesh_auth.h).  This part: the listener (--listen), the handshake on
 * both sides, and a ping an admin uses to check that two agents can reach and trust each
 * other (tmpictl ping).  Loop thread only.
 *
 * The mesh knows nothing of jobs: what an incoming connection carries for a job (a JobAssign,
 * a data connection's socket) goes to the callbacks registered with mesh_set_accept_ops, as
 * netd hands frames over through netd_ops. */
#ifndef TMPI_AGENT_MESH_H
#define TMPI_AGENT_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"

#define MESH_DEFAULT_PORT 7470

/* The join record a data connection (channel 1 or 2) carries right after the handshake and
 * before anything else: job uid (8 bytes), the connecting node's index (4), the channel (4),
 * big-endian.  The accepting agent hands the socket to the job that uid names. */
#define MESH_JOIN_SIZE 16

struct agent_config;
struct event_base;
struct mesh;
struct mesh_conn;

/* Makes the mesh of an agent whose settings are cfg (read at each use: a reload changes them
 * in place) and whose loop is base, loads the key file (if configured) and starts listening
 * (if configured; a listener needs a key).  0 or a negative errno, logged; *ret is set
 * whenever the mesh was allocated, also on a later failure (mesh_close frees it). */
int mesh_init(struct mesh **ret, const struct agent_config *cfg, struct event_base *base);
/* Closes every connection and frees m (NULL: nothing). */
void mesh_close(struct mesh *m);

/* Upcalls for incoming connections that carry a job, registered once after mesh_init (the
 * daemon wires them to the job code).  Loop thread.  A member left NULL (or no ops): such a
 * connection is refused (closed, logged). */
struct mesh_accept_ops {
    /* An authenticated incoming control connection (channel 3) sent a JobAssign: the callee
     * takes the connection over (mesh_conn_set_ops) or closes it (mesh_conn_close); ja is
     * valid during the call only. */
    void (*job_assign)(void *arg, struct mesh_conn *c, const Tmpi__JobAssign *ja);
    /* An authenticated incoming data connection (channel TMPI_CH_P2P or TMPI_CH_COLL) sent its
     * join record: the callee owns fd from now on (closes it if the record names nothing it
     * knows); peer ("address (name)") is for its messages. */
    void (*data_accept)(void *arg, const uint8_t join[MESH_JOIN_SIZE], uint32_t channel, int fd,
                        const char *peer);
    /* An authenticated incoming control connection asked about this agent (tmpictl nodes,
     * jobs --all on another node): the callee answers with mesh_send and closes it
     * (mesh_conn_close); q is valid during the call only. */
    void (*node_query)(void *arg, struct mesh_conn *c, const Tmpi__NodeQuery *q);
    /* An authenticated incoming control connection asked for a name (control/names.h): the
     * callee answers with mesh_send and closes it; rq is valid during the call only. */
    void (*name_request)(void *arg, struct mesh_conn *c, const Tmpi__NameRequest *rq);
    /* An authenticated incoming control connection opened with an XFrame or XGone: another
     * agent's end of the path between jobs (control/xrelay.h).  The callee takes the
     * connection over (mesh_conn_set_ops) and handles env, or closes it; env is valid during
     * the call only. */
    void (*xlink)(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env);
};
void mesh_set_accept_ops(struct mesh *m, const struct mesh_accept_ops *ops, void *arg);

/* "HOST:PORT", "HOST", ":PORT", "[V6]:PORT" -> host (may be empty) and port (default
 * MESH_DEFAULT_PORT; 0 lets a listener take any free port).  0 or -EINVAL. */
int mesh_parse_address(const char *s, char *host, size_t hostlen, char *port, size_t portlen);

/* Outcome of a ping: rc 0 with the round trip, or a negative errno and a reason. */
typedef void (*mesh_ping_cb)(void *arg, int rc, const char *peer, double rtt_usec, const char *err);

/* Connects to another agent, authenticates, exchanges one ping, then closes; cb runs exactly
 * once unless mesh_ping_forget() is called first.  -ENOKEY (no key file), -EINVAL (bad
 * address), -EHOSTUNREACH, -ECONNREFUSED, -EMFILE. */
int mesh_ping(struct mesh *m, const char *address, mesh_ping_cb cb, void *arg,
              struct mesh_conn **ret);
void mesh_ping_forget(struct mesh_conn *c);

/* Keeps an authenticated connection to another agent, with heartbeats every heartbeat_ms;
 * a peer that misses three, or whose connection ends, is reported down and retried.  0,
 * -EINVAL, -ENOMEM. */
int mesh_add_peer(struct mesh *m, const char *address);

struct mesh_peer_info {
    const char *address, *name, *state, *last_error;
    double rtt_usec;
    double since_seen_sec; /* -1: never */
    uint64_t ups;          /* times the peer came up */
};
/* Fills up to max entries; the strings live until the next loop iteration. */
size_t mesh_peers(const struct mesh *m, struct mesh_peer_info *out, size_t max);
size_t mesh_npeers(const struct mesh *m);

/* ---- connections that carry a job (used by the job code: coordination, members, links) ---- */

/* Callbacks of a control connection (channel 3) that carries one job.  Loop thread.  The
 * connection stays valid until on_close or mesh_conn_close; from on_frame, mesh_conn_close
 * of this or another connection is allowed.
 *
 * Liveness: once ready, such a connection is pinged from both ends every
 * min(heartbeat_ms, heartbeat_timeout_ms / 4) ms; the pings and their answers never reach
 * on_frame.  A peer that sends nothing at all for heartbeat_timeout_ms (stopped, swapped out,
 * its link down) ends the connection: on_close gets -ETIMEDOUT and "stopped answering for N
 * s".  While the owner does not read (its bufferevent's EV_READ disabled), and after this
 * agent itself did not run for a while, the clock restarts.  A closed connection whose output
 * the peer does not take within the timeout is dropped.  Data connections get TCP keepalive
 * and TCP_USER_TIMEOUT of about the same time instead (their bytes are not the mesh's). */
struct mesh_ctl_ops {
    /* outgoing: the handshake succeeded, frames may be sent */
    void (*on_ready)(void *arg, struct mesh_conn *c);
    void (*on_frame)(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env);
    /* everything written so far has left (output throttling) */
    void (*on_drain)(void *arg, struct mesh_conn *c);
    /* the connection failed or ended (err < 0 and why); it is freed right after */
    void (*on_close)(void *arg, struct mesh_conn *c, int err, const char *why);
};

/* Connects to address on the control channel; ops run as the connection progresses.
 * -ENOKEY, -EINVAL, -EHOSTUNREACH, -ECONNREFUSED, -EMFILE (then no callback runs). */
int mesh_ctl_connect(struct mesh *m, const char *address, const struct mesh_ctl_ops *ops, void *arg,
                     struct mesh_conn **ret);
/* Takes over the callbacks of an incoming control connection (from the job_assign upcall). */
void mesh_conn_set_ops(struct mesh_conn *c, const struct mesh_ctl_ops *ops, void *arg);
/* Queues one frame.  0, -EMSGSIZE, -ENOMEM, -ENOTCONN (closing). */
int mesh_send(struct mesh_conn *c, const Tmpi__Envelope *env);
/* The connection's bufferevent (thread-safe: rank threads of a member job write to it). */
struct bufferevent *mesh_conn_bev(struct mesh_conn *c);
const char *mesh_conn_peer_name(const struct mesh_conn *c);
/* Stops reading, calls no callback any more, and closes once the output is flushed. */
void mesh_conn_close(struct mesh_conn *c);

/* Outcome of a data connection: fd >= 0 (authenticated, join record sent, the caller owns
 * it) or err < 0 and why. */
typedef void (*mesh_data_cb)(void *arg, int fd, int err, const char *why);
/* Opens a data connection for channel (TMPI_CH_P2P or TMPI_CH_COLL) that sends join after
 * the handshake.  cb runs once unless mesh_conn_close(*ret) comes first. */
int mesh_data_connect(struct mesh *m, const char *address, uint32_t channel,
                      const uint8_t join[MESH_JOIN_SIZE], mesh_data_cb cb, void *arg,
                      struct mesh_conn **ret);

void mesh_join_encode(uint8_t out[MESH_JOIN_SIZE], uint64_t uid, uint32_t node, uint32_t channel);
void mesh_join_decode(const uint8_t in[MESH_JOIN_SIZE], uint64_t *uid, uint32_t *node,
                      uint32_t *channel);

/* The port the listener got (the chosen one for port 0); 0 when not listening. */
uint16_t mesh_listen_port(const struct mesh *m);

void mesh_stats(const struct mesh *m, const char **ret_listen, uint64_t *ret_accepted,
                uint64_t *ret_failures);

/* Frames (and their bytes, headers included) of the control channel: job coordination,
 * heartbeats, pings and queries.  Any thread. */
struct mesh_traffic {
    uint64_t frames_sent, bytes_sent, frames_received, bytes_received;
};
void mesh_traffic(struct mesh *m, struct mesh_traffic *ret);

#endif
