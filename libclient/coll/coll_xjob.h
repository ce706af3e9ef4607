/* coll_xjob.h — collectives on an intra-communicator with ranks of two jobs (MPI_Intercomm_merge
 * of a connect, and the dups and splits of one; net/xjob.h): the generic point-to-point path.
 *
 * The engine's algorithms reach every member through this host's memory, and the network
 * collectives through the job's own links; neither reaches another job's ranks.  So these run
 * on libtmpi's own messages (comm/cp2p.h) on the communicator's collective context (the one
 * coll_net derives, -2 ctx - 3, unused otherwise on such a communicator: a receive on it fails
 * when the other job ends, net/xjob.h), every one through member 0 (or the root): members send
 * their packed blocks there, it combines or routes them, and sends each member its part.
 * O(n) messages per operation and O(n x data) at member 0: correct for every datatype and op
 * (reductions in rank order, so non-commutative ops get MPI's order), not fast.
 *
 * The non-blocking forms (tm_xcoll_nb, coll_xjob_nb.c) are messages only: every member sends
 * each other member at most one message, straight where it is needed (Iallreduce: its packed
 * block to every member, each reducing them in rank order when the owner takes the status;
 * Igather: its block to the root), on a tag of their own, as a MULTI request of
 * point-to-point parts that the engines complete without the rank.  So they return at once
 * and progress while the other job's ranks have not come yet (O(n^2) messages for the
 * all-to-all kinds); the persistent forms start them (mpi/persist_coll.c).
 *
 * Every function returns 0 or a negative errno (the entry points turn it into a class). */
#ifndef TMPI_LIBCLIENT_COLL_XJOB_H
#define TMPI_LIBCLIENT_COLL_XJOB_H

#include "coll_base.h"

struct tm_rank;
struct tm_commref;
struct tm_comm;
struct tm_request;

/* Collective kind (MPIX_COLL_*) with member cr's arguments a, blocking. */
int tm_xcoll_run(struct tm_rank *me, struct tm_commref *cr, int kind, struct tm_cargs *a);
/* The non-blocking form of kind with member cr's arguments a, started (handle comm): 0 with
 * the request in *ret (a MULTI request, request.h; it takes a->own, which its sends may read),
 * -ENOSYS for a kind that has none (the caller runs it to completion), -ENOMEM. */
int tm_xcoll_nb(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, int kind,
                struct tm_cargs *a, struct tm_request **ret);
/* Comm_dup's and Comm_split's rounds on such a communicator (coll_comm.c): the node copy of the
 * new communicator (split: NULL with *ret_rank MPI_UNDEFINED for MPI_UNDEFINED). */
int tm_xcoll_dup(struct tm_rank *me, struct tm_commref *cr, struct tm_comm **ret);
int tm_xcoll_split(struct tm_rank *me, struct tm_commref *cr, int color, int key,
                   struct tm_comm **ret, int *ret_rank);

#endif
