/* type_ctor.c — the type constructors (MPI 3.1 §4.1.2-4.1.7), MPI_Type_commit and
 * MPI_Type_free, and the rank's table of derived types (type.h has the lifetime rules).
 *
 * Each constructor checks its arguments, describes the new type as pieces to the flat-map
 * builder (type_flat.h) and keeps its arguments for MPI_Type_get_contents (the envelope). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "errh.h"
#include "job.h"
#include "objtab.h"
#include "type.h"
#include "type_envelope.h"
#include "type_flat.h"

const struct tm_type *tm_dtype_get(struct tm_rank *me, MPI_Datatype dt, int committed_only)
{
    if (!me) return NULL;
    struct tm_dtype *d = tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, dt);
    if (!d || (committed_only && !d->committed)) return NULL;
    return &d->t;
}

static void dtype_drop(void *p)
{
    tm_attr_drop_all(&((struct tm_dtype *)p)->attrs); /* teardown: no callbacks */
    tm_type_release(&((struct tm_dtype *)p)->t);
}

int tm_type_handle_hold(struct tm_rank *me, MPI_Datatype dt, MPI_Datatype *ret)
{
    *ret = dt;
    struct tm_dtype *d =
        dt >= TM_DTYPE_FIRST ? tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, dt) : NULL;
    if (!d) return MPI_SUCCESS; /* predefined (or invalid: the call that uses it says so) */
    tm_type_hold(&d->t);
    int h = tm_objtab_add(&me->dtypes, TM_DTYPE_FIRST, d);
    if (h < 0) {
        tm_type_release(&d->t);
        return MPI_ERR_NO_MEM;
    }
    *ret = h;
    return MPI_SUCCESS;
}

void tm_type_handle_drop(struct tm_rank *me, MPI_Datatype h)
{
    struct tm_dtype *d = h >= TM_DTYPE_FIRST ? tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, h) : NULL;
    if (!d) return;
    tm_objtab_del(me->dtypes, TM_DTYPE_FIRST, h);
    tm_type_release(&d->t);
}

void tm_dtype_tab_free(struct tm_rank *me)
{
    tm_objtab_free(me->dtypes, dtype_drop);
    me->dtypes = NULL;
}

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define FAIL(code, ...) return tm_err(me, MPI_COMM_WORLD, code, fn, __VA_ARGS__)

/* Errors of the builder as MPI error classes. */
static int flat_err(struct tm_rank *me, const char *fn, int r)
{
    if (r == -ENOMEM) FAIL(MPI_ERR_NO_MEM, "out of memory");
    FAIL(MPI_ERR_ARG, "the type is too large (more than %zu blocks, or bounds overflow)",
         TM_TYPE_MAX_BLOCKS);
}

/* Registers a new derived type built by f; takes env (its arrays and type references) in
 * every case. */
int tm_dtype_publish(struct tm_rank *me, const char *fn, struct tm_flat *f, int set, ptrdiff_t lb,
                     ptrdiff_t extent, int pad, struct tm_envelope *env, MPI_Datatype *newtype)
{
    struct tm_dtype *d = calloc(1, sizeof *d);
    int r = d ? tm_flat_finish(f, &d->t, set, lb, extent, pad) : -ENOMEM;
    if (r < 0) {
        tm_flat_discard(f);
        tm_envelope_free(env);
        free(d);
        return flat_err(me, fn, r);
    }
    d->env = *env;
    atomic_init(&d->refs, 1);
    int h = tm_objtab_add(&me->dtypes, TM_DTYPE_FIRST, d);
    if (h < 0) {
        tm_type_release(&d->t);
        FAIL(MPI_ERR_NO_MEM, "out of memory (or more than %d types)", TM_OBJTAB_MAX);
    }
    *newtype = h;
    return MPI_SUCCESS;
}

