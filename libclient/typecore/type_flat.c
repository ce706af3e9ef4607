/* type_flat.c — the flat-map builder (type_flat.h). */
#include "type_flat.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void tm_flat_init(struct tm_flat *f)
{
    memset(f, 0, sizeof *f);
    f->align = 1;
}

void tm_flat_discard(struct tm_flat *f)
{
    free(f->b);
    free(f->s);
    free(f->g);
    tm_flat_init(f);
}

static int grow(void **p, size_t *cap, size_t need, size_t elsize)
{
    if (need <= *cap) return 0;
    if (need > TM_TYPE_MAX_BLOCKS) return -E2BIG;
    size_t nc = *cap ? *cap * 2 : 8;
    while (nc < need)
        nc *= 2;
    if (nc > TM_TYPE_MAX_BLOCKS) nc = TM_TYPE_MAX_BLOCKS;
    void *np = realloc(*p, nc * elsize);
    if (!np) return -ENOMEM;
    *p = np;
    *cap = nc;
    return 0;
}

/* a + b * c in ptrdiff_t, -E2BIG on overflow. */
static int mad(ptrdiff_t a, ptrdiff_t b, ptrdiff_t c, ptrdiff_t *ret)
{
    ptrdiff_t m;
    if (__builtin_mul_overflow(b, c, &m) || __builtin_add_overflow(a, m, ret)) return -E2BIG;
    return 0;
}

/* Appends run g (blocks with data) to f's runs; a single block that continues the last run's
 * bytes or its stride extends it instead. */
static int add_seg(struct tm_flat *f, struct tm_seg g)
{
    if (f->ng && g.n == 1) {
        struct tm_seg *l = &f->g[f->ng - 1];
        ptrdiff_t next;
        if (l->n == 1 && l->off + (ptrdiff_t)l->len == g.off) {
            l->len += g.len;
            return 0;
        }
        if (l->len == g.len &&
            (l->n == 1 || (!mad(l->off, (ptrdiff_t)l->n, l->stride, &next) && next == g.off))) {
            if (l->n == 1) l->stride = g.off - l->off;
            l->n++;
            return 0;
        }
    }
    if (f->ng == TM_TYPE_MAX_SEGS) return -E2BIG;
    if (!f->g && !(f->g = malloc(sizeof *f->g * TM_TYPE_MAX_SEGS))) return -ENOMEM;
    f->g[f->ng++] = g;
    return 0;
}

/* From here on f keeps runs, not a map: its blocks so far become runs of one block. */
static int to_segs(struct tm_flat *f)
{
    if (f->ng) return 0;
    int r = 0;
    for (size_t i = 0; i < f->nb && !r; i++)
        r = add_seg(f, (struct tm_seg){1, f->b[i].len, f->b[i].off, 0, 0, 0});
    if (r < 0) return r;
    if (!f->ng && !(f->g = malloc(sizeof *f->g * TM_TYPE_MAX_SEGS))) return -ENOMEM;
    free(f->b);
    f->b = NULL;
    f->nb = f->capb = 0;
    return 0;
}

static int add_block(struct tm_flat *f, ptrdiff_t off, size_t len)
{
    if (!len) return 0;
    if (f->g) return add_seg(f, (struct tm_seg){1, len, off, 0, 0, 0});
    if (f->nb && f->b[f->nb - 1].off + (ptrdiff_t)f->b[f->nb - 1].len == off) {
        f->b[f->nb - 1].len += len;
        return 0;
    }
    int r = grow((void **)&f->b, &f->capb, f->nb + 1, sizeof *f->b);
    if (r < 0) return r;
    f->b[f->nb++] = (struct tm_block){off, len, 0};
    return 0;
}

static int add_sig(struct tm_flat *f, enum tm_basic basic, size_t n)
{
    if (!n) return 0;
    if (f->ns && f->s[f->ns - 1].basic == basic) {
        f->s[f->ns - 1].n += n;
        return 0;
    }
    int r = grow((void **)&f->s, &f->caps, f->ns + 1, sizeof *f->s);
    if (r < 0) return r;
    f->s[f->ns++] = (struct tm_sigrun){basic, n};
    return 0;
}

