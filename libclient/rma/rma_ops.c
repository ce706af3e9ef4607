/* rma_ops.c — the communication calls (MPI 3.1 §11.3): Put, Get, Accumulate, Get_accumulate,
 * Fetch_and_op, Compare_and_swap and their request forms.  A target on this node is plain
 * memory: copies and atomic element updates straight into it, complete on return.  A target
 * on another node gets a TM_MSG_RMA frame (rma_net.c).
 *
 * Any datatypes on both sides (§11.3: the signatures match): on this node a Put or Get is one
 * pass from the source layout to the destination layout (tm_type_copy), an accumulate walks
 * the target type's blocks with the origin packed beside them; to another node the origin is
 * packed into the frames and a non-contiguous target type travels as the list of its pieces
 * in the target window. */
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "request.h"
#include "rma.h"
#include "type.h"
#include "type_copy.h"
#include "type_flat.h"

/* One operation, checked. */
struct op {
    struct tm_rank *me;
    struct tm_winref *wr;
    int t; /* target rank in the window */
    MPI_Aint disp;
    size_t off;   /* byte offset of disp in the target's window (dynamic: the address) */
    size_t bytes; /* packed bytes of the target's data */
    const struct tm_type *tt;
    size_t tcount;
    enum tm_basic basic;
    enum tm_opkind op;
    int on_node; /* the target is on this node: local is its memory at disp */
    char *local;
};

/* A side of an operation (origin, result or target): count elements of dt. */
static int check_side(struct op *o, const char *fn, const char *what, MPI_Count count,
                      MPI_Datatype dt, const void *buf, int need_buf, const struct tm_type **ret)
{
    if (count < 0)
        return tm_win_err(o->me, o->wr, MPI_ERR_COUNT, fn, "invalid %s count %lld", what, count);
    const struct tm_type *t = tm_type_get(dt);
    if (!t) return tm_win_err(o->me, o->wr, MPI_ERR_TYPE, fn, "invalid %s datatype %d", what, dt);
    if (need_buf && tm_buf_missing(buf, count, t))
        return tm_win_err(o->me, o->wr, MPI_ERR_BUFFER, fn, "%s buffer is NULL", what);
    *ret = t;
    return MPI_SUCCESS;
}

/* Both sides must carry the same basic elements, as many of them (the type signatures
 * match: MPI 3.1 §11.3). */
static int check_match(struct op *o, const char *fn, const char *what, const struct tm_type *a,
                       MPI_Count ac, const struct tm_type *b, MPI_Count bc)
{
    /* no bytes on either side: both signatures are empty, whatever the types */
    if ((size_t)ac * a->size == 0 && (size_t)bc * b->size == 0) return MPI_SUCCESS;
    if (a->basic != b->basic || (size_t)ac * a->size != (size_t)bc * b->size)
        return tm_win_err(o->me, o->wr, MPI_ERR_TYPE, fn,
                          "%s: %lld x %s does not match the target's %lld x %s", what, ac, a->name,
                          bc, b->name);
    return MPI_SUCCESS;
}

