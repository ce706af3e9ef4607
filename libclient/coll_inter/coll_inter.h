/* coll_inter.h — every collective on inter-communicators, over point-to-point: the data goes
 * between the groups on the communicator's hidden inter-communicator (intercomm.h) and inside
 * a group on its hidden local intra-communicator (whose collectives are the fast ones), e.g.
 * Reduce = local reduce to the group's first member, then one message to the root.  Rooted
 * operations take MPI_ROOT (the root), MPI_PROC_NULL (the root's group, not the root) or the
 * root's rank in the remote group.  The non-blocking forms (request != NULL) run the same
 * steps as schedules: the call starts the first and returns (inter_nbops.h, inter_nb.h).
 * MPI_IN_PLACE is not allowed on inter-communicators (MPI 3.1 §5.2.2).  Counts and displacements
 * are taken whole (MPI_Count, MPI_Aint: the _c calls' and the int calls' widened), and the
 * messages are the point-to-point and local collectives' _c forms, so no block, displacement or
 * reduction is limited to int.  Each returns an MPI error class, reported through comm's
 * handler as fn. */
#ifndef TMPI_LIBCLIENT_COLL_INTER_H
#define TMPI_LIBCLIENT_COLL_INTER_H

#include "mpi.h"

struct tm_rank;
struct tm_commref;

int tm_inter_barrier(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                     MPI_Request *request);
int tm_inter_bcast(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                   void *buf, int count, MPI_Datatype dt, int root, MPI_Request *request);
/* all: Allreduce (root ignored). */
int tm_inter_reduce(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                    const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                    int root, int all, MPI_Request *request);
/* rcounts NULL: Gather (rcount each, block i at i * rcount), else Gatherv. */
int tm_inter_gather(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                    const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                    MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *displs,
                    MPI_Datatype rtype, int root, MPI_Request *request);
int tm_inter_scatter(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                     const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                     const MPI_Aint *displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                     MPI_Datatype rtype, int root, MPI_Request *request);
int tm_inter_allgather(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                       const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                       MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *displs,
                       MPI_Datatype rtype, MPI_Request *request);
/* lay as coll_base.h: 0 Alltoall, 1 Alltoallv, 2 Alltoallw (displacements in bytes, types per
 * peer). */
int tm_inter_alltoall(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                      int lay, const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                      const MPI_Aint *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes,
                      void *rbuf, MPI_Count rcount, const MPI_Count *rcounts,
                      const MPI_Aint *rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes,
                      MPI_Request *request);
/* block: Reduce_scatter_block (rcount each), else rcounts[]. */
int tm_inter_reduce_scatter(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                            const char *fn, int block, const void *sbuf, void *rbuf,
                            const MPI_Count *rcounts, MPI_Count rcount, MPI_Datatype dt, MPI_Op op,
                            MPI_Request *request);

struct tm_inter_ops;
/* Every function above, for coll/'s entry points (coll_inter_ops.h; registered in the job). */
extern const struct tm_inter_ops tm_inter_ops;

#endif
