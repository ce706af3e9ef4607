/* test_coll_reduce.c — the combining collectives: Reduce, Allreduce, Reduce_scatter,
 * Reduce_scatter_block, Scan, Exscan and Reduce_local.
 *  - every predefined op on every predefined type: defined pairs give the reference result
 *    (combined in rank order with MPI_Reduce_local), undefined pairs fail with MPI_ERR_OP;
 *  - counts 0/1/odd/large, fixed and rotating roots, MPI_IN_PLACE, on 1..16 ranks and on world,
 *    dup, split and split_type;
 *  - user ops: a commutative sum and a non-commutative 2x2 matrix product on a contiguous type,
 *    checked against the product in rank order. */
#include <stdint.h>
#include <wchar.h>

#include "coll_check.h"

/* ---- generic typed values ---- */

struct fi {
    float v;
    int i;
};
struct di {
    double v;
    int i;
};
struct li {
    long v;
    int i;
};
struct ii {
    int v;
    int i;
};
struct si {
    short v;
    int i;
};
struct ldi {
    long double v;
    int i;
};

static const MPI_Datatype all_types[] = {
    MPI_CHAR,          MPI_SIGNED_CHAR,
    MPI_UNSIGNED_CHAR, MPI_BYTE,
    MPI_SHORT,         MPI_UNSIGNED_SHORT,
    MPI_INT,           MPI_UNSIGNED,
    MPI_LONG,          MPI_UNSIGNED_LONG,
    MPI_LONG_LONG,     MPI_UNSIGNED_LONG_LONG,
    MPI_FLOAT,         MPI_DOUBLE,
    MPI_LONG_DOUBLE,   MPI_WCHAR,
    MPI_C_BOOL,        MPI_INT8_T,
    MPI_INT16_T,       MPI_INT32_T,
    MPI_INT64_T,       MPI_UINT8_T,
    MPI_UINT16_T,      MPI_UINT32_T,
    MPI_UINT64_T,      MPI_AINT,
    MPI_OFFSET,        MPI_COUNT,
    MPI_FLOAT_INT,     MPI_DOUBLE_INT,
    MPI_LONG_INT,      MPI_2INT,
    MPI_SHORT_INT,     MPI_LONG_DOUBLE_INT,
};
#define NTYPES (int)(sizeof all_types / sizeof all_types[0])

static const MPI_Op all_ops[] = {MPI_SUM,  MPI_PROD, MPI_MIN, MPI_MAX,  MPI_LAND,   MPI_LOR,
                                 MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
#define NOPS (int)(sizeof all_ops / sizeof all_ops[0])

/* Stores small value v (and index ix for pairs) as element i of a buffer of type dt.  Values
 * stay small so float sums and products are exact whatever the grouping. */
static void put(MPI_Datatype dt, void *b, int i, int v, int ix)
{
#define P(T) ((T *)b)[i] = (T)v
#define PP(T) ((T *)b)[i].v = v, ((T *)b)[i].i = ix
    switch (dt) {
    case MPI_CHAR:
        P(char);
        break;
    case MPI_SIGNED_CHAR:
    case MPI_INT8_T:
        P(int8_t);
        break;
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_UINT8_T:
        P(uint8_t);
        break;
    case MPI_SHORT:
    case MPI_INT16_T:
        P(int16_t);
        break;
    case MPI_UNSIGNED_SHORT:
    case MPI_UINT16_T:
        P(uint16_t);
        break;
    case MPI_INT:
    case MPI_INT32_T:
        P(int32_t);
        break;
    case MPI_UNSIGNED:
    case MPI_UINT32_T:
        P(uint32_t);
        break;
    case MPI_LONG:
        P(long);
        break;
    case MPI_UNSIGNED_LONG:
        P(unsigned long);
        break;
    case MPI_LONG_LONG:
    case MPI_INT64_T:
    case MPI_OFFSET:
    case MPI_COUNT:
        P(int64_t);
        break;
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_UINT64_T:
        P(uint64_t);
        break;
    case MPI_AINT:
        P(MPI_Aint);
        break;
    case MPI_FLOAT:
        P(float);
        break;
    case MPI_DOUBLE:
        P(double);
        break;
    case MPI_LONG_DOUBLE:
        P(long double);
        break;
    case MPI_WCHAR:
        P(wchar_t);
        break;
    case MPI_C_BOOL:
        ((_Bool *)b)[i] = v & 1;
        break;
    case MPI_FLOAT_INT:
        PP(struct fi);
        break;
    case MPI_DOUBLE_INT:
        PP(struct di);
        break;
    case MPI_LONG_INT:
        PP(struct li);
        break;
    case MPI_2INT:
        PP(struct ii);
        break;
    case MPI_SHORT_INT:
        PP(struct si);
        break;
    case MPI_LONG_DOUBLE_INT:
        PP(struct ldi);
        break;
    default:
        abort();
    }
#undef P
#undef PP
}

/* Compares n elements, ignoring padding (long double and the pair structs have some). */
static int same(MPI_Datatype dt, const void *a, const void *b, int n)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(dt, &lb, &ext);
    int sz;
    MPI_Type_size(dt, &sz);
    for (int i = 0; i < n; i++) {
        const unsigned char *x = (const unsigned char *)a + i * ext;
        const unsigned char *y = (const unsigned char *)b + i * ext;
        if (dt == MPI_LONG_DOUBLE) {
            if (*(const long double *)x != *(const long double *)y) return 0;
        } else if (dt == MPI_LONG_DOUBLE_INT) {
            const struct ldi *p = (const void *)x, *q = (const void *)y;
            if (p->v != q->v || p->i != q->i) return 0;
        } else if (ext != sz) { /* pairs: compare the fields, not the padding */
#define CMPF(T)                                                                                    \
    if (((const T *)x)->v != ((const T *)y)->v || ((const T *)x)->i != ((const T *)y)->i) return 0
            switch (dt) {
            case MPI_FLOAT_INT:
                CMPF(struct fi);
                break;
            case MPI_DOUBLE_INT:
                CMPF(struct di);
                break;
            case MPI_LONG_INT:
                CMPF(struct li);
                break;
            case MPI_SHORT_INT:
                CMPF(struct si);
                break;
            default:
                abort();
            }
#undef CMPF
        } else if (memcmp(x, y, (size_t)sz)) {
            return 0;
        }
    }
    return 1;
}

