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
    /* rn > 0: the blocks are regular and kept as a shape, not a map (tm_type_mapless): rn
     * blocks of rlen bytes, the first at roff, rstride apart; no other piece may follow. */
    size_t rn, rlen;
    ptrdiff_t roff, rstride;
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

/* A regular type (type.h vn) whose flat map would pass TM_TYPE_MAX_BLOCKS blocks keeps none:
 * blocks NULL, nblocks == vn, its blocks computed from voff, vstride and vlen (a vector of
 * 2^30 blocks costs no memory).  What cannot stay regular (a struct of such a vector and
 * another piece, a vector of vectors whose rows do not continue one stride) still flattens,
 * and is refused past TM_TYPE_MAX_BLOCKS. */
static inline int tm_type_mapless(const struct tm_type *t)
{
    return t->derived && !t->blocks && t->vn;
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
    return (struct tm_block){t->voff + (ptrdiff_t)i * t->vstride, t->vlen, i * t->vlen};
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
