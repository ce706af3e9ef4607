/* inter_nbops.c — the steps of the non-blocking collectives on inter-communicators
 * (inter_nbops.h), as schedules of inter_nb.h. */
#include "inter_nbops.h"

#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "inter_buf.h"
#include "inter_nb.h"
#include "type.h"
#include "userop.h"

/* One operation's state: its arguments and what it allocated. */
struct nbop {
    enum tm_inb_kind kind;
    struct tm_inb_args a;
    void *raw1, *raw2, *mine, *theirs; /* reductions: the group's and the other group's result */
    MPI_Count *counts;                 /* Reduce_scatter: the local group's blocks */
    MPI_Aint *displs;
    MPI_Count total;
    void *arrays; /* the copies of the arguments' counts and displacements (copy_arrays) */
    /* Handles of our own for the program's datatypes and op (handle_hold): predefined ones or
     * ones made here, dropped with the operation. */
    struct tm_rank *me;
    MPI_Datatype stype, rtype, *stypes, *rtypes;
    int ntypes;
    MPI_Op op;
};

/* Step helpers: W the member's place, A the arguments, K the step number. */
#define STEP_VARS()                                                                                \
    const struct tm_is_where *W = tm_isched_where(s);                                              \
    struct nbop *o = tm_isched_op(s);                                                              \
    const struct tm_inb_args *A = &o->a;                                                           \
    int *K = tm_isched_stepno(s);                                                                  \
    MPI_Request q = MPI_REQUEST_NULL;                                                              \
    (void)A, (void)q;

/* Issues a local collective (call, ending in &q) in its reserved turn, else waits for it. */
#define LOCAL(call)                                                                                \
    do {                                                                                           \
        if (!tm_isched_lturn(s)) return TM_IS_WAIT_L;                                              \
        (*K)++;                                                                                    \
        tm_isched_lbegin(s);                                                                       \
        int e_ = (call);                                                                           \
        tm_isched_add(s, e_, q);                                                                   \
        tm_isched_lnext(s);                                                                        \
        return TM_IS_MORE;                                                                         \
    } while (0)

static void isend(struct tm_isched *s, const void *buf, MPI_Count count, MPI_Datatype dt, int dest)
{
    const struct tm_is_where *W = tm_isched_where(s);
    MPI_Request q = MPI_REQUEST_NULL;
    int e = PMPI_Isend_c(buf, count, dt, dest, W->tag, W->I, &q);
    tm_isched_add(s, e, q);
}

static void irecv(struct tm_isched *s, void *buf, MPI_Count count, MPI_Datatype dt, int src)
{
    const struct tm_is_where *W = tm_isched_where(s);
    MPI_Request q = MPI_REQUEST_NULL;
    int e = PMPI_Irecv_c(buf, count, dt, src, W->tag, W->I, &q);
    tm_isched_add(s, e, q);
}

static enum tm_is_state barrier_step(struct tm_isched *s)
{
    STEP_VARS();
    switch (*K) {
    case 0:
    case 2:
        LOCAL(PMPI_Ibarrier(W->L, &q));
    case 1:
        (*K)++;
        if (W->r == 0) { /* the whole group entered: tell the other side, hear from it */
            isend(s, NULL, 0, MPI_BYTE, 0);
            irecv(s, NULL, 0, MPI_BYTE, 0);
        }
        return TM_IS_MORE;
    }
    return TM_IS_DONE;
}

static enum tm_is_state bcast_step(struct tm_isched *s)
{
    STEP_VARS();
    switch (*K) {
    case 0:
        (*K)++;
        if (A->root == MPI_ROOT)
            isend(s, A->rbuf, A->count, A->rtype, 0);
        else if (W->r == 0)
            irecv(s, A->rbuf, A->count, A->rtype, A->root);
        return TM_IS_MORE;
    case 1:
        if (A->root == MPI_ROOT) break;
        LOCAL(PMPI_Ibcast_c(A->rbuf, A->count, A->rtype, 0, W->L, &q));
    }
    return TM_IS_DONE;
}