/* Bounds, sizes and the basic type of n elements of t at d (no blocks, no signature). */
static int account(struct tm_flat *f, ptrdiff_t d, size_t n, const struct tm_type *t)
{
    if (!f->seen) f->basic0 = t->basic; /* an empty type still names its basic type */
    f->seen = 1;
    if (!n) return 0;
    if (n > (size_t)PTRDIFF_MAX) return -E2BIG;
    const ptrdiff_t ext = t->extent, nn = (ptrdiff_t)n;
    /* Element k lies at d + k * ext: the last one is the highest, or with a negative extent
     * (ub < lb) the lowest; the bounds are the lowest lb and the highest ub over them. */
    ptrdiff_t lo, hi, run;
    if (__builtin_add_overflow(d, t->lb, &lo) || mad(0, nn - 1, ext, &run) ||
        __builtin_add_overflow(lo, ext, &hi))
        return -E2BIG;
    if (run < 0 ? __builtin_add_overflow(lo, run, &lo) : __builtin_add_overflow(hi, run, &hi))
        return -E2BIG;
    if (!f->any || lo < f->lb) f->lb = lo;
    if (!f->any || hi > f->ub) f->ub = hi;
    f->any = 1;
    if (t->psize) {
        ptrdiff_t tlo = d + t->true_lb, thi = d + t->true_ub;
        if (run < 0 ? __builtin_add_overflow(tlo, run, &tlo)
                    : __builtin_add_overflow(thi, run, &thi))
            return -E2BIG;
        if (!f->tany || tlo < f->tlb) f->tlb = tlo;
        if (!f->tany || thi > f->tub) f->tub = thi;
        f->tany = 1;
    }
    size_t tot;
    if (__builtin_mul_overflow(n, t->size, &tot) || __builtin_add_overflow(f->size, tot, &f->size))
        return -E2BIG;
    f->psize += n * t->psize;
    f->nelem += n * t->nelem;
    if (t->align > f->align) f->align = t->align;
    if (t->nelem) {
        if (f->nbasics == 0) {
            f->basic = t->basic;
            f->nbasics = t->basic == TM_T__COUNT ? 2 : 1;
        } else if (t->basic != f->basic) {
            f->nbasics = 2;
        }
        f->nunits += n * (t->nunits ? t->nunits : 1);
    }
    return 0;
}

/* One regular run: n blocks of len bytes, the first at off, stride apart. */
struct reg {
    size_t n, len;
    ptrdiff_t off, stride;
};

/* n (> 0) elements of t (with data) as one regular run, or -E2BIG. */
static int shape(size_t n, const struct tm_type *t, struct reg *ret)
{
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(t, &one, &nb);
    const ptrdiff_t ext = t->extent;
    if (nb == 1) {
        if (n == 1 || (ext > 0 && b[0].len == (size_t)ext)) {
            size_t len;
            if (__builtin_mul_overflow(n, b[0].len, &len)) return -E2BIG;
            *ret = (struct reg){1, len, b[0].off, 0};
        } else {
            *ret = (struct reg){n, b[0].len, b[0].off, ext};
        }
        return 0;
    }
    ptrdiff_t run;
    if (!t->vn ||
        (n > 1 && (__builtin_mul_overflow((ptrdiff_t)t->vn, t->vstride, &run) || run != ext)))
        return -E2BIG;
    size_t all;
    if (__builtin_mul_overflow(n, t->vn, &all)) return -E2BIG;
    *ret = (struct reg){all, t->vlen, t->voff, t->vstride};
    return 0;
}

/* f appends the run g, displaced by d, as a run of its own (a single block: as one). */
static int set_regular(struct tm_flat *f, ptrdiff_t d, const struct reg *g)
{
    ptrdiff_t off;
    if (__builtin_add_overflow(d, g->off, &off)) return -E2BIG;
    if (g->n == 1 || g->stride == (ptrdiff_t)g->len) {
        size_t len;
        if (__builtin_mul_overflow(g->n, g->len, &len)) return -E2BIG;
        return add_block(f, off, len);
    }
    int r = to_segs(f);
    if (r < 0) return r;
    return add_seg(f, (struct tm_seg){g->n, g->len, off, g->stride, 0, 0});
}

