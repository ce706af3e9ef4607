/* type.h — what a datatype is inside libtmpi, and how to find one from its handle.
 *
 * Every datatype, predefined or derived, is a struct tm_type.  A derived type is compiled when
 * it is constructed into its flat map: the (offset, length) byte blocks of one element in
 * typemap order, adjacent blocks merged (type_flat.c).  Moving typed data is then one pass
 * over the blocks (type_copy.h); a type whose one element is a single block starting at the
 * buffer and filling its extent is `contig`, and every mover takes it with one memcpy (the
 * flag is all the fast path checks).
 *
 * Packed form: the bytes of the blocks in order, psize of them per element.  That is what
 * messages carry (status bytes count it) and what MPI_Pack writes.  psize equals the MPI size,
 * also for the MINLOC/MAXLOC pair types: their packed form is their signature (value, int)
 * without the C padding, so a message of MPI_DOUBLE + MPI_INT parts matches MPI_DOUBLE_INT
 * (MPI 3.1 §4.1.7); the padded ones are not contig.  The op kernels take them as C structs
 * in the program's buffers and packed where data is packed (op.h tm_op_apply_packed), and an
 * accumulate walks its target pair by pair (rma/rma_atomic.c tm_rma_acc_walk).
 *
 * Lifetime: a derived type is reachable from its creator's handle table (owner-only) and
 * referenced by pending operations and by the types built on it (refs, atomic): MPI_Type_free
 * drops the handle's reference, the last reference frees it (MPI 3.1 §4.1.9: a freed type
 * still works in operations already started).  Once constructed a type never changes except
 * its name and its committed flag (owner-only), so other ranks' threads read it without a
 * lock. */
#ifndef TMPI_LIBCLIENT_TYPE_H
#define TMPI_LIBCLIENT_TYPE_H

#include <stdatomic.h>
#include <stddef.h>

#include "mpi.h"
#include "op.h"

/* One contiguous run of a type's data: len bytes at off from the buffer address; pos is the
 * run's first byte in the packed form of one element. */
struct tm_block {
    ptrdiff_t off;
    size_t len;
    size_t pos;
};

/* One regular run of a map-less type's blocks (type_flat.h tm_type_mapless): n blocks of len
 * bytes, the first at off, stride apart; first: its first block's index in the element, pos
 * that block's first byte in the packed form. */
struct tm_seg {
    size_t n, len;
    ptrdiff_t off, stride;
    size_t first, pos;
};

/* One run of a type's signature: n consecutive basic elements of one predefined type. */
struct tm_sigrun {
    enum tm_basic basic;
    size_t n;
};

/* Where a constructor's arguments are kept for MPI_Type_get_contents (type_envelope.c).  A
 * large-count (_c) constructor whose arguments all fit the int constructor's keeps that layout;
 * otherwise it keeps MPI 4.1 §5.1.13's large-count layout (nlarge > 0), which only the _c
 * decoders return. */
struct tm_envelope {
    int combiner; /* MPI_COMBINER_* */
    int nints, naints, ntypes;
    int *ints;
    MPI_Aint *aints;
    MPI_Count nlarge;
    MPI_Count *large;
    const struct tm_type **types; /* each holds a reference */
};

struct tm_type {
    size_t size;         /* MPI type size: bytes of data, without padding */
    ptrdiff_t extent;    /* ub - lb: the stride between consecutive elements in a buffer;
                          * negative when MPI_Type_create_resized sets ub < lb (MPI allows it:
                          * element i then lies i * |extent| bytes below element 0) */
    int nbasic;          /* basic elements per element of a predefined type (2 for the pairs) */
    enum tm_basic basic; /* the one predefined type every element is made of; TM_T__COUNT if
                          * the type mixes several (then no predefined op applies) */
    const char *name;
    size_t nunits; /* elements of `basic` per element, what a reduction combines; 0: one */
    int derived;   /* lives in a rank's table (struct tm_dtype), not in the predefined table */
    int contig;    /* one element = psize bytes at the buffer address, psize == extent (> 0) */
    size_t psize;  /* bytes of one element in packed form */
    ptrdiff_t lb;  /* lower bound; ub = lb + extent */
    ptrdiff_t true_lb, true_ub; /* first and one-past-last byte of data */
    size_t align;               /* alignment of the strictest basic element (struct padding) */
    size_t nelem;               /* basic elements per element (Get_elements; pairs count 2) */
    /* Flat map of one element; predefined types: NULL, meaning one block {0, psize, 0}. */
    size_t nblocks;
    const struct tm_block *blocks;
    /* The same map when it is regular (every block vlen bytes, block i at voff + i * vstride:
     * a vector's shape), so movers run one tight strided loop instead of reading the blocks;
     * vn 0: not regular (or contiguous). */
    size_t vn, vlen;
    ptrdiff_t voff, vstride;
    /* A map-less type of several regular runs in typemap order (a struct of a vector of more
     * than TM_TYPE_MAX_BLOCKS blocks and other pieces): nseg > 1, vn 0, blocks NULL, nblocks
     * their blocks in all.  0 / NULL otherwise. */
    size_t nseg;
    const struct tm_seg *segs;
    /* Signature; predefined types: NULL, meaning {basic, 1}. */
    size_t nsig;
    const struct tm_sigrun *sig;
    /* A packed twin (coll_base/coll_stage.c: contiguous, element = the packed form of packed_of)
     * names its type here, so a user op can be given data in that type's layout; else NULL. */
    const struct tm_type *packed_of;
};