/* Member k's input element i. */
static void fill(MPI_Datatype dt, void *b, int n, int k, int salt)
{
    for (int i = 0; i < n; i++)
        put(dt, b, i, (k * 7 + i * 3 + salt) % 3 + 1, (k * 5 + i) % 4);
}

/* ---- every op on every type: Allreduce, Reduce, Scan, Exscan, Reduce_scatter_block ---- */

static int rank_matrix(MPI_Comm c, int me, int n)
{
    enum { CNT = 3 };
    unsigned char in[CNT * 32], out[CNT * 32 * 16], ref[CNT * 32 * 16], tmp[CNT * 32 * 16];
    TC_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    TC_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int ti = 0; ti < NTYPES; ti++) {
        MPI_Datatype dt = all_types[ti];
        MPI_Aint lb, ext;
        MPI_Type_get_extent(dt, &lb, &ext);
        for (int oi = 0; oi < NOPS; oi++) {
            MPI_Op op = all_ops[oi];
            int salt = ti + oi;
            fill(dt, in, CNT, me, salt);
            fill(dt, ref, CNT, n - 1, salt);
            int e = MPI_Reduce_local(in, ref, CNT, dt, op);
            if (e != MPI_SUCCESS) {
                TC_CHECK(e == MPI_ERR_OP, "Reduce_local type %d op %d: %d", dt, op, e);
                e = MPI_Allreduce(in, out, CNT, dt, op, c);
                TC_CHECK(e == MPI_ERR_OP, "Allreduce undefined type %d op %d: %d", dt, op, e);
                continue;
            }
            /* reference: in[0] op (in[1] op (... in[n-1])) */
            fill(dt, ref, CNT, n - 1, salt);
            for (int k = n - 2; k >= 0; k--) {
                fill(dt, tmp, CNT, k, salt);
                TC_MPI(MPI_Reduce_local(tmp, ref, CNT, dt, op));
            }
            TC_MPI(MPI_Allreduce(in, out, CNT, dt, op, c));
            TC_CHECK(same(dt, out, ref, CNT), "Allreduce type %d op %d differs", dt, op);
            int root = (ti + oi) % n;
            memset(out, 0, sizeof out);
            TC_MPI(MPI_Reduce(in, out, CNT, dt, op, root, c));
            if (me == root) TC_CHECK(same(dt, out, ref, CNT), "Reduce type %d op %d", dt, op);
            /* Scan: prefix over 0..me, left to right */
            fill(dt, ref, CNT, 0, salt);
            for (int k = 1; k <= me; k++) {
                fill(dt, tmp, CNT, k, salt);
                TC_MPI(MPI_Reduce_local(ref, tmp, CNT, dt, op));
                memcpy(ref, tmp, (size_t)(CNT * ext));
            }
            TC_MPI(MPI_Scan(in, out, CNT, dt, op, c));
            TC_CHECK(same(dt, out, ref, CNT), "Scan type %d op %d", dt, op);
            /* Exscan: prefix over 0..me-1 */
            if (me > 0) {
                fill(dt, ref, CNT, 0, salt);
                for (int k = 1; k < me; k++) {
                    fill(dt, tmp, CNT, k, salt);
                    TC_MPI(MPI_Reduce_local(ref, tmp, CNT, dt, op));
                    memcpy(ref, tmp, (size_t)(CNT * ext));
                }
            }
            TC_MPI(MPI_Exscan(in, out, CNT, dt, op, c));
            if (me > 0) TC_CHECK(same(dt, out, ref, CNT), "Exscan type %d op %d", dt, op);
            /* Reduce_scatter_block with one element per member: block me of the full result */
            unsigned char *full = tc_alloc((size_t)(n * ext)), *fr = tc_alloc((size_t)(n * ext));
            unsigned char *ft = tc_alloc((size_t)(n * ext));
            fill(dt, full, n, me, salt);
            fill(dt, fr, n, n - 1, salt);
            for (int k = n - 2; k >= 0; k--) {
                fill(dt, ft, n, k, salt);
                TC_MPI(MPI_Reduce_local(ft, fr, n, dt, op));
            }
            TC_MPI(MPI_Reduce_scatter_block(full, out, 1, dt, op, c));
            TC_CHECK(same(dt, out, fr + me * ext, 1), "Reduce_scatter_block type %d op %d", dt, op);
            free(full);
            free(fr);
            free(ft);
        }
    }
    /* REPLACE and NO_OP belong to RMA only */
    int v = 1, w = 0;
    TC_CHECK(MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_REPLACE, c) == MPI_ERR_OP, "REPLACE accepted");
    TC_CHECK(MPI_Reduce_local(&v, &w, 1, MPI_INT, MPI_NO_OP) == MPI_ERR_OP, "NO_OP accepted");
    TC_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_ARE_FATAL));
    TC_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    return 0;
}

