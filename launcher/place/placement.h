/* placement.h — which node runs which rank.
 *
 * From the hosts (with slots, max_slots and agent ports) and the request (-n, --ppn,
 * --map-by, --oversubscribe) compute, for every global rank, its node and its local rank, and
 * for every node the list of its global ranks.  This is what the launcher hands to its local
 * agent; the agents derive their rank maps from it.
 *
 * Policy (close to Open MPI's):
 *   - slot mapping (default) fills each host's slots, in host order, before the next host:
 *     consecutive ranks share a node.
 *   - node mapping deals ranks round robin over the hosts, skipping hosts whose slots are
 *     full.
 *   - --ppn K uses ceil(N/K) hosts, in order, with at most K ranks each: slot mapping gives
 *     each K consecutive ranks (the last one the rest), node mapping deals round robin over
 *     them.  More nodes than hosts is an error.  K above a host's slots oversubscribes it.
 *   - More ranks than slots is an error ("not enough slots") unless oversubscribe is set;
 *     then, once every slot is used, the extra ranks go on in further passes -- slot mapping:
 *     each host takes up to its slots again per pass (ranks stay contiguous per node); node
 *     mapping: round robin continues.  max_slots is a bound in every case.
 *   - No hosts: one node, the launcher's local agent, with all N ranks (ppn must then cover
 *     N).
 *   - --ppn K without N: K ranks on every host (on the local agent alone without hosts), as
 *     Open MPI's -N K; p->nprocs says how many that is.
 * Nodes that receive no rank are left out, or with keep_spare listed after the others.  Local ranks
 * follow global order: node->ranks is ascending and node->ranks[l] is the global rank whose local
 * rank is l.
 */
#ifndef TMPI_LAUNCHER_PLACEMENT_H
#define TMPI_LAUNCHER_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "errlist.h"
#include "hostlist.h"

/* Most ranks we place: bounds the three per-rank arrays (48 MiB). */
#define PLACEMENT_MAX_RANKS (1u << 22)

enum placement_map {
    PLACEMENT_MAP_SLOT,
    PLACEMENT_MAP_NODE,
};

struct placement_request {
    uint32_t nprocs; /* -n, >= 1; 0 with ppn: ppn ranks on every host (-N K without -n) */
    uint32_t ppn;    /* --ppn, 0: not given */
    enum placement_map map_by;
    bool oversubscribe;
    /* the hosts that receive no rank are kept as spare nodes (MPI_Comm_spawn's room) */
    bool keep_spare;
};

/* One node of the job: one agent. */
struct placement_node {
    char *host; /* name or address (IPv6 without brackets); NULL: the launcher's local
                 * agent (no hosts were given) */
    bool ipv6;
    uint16_t port;   /* the agent's port; 0 for the local agent */
    uint32_t nranks; /* >= 1 */
    uint32_t *ranks; /* nranks global ranks, ascending; ranks[l] has local rank l */
    /* the host's slots it leaves free (MPI_Comm_spawn's room); 0 without hosts */
    uint32_t free_slots;
};

struct placement {
    uint32_t nprocs;
    uint32_t nnodes;
    /* with keep_spare: the hosts without ranks, nodes[nnodes .. nnodes + nspare) in host
     * order, each with nranks 0 and its slots free */
    uint32_t nspare;
    struct placement_node *nodes; /* in host order */
    uint32_t *rank_node;          /* [nprocs]: node index of each global rank */
    uint32_t *rank_local;         /* [nprocs]: local rank of each global rank */
    uint32_t *rank_store;         /* backing store of every node's ranks */
};

/* Place req->nprocs ranks on hosts (NULL or empty: the local agent alone).  Returns 0 and
 * fills *ret; -EINVAL with the reason in err (one message); -ENOMEM. */
int placement_compute(const struct hostlist *hosts, const struct placement_request *req,
                      struct placement *ret, struct errlist *err);

/* Print the map for --display-map:
 *     node 0: node01:7470, 4 ranks: 0-3
 *     ...
 *     rank 0: node 0 (node01:7470), local rank 0
 * Rank lists are compressed into ranges. */
void placement_print(const struct placement *p, FILE *f);

void placement_free(struct placement *p);

#endif