/* One element of a several-run map-less type t at d: its runs, displaced. */
static int add_runs(struct tm_flat *f, ptrdiff_t d, const struct tm_type *t)
{
    int r = to_segs(f);
    for (size_t s = 0; s < t->nseg && !r; s++) {
        struct tm_seg g = t->segs[s];
        if (__builtin_add_overflow(g.off, d, &g.off)) return -E2BIG;
        r = add_seg(f, g);
    }
    return r;
}

static int add_sigs(struct tm_flat *f, size_t n, const struct tm_type *t);

int tm_flat_add(struct tm_flat *f, ptrdiff_t d, size_t n, const struct tm_type *t)
{
    int r = account(f, d, n, t);
    if (r < 0 || !n) return r;
    const ptrdiff_t ext = t->extent;
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(t, &one, &nb);
    if (nb == 1 && ext > 0 && b[0].len == (size_t)ext) {
        /* Consecutive elements touch: one block for all n. */
        r = add_block(f, d + b[0].off, n * b[0].len);
    } else if (nb && n > (TM_TYPE_MAX_BLOCKS - f->nb) / nb) {
        /* more blocks than a map holds: keep them as runs if they are regular */
        struct reg g;
        if (n == 1 && t->nseg) {
            r = add_runs(f, d, t);
        } else {
            r = shape(n, t, &g);
            if (!r) r = set_regular(f, d, &g);
        }
    } else if (nb) {
        for (size_t k = 0; k < n && !r; k++)
            for (size_t i = 0; i < nb && !r; i++) {
                const struct tm_block k1 = tm_type_block(t, b, i);
                r = add_block(f, d + (ptrdiff_t)k * ext + k1.off, k1.len);
            }
    }
    if (r < 0) return r;
    return add_sigs(f, n, t);
}

/* The signature of n elements of t. */
static int add_sigs(struct tm_flat *f, size_t n, const struct tm_type *t)
{
    int r = 0;

    struct tm_sigrun sone;
    size_t ns;
    const struct tm_sigrun *s = tm_type_sig(t, &sone, &ns);
    if (ns == 0) return 0; /* no data: nothing to repeat (n may be past int) */
    if (ns == 1) return add_sig(f, s[0].basic, n * s[0].n);
    if (n > TM_TYPE_MAX_BLOCKS / ns) return -E2BIG;
    for (size_t k = 0; k < n && !r; k++)
        for (size_t i = 0; i < ns && !r; i++)
            r = add_sig(f, s[i].basic, s[i].n);
    return r;
}

/* Fills t's regular description (type.h vn) if its blocks have one length at one stride. */
static void find_regular(struct tm_type *t)
{
    const struct tm_block *b = t->blocks;
    size_t nb = t->nblocks;
    if (t->contig || !nb) return;
    ptrdiff_t stride = nb > 1 ? b[1].off - b[0].off : 0;
    for (size_t i = 1; i < nb; i++)
        if (b[i].len != b[0].len || b[i].off - b[i - 1].off != stride) return;
    t->vn = nb;
    t->vlen = b[0].len;
    t->voff = b[0].off;
    t->vstride = stride;
}