/* Checks window, target, epoch, range; *ret_null: target is MPI_PROC_NULL (nothing to do). */
static int check_target(struct op *o, const char *fn, MPI_Win win, int rank, MPI_Aint disp,
                        MPI_Count count, MPI_Datatype dt, int passive_only, int *ret_null)
{
    int err;
    o->me = tm_self();
    o->wr = tm_win_enter(win, fn, &err);
    if (!o->wr) return err;
    *ret_null = 0;
    struct tm_win *w = o->wr->w;
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return tm_win_err(o->me, o->wr, MPI_ERR_RANK, fn, "invalid target rank %d", rank);
    const struct tm_type *t;
    if ((err = check_side(o, fn, "target", count, dt, NULL, 0, &t))) return err;
    /* MPI_PROC_NULL: the arguments are still checked (the callers read o->tt), nothing moves
     * and no epoch is needed (MPI 4.1 §12.3) */
    o->tt = t;
    o->basic = t->basic;
    if (rank == MPI_PROC_NULL) {
        *ret_null = 1;
        return MPI_SUCCESS;
    }
    if (disp < 0)
        return tm_win_err(o->me, o->wr, MPI_ERR_DISP, fn, "negative target displacement %td", disp);
    if (passive_only ? !tm_win_passive(o->wr, rank) : !tm_win_epoch_ok(o->wr, rank))
        return tm_win_err(o->me, o->wr, MPI_ERR_RMA_SYNC, fn,
                          passive_only ? "no passive-target epoch on rank %d"
                                       : "no access epoch on rank %d",
                          rank);
    o->t = rank;
    o->disp = disp;
    o->tcount = (size_t)count;
    o->bytes = (size_t)count * t->psize;
    o->local = NULL;
    /* The bytes the target's elements touch, [lo, hi) from the displacement's address. */
    ptrdiff_t lo = 0, hi = 0;
    if (count > 0 && t->psize) tm_type_range(t, (size_t)count, &lo, &hi);
    const struct tm_win_member *m = &w->m[rank];
    const int dynamic = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    int bad = 0;
    if (dynamic)
        o->off = (size_t)disp;
    else
        bad = __builtin_mul_overflow((size_t)disp, (size_t)m->disp_unit, &o->off);
    o->on_node = m->node == w->m[o->wr->rank].node;
    if (!bad && hi > lo) {
        bad = lo < 0 && o->off < (size_t)-lo;
        if (!bad && o->on_node) {
            char *a = tm_win_at(w, rank, o->off + (size_t)lo, (size_t)(hi - lo));
            bad = !a;
            if (a) o->local = a - lo;
        } else if (!bad && !dynamic) {
            bad = o->off + (size_t)lo > m->size || (size_t)(hi - lo) > m->size - (o->off + lo);
        }
    }
    if (bad)
        return tm_win_err(o->me, o->wr, MPI_ERR_RMA_RANGE, fn,
                          "%lld x %s at displacement %td is outside rank %d's window", count,
                          t->name, disp, rank);
    o->wr->fence_ops++;
    return MPI_SUCCESS;
}

static int check_op(struct op *o, const char *fn, MPI_Op op, int replace_ok)
{
    int k = tm_op_kind(op);
    if (k < 0 || (!replace_ok && (k == TM_OP_REPLACE || k == TM_OP_NO_OP)))
        return tm_win_err(o->me, o->wr, MPI_ERR_OP, fn, "invalid operation %d for RMA", op);
    if (!tm_op_defined((enum tm_opkind)k, o->basic))
        return tm_win_err(o->me, o->wr, MPI_ERR_OP, fn, "operation %d is not defined on the type",
                          op);
    o->op = (enum tm_opkind)k;
    return MPI_SUCCESS;
}

static int remote_failed(struct op *o, const char *fn, int err)
{
    return tm_win_err(o->me, o->wr, err, fn, "operation on rank %d (another node) failed", o->t);
}

/* A request for an operation that is already complete. */
static int done_request(struct op *o, const char *fn, MPI_Request *request)
{
    struct tm_request *r = tm_req_alloc(o->me, TM_REQ_COLL);
    if (!r) return tm_win_err(o->me, o->wr, MPI_ERR_NO_MEM, fn, "out of memory");
    tm_req_set_done_own(r, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_SUCCESS);
    *request = r;
    return MPI_SUCCESS;
}

static int new_request(struct op *o, const char *fn, MPI_Request *request, struct tm_request **ret)
{
    if (!request) return tm_win_err(o->me, o->wr, MPI_ERR_ARG, fn, "request is NULL");
    *ret = tm_req_alloc(o->me, TM_REQ_COLL);
    if (!*ret) return tm_win_err(o->me, o->wr, MPI_ERR_NO_MEM, fn, "out of memory");
    (*ret)->st_source = MPI_ANY_SOURCE;
    (*ret)->st_tag = MPI_ANY_TAG;
    return MPI_SUCCESS;
}

static int do_put(const char *fn, const void *oaddr, MPI_Count ocount, MPI_Datatype otype,
                  int trank, MPI_Aint tdisp, MPI_Count tcount, MPI_Datatype ttype, MPI_Win win,
                  MPI_Request *request)
{
    struct op o;
    int null, err = check_target(&o, fn, win, trank, tdisp, tcount, ttype, request != NULL, &null);
    if (err) return err;
    const struct tm_type *ot, *tt = o.tt;
    if ((err = check_side(&o, fn, "origin", ocount, otype, oaddr, 1, &ot))) return err;
    if (null) return request ? done_request(&o, fn, request) : MPI_SUCCESS;
    if ((err = check_match(&o, fn, "origin", ot, ocount, tt, tcount))) return err;
    if (o.on_node) {
        /* a count of 0 has no memory behind it (local may be NULL) */
        if (o.bytes && ot->contig && tt->contig)
            memcpy(o.local, oaddr, o.bytes);
        else if (o.bytes)
            tm_type_copy(o.local, o.tcount, tt, oaddr, (size_t)ocount, ot);
        return request ? done_request(&o, fn, request) : MPI_SUCCESS;
    }
    struct tm_request *r = NULL;
    if (request && (err = new_request(&o, fn, request, &r))) return err;
    int taken = 0;
    if (ot->contig && tt->contig &&
        (err = tm_rma_direct(o.me, o.wr, 1, o.t, o.off, (void *)oaddr, o.bytes, r, &taken)))
        return remote_failed(&o, fn, err);
    if (taken) {
        if (request) *request = r;
        return MPI_SUCCESS;
    }
    const struct tm_rma_typed d = {(void *)oaddr, (size_t)ocount, ot};
    err = tm_rma_remote_op(o.me, o.wr, TM_RMA_PUT, o.t, o.off, o.tcount, tt, &d, NULL,
                           TM_OP_REPLACE, o.basic, r);
    if (err) return remote_failed(&o, fn, err);
    if (request) *request = r;
    return MPI_SUCCESS;
}

