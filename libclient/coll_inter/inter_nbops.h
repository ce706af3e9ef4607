/* inter_nbops.h — the steps of each non-blocking collective on an inter-communicator
 * (inter_nbops.c), started by coll_inter.c after it checked the arguments.  The steps are the
 * blocking forms' (coll_inter.h's table), each one a set of non-blocking operations:
 *
 *   Barrier       Ibarrier(L); first members swap empty messages; Ibarrier(L)
 *   Bcast         root sends to the first member of the other group; it receives; Ibcast(L)
 *   Reduce        Ireduce(L) to the first member; it sends to the root (which receives)
 *   Allreduce     Ireduce(L); first members swap results; Ibcast(L)
 *   Reduce_scatter  as Allreduce on the whole vector, then Iscatterv(L)
 *   Gather(v), Scatter(v), Allgather(v), Alltoall(v,w)  one step: every message at once
 *
 * (L: the hidden intra-communicator of the local group.)  Buffers are the program's, valid
 * until the request completes (MPI's rule); counts and displacements arrays are copied at the
 * start (an int call's are widened copies that go when the start returns). */
#ifndef TMPI_LIBCLIENT_INTER_NBOPS_H
#define TMPI_LIBCLIENT_INTER_NBOPS_H

#include "mpi.h"

struct tm_rank;
struct tm_commref;
struct tm_info;

enum tm_inb_kind {
    TM_INB_BARRIER,
    TM_INB_BCAST,
    TM_INB_REDUCE, /* all: Allreduce */
    TM_INB_GATHER,
    TM_INB_SCATTER,
    TM_INB_ALLGATHER,
    TM_INB_ALLTOALL,
    TM_INB_RSCATTER,
};

/* One call's arguments; each kind reads its own (as the blocking forms' parameters). */
struct tm_inb_args {
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount, count;
    int root, all, lay, block;
    const MPI_Count *scounts, *rcounts;
    const MPI_Aint *sdispls, *rdispls;
    MPI_Datatype stype, rtype;
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
};

/* Starts the operation (arguments already checked): MPI_SUCCESS with *request, or an MPI
 * class (not reported: the caller reports it under its name). */
int tm_inb_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, enum tm_inb_kind kind,
                 const struct tm_inb_args *a, MPI_Request *request);

/* MPI_Comm_idup(_with_info) of inter-communicator cr: the lower of the two first members (by
 * world rank) takes the three context ids when it starts and sends them to the other, each
 * group's first member broadcasts them with Ibcast(L); the step that completes attaches the
 * member to the new communicator with the attributes and hints taken at the start, and writes
 * *newcomm (MPI_COMM_NULL until then).  hints: the dup's (with_info), NULL: the parent's.
 * MPI_SUCCESS or an MPI class (not reported). */
int tm_inb_idup(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                const struct tm_info *hints, MPI_Comm *newcomm, MPI_Request *request);

#endif
