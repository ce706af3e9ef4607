/* coll_net_move.h — the leaders' share (coll_net.h) of the collectives that move blocks or
 * prefixes rather than one vector: Gather(v), Scatter(v), Allgather(v), Alltoall(v,w),
 * Reduce_scatter(_block), Scan, Exscan.  Code: coll_net_move.c; algorithms and their choice:
 * docs/COLLECTIVES.md "Moving blocks between nodes".
 *
 * Also the block addressing of a member's arguments (struct tm_cargs) for the uniform, v and w
 * layouts, shared by the node-local parts (coll_alltoall.c) and the leaders. */
#ifndef TMPI_LIBCLIENT_COLL_NET_MOVE_H
#define TMPI_LIBCLIENT_COLL_NET_MOVE_H

#include "coll.h"

struct tm_cnet;

/* Block j of a's input: its start, element count (*ret_n) and type (*ret_t). */
static inline const void *tm_cblk_in(const struct tm_cargs *a, int j, size_t *ret_n,
                                     const struct tm_type **ret_t)
{
    switch (a->slay) {
    case TM_CL_V:
        *ret_n = (size_t)a->scounts[j];
        *ret_t = a->stype;
        return tm_dt_at(a->sbuf, (size_t)a->sdispls[j], a->stype);
    case TM_CL_W:
        *ret_n = (size_t)a->scounts[j];
        *ret_t = a->stypes[j];
        return (const unsigned char *)a->sbuf + a->sdispls[j];
    default:
        *ret_n = (size_t)a->scount;
        *ret_t = a->stype;
        return tm_dt_at(a->sbuf, (size_t)j * (size_t)a->scount, a->stype);
    }
}

/* Block j of a's output. */
static inline void *tm_cblk_out(const struct tm_cargs *a, int j, size_t *ret_n,
                                const struct tm_type **ret_t)
{
    switch (a->rlay) {
    case TM_CL_V:
        *ret_n = (size_t)a->rcounts[j];
        *ret_t = a->rtype;
        return tm_dt_at(a->rbuf, (size_t)a->rdispls[j], a->rtype);
    case TM_CL_W:
        *ret_n = (size_t)a->rcounts[j];
        *ret_t = a->rtypes[j];
        return (unsigned char *)a->rbuf + a->rdispls[j];
    default:
        *ret_n = (size_t)a->rcount;
        *ret_t = a->rtype;
        return tm_dt_at(a->rbuf, (size_t)j * (size_t)a->rcount, a->rtype);
    }
}

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