/* Checks shared by the constructors: count, old type, newtype. */
static int check_common(struct tm_rank *me, const char *fn, int count, MPI_Datatype oldtype,
                        MPI_Datatype *newtype, const struct tm_type **ret_old)
{
    if (TM_UNLIKELY(count < 0)) FAIL(MPI_ERR_COUNT, "invalid count %d", count);
    const struct tm_type *old = tm_type_query(oldtype);
    if (TM_UNLIKELY(!old)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", oldtype);
    if (TM_UNLIKELY(!newtype)) FAIL(MPI_ERR_ARG, "newtype is NULL");
    *ret_old = old;
    return MPI_SUCCESS;
}

static int check_array(struct tm_rank *me, const char *fn, int count, const void *a,
                       const char *what)
{
    if (TM_UNLIKELY(count > 0 && !a)) FAIL(MPI_ERR_ARG, "%s is NULL", what);
    return MPI_SUCCESS;
}

static int check_blens(struct tm_rank *me, const char *fn, int count, const int *blens)
{
    for (int i = 0; i < count; i++)
        if (TM_UNLIKELY(blens[i] < 0))
            FAIL(MPI_ERR_ARG, "block length %d of block %d is negative", blens[i], i);
    return MPI_SUCCESS;
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        int e_ = (expr);                                                                           \
        if (TM_UNLIKELY(e_ != MPI_SUCCESS)) return e_;                                             \
    } while (0)

/* Pieces of stride-separated equal blocks (vector, hvector). */
static int build_strided(struct tm_flat *f, int count, int blen, ptrdiff_t stride,
                         const struct tm_type *old)
{
    int r = 0;
    for (int i = 0; i < count && !r; i++)
        r = tm_flat_add(f, (ptrdiff_t)i * stride, (size_t)blen, old);
    return r;
}

TM_API int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_contiguous";
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, count, oldtype, newtype, &old));
    struct tm_flat f;
    tm_flat_init(&f);
    int r = tm_flat_add(&f, 0, (size_t)count, old);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    struct tm_envelope env;
    if (tm_envelope_make(&env, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &old) < 0)
        return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    return tm_dtype_publish(me, fn, &f, 0, 0, 0, 0, &env, newtype);
}
TM_ALIAS(Type_contiguous)

static int vector_common(const char *fn, int count, int blen, ptrdiff_t stride, int hstride,
                         int istride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, count, oldtype, newtype, &old));
    if (TM_UNLIKELY(blen < 0)) FAIL(MPI_ERR_ARG, "negative block length %d", blen);
    ptrdiff_t bstride = hstride ? stride : stride * (ptrdiff_t)old->extent;
    struct tm_flat f;
    tm_flat_init(&f);
    int r = build_strided(&f, count, blen, bstride, old);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    struct tm_envelope env;
    int ints[3] = {count, blen, istride};
    MPI_Aint a = stride;
    if (tm_envelope_make(&env, hstride ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR,
                         hstride ? 2 : 3, ints, hstride ? 1 : 0, &a, 1, &old) < 0)
        return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    return tm_dtype_publish(me, fn, &f, 0, 0, 0, 0, &env, newtype);
}

TM_API int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    return vector_common("MPI_Type_vector", count, blocklength, stride, 0, stride, oldtype,
                         newtype);
}
TM_ALIAS(Type_vector)

TM_API int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector_common("MPI_Type_create_hvector", count, blocklength, stride, 1, 0, oldtype,
                         newtype);
}
TM_ALIAS(Type_create_hvector)

/* indexed, hindexed, indexed_block, hindexed_block: blens NULL means every block is blen;
 * idispl (element units) or adispl (bytes). */
