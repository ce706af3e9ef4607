/* persist_coll.c — persistent collectives (MPI 4.0 §6.13): MPI_Barrier_init ... MPI_Exscan_init.
 *
 * Each *_init keeps its arguments in a persistent request (persist.h) whose MPI_Start issues
 * the non-blocking collective (PMPI_Ibarrier ... PMPI_Iexscan) with them, so every start is
 * one operation matched across members as the non-blocking call is (coll_nb.c), on one node
 * and across nodes, but for its number: MPI matches persistent collectives in the order of
 * their *_init calls, which every member makes in the same order, and lets members start them
 * in different orders (MPI 4.0 §6.13).  So each *_init takes the next number of the member's
 * persistent inits on the communicator (comm.h npinit), and each start issues the non-blocking
 * call with the round key of that number and its own count of starts (comm.h pround), which
 * the engine uses in place of the non-blocking calls' order (cr->nnbc).  The info argument carries
 * no hint TMPI uses; it must be MPI_INFO_NULL or a valid info object (checked by the info code when
 * it is one).  The v, w, reduce-scatter and scan _init_c forms keep their MPI_Count / MPI_Aint
 * arguments and start the non-blocking _c call; the others are in coll_c.c (their scalar counts
 * fold). */
#include "coll_net.h"
#include "comm.h"
#include "errh.h"
#include "job.h"
#include "persist.h"

enum coll_kind {
    K_BARRIER,
    K_BCAST,
    K_REDUCE,
    K_ALLREDUCE,
    K_GATHER,
    K_GATHERV,
    K_SCATTER,
    K_SCATTERV,
    K_ALLGATHER,
    K_ALLGATHERV,
    K_ALLTOALL,
    K_ALLTOALLV,
    K_ALLTOALLW,
    K_REDUCE_SCATTER,
    K_REDUCE_SCATTER_BLOCK,
    K_SCAN,
    K_EXSCAN,
};

/* The union of every collective's arguments; each kind reads its own.  c: a large-count
 * (_c) init, whose counts (scount, rcount and the c* arrays) are MPI_Count and displacements
 * MPI_Aint, started as the non-blocking _c call (which takes them whole on an
 * intra-communicator); an int init's scalar counts fit int. */
struct coll_args {
    enum coll_kind kind;
    int c;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    int root;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    const MPI_Count *cscounts, *crcounts;
    const MPI_Aint *csdispls, *crdispls;
    MPI_Datatype stype, rtype;
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
    MPI_Comm comm;
    uint64_t pid, nstart; /* the init's number on comm (comm.h npinit), starts so far */
};

/* A _c init's start: its v, w and reduction kinds (coll_c.c folds the others' scalars). */
static int coll_start_c(const struct coll_args *a, MPI_Request *q)
{
    switch (a->kind) {
    case K_GATHERV:
        return PMPI_Igatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, a->crcounts, a->crdispls,
                               a->rtype, a->root, a->comm, q);
    case K_SCATTERV:
        return PMPI_Iscatterv_c(a->sbuf, a->cscounts, a->csdispls, a->stype, a->rbuf, a->rcount,
                                a->rtype, a->root, a->comm, q);
    case K_ALLGATHERV:
        return PMPI_Iallgatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, a->crcounts, a->crdispls,
                                  a->rtype, a->comm, q);
    case K_ALLTOALLV:
        return PMPI_Ialltoallv_c(a->sbuf, a->cscounts, a->csdispls, a->stype, a->rbuf, a->crcounts,
                                 a->crdispls, a->rtype, a->comm, q);
    case K_ALLTOALLW:
        return PMPI_Ialltoallw_c(a->sbuf, a->cscounts, a->csdispls, a->stypes, a->rbuf, a->crcounts,
                                 a->crdispls, a->rtypes, a->comm, q);
    case K_REDUCE_SCATTER:
        return PMPI_Ireduce_scatter_c(a->sbuf, a->rbuf, a->crcounts, a->rtype, a->op, a->comm, q);
    case K_REDUCE_SCATTER_BLOCK:
        return PMPI_Ireduce_scatter_block_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm,
                                            q);
    case K_SCAN:
        return PMPI_Iscan_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, q);
    case K_EXSCAN:
        return PMPI_Iexscan_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, q);
    default:
        return MPI_ERR_INTERN;
    }
}

