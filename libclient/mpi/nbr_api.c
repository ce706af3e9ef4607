/* nbr_api.c — the neighbourhood collectives' entry points: MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w), their non-blocking MPI_Ineighbor_* forms and the MPI-4.0
 * persistent MPI_Neighbor_*_init forms, and the _c form of each (nbr.h does the work: it
 * counts in MPI_Count and MPI_Aint, an int call's arrays widened at each start).
 *
 * A persistent one keeps its arguments in a persistent request (persist.h) whose MPI_Start
 * starts the non-blocking operation with them; its checks run at every start.  The info
 * argument carries no hint TMPI uses; it must be MPI_INFO_NULL or a valid info object. */
#include "comm.h"
#include "errh.h"
#include "info.h"
#include "job.h"
#include "nbr.h"
#include "persist.h"

static int run(const char *fn, const struct tm_nbr_args *a, int nonblocking, MPI_Request *request)
{
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    return tm_nbr_run(me, fn, a, nonblocking, request);
}

#define ALLGATHER_ARGS(op_)                                                                        \
    {                                                                                              \
        .op = (op_), .sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,     \
        .rtype = recvtype, .comm = comm                                                            \
    }

TM_API int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHER);
    a.rcount = recvcount;
    return run("MPI_Neighbor_allgather", &a, 0, NULL);
}
TM_ALIAS(Neighbor_allgather)

TM_API int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHER);
    a.rcount = recvcount;
    return run("MPI_Ineighbor_allgather", &a, 1, request);
}
TM_ALIAS(Ineighbor_allgather)

TM_API int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHERV);
    a.ircounts = recvcounts;
    a.irdispls = displs;
    return run("MPI_Neighbor_allgatherv", &a, 0, NULL);
}
TM_ALIAS(Neighbor_allgatherv)

TM_API int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHERV);
    a.ircounts = recvcounts;
    a.irdispls = displs;
    return run("MPI_Ineighbor_allgatherv", &a, 1, request);
}
TM_ALIAS(Ineighbor_allgatherv)

TM_API int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLTOALL);
    a.rcount = recvcount;
    return run("MPI_Neighbor_alltoall", &a, 0, NULL);
}
TM_ALIAS(Neighbor_alltoall)

TM_API int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLTOALL);
    a.rcount = recvcount;
    return run("MPI_Ineighbor_alltoall", &a, 1, request);
}
TM_ALIAS(Ineighbor_alltoall)

#define ALLTOALLV_ARGS                                                                             \
    {                                                                                              \
        .op = TM_NBR_ALLTOALLV, .sbuf = sendbuf, .iscounts = sendcounts, .isdispls = sdispls,      \
        .stype = sendtype, .rbuf = recvbuf, .ircounts = recvcounts, .irdispls = rdispls,           \
        .rtype = recvtype, .comm = comm                                                            \
    }

TM_API int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    struct tm_nbr_args a = ALLTOALLV_ARGS;
    return run("MPI_Neighbor_alltoallv", &a, 0, NULL);
}
TM_ALIAS(Neighbor_alltoallv)

TM_API int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLTOALLV_ARGS;
    return run("MPI_Ineighbor_alltoallv", &a, 1, request);
}
TM_ALIAS(Ineighbor_alltoallv)

#define ALLTOALLW_ARGS                                                                             \
    {                                                                                              \
        .op = TM_NBR_ALLTOALLW, .sbuf = sendbuf, .iscounts = sendcounts, .sdispls = sdispls,       \
        .stypes = sendtypes, .rbuf = recvbuf, .ircounts = recvcounts, .rdispls = rdispls,          \
        .rtypes = recvtypes, .comm = comm                                                          \
    }

TM_API int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    struct tm_nbr_args a = ALLTOALLW_ARGS;
    return run("MPI_Neighbor_alltoallw", &a, 0, NULL);
}
TM_ALIAS(Neighbor_alltoallw)