static int indexed_common(const char *fn, int combiner, int count, const int *blens, int blen,
                          const int *idispl, const MPI_Aint *adispl, MPI_Datatype oldtype,
                          MPI_Datatype *newtype)
{
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, count, oldtype, newtype, &old));
    if (blens) {
        CHECK(check_array(me, fn, count, blens, "array_of_blocklengths"));
        CHECK(check_blens(me, fn, count, blens));
    } else if (TM_UNLIKELY(blen < 0)) {
        FAIL(MPI_ERR_ARG, "negative block length %d", blen);
    }
    CHECK(check_array(me, fn, count, idispl ? (const void *)idispl : (const void *)adispl,
                      "array_of_displacements"));
    struct tm_flat f;
    tm_flat_init(&f);
    int r = 0;
    for (int i = 0; i < count && !r; i++) {
        ptrdiff_t d = idispl ? (ptrdiff_t)idispl[i] * (ptrdiff_t)old->extent : adispl[i];
        r = tm_flat_add(&f, d, (size_t)(blens ? blens[i] : blen), old);
    }
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    /* ints: count, then the block lengths (or the one), then element displacements. */
    size_t ni = 1 + (blens ? (size_t)count : 1) + (idispl ? (size_t)count : 0);
    int *ints = malloc(ni * sizeof *ints);
    if (!ints) return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    size_t k = 0;
    ints[k++] = count;
    if (blens)
        for (int i = 0; i < count; i++)
            ints[k++] = blens[i];
    else
        ints[k++] = blen;
    if (idispl)
        for (int i = 0; i < count; i++)
            ints[k++] = idispl[i];
    struct tm_envelope env;
    r = tm_envelope_make(&env, combiner, (int)ni, ints, idispl ? 0 : count, adispl, 1, &old);
    free(ints);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    return tm_dtype_publish(me, fn, &f, 0, 0, 0, 0, &env, newtype);
}

TM_API int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                             const int array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return indexed_common("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                          array_of_displacements, NULL, oldtype, newtype);
}
TM_ALIAS(Type_indexed)

TM_API int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                     const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    return indexed_common("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count,
                          array_of_blocklengths, 0, NULL, array_of_displacements, oldtype, newtype);
}
TM_ALIAS(Type_create_hindexed)

TM_API int PMPI_Type_create_indexed_block(int count, int blocklength,
                                          const int array_of_displacements[], MPI_Datatype oldtype,
                                          MPI_Datatype *newtype)
{
    return indexed_common("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, NULL,
                          blocklength, array_of_displacements, NULL, oldtype, newtype);
}
TM_ALIAS(Type_create_indexed_block)

TM_API int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                           const MPI_Aint array_of_displacements[],
                                           MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed_common("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count,
                          NULL, blocklength, NULL, array_of_displacements, oldtype, newtype);
}
TM_ALIAS(Type_create_hindexed_block)

TM_API int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[],
                                   const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_struct";
    NEED_ME(fn);
    if (TM_UNLIKELY(count < 0)) FAIL(MPI_ERR_COUNT, "invalid count %d", count);
    if (TM_UNLIKELY(!newtype)) FAIL(MPI_ERR_ARG, "newtype is NULL");
    CHECK(check_array(me, fn, count, array_of_blocklengths, "array_of_blocklengths"));
    CHECK(check_array(me, fn, count, array_of_displacements, "array_of_displacements"));
    CHECK(check_array(me, fn, count, array_of_types, "array_of_types"));
    CHECK(check_blens(me, fn, count, array_of_blocklengths));
    const struct tm_type **ts = malloc(sizeof *ts * (size_t)(count ? count : 1));
    if (!ts) FAIL(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < count; i++) {
        ts[i] = tm_type_query(array_of_types[i]);
        if (TM_UNLIKELY(!ts[i])) {
            free(ts);
            FAIL(MPI_ERR_TYPE, "invalid datatype %d in array_of_types[%d]", array_of_types[i], i);
        }
    }
    struct tm_flat f;
    tm_flat_init(&f);
    int r = 0;
    for (int i = 0; i < count && !r; i++)
        r = tm_flat_add(&f, array_of_displacements[i], (size_t)array_of_blocklengths[i], ts[i]);
    struct tm_envelope env;
    if (r == 0) {
        int *ints = malloc(sizeof *ints * (size_t)(count + 1));
        if (ints) {
            ints[0] = count;
            memcpy(ints + 1, array_of_blocklengths, sizeof *ints * (size_t)count);
            r = tm_envelope_make(&env, MPI_COMBINER_STRUCT, count + 1, ints, count,
                                 array_of_displacements, count, ts);
        } else {
            r = -ENOMEM;
        }
        free(ints);
    }
    free(ts);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    return tm_dtype_publish(me, fn, &f, 0, 0, 0, 1, &env, newtype);
}
TM_ALIAS(Type_create_struct)