static int do_get(const char *fn, void *oaddr, MPI_Count ocount, MPI_Datatype otype, int trank,
                  MPI_Aint tdisp, MPI_Count tcount, MPI_Datatype ttype, MPI_Win win,
                  MPI_Request *request)
{
    struct op o;
    int null, err = check_target(&o, fn, win, trank, tdisp, tcount, ttype, request != NULL, &null);
    if (err) return err;
    const struct tm_type *ot, *tt = o.tt;
    if ((err = check_side(&o, fn, "origin", ocount, otype, oaddr, 1, &ot))) return err;
    if (null) return request ? done_request(&o, fn, request) : MPI_SUCCESS;
    if ((err = check_match(&o, fn, "origin", ot, ocount, tt, tcount))) return err;
    if (o.on_node) {
        /* a count of 0 has no memory behind it (local may be NULL) */
        if (o.bytes && ot->contig && tt->contig)
            memcpy(oaddr, o.local, o.bytes);
        else if (o.bytes)
            tm_type_copy(oaddr, (size_t)ocount, ot, o.local, o.tcount, tt);
        return request ? done_request(&o, fn, request) : MPI_SUCCESS;
    }
    struct tm_request *r = NULL;
    if (request && (err = new_request(&o, fn, request, &r))) return err;
    int taken = 0;
    if (ot->contig && tt->contig &&
        (err = tm_rma_direct(o.me, o.wr, 0, o.t, o.off, oaddr, o.bytes, r, &taken)))
        return remote_failed(&o, fn, err);
    if (taken) {
        if (request) *request = r;
        return MPI_SUCCESS;
    }
    const struct tm_rma_typed res = {oaddr, (size_t)ocount, ot};
    err = tm_rma_remote_op(o.me, o.wr, TM_RMA_GET, o.t, o.off, o.tcount, tt, NULL, &res,
                           TM_OP_NO_OP, o.basic, r);
    if (err) return remote_failed(&o, fn, err);
    if (request) *request = r;
    return MPI_SUCCESS;
}

/* An accumulate on this node: in (packed origin elements, NULL for MPI_NO_OP) applied to the
 * target's blocks one after the other, the old values packed into fetch (may be NULL).  The
 * types are made of o->basic alone: every block holds whole elements, or pieces of whole pairs
 * (tm_rma_acc_walk). */
static void local_acc_blocks(struct op *o, const char *in, char *fetch)
{
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(o->tt, &one, &nb);
    struct tm_rma_acc_walk k;
    tm_rma_acc_walk_init(&k, o->wr->w, o->op, o->basic, in, fetch);
    for (size_t e = 0; e < o->tcount; e++)
        for (size_t i = 0; i < nb; i++) {
            const struct tm_block bk = tm_type_block(o->tt, b, i);
            tm_rma_acc_walk_piece(&k, o->local + (ptrdiff_t)(e * o->tt->extent) + bk.off, bk.len);
        }
    (void)tm_rma_acc_walk_end(&k); /* the op is defined on the type (check_op) */
}

/* Accumulate and Get_accumulate (result NULL: no fetch).  single: Fetch_and_op, whose
 * datatype must be predefined (MPI 3.1 §11.3.4). */
