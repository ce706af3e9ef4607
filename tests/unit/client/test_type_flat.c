/* test_type_flat.c — the datatype engine on its own (type_flat.c, type_copy.c, type_ref.c
 * compiled in, no ranks): flattening and merging of blocks, bounds, the block limit, pack and
 * unpack at every split offset, typed-to-typed copies between different layouts (whole and in
 * pieces), reductions
 * over a strided type that leave its gaps alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "type_copy.h"
#include "type_flat.h"

static int failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failed = 1;                                                                            \
        }                                                                                          \
    } while (0)

static const struct tm_type dbl = {.size = 8,
                                   .extent = 8,
                                   .nbasic = 1,
                                   .basic = TM_T_DOUBLE,
                                   .name = "double",
                                   .contig = 1,
                                   .psize = 8,
                                   .true_ub = 8,
                                   .align = 8,
                                   .nelem = 1};

/* A derived type from pieces (d, n) of old; NULL on error (ret_err). */
static struct tm_type *build(const struct tm_type *old, int npieces, const ptrdiff_t *d,
                             const size_t *n, int *ret_err)
{
    struct tm_flat f;
    tm_flat_init(&f);
    int r = 0;
    for (int i = 0; i < npieces && !r; i++)
        r = tm_flat_add(&f, d[i], n[i], old);
    struct tm_dtype *t = calloc(1, sizeof *t);
    if (!r) r = tm_flat_finish(&f, &t->t, 0, 0, 0, 0);
    if (r) {
        tm_flat_discard(&f);
        free(t);
        *ret_err = r;
        return NULL;
    }
    atomic_init(&t->refs, 1);
    *ret_err = 0;
    return &t->t;
}

/* The same as build, with the bounds MPI_Type_create_resized gives (lb 0, extent ext). */
static struct tm_type *build_resized(const struct tm_type *old, int npieces, const ptrdiff_t *d,
                                     const size_t *n, ptrdiff_t ext)
{
    struct tm_flat f;
    tm_flat_init(&f);
    int r = 0;
    for (int i = 0; i < npieces && !r; i++)
        r = tm_flat_add(&f, d[i], n[i], old);
    struct tm_dtype *t = calloc(1, sizeof *t);
    if (!r) r = tm_flat_finish(&f, &t->t, 1, 0, ext, 0);
    if (r) {
        tm_flat_discard(&f);
        free(t);
        return NULL;
    }
    atomic_init(&t->refs, 1);
    return &t->t;
}

/* The packed form of (buf, count, t) straight from its block list: what every mover must
 * agree with. */
static void ref_pack(unsigned char *out, const unsigned char *buf, size_t count,
                     const struct tm_type *t)
{
    for (size_t e = 0; e < count; e++)
        for (size_t i = 0; i < t->nblocks; i++) {
            memcpy(out, buf + e * t->extent + t->blocks[i].off, t->blocks[i].len);
            out += t->blocks[i].len;
        }
}

static void test_vector_blocks(void)
{
    /* vector(3, 2, 4) of double: blocks of 16 bytes at 0, 32, 64 */
    ptrdiff_t d[3] = {0, 32, 64};
    size_t n[3] = {2, 2, 2};
    int err;
    struct tm_type *v = build(&dbl, 3, d, n, &err);
    CHECK(v && v->nblocks == 3, "vector: expected 3 blocks got %zu", v ? v->nblocks : 0);
    if (!v) return;
    for (size_t i = 0; i < 3; i++)
        CHECK(v->blocks[i].off == (ptrdiff_t)(32 * i) && v->blocks[i].len == 16 &&
                  v->blocks[i].pos == 16 * i,
              "block %zu: expected {%zu, 16, %zu} got {%td, %zu, %zu}", i, 32 * i, 16 * i,
              v->blocks[i].off, v->blocks[i].len, v->blocks[i].pos);
    CHECK(v->extent == 80 && v->size == 48 && v->psize == 48 && !v->contig,
          "vector: extent %zu size %zu psize %zu contig %d", v->extent, v->size, v->psize,
          v->contig);
    CHECK(v->basic == TM_T_DOUBLE && v->nunits == 6 && v->nelem == 6, "vector: basic %d units %zu",
          v->basic, v->nunits);
    tm_type_release(v);
}

