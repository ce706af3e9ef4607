/* dtype.h — derived datatypes (MPI_Type_contiguous, commit, free) and moving typed data.
 *
 * Every collective moves data through tm_dt_copy(), which takes (buffer, count, datatype) on
 * both sides, and addresses blocks through tm_dt_at().  Today every type is contiguous, so a
 * copy is one memcpy; a later non-contiguous type (vector, indexed, struct) only changes these
 * helpers (pack from the source typemap, unpack into the destination's), never the algorithms.
 * Reductions combine contiguous runs of `basic` elements (tm_dt_units); a non-contiguous type
 * would be packed into the reducer's scratch first (see coll_reduce.c).
 *
 * Lifetime: a derived type is reachable from its creator's handle table (owner-only) and
 * referenced by pending non-blocking collectives, which may read it from other ranks' threads
 * (refs, atomic).  MPI_Type_free drops the handle's reference; the last reference frees it.
 * A committed type is immutable, so readers need no lock. */
#ifndef TMPI_LIBCLIENT_TYPE_COPY_H
#define TMPI_LIBCLIENT_TYPE_COPY_H

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "type.h"

struct tm_rank;

struct tm_dtype {
    struct tm_type t; /* first: a struct tm_type * of a derived type points here */
    _Atomic int refs; /* the handle (until Type_free) + pending non-blocking operations */
    int committed;    /* owner-only */
};

/* The derived type behind handle dt in me's table; NULL if none, or if committed_only and it
 * is not committed. */
const struct tm_type *tm_dtype_get(struct tm_rank *me, MPI_Datatype dt, int committed_only);
/* Frees me's table (job teardown). */
void tm_dtype_tab_free(struct tm_rank *me);

/* References held by a pending operation; no-ops on predefined types. */
static inline void tm_type_hold(const struct tm_type *t)
{
    if (t && t->derived)
        atomic_fetch_add_explicit(&((struct tm_dtype *)t)->refs, 1, memory_order_relaxed);
}
void tm_type_release(const struct tm_type *t);

static inline int tm_dt_contig(const struct tm_type *t)
{
    (void)t;
    return 1; /* every type so far; non-contiguous ones plug in here */
}

/* Elements of t->basic that one element of t holds (what an op combines). */
static inline size_t tm_dt_units(const struct tm_type *t)
{
    return t->nunits ? t->nunits : 1;
}

/* Address of element i of a buffer of type t. */
static inline void *tm_dt_at(const void *buf, size_t i, const struct tm_type *t)
{
    return (unsigned char *)buf + i * t->extent;
}

/* Bytes (count, t) occupy from the buffer's start. */
static inline size_t tm_dt_span(size_t count, const struct tm_type *t)
{
    return count * t->extent;
}

/* Copies (src, scount, st) into (dst, dcount, dt).  The type signatures match (MPI's rule for
 * every collective), so the data is min(scount, dcount) typed elements; returns 1 if the
 * source held more than the destination can take (truncation), else 0.  src == dst is a
 * no-op (in-place blocks). */
static inline int tm_dt_copy(void *dst, size_t dcount, const struct tm_type *dt, const void *src,
                             size_t scount, const struct tm_type *st)
{
    size_t sb = scount * st->size, db = dcount * dt->size;
    size_t n = sb < db ? sb : db;
    /* Contiguous types: size == extent except for the padding of pair types, which both sides
     * share when the signatures match, so whole extents are copied. */
    size_t nb = n == sb ? scount * st->extent : dcount * dt->extent;
    if (nb && dst != src) memcpy(dst, src, nb);
    return sb > db;
}

#endif
