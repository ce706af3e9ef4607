/* coll_reduce.c — Reduce, Allreduce, Reduce_scatter, Reduce_scatter_block (blocking and
 * non-blocking) and Reduce_local, on the engine of coll.h.
 *
 * Reduce/Allreduce split the elements into slices (at least 4 KiB each, at most one per
 * member); the part for a slice combines it over every member's input in a fixed order,
 * in[0] op (in[1] op (... in[n-1])), through the running thread's scratch, and writes the
 * result into the root's output (Reduce) or every member's (Allreduce).  The same order for
 * every element and every run: deterministic results, and rank order for non-commutative ops
 * (MPI requires associativity, so the grouping does not matter).  A slice of an input is read
 * only by the part that owns the slice and before that part writes the slice's result, so an
 * MPI_IN_PLACE input that is also an output is safe.
 *
 * Reduce_scatter: part i computes block i over every input into member i's output.  With
 * MPI_IN_PLACE a member's input is its output buffer, whose start receives block i while other
 * parts still read it, so that member first snapshots its input (one copy, freed at the end).
 *
 * Inputs are read in place, so reductions need contiguous types (typecore/type.h); a non-contiguous
 * type would be packed into scratch per chunk here, the only place that changes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "coll_inter_ops.h"
#include "coll_net.h"
#include "coll_net_move.h"
#include "errh.h"
#include "job.h"

static inline const void *input_of(const struct tm_cargs *a)
{
    return a->sbuf;
}

/* Combines elements [lo, hi) over every member's input (offset in[k] + lo) in rank order and
 * hands each chunk to emit(w, ctx, first element, chunk, elements).  The running member's op
 * (its own function) does the combining. */
typedef void emit_fn(const struct tm_cwork *w, const void *ctx, size_t at, const void *acc,
                     size_t m);

static int combine(const struct tm_cwork *w, size_t lo, size_t hi, emit_fn *emit, const void *ctx,
                   size_t (*in_off)(const struct tm_cargs *, const void *, size_t))
{
    const struct tm_cargs *mine = tm_cw_arg(w, w->wrank);
    const struct tm_type *t = mine->rtype;
    size_t ext = t->extent;
    if (!ext || lo >= hi) return 0;
    size_t chunk = TM_CHUNK_BYTES / ext ? TM_CHUNK_BYTES / ext : 1;
    unsigned char *acc = tm_coll_scratch(w->me, chunk * ext);
    if (!acc) return -ENOMEM;
    int n = w->n;
    for (size_t e = lo; e < hi; e += chunk) {
        size_t m = hi - e < chunk ? hi - e : chunk;
        const struct tm_cargs *last = tm_cw_arg(w, n - 1);
        tm_dt_copy(acc, m, t, tm_dt_at(input_of(last), in_off(last, ctx, e), t), m, t);
        for (int k = n - 2; k >= 0; k--) {
            const struct tm_cargs *ak = tm_cw_arg(w, k);
            tm_opref_apply(&mine->op, tm_dt_at(input_of(ak), in_off(ak, ctx, e), t), acc, m, t,
                           mine->dth);
        }
        emit(w, ctx, e, acc, m);
    }
    return 0;
}

static size_t plain_off(const struct tm_cargs *a, const void *ctx, size_t e)
{
    (void)a, (void)ctx;
    return e;
}

/* ---- Reduce / Allreduce ---- */

static void emit_reduce(const struct tm_cwork *w, const void *ctx, size_t at, const void *acc,
                        size_t m)
{
    (void)ctx;
    const struct tm_type *t = tm_cw_arg(w, w->wrank)->rtype;
    int root = tm_cw_arg(w, w->wrank)->root;
    for (int k = root < 0 ? 0 : root; k < (root < 0 ? w->n : root + 1); k++)
        tm_dt_copy(tm_dt_at(tm_cw_arg(w, k)->rbuf, at, t), m, t, acc, m, t);
}

static int reduce_part(const struct tm_cwork *w, size_t s)
{
    const struct tm_cargs *a = tm_cw_arg(w, w->wrank);
    size_t per = tm_slice_len(a->count, a->rtype->extent, w->n);
    size_t lo = s * per, hi = lo + per < a->count ? lo + per : a->count;
    return combine(w, lo, hi, emit_reduce, NULL, plain_off);
}