static int do_acc(const char *fn, const void *oaddr, MPI_Count ocount, MPI_Datatype otype,
                  void *raddr, MPI_Count rcount, MPI_Datatype rtype, int trank, MPI_Aint tdisp,
                  MPI_Count tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win, int fetching,
                  int single, MPI_Request *request)
{
    struct op o;
    int null, err = check_target(&o, fn, win, trank, tdisp, tcount, ttype, request != NULL, &null);
    if (err) return err;
    const struct tm_type *ot = NULL, *rt = NULL, *tt = o.tt;
    int k = tm_op_kind(op);
    const int no_op = k == TM_OP_NO_OP;
    if (single && tt->derived)
        return tm_win_err(o.me, o.wr, MPI_ERR_TYPE, fn, "%s is not a predefined datatype",
                          tt->name);
    /* MPI_NO_OP ignores the origin arguments (MPI 4.1 §12.3.4): MPI_DATATYPE_NULL among them */
    if (!no_op && (err = check_side(&o, fn, "origin", ocount, otype, oaddr, 1, &ot))) return err;
    if (fetching && (err = check_side(&o, fn, "result", rcount, rtype, raddr, 1, &rt))) return err;
    if (null) return request ? done_request(&o, fn, request) : MPI_SUCCESS;
    /* Accumulate combines elements of one predefined type (§11.3.4): a type mixing several
     * has no element an operation could apply to. */
    if (o.basic >= TM_T__COUNT || (!no_op && ot->basic >= TM_T__COUNT))
        return tm_win_err(o.me, o.wr, MPI_ERR_TYPE, fn,
                          "the datatypes of an accumulate must be made of one predefined type");
    if ((err = check_op(&o, fn, op, 1))) return err;
    if (!fetching && no_op)
        return tm_win_err(o.me, o.wr, MPI_ERR_OP, fn, "MPI_NO_OP is for fetching calls only");
    if (!no_op && (err = check_match(&o, fn, "origin", ot, ocount, tt, tcount))) return err;
    if (fetching && (err = check_match(&o, fn, "result", rt, rcount, tt, tcount))) return err;
    if (tm_rma_acc_net_on(o.wr->w, o.basic) && o.bytes) {
        /* the window's accumulates of this type go as the transport's atomics, from this
         * node too (rma_acc_net.c) */
        struct tm_request *r = NULL;
        if (request && (err = new_request(&o, fn, request, &r))) return err;
        err = tm_rma_acc_net(o.me, o.wr, o.t, o.off, tt, o.tcount, o.op, o.basic,
                             no_op ? NULL : oaddr, (size_t)ocount, ot, fetching ? raddr : NULL,
                             (size_t)rcount, rt, NULL, o.bytes, r);
        if (err) return remote_failed(&o, fn, err);
        if (request) *request = r;
        return MPI_SUCCESS;
    }
    if (o.on_node) {
        if (!o.bytes) return request ? done_request(&o, fn, request) : MPI_SUCCESS;
        const int ocontig = no_op || ot->contig, rcontig = !fetching || rt->contig;
        if (ocontig && rcontig && tt->contig) {
            tm_rma_acc_apply(o.wr->w, o.op, o.basic, no_op ? NULL : oaddr, o.local,
                             o.bytes / tm_basic_psize(o.basic), fetching ? raddr : NULL);
            return request ? done_request(&o, fn, request) : MPI_SUCCESS;
        }
        char *in = ocontig ? (char *)oaddr : malloc(o.bytes);
        char *fetch = rcontig ? raddr : malloc(o.bytes);
        if ((!ocontig && !in) || (!rcontig && !fetch)) {
            if (!ocontig) free(in);
            if (!rcontig) free(fetch);
            return tm_win_err(o.me, o.wr, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        if (!ocontig) tm_type_pack(in, oaddr, (size_t)ocount, ot, 0, o.bytes);
        if (tt->contig)
            tm_rma_acc_apply(o.wr->w, o.op, o.basic, no_op ? NULL : in, o.local,
                             o.bytes / tm_basic_psize(o.basic), fetching ? fetch : NULL);
        else
            local_acc_blocks(&o, no_op ? NULL : in, fetching ? fetch : NULL);
        if (!rcontig) {
            tm_type_unpack(raddr, (size_t)rcount, rt, 0, fetch, o.bytes);
            free(fetch);
        }
        if (!ocontig) free(in);
        return request ? done_request(&o, fn, request) : MPI_SUCCESS;
    }
    struct tm_request *r = NULL;
    if (request && (err = new_request(&o, fn, request, &r))) return err;
    const struct tm_rma_typed d = {(void *)oaddr, (size_t)ocount, ot},
                              res = {raddr, (size_t)rcount, rt};
    err = tm_rma_remote_op(o.me, o.wr, fetching ? TM_RMA_GACC : TM_RMA_ACC, o.t, o.off, o.tcount,
                           tt, no_op ? NULL : &d, fetching ? &res : NULL, o.op, o.basic, r);
    if (err) return remote_failed(&o, fn, err);
    if (request) *request = r;
    return MPI_SUCCESS;
}

static int put_x(const char *tm_fn, const void *origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                 MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return do_put(tm_fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, NULL);
}
TM_API int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win)
{
    return put_x("MPI_Put", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win);
}
TM_ALIAS(Put)

TM_API int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Win win)
{
    return put_x("MPI_Put_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win);
}
TM_ALIAS(Put_c)

static int rput_x(const char *tm_fn, const void *origin_addr, MPI_Count origin_count,
                  MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                  MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                  MPI_Request *request)
{
    const char *fn = tm_fn;
    if (!request) return tm_err_noco(MPI_ERR_ARG, fn, "request is NULL");
    return do_put(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, request);
}
TM_API int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return rput_x("MPI_Rput", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, request);
}
TM_ALIAS(Rput)