static int coll_issue(const struct coll_args *a, MPI_Request *q)
{
    if (a->c) return coll_start_c(a, q);
    switch (a->kind) {
    case K_BARRIER:
        return PMPI_Ibarrier(a->comm, q);
    case K_BCAST:
        return PMPI_Ibcast(a->rbuf, a->rcount, a->rtype, a->root, a->comm, q);
    case K_REDUCE:
        return PMPI_Ireduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, a->comm, q);
    case K_ALLREDUCE:
        return PMPI_Iallreduce(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, q);
    case K_GATHER:
        return PMPI_Igather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root,
                            a->comm, q);
    case K_GATHERV:
        return PMPI_Igatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts, a->rdispls,
                             a->rtype, a->root, a->comm, q);
    case K_SCATTER:
        return PMPI_Iscatter(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root,
                             a->comm, q);
    case K_SCATTERV:
        return PMPI_Iscatterv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, a->rcount,
                              a->rtype, a->root, a->comm, q);
    case K_ALLGATHER:
        return PMPI_Iallgather(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm,
                               q);
    case K_ALLGATHERV:
        return PMPI_Iallgatherv(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts, a->rdispls,
                                a->rtype, a->comm, q);
    case K_ALLTOALL:
        return PMPI_Ialltoall(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm,
                              q);
    case K_ALLTOALLV:
        return PMPI_Ialltoallv(a->sbuf, a->scounts, a->sdispls, a->stype, a->rbuf, a->rcounts,
                               a->rdispls, a->rtype, a->comm, q);
    case K_ALLTOALLW:
        return PMPI_Ialltoallw(a->sbuf, a->scounts, a->sdispls, a->stypes, a->rbuf, a->rcounts,
                               a->rdispls, a->rtypes, a->comm, q);
    case K_REDUCE_SCATTER:
        return PMPI_Ireduce_scatter(a->sbuf, a->rbuf, a->rcounts, a->rtype, a->op, a->comm, q);
    case K_REDUCE_SCATTER_BLOCK:
        return PMPI_Ireduce_scatter_block(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, q);
    case K_SCAN:
        return PMPI_Iscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, q);
    case K_EXSCAN:
        return PMPI_Iexscan(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, q);
    }
    return MPI_ERR_INTERN;
}

/* The non-blocking call takes the round key of this start from the handle (comm.h pround); a
 * freed handle leaves the call to refuse the communicator. */
static int coll_start(void *args, MPI_Request *q)
{
    struct coll_args *a = args;
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = me ? tm_comm_get(&me->comms, a->comm) : NULL;
    if (cr) cr->pround = tm_pround_key(a->pid, a->nstart);
    int err = coll_issue(a, q);
    if (cr) cr->pround = 0;
    if (err == MPI_SUCCESS) a->nstart++;
    return err;
}

/* MPI_Request_free: across nodes the request's runner ends once its node's members freed it
 * (coll_net.h tm_cnet_nb_pfree).  A communicator freed first took its runners with it. */
static void coll_freed(void *args)
{
    const struct coll_args *a = args;
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = me ? tm_comm_get(&me->comms, a->comm) : NULL;
    if (cr) tm_cnet_nb_pfree(cr, a->pid);
}

/* The checks every *_init shares (the operation's own are made by each MPI_Start's
 * non-blocking call, with the same classes), then the request. */
static int coll_init(const char *fn, struct coll_args *a, MPI_Info info, MPI_Request *request)
{
    (void)info;
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get(&me->comms, a->comm);
    if (TM_UNLIKELY(!cr))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", a->comm);
    a->pid = cr->npinit++; /* failed or not: the others' numbers go on */
    int err = tm_preq_new(me, fn, a->comm, coll_start, a, sizeof *a, request);
    if (err == MPI_SUCCESS) tm_preq_on_free(*request, coll_freed);
    return err;
}

TM_API int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_BARRIER, .comm = comm};
    return coll_init("MPI_Barrier_init", &a, info, request);
}
TM_ALIAS(Barrier_init)

