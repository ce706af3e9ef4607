/* type_copy.c — gather, scatter and typed-to-typed copies over flat maps (type_copy.h).
 *
 * A cursor walks (buffer, count, type) in packed order: element e, block i, byte inb of the
 * block.  Starting at a packed position costs a division and a binary search over the
 * blocks' packed positions; then each step is one memcpy of a block (or of what is left of
 * it), so a strided vector costs one pass.
 *
 * A regular map (type.h vn: a vector's shape) skips the block list and the cursor: a vseq
 * walks it as runs of blocks at one stride, and each run is one tight strided loop.  That is
 * the halo exchange's column between two ranks, whose two column types are different objects
 * with the same shape (docs/bench/ANALYSIS.md "Halo exchange"). */
#include "type_copy.h"

#include <errno.h>
#include <stdint.h>

#include "type_flat.h"

/* c->b may point at c->one (predefined types): a cursor is never copied. */
struct cursor {
    unsigned char *base; /* buffer address */
    ptrdiff_t ext;       /* negative: element i lies below element 0 */
    size_t psize;
    const struct tm_type *t;
    const struct tm_block *b; /* NULL: a map-less regular type (type_flat.h) */
    size_t nb;
    size_t e, i, inb; /* element, block, bytes into the block */
    struct tm_block one;
    struct tm_block cur; /* block i */
};

/* Places c at packed position pos (< count * psize). */
static void cursor_at(struct cursor *c, const void *buf, const struct tm_type *t, size_t pos)
{
    c->base = (unsigned char *)buf;
    c->ext = t->extent;
    c->psize = t->psize;
    c->t = t;
    c->b = tm_type_blocks(t, &c->one, &c->nb);
    c->e = pos / c->psize;
    size_t r = pos % c->psize;
    size_t lo = tm_type_block_at(t, c->b, c->nb, r);
    c->i = lo;
    c->cur = tm_type_block(t, c->b, lo);
    c->inb = r - c->cur.pos;
}

static inline unsigned char *cursor_ptr(const struct cursor *c)
{
    return c->base + (ptrdiff_t)c->e * c->ext + c->cur.off + (ptrdiff_t)c->inb;
}

static inline size_t cursor_left(const struct cursor *c)
{
    return c->cur.len - c->inb;
}

static inline void cursor_step(struct cursor *c, size_t n)
{
    c->inb += n;
    if (c->inb == c->cur.len) {
        c->inb = 0;
        if (++c->i == c->nb) {
            c->i = 0;
            c->e++;
        }
        c->cur = tm_type_block(c->t, c->b, c->i);
    }
}

/* n blocks of len bytes, source ss and destination ds bytes apart.  Blocks of one basic
 * element (a column of doubles) are the common small case: a constant-size copy is a load and
 * a store, where memcpy with a variable size is a call. */
static inline void strided(unsigned char *d, ptrdiff_t ds, const unsigned char *s, ptrdiff_t ss,
                           size_t n, size_t len)
{
    switch (len) {
    case 8:
        for (; n; n--, d += ds, s += ss)
            memcpy(d, s, 8);
        break;
    case 4:
        for (; n; n--, d += ds, s += ss)
            memcpy(d, s, 4);
        break;
    case 16:
        for (; n; n--, d += ds, s += ss)
            memcpy(d, s, 16);
        break;
    default:
        for (; n; n--, d += ds, s += ss)
            memcpy(d, s, len);
    }
}

static inline void copy_block(unsigned char *d, const unsigned char *s, size_t len)
{
    strided(d, 0, s, 0, 1, len);
}

/* A buffer of a regular type (type.h vn) as runs of blocks at one stride: a run is one
 * element's blocks, or the whole buffer when consecutive elements continue the stride. */
struct vseq {
    unsigned char *p;   /* the next block */
    unsigned char *run; /* first block of the current run */
    size_t left;        /* blocks left in the run, p's included */
    size_t per;         /* blocks per run */
    ptrdiff_t stride;
    ptrdiff_t ext; /* from one run to the next */
};

/* Places v at block k (< count * t->vn) of (buf, count, t). */
static void vseq_at(struct vseq *v, const void *buf, const struct tm_type *t, size_t count,
                    size_t k)
{
    unsigned char *b = (unsigned char *)buf + t->voff;
    if (t->vn == 1 || (ptrdiff_t)t->vn * t->vstride == (ptrdiff_t)t->extent) {
        v->per = t->vn * count;
        v->stride = t->vn == 1 ? (ptrdiff_t)t->extent : t->vstride;
        v->ext = 0;
        v->run = b;
    } else {
        v->per = t->vn;
        v->stride = t->vstride;
        v->ext = t->extent;
        v->run = b + (ptrdiff_t)(k / v->per) * v->ext;
        k %= v->per;
    }
    v->p = v->run + (ptrdiff_t)k * v->stride;
    v->left = v->per - k;
}

static inline void vseq_step(struct vseq *v, size_t n)
{
    v->left -= n;
    if (v->left) {
        v->p += (ptrdiff_t)n * v->stride;
        return;
    }
    v->run += v->ext;
    v->p = v->run;
    v->left = v->per;
}