/* ---- counts x roots x in place, SUM on long ---- */

static long lval(int k, size_t i, int salt)
{
    return (long)k * 1000 + (long)(i % 1000) + salt;
}

static long lsum(int lo, int hi, size_t i, int salt) /* sum over members lo..hi-1 */
{
    long m = hi - lo;
    return 1000 * (m * (lo + hi - 1) / 2) + m * ((long)(i % 1000) + salt);
}

static int rank_counts(MPI_Comm c, int me, int n)
{
    for (int ci = 0; ci < TC_NCOUNTS; ci++) {
        int count = tc_counts[ci];
        size_t cap = (size_t)count * (size_t)n + 1;
        long *in = tc_alloc(sizeof(long) * cap), *out = tc_alloc(sizeof(long) * cap);
        int *rc = tc_alloc(sizeof(int) * (size_t)n);
        for (int round = 0; round < 4; round++) {
            int root = round % 2 ? (round / 2) % n : n - 1, inplace = round >= 2;
            for (int i = 0; i < count; i++)
                in[i] = out[i] = lval(me, (size_t)i, round);
            const void *sb = inplace ? MPI_IN_PLACE : in;
            TC_MPI(MPI_Reduce(inplace && me != root ? in : sb, out, count, MPI_LONG, MPI_SUM, root,
                              c));
            if (me == root)
                for (int i = 0; i < count; i++)
                    TC_CHECK(out[i] == lsum(0, n, (size_t)i, round), "Reduce count %d elem %d",
                             count, i);
            for (int i = 0; i < count; i++)
                out[i] = lval(me, (size_t)i, round);
            TC_MPI(MPI_Allreduce(sb, out, count, MPI_LONG, MPI_SUM, c));
            for (int i = 0; i < count; i++)
                TC_CHECK(out[i] == lsum(0, n, (size_t)i, round), "Allreduce count %d elem %d: %ld",
                         count, i, out[i]);
            for (int i = 0; i < count; i++)
                out[i] = lval(me, (size_t)i, round);
            TC_MPI(MPI_Scan(sb, out, count, MPI_LONG, MPI_SUM, c));
            for (int i = 0; i < count; i++)
                TC_CHECK(out[i] == lsum(0, me + 1, (size_t)i, round), "Scan count %d elem %d",
                         count, i);
            for (int i = 0; i < count; i++)
                out[i] = lval(me, (size_t)i, round);
            TC_MPI(MPI_Exscan(sb, out, count, MPI_LONG, MPI_SUM, c));
            if (me > 0)
                for (int i = 0; i < count; i++)
                    TC_CHECK(out[i] == lsum(0, me, (size_t)i, round),
                             "Exscan count %d elem %d: %ld", count, i, out[i]);
            /* Reduce_scatter: member j gets count + j % 2 elements (block of the full vector) */
            size_t total = 0, off = 0;
            for (int j = 0; j < n; j++) {
                rc[j] = count ? count + j % 2 : 0;
                if (j == me) off = total;
                total += (size_t)rc[j];
            }
            long *full = tc_alloc(sizeof(long) * (total + 1)),
                 *res = tc_alloc(sizeof(long) * (total + 1));
            for (size_t i = 0; i < total; i++)
                full[i] = res[i] = lval(me, i, round);
            TC_MPI(MPI_Reduce_scatter(inplace ? MPI_IN_PLACE : full, inplace ? full : res, rc,
                                      MPI_LONG, MPI_SUM, c));
            long *got = inplace ? full : res;
            for (int i = 0; i < rc[me]; i++)
                TC_CHECK(got[i] == lsum(0, n, off + (size_t)i, round), "Reduce_scatter elem %d", i);
            for (size_t i = 0; i < (size_t)count * (size_t)n; i++)
                full[i] = lval(me, i, round);
            TC_MPI(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : full, inplace ? full : res,
                                            count, MPI_LONG, MPI_SUM, c));
            for (int i = 0; i < count; i++)
                TC_CHECK(got[i] == lsum(0, n, (size_t)me * (size_t)count + (size_t)i, round),
                         "Reduce_scatter_block elem %d", i);
            free(full);
            free(res);
        }
        free(in);
        free(out);
        free(rc);
    }
    return 0;
}

