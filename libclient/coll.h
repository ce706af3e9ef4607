/* coll.h — intra-node collectives through shared memory (not built on point-to-point).
 *
 * Each communicator has its own struct tm_coll (comm.h).  Every operation is a few phases
 * separated by a counting barrier: members publish pointers in their slot, pass the barrier,
 * read each other's buffers directly, and pass a second barrier before anyone may reuse a
 * slot or a buffer.  Reductions split the element range among the members; each member
 * combines its slice across all inputs in rank order (deterministic, and parallel). */
#ifndef TMPI_LIBCLIENT_COLL_H
#define TMPI_LIBCLIENT_COLL_H

#include <stddef.h>

#include "comm.h"
#include "datatype.h"

struct tm_rank;

void tm_coll_barrier(struct tm_rank *me, struct tm_commref *cr);
void tm_coll_bcast(struct tm_rank *me, struct tm_commref *cr, void *buf, size_t bytes, int root);
/* root < 0: allreduce.  in may be MPI_IN_PLACE (then the input is out). */
int tm_coll_reduce(struct tm_rank *me, struct tm_commref *cr, const void *in, void *out,
                   size_t count, const struct tm_type *t, int opkind, int root);

#endif
