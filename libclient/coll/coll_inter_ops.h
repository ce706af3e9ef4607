/* coll_inter_ops.h — how the collectives' entry points reach the inter-communicator versions
 * (types only).
 *
 * The entry points (coll/) serve both kinds of communicator; the inter-communicator versions
 * live in coll_inter/, a folder above coll/ (they run over point-to-point and coll/'s checks).
 * So coll/ calls them through this table, which coll_inter/ fills (coll_inter.h tm_inter_ops)
 * and the job's maker registers (core/job.h `inter`, mpi/job_life.c): an upcall, never an
 * include of a higher folder.  Each member is the coll_inter.h function of its name.  Counts
 * are MPI_Count and displacements MPI_Aint, as the large-count (_c) calls pass them: the int
 * calls widen theirs (tm_coll_widen); the arrays need only live until the call returns (the
 * non-blocking forms keep copies). */
#ifndef TMPI_LIBCLIENT_COLL_INTER_OPS_H
#define TMPI_LIBCLIENT_COLL_INTER_OPS_H

#include "mpi.h"

struct tm_rank;
struct tm_commref;

struct tm_inter_ops {
    int (*barrier)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                   MPI_Request *request);
    int (*bcast)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                 void *buf, int count, MPI_Datatype dt, int root, MPI_Request *request);
    int (*reduce)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                  const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op,
                  int root, int all, MPI_Request *request);
    int (*gather)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                  const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                  MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *displs,
                  MPI_Datatype rtype, int root, MPI_Request *request);
    int (*scatter)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                   const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                   const MPI_Aint *displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                   MPI_Datatype rtype, int root, MPI_Request *request);
    int (*allgather)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                     const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *displs,
                     MPI_Datatype rtype, MPI_Request *request);
    int (*alltoall)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                    int lay, const void *sbuf, MPI_Count scount, const MPI_Count *scounts,
                    const MPI_Aint *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes,
                    void *rbuf, MPI_Count rcount, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                    MPI_Datatype rtype, const MPI_Datatype *rtypes, MPI_Request *request);
    int (*reduce_scatter)(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                          int block, const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                          MPI_Count rcount, MPI_Datatype dt, MPI_Op op, MPI_Request *request);
};

#endif
