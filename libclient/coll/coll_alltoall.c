/* coll_alltoall.c — Alltoall, Alltoallv, Alltoallw and their non-blocking forms, on the engine
 * of coll.h.  Part i fills member i's output: block j comes straight from block i of member
 * j's input (n copies, no staging).
 *
 * MPI_IN_PLACE (MPI 3.1 §5.8): the input is the output buffer, laid out like the output.  Part
 * j reads member i's buffer while part i overwrites it, so each in-place member first
 * snapshots its buffer (one copy, freed when the operation ends) and reads come from there. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_c_pieces.h"
#include "coll_inter_ops.h"
#include "coll_net_move.h"
#include "errh.h"
#include "job.h"

static size_t per_member(const struct tm_cwork *w)
{
    return (size_t)w->n;
}

static int alltoall_part(const struct tm_cwork *w, size_t i)
{
    const struct tm_cargs *d = tm_cw_arg(w, (int)i);
    int trunc = 0;
    for (int j = 0; j < w->n; j++) {
        size_t sc, dc;
        const struct tm_type *st, *dt;
        const void *src = tm_cblk_in(tm_cw_arg(w, j), (int)i, &sc, &st);
        void *dst = tm_cblk_out(d, j, &dc, &dt);
        if (sc || dc) trunc |= tm_dt_copy(dst, dc, dt, src, sc, st);
    }
    return trunc ? -EMSGSIZE : 0;
}

static const struct tm_calgo alltoall_algo = {MPIX_COLL_ALLTOALL, per_member, alltoall_part,
                                              tm_hier_alltoall, NULL};
static const struct tm_calgo alltoallv_algo = {MPIX_COLL_ALLTOALLV, per_member, alltoall_part,
                                               tm_hier_alltoall, NULL};
static const struct tm_calgo alltoallw_algo = {MPIX_COLL_ALLTOALLW, per_member, alltoall_part,
                                               tm_hier_alltoall, NULL};

/* Bytes the receive layout spans from the buffer's start. */
static size_t recv_span(const struct tm_cargs *a, int n)
{
    size_t end = 0;
    for (int j = 0; j < n; j++) {
        size_t c;
        const struct tm_type *t;
        unsigned char *p = tm_cblk_out(a, j, &c, &t);
        size_t e = (size_t)(p - (unsigned char *)a->rbuf) + tm_dt_span(c, t);
        if (c && e > end) end = e;
    }
    return end;
}

/* Checks one side's per-peer counts (v, w), displacements and types (w: handles into ts). */
static int check_side(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what, int n,
                      const void *buf, const MPI_Count *counts, const MPI_Aint *displs,
                      const MPI_Datatype *types, MPI_Datatype type, const struct tm_type **ts,
                      const struct tm_type **ret_t)
{
    TM_COLL_CHECK(tm_coll_check_counts(me, comm, fn, what, counts, displs, n));
    int some = 0, missing = 0;
    for (int k = 0; k < n; k++) {
        some |= counts[k] > 0;
        if (types) {
            ts[k] = tm_type_get(types[k]);
            if (TM_UNLIKELY(!ts[k]))
                return tm_err(me, comm, MPI_ERR_TYPE, fn, "invalid %sdatatype %d for rank %d", what,
                              types[k], k);
            missing |= tm_buf_missing(buf, counts[k], ts[k]);
        }
    }
    if (!types)
        TM_COLL_CHECK(tm_coll_check_buf(me, comm, fn, what, buf, some, type, ret_t));
    else if (TM_UNLIKELY(missing))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn, "%sbuffer is NULL", what);
    return MPI_SUCCESS;
}

/* After the entry and the inter-communicator dispatch; lay: TM_CL_UNIFORM (Alltoall),
 * TM_CL_V, TM_CL_W; wide: the memory of the arrays an int call widened (owned from here). */