/* Packed bytes [pos, pos + len) of (buf, count, t), t regular, to io (pack) or from it. */
static void regular_move(unsigned char *io, unsigned char *buf, size_t count,
                         const struct tm_type *t, size_t pos, size_t len, int pack)
{
    const size_t bl = t->vlen;
    struct vseq v;
    vseq_at(&v, buf, t, count, pos / bl);
    size_t inb = pos % bl;
    if (inb) { /* the rest of a block a previous chunk began */
        size_t n = bl - inb < len ? bl - inb : len;
        if (pack)
            memcpy(io, v.p + inb, n);
        else
            memcpy(v.p + inb, io, n);
        io += n;
        len -= n;
        vseq_step(&v, 1);
    }
    while (len >= bl) {
        size_t n = len / bl < v.left ? len / bl : v.left;
        if (pack)
            strided(io, (ptrdiff_t)bl, v.p, v.stride, n, bl);
        else
            strided(v.p, v.stride, io, (ptrdiff_t)bl, n, bl);
        io += n * bl;
        len -= n * bl;
        vseq_step(&v, n);
    }
    if (len) { /* the start of a block the next chunk ends */
        if (pack)
            memcpy(io, v.p, len);
        else
            memcpy(v.p, io, len);
    }
}

/* Whole blocks, no cursor: the hot loops of a full pack or unpack. */
static void pack_whole(unsigned char *out, const unsigned char *buf, size_t count,
                       const struct tm_type *t)
{
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(t, &one, &nb);
    for (size_t e = 0; e < count; e++, buf += t->extent)
        for (size_t i = 0; i < nb; i++) {
            struct tm_block k = tm_type_block(t, b, i);
            copy_block(out, buf + k.off, k.len);
            out += k.len;
        }
}

static void unpack_whole(unsigned char *buf, size_t count, const struct tm_type *t,
                         const unsigned char *in)
{
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(t, &one, &nb);
    for (size_t e = 0; e < count; e++, buf += t->extent)
        for (size_t i = 0; i < nb; i++) {
            struct tm_block k = tm_type_block(t, b, i);
            copy_block(buf + k.off, in, k.len);
            in += k.len;
        }
}

size_t tm_type_pack(void *out, const void *buf, size_t count, const struct tm_type *t, size_t pos,
                    size_t len)
{
    size_t total = count * t->psize;
    if (pos >= total) return 0;
    if (len > total - pos) len = total - pos;
    if (t->contig) {
        memcpy(out, (const unsigned char *)buf + pos, len);
        return len;
    }
    if (t->vn) {
        regular_move(out, (unsigned char *)buf, count, t, pos, len, 1);
        return len;
    }
    if (pos == 0 && len == total) {
        pack_whole(out, buf, count, t);
        return len;
    }
    struct cursor c;
    cursor_at(&c, buf, t, pos);
    unsigned char *o = out;
    for (size_t left = len; left;) {
        size_t n = cursor_left(&c);
        if (n > left) n = left;
        memcpy(o, cursor_ptr(&c), n);
        o += n;
        left -= n;
        cursor_step(&c, n);
    }
    return len;
}

size_t tm_type_unpack(void *buf, size_t count, const struct tm_type *t, size_t pos, const void *in,
                      size_t len)
{
    size_t total = count * t->psize;
    if (pos >= total) return 0;
    if (len > total - pos) len = total - pos;
    if (t->contig) {
        memcpy((unsigned char *)buf + pos, in, len);
        return len;
    }
    if (t->vn) {
        regular_move((unsigned char *)in, buf, count, t, pos, len, 0);
        return len;
    }
    if (pos == 0 && len == total) {
        unpack_whole(buf, count, t, in);
        return len;
    }
    struct cursor c;
    cursor_at(&c, buf, t, pos);
    const unsigned char *p = in;
    for (size_t left = len; left;) {
        size_t n = cursor_left(&c);
        if (n > left) n = left;
        memcpy(cursor_ptr(&c), p, n);
        p += n;
        left -= n;
        cursor_step(&c, n);
    }
    return len;
}

size_t tm_type_copy(void *dst, size_t dcount, const struct tm_type *dt, const void *src,
                    size_t scount, const struct tm_type *st)
{
    return tm_type_copy_at(dst, dcount, dt, src, scount, st, 0, SIZE_MAX); /* the whole copy */
}

