/* mesh_budget.h — who may hold the mesh port's handshake slots (connections that have not
 * proved the cluster key yet).
 *
 * A stranger without the key can still open connections.  They share MESH_MAX_PENDING
 * slots, at most MESH_MAX_PENDING_PER_ADDR from one address; beyond, a connection is closed at
 * once.  The addresses of the configured peers ([mesh] peers, resolved at start) do not draw on
 * the strangers' slots: each has MESH_MAX_PENDING_PER_PEER of its own, so a flood from other
 * addresses, however many, never stops a peer's heartbeats, pings or jobs. */
#ifndef TMPI_MESH_BUDGET_H
#define TMPI_MESH_BUDGET_H

#include <netinet/in.h>
#include <stddef.h>

/* Pending handshakes of all addresses that are not configured peers, and of one of them. */
#define MESH_MAX_PENDING 256
#define MESH_MAX_PENDING_PER_ADDR 32
/* Pending handshakes of one configured peer's address (a job across nodes opens a control
 * and two data connections per pair of nodes at once). */
#define MESH_MAX_PENDING_PER_PEER 64

struct mesh_budget {
    char (*peers)[INET6_ADDRSTRLEN]; /* the configured peers' addresses, numeric */
    size_t npeers;
};

/* Resolves each "HOST:PORT" of peers[] and records its addresses.  A host that does not
 * resolve is left out (logged): it gets no reserve.  0 or -ENOMEM. */
int mesh_budget_init(struct mesh_budget *b, char *const *peers, size_t npeers);
void mesh_budget_free(struct mesh_budget *b);

/* Whether host (a numeric address; an IPv4-mapped IPv6 one counts as its IPv4 address) is a
 * configured peer's. */
int mesh_budget_is_peer(const struct mesh_budget *b, const char *host);

/* Whether a new connection from host may start a handshake, given the pending handshakes of
 * all strangers (`strangers`) and of host (`mine`).  NULL, or the name of the limit it hit. */
const char *mesh_budget_refuse(int peer, unsigned strangers, unsigned mine);

#endif