/* Small blocking Allreduce on one node: one synchronisation instead of the engine's two.
 * Every member publishes its arguments and arrives; the last to arrive combines every input
 * in rank order into the communicator's result buffer and publishes it with the round's
 * number; the others wait for that alone and copy the result out.  Inputs stay valid because
 * their owners wait; the result buffer is rewritten only by a later round's last arrival,
 * which needs every member to have arrived there, hence to have copied this round's result.
 * On an oversubscribed node this halves the context switches per call. */
#define TM_ARED_DIRECT_MAX 4096u /* bytes: above, the parallel slices of the engine win */

static void emit_store(const struct tm_cwork *w, const void *ctx, size_t at, const void *acc,
                       size_t m)
{
    size_t ext = tm_cw_arg(w, w->wrank)->rtype->extent;
    memcpy((unsigned char *)ctx + at * ext, acc, m * ext);
}

static int allreduce_direct(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a)
{
    size_t bytes = a->count * a->rtype->extent;
    if (bytes > TM_ARED_DIRECT_MAX) return 1;
    struct tm_comm *c = cr->c;
    struct tm_coll *co = &c->coll;
    int n = c->size;
    co->slot[cr->rank].args = a;
    tm_coll_stamp(cr, a->sig);
    uint64_t k;
    if (tm_coll_arrive(cr, &k)) {
        /* a member's earlier call failed its checks: its next call may have met this one */
        if (TM_UNLIKELY(!tm_coll_in_step(cr, a->sig))) return tm_coll_out_of_step(me, cr);
        int err = 0;
        if (co->res_cap < bytes) {
            void *nb = realloc(co->res, bytes);
            if (nb) {
                co->res = nb;
                co->res_cap = bytes;
            } else {
                err = -ENOMEM;
            }
        }
        if (!err) {
            struct tm_cwork w = {.me = me, .wrank = cr->rank, .n = n, .slot = co->slot};
            err = combine(&w, 0, a->count, emit_store, co->res, plain_off);
        }
        atomic_store_explicit(&co->res_err, err, memory_order_relaxed);
        atomic_store_explicit(&co->res_gen, k, memory_order_seq_cst);
        tm_coll_wake_members(me, c);
    } else {
        tm_coll_wait_ctr(me, &co->res_gen, k);
    }
    int err = atomic_load_explicit(&co->res_err, memory_order_relaxed);
    /* the round was out of step (tm_coll_out_of_step): its second barrier */
    if (TM_UNLIKELY(err == -EPROTO)) {
        tm_coll_barrier(me, cr);
        return err;
    }
    /* the data blocks only: a non-contiguous type's gaps in rbuf are the program's */
    if (!err && bytes) tm_dt_copy(a->rbuf, a->count, a->rtype, co->res, a->count, a->rtype);
    return err;
}

static const struct tm_calgo reduce_algo = {MPIX_COLL_REDUCE, tm_cw_slices, reduce_part,
                                            tm_hier_reduce, NULL};
static const struct tm_calgo allreduce_algo = {MPIX_COLL_ALLREDUCE, tm_cw_slices, reduce_part,
                                               tm_hier_allreduce, allreduce_direct};

