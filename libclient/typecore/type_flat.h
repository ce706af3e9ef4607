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
};

void tm_flat_init(struct tm_flat *f);
/* Appends n elements of t at d, d + extent, ...  0, -ENOMEM, or -E2BIG (TM_TYPE_MAX_BLOCKS, or
 * bounds that overflow). */
int tm_flat_add(struct tm_flat *f, ptrdiff_t d, size_t n, const struct tm_type *t);
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

/* The blocks / signature of t (a one-entry array in *one for predefined types). */
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
