/* coll_stage.c — non-contiguous datatypes in collectives on communicators that span nodes.
 *
 * The inter-node phase (coll_net/) moves each member's blocks as bytes (count * extent from
 * the block's address), which for a type with gaps would carry the gaps and overwrite the
 * receivers' gaps.  Rather than teach every leader algorithm the flat maps, a member whose
 * arguments name a non-contiguous type runs the collective on a staged copy of them: each
 * such type is replaced by its packed twin (a contiguous type of the same signature whose
 * element is the packed form, extent = packed size), every block the member's buffers take
 * part with is packed into a staging buffer at the same element index (so counts and element
 * displacements stay valid; the w variant's byte displacements are rewritten), and when the
 * collective is done the blocks it writes are unpacked into the program's buffers.  Only the
 * blocks the collective reads or writes at this member are touched (MPI allows nothing else).
 *
 * Predefined operations combine a packed twin exactly as the type (element by element, the
 * same basic type); a user function is given the program's handle and expects its layout, so
 * tm_opref_apply unpacks both operands into that layout for it (the twin's packed_of). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll_base.h"

/* One side's staging: the buffer, and whether the collective writes it here. */
struct side {
    unsigned char *mem; /* allocation */
    int out;            /* unpack after */
    int nblk;           /* blocks taking part (0: the side is not used here) */
    int red;            /* reductions: one block of count elements of rtype at the buffer */
    size_t count;
};

struct tm_cstage {
    struct tm_cargs user; /* the program's arguments (types held) */
    int kind, n, rank;
    struct side s, r;
    struct tm_type stwin, rtwin;
    struct tm_type *wtwin;        /* w variant: 2n twins (send, then receive) */
    const struct tm_type **wtype; /* w variant: 2n pointers (send, then receive) */
    MPI_Aint *wdispl;             /* w variant: 2n byte displacements in the staging */
};

/* The packed twin of t. */
static void twin(struct tm_type *tw, const struct tm_type *t)
{
    *tw = *t;
    tw->derived = 0; /* lives in the stage: never held or freed */
    tw->contig = 1;
    tw->extent = t->psize;
    tw->lb = 0;
    tw->true_lb = 0;
    tw->true_ub = (ptrdiff_t)t->psize;
    tw->nblocks = 0;
    tw->blocks = NULL;
    tw->vn = 0;
    tw->nseg = 0;
    tw->segs = NULL;
    tw->packed_of = t;
}

/* Which blocks of each side take part at member `rank` (MPI 3.1 chapter 5: what each
 * collective reads and writes at each member). */
static void sides(struct tm_cstage *st)
{
    const struct tm_cargs *a = &st->user;
    const int n = st->n, root = a->root == st->rank;
    struct side *s = &st->s, *r = &st->r;
    switch (st->kind) {
    case MPIX_COLL_BCAST: /* the root's buffer is read, the others' written */
        r->nblk = 1;
        r->out = !root;
        break;
    case MPIX_COLL_GATHER:
    case MPIX_COLL_GATHERV: /* a side's type is set unless it is MPI_IN_PLACE (its buffer may
                             * be NULL: MPI_BOTTOM) */
        s->nblk = a->stype ? 1 : 0;
        r->nblk = root ? n : 0;
        r->out = 1;
        break;
    case MPIX_COLL_SCATTER:
    case MPIX_COLL_SCATTERV:
        s->nblk = root ? n : 0;
        r->nblk = a->rtype ? 1 : 0;
        r->out = 1;
        break;
    case MPIX_COLL_ALLGATHER:
    case MPIX_COLL_ALLGATHERV:
        s->nblk = a->stype ? 1 : 0;
        r->nblk = n;
        r->out = 1;
        break;
    case MPIX_COLL_ALLTOALL:
    case MPIX_COLL_ALLTOALLV:
    case MPIX_COLL_ALLTOALLW:
        s->nblk = n;
        r->nblk = n;
        r->out = 1;
        break;
    case MPIX_COLL_REDUCE:
    case MPIX_COLL_ALLREDUCE:
    case MPIX_COLL_SCAN:
    case MPIX_COLL_EXSCAN:
        s->nblk = s->red = r->red = 1;
        s->count = a->count;
        r->nblk = a->root < 0 || a->root == st->rank; /* root -1: every member has the result */
        r->count = a->count;
        r->out = 1;
        break;
    case MPIX_COLL_REDUCE_SCATTER:
    case MPIX_COLL_REDUCE_SCATTER_BLOCK:
        s->nblk = s->red = r->red = 1;
        s->count = a->count;
        r->nblk = 1;
        r->count =
            st->kind == MPIX_COLL_REDUCE_SCATTER ? (size_t)a->rcounts[st->rank] : (size_t)a->rcount;
        r->out = 1;
        break;
    default:
        break;
    }
}