static int reduce_common(const char *fn, const void *sendbuf, void *recvbuf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Op op, int root, int all, MPI_Comm comm,
                         MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    if (TM_UNLIKELY(cr->c->inter))
        return me->job->inter->reduce(me, cr, comm, fn, sendbuf, recvbuf, count, datatype, op, root,
                                      all, nb ? request : NULL);
    const struct tm_type *t;
    TM_COLL_CHECK(tm_coll_check_buf(me, comm, fn, "", recvbuf, 0, datatype, &t));
    if (TM_UNLIKELY(count < 0))
        return tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid count %lld", count);
    struct tm_opref o;
    TM_COLL_CHECK(tm_coll_check_op(me, comm, fn, op, t, &o));
    if (!all) TM_COLL_CHECK(tm_coll_check_root(me, cr, comm, fn, root));
    int is_root = all || root == cr->rank;
    int in_place = sendbuf == MPI_IN_PLACE;
    if (count > 0) {
        if (TM_UNLIKELY(tm_buf_missing(sendbuf, count, t) || (in_place && !is_root)))
            return tm_err(me, comm, MPI_ERR_BUFFER, fn, "invalid send buffer");
        if (TM_UNLIKELY(is_root && (tm_buf_missing(recvbuf, count, t) || recvbuf == MPI_IN_PLACE)))
            return tm_err(me, comm, MPI_ERR_BUFFER, fn, "invalid receive buffer");
        if (TM_UNLIKELY(is_root && sendbuf == recvbuf))
            return tm_err(me, comm, MPI_ERR_BUFFER, fn,
                          "send and receive buffers are the same (use MPI_IN_PLACE)");
    }
    struct tm_cargs a = {
        .sbuf = in_place ? recvbuf : sendbuf,
        .rbuf = is_root ? recvbuf : NULL,
        .rtype = t,
        .in_place = in_place,
        .root = all ? -1 : root,
        .count = (size_t)count,
        .op = o,
        .dth = datatype,
    };
    return tm_coll_start(me, cr, comm, fn, all ? &allreduce_algo : &reduce_algo, &a,
                         nb ? request : NULL);
}

static int reduce_x(const char *tm_fn, const void *sendbuf, void *recvbuf, MPI_Count count,
                    MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    return reduce_common(tm_fn, sendbuf, recvbuf, count, datatype, op, root, 0, comm, NULL, 0);
}
TM_API int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm)
{
    return reduce_x("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm);
}
TM_ALIAS(Reduce)

TM_API int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Op op, int root, MPI_Comm comm)
{
    return reduce_x("MPI_Reduce_c", sendbuf, recvbuf, count, datatype, op, root, comm);
}
TM_ALIAS(Reduce_c)

static int allreduce_x(const char *tm_fn, const void *sendbuf, void *recvbuf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_common(tm_fn, sendbuf, recvbuf, count, datatype, op, -1, 1, comm, NULL, 0);
}
TM_API int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm)
{
    return allreduce_x("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm);
}
TM_ALIAS(Allreduce)

TM_API int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return allreduce_x("MPI_Allreduce_c", sendbuf, recvbuf, count, datatype, op, comm);
}
TM_ALIAS(Allreduce_c)