static void test_merging(void)
{
    /* adjacent pieces merge into one block: a contiguous type */
    ptrdiff_t d[3] = {0, 16, 24};
    size_t n[3] = {2, 1, 3};
    int err;
    struct tm_type *t = build(&dbl, 3, d, n, &err);
    CHECK(t && t->nblocks == 1 && t->blocks[0].len == 48 && t->contig,
          "adjacent pieces: expected one contiguous block of 48, got %zu blocks",
          t ? t->nblocks : 0);
    /* pieces out of order do not merge (typemap order is kept) */
    ptrdiff_t d2[2] = {8, 0};
    size_t n2[2] = {1, 1};
    struct tm_type *u = build(&dbl, 2, d2, n2, &err);
    CHECK(u && u->nblocks == 2 && !u->contig && u->extent == 16 && u->true_lb == 0,
          "reversed pieces: %zu blocks, contig %d", u ? u->nblocks : 0, u ? u->contig : -1);
    /* n elements of a contiguous derived type: still one block */
    ptrdiff_t d3[1] = {0};
    size_t n3[1] = {1000};
    struct tm_type *w = t ? build(t, 1, d3, n3, &err) : NULL;
    CHECK(w && w->nblocks == 1 && w->psize == 48000, "contiguous of contiguous: %zu blocks",
          w ? w->nblocks : 0);
    tm_type_release(t);
    tm_type_release(u);
    tm_type_release(w);
}

static void test_limit(void)
{
    /* 5000 x 4000 separate blocks > TM_TYPE_MAX_BLOCKS: refused before allocating them */
    ptrdiff_t *d = malloc(sizeof *d * 4000);
    size_t *n = malloc(sizeof *n * 4000);
    for (int i = 0; i < 4000; i++)
        d[i] = 16 * i, n[i] = 1;
    int err;
    struct tm_type *v = build(&dbl, 4000, d, n, &err);
    CHECK(v && v->nblocks == 4000, "4000 blocks");
    ptrdiff_t dd[1] = {0};
    size_t nn[1] = {5000};
    struct tm_type *big = v ? build(v, 1, dd, nn, &err) : NULL;
    CHECK(!big && err == -E2BIG, "20M blocks: expected -E2BIG got %d", err);
    tm_type_release(big);
    tm_type_release(v);
    free(d);
    free(n);
}

/* Regular pieces past TM_TYPE_MAX_BLOCKS keep a shape, no map (type_flat.h tm_type_mapless):
 * 2^24 + 5 doubles of extent 16 (resized), then a vector of them by tm_flat_add_strided; the
 * movers walk them by stride. */