size_t tm_type_copy_at(void *dst, size_t dcount, const struct tm_type *dt, const void *src,
                       size_t scount, const struct tm_type *st, size_t pos, size_t len)
{
    size_t sb = scount * st->psize, db = dcount * dt->psize;
    size_t total = sb < db ? sb : db;
    if (pos >= total) return 0;
    if (len > total - pos) len = total - pos;
    if (st->contig)
        return tm_type_unpack(dst, dcount, dt, pos, (const unsigned char *)src + pos, len);
    if (dt->contig) return tm_type_pack((unsigned char *)dst + pos, src, scount, st, pos, len);
    /* A predefined padded pair to itself (MPI_DOUBLE_INT ...): the C structs are copied whole,
     * their padding with them, as one memcpy where a block per pair took twice as long in a
     * 1 MiB MPI_Allreduce MAXLOC.  A pair's padding is no one's data (C leaves its value
     * unspecified after any store to the struct); the last pair's trailing padding is left out,
     * the buffer may end before it. */
    if (st == dt && tm_type_pair_array(st) && pos % st->psize == 0 && len % st->psize == 0) {
        size_t first = pos / st->psize, n = len / st->psize;
        memcpy((unsigned char *)dst + (ptrdiff_t)first * dt->extent,
               (const unsigned char *)src + (ptrdiff_t)first * st->extent,
               (n - 1) * (size_t)st->extent + (size_t)st->true_ub);
        return len;
    }
    /* Both regular with one block length (a column to a column, whatever the two strides):
     * runs of blocks, stride to stride, when the piece starts and ends on block bounds (a
     * whole copy and the chunks of a cooperative copy do: coop.c). */
    if (st->vn && dt->vn && st->vlen == dt->vlen && pos % st->vlen == 0 && len % st->vlen == 0) {
        struct vseq a, b;
        vseq_at(&a, src, st, scount, pos / st->vlen);
        vseq_at(&b, dst, dt, dcount, pos / st->vlen);
        for (size_t k = len / st->vlen; k;) {
            size_t n = a.left < b.left ? a.left : b.left;
            if (n > k) n = k;
            strided(b.p, b.stride, a.p, a.stride, n, st->vlen);
            k -= n;
            vseq_step(&a, n);
            vseq_step(&b, n);
        }
        return len;
    }
    /* Same map on both sides (a vector to a vector of the same shape), whole elements: block
     * by block. */
    if (st->blocks && st->blocks == dt->blocks && st->extent == dt->extent &&
        pos % st->psize == 0 && len % st->psize == 0) {
        size_t first = pos / st->psize;
        const unsigned char *s = (const unsigned char *)src + (ptrdiff_t)first * st->extent;
        unsigned char *d = (unsigned char *)dst + (ptrdiff_t)first * st->extent;
        const struct tm_block *b = st->blocks;
        for (size_t e = 0, n = len / st->psize; e < n; e++, s += st->extent, d += st->extent)
            for (size_t i = 0; i < st->nblocks; i++)
                copy_block(d + b[i].off, s + b[i].off, b[i].len);
        return len;
    }
    /* Else block by block from two cursors. */
    struct cursor cs, cd;
    cursor_at(&cs, src, st, pos);
    cursor_at(&cd, dst, dt, pos);
    for (size_t left = len; left;) {
        size_t n = cursor_left(&cs), m = cursor_left(&cd);
        if (m < n) n = m;
        if (n > left) n = left;
        memcpy(cursor_ptr(&cd), cursor_ptr(&cs), n);
        left -= n;
        cursor_step(&cs, n);
        cursor_step(&cd, n);
    }
    return len;
}

/* A type of padded pairs: its blocks need not start at a pair (merged runs of SHORT_INT cross
 * them), so the data is packed a piece at a time, combined as packed pairs and unpacked. */
static void apply_padded(int op, const void *in, void *inout, size_t count, const struct tm_type *t,
                         size_t ps)
{
    _Alignas(max_align_t) unsigned char a[2048], b[2048];
    const size_t chunk = sizeof a / ps * ps, total = count * t->psize;
    for (size_t pos = 0; pos < total; pos += chunk) {
        size_t n = total - pos < chunk ? total - pos : chunk;
        tm_type_pack(a, in, count, t, pos, n);
        tm_type_pack(b, inout, count, t, pos, n);
        tm_op_apply_packed(op, t->basic, a, b, n / ps);
        tm_type_unpack(inout, count, t, pos, b, n);
    }
}

int tm_type_apply(int op, const void *in, void *inout, size_t count, const struct tm_type *t)
{
    if (t->basic == TM_T__COUNT || !tm_op_defined(op, t->basic)) return -EINVAL;
    size_t bs = tm_basic_size(t->basic), ps = tm_basic_psize(t->basic);
    if (t->contig) return tm_op_apply_packed(op, t->basic, in, inout, count * t->psize / ps);
    /* A predefined padded pair: the buffers are arrays of its C struct, what the struct kernels
     * take (they write the value and the index, never the padding), as fast as a contiguous
     * type (MPI_Allreduce of MPI_DOUBLE_INT on one node). */
    if (ps != bs && !t->derived) return tm_op_apply(op, t->basic, in, inout, count);
    if (ps != bs) {
        apply_padded(op, in, inout, count, t, ps);
        return 0;
    }
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(t, &one, &nb);
    const unsigned char *s = in;
    unsigned char *d = inout;
    for (size_t e = 0; e < count; e++, s += t->extent, d += t->extent)
        for (size_t i = 0; i < nb; i++) {
            struct tm_block k = tm_type_block(t, b, i);
            tm_op_apply(op, t->basic, s + k.off, d + k.off, k.len / bs);
        }
    return 0;
}