/* A derived type: the type, its references, its constructor and its name. */
struct tm_dtype {
    struct tm_type t; /* first: a struct tm_type * of a derived type points here */
    _Atomic int refs; /* the handles + pending operations + types built on this one */
    int committed;    /* owner-only */
    struct tm_envelope env;
    char name[MPI_MAX_OBJECT_NAME];
    struct tm_attr *attrs; /* type_attr.c (comm/attr.h); owner-only */
    int f90; /* made by MPI_Type_create_f90_*: predefined for the program, never freed by it */
};

/* Handles from here on are derived datatypes in the calling rank's table (type_ctor.c). */
#define TM_DTYPE_FIRST 128 /* the predefined handles (mpi.h) stay below */

struct tm_rank;
struct tm_attr;

/* The type behind a handle, NULL if it is not a valid datatype (or a derived type that is not
 * committed: only committed types may be used in communication). */
const struct tm_type *tm_type_get(MPI_Datatype dt);
/* The same, committed or not: for queries (size, extent) that MPI allows before commit. */
const struct tm_type *tm_type_query(MPI_Datatype dt);
/* The derived type behind handle dt in me's table; NULL if none, or if committed_only and it
 * is not committed. */
const struct tm_type *tm_dtype_get(struct tm_rank *me, MPI_Datatype dt, int committed_only);
/* The attributes on datatype dt of rank me (predefined types included), NULL if none. */
struct tm_attr *tm_type_attrs(struct tm_rank *me, MPI_Datatype dt);
/* Frees me's table (job teardown). */
void tm_dtype_tab_free(struct tm_rank *me);
/* Frees me's cache of MPI_Type_create_f90_* answers (type_f90.c; job teardown, after the
 * table). */
void tm_f90_cache_free(struct tm_rank *me);
/* The handle of a predefined type (its index in the table); MPI_DATATYPE_NULL for others. */
MPI_Datatype tm_type_predef_handle(const struct tm_type *t);
/* A predefined type by handle, NULL if dt is not one (no rank needed: unit tests). */
const struct tm_type *tm_type_predef(MPI_Datatype dt);

/* 1 if b is a MINLOC/MAXLOC pair type: its value's type and the offset of its int index. */
int tm_basic_pair(enum tm_basic b, enum tm_basic *ret_value, size_t *ret_ioff);
/* The type of a pair's index: int, but the value's type for MPI_2REAL/MPI_2DOUBLE_PRECISION. */
enum tm_basic tm_basic_pair_index(enum tm_basic b);

/* Basic elements in `bytes` packed bytes of t (what MPI_Get_elements counts); -1 if they do
 * not end on a basic element. */
long long tm_type_elements(const struct tm_type *t, long long bytes);

/* References held by a pending operation; no-ops on predefined types. */
static inline void tm_type_hold(const struct tm_type *t)
{
    if (t && t->derived)
        atomic_fetch_add_explicit(&((struct tm_dtype *)t)->refs, 1, memory_order_relaxed);
}
void tm_type_release(const struct tm_type *t);

/* A second handle of rank me for the derived type behind dt, holding a reference, for a pending
 * operation that names its types by handle in later steps: the program may free dt meanwhile
 * (MPI allows it), this handle stays valid until tm_type_handle_drop.  Predefined types: dt
 * itself.  MPI_SUCCESS or MPI_ERR_NO_MEM (*ret is dt then). */
int tm_type_handle_hold(struct tm_rank *me, MPI_Datatype dt, MPI_Datatype *ret);
void tm_type_handle_drop(struct tm_rank *me, MPI_Datatype h);

/* The bytes [*lo, *hi) relative to the buffer that the data of count (> 0) elements of t
 * touches: element i's data is at i * extent + [true_lb, true_ub), and i * extent runs down
 * when the extent is negative. */
static inline void tm_type_range(const struct tm_type *t, size_t count, ptrdiff_t *lo,
                                 ptrdiff_t *hi)
{
    ptrdiff_t run = (ptrdiff_t)(count - 1) * t->extent;
    *lo = t->true_lb + (run < 0 ? run : 0);
    *hi = t->true_ub + (run > 0 ? run : 0);
}

/* Whether a NULL buffer of count elements of t is missing rather than MPI_BOTTOM.  MPI_BOTTOM
 * is NULL, and a legal buffer for a type whose data sits at absolute addresses (MPI_Get_address
 * displacements: MPI 3.1 §4.1.12), so a NULL buffer is refused only when the data it would
 * describe starts in the first page, which no program can own.  Types with no data (size 0)
 * never touch the buffer. */
#define TM_BOTTOM_MIN 4096
static inline int tm_buf_missing(const void *buf, long long count, const struct tm_type *t)
{
    if (buf || count <= 0 || !t->size) return 0;
    ptrdiff_t lo, hi;
    tm_type_range(t, (size_t)count, &lo, &hi);
    return lo < TM_BOTTOM_MIN;
}

/* The reduction behind an op handle; -1 if it is not a valid op. */
int tm_op_kind(MPI_Op op);

#endif