static void test_mapless(void)
{
    ptrdiff_t d1[1] = {0};
    size_t n1[1] = {1};
    struct tm_type *r16 = build_resized(&dbl, 1, d1, n1, 16); /* a double, extent 16 */
    const size_t big = TM_TYPE_MAX_BLOCKS + 5;
    size_t nb[1] = {big};
    int err;
    struct tm_type *v = r16 ? build(r16, 1, d1, nb, &err) : NULL;
    CHECK(v && tm_type_mapless(v) && v->vn == big && v->vlen == 8 && v->vstride == 16 &&
              v->psize == 8 * big && v->nblocks == big,
          "2^24 + 5 strided doubles: mapless %d, vn %zu", v ? tm_type_mapless(v) : -1,
          v ? v->vn : 0);
    /* a vector of 3 of them, rows continuing the stride: still one shape */
    struct tm_flat f;
    tm_flat_init(&f);
    int r = v ? tm_flat_add_strided(&f, 3, 1, (ptrdiff_t)(16 * big), v) : -1;
    struct tm_dtype *w = calloc(1, sizeof *w);
    if (!r) r = tm_flat_finish(&f, &w->t, 0, 0, 0, 0);
    CHECK(r == 0 && tm_type_mapless(&w->t) && w->t.vn == 3 * big && w->t.size == 24 * big,
          "a vector of 3 rows: r %d, vn %zu", r, w->t.vn);
    atomic_init(&w->refs, 1);
    /* rows that leave a gap: a run each (type.h segs), up to TM_TYPE_MAX_SEGS of them */
    tm_flat_init(&f);
    r = v ? tm_flat_add_strided(&f, 3, 1, (ptrdiff_t)(16 * big + 8), v) : -1;
    struct tm_dtype *g3 = calloc(1, sizeof *g3);
    if (!r) r = tm_flat_finish(&f, &g3->t, 0, 0, 0, 0);
    CHECK(r == 0 && tm_type_mapless(&g3->t) && g3->t.nseg == 3 && g3->t.vn == 0 &&
              g3->t.nblocks == 3 * big && g3->t.psize == 24 * big,
          "3 rows with a gap: r %d, nseg %zu", r, g3->t.nseg);
    if (!r) {
        struct tm_block k = tm_type_block(&g3->t, NULL, 2 * big + 1);
        CHECK(k.off == (ptrdiff_t)(2 * (16 * big + 8) + 16) && k.len == 8 &&
                  k.pos == 8 * (2 * big + 1) &&
                  tm_type_block_at(&g3->t, NULL, g3->t.nblocks, k.pos + 3) == 2 * big + 1,
              "3 rows with a gap: block 2 * big + 1 at %td", k.off);
    }
    atomic_init(&g3->refs, 1);
    tm_type_release(&g3->t);
    tm_flat_init(&f);
    r = v ? tm_flat_add_strided(&f, TM_TYPE_MAX_SEGS + 1, 1, (ptrdiff_t)(16 * big + 8), v) : -1;
    CHECK(r == -E2BIG, "%d rows with a gap: expected -E2BIG got %d", TM_TYPE_MAX_SEGS + 1, r);
    tm_flat_discard(&f);
    /* pack and unpack by stride, the unpack from an offset inside the packed form */
    if (v) {
        unsigned char *buf = calloc(16, big), *pk = malloc(8 * big), *back = calloc(16, big);
        for (size_t i = 0; i < big; i++)
            memcpy(buf + 16 * i, &(double){(double)i}, 8);
        CHECK(tm_type_pack(pk, buf, 1, v, 0, 8 * big) == 8 * big, "pack");
        double x;
        memcpy(&x, pk + 8 * (big - 1), 8);
        CHECK(x == (double)(big - 1), "packed last %g", x);
        CHECK(tm_type_unpack(back, 1, v, 8 * 7, pk + 8 * 7, 8 * 3) == 24, "unpack at 7");
        memcpy(&x, back + 16 * 9, 8);
        CHECK(x == 9.0, "unpacked element 9: %g", x);
        free(buf), free(pk), free(back);
    }
    tm_type_release(&w->t);
    tm_type_release(v);
    tm_type_release(r16);
}

/* A struct of a double, 2^24 + 5 strided doubles (map-less) and a double past a gap keeps three
 * runs (type.h segs): packed whole and in pieces that cut inside each run alike, unpacked back
 * from an offset; a resized twin takes the runs. */