static enum tm_is_state reduce_step(struct tm_isched *s)
{
    STEP_VARS();
    if (!A->all && A->root == MPI_ROOT) {
        if ((*K)++ > 0) return TM_IS_DONE;
        irecv(s, A->rbuf, A->count, A->rtype, 0);
        return TM_IS_MORE;
    }
    switch (*K) {
    case 0: /* this group's reduction at its first member */
        LOCAL(PMPI_Ireduce_c(A->sbuf, o->mine, A->count, A->rtype, A->op, 0, W->L, &q));
    case 1:
        (*K)++;
        if (W->r == 0 && A->all) {
            isend(s, o->mine, A->count, A->rtype, 0);
            irecv(s, A->rbuf, A->count, A->rtype, 0);
        } else if (W->r == 0) {
            isend(s, o->mine, A->count, A->rtype, A->root);
        }
        return TM_IS_MORE;
    case 2: /* Allreduce: each group gets the other group's result */
        if (!A->all) break;
        LOCAL(PMPI_Ibcast_c(A->rbuf, A->count, A->rtype, 0, W->L, &q));
    }
    return TM_IS_DONE;
}

static enum tm_is_state rscatter_step(struct tm_isched *s)
{
    STEP_VARS();
    switch (*K) {
    case 0:
        LOCAL(PMPI_Ireduce_c(A->sbuf, o->mine, o->total, A->rtype, A->op, 0, W->L, &q));
    case 1:
        (*K)++;
        if (W->r == 0) {
            isend(s, o->mine, o->total, A->rtype, 0);
            irecv(s, o->theirs, o->total, A->rtype, 0);
        }
        return TM_IS_MORE;
    case 2:
        LOCAL(PMPI_Iscatterv_c(o->theirs, o->counts, o->displs, A->rtype, A->rbuf, o->counts[W->r],
                               A->rtype, 0, W->L, &q));
    }
    return TM_IS_DONE;
}

/* Rooted block moves: every member of the other group sends to (receives from) the root. */
static enum tm_is_state rooted_step(struct tm_isched *s)
{
    STEP_VARS();
    if ((*K)++ > 0) return TM_IS_DONE;
    int gather = o->kind == TM_INB_GATHER;
    if (A->root != MPI_ROOT) {
        if (gather)
            isend(s, A->sbuf, A->scount, A->stype, A->root);
        else
            irecv(s, A->rbuf, A->rcount, A->rtype, A->root);
        return TM_IS_MORE;
    }
    const MPI_Count *counts = gather ? A->rcounts : A->scounts;
    const MPI_Aint *displs = gather ? A->rdispls : A->sdispls;
    MPI_Count count = gather ? A->rcount : A->scount;
    MPI_Datatype dt = gather ? A->rtype : A->stype;
    MPI_Aint ext = extent(dt);
    for (int i = 0; i < W->rn; i++) {
        MPI_Count c = counts ? counts[i] : count;
        MPI_Aint off = (counts ? displs[i] : (MPI_Aint)i * count) * ext;
        if (gather)
            irecv(s, at(A->rbuf, off), c, dt, i);
        else
            isend(s, at(A->sbuf, off), c, dt, i);
    }
    return TM_IS_MORE;
}

/* Allgather(v), Alltoall(v,w): every member exchanges with every member of the other group. */
static enum tm_is_state exchange_step(struct tm_isched *s)
{
    STEP_VARS();
    if ((*K)++ > 0) return TM_IS_DONE;
    int lay = o->kind == TM_INB_ALLGATHER ? (A->rcounts ? 1 : 0) : A->lay;
    int all2all = o->kind == TM_INB_ALLTOALL;
    MPI_Aint sext = lay == 2 ? 1 : extent(A->stype), rext = lay == 2 ? 1 : extent(A->rtype);
    for (int i = 0; i < W->rn; i++) {
        MPI_Count c = lay ? A->rcounts[i] : A->rcount;
        MPI_Aint off = (lay ? A->rdispls[i] : (MPI_Aint)i * A->rcount) * rext;
        irecv(s, at(A->rbuf, off), c, lay == 2 ? A->rtypes[i] : A->rtype, i);
    }
    for (int i = 0; i < W->rn; i++) {
        if (!all2all) {
            isend(s, A->sbuf, A->scount, A->stype, i);
            continue;
        }
        MPI_Count c = lay ? A->scounts[i] : A->scount;
        MPI_Aint off = (lay ? A->sdispls[i] : (MPI_Aint)i * A->scount) * sext;
        isend(s, at(A->sbuf, off), c, lay == 2 ? A->stypes[i] : A->stype, i);
    }
    return TM_IS_MORE;
}

