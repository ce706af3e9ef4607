/* coll_c.c — the large-count (_c) forms of the collectives (MPI 4.0 §6 and §8.6): blocking,
 * non-blocking and persistent.  The uniform ones convert their MPI_Count counts
 * (count_narrow.h: a count past int folds into a contiguous type) and call their int twin: one
 * body per pair; MPI_Bcast_c moves more than 2^31 - 1 bytes in pieces, and
 * MPI_Gather_c, MPI_Scatter_c, MPI_Allgather_c and MPI_Alltoall_c blocks of contiguous types
 * past 2^31 - 1 bytes (coll_c_pieces.h).  The v and w forms, Reduce_scatter(_block)_c and
 * Scan_c / Exscan_c (and their I forms) pass their arguments whole (coll.h tm_gatherv_c ...), on
 * intra- and inter-communicators, so counts and displacements past INT_MAX without a common
 * factor and user ops on more than INT_MAX elements work; their persistent forms are in
 * persist_coll.c and the neighbourhood ones in nbr_api.c (both pass MPI_Count / MPI_Aint
 * through).  MPI_Reduce_c, MPI_Allreduce_c and their non-blocking forms are in
 * coll/coll_reduce.c (their engine counts in size_t). */
#include <stdint.h>

#include "coll.h"
#include "coll_c_pieces.h"
#include "count_narrow.h"
#include "lib.h"
#include "type.h"

TM_API int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                        MPI_Comm comm)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Bcast_c", comm, 0, TM_NW_PLAIN);
    /* the bytes decide (the same on every rank), not the count */
    if (tm_coll_c_big(comm, count, datatype))
        return tm_narrow_end(&w, tm_bcast_pieces(buffer, count, datatype, root, comm), NULL);
    int n0_ = tm_narrow_count(&w, "count", tm_narrow_fold(&w, count, &datatype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Bcast(buffer, n0_, datatype, root, comm);
    return tm_narrow_end(&w, e, NULL);
}
TM_ALIAS(Bcast_c)

TM_API int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Gather_c", comm, root, TM_NW_ROOTED);
    if (tm_coll_c_big_rooted(comm, root, recvcount, recvtype, sendcount, sendtype))
        return tm_narrow_end(&w,
                             tm_gather_pieces(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                              recvtype, root, comm),
                             NULL);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ =
        w.is_root ? tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype)) : 0;
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Gather(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, root, comm);
    return tm_narrow_end(&w, e, NULL);
}
TM_ALIAS(Gather_c)

TM_API int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                          MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return tm_gatherv_c("MPI_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                        recvtype, root, comm, NULL, 0);
}
TM_ALIAS(Gatherv_c)

TM_API int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Scatter_c", comm, root, TM_NW_ROOTED);
    if (tm_coll_c_big_rooted(comm, root, sendcount, sendtype, recvcount, recvtype))
        return tm_narrow_end(&w,
                             tm_scatter_pieces(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                               recvtype, root, comm),
                             NULL);
    int n0_ =
        w.is_root ? tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype)) : 0;
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Scatter(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, root, comm);
    return tm_narrow_end(&w, e, NULL);
}
TM_ALIAS(Scatter_c)

TM_API int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[],
                           const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return tm_scatterv_c("MPI_Scatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf,
                         recvcount, recvtype, root, comm, NULL, 0);
}
TM_ALIAS(Scatterv_c)

TM_API int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Allgather_c", comm, 0, TM_NW_PLAIN);
    if (tm_coll_c_big(comm, recvcount, recvtype))
        return tm_narrow_end(
            &w,
            tm_allgather_pieces(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
            NULL);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Allgather(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, comm);
    return tm_narrow_end(&w, e, NULL);
}
TM_ALIAS(Allgather_c)

TM_API int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    return tm_allgatherv_c("MPI_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                           displs, recvtype, comm, NULL, 0);
}
TM_ALIAS(Allgatherv_c)

TM_API int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Alltoall_c", comm, 0, TM_NW_PLAIN);
    if (tm_coll_c_big(comm, recvcount, recvtype))
        return tm_narrow_end(
            &w,
            tm_alltoall_pieces(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
            NULL);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Alltoall(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, comm);
    return tm_narrow_end(&w, e, NULL);
}
TM_ALIAS(Alltoall_c)

TM_API int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                            const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                            const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    return tm_alltoallvw_c("MPI_Alltoallv_c", 0, sendbuf, sendcounts, sdispls, sendtype, NULL,
                           recvbuf, recvcounts, rdispls, recvtype, NULL, comm, NULL, 0);
}
TM_ALIAS(Alltoallv_c)

TM_API int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                            const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return tm_alltoallvw_c("MPI_Alltoallw_c", 1, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                           sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes,
                           comm, NULL, 0);
}
TM_ALIAS(Alltoallw_c)

TM_API int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return tm_reduce_scatter_c("MPI_Reduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op,
                               comm, NULL, 0);
}
TM_ALIAS(Reduce_scatter_c)

TM_API int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return tm_reduce_scatter_block_c("MPI_Reduce_scatter_block_c", sendbuf, recvbuf, recvcount,
                                     datatype, op, comm, NULL, 0);
}
TM_ALIAS(Reduce_scatter_block_c)

TM_API int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm)
{
    return tm_scan_c("MPI_Scan_c", 0, sendbuf, recvbuf, count, datatype, op, comm, NULL, 0);
}
TM_ALIAS(Scan_c)