TM_API int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                    void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                    const MPI_Datatype recvtypes[], MPI_Comm comm,
                                    MPI_Request *request)
{
    struct tm_nbr_args a = ALLTOALLW_ARGS;
    return run("MPI_Ineighbor_alltoallw", &a, 1, request);
}
TM_ALIAS(Ineighbor_alltoallw)

/* ---- persistent (MPI 4.0 §6.13) ---- */

struct pargs {
    const char *fn;
    struct tm_nbr_args a;
    uint64_t pid, nstart; /* as persist_coll.c's: the init's number on comm, starts so far */
};

/* The round key of the start on the handle while it runs (comm.h pround: nbr.c's tags). */
static int pstart(void *args, MPI_Request *inner)
{
    struct pargs *p = args;
    struct tm_rank *me = tm_self();
    struct tm_commref *cr = me ? tm_comm_get_user(&me->comms, p->a.comm) : NULL;
    if (cr) cr->pround = tm_pround_key(p->pid, p->nstart);
    int err = run(p->fn, &p->a, 1, inner);
    if (cr) cr->pround = 0;
    if (err == MPI_SUCCESS) p->nstart++;
    return err;
}

static int pinit(const char *fn, const struct tm_nbr_args *a, MPI_Info info, MPI_Request *request)
{
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, a->comm);
    if (TM_UNLIKELY(!cr))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", a->comm);
    struct pargs p = {.fn = fn, .a = *a, .pid = cr->npinit++};
    if (info != MPI_INFO_NULL && !tm_info_get(me, info))
        return tm_err(me, a->comm, MPI_ERR_INFO, fn, "invalid info %d", info);
    return tm_preq_new(me, fn, a->comm, pstart, &p, sizeof p, request);
}

TM_API int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHER);
    a.rcount = recvcount;
    return pinit("MPI_Neighbor_allgather_init", &a, info, request);
}
TM_ALIAS(Neighbor_allgather_init)

TM_API int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void *recvbuf, const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHERV);
    a.ircounts = recvcounts;
    a.irdispls = displs;
    return pinit("MPI_Neighbor_allgatherv_init", &a, info, request);
}
TM_ALIAS(Neighbor_allgatherv_init)

TM_API int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLTOALL);
    a.rcount = recvcount;
    return pinit("MPI_Neighbor_alltoall_init", &a, info, request);
}
TM_ALIAS(Neighbor_alltoall_init)

TM_API int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int rdispls[],
                                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request)
{
    struct tm_nbr_args a = ALLTOALLV_ARGS;
    return pinit("MPI_Neighbor_alltoallv_init", &a, info, request);
}
TM_ALIAS(Neighbor_alltoallv_init)

TM_API int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void *recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_nbr_args a = ALLTOALLW_ARGS;
    return pinit("MPI_Neighbor_alltoallw_init", &a, info, request);
}
TM_ALIAS(Neighbor_alltoallw_init)

/* ---- large counts (MPI 4.0 §6, _c): the engine takes MPI_Count counts and MPI_Aint
 * displacements whole, so these pass theirs through (no fold, no narrowing) ---- */

#define ALLTOALLV_C_ARGS                                                                           \
    {                                                                                              \
        .op = TM_NBR_ALLTOALLV, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,        \
        .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,             \
        .rtype = recvtype, .comm = comm                                                            \
    }

#define ALLTOALLW_C_ARGS                                                                           \
    {                                                                                              \
        .op = TM_NBR_ALLTOALLW, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,        \
        .stypes = sendtypes, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls,           \
        .rtypes = recvtypes, .comm = comm                                                          \
    }

TM_API int PMPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHER);
    a.rcount = recvcount;
    return run("MPI_Neighbor_allgather_c", &a, 0, NULL);
}
TM_ALIAS(Neighbor_allgather_c)

TM_API int PMPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHER);
    a.rcount = recvcount;
    return run("MPI_Ineighbor_allgather_c", &a, 1, request);
}
TM_ALIAS(Ineighbor_allgather_c)