static void test_runs(void)
{
    ptrdiff_t d1[1] = {0};
    size_t n1[1] = {1};
    struct tm_type *r16 = build_resized(&dbl, 1, d1, n1, 16);
    const size_t big = TM_TYPE_MAX_BLOCKS + 5;
    size_t nb[1] = {big};
    int err;
    struct tm_type *v = r16 ? build(r16, 1, d1, nb, &err) : NULL;
    if (!v) return;
    const ptrdiff_t vat = 16, tail = vat + v->extent + 8, span = tail + 8;
    struct tm_flat f;
    tm_flat_init(&f);
    int r = tm_flat_add(&f, 0, 1, &dbl);
    if (!r) r = tm_flat_add(&f, vat, 1, v);
    if (!r) r = tm_flat_add(&f, tail, 1, &dbl);
    struct tm_dtype *s = calloc(1, sizeof *s);
    if (!r) r = tm_flat_finish(&f, &s->t, 0, 0, 0, 0);
    atomic_init(&s->refs, 1);
    const size_t psize = 8 * (big + 2);
    CHECK(r == 0 && tm_type_mapless(&s->t) && s->t.nseg == 3 && s->t.nblocks == big + 2 &&
              s->t.psize == psize && s->t.extent == span,
          "struct of a double, the vector, a double: r %d nseg %zu", r, s->t.nseg);
    struct tm_type *twin = r ? NULL : build_resized(&s->t, 1, d1, n1, span + 64);
    CHECK(twin && twin->nseg == 3 && twin->extent == span + 64, "resized twin: nseg %zu",
          twin ? twin->nseg : 0);
    unsigned char *buf = calloc(1, (size_t)span), *back = calloc(1, (size_t)span);
    unsigned char *pk = malloc(psize), *part = malloc(psize);
    for (ptrdiff_t i = 0; !r && i < span; i += 8)
        memcpy(buf + i, &(double){(double)i}, 8);
    if (!r && buf && back && pk && part) {
        CHECK(tm_type_pack(pk, buf, 1, &s->t, 0, psize) == psize, "pack whole");
        double x;
        memcpy(&x, pk + 8, 8);
        CHECK(x == (double)vat, "packed block 1: %g", x);
        memcpy(&x, pk + psize - 8, 8);
        CHECK(x == (double)tail, "packed last block: %g", x);
        /* pieces cut inside the head, the vector and the tail */
        const size_t cuts[] = {0, 3, 8, 8 * 1000 + 5, psize - 13, psize - 8, psize};
        int bad = 0;
        for (size_t k = 0; k + 1 < sizeof cuts / sizeof *cuts; k++) {
            size_t len = cuts[k + 1] - cuts[k];
            bad += tm_type_pack(part + cuts[k], buf, 1, &s->t, cuts[k], len) != len;
        }
        CHECK(!bad && !memcmp(part, pk, psize), "pack in pieces differs from pack whole");
        for (size_t k = 0; k + 1 < sizeof cuts / sizeof *cuts; k++) {
            size_t len = cuts[k + 1] - cuts[k];
            bad += tm_type_unpack(back, 1, &s->t, cuts[k], pk + cuts[k], len) != len;
        }
        size_t wrong = 0;
        for (ptrdiff_t i = 0; i < span; i++) {
            int data = i < 8 || i >= tail ||
                       (i >= vat && i < vat + 16 * (ptrdiff_t)big && (i - vat) % 16 < 8);
            wrong += data ? back[i] != buf[i] : back[i] != 0;
        }
        CHECK(!bad && !wrong, "unpack in pieces: %zu bytes wrong", wrong);
    }
    free(buf), free(back), free(pk), free(part);
    tm_type_release(twin);
    tm_type_release(&s->t);
    tm_type_release(v);
    tm_type_release(r16);
}

static void test_pack_offsets(void)
{
    /* indexed-like: 1 double at 0, 3 at 24, 2 at 80 -> extent 96, psize 48 */
    ptrdiff_t d[3] = {0, 24, 80};
    size_t n[3] = {1, 3, 2};
    int err;
    struct tm_type *t = build(&dbl, 3, d, n, &err);
    if (!t) return;
    enum { CNT = 5 };
    double src[12 * CNT], back[12 * CNT];
    unsigned char full[48 * CNT], part[48 * CNT];
    for (int i = 0; i < 12 * CNT; i++)
        src[i] = i + 0.5;
    CHECK(tm_type_pack(full, src, CNT, t, 0, sizeof full) == sizeof full, "full pack");
    for (size_t cut = 0; cut <= sizeof full; cut += 3) {
        size_t a = tm_type_pack(part, src, CNT, t, 0, cut);
        size_t b = tm_type_pack(part + cut, src, CNT, t, cut, sizeof full - cut);
        CHECK(a == cut && b == sizeof full - cut && memcmp(part, full, sizeof full) == 0,
              "pack split at %zu differs from the whole", cut);
        for (int i = 0; i < 12 * CNT; i++)
            back[i] = -1;
        tm_type_unpack(back, CNT, t, 0, full, cut);
        tm_type_unpack(back, CNT, t, cut, full + cut, sizeof full - cut);
        for (int i = 0; i < 12 * CNT; i++) {
            int k = i % 12, in = k == 0 || (k >= 3 && k < 6) || k == 10 || k == 11;
            CHECK(back[i] == (in ? src[i] : -1), "unpack split at %zu: back[%d] = %g", cut, i,
                  back[i]);
        }
    }
    /* past the end: nothing */
    CHECK(tm_type_pack(part, src, CNT, t, sizeof full, 8) == 0, "pack past the end");
    tm_type_release(t);
}