TM_API int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm)
{
    return tm_scan_c("MPI_Exscan_c", 1, sendbuf, recvbuf, count, datatype, op, comm, NULL, 0);
}
TM_ALIAS(Exscan_c)

TM_API int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                         MPI_Comm comm, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Ibcast_c", comm, 0, TM_NW_PLAIN);
    int n0_ = tm_narrow_count(&w, "count", tm_narrow_fold(&w, count, &datatype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Ibcast(buffer, n0_, datatype, root, comm, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Ibcast_c)

TM_API int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Igather_c", comm, root, TM_NW_ROOTED);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ =
        w.is_root ? tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype)) : 0;
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Igather(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, root, comm, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Igather_c)

TM_API int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return tm_gatherv_c("MPI_Igatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                        recvtype, root, comm, request, 1);
}
TM_ALIAS(Igatherv_c)

TM_API int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Iscatter_c", comm, root, TM_NW_ROOTED);
    int n0_ =
        w.is_root ? tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype)) : 0;
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Iscatter(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, root, comm, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Iscatter_c)

TM_API int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[],
                            const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request *request)
{
    return tm_scatterv_c("MPI_Iscatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf,
                         recvcount, recvtype, root, comm, request, 1);
}
TM_ALIAS(Iscatterv_c)

TM_API int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Iallgather_c", comm, 0, TM_NW_PLAIN);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Iallgather(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, comm, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Iallgather_c)

TM_API int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return tm_allgatherv_c("MPI_Iallgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                           displs, recvtype, comm, request, 1);
}
TM_ALIAS(Iallgatherv_c)

TM_API int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Ialltoall_c", comm, 0, TM_NW_PLAIN);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Ialltoall(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, comm, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Ialltoall_c)

TM_API int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return tm_alltoallvw_c("MPI_Ialltoallv_c", 0, sendbuf, sendcounts, sdispls, sendtype, NULL,
                           recvbuf, recvcounts, rdispls, recvtype, NULL, comm, request, 1);
}
TM_ALIAS(Ialltoallv_c)

TM_API int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                             void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    return tm_alltoallvw_c("MPI_Ialltoallw_c", 1, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                           sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes,
                           comm, request, 1);
}
TM_ALIAS(Ialltoallw_c)

TM_API int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                  MPI_Request *request)
{
    return tm_reduce_scatter_c("MPI_Ireduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op,
                               comm, request, 1);
}
TM_ALIAS(Ireduce_scatter_c)

TM_API int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                        MPI_Request *request)
{
    return tm_reduce_scatter_block_c("MPI_Ireduce_scatter_block_c", sendbuf, recvbuf, recvcount,
                                     datatype, op, comm, request, 1);
}
TM_ALIAS(Ireduce_scatter_block_c)

TM_API int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return tm_scan_c("MPI_Iscan_c", 0, sendbuf, recvbuf, count, datatype, op, comm, request, 1);
}
TM_ALIAS(Iscan_c)

TM_API int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return tm_scan_c("MPI_Iexscan_c", 1, sendbuf, recvbuf, count, datatype, op, comm, request, 1);
}
TM_ALIAS(Iexscan_c)

TM_API int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                             MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Bcast_init_c", comm, 0, TM_NW_PLAIN);
    int n0_ = tm_narrow_count(&w, "count", tm_narrow_fold(&w, count, &datatype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Bcast_init(buffer, n0_, datatype, root, comm, info, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Bcast_init_c)

TM_API int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                              MPI_Info info, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Reduce_init_c", comm, 0, TM_NW_PLAIN);
    int n0_ = tm_narrow_count(&w, "count", tm_narrow_fold_op(&w, count, &datatype, op));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Reduce_init(sendbuf, recvbuf, n0_, datatype, op, root, comm, info, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Reduce_init_c)

TM_API int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Allreduce_init_c", comm, 0, TM_NW_PLAIN);
    int n0_ = tm_narrow_count(&w, "count", tm_narrow_fold_op(&w, count, &datatype, op));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Allreduce_init(sendbuf, recvbuf, n0_, datatype, op, comm, info, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Allreduce_init_c)

TM_API int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Gather_init_c", comm, root, TM_NW_ROOTED);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ =
        w.is_root ? tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype)) : 0;
    if (w.err) return tm_narrow_fail(&w);
    int e =
        PMPI_Gather_init(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, root, comm, info, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Gather_init_c)

TM_API int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Scatter_init_c", comm, root, TM_NW_ROOTED);
    int n0_ =
        w.is_root ? tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype)) : 0;
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Scatter_init(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, root, comm, info,
                              request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Scatter_init_c)

TM_API int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Allgather_init_c", comm, 0, TM_NW_PLAIN);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e =
        PMPI_Allgather_init(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, comm, info, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Allgather_init_c)

TM_API int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    struct tm_narrow w;
    tm_narrow_begin(&w, "MPI_Alltoall_init_c", comm, 0, TM_NW_PLAIN);
    int n0_ = tm_narrow_count(&w, "sendcount", tm_narrow_fold(&w, sendcount, &sendtype));
    int n1_ = tm_narrow_count(&w, "recvcount", tm_narrow_fold(&w, recvcount, &recvtype));
    if (w.err) return tm_narrow_fail(&w);
    int e = PMPI_Alltoall_init(sendbuf, n0_, sendtype, recvbuf, n1_, recvtype, comm, info, request);
    return tm_narrow_end(&w, e, request);
}
TM_ALIAS(Alltoall_init_c)
