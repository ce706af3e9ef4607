/* coll_net_move.h — the leaders' share (coll_net.h) of the collectives that move blocks or
 * prefixes rather than one vector: Gather(v), Scatter(v), Allgather(v), Alltoall(v,w),
 * Reduce_scatter(_block), Scan, Exscan.  Code: coll_net_move.c; algorithms and their choice:
 * docs/COLLECTIVES.md "Moving blocks between nodes".
 * The block addressing of a member's arguments it uses (tm_cblk_in, tm_cblk_out) is
 * coll_base.h's, shared with the node-local parts (coll_alltoall.c). */
#ifndef TMPI_LIBCLIENT_COLL_NET_MOVE_H
#define TMPI_LIBCLIENT_COLL_NET_MOVE_H

#include "coll_base.h"

struct tm_cnet;

/* tm_calgo.net of each collective: 0, -EMSGSIZE (a block larger than its destination, every
 * other block still delivered), -ENOMEM, -EPROTO (a leader's message does not parse) or the
 * network's error. */
int tm_hier_gather(struct tm_cnet *x);
int tm_hier_scatter(struct tm_cnet *x);
int tm_hier_allgather(struct tm_cnet *x);
int tm_hier_alltoall(struct tm_cnet *x);
int tm_hier_reduce_scatter(struct tm_cnet *x);
int tm_hier_scan(struct tm_cnet *x);
int tm_hier_exscan(struct tm_cnet *x);

#endif
