/* test_type_flat.c — the datatype engine on its own (type_flat.c, type_copy.c, type_ref.c
 * compiled in, no ranks): flattening and merging of blocks, bounds, the block limit, pack and
 * unpack at every split offset, typed-to-typed copies between different layouts, reductions
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
    test_pack_offsets();
    test_typed_copy();
    test_apply();
    if (failed) return 1;
    printf("type engine: all checks passed\n");
    return 0;
}