/* The program may free its datatypes and op as soon as the start call returned (MPI 3.1
 * §4.1.9, §5.9.5), while later steps still name them by handle: the steps use handles of
 * their own.  MPI_SUCCESS or MPI_ERR_NO_MEM (what was made is dropped by op_free). */
static int hold_handles(struct tm_rank *me, struct nbop *o, int rn)
{
    struct tm_inb_args *A = &o->a;
    o->me = me;
    o->stype = o->rtype = MPI_DATATYPE_NULL;
    o->op = MPI_OP_NULL;
    MPI_Datatype h;
    if (tm_type_handle_hold(me, A->stype, &h)) return MPI_ERR_NO_MEM;
    o->stype = h;
    if (tm_type_handle_hold(me, A->rtype, &h)) return MPI_ERR_NO_MEM;
    o->rtype = h;
    if (o->kind == TM_INB_REDUCE || o->kind == TM_INB_RSCATTER) {
        MPI_Op p;
        if (tm_op_handle_hold(me, A->op, &p)) return MPI_ERR_NO_MEM;
        o->op = p;
    }
    if (A->lay == 2 && (A->stypes || A->rtypes) && rn > 0) {
        o->stypes = malloc(sizeof *o->stypes * (size_t)rn);
        o->rtypes = malloc(sizeof *o->rtypes * (size_t)rn);
        if (!o->stypes || !o->rtypes) return MPI_ERR_NO_MEM;
        for (int i = 0; i < rn; i++)
            o->stypes[i] = o->rtypes[i] = MPI_DATATYPE_NULL;
        o->ntypes = rn;
        for (int i = 0; i < rn; i++) {
            if (A->stypes && tm_type_handle_hold(me, A->stypes[i], &o->stypes[i]))
                return MPI_ERR_NO_MEM;
            if (A->rtypes && tm_type_handle_hold(me, A->rtypes[i], &o->rtypes[i]))
                return MPI_ERR_NO_MEM;
        }
        if (A->stypes) A->stypes = o->stypes;
        if (A->rtypes) A->rtypes = o->rtypes;
    }
    A->stype = o->stype;
    A->rtype = o->rtype;
    if (o->kind == TM_INB_REDUCE || o->kind == TM_INB_RSCATTER) A->op = o->op;
    return MPI_SUCCESS;
}

static void op_free(struct nbop *o)
{
    if (o->me) {
        tm_type_handle_drop(o->me, o->stype);
        tm_type_handle_drop(o->me, o->rtype);
        tm_op_handle_drop(o->me, o->op);
        for (int i = 0; i < o->ntypes; i++) {
            tm_type_handle_drop(o->me, o->stypes[i]);
            tm_type_handle_drop(o->me, o->rtypes[i]);
        }
    }
    free(o->stypes);
    free(o->rtypes);
    free(o->raw1);
    free(o->raw2);
    free(o->counts);
    free(o->displs);
    free(o->arrays);
    free(o);
}

static int op_fin(struct tm_isched *s, int err)
{
    op_free(tm_isched_op(s));
    return err;
}

/* Reductions: the first member's buffers for the group's result (and the other group's). */
static int reduce_prep(struct nbop *o, int r, int n)
{
    const struct tm_inb_args *A = &o->a;
    if (o->kind == TM_INB_RSCATTER) {
        o->counts = malloc(sizeof *o->counts * (size_t)n);
        o->displs = malloc(sizeof *o->displs * (size_t)n);
        if (!o->counts || !o->displs) return MPI_ERR_NO_MEM;
        MPI_Count total = 0;
        for (int i = 0; i < n; i++) {
            o->counts[i] = A->block ? A->rcount : A->rcounts[i];
            o->displs[i] = total;
            total += o->counts[i];
        }
        o->total = total;
    }
    if (r != 0 || (o->kind == TM_INB_REDUCE && !A->all && A->root == MPI_ROOT)) return 0;
    MPI_Count count = o->kind == TM_INB_RSCATTER ? o->total : A->count;
    if (!(o->mine = tmp_buf(A->rtype, count, &o->raw1))) return MPI_ERR_NO_MEM;
    if (o->kind == TM_INB_RSCATTER && !(o->theirs = tmp_buf(A->rtype, count, &o->raw2)))
        return MPI_ERR_NO_MEM;
    return 0;
}