/* ---- user ops ---- */

/* 2x2 matrices of uint32 (wrapping), row-major; inout = in x inout (in is the left operand,
 * from the lower rank). */
static void matmul(void *in_, void *io_, int *len, MPI_Datatype *dt)
{
    const uint32_t *a = in_;
    uint32_t *b = io_;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        uint32_t r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        uint32_t r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
    }
}

static void usum(void *in_, void *io_, int *len, MPI_Datatype *dt)
{
    const long *a = in_;
    long *b = io_;
    for (int k = 0; k < *len; k++)
        b[k] += a[k];
}

static void mat_of(int k, size_t i, uint32_t m[4])
{
    m[0] = (uint32_t)(k + 1), m[1] = (uint32_t)(i % 5 + 1), m[2] = (uint32_t)(k % 3),
    m[3] = (uint32_t)(i % 7 + 2);
}

/* Product of members lo..hi-1 in rank order, element i. */
static void mat_prod(int lo, int hi, size_t i, uint32_t r[4])
{
    uint32_t m[4];
    mat_of(lo, i, r);
    for (int k = lo + 1; k < hi; k++) {
        mat_of(k, i, m);
        int one = 1;
        matmul(r, m, &one, NULL); /* m = r x m */
        memcpy(r, m, sizeof m);
    }
}

