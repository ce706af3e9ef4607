/* type_copy.h — moving typed data: gather (pack), scatter (unpack) and typed-to-typed copies
 * over the flat maps (type.h), at any byte offset of the packed form, so a chunk of a large
 * message can be packed into or unpacked from a frame on its own.
 *
 * Every data mover of libtmpi goes through these: point-to-point delivery (intra/, net/),
 * the collectives (tm_dt_copy), MPI_Pack/Unpack, RMA.  Contiguous types (t->contig) take one
 * memcpy; the flag is the only thing the fast path checks.
 *
 * Internal API for other layers (RMA included):
 *   tm_type_pack(out, buf, count, t, pos, len)    packed bytes [pos, pos+len) -> out
 *   tm_type_unpack(buf, count, t, pos, in, len)   in -> packed bytes [pos, pos+len) of buf
 *   tm_type_copy(dst, dcount, dt, src, scount, st) one pass, source layout to destination
 *   tm_type_copy_at(..., pos, len)                 one piece of that copy
 *   tm_type_apply(op, in, inout, count, t)        a predefined op over typed buffers
 * Lengths are in packed bytes (count * t->psize for a whole buffer). */
#ifndef TMPI_LIBCLIENT_TYPE_COPY_H
#define TMPI_LIBCLIENT_TYPE_COPY_H

#include <stddef.h>
#include <string.h>

#include "lib.h"
#include "type.h"

/* Packs bytes [pos, pos + len) of the packed form of (buf, count, t) into out.  Returns the
 * bytes written: len, less if the data ends first. */
size_t tm_type_pack(void *out, const void *buf, size_t count, const struct tm_type *t, size_t pos,
                    size_t len);
/* Scatters len packed bytes from in into bytes [pos, pos + len) of the packed form of (buf,
 * count, t).  Returns the bytes read: len, less if the buffer ends first. */
size_t tm_type_unpack(void *buf, size_t count, const struct tm_type *t, size_t pos, const void *in,
                      size_t len);
/* Copies (src, scount, st) into (dst, dcount, dt) in one pass: min of the two packed sizes;
 * returns the bytes copied. */
size_t tm_type_copy(void *dst, size_t dcount, const struct tm_type *dt, const void *src,
                    size_t scount, const struct tm_type *st);
/* The same for packed bytes [pos, pos + len) of that copy only, so that several threads can
 * each take a piece of one copy (intra/coop.h); returns the bytes copied. */
size_t tm_type_copy_at(void *dst, size_t dcount, const struct tm_type *dt, const void *src,
                       size_t scount, const struct tm_type *st, size_t pos, size_t len);
/* inout = in op inout for count elements of t (a type made of one predefined type), both
 * buffers laid out as t; returns 0 or -EINVAL if op is not defined on t's basic type. */
int tm_type_apply(int op, const void *in, void *inout, size_t count, const struct tm_type *t);

/* What a request carries as its layout (request.h dt): NULL for types moved as plain bytes
 * (contiguous, or empty), else t. */
static inline const struct tm_type *tm_type_moved(const struct tm_type *t)
{
    return TM_LIKELY(t->contig) || !t->psize ? NULL : t;
}

static inline int tm_dt_contig(const struct tm_type *t)
{
    return t->contig;
}

/* Elements of t->basic that one element of t holds (what an op combines). */
static inline size_t tm_dt_units(const struct tm_type *t)
{
    return t->nunits ? t->nunits : 1;
}

/* A predefined padded pair (MPI_DOUBLE_INT, LONG_INT, SHORT_INT, LONG_DOUBLE_INT): not
 * contig, since its packed form drops the padding, but its elements are C structs side by side
 * (12 of every 16 bytes data for MPI_DOUBLE_INT), and a copy to the same type is one memcpy of
 * the structs (tm_type_copy_at, for pieces that start on a pair). */
static inline int tm_type_pair_array(const struct tm_type *t)
{
    return t && !t->derived && !t->contig && tm_basic_psize(t->basic) != tm_basic_size(t->basic);
}

/* A layout whose mean block is shorter than a cache line: moved by a core other than the one
 * whose data shares its lines, it costs a line transfer per block (intra/handoff.h). */
#define TM_SPARSE_BLOCK 64

/* The mean block length of t's map in bytes (at least 1): how much a mover does per address.
 * A pair array's blocks fill the cache lines they are in: a line, not a block, per address
 * (the moves of MPI_DOUBLE_INT on one node cost what they did when it was contiguous). */
static inline size_t tm_type_mean_block(const struct tm_type *t)
{
    if (tm_type_pair_array(t)) return TM_SPARSE_BLOCK;
    size_t nb = t->vn ? t->vn : t->blocks || t->nseg ? t->nblocks : 1;
    size_t m = t->psize / (nb ? nb : 1);
    return m ? m : 1;
}
static inline int tm_type_sparse(const struct tm_type *t)
{
    return t && tm_type_mean_block(t) < TM_SPARSE_BLOCK;
}

/* Address of element i of a buffer of type t. */
static inline void *tm_dt_at(const void *buf, size_t i, const struct tm_type *t)
{
    return (unsigned char *)buf + (ptrdiff_t)i * t->extent;
}

/* Bytes (count, t) occupy from the buffer's start (contiguous types: their packed size).  Only
 * for types of extent >= 0: a collective stages the others (coll_stage.c). */
static inline size_t tm_dt_span(size_t count, const struct tm_type *t)
{
    return count * (size_t)t->extent;
}

/* Copies (src, scount, st) into (dst, dcount, dt).  The type signatures match (MPI's rule for
 * every collective), so the data is min(scount, dcount) typed elements; returns 1 if the
 * source held more than the destination can take (truncation), else 0.  src == dst is a
 * no-op (in-place blocks), except MPI_BOTTOM (NULL) under two different types: datatypes of
 * absolute addresses, each rank's own data. */
static inline int tm_dt_copy(void *dst, size_t dcount, const struct tm_type *dt, const void *src,
                             size_t scount, const struct tm_type *st)
{
    size_t sb = scount * st->psize, db = dcount * dt->psize;
    if (dst == src && (dst || dt == st)) return sb > db;
    if (TM_LIKELY(st->contig && dt->contig)) {
        size_t n = sb < db ? sb : db;
        if (n) memcpy(dst, src, n);
    } else {
        tm_type_copy(dst, dcount, dt, src, scount, st);
    }
    return sb > db;
}

#endif