/* Block j of one side of a: address, element count, type and element index (uniform and v
 * layouts; w: byte displacement in *ret_at). */
static const void *blk(const struct tm_cargs *a, int in, int j, const struct side *sd,
                       size_t *ret_n, const struct tm_type **ret_t, long long *ret_at)
{
    if (sd->red) {
        *ret_n = sd->count;
        *ret_t = a->rtype;
        *ret_at = 0;
        return in ? a->sbuf : a->rbuf;
    }
    const enum tm_clayout lay = in ? a->slay : a->rlay;
    const void *p = in ? tm_cblk_in(a, j, ret_n, ret_t) : tm_cblk_out(a, j, ret_n, ret_t);
    const MPI_Aint *displs = in ? a->sdispls : a->rdispls;
    const long long cnt = in ? a->scount : a->rcount;
    *ret_at = lay == TM_CL_UNIFORM ? (long long)j * cnt : displs[j];
    return p;
}

/* Sets up one side: the staging buffer and the staged arguments' pointers. */
static int stage_side(struct tm_cstage *st, int in)
{
    struct tm_cargs *a = &st->user;
    struct side *sd = in ? &st->s : &st->r;
    if (!sd->nblk) return 0;
    const enum tm_clayout lay = sd->red ? TM_CL_UNIFORM : in ? a->slay : a->rlay;
    /* Extent of the staging: element indices [lo, hi) of the twin (w: bytes). */
    long long lo = 0, hi = 0;
    for (int j = 0; j < sd->nblk; j++) {
        size_t cnt;
        const struct tm_type *t;
        long long at;
        blk(a, in, j, sd, &cnt, &t, &at);
        if (!cnt) continue;
        if (lay == TM_CL_W) {
            st->wdispl[(in ? 0 : st->n) + j] = (MPI_Aint)hi;
            hi += (long long)(cnt * t->psize);
            continue;
        }
        if (at < lo) lo = at;
        if (at + (long long)cnt > hi) hi = at + (long long)cnt;
    }
    const struct tm_type *t0 = sd->red ? a->rtype : in ? a->stype : a->rtype;
    const size_t unit = lay == TM_CL_W ? 1 : t0->psize;
    const size_t bytes = (size_t)(hi - lo) * unit;
    sd->mem = malloc(bytes ? bytes : 1);
    if (!sd->mem) return -ENOMEM;
    /* element 0 of the staged buffer: lo elements before the allocation when lo < 0 is never
     * dereferenced below lo; keep the arithmetic on the allocation's own pointer */
    unsigned char *base = sd->mem - lo * (long long)unit;
    for (int j = 0; j < sd->nblk; j++) {
        size_t cnt;
        const struct tm_type *t;
        long long at;
        const void *p = blk(a, in, j, sd, &cnt, &t, &at);
        if (!cnt || !t->psize) continue;
        unsigned char *to = lay == TM_CL_W ? sd->mem + st->wdispl[(in ? 0 : st->n) + j]
                                           : base + at * (long long)unit;
        tm_type_pack(to, p, cnt, t, 0, cnt * t->psize);
    }
    return 0;
}

static void stage_free(struct tm_cstage *st)
{
    tm_cargs_release(&st->user, st->n);
    free(st->s.mem);
    free(st->r.mem);
    free(st->wtwin);
    free(st->wtype);
    free(st->wdispl);
    free(st);
}