static int rank_userops(MPI_Comm c, int me, int n)
{
    MPI_Op mul, sum;
    MPI_Datatype mat;
    TC_MPI(MPI_Op_create(matmul, 0, &mul));
    TC_MPI(MPI_Op_create(usum, 1, &sum));
    int commute = -1;
    TC_MPI(MPI_Op_commutative(mul, &commute));
    TC_CHECK(commute == 0, "matmul is not commutative, got %d", commute);
    TC_MPI(MPI_Type_contiguous(4, MPI_UINT32_T, &mat));
    TC_MPI(MPI_Type_commit(&mat));
    int sz;
    TC_MPI(MPI_Type_size(mat, &sz));
    TC_CHECK(sz == 16, "contiguous(4, uint32) size %d", sz);
    for (int ci = 0; ci < TC_NCOUNTS; ci++) {
        int count = tc_counts[ci] > 5000 ? 5003 : tc_counts[ci];
        uint32_t *in = tc_alloc(16 * (size_t)count * (size_t)n + 16);
        uint32_t *out = tc_alloc(16 * (size_t)count * (size_t)n + 16), r[4];
        for (int round = 0; round < 2; round++) {
            int root = round ? n / 2 : n - 1;
            for (int i = 0; i < count; i++)
                mat_of(me, (size_t)i, in + 4 * i);
            TC_MPI(MPI_Allreduce(in, out, count, mat, mul, c));
            for (int i = 0; i < count; i++) {
                mat_prod(0, n, (size_t)i, r);
                TC_CHECK(!memcmp(out + 4 * i, r, 16), "Allreduce matmul count %d elem %d", count,
                         i);
            }
            TC_MPI(MPI_Reduce(in, out, count, mat, mul, root, c));
            if (me == root)
                for (int i = 0; i < count; i++) {
                    mat_prod(0, n, (size_t)i, r);
                    TC_CHECK(!memcmp(out + 4 * i, r, 16), "Reduce matmul elem %d", i);
                }
            memcpy(out, in, 16 * (size_t)count);
            TC_MPI(MPI_Scan(round ? MPI_IN_PLACE : in, out, count, mat, mul, c));
            for (int i = 0; i < count; i++) {
                mat_prod(0, me + 1, (size_t)i, r);
                TC_CHECK(!memcmp(out + 4 * i, r, 16), "Scan matmul elem %d", i);
            }
            memcpy(out, in, 16 * (size_t)count);
            TC_MPI(MPI_Exscan(round ? MPI_IN_PLACE : in, out, count, mat, mul, c));
            if (me > 0)
                for (int i = 0; i < count; i++) {
                    mat_prod(0, me, (size_t)i, r);
                    TC_CHECK(!memcmp(out + 4 * i, r, 16), "Exscan matmul elem %d", i);
                }
            for (size_t i = 0; i < (size_t)count * (size_t)n; i++)
                mat_of(me, i, in + 4 * i);
            TC_MPI(MPI_Reduce_scatter_block(in, out, count, mat, mul, c));
            for (int i = 0; i < count; i++) {
                mat_prod(0, n, (size_t)me * (size_t)count + (size_t)i, r);
                TC_CHECK(!memcmp(out + 4 * i, r, 16), "Reduce_scatter_block matmul elem %d", i);
            }
            long *lin = (long *)in, *lout = (long *)out;
            for (int i = 0; i < count; i++)
                lin[i] = lval(me, (size_t)i, round);
            TC_MPI(MPI_Allreduce(lin, lout, count, MPI_LONG, sum, c));
            for (int i = 0; i < count; i++)
                TC_CHECK(lout[i] == lsum(0, n, (size_t)i, round), "user sum elem %d", i);
        }
        free(in);
        free(out);
    }
    /* Freed ops and types are gone; pair types with MINLOC and a contiguous of pairs */
    TC_MPI(MPI_Op_free(&mul));
    TC_MPI(MPI_Op_free(&sum));
    TC_MPI(MPI_Type_free(&mat));
    TC_CHECK(mul == MPI_OP_NULL && mat == MPI_DATATYPE_NULL, "handles not reset");
    MPI_Datatype pairs;
    TC_MPI(MPI_Type_contiguous(3, MPI_DOUBLE_INT, &pairs));
    TC_MPI(MPI_Type_commit(&pairs));
    struct di p[3], q[3];
    for (int i = 0; i < 3; i++)
        p[i] = (struct di){(double)((me * 7 + i) % n), me};
    TC_MPI(MPI_Allreduce(p, q, 1, pairs, MPI_MAXLOC, c));
    for (int i = 0; i < 3; i++) {
        double best = -1;
        int bi = -1;
        for (int k = 0; k < n; k++)
            if ((double)((k * 7 + i) % n) > best) best = (double)((k * 7 + i) % n), bi = k;
        TC_CHECK(q[i].v == best && q[i].i == bi, "MAXLOC pair %d: (%g,%d) expected (%g,%d)", i,
                 q[i].v, q[i].i, best, bi);
    }
    TC_MPI(MPI_Type_free(&pairs));
    return 0;
}

#define T(name)                                                                                    \
    static int t_##name(void)                                                                      \
    {                                                                                              \
        return tc_run_every_comm(rank_##name);                                                     \
    }
T(matrix)
T(counts)
T(userops)

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {
        {"ops_x_types", t_matrix}, {"counts", t_counts}, {"userops", t_userops}, {NULL, NULL}};
    return th_main(argc, argv, tests);
}