static int ireduce_x(const char *tm_fn, const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                     MPI_Request *request)
{
    return reduce_common(tm_fn, sendbuf, recvbuf, count, datatype, op, root, 0, comm, request, 1);
}
TM_API int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    return ireduce_x("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
TM_ALIAS(Ireduce)

TM_API int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                          MPI_Request *request)
{
    return ireduce_x("MPI_Ireduce_c", sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
TM_ALIAS(Ireduce_c)

static int iallreduce_x(const char *tm_fn, const void *sendbuf, void *recvbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_common(tm_fn, sendbuf, recvbuf, count, datatype, op, -1, 1, comm, request, 1);
}
TM_API int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return iallreduce_x("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm, request);
}
TM_ALIAS(Iallreduce)

TM_API int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return iallreduce_x("MPI_Iallreduce_c", sendbuf, recvbuf, count, datatype, op, comm, request);
}
TM_ALIAS(Iallreduce_c)

/* ---- Reduce_scatter(_block): part i is member i's block ---- */

static size_t rs_block_len(const struct tm_cargs *a, int i)
{
    return a->rcounts ? (size_t)a->rcounts[i] : (size_t)a->rcount;
}

struct rs_ctx {
    size_t base; /* first element of the block in every input */
    void *out;   /* the block's owner's output */
};

static void emit_block(const struct tm_cwork *w, const void *ctx, size_t at, const void *acc,
                       size_t m)
{
    const struct rs_ctx *x = ctx;
    const struct tm_type *t = tm_cw_arg(w, w->wrank)->rtype;
    tm_dt_copy(tm_dt_at(x->out, at, t), m, t, acc, m, t);
}

static size_t block_off(const struct tm_cargs *a, const void *ctx, size_t e)
{
    (void)a;
    return ((const struct rs_ctx *)ctx)->base + e;
}

static int rs_part(const struct tm_cwork *w, size_t i)
{
    const struct tm_cargs *owner = tm_cw_arg(w, (int)i);
    size_t len = rs_block_len(owner, (int)i);
    struct rs_ctx x = {owner->roff, owner->rbuf};
    return combine(w, 0, len, emit_block, &x, block_off);
}

static size_t per_member(const struct tm_cwork *w)
{
    return (size_t)w->n;
}

static const struct tm_calgo rs_algo = {MPIX_COLL_REDUCE_SCATTER, per_member, rs_part,
                                        tm_hier_reduce_scatter, NULL};
static const struct tm_calgo rsb_algo = {MPIX_COLL_REDUCE_SCATTER_BLOCK, per_member, rs_part,
                                         tm_hier_reduce_scatter, NULL};

/* block: the _block form, recvcount elements each; else recvcounts[]. */
static int rs_body(struct tm_rank *me, struct tm_commref *cr, const char *fn, int block,
                   const void *sendbuf, void *recvbuf, const MPI_Count *recvcounts,
                   MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request *request, void *wide)
{
    int n = cr->c->size, r;
#define FAIL_IF(expr)                                                                              \
    if (TM_UNLIKELY((r = (expr)) != MPI_SUCCESS)) goto fail;
    const struct tm_type *t;
    FAIL_IF(tm_coll_check_buf(me, comm, fn, "", recvbuf, 0, datatype, &t));
    size_t total = 0, roff = 0;
    if (!block) {
        if (TM_UNLIKELY(!recvcounts))
            FAIL_IF(tm_err(me, comm, MPI_ERR_ARG, fn, "recvcounts is NULL"));
        for (int k = 0; k < n; k++) {
            if (TM_UNLIKELY(recvcounts[k] < 0))
                FAIL_IF(tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid count %lld for rank %d",
                               (long long)recvcounts[k], k));
            if (k == cr->rank) roff = total;
            total += (size_t)recvcounts[k];
        }
        recvcount = recvcounts[cr->rank];
    } else {
        if (TM_UNLIKELY(recvcount < 0))
            FAIL_IF(
                tm_err(me, comm, MPI_ERR_COUNT, fn, "invalid count %lld", (long long)recvcount));
        total = (size_t)recvcount * (size_t)n;
        roff = (size_t)recvcount * (size_t)cr->rank;
    }
    struct tm_opref o;
    FAIL_IF(tm_coll_check_op(me, comm, fn, op, t, &o));
    int in_place = sendbuf == MPI_IN_PLACE;
    if (TM_UNLIKELY(total && (tm_buf_missing(sendbuf, (long long)total, t) ||
                              tm_buf_missing(recvbuf, in_place ? (long long)total : recvcount, t))))
        FAIL_IF(tm_err(me, comm, MPI_ERR_BUFFER, fn, "invalid buffer"));
    if (TM_UNLIKELY(total && sendbuf == recvbuf))
        FAIL_IF(tm_err(me, comm, MPI_ERR_BUFFER, fn,
                       "send and receive buffers are the same (use MPI_IN_PLACE)"));
    struct tm_cargs a = {
        .sbuf = sendbuf,
        .rbuf = recvbuf,
        .rcount = recvcount,
        .rcounts = recvcounts,
        .rtype = t,
        .in_place = in_place,
        .root = -1,
        .count = total,
        .roff = roff,
        .op = o,
        .dth = datatype,
        .wide = wide,
    };
    if (in_place && total) {
        /* Snapshot: other parts read this input while part rank writes the buffer's start. */
        a.own = malloc(tm_dt_span(total, t));
        if (!a.own) {
            r = tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
            goto fail;
        }
        memcpy(a.own, recvbuf, tm_dt_span(total, t));
        a.sbuf = a.own;
    }
#undef FAIL_IF
    return tm_coll_start(me, cr, comm, fn, block ? &rsb_algo : &rs_algo, &a, request);
fail:
    free(wide);
    return r;
}