static void test_typed_copy(void)
{
    /* vector(4, 1, 3) -> reversed pairs layout; checked against pack + unpack */
    ptrdiff_t dv[4] = {0, 24, 48, 72};
    size_t nv[4] = {1, 1, 1, 1};
    ptrdiff_t dw[2] = {16, 0};
    size_t nw[2] = {2, 2};
    int err;
    struct tm_type *v = build(&dbl, 4, dv, nv, &err), *w = build(&dbl, 2, dw, nw, &err);
    if (!v || !w) return;
    double src[10 * 3], d1[4 * 3], d2[4 * 3];
    unsigned char tmp[32 * 3];
    for (int i = 0; i < 30; i++)
        src[i] = i;
    for (int i = 0; i < 12; i++)
        d1[i] = d2[i] = -1;
    size_t c = tm_type_copy(d1, 3, w, src, 3, v);
    tm_type_pack(tmp, src, 3, v, 0, sizeof tmp);
    tm_type_unpack(d2, 3, w, 0, tmp, sizeof tmp);
    CHECK(c == 96 && memcmp(d1, d2, sizeof d1) == 0, "typed copy differs from pack+unpack");
    CHECK(d1[2] == 0 && d1[3] == 3 && d1[0] == 6 && d1[1] == 9, "typed copy: %g %g %g %g", d1[0],
          d1[1], d1[2], d1[3]);
    /* truncation: a shorter destination takes what fits */
    for (int i = 0; i < 12; i++)
        d1[i] = -1;
    CHECK(tm_type_copy(d1, 1, w, src, 3, v) == 32 && d1[4] == -1, "truncated typed copy");
    tm_type_release(v);
    tm_type_release(w);
}

/* Regular maps (one block length at one stride) take the strided movers: they must give
 * what the block list gives, at every split, between different strides, with elements that
 * continue the stride, with a negative stride, with blocks of odd lengths. */
