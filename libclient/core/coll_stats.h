/* coll_stats.h — per-job collective counters (MPIX_Coll_counters in mpi.h).  Atomics, relaxed:
 * any rank may bump them, readers only want totals.  ops counts each collective call once (by
 * the member of rank 0 in the communicator); net counts messages the inter-node phase sends
 * (coll_net.h), 0 on one node. */
#ifndef TMPI_LIBCLIENT_COLL_STATS_H
#define TMPI_LIBCLIENT_COLL_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#include "mpi.h"

struct tm_coll_stats {
    _Atomic uint64_t ops[MPIX_COLL_KINDS];
    _Atomic uint64_t net[MPIX_COLL_KINDS];
};

#endif
