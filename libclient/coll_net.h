/* coll_net.h — where the inter-node phase of a collective plugs in (not written yet: the mesh
 * between agents comes with the multi-node issue).
 *
 * Plan (seed 000 §3.3-3.4, issue 4): on a communicator whose members span several nodes, each
 * node's members elect a leader (the member of lowest rank on that node) and a collective runs
 *   1. intra-node phase: the algorithms of coll_*.c over the node's members only, with the
 *      leader standing in for every member elsewhere (Reduce: combine into the leader;
 *      Gather: collect into the leader's staging buffer; Bcast with a remote root: skipped);
 *   2. inter-node phase, leaders only, on the collective connection (never the p2p queues),
 *      tree chosen by node count and message size: tm_coll_net_phase() below, called by
 *      tm_coll_start() on the leader between the two barriers of the intra-node phase;
 *   3. intra-node phase again where the result must reach every member (Bcast, Allreduce,
 *      Allgather, Alltoall): the leader is the root of the node-local part.
 * Each network message is counted in job->coll_stats.net[kind].
 *
 * Today every job runs on one node (tmpi_rank_info.nnodes == 1), so no communicator spans
 * nodes and phase 2 never runs. */
#ifndef TMPI_LIBCLIENT_COLL_NET_H
#define TMPI_LIBCLIENT_COLL_NET_H

#include <errno.h>

#include "coll.h"
#include "job.h"

/* 1 if c's members sit on more than one node. */
static inline int tm_coll_net_spans(const struct tm_rank *me, const struct tm_comm *c)
{
    (void)c;
    return me->info && me->info->nnodes > 1;
}

/* The leader's inter-node phase of algorithm al.  Not available yet. */
static inline int tm_coll_net_phase(struct tm_rank *me, struct tm_commref *cr,
                                    const struct tm_calgo *al, struct tm_cargs *a)
{
    (void)me, (void)cr, (void)al, (void)a;
    return -ENOSYS;
}

/* Receive daemon upcalls for NETD_COLL frames of this job (svc.h net_header / net_frame,
 * dispatched by net.c). */
void *tm_coll_net_header(struct tm_job *j, int node, const struct netd_hdr *h, void **ctx);
void tm_coll_net_frame(struct tm_job *j, int node, const struct netd_hdr *h, void *ctx);

#endif
