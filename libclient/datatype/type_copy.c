/* type_copy.c — gather, scatter and typed-to-typed copies over flat maps (type_copy.h).
 *
 * A cursor walks (buffer, count, type) in packed order: element e, block i, byte inb of the
 * block.  Starting at a packed position costs a division and a binary search over the
 * blocks' packed positions; then each step is one memcpy of a block (or of what is left of
 * it), so a strided vector costs one pass. */
#include "type_copy.h"

#include <errno.h>

#include "type_flat.h"

/* c->b may point at c->one (predefined types): a cursor is never copied. */
struct cursor {
    unsigned char *base; /* buffer address */
    size_t ext, psize;
    const struct tm_block *b;
    size_t nb;
    size_t e, i, inb; /* element, block, bytes into the block */
    struct tm_block one;
};

/* Places c at packed position pos (< count * psize). */
static void cursor_at(struct cursor *c, const void *buf, const struct tm_type *t, size_t pos)
{
    c->base = (unsigned char *)buf;
    c->ext = t->extent;
    c->psize = t->psize;
    c->b = tm_type_blocks(t, &c->one, &c->nb);
    c->e = pos / c->psize;
    size_t r = pos % c->psize;
    size_t lo = 0, hi = c->nb; /* last block with b.pos <= r */
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (c->b[mid].pos <= r)
            lo = mid;
        else
            hi = mid;
    }
    c->i = lo;
    c->inb = r - c->b[lo].pos;
}

static inline unsigned char *cursor_ptr(const struct cursor *c)
{
    return c->base + (ptrdiff_t)(c->e * c->ext) + c->b[c->i].off + (ptrdiff_t)c->inb;
}

static inline size_t cursor_left(const struct cursor *c)
{
    return c->b[c->i].len - c->inb;
}

static inline void cursor_step(struct cursor *c, size_t n)
{
    c->inb += n;
    if (c->inb == c->b[c->i].len) {
        c->inb = 0;
        if (++c->i == c->nb) {
            c->i = 0;
            c->e++;
        }
    }
}

/* One block.  Blocks of one basic element (a column of doubles) are the common small case:
 * a constant-size copy is a load and a store, where memcpy with a variable size is a call. */
static inline void copy_block(unsigned char *d, const unsigned char *s, size_t len)
{
    switch (len) {
    case 8:
        memcpy(d, s, 8);
        break;
    case 4:
        memcpy(d, s, 4);
        break;
    case 16:
        memcpy(d, s, 16);
        break;
    default:
        memcpy(d, s, len);
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
            copy_block(out, buf + b[i].off, b[i].len);
            out += b[i].len;
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
            copy_block(buf + b[i].off, in, b[i].len);
            in += b[i].len;
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
    size_t sb = scount * st->psize, db = dcount * dt->psize;
    size_t len = sb < db ? sb : db;
    if (!len) return 0;
    if (st->contig) return tm_type_unpack(dst, dcount, dt, 0, src, len);
    if (dt->contig) return tm_type_pack(dst, src, scount, st, 0, len);
    /* Same map on both sides (a vector to a vector of the same shape): block by block. */
    if (st->blocks == dt->blocks && st->extent == dt->extent && len % st->psize == 0) {
        const unsigned char *s = src;
        unsigned char *d = dst;
        const struct tm_block *b = st->blocks;
        for (size_t e = 0, n = len / st->psize; e < n; e++, s += st->extent, d += st->extent)
            for (size_t i = 0; i < st->nblocks; i++)
                copy_block(d + b[i].off, s + b[i].off, b[i].len);
        return len;
    }
    struct cursor cs, cd;
    cursor_at(&cs, src, st, 0);
    cursor_at(&cd, dst, dt, 0);
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

int tm_type_apply(int op, const void *in, void *inout, size_t count, const struct tm_type *t)
{
    if (t->basic == TM_T__COUNT || !tm_op_defined(op, t->basic)) return -EINVAL;
    size_t bs = tm_basic_size(t->basic);
    if (t->contig) return tm_op_apply(op, t->basic, in, inout, count * t->psize / bs);
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(t, &one, &nb);
    const unsigned char *s = in;
    unsigned char *d = inout;
    for (size_t e = 0; e < count; e++, s += t->extent, d += t->extent)
        for (size_t i = 0; i < nb; i++)
            tm_op_apply(op, t->basic, s + b[i].off, d + b[i].off, b[i].len / bs);
    return 0;
}