/* ---- subarray and darray: the product of per-dimension index runs ---- */

struct run {
    long long start, len;
};

/* Pieces for every index tuple of runs[k] (dimension k has nr[k] runs), in memory order:
 * dims[] lists dimensions from slowest to fastest; stride[k] in elements. */
static int build_grid(struct tm_flat *f, int ndims, const int *dims, struct run *const *runs,
                      const int *nr, const long long *stride, const struct tm_type *old)
{
    if (ndims <= 0) return 0;
    int fast = dims[ndims - 1];
    for (int k = 0; k < ndims; k++)
        if (nr[k] == 0) return 0;
    /* Odometer over (run, index within run) of every dimension but the fastest. */
    int ri[ndims];
    long long ii[ndims];
    for (int k = 0; k < ndims; k++)
        ri[k] = 0, ii[k] = 0;
    for (;;) {
        long long base = 0;
        for (int j = 0; j < ndims - 1; j++) {
            int k = dims[j];
            base += (runs[k][ri[k]].start + ii[k]) * stride[k];
        }
        for (int q = 0; q < nr[fast]; q++) {
            long long off = base + runs[fast][q].start * stride[fast];
            int r = tm_flat_add(f, (ptrdiff_t)(off * (long long)old->extent),
                                (size_t)runs[fast][q].len, old);
            if (r < 0) return r;
        }
        int j = ndims - 2;
        for (; j >= 0; j--) {
            int k = dims[j];
            if (++ii[k] < runs[k][ri[k]].len) break;
            ii[k] = 0;
            if (++ri[k] < nr[k]) break;
            ri[k] = 0;
        }
        if (j < 0) return 0;
    }
}

/* Element strides and the dimension order (slowest first) of an array of sizes; 0 or -E2BIG. */
static int grid_layout(int ndims, const int *sizes, int order, int *dims, long long *stride,
                       long long *ret_total)
{
    long long s = 1;
    for (int j = 0; j < ndims; j++) {
        int k = order == MPI_ORDER_C ? ndims - 1 - j : j; /* fastest first */
        stride[k] = s;
        dims[ndims - 1 - j] = k;
        if (__builtin_mul_overflow(s, (long long)sizes[k], &s)) return -E2BIG;
    }
    *ret_total = s;
    return 0;
}

static int make_grid_type(struct tm_rank *me, const char *fn, int ndims, const int *sizes,
                          int order, struct run *const *runs, const int *nr,
                          const struct tm_type *old, struct tm_envelope *env, MPI_Datatype *newtype)
{
    int dims[ndims];
    long long stride[ndims], total, ext;
    for (int k = 0; k < ndims; k++)
        dims[k] = k, stride[k] = 0;
    struct tm_flat f;
    tm_flat_init(&f);
    int r = grid_layout(ndims, sizes, order, dims, stride, &total);
    if (!r && __builtin_mul_overflow(total, (long long)old->extent, &ext)) r = -E2BIG;
    if (!r) r = build_grid(&f, ndims, dims, runs, nr, stride, old);
    if (r < 0) {
        tm_flat_discard(&f);
        tm_envelope_free(env);
        return flat_err(me, fn, r);
    }
    return tm_dtype_publish(me, fn, &f, 1, old->lb, (ptrdiff_t)ext, 0, env, newtype);
}