TM_API int PMPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount,
                                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHER);
    a.rcount = recvcount;
    return pinit("MPI_Neighbor_allgather_init_c", &a, info, request);
}
TM_ALIAS(Neighbor_allgather_init_c)

TM_API int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf,
                                      const MPI_Count recvcounts[], const MPI_Aint displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHERV);
    a.rcounts = recvcounts;
    a.rdispls = displs;
    return run("MPI_Neighbor_allgatherv_c", &a, 0, NULL);
}
TM_ALIAS(Neighbor_allgatherv_c)

TM_API int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                                       MPI_Datatype sendtype, void *recvbuf,
                                       const MPI_Count recvcounts[], const MPI_Aint displs[],
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHERV);
    a.rcounts = recvcounts;
    a.rdispls = displs;
    return run("MPI_Ineighbor_allgatherv_c", &a, 1, request);
}
TM_ALIAS(Ineighbor_allgatherv_c)

TM_API int PMPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                                           MPI_Datatype sendtype, void *recvbuf,
                                           const MPI_Count recvcounts[], const MPI_Aint displs[],
                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                           MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLGATHERV);
    a.rcounts = recvcounts;
    a.rdispls = displs;
    return pinit("MPI_Neighbor_allgatherv_init_c", &a, info, request);
}
TM_ALIAS(Neighbor_allgatherv_init_c)

TM_API int PMPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLTOALL);
    a.rcount = recvcount;
    return run("MPI_Neighbor_alltoall_c", &a, 0, NULL);
}
TM_ALIAS(Neighbor_alltoall_c)

TM_API int PMPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLTOALL);
    a.rcount = recvcount;
    return run("MPI_Ineighbor_alltoall_c", &a, 1, request);
}
TM_ALIAS(Ineighbor_alltoall_c)

TM_API int PMPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount,
                                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request)
{
    struct tm_nbr_args a = ALLGATHER_ARGS(TM_NBR_ALLTOALL);
    a.rcount = recvcount;
    return pinit("MPI_Neighbor_alltoall_init_c", &a, info, request);
}
TM_ALIAS(Neighbor_alltoall_init_c)

TM_API int PMPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                     MPI_Datatype recvtype, MPI_Comm comm)
{
    struct tm_nbr_args a = ALLTOALLV_C_ARGS;
    return run("MPI_Neighbor_alltoallv_c", &a, 0, NULL);
}
TM_ALIAS(Neighbor_alltoallv_c)

TM_API int PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                      const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                      void *recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                      MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLTOALLV_C_ARGS;
    return run("MPI_Ineighbor_alltoallv_c", &a, 1, request);
}
TM_ALIAS(Ineighbor_alltoallv_c)

TM_API int PMPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                          const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                          void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_nbr_args a = ALLTOALLV_C_ARGS;
    return pinit("MPI_Neighbor_alltoallv_init_c", &a, info, request);
}
TM_ALIAS(Neighbor_alltoallv_init_c)

TM_API int PMPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                     void *recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                     MPI_Comm comm)
{
    struct tm_nbr_args a = ALLTOALLW_C_ARGS;
    return run("MPI_Neighbor_alltoallw_c", &a, 0, NULL);
}
TM_ALIAS(Neighbor_alltoallw_c)

TM_API int PMPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                                      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                      void *recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                      MPI_Comm comm, MPI_Request *request)
{
    struct tm_nbr_args a = ALLTOALLW_C_ARGS;
    return run("MPI_Ineighbor_alltoallw_c", &a, 1, request);
}
TM_ALIAS(Ineighbor_alltoallw_c)

TM_API int PMPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                          void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_nbr_args a = ALLTOALLW_C_ARGS;
    return pinit("MPI_Neighbor_alltoallw_init_c", &a, info, request);
}
TM_ALIAS(Neighbor_alltoallw_init_c)