TM_API int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_BCAST,
                          .rbuf = buffer,
                          .rcount = count,
                          .rtype = datatype,
                          .root = root,
                          .comm = comm};
    return coll_init("MPI_Bcast_init", &a, info, request);
}
TM_ALIAS(Bcast_init)

TM_API int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_REDUCE,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcount = count,
                          .rtype = datatype,
                          .op = op,
                          .root = root,
                          .comm = comm};
    return coll_init("MPI_Reduce_init", &a, info, request);
}
TM_ALIAS(Reduce_init)

TM_API int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLREDUCE,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcount = count,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Allreduce_init", &a, info, request);
}
TM_ALIAS(Allreduce_init)

TM_API int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_GATHER,
                          .sbuf = sendbuf,
                          .scount = sendcount,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcount = recvcount,
                          .rtype = recvtype,
                          .root = root,
                          .comm = comm};
    return coll_init("MPI_Gather_init", &a, info, request);
}
TM_ALIAS(Gather_init)

TM_API int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    struct coll_args a = {.kind = K_GATHERV,
                          .sbuf = sendbuf,
                          .scount = sendcount,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcounts = recvcounts,
                          .rdispls = displs,
                          .rtype = recvtype,
                          .root = root,
                          .comm = comm};
    return coll_init("MPI_Gatherv_init", &a, info, request);
}
TM_ALIAS(Gatherv_init)

TM_API int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_SCATTER,
                          .sbuf = sendbuf,
                          .scount = sendcount,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcount = recvcount,
                          .rtype = recvtype,
                          .root = root,
                          .comm = comm};
    return coll_init("MPI_Scatter_init", &a, info, request);
}
TM_ALIAS(Scatter_init)

TM_API int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    struct coll_args a = {.kind = K_SCATTERV,
                          .sbuf = sendbuf,
                          .scounts = sendcounts,
                          .sdispls = displs,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcount = recvcount,
                          .rtype = recvtype,
                          .root = root,
                          .comm = comm};
    return coll_init("MPI_Scatterv_init", &a, info, request);
}
TM_ALIAS(Scatterv_init)

TM_API int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLGATHER,
                          .sbuf = sendbuf,
                          .scount = sendcount,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcount = recvcount,
                          .rtype = recvtype,
                          .comm = comm};
    return coll_init("MPI_Allgather_init", &a, info, request);
}
TM_ALIAS(Allgather_init)

TM_API int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLGATHERV,
                          .sbuf = sendbuf,
                          .scount = sendcount,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcounts = recvcounts,
                          .rdispls = displs,
                          .rtype = recvtype,
                          .comm = comm};
    return coll_init("MPI_Allgatherv_init", &a, info, request);
}
TM_ALIAS(Allgatherv_init)

TM_API int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLTOALL,
                          .sbuf = sendbuf,
                          .scount = sendcount,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcount = recvcount,
                          .rtype = recvtype,
                          .comm = comm};
    return coll_init("MPI_Alltoall_init", &a, info, request);
}
TM_ALIAS(Alltoall_init)

TM_API int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLTOALLV,
                          .sbuf = sendbuf,
                          .scounts = sendcounts,
                          .sdispls = sdispls,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcounts = recvcounts,
                          .rdispls = rdispls,
                          .rtype = recvtype,
                          .comm = comm};
    return coll_init("MPI_Alltoallv_init", &a, info, request);
}
TM_ALIAS(Alltoallv_init)

TM_API int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLTOALLW,
                          .sbuf = sendbuf,
                          .scounts = sendcounts,
                          .sdispls = sdispls,
                          .stypes = sendtypes,
                          .rbuf = recvbuf,
                          .rcounts = recvcounts,
                          .rdispls = rdispls,
                          .rtypes = recvtypes,
                          .comm = comm};
    return coll_init("MPI_Alltoallw_init", &a, info, request);
}
TM_ALIAS(Alltoallw_init)

TM_API int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    struct coll_args a = {.kind = K_REDUCE_SCATTER,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcounts = recvcounts,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Reduce_scatter_init", &a, info, request);
}
TM_ALIAS(Reduce_scatter_init)