static int alltoall_body(struct tm_rank *me, struct tm_commref *cr, const char *fn,
                         enum tm_clayout lay, const void *sendbuf, MPI_Count sendcount,
                         const MPI_Count *sendcounts, const MPI_Aint *sdispls,
                         MPI_Datatype sendtype, const MPI_Datatype *sendtypes, void *recvbuf,
                         MPI_Count recvcount, const MPI_Count *recvcounts, const MPI_Aint *rdispls,
                         MPI_Datatype recvtype, const MPI_Datatype *recvtypes, MPI_Comm comm,
                         MPI_Request *request, void *wide)
{
    int n = cr->c->size, in_place = sendbuf == MPI_IN_PLACE;
    struct tm_cargs a = {.root = -1, .in_place = in_place, .slay = lay, .rlay = lay, .wide = wide};
    const struct tm_type **ts = NULL;
    int r;
#define FAIL_IF(expr)                                                                              \
    if (TM_UNLIKELY((r = (expr)) != MPI_SUCCESS)) goto fail;
    if (lay == TM_CL_W) {
        if (TM_UNLIKELY(!recvtypes || (!in_place && !sendtypes))) {
            r = tm_err(me, comm, MPI_ERR_ARG, fn, "datatype arrays are NULL");
            goto fail;
        }
        a.own = ts = malloc(sizeof *ts * 2 * (size_t)n);
        if (!ts) {
            r = tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
            goto fail;
        }
        a.stypes = ts;
        a.rtypes = ts + n;
    }
    if (lay == TM_CL_UNIFORM) {
        FAIL_IF(
            tm_coll_check_buf(me, comm, fn, "receive ", recvbuf, recvcount, recvtype, &a.rtype));
        if (!in_place)
            FAIL_IF(
                tm_coll_check_buf(me, comm, fn, "send ", sendbuf, sendcount, sendtype, &a.stype));
    } else {
        FAIL_IF(check_side(me, comm, fn, "receive ", n, recvbuf, recvcounts, rdispls,
                           lay == TM_CL_W ? recvtypes : NULL, recvtype, a.rtypes, &a.rtype));
        if (!in_place)
            FAIL_IF(check_side(me, comm, fn, "send ", n, sendbuf, sendcounts, sdispls,
                               lay == TM_CL_W ? sendtypes : NULL, sendtype, a.stypes, &a.stype));
    }
    a.rbuf = recvbuf;
    a.rcount = recvcount;
    a.rcounts = recvcounts;
    a.rdispls = rdispls;
    if (TM_UNLIKELY(recvbuf == MPI_IN_PLACE || (!in_place && sendbuf && sendbuf == recvbuf))) {
        r = tm_err(me, comm, MPI_ERR_BUFFER, fn,
                   "send and receive buffers are the same (use MPI_IN_PLACE)");
        goto fail;
    }
    if (in_place) {
        /* The input is laid out as the output; snapshot it (see the top of the file). */
        size_t span = recv_span(&a, n);
        size_t tbytes = lay == TM_CL_W ? sizeof *ts * 2 * (size_t)n : 0;
        unsigned char *own = malloc(tbytes + span + 1);
        if (!own) {
            r = tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
            goto fail;
        }
        if (tbytes) {
            memcpy(own, ts, tbytes);
            free(ts);
            ts = (const struct tm_type **)own;
            a.rtypes = ts + n;
            a.stypes = a.rtypes;
        }
        if (span) memcpy(own + tbytes, recvbuf, span);
        a.own = own;
        a.sbuf = own + tbytes;
        a.scount = a.rcount;
        a.stype = a.rtype;
        a.scounts = a.rcounts;
        a.sdispls = a.rdispls;
    } else {
        a.sbuf = sendbuf;
        a.scount = sendcount;
        a.scounts = sendcounts;
        a.sdispls = sdispls;
    }
#undef FAIL_IF
    const struct tm_calgo *al = lay == TM_CL_W   ? &alltoallw_algo
                                : lay == TM_CL_V ? &alltoallv_algo
                                                 : &alltoall_algo;
    return tm_coll_start(me, cr, comm, fn, al, &a, request);
fail:
    tm_cargs_free_own(&a);
    return r;
}