int tm_cstage_new(int kind, int rank, int n, const struct tm_cargs *a, struct tm_cargs *ret)
{
    struct tm_cstage *st = calloc(1, sizeof *st);
    if (!st) return -ENOMEM;
    st->user = *a;
    st->user.own = NULL; /* stays with the staged arguments, freed as before */
    st->user.wide = NULL;
    st->kind = kind;
    st->rank = rank;
    st->n = n;
    tm_cargs_hold(&st->user, n);
    sides(st);
    struct tm_cargs *s = ret;
    *s = *a;
    s->stage = st;
    int err = 0;
    const int w = a->slay == TM_CL_W || a->rlay == TM_CL_W;
    if (w) {
        st->wtwin = calloc(2 * (size_t)n, sizeof *st->wtwin);
        st->wtype = calloc(2 * (size_t)n, sizeof *st->wtype);
        st->wdispl = calloc(2 * (size_t)n, sizeof *st->wdispl);
        if (!st->wtwin || !st->wtype || !st->wdispl) err = -ENOMEM;
        for (int k = 0; !err && k < 2 * n; k++) {
            const struct tm_type *t =
                k < n ? (a->stypes ? a->stypes[k] : NULL) : (a->rtypes ? a->rtypes[k - n] : NULL);
            if (!t) continue;
            twin(&st->wtwin[k], t);
            st->wtype[k] = &st->wtwin[k];
        }
    }
    if (!err) err = stage_side(st, 1);
    if (!err) err = stage_side(st, 0);
    if (err) {
        s->stage = NULL;
        stage_free(st);
        return err;
    }
    if (a->stype) {
        twin(&st->stwin, a->stype);
        s->stype = &st->stwin;
    }
    if (a->rtype) {
        twin(&st->rtwin, a->rtype);
        s->rtype = &st->rtwin;
    }
    /* staged buffers at element index 0 (w: byte 0) */
    for (int in = 1; in >= 0; in--) {
        struct side *sd = in ? &st->s : &st->r;
        if (!sd->nblk) continue;
        const enum tm_clayout lay = sd->red ? TM_CL_UNIFORM : in ? a->slay : a->rlay;
        long long lo = 0;
        if (lay != TM_CL_W)
            for (int j = 0; j < sd->nblk; j++) {
                size_t cnt;
                const struct tm_type *t;
                long long at;
                blk(a, in, j, sd, &cnt, &t, &at);
                if (cnt && at < lo) lo = at;
            }
        const struct tm_type *t0 = sd->red ? a->rtype : in ? a->stype : a->rtype;
        unsigned char *base = sd->mem - lo * (long long)(lay == TM_CL_W ? 1 : t0->psize);
        if (in)
            s->sbuf = base;
        else
            s->rbuf = base;
    }
    if (w) {
        if (a->stypes) s->stypes = st->wtype;
        if (a->rtypes) s->rtypes = st->wtype + n;
        if (a->slay == TM_CL_W && st->s.nblk) s->sdispls = st->wdispl;
        if (a->rlay == TM_CL_W && st->r.nblk) s->rdispls = st->wdispl + n;
    }
    return 0;
}

void tm_cstage_finish(struct tm_cargs *staged, int ok)
{
    struct tm_cstage *st = staged->stage;
    if (!st) return;
    staged->stage = NULL;
    struct side *sd = &st->r;
    if (ok && sd->out && sd->nblk)
        for (int j = 0; j < sd->nblk; j++) {
            size_t cnt, scnt;
            const struct tm_type *t, *tt;
            long long at, sat;
            void *p = (void *)blk(&st->user, 0, j, sd, &cnt, &t, &at);
            const void *from = blk(staged, 0, j, sd, &scnt, &tt, &sat);
            if (cnt && t->psize) tm_type_unpack(p, cnt, t, 0, from, cnt * t->psize);
        }
    /* The twins and the staged arrays go with the stage: the staged arguments keep only what
     * they own (own), so releasing them afterwards (tm_cargs_release) touches nothing freed. */
    staged->stype = staged->rtype = NULL;
    staged->stypes = staged->rtypes = NULL;
    staged->sbuf = staged->rbuf = NULL;
    stage_free(st);
}

/* A type whose data leaves [0, extent) of its element: scratch buffers sized count * extent
 * cannot hold it in its own layout. */
static inline int outside(const struct tm_type *t)
{
    return t && t->psize && (t->extent < 0 || t->true_lb < 0 || t->true_ub > t->extent);
}

int tm_cargs_outside(const struct tm_cargs *a, int n)
{
    if (TM_LIKELY(!a->stypes && !a->rtypes)) return outside(a->stype) || outside(a->rtype);
    for (int k = 0; k < n; k++)
        if ((a->stypes && outside(a->stypes[k])) || (a->rtypes && outside(a->rtypes[k]))) return 1;
    return 0;
}

int tm_cargs_noncontig(const struct tm_cargs *a, int n)
{
    if ((a->stype && !a->stype->contig) || (a->rtype && !a->rtype->contig)) return 1;
    for (int k = 0; k < n; k++)
        if ((a->stypes && a->stypes[k] && !a->stypes[k]->contig) ||
            (a->rtypes && a->rtypes[k] && !a->rtypes[k]->contig))
            return 1;
    return 0;
}
