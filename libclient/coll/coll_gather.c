/* coll_gather.c — Gather(v), Scatter(v), Allgather(v), blocking and non-blocking, on the engine
 * of coll.h.  Every part is one member's share, moved straight between the members' buffers
 * with tm_dt_copy (one copy per block, no staging):
 *   Gather:    part i copies member i's input into block i of the root's output;
 *   Scatter:   part i copies block i of the root's input into member i's output;
 *   Allgather: part i fills member i's output with every member's input (n copies).
 * MPI_IN_PLACE (MPI 3.1 §5.5-5.7): at the root of Gather the root's block is already in place;
 * at the root of Scatter the root's block stays where it is; in Allgather a member's input is
 * its own block of its output. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_c_pieces.h"
#include "coll_inter_ops.h"
#include "coll_net_move.h"
#include "errh.h"
#include "job.h"

/* Block j of a member's output (or input): where it starts and how many elements. */
static void *rblock(const struct tm_cargs *a, int j, size_t *ret_count)
{
    if (a->rlay == TM_CL_V) {
        *ret_count = (size_t)a->rcounts[j];
        return tm_dt_at(a->rbuf, (size_t)a->rdispls[j], a->rtype);
    }
    *ret_count = (size_t)a->rcount;
    return tm_dt_at(a->rbuf, (size_t)j * (size_t)a->rcount, a->rtype);
}

static const void *sblock(const struct tm_cargs *a, int j, size_t *ret_count)
{
    if (a->slay == TM_CL_V) {
        *ret_count = (size_t)a->scounts[j];
        return tm_dt_at(a->sbuf, (size_t)a->sdispls[j], a->stype);
    }
    *ret_count = (size_t)a->scount;
    return tm_dt_at(a->sbuf, (size_t)j * (size_t)a->scount, a->stype);
}

static int copy_result(int trunc)
{
    return trunc ? -EMSGSIZE : 0;
}

static size_t per_member(const struct tm_cwork *w)
{
    return (size_t)w->n;
}

static int gather_part(const struct tm_cwork *w, size_t i)
{
    const struct tm_cargs *root = tm_cw_arg(w, tm_cw_arg(w, w->wrank)->root);
    const struct tm_cargs *src = tm_cw_arg(w, (int)i);
    if (src == root && root->in_place) return 0;
    size_t dc;
    void *dst = rblock(root, (int)i, &dc);
    return copy_result(
        tm_dt_copy(dst, dc, root->rtype, src->sbuf, (size_t)src->scount, src->stype));
}

static int scatter_part(const struct tm_cwork *w, size_t i)
{
    const struct tm_cargs *root = tm_cw_arg(w, tm_cw_arg(w, w->wrank)->root);
    const struct tm_cargs *dst = tm_cw_arg(w, (int)i);
    if (dst == root && root->in_place) return 0;
    size_t sc;
    const void *src = sblock(root, (int)i, &sc);
    return copy_result(
        tm_dt_copy(dst->rbuf, (size_t)dst->rcount, dst->rtype, src, sc, root->stype));
}

static int allgather_part(const struct tm_cwork *w, size_t i)
{
    const struct tm_cargs *d = tm_cw_arg(w, (int)i);
    int trunc = 0;
    for (int j = 0; j < w->n; j++) {
        const struct tm_cargs *s = tm_cw_arg(w, j);
        if (j == (int)i && d->in_place) continue;
        size_t dc, sc;
        void *dst = rblock(d, j, &dc);
        const void *src;
        const struct tm_type *st;
        if (s->in_place) {
            src = rblock(s, j, &sc); /* member j's input is its own block */
            st = s->rtype;
        } else {
            src = s->sbuf;
            sc = (size_t)s->scount;
            st = s->stype;
        }
        trunc |= tm_dt_copy(dst, dc, d->rtype, src, sc, st);
    }
    return copy_result(trunc);
}

/* Small blocking Allgather on one node: one synchronisation instead of the engine's two
 * (comm_parts.h struct tm_agather_stage has the protocol).  The engine's parts copy straight
 * between the members' buffers, but need a second barrier so that no input goes before every
 * part has read it; for blocks of a few cache lines the copy through the stage costs less than
 * the second round of context switches when the ranks outnumber the cores (osu_allgather at 4
 * ranks on 2 cores, docs/bench/ANALYSIS.md "Small collectives at 4 ranks on 2 cores, across hosts,
 * HPL").  A place holds the round's barrier number beside the length its member sent: a member that
 * could not make the stage still arrives (nobody waits for ever) and the others see its place
 * stale. */