TM_API int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                       MPI_Request *request)
{
    return rput_x("MPI_Rput_c", origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, win, request);
}
TM_ALIAS(Rput_c)

static int get_x(const char *tm_fn, void *origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                 MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return do_get(tm_fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, NULL);
}
TM_API int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win)
{
    return get_x("MPI_Get", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win);
}
TM_ALIAS(Get)

TM_API int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Win win)
{
    return get_x("MPI_Get_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win);
}
TM_ALIAS(Get_c)

static int rget_x(const char *tm_fn, void *origin_addr, MPI_Count origin_count,
                  MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                  MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                  MPI_Request *request)
{
    const char *fn = tm_fn;
    if (!request) return tm_err_noco(MPI_ERR_ARG, fn, "request is NULL");
    return do_get(fn, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, request);
}
TM_API int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return rget_x("MPI_Rget", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win, request);
}
TM_ALIAS(Rget)

TM_API int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                       int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                       MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return rget_x("MPI_Rget_c", origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, win, request);
}
TM_ALIAS(Rget_c)

static int acc_x(const char *tm_fn, const void *origin_addr, MPI_Count origin_count,
                 MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                 MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return do_acc(tm_fn, origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                  target_rank, target_disp, target_count, target_datatype, op, win, 0, 0, NULL);
}
TM_API int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                           int target_rank, MPI_Aint target_disp, int target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return acc_x("MPI_Accumulate", origin_addr, origin_count, origin_datatype, target_rank,
                 target_disp, target_count, target_datatype, op, win);
}
TM_ALIAS(Accumulate)

TM_API int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count,
                             MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                             MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                             MPI_Win win)
{
    return acc_x("MPI_Accumulate_c", origin_addr, origin_count, origin_datatype, target_rank,
                 target_disp, target_count, target_datatype, op, win);
}
TM_ALIAS(Accumulate_c)

static int racc_x(const char *tm_fn, const void *origin_addr, MPI_Count origin_count,
                  MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                  MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                  MPI_Request *request)
{
    const char *fn = tm_fn;
    if (!request) return tm_err_noco(MPI_ERR_ARG, fn, "request is NULL");
    return do_acc(fn, origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                  target_rank, target_disp, target_count, target_datatype, op, win, 0, 0, request);
}
TM_API int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                            int target_rank, MPI_Aint target_disp, int target_count,
                            MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                            MPI_Request *request)
{
    return racc_x("MPI_Raccumulate", origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, op, win, request);
}
TM_ALIAS(Raccumulate)

TM_API int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                              MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                              MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                              MPI_Win win, MPI_Request *request)
{
    return racc_x("MPI_Raccumulate_c", origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, op, win, request);
}
TM_ALIAS(Raccumulate_c)

static int getacc_x(const char *tm_fn, const void *origin_addr, MPI_Count origin_count,
                    MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                    MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                    MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return do_acc(tm_fn, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
                  1, 0, NULL);
}
TM_API int PMPI_Get_accumulate(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, void *result_addr, int result_count,
                               MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                               int target_count, MPI_Datatype target_datatype, MPI_Op op,
                               MPI_Win win)
{
    return getacc_x("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype, result_addr,
                    result_count, result_datatype, target_rank, target_disp, target_count,
                    target_datatype, op, win);
}
TM_ALIAS(Get_accumulate)

