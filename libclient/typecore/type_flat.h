/* type_flat.h — compiling a type into its flat map (type.h): a constructor describes the new
 * type as pieces, each "n consecutive elements of type t at byte displacement d", in typemap
 * order; the builder appends their blocks (merging a block that starts where the previous one
 * ends), their signature runs, and tracks bounds, sizes and the one basic type. */
#ifndef TMPI_LIBCLIENT_TYPE_FLAT_H
#define TMPI_LIBCLIENT_TYPE_FLAT_H

#include <stddef.h>

#include "type.h"

/* Limit on the blocks (and signature runs) of one type: a program cannot make one constructor
 * allocate more than this many (24 bytes each). */
#define TM_TYPE_MAX_BLOCKS ((size_t)1 << 24)
/* Limit on the regular runs of a map-less type (type.h nseg): a mover finds a block's run by a
 * scan, so they stay few. */
#define TM_TYPE_MAX_SEGS 16

struct tm_flat {
    struct tm_block *b;
    size_t nb, capb;
    struct tm_sigrun *s;
    size_t ns, caps;
    int any; /* a piece with elements was added (bounds are set) */
    ptrdiff_t lb, ub, tlb, tub;
    int tany; /* a piece with data was added (true bounds are set) */
    size_t size, psize, nelem, align, nunits;
    enum tm_basic basic;
    int nbasics; /* 0: none yet, 1: basic is the only one, 2: mixed */
    int seen;    /* a piece was added, even an empty one: basic0 is its basic type */
    enum tm_basic basic0;
    /* ng > 0: the blocks are kept as regular runs, not a map (tm_type_mapless): once a piece
     * of more blocks than a map holds came, the blocks before it became runs of one block, and
     * the pieces after it append runs (at most TM_TYPE_MAX_SEGS). */
    struct tm_seg *g;
    size_t ng;
};

void tm_flat_init(struct tm_flat *f);
/* Appends n elements of t at d, d + extent, ...  0, -ENOMEM, or -E2BIG (TM_TYPE_MAX_BLOCKS, or
 * bounds that overflow). */
int tm_flat_add(struct tm_flat *f, ptrdiff_t d, size_t n, const struct tm_type *t);
/* Appends count pieces of blen elements of t, stride bytes apart (vector, hvector): the same
 * as count tm_flat_add calls, but when their blocks would pass TM_TYPE_MAX_BLOCKS and stay
 * regular (each piece one block, or a run that continues the stride) the type keeps their
 * shape instead of a map. */
int tm_flat_add_strided(struct tm_flat *f, size_t count, size_t blen, ptrdiff_t stride,
                        const struct tm_type *t);
/* Fills t (derived) from f and hands it f's arrays; f is then empty.  lb/extent: if set (set
 * != 0), the bounds MPI_Type_create_resized gives.  pad: round the extent up to the strictest
 * alignment (MPI_Type_create_struct, MPI 3.1 §4.1.6). */
int tm_flat_finish(struct tm_flat *f, struct tm_type *t, int set, ptrdiff_t lb, ptrdiff_t extent,
                   int pad);
void tm_flat_discard(struct tm_flat *f);

struct tm_rank;
struct tm_envelope;
/* Registers a new derived type built by f (tm_flat_finish's set/lb/extent/pad) in me's table
 * as *newtype; takes env (its arrays and type references) in every case.  MPI_SUCCESS or the
 * error handler's answer (fn in the message). */
int tm_dtype_publish(struct tm_rank *me, const char *fn, struct tm_flat *f, int set, ptrdiff_t lb,
                     ptrdiff_t extent, int pad, struct tm_envelope *env, MPI_Datatype *newtype);

/* A type whose flat map would pass TM_TYPE_MAX_BLOCKS blocks keeps none when its blocks are a
 * few regular runs: blocks NULL, and either one run (vn == nblocks, its blocks computed from
 * voff, vstride and vlen: a vector of 2^30 blocks costs no memory) or up to TM_TYPE_MAX_SEGS
 * (segs: a struct of such a vector and other pieces).  What is not such runs (a vector of
 * vectors whose rows do not continue one stride, a contiguous type of such a struct) still
 * flattens, and is refused past TM_TYPE_MAX_BLOCKS. */
static inline int tm_type_mapless(const struct tm_type *t)
{
    return t->derived && !t->blocks && (t->vn || t->nseg);
}

/* The run of a several-run map-less type that holds block i. */
static inline const struct tm_seg *tm_type_seg(const struct tm_type *t, size_t i)
{
    size_t s = t->nseg - 1;
    while (s && t->segs[s].first > i)
        s--;
    return &t->segs[s];
}

/* The blocks / signature of t (a one-entry array in *one for predefined types; NULL with *ret_n
 * blocks for a map-less regular type: read them through tm_type_block). */
static inline const struct tm_block *tm_type_blocks(const struct tm_type *t, struct tm_block *one,
                                                    size_t *ret_n)
{
    if (t->blocks || t->derived) {
        *ret_n = t->nblocks;
        return t->blocks;
    }
    *one = (struct tm_block){0, t->psize, 0};
    *ret_n = 1;
    return one;
}
/* Block i of one element of t, b what tm_type_blocks returned for it. */
static inline struct tm_block tm_type_block(const struct tm_type *t, const struct tm_block *b,
                                            size_t i)
{
    if (b) return b[i];
    if (t->nseg) {
        const struct tm_seg *g = tm_type_seg(t, i);
        const size_t k = i - g->first;
        return (struct tm_block){g->off + (ptrdiff_t)k * g->stride, g->len, g->pos + k * g->len};
    }
    return (struct tm_block){t->voff + (ptrdiff_t)i * t->vstride, t->vlen, i * t->vlen};
}
/* The last block of one element of t whose packed position is at most pos (< psize), b what
 * tm_type_blocks returned for it (nb its blocks). */
static inline size_t tm_type_block_at(const struct tm_type *t, const struct tm_block *b, size_t nb,
                                      size_t pos)
{
    if (!b && t->nseg) {
        const struct tm_seg *g = &t->segs[t->nseg - 1];
        while (g > t->segs && g->pos > pos)
            g--;
        return g->first + (pos - g->pos) / g->len;
    }
    if (!b) return pos / t->vlen;
    size_t lo = 0, hi = nb;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (b[mid].pos <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
static inline const struct tm_sigrun *tm_type_sig(const struct tm_type *t, struct tm_sigrun *one,
                                                  size_t *ret_n)
{
    if (t->sig || t->derived) {
        *ret_n = t->nsig;
        return t->sig;
    }
    *one = (struct tm_sigrun){t->basic, 1};
    *ret_n = 1;
    return one;
}

#endif