/* The counts and displacements arrays the later steps read (the remote group's blocks: rn
 * each), copied into one allocation the operation owns: the caller's may go when the start
 * returns (an int call's widened ones do).  Reduce_scatter's are read at the start
 * (reduce_prep) and are the local group's.  MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int copy_arrays(struct nbop *o, int rn)
{
    _Static_assert(sizeof(MPI_Count) == sizeof(MPI_Aint), "one array of 64-bit slots");
    struct tm_inb_args *A = &o->a;
    /* Arrays a member's role ignores are not read (they may be NULL or short). */
    int root_side = A->root == MPI_ROOT;
    if (o->kind == TM_INB_RSCATTER) return MPI_SUCCESS;
    if (o->kind == TM_INB_GATHER && !root_side) A->rcounts = NULL, A->rdispls = NULL;
    if (o->kind != TM_INB_ALLTOALL && !(o->kind == TM_INB_SCATTER && root_side))
        A->scounts = NULL, A->sdispls = NULL;
    if (o->kind == TM_INB_SCATTER) A->rcounts = NULL, A->rdispls = NULL;
    size_t slots = (size_t)rn * (size_t)(!!A->scounts + !!A->sdispls + !!A->rcounts + !!A->rdispls);
    if (!slots) return MPI_SUCCESS;
    MPI_Count *p = o->arrays = malloc(sizeof *p * slots);
    if (!p) return MPI_ERR_NO_MEM;
    size_t len = sizeof *p * (size_t)rn;
    if (A->scounts) A->scounts = memcpy(p, A->scounts, len), p += rn;
    if (A->sdispls) A->sdispls = memcpy(p, A->sdispls, len), p += rn;
    if (A->rcounts) A->rcounts = memcpy(p, A->rcounts, len), p += rn;
    if (A->rdispls) A->rdispls = memcpy(p, A->rdispls, len);
    return MPI_SUCCESS;
}

int tm_inb_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, enum tm_inb_kind kind,
                 const struct tm_inb_args *a, MPI_Request *request)
{
    struct nbop *o = calloc(1, sizeof *o);
    if (!o) return MPI_ERR_NO_MEM;
    o->kind = kind;
    o->a = *a;
    tm_is_step_fn step = rooted_step;
    int nl = 0; /* the local collectives the steps issue */
    switch (kind) {
    case TM_INB_BARRIER:
        step = barrier_step, nl = 2;
        break;
    case TM_INB_BCAST:
        step = bcast_step, nl = a->root == MPI_ROOT ? 0 : 1;
        break;
    case TM_INB_REDUCE:
        step = reduce_step, nl = a->all ? 2 : a->root == MPI_ROOT ? 0 : 1;
        break;
    case TM_INB_RSCATTER:
        step = rscatter_step, nl = 2;
        break;
    case TM_INB_GATHER:
    case TM_INB_SCATTER:
        break;
    case TM_INB_ALLGATHER:
    case TM_INB_ALLTOALL:
        step = exchange_step;
        break;
    }
    int held = hold_handles(me, o, cr->c->remote_size);
    if (!held) held = copy_arrays(o, cr->c->remote_size);
    if (held) {
        op_free(o);
        return held;
    }
    if (kind == TM_INB_REDUCE || kind == TM_INB_RSCATTER) {
        int e = reduce_prep(o, cr->rank, cr->c->size);
        if (e) {
            op_free(o);
            return e;
        }
    }
    return tm_isched_start(me, cr, comm, nl, o, step, op_fin, request);
}