TM_API int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                                 MPI_Datatype origin_datatype, void *result_addr,
                                 MPI_Count result_count, MPI_Datatype result_datatype,
                                 int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return getacc_x("MPI_Get_accumulate_c", origin_addr, origin_count, origin_datatype, result_addr,
                    result_count, result_datatype, target_rank, target_disp, target_count,
                    target_datatype, op, win);
}
TM_ALIAS(Get_accumulate_c)

static int rgetacc_x(const char *tm_fn, const void *origin_addr, MPI_Count origin_count,
                     MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                     MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                     MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request *request)
{
    const char *fn = tm_fn;
    if (!request) return tm_err_noco(MPI_ERR_ARG, fn, "request is NULL");
    return do_acc(fn, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                  result_datatype, target_rank, target_disp, target_count, target_datatype, op, win,
                  1, 0, request);
}
TM_API int PMPI_Rget_accumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, void *result_addr, int result_count,
                                MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                                int target_count, MPI_Datatype target_datatype, MPI_Op op,
                                MPI_Win win, MPI_Request *request)
{
    return rgetacc_x("MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype, result_addr,
                     result_count, result_datatype, target_rank, target_disp, target_count,
                     target_datatype, op, win, request);
}
TM_ALIAS(Rget_accumulate)

TM_API int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                                  MPI_Datatype origin_datatype, void *result_addr,
                                  MPI_Count result_count, MPI_Datatype result_datatype,
                                  int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                                  MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                  MPI_Request *request)
{
    return rgetacc_x("MPI_Rget_accumulate_c", origin_addr, origin_count, origin_datatype,
                     result_addr, result_count, result_datatype, target_rank, target_disp,
                     target_count, target_datatype, op, win, request);
}
TM_ALIAS(Rget_accumulate_c)

TM_API int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                             int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return do_acc("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype,
                  target_rank, target_disp, 1, datatype, op, win, 1, 1, NULL);
}
TM_ALIAS(Fetch_and_op)

/* Compare_and_swap takes integer, logical and byte types only (MPI 3.1 §11.3.4). */
static int cas_type_ok(enum tm_basic b)
{
    switch (b) {
    case TM_T_FLOAT:
    case TM_T_DOUBLE:
    case TM_T_LONG_DOUBLE:
    case TM_T_FLOAT_INT:
    case TM_T_DOUBLE_INT:
    case TM_T_LONG_INT:
    case TM_T_2INT:
    case TM_T_SHORT_INT:
    case TM_T_LONG_DOUBLE_INT:
    case TM_T_2FLOAT:
    case TM_T_2DOUBLE:
    case TM_T_PACKED:
        return 0;
    default:
        return 1;
    }
}

TM_API int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
                                 void *result_addr, MPI_Datatype datatype, int target_rank,
                                 MPI_Aint target_disp, MPI_Win win)
{
    static const char fn[] = "MPI_Compare_and_swap";
    struct op o;
    int null, err = check_target(&o, fn, win, target_rank, target_disp, 1, datatype, 0, &null);
    if (err) return err;
    if (null) return MPI_SUCCESS;
    const struct tm_type *t = tm_type_get(datatype);
    if (t->derived || !cas_type_ok(t->basic))
        return tm_win_err(o.me, o.wr, MPI_ERR_TYPE, fn,
                          "%s is not a predefined integer, logical or byte type", t->name);
    if (!origin_addr || !compare_addr || !result_addr)
        return tm_win_err(o.me, o.wr, MPI_ERR_BUFFER, fn, "a buffer is NULL");
    if (tm_rma_acc_net_on(o.wr->w, o.basic)) {
        err = tm_rma_acc_net(o.me, o.wr, o.t, o.off, t, 1, TM_OP_REPLACE, o.basic, origin_addr, 1,
                             t, result_addr, 1, t, compare_addr, o.bytes, NULL);
        if (err) return remote_failed(&o, fn, err);
        return MPI_SUCCESS;
    }
    if (o.on_node) {
        tm_rma_cas_apply(o.wr->w, o.basic, origin_addr, compare_addr, o.local, result_addr);
        return MPI_SUCCESS;
    }
    /* The frame carries the new value, then the compare value. */
    char two[2 * sizeof(uint64_t)];
    memcpy(two, origin_addr, o.bytes);
    memcpy(two + o.bytes, compare_addr, o.bytes);
    err = tm_rma_remote_cas(o.me, o.wr, o.t, o.off, two, o.bytes, result_addr, o.basic);
    if (err) return remote_failed(&o, fn, err);
    return MPI_SUCCESS;
}
TM_ALIAS(Compare_and_swap)