int tm_flat_add_strided(struct tm_flat *f, size_t count, size_t blen, ptrdiff_t stride,
                        const struct tm_type *t)
{
    struct tm_block one;
    size_t nb;
    const struct tm_block *b = tm_type_blocks(t, &one, &nb);
    const int touch = nb == 1 && t->extent > 0 && b[0].len == (size_t)t->extent;
    const size_t per = !blen || !t->size      ? 0
                       : touch                ? 1
                       : blen > SIZE_MAX / nb ? SIZE_MAX
                                              : blen * nb;
    struct reg in = {0}, g = {0};
    int regular = count > 1 && per && count > (TM_TYPE_MAX_BLOCKS - f->nb) / per && !f->nb &&
                  !f->ng && shape(blen, t, &in) == 0;
    if (regular) {
        ptrdiff_t run;
        if (in.n == 1)
            g = (struct reg){count, in.len, in.off, stride};
        else if (!__builtin_mul_overflow((ptrdiff_t)in.n, in.stride, &run) && run == stride &&
                 !__builtin_mul_overflow(count, in.n, &g.n))
            g = (struct reg){g.n, in.len, in.off, in.stride};
        else
            regular = 0;
    }
    if (!regular) {
        int r = 0;
        for (size_t i = 0; i < count && !r; i++) {
            ptrdiff_t d;
            if (__builtin_mul_overflow((ptrdiff_t)i, stride, &d)) return -E2BIG;
            r = tm_flat_add(f, d, blen, t);
        }
        return r;
    }
    /* The first and the last piece set the bounds (the pieces run one way); the others add
     * their sizes. */
    ptrdiff_t last;
    if (__builtin_mul_overflow((ptrdiff_t)(count - 1), stride, &last)) return -E2BIG;
    int r = account(f, 0, blen, t);
    if (!r) r = account(f, last, blen, t);
    if (r < 0) return r;
    const size_t more = count - 2, units = t->nelem ? blen * (t->nunits ? t->nunits : 1) : 0;
    size_t add, padd;
    if (__builtin_mul_overflow(blen, t->size, &add) || __builtin_mul_overflow(more, add, &add) ||
        __builtin_add_overflow(f->size, add, &f->size) ||
        __builtin_mul_overflow(blen, t->psize, &padd) || __builtin_mul_overflow(more, padd, &padd))
        return -E2BIG;
    f->psize += padd;
    f->nelem += more * blen * t->nelem;
    f->nunits += more * units;
    r = set_regular(f, 0, &g);
    if (r < 0) return r;
    struct tm_sigrun sone;
    size_t ns;
    const struct tm_sigrun *sg = tm_type_sig(t, &sone, &ns);
    if (ns == 0) return 0;
    if (ns > 1) return -E2BIG; /* the signature would pass the limit */
    return add_sig(f, sg[0].basic, count * blen * sg[0].n);
}

int tm_flat_finish(struct tm_flat *f, struct tm_type *t, int set, ptrdiff_t lb, ptrdiff_t extent,
                   int pad)
{
    ptrdiff_t tlb = f->tany ? f->tlb : 0, tub = f->tany ? f->tub : 0;
    if (!set) {
        lb = f->any ? f->lb : 0;
        extent = (f->any ? f->ub : 0) - lb;
        if (pad && f->align > 1 && extent % (ptrdiff_t)f->align)
            extent += (ptrdiff_t)f->align - extent % (ptrdiff_t)f->align;
    }
    size_t pos = 0;
    for (size_t i = 0; i < f->nb; i++) {
        f->b[i].pos = pos;
        pos += f->b[i].len;
    }
    *t = (struct tm_type){
        .size = f->size,
        .extent = extent,
        .basic = f->nbasics == 1 ? f->basic : (f->nbasics ? TM_T__COUNT : f->basic0),
        .nunits = f->nbasics == 1 ? f->nunits : 0,
        .derived = 1,
        .psize = f->psize,
        .lb = lb,
        .true_lb = tlb,
        .true_ub = tub,
        .align = f->align,
        .nelem = f->nelem,
        .nblocks = f->nb,
        .blocks = f->b,
        .nsig = f->ns,
        .sig = f->s,
    };
    t->contig = !f->ng && lb == 0 && extent > 0 && t->psize == (size_t)extent &&
                (f->nb == 0 || (f->nb == 1 && f->b[0].off == 0));
    if (f->ng == 1) {
        t->nblocks = t->vn = f->g[0].n;
        t->vlen = f->g[0].len;
        t->voff = f->g[0].off;
        t->vstride = f->g[0].stride;
    } else if (f->ng) {
        size_t nblk = 0, at = 0;
        for (size_t s = 0; s < f->ng; s++) {
            f->g[s].first = nblk;
            f->g[s].pos = at;
            nblk += f->g[s].n;
            at += f->g[s].n * f->g[s].len;
        }
        t->nblocks = nblk;
        t->nseg = f->ng;
        t->segs = f->g;
        f->g = NULL;
    } else {
        find_regular(t);
    }
    f->b = NULL;
    f->s = NULL;
    tm_flat_discard(f);
    return 0;
}