static int rs_common(const char *fn, int block, const void *sendbuf, void *recvbuf,
                     const int *recvcounts, int recvcount, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    const MPI_Count *wc = NULL;
    const MPI_Aint *wd = NULL;
    const int *nodispl = NULL;
    void *wide = NULL;
    if (!block &&
        TM_UNLIKELY(tm_coll_widen(cr->c->size, 1, &recvcounts, &nodispl, &wc, &wd, &wide) < 0))
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    if (TM_UNLIKELY(cr->c->inter)) {
        /* the local group's counts (NULL stays NULL: refused there) */
        int e = me->job->inter->reduce_scatter(me, cr, comm, fn, block, sendbuf, recvbuf, wc,
                                               recvcount, datatype, op, nb ? request : NULL);
        free(wide);
        return e;
    }
    return rs_body(me, cr, fn, block, sendbuf, recvbuf, wc, recvcount, datatype, op, comm,
                   nb ? request : NULL, wide);
}

int tm_reduce_scatter_block_c(const char *fn, const void *sendbuf, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    if (TM_UNLIKELY(cr->c->inter))
        return me->job->inter->reduce_scatter(me, cr, comm, fn, 1, sendbuf, recvbuf, NULL,
                                              recvcount, datatype, op, nb ? request : NULL);
    return rs_body(me, cr, fn, 1, sendbuf, recvbuf, NULL, recvcount, datatype, op, comm,
                   nb ? request : NULL, NULL);
}

int tm_reduce_scatter_c(const char *fn, const void *sendbuf, void *recvbuf,
                        const MPI_Count *recvcounts, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request *request, int nb)
{
    TM_COLL_ENTRY(fn, comm);
    if (TM_UNLIKELY(nb && !request)) return tm_err(me, comm, MPI_ERR_ARG, fn, "request is NULL");
    if (TM_UNLIKELY(cr->c->inter))
        return me->job->inter->reduce_scatter(me, cr, comm, fn, 0, sendbuf, recvbuf, recvcounts, 0,
                                              datatype, op, nb ? request : NULL);
    return rs_body(me, cr, fn, 0, sendbuf, recvbuf, recvcounts, 0, datatype, op, comm,
                   nb ? request : NULL, NULL);
}

TM_API int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return rs_common("MPI_Reduce_scatter", 0, sendbuf, recvbuf, recvcounts, 0, datatype, op, comm,
                     NULL, 0);
}
TM_ALIAS(Reduce_scatter)

TM_API int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return rs_common("MPI_Reduce_scatter_block", 1, sendbuf, recvbuf, NULL, recvcount, datatype, op,
                     comm, NULL, 0);
}
TM_ALIAS(Reduce_scatter_block)

TM_API int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request)
{
    return rs_common("MPI_Ireduce_scatter", 0, sendbuf, recvbuf, recvcounts, 0, datatype, op, comm,
                     request, 1);
}
TM_ALIAS(Ireduce_scatter)

TM_API int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      MPI_Request *request)
{
    return rs_common("MPI_Ireduce_scatter_block", 1, sendbuf, recvbuf, NULL, recvcount, datatype,
                     op, comm, request, 1);
}
TM_ALIAS(Ireduce_scatter_block)

/* ---- Reduce_local: inoutbuf = inbuf op inoutbuf, no communication ---- */

static int reduce_local_x(const char *tm_fn, const void *inbuf, void *inoutbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op)
{
    const char *fn = tm_fn;
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    const struct tm_type *t;
    TM_COLL_CHECK(tm_coll_check_buf(me, MPI_COMM_WORLD, fn, "", inoutbuf, count, datatype, &t));
    if (TM_UNLIKELY(count > 0 && (tm_buf_missing(inbuf, count, t) || inbuf == MPI_IN_PLACE ||
                                  inoutbuf == MPI_IN_PLACE)))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_BUFFER, fn, "invalid buffer");
    if (TM_UNLIKELY(count > 0 && inbuf == inoutbuf))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_BUFFER, fn, "inbuf and inoutbuf are the same");
    struct tm_opref o;
    TM_COLL_CHECK(tm_coll_check_op(me, MPI_COMM_WORLD, fn, op, t, &o));
    if (count > 0) tm_opref_apply(&o, inbuf, inoutbuf, (size_t)count, t, datatype);
    return MPI_SUCCESS;
}
TM_API int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                             MPI_Op op)
{
    return reduce_local_x("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}
TM_ALIAS(Reduce_local)

TM_API int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count,
                               MPI_Datatype datatype, MPI_Op op)
{
    return reduce_local_x("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op);
}
TM_ALIAS(Reduce_local_c)