static void test_regular(void)
{
    ptrdiff_t dcol[5] = {0, 56, 112, 168, 224}; /* a column of a 5 x 7 array of doubles */
    ptrdiff_t dneg[3] = {64, 32, 0};            /* typemap order backwards */
    ptrdiff_t dodd[4] = {0, 5, 10, 15};         /* 3-byte blocks (3 x 1 byte), stride 5 */
    ptrdiff_t done[1] = {0};
    size_t one[5] = {1, 1, 1, 1, 1}, three[4] = {3, 3, 3, 3};
    const struct tm_type byte = {.size = 1,
                                 .extent = 1,
                                 .nbasic = 1,
                                 .basic = TM_T_BYTE,
                                 .contig = 1,
                                 .psize = 1,
                                 .true_ub = 1,
                                 .align = 1,
                                 .nelem = 1};
    int err;
    struct tm_type *col = build(&dbl, 5, dcol, one, &err);
    struct tm_type *col2 = build_resized(&dbl, 5, dcol, one, 8); /* columns side by side */
    struct tm_type *neg = build(&dbl, 3, dneg, one, &err);
    struct tm_type *odd = build(&byte, 4, dodd, three, &err);
    struct tm_type *gap = build_resized(&dbl, 1, done, one, 24); /* one double in 24 bytes */
    struct tm_type *cont = build_resized(&dbl, 3, (ptrdiff_t[]){0, 16, 32}, one, 48);
    struct tm_type *all[] = {col, col2, neg, odd, gap, cont};
    const size_t vn[] = {5, 5, 3, 4, 1, 3}, vlen[] = {8, 8, 8, 3, 8, 8};
    enum { CNT = 3, BUF = 4096 };
    unsigned char *src = malloc(BUF), *full = malloc(BUF), *part = malloc(BUF);
    unsigned char *back = malloc(BUF), *want = malloc(BUF);
    for (int i = 0; i < BUF; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        const struct tm_type *t = all[k];
        CHECK(t && t->vn == vn[k] && t->vlen == vlen[k], "type %zu: vn %zu vlen %zu", k,
              t ? t->vn : 0, t ? t->vlen : 0);
        if (!t) continue;
        const size_t total = CNT * t->psize;
        ref_pack(full, src, CNT, t);
        memset(want, 0xee, BUF); /* the block list's scatter, into the middle of a buffer */
        for (size_t e = 0; e < CNT; e++)
            for (size_t i = 0; i < t->nblocks; i++)
                memcpy(want + 128 + e * t->extent + t->blocks[i].off,
                       src + e * t->extent + t->blocks[i].off, t->blocks[i].len);
        for (size_t cut = 0; cut <= total; cut++) {
            memset(part, 0, total);
            size_t a = tm_type_pack(part, src, CNT, t, 0, cut);
            size_t b = tm_type_pack(part + cut, src, CNT, t, cut, total - cut);
            CHECK(a == cut && b == total - cut && memcmp(part, full, total) == 0,
                  "type %zu: pack split at %zu differs from the block list", k, cut);
            memset(back, 0xee, BUF);
            tm_type_unpack(back + 128, CNT, t, 0, full, cut);
            tm_type_unpack(back + 128, CNT, t, cut, full + cut, total - cut);
            CHECK(memcmp(back, want, BUF) == 0, "type %zu: unpack split at %zu differs", k, cut);
        }
    }
    /* typed to typed between the regular doubles: against pack + unpack, 2 source elements
     * of one into destination elements of another, truncated by whichever is shorter */
    const struct tm_type *dbls[] = {col, col2, neg, gap, cont};
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 5; j++) {
            const struct tm_type *st = dbls[i], *dt = dbls[j];
            if (!st || !dt) continue;
            size_t dcount = 4;
            memset(back, 0xee, BUF);
            memset(want, 0xee, BUF);
            size_t c = tm_type_copy(back + 128, dcount, dt, src, 2, st);
            size_t n = 2 * st->psize < dcount * dt->psize ? 2 * st->psize : dcount * dt->psize;
            tm_type_pack(full, src, 2, st, 0, n);
            tm_type_unpack(want + 128, dcount, dt, 0, full, n);
            CHECK(c == n && memcmp(back, want, BUF) == 0, "typed copy %zu -> %zu differs", i, j);
        }
    /* an irregular map stays on the block list */
    ptrdiff_t d[3] = {0, 24, 80};
    size_t nn[3] = {1, 3, 2};
    struct tm_type *irr = build(&dbl, 3, d, nn, &err);
    CHECK(irr && irr->vn == 0, "irregular blocks: vn %zu", irr ? irr->vn : 99);
    /* A typed copy in two pieces split anywhere (tm_type_copy_at: the chunks of a copy that
     * two ranks share, intra/coop.h) gives the whole copy, regular and irregular maps alike,
     * and writes nothing else. */
    const struct tm_type *pc[] = {col, col2, neg, gap, cont, irr};
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++) {
            const struct tm_type *st = pc[i], *dt = pc[j];
            if (!st || !dt) continue;
            size_t dcount = 3;
            size_t n = 2 * st->psize < dcount * dt->psize ? 2 * st->psize : dcount * dt->psize;
            memset(want, 0xee, BUF);
            tm_type_copy(want + 128, dcount, dt, src, 2, st);
            for (size_t cut = 0; cut <= n; cut++) {
                memset(back, 0xee, BUF);
                size_t a = tm_type_copy_at(back + 128, dcount, dt, src, 2, st, 0, cut);
                size_t b = tm_type_copy_at(back + 128, dcount, dt, src, 2, st, cut, n);
                CHECK(a == cut && b == n - cut && memcmp(back, want, BUF) == 0,
                      "typed copy %zu -> %zu in pieces split at %zu differs", i, j, cut);
            }
            CHECK(tm_type_copy_at(back + 128, dcount, dt, src, 2, st, n, 8) == 0,
                  "a piece past the end of copy %zu -> %zu copied something", i, j);
        }
    tm_type_release(irr);
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        tm_type_release(all[k]);
    free(src);
    free(full);
    free(part);
    free(back);
    free(want);
}

static void test_apply(void)
{
    ptrdiff_t d[2] = {0, 16};
    size_t n[2] = {1, 1};
    int err;
    struct tm_type *t = build(&dbl, 2, d, n, &err); /* doubles at 0 and 16, extent 24 */
    if (!t) return;
    double a[9], b[9];
    for (int i = 0; i < 9; i++)
        a[i] = i, b[i] = 100;
    CHECK(tm_type_apply(TM_OP_SUM, a, b, 3, t) == 0, "SUM on a strided double type");
    for (int i = 0; i < 9; i++) {
        double want = i % 3 == 1 ? 100 : 100 + i;
        CHECK(b[i] == want, "apply: b[%d] expected %g got %g", i, want, b[i]);
    }
    CHECK(tm_type_apply(TM_OP_BAND, a, b, 3, t) == -EINVAL, "BAND on doubles must be refused");
    tm_type_release(t);
}

int main(void)
{
    test_vector_blocks();
    test_merging();
    test_limit();
    test_mapless();
    test_runs();
    test_pack_offsets();
    test_typed_copy();
    test_regular();
    test_apply();
    if (failed) return 1;
    printf("type engine: all checks passed\n");
    return 0;
}
