/* mesh.h — connections between agents, each authenticated with the cluster key before
 * anything else is read (mesh_auth.h).  This part: the listener (--listen), the handshake on
 * both sides, and a ping an admin uses to check that two agents can reach and trust each
 * other (tmpictl ping).  Loop thread only. */
#ifndef TMPI_AGENT_MESH_H
#define TMPI_AGENT_MESH_H

#include <stddef.h>
#include <stdint.h>

#define MESH_DEFAULT_PORT 7470

struct agent;
struct mesh_conn;

/* Loads the key file (if configured) and starts listening (if configured; a listener needs
 * a key).  0 or a negative errno, logged. */
int mesh_init(struct agent *a);
void mesh_close(struct agent *a);

/* "HOST:PORT", "HOST", ":PORT", "[V6]:PORT" -> host (may be empty) and port (default
 * MESH_DEFAULT_PORT; 0 lets a listener take any free port).  0 or -EINVAL. */
int mesh_parse_address(const char *s, char *host, size_t hostlen, char *port, size_t portlen);

/* Outcome of a ping: rc 0 with the round trip, or a negative errno and a reason. */
typedef void (*mesh_ping_cb)(void *arg, int rc, const char *peer, double rtt_usec, const char *err);

/* Connects to another agent, authenticates, exchanges one ping, then closes; cb runs exactly
 * once unless mesh_ping_forget() is called first.  -ENOKEY (no key file), -EINVAL (bad
 * address), -EHOSTUNREACH, -ECONNREFUSED, -EMFILE. */
int mesh_ping(struct agent *a, const char *address, mesh_ping_cb cb, void *arg,
              struct mesh_conn **ret);
void mesh_ping_forget(struct mesh_conn *c);

/* Keeps an authenticated connection to another agent, with heartbeats every heartbeat_ms;
 * a peer that misses three, or whose connection ends, is reported down and retried.  0,
 * -EINVAL, -ENOMEM. */
int mesh_add_peer(struct agent *a, const char *address);

struct mesh_peer_info {
    const char *address, *name, *state, *last_error;
    double rtt_usec;
    double since_seen_sec; /* -1: never */
    uint64_t ups;          /* times the peer came up */
};
/* Fills up to max entries; the strings live until the next loop iteration. */
size_t mesh_peers(const struct agent *a, struct mesh_peer_info *out, size_t max);
size_t mesh_npeers(const struct agent *a);

void mesh_stats(const struct agent *a, const char **ret_listen, uint64_t *ret_accepted,
                uint64_t *ret_failures);

#endif