static int alltoall_common(const char *fn, enum tm_clayout lay, const void *sendbuf, int sendcount,
                           const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                           const MPI_Datatype *sendtypes, void *recvbuf, int recvcount,
                           const int *recvcounts, const int *rdispls, MPI_Datatype recvtype,
                           const MPI_Datatype *recvtypes, MPI_Comm comm, MPI_Request *request,
                           int nb)
{
    TM_COLL_ENTRY(fn, comm);
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    const MPI_Count *wc[2] = {NULL, NULL};
    const MPI_Aint *wd[2] = {NULL, NULL};
    void *wide = NULL;
    if (TM_UNLIKELY(cr->c->inter)) {
        /* the remote group's blocks; NULL arrays stay NULL (coll_inter/ refuses them), the
         * inter forms keep no pointer to these */
        const int *ci[2] = {recvcounts, sendcounts}, *di[2] = {rdispls, sdispls};
        if (lay != TM_CL_UNIFORM &&
            TM_UNLIKELY(tm_coll_widen(cr->c->remote_size, 2, ci, di, wc, wd, &wide) < 0))
            return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
        int e = me->job->inter->alltoall(me, cr, comm, fn,
                                         lay == TM_CL_UNIFORM ? 0
                                         : lay == TM_CL_V     ? 1
                                                              : 2,
                                         sendbuf, sendcount, wc[1], wd[1], sendtype, sendtypes,
                                         recvbuf, recvcount, wc[0], wd[0], recvtype, recvtypes,
                                         nb ? request : NULL);
        free(wide);
        return e;
    }
    if (lay != TM_CL_UNIFORM) {
        /* in place: the send arrays are ignored (MPI 4.1 §6.8) */
        const int *ci[2] = {recvcounts, sendbuf == MPI_IN_PLACE ? NULL : sendcounts};
        const int *di[2] = {rdispls, sendbuf == MPI_IN_PLACE ? NULL : sdispls};
        if (TM_UNLIKELY(tm_coll_widen(cr->c->size, 2, ci, di, wc, wd, &wide) < 0))
            return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    return alltoall_body(me, cr, fn, lay, sendbuf, sendcount, wc[1], wd[1], sendtype, sendtypes,
                         recvbuf, recvcount, wc[0], wd[0], recvtype, recvtypes, comm,
                         nb ? request : NULL, wide);
}

int tm_alltoallvw_c(const char *fn, int w, const void *sendbuf, const MPI_Count *sendcounts,
                    const MPI_Aint *sdispls, MPI_Datatype sendtype, const MPI_Datatype *sendtypes,
                    void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *rdispls,
                    MPI_Datatype recvtype, const MPI_Datatype *recvtypes, MPI_Comm comm,
                    MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    if (TM_UNLIKELY(cr->c->inter))
        return me->job->inter->alltoall(me, cr, comm, fn, w ? 2 : 1, sendbuf, 0, sendcounts,
                                        sdispls, sendtype, sendtypes, recvbuf, 0, recvcounts,
                                        rdispls, recvtype, recvtypes, nb ? request : NULL);
    return alltoall_body(me, cr, fn, w ? TM_CL_W : TM_CL_V, sendbuf, 0, sendcounts, sdispls,
                         sendtype, sendtypes, recvbuf, 0, recvcounts, rdispls, recvtype, recvtypes,
                         comm, nb ? request : NULL, NULL);
}

TM_API int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    /* as MPI_Alltoall_c decides, so that the two forms of one signature meet (coll_c_pieces.h) */
    if (TM_UNLIKELY(tm_coll_c_big(comm, recvcount, recvtype)))
        return tm_alltoall_pieces(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return alltoall_common("MPI_Alltoall", TM_CL_UNIFORM, sendbuf, sendcount, NULL, NULL, sendtype,
                           NULL, recvbuf, recvcount, NULL, NULL, recvtype, NULL, comm, NULL, 0);
}
TM_ALIAS(Alltoall)

TM_API int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                          const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return alltoall_common("MPI_Alltoallv", TM_CL_V, sendbuf, 0, sendcounts, sdispls, sendtype,
                           NULL, recvbuf, 0, recvcounts, rdispls, recvtype, NULL, comm, NULL, 0);
}
TM_ALIAS(Alltoallv)

TM_API int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                          const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoall_common("MPI_Alltoallw", TM_CL_W, sendbuf, 0, sendcounts, sdispls,
                           MPI_DATATYPE_NULL, sendtypes, recvbuf, 0, recvcounts, rdispls,
                           MPI_DATATYPE_NULL, recvtypes, comm, NULL, 0);
}
TM_ALIAS(Alltoallw)

TM_API int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                           MPI_Request *request)
{
    return alltoall_common("MPI_Ialltoallw", TM_CL_W, sendbuf, 0, sendcounts, sdispls,
                           MPI_DATATYPE_NULL, sendtypes, recvbuf, 0, recvcounts, rdispls,
                           MPI_DATATYPE_NULL, recvtypes, comm, request, 1);
}
TM_ALIAS(Ialltoallw)

TM_API int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return alltoall_common("MPI_Ialltoall", TM_CL_UNIFORM, sendbuf, sendcount, NULL, NULL, sendtype,
                           NULL, recvbuf, recvcount, NULL, NULL, recvtype, NULL, comm, request, 1);
}
TM_ALIAS(Ialltoall)

TM_API int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    return alltoall_common("MPI_Ialltoallv", TM_CL_V, sendbuf, 0, sendcounts, sdispls, sendtype,
                           NULL, recvbuf, 0, recvcounts, rdispls, recvtype, NULL, comm, request, 1);
}
TM_ALIAS(Ialltoallv)