struct agather_head {
    uint32_t len;   /* packed bytes the member sent; more than the block: truncated */
    uint32_t round; /* the low half of the barrier number the place was written for */
};

static struct tm_agather_stage *agather_stage(struct tm_coll *co)
{
    struct tm_agather_stage *g = atomic_load_explicit(&co->agather, memory_order_acquire);
    if (TM_LIKELY(g)) return g;
    struct tm_agather_stage *mine = aligned_alloc(TM_CACHELINE, sizeof *mine);
    if (!mine) return NULL;
    memset(mine, 0, sizeof *mine); /* no place claims a round before it is written */
    if (atomic_compare_exchange_strong_explicit(&co->agather, &g, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    free(mine); /* another member's is in: g */
    return g;
}

static int allgather_direct(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    struct tm_comm *c = cr->c;
    int n = c->size;
    if (a->rlay != TM_CL_UNIFORM || a->rtype->psize > TM_AGATHER_DIRECT_MAX) return 1;
    size_t bytes = (size_t)a->rcount * a->rtype->psize, place = TM_AGATHER_PLACE(bytes);
    if (!bytes || place * (size_t)n > TM_AGATHER_DIRECT_MAX) return 1;
    struct tm_agather_stage *st = agather_stage(&c->coll);
    uint64_t k = cr->nbarrier + 1; /* the barrier this round ends */
    unsigned char *stage = st ? st->data[k & 1] : NULL;
    if (stage) {
        unsigned char *at = stage + (size_t)cr->rank * place;
        const void *src = a->sbuf;
        size_t sc = (size_t)a->scount;
        const struct tm_type *t = a->stype;
        if (a->in_place) { /* the member's input is its own block of its output */
            src = tm_dt_at(a->rbuf, (size_t)cr->rank * (size_t)a->rcount, a->rtype);
            sc = (size_t)a->rcount;
            t = a->rtype;
        }
        size_t sent = sc && t->psize > bytes / sc ? bytes + 1 : sc * t->psize;
        struct agather_head h = {(uint32_t)(sent > bytes ? bytes + 1 : sent), (uint32_t)k};
        if (sent) tm_type_pack(at + sizeof h, src, sc, t, 0, sent < bytes ? sent : bytes);
        memcpy(at, &h, sizeof h);
    }
    tm_coll_stamp(cr, a->sig);
    uint64_t kk;
    if (tm_coll_arrive(cr, &kk))
        tm_coll_wake_members(me, c);
    else
        tm_coll_wait_ctr(me, &c->coll.arrive, kk * (uint64_t)n);
    /* a member's earlier call failed its checks: its next call may have met this one */
    if (TM_UNLIKELY(!tm_coll_in_step(cr, a->sig))) return tm_coll_out_of_step(me, cr);
    if (!stage) return -ENOMEM;
    int err = 0;
    for (int j = 0; j < n; j++) {
        const unsigned char *at = stage + (size_t)j * place;
        struct agather_head h;
        memcpy(&h, at, sizeof h);
        if (h.round != (uint32_t)k) {
            err = -ENOMEM; /* member j had no stage */
            continue;
        }
        if (j == cr->rank && a->in_place) continue;
        if (h.len > bytes) err = err ? err : -EMSGSIZE;
        size_t m = h.len < bytes ? h.len : bytes;
        if (m)
            tm_type_unpack(tm_dt_at(a->rbuf, (size_t)j * (size_t)a->rcount, a->rtype),
                           (size_t)a->rcount, a->rtype, 0, at + sizeof h, m);
    }
    return err;
}

static const struct tm_calgo gather_algo = {MPIX_COLL_GATHER, per_member, gather_part,
                                            tm_hier_gather, NULL};
static const struct tm_calgo gatherv_algo = {MPIX_COLL_GATHERV, per_member, gather_part,
                                             tm_hier_gather, NULL};
static const struct tm_calgo scatter_algo = {MPIX_COLL_SCATTER, per_member, scatter_part,
                                             tm_hier_scatter, NULL};
static const struct tm_calgo scatterv_algo = {MPIX_COLL_SCATTERV, per_member, scatter_part,
                                              tm_hier_scatter, NULL};
static const struct tm_calgo allgather_algo = {MPIX_COLL_ALLGATHER, per_member, allgather_part,
                                               tm_hier_allgather, allgather_direct};
static const struct tm_calgo allgatherv_algo = {MPIX_COLL_ALLGATHERV, per_member, allgather_part,
                                                tm_hier_allgather, NULL};

#define NB_REQ(fn)                                                                                 \
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");

/* On an inter-communicator the v side a member uses (used) must be given: coll_inter/ reads
 * NULL counts as the uniform form. */
static int inter_v_given(struct tm_rank *me, MPI_Comm comm, const char *fn, int used,
                         const void *counts, const void *displs)
{
    if (TM_UNLIKELY(used && (!counts || !displs)))
        return tm_err(me, comm, MPI_ERR_ARG, fn, "counts or displacements are NULL");
    return MPI_SUCCESS;
}

/* An int v side of an inter-communicator, widened for coll_inter/. */
static int inter_widen(struct tm_rank *me, MPI_Comm comm, const char *fn, int n, const int *counts,
                       const int *displs, const MPI_Count **ret_c, const MPI_Aint **ret_d,
                       void **ret_mem)
{
    TM_COLL_CHECK(inter_v_given(me, comm, fn, 1, counts, displs));
    if (TM_UNLIKELY(tm_coll_widen(n, 1, &counts, &displs, ret_c, ret_d, ret_mem) < 0))
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    return MPI_SUCCESS;
}

/* Checks the side that holds one block per member (the root's output of Gather, the root's
 * input of Scatter, every member's output of Allgather): its counts (v: counts[] and displs[]
 * for n members, else count), its buffer and type (*ret_t), and, when it holds any element,
 * that it is neither MPI_IN_PLACE nor the other side's buffer, nor has the other side's buffer
 * as the caller's (member self's) block: the arguments would alias (MPI 4.1 §2.5.2), which
 * MPI_IN_PLACE expresses.  Returns MPI_SUCCESS or the error class, already reported. */
static int check_blocks(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what, int n,
                        int self, int v, const void *buf, MPI_Count count, const MPI_Count *counts,
                        const MPI_Aint *displs, MPI_Datatype dt, const void *other,
                        const struct tm_type **ret_t)
{
    int some = 0;
    if (v) {
        TM_COLL_CHECK(tm_coll_check_counts(me, comm, fn, what, counts, displs, n));
        for (int k = 0; k < n && !some; k++)
            some = counts[k] > 0;
        TM_COLL_CHECK(tm_coll_check_buf(me, comm, fn, what, buf, some, dt, ret_t));
    } else {
        TM_COLL_CHECK(tm_coll_check_buf(me, comm, fn, what, buf, count, dt, ret_t));
        some = count > 0;
    }
    if (TM_UNLIKELY(some && (buf == MPI_IN_PLACE || buf == other)))
        return tm_err(me, comm, MPI_ERR_BUFFER, fn,
                      "send and receive buffers are the same (use MPI_IN_PLACE)");
    MPI_Count own = v ? counts[self] : count;
    if (own > 0 && other && other != MPI_IN_PLACE) {
        MPI_Aint at = (MPI_Aint)(v ? displs[self] : (MPI_Aint)self * count) * (*ret_t)->extent;
        if (TM_UNLIKELY((const char *)buf + at == (const char *)other))
            return tm_err(me, comm, MPI_ERR_BUFFER, fn,
                          "the %sbuffer's block of rank %d is the other buffer (use MPI_IN_PLACE)",
                          what, self);
    }
    return MPI_SUCCESS;
}

/* ---- Gather / Gatherv (rcounts NULL: Gather) ---- */

/* After the entry and the inter-communicator dispatch: recvcounts / displs wide (v), wide the
 * memory that holds them when an int call widened them (the arguments own it from here). */
static int gather_body(struct tm_rank *me, struct tm_commref *cr, const char *fn, int v,
                       const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, const MPI_Count *recvcounts,
                       const MPI_Aint *displs, MPI_Datatype recvtype, int root, MPI_Comm comm,
                       MPI_Request *request, void *wide)
{
    int is_root = cr->rank == root, in_place = sendbuf == MPI_IN_PLACE;
    struct tm_cargs a = {.root = root, .in_place = in_place, .wide = wide};
    int r;
#define FAIL_IF(expr)                                                                              \
    if (TM_UNLIKELY((r = (expr)) != MPI_SUCCESS)) goto fail;
    FAIL_IF(tm_coll_check_root(me, cr, comm, fn, root));
    if (TM_UNLIKELY(in_place && !is_root)) {
        r = tm_err(me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is allowed at the root only");
        goto fail;
    }
    if (!in_place) {
        FAIL_IF(tm_coll_check_buf(me, comm, fn, "send ", sendbuf, sendcount, sendtype, &a.stype));
        a.sbuf = sendbuf;
        a.scount = sendcount;
    }
    if (is_root) {
        FAIL_IF(check_blocks(me, comm, fn, "receive ", cr->c->size, cr->rank, v, recvbuf, recvcount,
                             recvcounts, displs, recvtype, sendbuf, &a.rtype));
        if (v) {
            a.rlay = TM_CL_V;
            a.rcounts = recvcounts;
            a.rdispls = displs;
        } else {
            a.rcount = recvcount;
        }
        a.rbuf = recvbuf;
    }
#undef FAIL_IF
    return tm_coll_start(me, cr, comm, fn, v ? &gatherv_algo : &gather_algo, &a, request);
fail:
    free(wide);
    return r;
}

static int gather_common(const char *fn, int v, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount, const int *recvcounts,
                         const int *displs, MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    NB_REQ(fn);
    const MPI_Count *wc = NULL;
    const MPI_Aint *wd = NULL;
    void *wide = NULL;
    if (TM_UNLIKELY(cr->c->inter)) {
        /* MPI_ROOT holds the remote group's blocks; the inter forms keep no pointer to them */
        if (v && root == MPI_ROOT)
            TM_COLL_CHECK(
                inter_widen(me, comm, fn, cr->c->remote_size, recvcounts, displs, &wc, &wd, &wide));
        int e = me->job->inter->gather(me, cr, comm, fn, sendbuf, sendcount, sendtype, recvbuf,
                                       recvcount, wc, wd, recvtype, root, nb ? request : NULL);
        free(wide);
        return e;
    }
    if (v && cr->rank == root &&
        TM_UNLIKELY(tm_coll_widen(cr->c->size, 1, &recvcounts, &displs, &wc, &wd, &wide) < 0))
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    return gather_body(me, cr, fn, v, sendbuf, sendcount, sendtype, recvbuf, recvcount, wc, wd,
                       recvtype, root, comm, nb ? request : NULL, wide);
}

int tm_gatherv_c(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                 void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *displs,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    NB_REQ(fn);
    if (TM_UNLIKELY(cr->c->inter)) {
        TM_COLL_CHECK(inter_v_given(me, comm, fn, root == MPI_ROOT, recvcounts, displs));
        return me->job->inter->gather(me, cr, comm, fn, sendbuf, sendcount, sendtype, recvbuf, 0,
                                      recvcounts, displs, recvtype, root, nb ? request : NULL);
    }
    return gather_body(me, cr, fn, 1, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                       recvtype, root, comm, nb ? request : NULL, NULL);
}

TM_API int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    /* as MPI_Gather_c decides, so that the two forms of one signature meet (coll_c_pieces.h) */
    if (TM_UNLIKELY(tm_coll_c_big_rooted(comm, root, recvcount, recvtype, sendcount, sendtype)))
        return tm_gather_pieces(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                comm);
    return gather_common("MPI_Gather", 0, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                         NULL, recvtype, root, comm, NULL, 0);
}
TM_ALIAS(Gather)

TM_API int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                        MPI_Comm comm)
{
    return gather_common("MPI_Gatherv", 1, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                         displs, recvtype, root, comm, NULL, 0);
}
TM_ALIAS(Gatherv)

TM_API int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request *request)
{
    return gather_common("MPI_Igather", 0, sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                         NULL, recvtype, root, comm, request, 1);
}
TM_ALIAS(Igather)

