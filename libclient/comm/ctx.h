/* ctx.h — context ids of new communicators, and the node's meeting point where members that
 * agreed on a new communicator by messages find its node copy (struct tm_comm).
 *
 * Ids (the match key of every message of the communicator, so they must differ between any
 * two live communicators that share a member):
 *  - One-node ids, below TM_CTX_SPAN_BASE: for a communicator whose members (both groups of
 *    an inter-communicator) all run on this node.  Taken from the node's counter, or from the
 *    ids of freed one-node communicators (a free list): a create/free loop reuses ids instead
 *    of running through them.  An id goes back when the last local member frees it; no
 *    message of it can then be in flight (MPI: freeing with pending traffic is erroneous).
 *  - Spanning ids: TM_CTX_SPAN_BASE + node + nnodes * k, k from the allocating node's
 *    counter: two nodes never produce the same id, so an allocation needs no agreement, only
 *    a message from the allocating leader.  These are not reused (no node knows when every
 *    other node dropped its copy); the range holds (2^29 - 2^26) / nnodes allocations.
 *
 * All state is in struct tm_ctxs (one per job, in struct tm_job), under its lock. */
#ifndef TMPI_LIBCLIENT_CTX_H
#define TMPI_LIBCLIENT_CTX_H

#include <pthread.h>
#include <stdint.h>

#include "comm_parts.h"

#define TM_CTX_SPAN_BASE (1 << 26)
/* Ids stay below it: coll_net derives -2 ctx - 3 from them, and the neighbourhood collectives use
 * ctx + TM_CTX_LIMIT (coll_nbr/nbr.h TM_CTX_NBR), which must stay clear of every id. */
#define TM_CTX_LIMIT (1 << 29)

struct tm_comm;
struct tm_rank;
struct tm_job;

struct tm_ctx_wait;

void tm_ctxs_init(struct tm_ctxs *x);
void tm_ctxs_fini(struct tm_ctxs *x);

/* A one-node id; -ENOSPC when the range is used up. */
int tm_ctx_local(struct tm_job *j);
/* Gives a one-node id back. */
void tm_ctx_put(struct tm_job *j, int ctx);
/* count ids for a communicator spanning nodes, allocated on me's node: out[i]. */
int tm_ctx_span(struct tm_rank *me, int count, int *out);
/* count ids for a communicator with members a[0..na) and b[0..nb) (world ranks; b may be
 * NULL): one-node ids (*reuse = 1) if they all run on me's node, else spanning ones. */
int tm_ctx_for(struct tm_rank *me, const int32_t *a, int na, const int32_t *b, int nb, int count,
               int *out, int *reuse);

/* The node copy of the communicator (ctx, key) for a local member: the first local member to
 * arrive makes it from make(arg) (which returns it with refs = local members, or NULL), the
 * others get the same pointer; the entry goes when nlocal members have come.  key tells the
 * two sides of an inter-communicator apart (e.g. the world rank of the local group's first
 * member).  NULL when out of memory. */
struct tm_comm *tm_ctx_meet(struct tm_job *j, int ctx, int key, int nlocal,
                            struct tm_comm *(*make)(void *arg), void *arg);

/* Members of world list v[0..n) running on me's node. */
int tm_ctx_nlocal(struct tm_rank *me, const int32_t *v, int n);

#endif