TM_API int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                                     const int array_of_subsizes[], const int array_of_starts[],
                                     int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_subarray";
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, 0, oldtype, newtype, &old));
    if (TM_UNLIKELY(ndims <= 0)) FAIL(MPI_ERR_ARG, "invalid ndims %d", ndims);
    if (TM_UNLIKELY(!array_of_sizes || !array_of_subsizes || !array_of_starts))
        FAIL(MPI_ERR_ARG, "an array argument is NULL");
    if (TM_UNLIKELY(order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        FAIL(MPI_ERR_ARG, "invalid order %d", order);
    for (int k = 0; k < ndims; k++) {
        int n = array_of_sizes[k], s = array_of_subsizes[k], st = array_of_starts[k];
        if (TM_UNLIKELY(n <= 0 || s < 0 || s > n || st < 0 || st > n - s))
            FAIL(MPI_ERR_ARG, "dimension %d: size %d, subsize %d, start %d do not fit", k, n, s,
                 st);
    }
    struct run rr[ndims];
    struct run *runs[ndims];
    int nr[ndims];
    for (int k = 0; k < ndims; k++) {
        rr[k] = (struct run){array_of_starts[k], array_of_subsizes[k]};
        runs[k] = &rr[k];
        nr[k] = array_of_subsizes[k] ? 1 : 0;
    }
    int ni = 3 * ndims + 2;
    int *ints = malloc(sizeof *ints * (size_t)ni);
    if (!ints) FAIL(MPI_ERR_NO_MEM, "out of memory");
    ints[0] = ndims;
    memcpy(ints + 1, array_of_sizes, sizeof *ints * (size_t)ndims);
    memcpy(ints + 1 + ndims, array_of_subsizes, sizeof *ints * (size_t)ndims);
    memcpy(ints + 1 + 2 * ndims, array_of_starts, sizeof *ints * (size_t)ndims);
    ints[ni - 1] = order;
    struct tm_envelope env;
    int r = tm_envelope_make(&env, MPI_COMBINER_SUBARRAY, ni, ints, 0, NULL, 1, &old);
    free(ints);
    if (r < 0) FAIL(MPI_ERR_NO_MEM, "out of memory");
    return make_grid_type(me, fn, ndims, array_of_sizes, order, runs, nr, old, &env, newtype);
}
TM_ALIAS(Type_create_subarray)

/* The runs of global indices that process coordinate c of p owns in a dimension of n
 * elements (MPI 3.1 §4.1.4); *ret_runs is malloc'd. */
static int darray_runs(int distrib, int darg, int n, int p, int c, struct run **ret_runs,
                       int *ret_nr)
{
    *ret_nr = 0;
    *ret_runs = NULL;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        struct run *r = malloc(sizeof *r);
        if (!r) return -ENOMEM;
        *r = (struct run){0, n};
        *ret_runs = r;
        *ret_nr = 1;
        return 0;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        long long b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (n + p - 1) / p : darg;
        long long lo = (long long)c * b, hi = lo + b < n ? lo + b : n;
        struct run *r = malloc(sizeof *r);
        if (!r) return -ENOMEM;
        *r = (struct run){lo, hi > lo ? hi - lo : 0};
        *ret_runs = r;
        *ret_nr = hi > lo ? 1 : 0;
        return 0;
    }
    long long b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    long long cnt = 0;
    for (long long j = (long long)c * b; j < n; j += (long long)p * b)
        cnt++;
    struct run *r = malloc(sizeof *r * (size_t)(cnt ? cnt : 1));
    if (!r) return -ENOMEM;
    int k = 0;
    for (long long j = (long long)c * b; j < n; j += (long long)p * b)
        r[k++] = (struct run){j, j + b < n ? b : n - j};
    *ret_runs = r;
    *ret_nr = k;
    return 0;
}