TM_API int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         int root, MPI_Comm comm, MPI_Request *request)
{
    return gather_common("MPI_Igatherv", 1, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                         displs, recvtype, root, comm, request, 1);
}
TM_ALIAS(Igatherv)

/* ---- Scatter / Scatterv ---- */

static int scatter_body(struct tm_rank *me, struct tm_commref *cr, const char *fn, int v,
                        const void *sendbuf, MPI_Count sendcount, const MPI_Count *sendcounts,
                        const MPI_Aint *displs, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request *request, void *wide)
{
    int is_root = cr->rank == root, in_place = recvbuf == MPI_IN_PLACE;
    struct tm_cargs a = {.root = root, .in_place = in_place, .wide = wide};
    int r;
#define FAIL_IF(expr)                                                                              \
    if (TM_UNLIKELY((r = (expr)) != MPI_SUCCESS)) goto fail;
    FAIL_IF(tm_coll_check_root(me, cr, comm, fn, root));
    if (TM_UNLIKELY(in_place && !is_root)) {
        r = tm_err(me, comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is allowed at the root only");
        goto fail;
    }
    if (!in_place) {
        FAIL_IF(
            tm_coll_check_buf(me, comm, fn, "receive ", recvbuf, recvcount, recvtype, &a.rtype));
        a.rbuf = recvbuf;
        a.rcount = recvcount;
    }
    if (is_root) {
        FAIL_IF(check_blocks(me, comm, fn, "send ", cr->c->size, cr->rank, v, sendbuf, sendcount,
                             sendcounts, displs, sendtype, recvbuf, &a.stype));
        if (v) {
            a.slay = TM_CL_V;
            a.scounts = sendcounts;
            a.sdispls = displs;
        } else {
            a.scount = sendcount;
        }
        a.sbuf = sendbuf;
    }
#undef FAIL_IF
    return tm_coll_start(me, cr, comm, fn, v ? &scatterv_algo : &scatter_algo, &a, request);
fail:
    free(wide);
    return r;
}

static int scatter_common(const char *fn, int v, const void *sendbuf, int sendcount,
                          const int *sendcounts, const int *displs, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    NB_REQ(fn);
    const MPI_Count *wc = NULL;
    const MPI_Aint *wd = NULL;
    void *wide = NULL;
    if (TM_UNLIKELY(cr->c->inter)) {
        if (v && root == MPI_ROOT)
            TM_COLL_CHECK(
                inter_widen(me, comm, fn, cr->c->remote_size, sendcounts, displs, &wc, &wd, &wide));
        int e = me->job->inter->scatter(me, cr, comm, fn, sendbuf, sendcount, wc, wd, sendtype,
                                        recvbuf, recvcount, recvtype, root, nb ? request : NULL);
        free(wide);
        return e;
    }
    if (v && cr->rank == root &&
        TM_UNLIKELY(tm_coll_widen(cr->c->size, 1, &sendcounts, &displs, &wc, &wd, &wide) < 0))
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    return scatter_body(me, cr, fn, v, sendbuf, sendcount, wc, wd, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, nb ? request : NULL, wide);
}

int tm_scatterv_c(const char *fn, const void *sendbuf, const MPI_Count *sendcounts,
                  const MPI_Aint *displs, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    NB_REQ(fn);
    if (TM_UNLIKELY(cr->c->inter)) {
        TM_COLL_CHECK(inter_v_given(me, comm, fn, root == MPI_ROOT, sendcounts, displs));
        return me->job->inter->scatter(me, cr, comm, fn, sendbuf, 0, sendcounts, displs, sendtype,
                                       recvbuf, recvcount, recvtype, root, nb ? request : NULL);
    }
    return scatter_body(me, cr, fn, 1, sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount,
                        recvtype, root, comm, nb ? request : NULL, NULL);
}

TM_API int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (TM_UNLIKELY(tm_coll_c_big_rooted(comm, root, sendcount, sendtype, recvcount, recvtype)))
        return tm_scatter_pieces(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                                 comm);
    return scatter_common("MPI_Scatter", 0, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                          recvcount, recvtype, root, comm, NULL, 0);
}
TM_ALIAS(Scatter)