TM_API int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                          MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_REDUCE_SCATTER_BLOCK,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcount = recvcount,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Reduce_scatter_block_init", &a, info, request);
}
TM_ALIAS(Reduce_scatter_block_init)

TM_API int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_SCAN,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcount = count,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Scan_init", &a, info, request);
}
TM_ALIAS(Scan_init)

TM_API int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_EXSCAN,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcount = count,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Exscan_init", &a, info, request);
}
TM_ALIAS(Exscan_init)

/* ---- large counts (_c): the v, w, reduce-scatter and scan kinds keep their MPI_Count /
 * MPI_Aint arguments and start the non-blocking _c call (coll_start_c) ---- */

TM_API int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    struct coll_args a = {.kind = K_GATHERV,
                          .c = 1,
                          .sbuf = sendbuf,
                          .scount = sendcount,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .crcounts = recvcounts,
                          .crdispls = displs,
                          .rtype = recvtype,
                          .root = root,
                          .comm = comm};
    return coll_init("MPI_Gatherv_init_c", &a, info, request);
}
TM_ALIAS(Gatherv_init_c)

TM_API int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_SCATTERV,
                          .c = 1,
                          .sbuf = sendbuf,
                          .cscounts = sendcounts,
                          .csdispls = displs,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .rcount = recvcount,
                          .rtype = recvtype,
                          .root = root,
                          .comm = comm};
    return coll_init("MPI_Scatterv_init_c", &a, info, request);
}
TM_ALIAS(Scatterv_init_c)

TM_API int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLGATHERV,
                          .c = 1,
                          .sbuf = sendbuf,
                          .scount = sendcount,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .crcounts = recvcounts,
                          .crdispls = displs,
                          .rtype = recvtype,
                          .comm = comm};
    return coll_init("MPI_Allgatherv_init_c", &a, info, request);
}
TM_ALIAS(Allgatherv_init_c)

TM_API int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLTOALLV,
                          .c = 1,
                          .sbuf = sendbuf,
                          .cscounts = sendcounts,
                          .csdispls = sdispls,
                          .stype = sendtype,
                          .rbuf = recvbuf,
                          .crcounts = recvcounts,
                          .crdispls = rdispls,
                          .rtype = recvtype,
                          .comm = comm};
    return coll_init("MPI_Alltoallv_init_c", &a, info, request);
}
TM_ALIAS(Alltoallv_init_c)

TM_API int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_ALLTOALLW,
                          .c = 1,
                          .sbuf = sendbuf,
                          .cscounts = sendcounts,
                          .csdispls = sdispls,
                          .stypes = sendtypes,
                          .rbuf = recvbuf,
                          .crcounts = recvcounts,
                          .crdispls = rdispls,
                          .rtypes = recvtypes,
                          .comm = comm};
    return coll_init("MPI_Alltoallw_init_c", &a, info, request);
}
TM_ALIAS(Alltoallw_init_c)

TM_API int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf,
                                      const MPI_Count recvcounts[], MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_REDUCE_SCATTER,
                          .c = 1,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .crcounts = recvcounts,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Reduce_scatter_init_c", &a, info, request);
}
TM_ALIAS(Reduce_scatter_init_c)

TM_API int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                            MPI_Info info, MPI_Request *request)
{
    struct coll_args a = {.kind = K_REDUCE_SCATTER_BLOCK,
                          .c = 1,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcount = recvcount,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Reduce_scatter_block_init_c", &a, info, request);
}
TM_ALIAS(Reduce_scatter_block_init_c)

TM_API int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request)
{
    struct coll_args a = {.kind = K_SCAN,
                          .c = 1,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcount = count,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Scan_init_c", &a, info, request);
}
TM_ALIAS(Scan_init_c)

TM_API int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    struct coll_args a = {.kind = K_EXSCAN,
                          .c = 1,
                          .sbuf = sendbuf,
                          .rbuf = recvbuf,
                          .rcount = count,
                          .rtype = datatype,
                          .op = op,
                          .comm = comm};
    return coll_init("MPI_Exscan_init_c", &a, info, request);
}
TM_ALIAS(Exscan_init_c)