TM_API int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                                   const int array_of_distribs[], const int array_of_dargs[],
                                   const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_darray";
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, 0, oldtype, newtype, &old));
    if (TM_UNLIKELY(size <= 0 || rank < 0 || rank >= size))
        FAIL(MPI_ERR_ARG, "invalid size %d / rank %d", size, rank);
    if (TM_UNLIKELY(ndims <= 0)) FAIL(MPI_ERR_ARG, "invalid ndims %d", ndims);
    if (TM_UNLIKELY(!array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes))
        FAIL(MPI_ERR_ARG, "an array argument is NULL");
    if (TM_UNLIKELY(order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        FAIL(MPI_ERR_ARG, "invalid order %d", order);
    long long procs = 1;
    for (int k = 0; k < ndims; k++) {
        int g = array_of_gsizes[k], d = array_of_distribs[k], a = array_of_dargs[k],
            p = array_of_psizes[k];
        if (TM_UNLIKELY(g <= 0 || p <= 0))
            FAIL(MPI_ERR_ARG, "dimension %d: gsize %d, psize %d", k, g, p);
        if (TM_UNLIKELY(d != MPI_DISTRIBUTE_BLOCK && d != MPI_DISTRIBUTE_CYCLIC &&
                        d != MPI_DISTRIBUTE_NONE))
            FAIL(MPI_ERR_ARG, "dimension %d: invalid distribution %d", k, d);
        if (TM_UNLIKELY(d == MPI_DISTRIBUTE_NONE && p != 1))
            FAIL(MPI_ERR_ARG, "dimension %d: MPI_DISTRIBUTE_NONE needs psize 1, not %d", k, p);
        if (TM_UNLIKELY(a != MPI_DISTRIBUTE_DFLT_DARG && a <= 0))
            FAIL(MPI_ERR_ARG, "dimension %d: invalid darg %d", k, a);
        if (TM_UNLIKELY(d == MPI_DISTRIBUTE_BLOCK && a != MPI_DISTRIBUTE_DFLT_DARG &&
                        (long long)a * p < g))
            FAIL(MPI_ERR_ARG, "dimension %d: %d blocks of %d do not cover %d", k, p, a, g);
        procs *= p;
        if (TM_UNLIKELY(procs > size))
            FAIL(MPI_ERR_ARG, "the process grid has more than size %d processes", size);
    }
    if (TM_UNLIKELY(procs != size))
        FAIL(MPI_ERR_ARG, "the process grid has %lld processes, not size %d", procs, size);
    /* The process grid is row-major whatever the array order (§4.1.4). */
    int coord[ndims];
    for (int k = ndims - 1, r = rank; k >= 0; k--) {
        coord[k] = r % array_of_psizes[k];
        r /= array_of_psizes[k];
    }
    struct run *runs[ndims];
    int nr[ndims], err = 0;
    for (int k = 0; k < ndims; k++)
        runs[k] = NULL;
    for (int k = 0; k < ndims && !err; k++)
        err = darray_runs(array_of_distribs[k], array_of_dargs[k], array_of_gsizes[k],
                          array_of_psizes[k], coord[k], &runs[k], &nr[k]);
    int ni = 4 * ndims + 4;
    int *ints = err ? NULL : malloc(sizeof *ints * (size_t)ni);
    struct tm_envelope env;
    if (ints) {
        ints[0] = size;
        ints[1] = rank;
        ints[2] = ndims;
        memcpy(ints + 3, array_of_gsizes, sizeof *ints * (size_t)ndims);
        memcpy(ints + 3 + ndims, array_of_distribs, sizeof *ints * (size_t)ndims);
        memcpy(ints + 3 + 2 * ndims, array_of_dargs, sizeof *ints * (size_t)ndims);
        memcpy(ints + 3 + 3 * ndims, array_of_psizes, sizeof *ints * (size_t)ndims);
        ints[ni - 1] = order;
        err = tm_envelope_make(&env, MPI_COMBINER_DARRAY, ni, ints, 0, NULL, 1, &old);
        free(ints);
    } else {
        err = -ENOMEM;
    }
    int ret =
        err ? tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory")
            : make_grid_type(me, fn, ndims, array_of_gsizes, order, runs, nr, old, &env, newtype);
    for (int k = 0; k < ndims; k++)
        free(runs[k]);
    return ret;
}
TM_ALIAS(Type_create_darray)

TM_API int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                    MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_resized";
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, 0, oldtype, newtype, &old));
    struct tm_flat f;
    tm_flat_init(&f);
    int r = tm_flat_add(&f, 0, 1, old);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    MPI_Aint a[2] = {lb, extent};
    struct tm_envelope env;
    if (tm_envelope_make(&env, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &old) < 0)
        return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    return tm_dtype_publish(me, fn, &f, 1, lb, extent, 0, &env, newtype);
}
TM_ALIAS(Type_create_resized)