TM_API int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                         MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int root, MPI_Comm comm)
{
    return scatter_common("MPI_Scatterv", 1, sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                          recvcount, recvtype, root, comm, NULL, 0);
}
TM_ALIAS(Scatterv)

TM_API int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request)
{
    return scatter_common("MPI_Iscatter", 0, sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                          recvcount, recvtype, root, comm, request, 1);
}
TM_ALIAS(Iscatter)

TM_API int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return scatter_common("MPI_Iscatterv", 1, sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                          recvcount, recvtype, root, comm, request, 1);
}
TM_ALIAS(Iscatterv)

/* ---- Allgather / Allgatherv ---- */

static int allgather_body(struct tm_rank *me, struct tm_commref *cr, const char *fn, int v,
                          const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, const MPI_Count *recvcounts,
                          const MPI_Aint *displs, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *request, void *wide)
{
    int in_place = sendbuf == MPI_IN_PLACE;
    struct tm_cargs a = {.root = -1, .in_place = in_place, .wide = wide};
    int r;
#define FAIL_IF(expr)                                                                              \
    if (TM_UNLIKELY((r = (expr)) != MPI_SUCCESS)) goto fail;
    if (!in_place) {
        FAIL_IF(tm_coll_check_buf(me, comm, fn, "send ", sendbuf, sendcount, sendtype, &a.stype));
        a.sbuf = sendbuf;
        a.scount = sendcount;
    }
    FAIL_IF(check_blocks(me, comm, fn, "receive ", cr->c->size, cr->rank, v, recvbuf, recvcount,
                         recvcounts, displs, recvtype, sendbuf, &a.rtype));
    if (v) {
        a.rlay = TM_CL_V;
        a.rcounts = recvcounts;
        a.rdispls = displs;
    } else {
        a.rcount = recvcount;
    }
    a.rbuf = recvbuf;
#undef FAIL_IF
    return tm_coll_start(me, cr, comm, fn, v ? &allgatherv_algo : &allgather_algo, &a, request);
fail:
    free(wide);
    return r;
}

