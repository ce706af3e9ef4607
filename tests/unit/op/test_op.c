/* Unit tests for libclient/typecore/op.c: every (op, type) pair against a plain reference computed
 * here in 64-bit or long double arithmetic, the exact table of pairs MPI 3.1 §5.9.2 defines, and
 * the edge cases (unsigned and signed wrap, MINLOC/MAXLOC ties, count 0, undefined pairs).
 *
 * The reference deliberately shares nothing with op.c: values are read and written through
 * fixed-width integers or long double chosen by the element's size, and the set of defined
 * pairs is rebuilt from the standard's type groups. */
#include "op.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

/* Elements per vector: odd and longer than any SIMD width, so both the vector body and the
 * scalar tail of each kernel run. */
#define N 37
#define MAX_ELEM 64

static struct {
    unsigned checks;
    unsigned failures;
} stats;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        stats.checks++;                                                                            \
        if (!(cond)) {                                                                             \
            stats.failures++;                                                                      \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* The standard's type groups, as far as the reference needs them. */
enum group {
    G_INT,        /* C integer, fixed-size and multi-language integers */
    G_FLOAT,      /* floating point */
    G_BOOL,       /* logical */
    G_BYTE,       /* byte */
    G_PAIR_INT,   /* MINLOC/MAXLOC pair with an integer value */
    G_PAIR_FLOAT, /* MINLOC/MAXLOC pair with a floating value */
    G_COMPLEX,    /* C complex: SUM and PROD */
    G_NONE,       /* WCHAR, PACKED: only REPLACE and NO_OP */
};

struct pair_float_int {
    float v;
    int i;
};
struct pair_double_int {
    double v;
    int i;
};
struct pair_long_int {
    long v;
    int i;
};
struct pair_2int {
    int v;
    int i;
};
struct pair_2float {
    float v, i;
};
struct pair_2double {
    double v, i;
};
struct pair_short_int {
    short v;
    int i;
};
struct pair_long_double_int {
    long double v;
    int i;
};

struct tdesc {
    enum tm_basic type;
    const char *name;
    enum group group;
    bool is_signed;
    size_t size;  /* of the element */
    size_t vsize; /* of the value (the element itself unless a pair) */
    size_t ioff;  /* pairs: offset of the index */
};

/* S_ signed, U_ unsigned (or signedness irrelevant to the group). */
#define S_(e, g, T)                                                                                \
    {                                                                                              \
        e, #e, g, true, sizeof(T), sizeof(T), 0                                                    \
    }
#define U_(e, g, T)                                                                                \
    {                                                                                              \
        e, #e, g, false, sizeof(T), sizeof(T), 0                                                   \
    }
#define P_(e, g, S, V)                                                                             \
    {                                                                                              \
        e, #e, g, true, sizeof(S), sizeof(V), offsetof(S, i)                                       \
    }

static const struct tdesc types[TM_T__COUNT] = {
    S_(TM_T_CHAR, G_INT, signed char), /* an integer, as in Open MPI and MPICH (op.c) */
    S_(TM_T_SIGNED_CHAR, G_INT, signed char),
    U_(TM_T_UNSIGNED_CHAR, G_INT, unsigned char),
    U_(TM_T_BYTE, G_BYTE, unsigned char),
    S_(TM_T_SHORT, G_INT, short),
    U_(TM_T_UNSIGNED_SHORT, G_INT, unsigned short),
    S_(TM_T_INT, G_INT, int),
    U_(TM_T_UNSIGNED, G_INT, unsigned),
    S_(TM_T_LONG, G_INT, long),
    U_(TM_T_UNSIGNED_LONG, G_INT, unsigned long),
    S_(TM_T_LONG_LONG, G_INT, long long),
    U_(TM_T_UNSIGNED_LONG_LONG, G_INT, unsigned long long),
    S_(TM_T_FLOAT, G_FLOAT, float),
    S_(TM_T_DOUBLE, G_FLOAT, double),
    S_(TM_T_LONG_DOUBLE, G_FLOAT, long double),
    U_(TM_T_WCHAR, G_NONE, wchar_t),
    U_(TM_T_C_BOOL, G_BOOL, bool),
    S_(TM_T_INT8, G_INT, int8_t),
    S_(TM_T_INT16, G_INT, int16_t),
    S_(TM_T_INT32, G_INT, int32_t),
    S_(TM_T_INT64, G_INT, int64_t),
    U_(TM_T_UINT8, G_INT, uint8_t),
    U_(TM_T_UINT16, G_INT, uint16_t),
    U_(TM_T_UINT32, G_INT, uint32_t),
    U_(TM_T_UINT64, G_INT, uint64_t),
    S_(TM_T_AINT, G_INT, intptr_t),
    S_(TM_T_OFFSET, G_INT, long long),
    S_(TM_T_COUNT, G_INT, long long),
    P_(TM_T_FLOAT_INT, G_PAIR_FLOAT, struct pair_float_int, float),
    P_(TM_T_DOUBLE_INT, G_PAIR_FLOAT, struct pair_double_int, double),
    P_(TM_T_LONG_INT, G_PAIR_INT, struct pair_long_int, long),
    P_(TM_T_2INT, G_PAIR_INT, struct pair_2int, int),
    P_(TM_T_SHORT_INT, G_PAIR_INT, struct pair_short_int, short),
    P_(TM_T_LONG_DOUBLE_INT, G_PAIR_FLOAT, struct pair_long_double_int, long double),
    U_(TM_T_PACKED, G_NONE, unsigned char),
    S_(TM_T_C_FLOAT_COMPLEX, G_COMPLEX, float _Complex),
    S_(TM_T_C_DOUBLE_COMPLEX, G_COMPLEX, double _Complex),
    S_(TM_T_C_LONG_DOUBLE_COMPLEX, G_COMPLEX, long double _Complex),
    P_(TM_T_2FLOAT, G_PAIR_FLOAT, struct pair_2float, float),
    P_(TM_T_2DOUBLE, G_PAIR_FLOAT, struct pair_2double, double),
};

static const char *const op_names[TM_OP__COUNT] = {
    "SUM",  "PROD", "MIN",  "MAX",    "LAND",   "LOR",     "LXOR",
    "BAND", "BOR",  "BXOR", "MINLOC", "MAXLOC", "REPLACE", "NO_OP",
};

/* MPI 3.1 §5.9.2 as TMPI specifies it: "integer" includes AINT, OFFSET and COUNT for every
 * op, the logical ones too (the standard leaves those out of LAND/LOR/LXOR), and MPI_CHAR
 * (the standard leaves it out of every op). */
static bool expect_defined(enum tm_opkind op, const struct tdesc *d)
{
    switch (op) {
    case TM_OP_SUM:
    case TM_OP_PROD:
        return d->group == G_INT || d->group == G_FLOAT || d->group == G_COMPLEX;
    case TM_OP_MIN:
    case TM_OP_MAX:
        return d->group == G_INT || d->group == G_FLOAT;
    case TM_OP_LAND:
    case TM_OP_LOR:
    case TM_OP_LXOR:
        return d->group == G_INT || d->group == G_BOOL;
    case TM_OP_BAND:
    case TM_OP_BOR:
    case TM_OP_BXOR:
        return d->group == G_INT || d->group == G_BYTE;
    case TM_OP_MINLOC:
    case TM_OP_MAXLOC:
        return d->group == G_PAIR_INT || d->group == G_PAIR_FLOAT;
    case TM_OP_REPLACE:
    case TM_OP_NO_OP:
        return true;
    default:
        return false;
    }
}

/* Integers of 1, 2, 4 or 8 bytes, read sign- or zero-extended to 64 bits. */
static uint64_t load_int(const void *p, size_t size, bool is_signed)
{
    switch (size) {
    case 1: {
        uint8_t u;
        memcpy(&u, p, 1);
        return is_signed ? (uint64_t)(int64_t)(int8_t)u : u;
    }
    case 2: {
        uint16_t u;
        memcpy(&u, p, 2);
        return is_signed ? (uint64_t)(int64_t)(int16_t)u : u;
    }
    case 4: {
        uint32_t u;
        memcpy(&u, p, 4);
        return is_signed ? (uint64_t)(int64_t)(int32_t)u : u;
    }
    default: {
        uint64_t u;
        memcpy(&u, p, 8);
        return u;
    }
    }
}

/* Stores the low size bytes' worth of v: the value modulo 2^(8*size). */
static void store_int(void *p, size_t size, uint64_t v)
{
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;

    switch (size) {
    case 1:
        memcpy(p, &u8, 1);
        break;
    case 2:
        memcpy(p, &u16, 2);
        break;
    case 4:
        memcpy(p, &u32, 4);
        break;
    default:
        memcpy(p, &v, 8);
    }
}

static long double load_flt(const void *p, size_t size)
{
    float f;
    double d;
    long double l;

    if (size == sizeof(float)) {
        memcpy(&f, p, sizeof(f));
        return f;
    }
    if (size == sizeof(double)) {
        memcpy(&d, p, sizeof(d));
        return d;
    }
    memcpy(&l, p, sizeof(l));
    return l;
}

static void store_flt(void *p, size_t size, long double v)
{
    float f = (float)v;
    double d = (double)v;

    if (size == sizeof(float))
        memcpy(p, &f, sizeof(f));
    else if (size == sizeof(double))
        memcpy(p, &d, sizeof(d));
    else
        memcpy(p, &v, sizeof(v));
}

/* Fortran's pairs (MPI_2REAL, MPI_2DOUBLE_PRECISION) keep the index in the value's type. */
static bool float_index(const struct tdesc *d)
{
    return d->type == TM_T_2FLOAT || d->type == TM_T_2DOUBLE;
}

static int load_index(const void *elem, const struct tdesc *d)
{
    if (float_index(d)) return (int)load_flt((const char *)elem + d->ioff, d->vsize);
    int i;
    memcpy(&i, (const char *)elem + d->ioff, sizeof(i));
    return i;
}

static void store_index(void *elem, const struct tdesc *d, int i)
{
    if (float_index(d)) {
        store_flt((char *)elem + d->ioff, d->vsize, i);
        return;
    }
    memcpy((char *)elem + d->ioff, &i, sizeof(i));
}

/* Integer inputs: negatives, zero, extremes of every width, values whose sums and products
 * wrap, and values like 0x100 whose low byte is zero (logical ops must see them as true). */
/* clang-format off */
static const int64_t int_seeds[] = {
    0, 1, -1, 2, -2, 3, 7, -100, 127, -128, 128, 255, 256, 0x100, 32767, -32768, 65535, 65536,
    INT32_MAX, INT32_MIN, UINT32_MAX, INT64_MAX, INT64_MIN, -3, 12345, -987654321, 0x5555,
    0x7f7f7f7f, (int64_t)0xdeadbeefcafebabeULL, 1000003, -77, 40000, 200,
};
/* clang-format on */
#define N_INT_SEEDS (sizeof(int_seeds) / sizeof(int_seeds[0]))

/* Floating inputs: every sum and product of two of them is exact in float, so the
 * reference and the kernel agree bit for bit; no NaN, no signed zero ties. */
static const double flt_seeds[] = {
    0.0, 1.0, -1.0, 2.5, -3.25, 0.5, 100.0, -7.0, 1024.0, -0.125, 3.0, 6.75, -4096.0, 0.375,
};
#define N_FLT_SEEDS (sizeof(flt_seeds) / sizeof(flt_seeds[0]))

/* Pair values: few distinct ones, so equal values (ties) occur often. */
static const int pair_seeds[] = {-5, 3, 0, 3, -5, 8, 1};
#define N_PAIR_SEEDS (sizeof(pair_seeds) / sizeof(pair_seeds[0]))

static void fill(const struct tdesc *d, unsigned char *in, unsigned char *io)
{
    memset(in, 0, N * d->size);
    memset(io, 0, N * d->size);
    for (size_t k = 0; k < N; k++) {
        unsigned char *a = in + k * d->size, *b = io + k * d->size;
        switch (d->group) {
        case G_INT:
        case G_BYTE:
            store_int(a, d->size, (uint64_t)int_seeds[k % N_INT_SEEDS]);
            store_int(b, d->size, (uint64_t)int_seeds[(k * 7 + 3) % N_INT_SEEDS]);
            break;
        case G_COMPLEX: /* small integers: sums and products are exact */
            store_flt(a, d->size / 2, (double)(k % 7) - 3);
            store_flt(a + d->size / 2, d->size / 2, (double)(k % 5));
            store_flt(b, d->size / 2, (double)(k % 3) + 1);
            store_flt(b + d->size / 2, d->size / 2, (double)(k % 4) - 2);
            break;
        case G_FLOAT:
            store_flt(a, d->size, flt_seeds[k % N_FLT_SEEDS]);
            store_flt(b, d->size, flt_seeds[(k * 5 + 2) % N_FLT_SEEDS]);
            break;
        case G_BOOL: {
            /* Only 0 and 1: any other bit pattern in a bool is not a value. */
            bool x = k & 1, y = (k >> 1) & 1;
            memcpy(a, &x, sizeof(x));
            memcpy(b, &y, sizeof(y));
            break;
        }
        case G_PAIR_INT:
        case G_PAIR_FLOAT: {
            int va = pair_seeds[k % N_PAIR_SEEDS];
            /* Every third element a tie; the index order alternates between sides. */
            int vb = k % 3 == 0 ? va : pair_seeds[(k * 3 + 1) % N_PAIR_SEEDS];
            if (d->group == G_PAIR_INT) {
                store_int(a, d->vsize, (uint64_t)(int64_t)va);
                store_int(b, d->vsize, (uint64_t)(int64_t)vb);
            } else {
                store_flt(a, d->vsize, va * 1.5);
                store_flt(b, d->vsize, vb * 1.5);
            }
            int ia = (int)(k * 5 % 11) - 3, ib = (int)(k * 3 % 7);
            store_index(a, d, ia);
            store_index(b, d, ib);
            break;
        }
        case G_NONE:
            for (size_t j = 0; j < d->size; j++) {
                a[j] = (unsigned char)(k * 31 + j * 7 + 1);
                b[j] = (unsigned char)(k * 17 + j * 3 + 200);
            }
            break;
        }
    }
}

static uint64_t ref_int(enum tm_opkind op, uint64_t a, uint64_t b, bool is_signed)
{
    bool lt = is_signed ? (int64_t)a < (int64_t)b : a < b;

    switch (op) {
    case TM_OP_SUM:
        return a + b;
    case TM_OP_PROD:
        return a * b;
    case TM_OP_MIN:
        return lt ? a : b;
    case TM_OP_MAX:
        return lt ? b : a;
    case TM_OP_LAND:
        return a != 0 && b != 0;
    case TM_OP_LOR:
        return a != 0 || b != 0;
    case TM_OP_LXOR:
        return (a != 0) != (b != 0);
    case TM_OP_BAND:
        return a & b;
    case TM_OP_BOR:
        return a | b;
    case TM_OP_BXOR:
        return a ^ b;
    default:
        return 0;
    }
}

static long double ref_flt(enum tm_opkind op, long double a, long double b)
{
    switch (op) {
    case TM_OP_SUM:
        return a + b;
    case TM_OP_PROD:
        return a * b;
    case TM_OP_MIN:
        return a < b ? a : b;
    default:
        return a > b ? a : b;
    }
}

/* Checks element k of a kernel's output (got) against the reference for in and io0 (the
 * inout buffer before the call). */
static void check_elem(enum tm_opkind op, const struct tdesc *d, size_t k, const unsigned char *in,
                       const unsigned char *io0, const unsigned char *got)
{
    const unsigned char *a = in + k * d->size, *b = io0 + k * d->size, *g = got + k * d->size;
    unsigned char want[MAX_ELEM];

    if (op == TM_OP_REPLACE || op == TM_OP_NO_OP) {
        const unsigned char *src = op == TM_OP_REPLACE ? a : b;
        CHECK(memcmp(src, g, d->size) == 0, "%s %s [%zu]: bytes differ from %s", op_names[op],
              d->name, k, op == TM_OP_REPLACE ? "in" : "the original inout");
        return;
    }

    switch (d->group) {
    case G_INT:
    case G_BYTE: {
        uint64_t x = load_int(a, d->size, d->is_signed), y = load_int(b, d->size, d->is_signed);
        store_int(want, d->size, ref_int(op, x, y, d->is_signed));
        uint64_t w = load_int(want, d->size, d->is_signed), r = load_int(g, d->size, d->is_signed);
        if (d->is_signed)
            CHECK(w == r,
                  "%s %s [%zu]: in=%" PRId64 " inout=%" PRId64 " expected %" PRId64 " got %" PRId64,
                  op_names[op], d->name, k, (int64_t)x, (int64_t)y, (int64_t)w, (int64_t)r);
        else
            CHECK(w == r,
                  "%s %s [%zu]: in=%" PRIu64 " inout=%" PRIu64 " expected %" PRIu64 " got %" PRIu64,
                  op_names[op], d->name, k, x, y, w, r);
        break;
    }
    case G_FLOAT: {
        long double x = load_flt(a, d->size), y = load_flt(b, d->size);
        store_flt(want, d->size, ref_flt(op, x, y));
        long double w = load_flt(want, d->size), r = load_flt(g, d->size);
        CHECK(w == r, "%s %s [%zu]: in=%Lg inout=%Lg expected %Lg got %Lg", op_names[op], d->name,
              k, x, y, w, r);
        break;
    }
    case G_BOOL: {
        bool x, y, r;
        memcpy(&x, a, 1);
        memcpy(&y, b, 1);
        memcpy(&r, g, 1);
        bool w = ref_int(op, x, y, false) != 0;
        CHECK(w == r, "%s %s [%zu]: in=%d inout=%d expected %d got %d", op_names[op], d->name, k, x,
              y, w, r);
        break;
    }
    case G_PAIR_INT:
    case G_PAIR_FLOAT: {
        long double x, y, r;
        if (d->group == G_PAIR_INT) {
            x = (long double)(int64_t)load_int(a, d->vsize, true);
            y = (long double)(int64_t)load_int(b, d->vsize, true);
            r = (long double)(int64_t)load_int(g, d->vsize, true);
        } else {
            x = load_flt(a, d->vsize);
            y = load_flt(b, d->vsize);
            r = load_flt(g, d->vsize);
        }
        int ix = load_index(a, d), iy = load_index(b, d), ir = load_index(g, d);
        /* §5.9.4: the better value wins with its index; equal values take the smaller index. */
        bool a_wins = op == TM_OP_MINLOC ? x < y : x > y;
        bool b_wins = op == TM_OP_MINLOC ? y < x : y > x;
        long double w = a_wins ? x : y;
        int iw = a_wins ? ix : b_wins ? iy : (ix < iy ? ix : iy);
        CHECK(w == r && iw == ir,
              "%s %s [%zu]: in=(%Lg,%d) inout=(%Lg,%d) expected (%Lg,%d) got "
              "(%Lg,%d)",
              op_names[op], d->name, k, x, ix, y, iy, w, iw, r, ir);
        break;
    }
    case G_COMPLEX: {
        size_t h = d->size / 2;
        long double xr = load_flt(a, h), xi = load_flt(a + h, h), yr = load_flt(b, h),
                    yi = load_flt(b + h, h), rr = load_flt(g, h), ri = load_flt(g + h, h);
        long double wr = op == TM_OP_SUM ? xr + yr : xr * yr - xi * yi;
        long double wi = op == TM_OP_SUM ? xi + yi : xr * yi + xi * yr;
        CHECK(wr == rr && wi == ri, "%s %s [%zu]: expected (%Lg,%Lg) got (%Lg,%Lg)", op_names[op],
              d->name, k, wr, wi, rr, ri);
        break;
    }
    case G_NONE:
        CHECK(0, "%s %s: defined but the test has no reference", op_names[op], d->name);
        break;
    }
}

static _Alignas(max_align_t) unsigned char buf_in[N * MAX_ELEM];
static _Alignas(max_align_t) unsigned char buf_io[N * MAX_ELEM];
static _Alignas(max_align_t) unsigned char buf_io0[N * MAX_ELEM];

/* Every (op, type): definedness agrees with the table, defined pairs compute the reference
 * (on the full vector and on a prefix, to catch a kernel writing past count), undefined pairs
 * return -EINVAL and leave inout alone. */
static void test_all_pairs(void)
{
    unsigned n_defined = 0;

    for (int t = 0; t < TM_T__COUNT; t++) {
        const struct tdesc *d = &types[t];
        CHECK(d->type == (enum tm_basic)t, "test table out of order at %d (%s)", t, d->name);
        CHECK(d->size <= MAX_ELEM, "%s: element of %zu bytes exceeds the test's buffers", d->name,
              d->size);
        for (int o = 0; o < TM_OP__COUNT; o++) {
            enum tm_opkind op = (enum tm_opkind)o;
            bool want = expect_defined(op, d);
            int got = tm_op_defined(op, d->type);
            n_defined += want;
            CHECK(got == want, "tm_op_defined(%s, %s): expected %d got %d", op_names[o], d->name,
                  want, got);

            for (size_t count = N; count >= N - 5; count -= 5) {
                fill(d, buf_in, buf_io);
                memcpy(buf_io0, buf_io, N * d->size);
                int r = tm_op_apply(op, d->type, buf_in, buf_io, count);
                if (!want) {
                    CHECK(r == -EINVAL, "tm_op_apply(%s, %s): expected -EINVAL got %d", op_names[o],
                          d->name, r);
                    CHECK(memcmp(buf_io, buf_io0, N * d->size) == 0,
                          "tm_op_apply(%s, %s) undefined but wrote to inout", op_names[o], d->name);
                    continue;
                }
                CHECK(r == 0, "tm_op_apply(%s, %s): expected 0 got %d", op_names[o], d->name, r);
                for (size_t k = 0; k < count; k++)
                    check_elem(op, d, k, buf_in, buf_io0, buf_io);
                CHECK(memcmp(buf_io + count * d->size, buf_io0 + count * d->size,
                             (N - count) * d->size) == 0,
                      "tm_op_apply(%s, %s, count %zu) wrote past count", op_names[o], d->name,
                      count);
            }
        }
    }
    /* 22 integer types (CHAR among them) x 10 ops + 3 floating x 4 + 3 complex x 2 + C_BOOL x 3
     * + BYTE x 3 + 8 pairs x 2 + 40 types x (REPLACE, NO_OP): guards the rules above against an
     * edit that drops a group. */
    CHECK(n_defined == 340, "defined pairs: expected 340 got %u", n_defined);
}

/* Count 0 reads and writes nothing, so NULL buffers are fine; undefined stays -EINVAL. */
static void test_count_zero(void)
{
    for (int t = 0; t < TM_T__COUNT; t++) {
        const struct tdesc *d = &types[t];
        for (int o = 0; o < TM_OP__COUNT; o++) {
            int want = expect_defined((enum tm_opkind)o, d) ? 0 : -EINVAL;
            int r = tm_op_apply((enum tm_opkind)o, d->type, NULL, NULL, 0);
            CHECK(r == want, "tm_op_apply(%s, %s, NULL, NULL, 0): expected %d got %d", op_names[o],
                  d->name, want, r);

            fill(d, buf_in, buf_io);
            memcpy(buf_io0, buf_io, N * d->size);
            r = tm_op_apply((enum tm_opkind)o, d->type, buf_in, buf_io, 0);
            CHECK(r == want && memcmp(buf_io, buf_io0, N * d->size) == 0,
                  "tm_op_apply(%s, %s, count 0): expected %d and inout untouched, got %d%s",
                  op_names[o], d->name, want, r,
                  memcmp(buf_io, buf_io0, N * d->size) ? " and inout changed" : "");
        }
    }
}

static void test_out_of_range(void)
{
    int x = 1, y = 2;
    int r;

    r = tm_op_apply(TM_OP__COUNT, TM_T_INT, &x, &y, 1);
    CHECK(r == -EINVAL && y == 2, "op TM_OP__COUNT: expected -EINVAL got %d (inout %d)", r, y);
    r = tm_op_apply(TM_OP_SUM, TM_T__COUNT, &x, &y, 1);
    CHECK(r == -EINVAL && y == 2, "type TM_T__COUNT: expected -EINVAL got %d (inout %d)", r, y);
    r = tm_op_apply((enum tm_opkind) - 1, TM_T_INT, &x, &y, 1);
    CHECK(r == -EINVAL && y == 2, "op -1: expected -EINVAL got %d (inout %d)", r, y);
    r = tm_op_apply(TM_OP_SUM, (enum tm_basic) - 1, &x, &y, 1);
    CHECK(r == -EINVAL && y == 2, "type -1: expected -EINVAL got %d (inout %d)", r, y);
    CHECK(!tm_op_defined(TM_OP__COUNT, TM_T_INT), "tm_op_defined(TM_OP__COUNT, INT) is 1");
    CHECK(!tm_op_defined(TM_OP_SUM, TM_T__COUNT), "tm_op_defined(SUM, TM_T__COUNT) is 1");
    CHECK(!tm_op_defined((enum tm_opkind) - 1, TM_T_INT), "tm_op_defined(-1, INT) is 1");
    CHECK(tm_basic_size(TM_T__COUNT) == 0, "tm_basic_size(TM_T__COUNT): expected 0 got %zu",
          tm_basic_size(TM_T__COUNT));
    CHECK(tm_basic_size((enum tm_basic) - 1) == 0, "tm_basic_size(-1): expected 0 got %zu",
          tm_basic_size((enum tm_basic) - 1));
}

static void test_sizes(void)
{
    for (int t = 0; t < TM_T__COUNT; t++)
        CHECK(tm_basic_size((enum tm_basic)t) == types[t].size,
              "tm_basic_size(%s): expected %zu got %zu", types[t].name, types[t].size,
              tm_basic_size((enum tm_basic)t));
    CHECK(tm_basic_size(TM_T_DOUBLE_INT) == sizeof(struct {
              double d;
              int i;
          }),
          "tm_basic_size(DOUBLE_INT) is not sizeof(struct {double d; int i;})");
    CHECK(tm_basic_size(TM_T_PACKED) == 1, "tm_basic_size(PACKED): expected 1 got %zu",
          tm_basic_size(TM_T_PACKED));
}

/* The cases the brief names, spelled out, so a failure points straight at them. */
static void test_spot_cases(void)
{
    unsigned ua[2] = {UINT_MAX, 3}, ub[2] = {2, UINT_MAX};
    tm_op_apply(TM_OP_SUM, TM_T_UNSIGNED, ua, ub, 2);
    CHECK(ub[0] == 1 && ub[1] == 2, "SUM UNSIGNED wrap: expected {1, 2} got {%u, %u}", ub[0],
          ub[1]);

    uint8_t pa = 200, pb = 2;
    tm_op_apply(TM_OP_PROD, TM_T_UINT8, &pa, &pb, 1);
    CHECK(pb == 144, "PROD UINT8 200*2: expected 144 got %u", pb);

    /* 65535 * 65535 overflows int if the kernel lets unsigned short promote to int. */
    unsigned short sa = 65535, sb = 65535;
    tm_op_apply(TM_OP_PROD, TM_T_UNSIGNED_SHORT, &sa, &sb, 1);
    CHECK(sb == 1, "PROD UNSIGNED_SHORT 65535^2: expected 1 got %u", sb);

    /* Signed overflow wraps and, under -fsanitize=undefined, reports nothing. */
    int ia = INT_MAX, ib = 1;
    tm_op_apply(TM_OP_SUM, TM_T_INT, &ia, &ib, 1);
    CHECK(ib == INT_MIN, "SUM INT INT_MAX+1: expected %d got %d", INT_MIN, ib);
    int64_t la = INT64_MIN, lb = -1;
    tm_op_apply(TM_OP_PROD, TM_T_INT64, &la, &lb, 1);
    CHECK(lb == INT64_MIN, "PROD INT64 INT64_MIN*-1: expected %" PRId64 " got %" PRId64, INT64_MIN,
          lb);

    /* Logical ops are on truth values, not bits: 0x100 and 2 are both true. */
    int land_a = 0x100, land_b = 2;
    tm_op_apply(TM_OP_LAND, TM_T_INT, &land_a, &land_b, 1);
    CHECK(land_b == 1, "LAND INT 0x100, 2: expected 1 got %d", land_b);
    unsigned char lx_a = 0x80, lx_b = 0x01;
    tm_op_apply(TM_OP_LXOR, TM_T_UNSIGNED_CHAR, &lx_a, &lx_b, 1);
    CHECK(lx_b == 0, "LXOR UNSIGNED_CHAR 0x80, 0x01: expected 0 got %u", lx_b);

    /* MPI_CHAR is a signed char, as the OSU reduction benchmarks need on every MPI:
     * 100 + 100 wraps to -56, 0xff is -1 and the smallest, 0x80 is -128. */
    char ca[3] = {100, (char)0xff, (char)0x80}, cb[3] = {100, 1, 0x7f};
    tm_op_apply(TM_OP_SUM, TM_T_CHAR, ca, cb, 1);
    CHECK((signed char)cb[0] == -56, "SUM CHAR 100+100: expected -56 got %d", (signed char)cb[0]);
    tm_op_apply(TM_OP_MIN, TM_T_CHAR, ca + 1, cb + 1, 1);
    CHECK((signed char)cb[1] == -1, "MIN CHAR 0xff, 1: expected -1 got %d", (signed char)cb[1]);
    tm_op_apply(TM_OP_MAX, TM_T_CHAR, ca + 2, cb + 2, 1);
    CHECK(cb[2] == 0x7f, "MAX CHAR 0x80, 0x7f: expected 127 got %d", (signed char)cb[2]);
    char cp_a = -3, cp_b = 5;
    tm_op_apply(TM_OP_PROD, TM_T_CHAR, &cp_a, &cp_b, 1);
    CHECK(cp_b == -15, "PROD CHAR -3*5: expected -15 got %d", (signed char)cp_b);

    /* Ties: the smaller index, whether it comes from in or from inout. */
    struct pair_double_int din[2] = {{5.0, 7}, {5.0, 1}}, dio[2] = {{5.0, 2}, {5.0, 9}};
    tm_op_apply(TM_OP_MINLOC, TM_T_DOUBLE_INT, din, dio, 2);
    CHECK(dio[0].i == 2 && dio[1].i == 1,
          "MINLOC DOUBLE_INT ties: expected indices {2, 1} got "
          "{%d, %d}",
          dio[0].i, dio[1].i);
    struct pair_2int iin[2] = {{-4, 3}, {-4, 0}}, iio[2] = {{-4, 1}, {-4, 6}};
    tm_op_apply(TM_OP_MAXLOC, TM_T_2INT, iin, iio, 2);
    CHECK(iio[0].i == 1 && iio[1].i == 0,
          "MAXLOC 2INT ties: expected indices {1, 0} got "
          "{%d, %d}",
          iio[0].i, iio[1].i);

    /* The winning value carries its own index, even when it is the larger one. */
    struct pair_float_int fin = {1.0f, 9}, fio = {2.0f, 0};
    tm_op_apply(TM_OP_MINLOC, TM_T_FLOAT_INT, &fin, &fio, 1);
    CHECK(fio.v == 1.0f && fio.i == 9, "MINLOC FLOAT_INT: expected (1,9) got (%g,%d)",
          (double)fio.v, fio.i);

    /* REPLACE: `in` wins; the same buffer on both sides is allowed. */
    double ra[3] = {1, 2, 3}, rb[3] = {4, 5, 6};
    tm_op_apply(TM_OP_REPLACE, TM_T_DOUBLE, ra, rb, 3);
    CHECK(rb[0] == 1 && rb[1] == 2 && rb[2] == 3,
          "REPLACE DOUBLE: expected {1,2,3} got "
          "{%g,%g,%g}",
          rb[0], rb[1], rb[2]);
    int r = tm_op_apply(TM_OP_REPLACE, TM_T_DOUBLE, ra, ra, 3);
    CHECK(r == 0 && ra[0] == 1 && ra[2] == 3,
          "REPLACE DOUBLE in place: expected 0 and {1,2,3}, "
          "got %d and {%g,%g,%g}",
          r, ra[0], ra[1], ra[2]);
}

/* The pairs in packed form (value then index, no padding: tm_op_apply_packed) combine exactly
 * as their C structs do, for every pair type, MINLOC, MAXLOC and REPLACE; tm_basic_psize is
 * value plus index. */
static void test_packed_pairs(void)
{
    static const enum tm_opkind ops[] = {TM_OP_MINLOC, TM_OP_MAXLOC, TM_OP_REPLACE};
    for (size_t t = 0; t < TM_T__COUNT; t++) {
        const struct tdesc *d = &types[t];
        if (d->group != G_PAIR_INT && d->group != G_PAIR_FLOAT) continue;
        /* Fortran's pairs keep the index in the value's type */
        const int fortran = d->type == TM_T_2FLOAT || d->type == TM_T_2DOUBLE;
        const size_t is = fortran ? d->vsize : sizeof(int), ps = d->vsize + is;
        CHECK(tm_basic_psize(d->type) == ps, "tm_basic_psize(%s): expected %zu got %zu", d->name,
              ps, tm_basic_psize(d->type));
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            static unsigned char in[N * 64], io[N * 64], pin[N * 64], pio[N * 64];
            fill(d, in, io);
            for (size_t k = 0; k < N; k++)
                for (int side = 0; side < 2; side++) {
                    const unsigned char *src = (side ? io : in) + k * d->size;
                    unsigned char *dst = (side ? pio : pin) + k * ps;
                    memcpy(dst, src, d->vsize);
                    memcpy(dst + d->vsize, src + d->ioff, is);
                }
            CHECK(tm_op_apply(ops[o], d->type, in, io, N) == 0, "%s %s", op_names[ops[o]], d->name);
            CHECK(tm_op_apply_packed(ops[o], d->type, pin, pio, N) == 0, "packed %s %s",
                  op_names[ops[o]], d->name);
            for (size_t k = 0; k < N; k++) {
                const unsigned char *want = io + k * d->size, *got = pio + k * ps;
                CHECK(!memcmp(got, want, d->vsize) && !memcmp(got + d->vsize, want + d->ioff, is),
                      "packed %s %s: element %zu differs from the struct kernel's",
                      op_names[ops[o]], d->name, k);
            }
        }
    }
    CHECK(tm_op_apply_packed(TM_OP_SUM, TM_T_DOUBLE_INT, NULL, NULL, 1) == -EINVAL,
          "packed SUM on DOUBLE_INT must be undefined");
    CHECK(tm_basic_psize(TM_T_DOUBLE) == sizeof(double), "tm_basic_psize(DOUBLE)");
}

int main(void)
{
    test_sizes();
    test_all_pairs();
    test_count_zero();
    test_out_of_range();
    test_spot_cases();
    test_packed_pairs();

    if (stats.failures) {
        fprintf(stderr, "test_op: %u of %u checks failed\n", stats.failures, stats.checks);
        return 1;
    }
    printf("test_op: %u checks passed\n", stats.checks);
    return 0;
}