TM_API int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_dup";
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, 0, oldtype, newtype, &old));
    struct tm_flat f;
    tm_flat_init(&f);
    int r = tm_flat_add(&f, 0, 1, old);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    struct tm_envelope env;
    if (tm_envelope_make(&env, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &old) < 0)
        return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    r = tm_dtype_publish(me, fn, &f, 1, old->lb, (ptrdiff_t)old->extent, 0, &env, newtype);
    if (r == MPI_SUCCESS) {
        struct tm_dtype *d = tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, *newtype);
        /* A duplicate is committed if the original is (predefined types always are). */
        d->committed = !old->derived || ((const struct tm_dtype *)old)->committed;
        /* Attributes go along through their copy callbacks (MPI 3.1 §4.1.10). */
        struct tm_attr *src = tm_type_attrs(me, oldtype);
        int err = src ? tm_attr_copy_all(me, TM_ATTR_TYPE, oldtype, src, &d->attrs) : MPI_SUCCESS;
        if (err) {
            tm_objtab_del(me->dtypes, TM_DTYPE_FIRST, *newtype);
            tm_type_release(&d->t);
            *newtype = MPI_DATATYPE_NULL;
            FAIL(err, "an attribute copy callback failed");
        }
    }
    return r;
}
TM_ALIAS(Type_dup)

TM_API int PMPI_Type_commit(MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_commit";
    NEED_ME(fn);
    if (TM_UNLIKELY(!datatype)) FAIL(MPI_ERR_ARG, "datatype is NULL");
    /* Committing a predefined type is allowed and does nothing. */
    if (*datatype < TM_DTYPE_FIRST && tm_type_get(*datatype)) return MPI_SUCCESS;
    struct tm_dtype *d = tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, *datatype);
    if (TM_UNLIKELY(!d)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", *datatype);
    /* The flat map was compiled at construction; commit only allows communication. */
    d->committed = 1;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_commit)

TM_API int PMPI_Type_free(MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_free";
    NEED_ME(fn);
    if (TM_UNLIKELY(!datatype)) FAIL(MPI_ERR_ARG, "datatype is NULL");
    struct tm_dtype *d = tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, *datatype);
    if (TM_UNLIKELY(!d))
        FAIL(MPI_ERR_TYPE, "%s datatype %d cannot be freed",
             tm_type_get(*datatype) ? "predefined" : "invalid", *datatype);
    if (TM_UNLIKELY(d->f90))
        FAIL(MPI_ERR_TYPE, "datatype %d is predefined (MPI_Type_create_f90_*): it cannot be freed",
             *datatype);
    /* Attributes first, through their delete callbacks; one that fails keeps the type. */
    int err = tm_attr_delete_all(me, TM_ATTR_TYPE, *datatype, &d->attrs);
    if (TM_UNLIKELY(err)) FAIL(err, "an attribute delete callback failed");
    tm_objtab_del(me->dtypes, TM_DTYPE_FIRST, *datatype);
    /* Pending operations and types built on it keep their own references. */
    tm_type_release(&d->t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_free)