static int allgather_common(const char *fn, int v, const void *sendbuf, int sendcount,
                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            const int *recvcounts, const int *displs, MPI_Datatype recvtype,
                            MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    NB_REQ(fn);
    const MPI_Count *wc = NULL;
    const MPI_Aint *wd = NULL;
    void *wide = NULL;
    if (TM_UNLIKELY(cr->c->inter)) {
        if (v)
            TM_COLL_CHECK(
                inter_widen(me, comm, fn, cr->c->remote_size, recvcounts, displs, &wc, &wd, &wide));
        int e = me->job->inter->allgather(me, cr, comm, fn, sendbuf, sendcount, sendtype, recvbuf,
                                          recvcount, wc, wd, recvtype, nb ? request : NULL);
        free(wide);
        return e;
    }
    if (v && TM_UNLIKELY(tm_coll_widen(cr->c->size, 1, &recvcounts, &displs, &wc, &wd, &wide) < 0))
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    return allgather_body(me, cr, fn, v, sendbuf, sendcount, sendtype, recvbuf, recvcount, wc, wd,
                          recvtype, comm, nb ? request : NULL, wide);
}

int tm_allgatherv_c(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *displs,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    NB_REQ(fn);
    if (TM_UNLIKELY(cr->c->inter)) {
        TM_COLL_CHECK(inter_v_given(me, comm, fn, 1, recvcounts, displs));
        return me->job->inter->allgather(me, cr, comm, fn, sendbuf, sendcount, sendtype, recvbuf, 0,
                                         recvcounts, displs, recvtype, nb ? request : NULL);
    }
    return allgather_body(me, cr, fn, 1, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                          displs, recvtype, comm, nb ? request : NULL, NULL);
}

TM_API int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    if (TM_UNLIKELY(tm_coll_c_big(comm, recvcount, recvtype)))
        return tm_allgather_pieces(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   comm);
    return allgather_common("MPI_Allgather", 0, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            NULL, NULL, recvtype, comm, NULL, 0);
}
TM_ALIAS(Allgather)

TM_API int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                           MPI_Comm comm)
{
    return allgather_common("MPI_Allgatherv", 1, sendbuf, sendcount, sendtype, recvbuf, 0,
                            recvcounts, displs, recvtype, comm, NULL, 0);
}
TM_ALIAS(Allgatherv)

TM_API int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    return allgather_common("MPI_Iallgather", 0, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            NULL, NULL, recvtype, comm, request, 1);
}
TM_ALIAS(Iallgather)

TM_API int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return allgather_common("MPI_Iallgatherv", 1, sendbuf, sendcount, sendtype, recvbuf, 0,
                            recvcounts, displs, recvtype, comm, request, 1);
}
TM_ALIAS(Iallgatherv)
