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
    FAIL(MPI_ERR_ARG,
         "the type is too large (a map of more than %zu blocks that is not at most %d regular "
         "strides, or bounds overflow)",
         TM_TYPE_MAX_BLOCKS, TM_TYPE_MAX_SEGS);
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

/* ---- arguments: the int constructors and their large-count (_c) twins share one body ----
 *
 * A body reads its counts, block lengths and displacements through a view of whichever array
 * the caller passed (int, MPI_Aint or MPI_Count), so no call copies or narrows them: counts,
 * block lengths and displacements are MPI_Count end to end, and only the blocks of the flat map
 * (TM_TYPE_MAX_BLOCKS) limit a type. */
struct cview {
    const int *i;
    const MPI_Aint *a;
    const MPI_Count *c;
};
#define CV_INT(p) ((struct cview){.i = (p)})
#define CV_AINT(p) ((struct cview){.a = (p)})
#define CV_COUNT(p) ((struct cview){.c = (p)})

static inline MPI_Count cv_at(struct cview v, MPI_Count k)
{
    return v.c ? v.c[k] : v.a ? (MPI_Count)v.a[k] : (MPI_Count)v.i[k];
}
static inline int cv_null(struct cview v)
{
    return !v.i && !v.a && !v.c;
}

static int fits_int(MPI_Count v)
{
    return v >= INT_MIN && v <= INT_MAX;
}

/* Checks shared by the constructors: count, old type, newtype. */
static int check_common(struct tm_rank *me, const char *fn, MPI_Count count, MPI_Datatype oldtype,
                        MPI_Datatype *newtype, const struct tm_type **ret_old)
{
    if (TM_UNLIKELY(count < 0)) FAIL(MPI_ERR_COUNT, "invalid count %lld", count);
    const struct tm_type *old = tm_type_query(oldtype);
    if (TM_UNLIKELY(!old)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", oldtype);
    if (TM_UNLIKELY(!newtype)) FAIL(MPI_ERR_ARG, "newtype is NULL");
    *ret_old = old;
    return MPI_SUCCESS;
}

static int check_array(struct tm_rank *me, const char *fn, MPI_Count count, struct cview a,
                       const char *what)
{
    if (TM_UNLIKELY(count > 0 && cv_null(a))) FAIL(MPI_ERR_ARG, "%s is NULL", what);
    return MPI_SUCCESS;
}

static int check_blens(struct tm_rank *me, const char *fn, MPI_Count count, struct cview blens)
{
    for (MPI_Count i = 0; i < count; i++)
        if (TM_UNLIKELY(cv_at(blens, i) < 0))
            FAIL(MPI_ERR_ARG, "block length %lld of block %lld is negative", cv_at(blens, i), i);
    return MPI_SUCCESS;
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        int e_ = (expr);                                                                           \
        if (TM_UNLIKELY(e_ != MPI_SUCCESS)) return e_;                                             \
    } while (0)

/* The envelope of a constructor with values v[0..n): the int layout (ints v[0..nint), byte
 * displacements v[nint..n) as addresses) when every int fits, else the large-count layout (all
 * n as large counts, after the nfixed ints that stay int in both: darray's and subarray's).
 * 0 or -ENOMEM. */
static int envelope_any(struct tm_envelope *env, int combiner, const int *fixed, int nfixed,
                        const MPI_Count *v, MPI_Count nint, MPI_Count n, int large_layout,
                        int ntypes, const struct tm_type *const *types)
{
    if (!large_layout) {
        int *ints = malloc(sizeof *ints * (size_t)(nfixed + nint + 1));
        MPI_Aint *a = malloc(sizeof *a * (size_t)(n - nint + 1));
        int r = ints && a ? 0 : -ENOMEM;
        if (!r) {
            for (int k = 0; k < nfixed; k++)
                ints[k] = fixed[k];
            for (MPI_Count k = 0; k < nint; k++)
                ints[nfixed + k] = (int)v[k];
            for (MPI_Count k = nint; k < n; k++)
                a[k - nint] = (MPI_Aint)v[k];
            r = tm_envelope_make(env, combiner, nfixed + (int)nint, ints, (int)(n - nint), a,
                                 ntypes, types);
        }
        free(ints);
        free(a);
        return r;
    }
    return tm_envelope_make_c(env, combiner, nfixed, fixed, 0, NULL, n, v, ntypes, types);
}

/* Whether v[0..nint) all fit int (the int constructor's layout can say them). */
static int ints_fit(const MPI_Count *v, MPI_Count nint)
{
    for (MPI_Count k = 0; k < nint; k++)
        if (!fits_int(v[k])) return 0;
    return 1;
}

/* Pieces of stride-separated equal blocks (vector, hvector). */
static int build_strided(struct tm_flat *f, MPI_Count count, MPI_Count blen, ptrdiff_t stride,
                         const struct tm_type *old)
{
    MPI_Count all;
    /* Blocks that touch are one run (a count past int would otherwise cost a loop that long). */
    if (old->contig && !__builtin_mul_overflow(blen, (MPI_Count)old->extent, &all) &&
        all == stride && !__builtin_mul_overflow(count, blen, &all))
        return tm_flat_add(f, 0, (size_t)all, old);
    return tm_flat_add_strided(f, (size_t)count, (size_t)blen, stride, old);
}

static int contiguous_any(const char *fn, MPI_Count count, MPI_Datatype oldtype,
                          MPI_Datatype *newtype)
{
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, count, oldtype, newtype, &old));
    struct tm_flat f;
    tm_flat_init(&f);
    int r = tm_flat_add(&f, 0, (size_t)count, old);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    struct tm_envelope env;
    if (envelope_any(&env, MPI_COMBINER_CONTIGUOUS, NULL, 0, &count, 1, 1, !fits_int(count), 1,
                     &old) < 0)
        return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    return tm_dtype_publish(me, fn, &f, 0, 0, 0, 0, &env, newtype);
}

TM_API int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous_any("MPI_Type_contiguous", count, oldtype, newtype);
}
TM_ALIAS(Type_contiguous)

TM_API int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous_any("MPI_Type_contiguous_c", count, oldtype, newtype);
}
TM_ALIAS(Type_contiguous_c)

/* vector (stride in extents of oldtype) and hvector (stride in bytes). */
static int vector_any(const char *fn, MPI_Count count, MPI_Count blen, MPI_Count stride,
                      int hstride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, count, oldtype, newtype, &old));
    if (TM_UNLIKELY(blen < 0)) FAIL(MPI_ERR_ARG, "negative block length %lld", blen);
    ptrdiff_t bstride = (ptrdiff_t)stride;
    if (!hstride && __builtin_mul_overflow((ptrdiff_t)stride, old->extent, &bstride))
        return flat_err(me, fn, -E2BIG);
    struct tm_flat f;
    tm_flat_init(&f);
    int r = build_strided(&f, count, blen, bstride, old);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    /* int layout: vector {count, blen, stride}; hvector {count, blen} and the stride as an
     * address.  Large-count layout: all three as large counts. */
    MPI_Count v[3] = {count, blen, stride};
    MPI_Count nint = hstride ? 2 : 3;
    struct tm_envelope env;
    if (envelope_any(&env, hstride ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, NULL, 0, v, nint,
                     3, !ints_fit(v, nint), 1, &old) < 0)
        return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    return tm_dtype_publish(me, fn, &f, 0, 0, 0, 0, &env, newtype);
}

TM_API int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    return vector_any("MPI_Type_vector", count, blocklength, stride, 0, oldtype, newtype);
}
TM_ALIAS(Type_vector)

TM_API int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector_any("MPI_Type_vector_c", count, blocklength, stride, 0, oldtype, newtype);
}
TM_ALIAS(Type_vector_c)

TM_API int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector_any("MPI_Type_create_hvector", count, blocklength, stride, 1, oldtype, newtype);
}
TM_ALIAS(Type_create_hvector)

TM_API int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector_any("MPI_Type_create_hvector_c", count, blocklength, stride, 1, oldtype, newtype);
}
TM_ALIAS(Type_create_hvector_c)

/* The values of an indexed family's envelope in order: count, the block lengths (or the one),
 * the displacements; *ret_nint: how many of them the int layout keeps as ints (element
 * displacements are ints there, byte displacements addresses).  NULL: out of memory. */
static MPI_Count *indexed_values(MPI_Count count, struct cview blens, MPI_Count blen,
                                 struct cview displ, int bytes, MPI_Count *ret_n,
                                 MPI_Count *ret_nint)
{
    MPI_Count nb = cv_null(blens) ? 1 : count, n = 1 + nb + count;
    MPI_Count *v = malloc(sizeof *v * (size_t)n);
    if (!v) return NULL;
    MPI_Count k = 0;
    v[k++] = count;
    for (MPI_Count i = 0; i < nb; i++)
        v[k++] = cv_null(blens) ? blen : cv_at(blens, i);
    for (MPI_Count i = 0; i < count; i++)
        v[k++] = cv_at(displ, i);
    *ret_n = n;
    *ret_nint = bytes ? 1 + nb : n;
    return v;
}

/* indexed, hindexed, indexed_block, hindexed_block: blens NULL means every block is blen;
 * displacements in elements of oldtype (bytes 0) or in bytes. */
static int indexed_any(const char *fn, int combiner, MPI_Count count, struct cview blens,
                       MPI_Count blen, struct cview displ, int bytes, int large_api,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, count, oldtype, newtype, &old));
    if (!cv_null(blens)) {
        CHECK(check_blens(me, fn, count, blens));
    } else if (TM_UNLIKELY(blen < 0)) {
        FAIL(MPI_ERR_ARG, "negative block length %lld", blen);
    }
    CHECK(check_array(me, fn, count, displ, "array_of_displacements"));
    struct tm_flat f;
    tm_flat_init(&f);
    int r = 0;
    for (MPI_Count i = 0; i < count && !r; i++) {
        ptrdiff_t d = (ptrdiff_t)cv_at(displ, i);
        if (!bytes && __builtin_mul_overflow(d, old->extent, &d)) r = -E2BIG;
        if (!r) r = tm_flat_add(&f, d, (size_t)(cv_null(blens) ? blen : cv_at(blens, i)), old);
    }
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    MPI_Count n, nint;
    MPI_Count *v = indexed_values(count, blens, blen, displ, bytes, &n, &nint);
    struct tm_envelope env;
    r = v ? envelope_any(&env, combiner, NULL, 0, v, nint, n, large_api && !ints_fit(v, nint), 1,
                         &old)
          : -ENOMEM;
    free(v);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, -ENOMEM);
    return tm_dtype_publish(me, fn, &f, 0, 0, 0, 0, &env, newtype);
}

/* The block lengths of the int constructors that take an array must be there. */
#define NEED_BLENS(count, b)                                                                       \
    do {                                                                                           \
        if (TM_UNLIKELY((count) > 0 && !(b))) {                                                    \
            NEED_ME(fn);                                                                           \
            FAIL(MPI_ERR_ARG, "array_of_blocklengths is NULL");                                    \
        }                                                                                          \
    } while (0)

TM_API int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                             const int array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_indexed";
    NEED_BLENS(count, array_of_blocklengths);
    return indexed_any(fn, MPI_COMBINER_INDEXED, count, CV_INT(array_of_blocklengths), 0,
                       CV_INT(array_of_displacements), 0, 0, oldtype, newtype);
}
TM_ALIAS(Type_indexed)

TM_API int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                               MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_indexed_c";
    NEED_BLENS(count, array_of_blocklengths);
    return indexed_any(fn, MPI_COMBINER_INDEXED, count, CV_COUNT(array_of_blocklengths), 0,
                       CV_COUNT(array_of_displacements), 0, 1, oldtype, newtype);
}
TM_ALIAS(Type_indexed_c)

TM_API int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                     const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hindexed";
    NEED_BLENS(count, array_of_blocklengths);
    return indexed_any(fn, MPI_COMBINER_HINDEXED, count, CV_INT(array_of_blocklengths), 0,
                       CV_AINT(array_of_displacements), 1, 0, oldtype, newtype);
}
TM_ALIAS(Type_create_hindexed)

TM_API int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                       const MPI_Count array_of_displacements[],
                                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hindexed_c";
    NEED_BLENS(count, array_of_blocklengths);
    return indexed_any(fn, MPI_COMBINER_HINDEXED, count, CV_COUNT(array_of_blocklengths), 0,
                       CV_COUNT(array_of_displacements), 1, 1, oldtype, newtype);
}
TM_ALIAS(Type_create_hindexed_c)

TM_API int PMPI_Type_create_indexed_block(int count, int blocklength,
                                          const int array_of_displacements[], MPI_Datatype oldtype,
                                          MPI_Datatype *newtype)
{
    return indexed_any("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count,
                       (struct cview){0}, blocklength, CV_INT(array_of_displacements), 0, 0,
                       oldtype, newtype);
}
TM_ALIAS(Type_create_indexed_block)

TM_API int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                            const MPI_Count array_of_displacements[],
                                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed_any("MPI_Type_create_indexed_block_c", MPI_COMBINER_INDEXED_BLOCK, count,
                       (struct cview){0}, blocklength, CV_COUNT(array_of_displacements), 0, 1,
                       oldtype, newtype);
}
TM_ALIAS(Type_create_indexed_block_c)

TM_API int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                           const MPI_Aint array_of_displacements[],
                                           MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed_any("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count,
                       (struct cview){0}, blocklength, CV_AINT(array_of_displacements), 1, 0,
                       oldtype, newtype);
}
TM_ALIAS(Type_create_hindexed_block)

TM_API int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                             const MPI_Count array_of_displacements[],
                                             MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return indexed_any("MPI_Type_create_hindexed_block_c", MPI_COMBINER_HINDEXED_BLOCK, count,
                       (struct cview){0}, blocklength, CV_COUNT(array_of_displacements), 1, 1,
                       oldtype, newtype);
}
TM_ALIAS(Type_create_hindexed_block_c)

static int struct_any(const char *fn, MPI_Count count, struct cview blens, struct cview displs,
                      const MPI_Datatype *types, int large_api, MPI_Datatype *newtype)
{
    NEED_ME(fn);
    if (TM_UNLIKELY(count < 0)) FAIL(MPI_ERR_COUNT, "invalid count %lld", count);
    if (TM_UNLIKELY(!newtype)) FAIL(MPI_ERR_ARG, "newtype is NULL");
    CHECK(check_array(me, fn, count, blens, "array_of_blocklengths"));
    CHECK(check_array(me, fn, count, displs, "array_of_displacements"));
    if (TM_UNLIKELY(count > 0 && !types)) FAIL(MPI_ERR_ARG, "array_of_types is NULL");
    CHECK(check_blens(me, fn, count, blens));
    const struct tm_type **ts = malloc(sizeof *ts * (size_t)(count ? count : 1));
    if (!ts) FAIL(MPI_ERR_NO_MEM, "out of memory");
    for (MPI_Count i = 0; i < count; i++) {
        ts[i] = tm_type_query(types[i]);
        if (TM_UNLIKELY(!ts[i])) {
            free(ts);
            FAIL(MPI_ERR_TYPE, "invalid datatype %d in array_of_types[%lld]", types[i], i);
        }
    }
    if (TM_UNLIKELY(count > INT_MAX)) {
        free(ts); /* the envelope counts its datatypes in int (MPI_Type_get_envelope_c too) */
        FAIL(MPI_ERR_COUNT, "count %lld: more than %d datatypes", count, INT_MAX);
    }
    struct tm_flat f;
    tm_flat_init(&f);
    int r = 0;
    for (MPI_Count i = 0; i < count && !r; i++)
        r = tm_flat_add(&f, (ptrdiff_t)cv_at(displs, i), (size_t)cv_at(blens, i), ts[i]);
    MPI_Count n, nint;
    MPI_Count *v = r ? NULL : indexed_values(count, blens, 0, displs, 1, &n, &nint);
    struct tm_envelope env;
    if (!r)
        r = v ? envelope_any(&env, MPI_COMBINER_STRUCT, NULL, 0, v, nint, n,
                             large_api && !ints_fit(v, nint), (int)count, ts)
              : -ENOMEM;
    free(v);
    free(ts);
    if (r < 0) return tm_flat_discard(&f), flat_err(me, fn, r);
    return tm_dtype_publish(me, fn, &f, 0, 0, 0, 1, &env, newtype);
}

TM_API int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[],
                                   const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return struct_any("MPI_Type_create_struct", count, CV_INT(array_of_blocklengths),
                      CV_AINT(array_of_displacements), array_of_types, 0, newtype);
}
TM_ALIAS(Type_create_struct)

TM_API int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                     const MPI_Count array_of_displacements[],
                                     const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return struct_any("MPI_Type_create_struct_c", count, CV_COUNT(array_of_blocklengths),
                      CV_COUNT(array_of_displacements), array_of_types, 1, newtype);
}
TM_ALIAS(Type_create_struct_c)

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
            long long off = base + runs[fast][q].start * stride[fast], d;
            if (__builtin_mul_overflow(off, (long long)old->extent, &d)) return -E2BIG;
            int r = tm_flat_add(f, (ptrdiff_t)d, (size_t)runs[fast][q].len, old);
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
static int grid_layout(int ndims, const long long *sizes, int order, int *dims, long long *stride,
                       long long *ret_total)
{
    long long s = 1;
    for (int j = 0; j < ndims; j++) {
        int k = order == MPI_ORDER_C ? ndims - 1 - j : j; /* fastest first */
        stride[k] = s;
        dims[ndims - 1 - j] = k;
        if (__builtin_mul_overflow(s, sizes[k], &s)) return -E2BIG;
    }
    *ret_total = s;
    return 0;
}

static int make_grid_type(struct tm_rank *me, const char *fn, int ndims, const long long *sizes,
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

/* The envelope values of subarray (sizes, subsizes, starts) and darray (gsizes) after the ints
 * both layouts keep as ints; NULL: out of memory. */
static MPI_Count *grid_values(int ndims, const long long *const *arrays, int narrays)
{
    MPI_Count *v = malloc(sizeof *v * (size_t)(ndims * narrays + 1));
    if (!v) return NULL;
    for (int j = 0; j < narrays; j++)
        for (int k = 0; k < ndims; k++)
            v[j * ndims + k] = arrays[j][k];
    return v;
}

static int subarray_any(const char *fn, int ndims, struct cview sizes, struct cview subsizes,
                        struct cview starts, int order, MPI_Datatype oldtype, int large_api,
                        MPI_Datatype *newtype)
{
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, 0, oldtype, newtype, &old));
    if (TM_UNLIKELY(ndims <= 0)) FAIL(MPI_ERR_ARG, "invalid ndims %d", ndims);
    if (TM_UNLIKELY(cv_null(sizes) || cv_null(subsizes) || cv_null(starts)))
        FAIL(MPI_ERR_ARG, "an array argument is NULL");
    if (TM_UNLIKELY(order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        FAIL(MPI_ERR_ARG, "invalid order %d", order);
    long long sz[ndims], sub[ndims], st[ndims];
    for (int k = 0; k < ndims; k++) {
        long long n = cv_at(sizes, k), su = cv_at(subsizes, k), s0 = cv_at(starts, k);
        if (TM_UNLIKELY(n <= 0 || su < 0 || su > n || s0 < 0 || s0 > n - su))
            FAIL(MPI_ERR_ARG, "dimension %d: size %lld, subsize %lld, start %lld do not fit", k, n,
                 su, s0);
        sz[k] = n, sub[k] = su, st[k] = s0;
    }
    struct run rr[ndims];
    struct run *runs[ndims];
    int nr[ndims];
    for (int k = 0; k < ndims; k++) {
        rr[k] = (struct run){st[k], sub[k]};
        runs[k] = &rr[k];
        nr[k] = sub[k] ? 1 : 0;
    }
    /* int layout: {ndims, sizes, subsizes, starts, order}; large-count layout: ints {ndims,
     * order}, the three arrays as large counts */
    const long long *arrays[3] = {sz, sub, st};
    MPI_Count *v = grid_values(ndims, arrays, 3);
    if (!v) FAIL(MPI_ERR_NO_MEM, "out of memory");
    int large = large_api && !ints_fit(v, 3 * (MPI_Count)ndims);
    int fixed[2] = {ndims, order}, r;
    struct tm_envelope env;
    if (large) {
        r = envelope_any(&env, MPI_COMBINER_SUBARRAY, fixed, 2, v, 0, 3 * ndims, 1, 1, &old);
    } else {
        int *ints = malloc(sizeof *ints * (size_t)(3 * ndims + 2));
        r = ints ? 0 : -ENOMEM;
        if (ints) {
            ints[0] = ndims;
            for (int k = 0; k < 3 * ndims; k++)
                ints[1 + k] = (int)v[k];
            ints[3 * ndims + 1] = order;
            r = tm_envelope_make(&env, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0, NULL, 1,
                                 &old);
        }
        free(ints);
    }
    free(v);
    if (r < 0) FAIL(MPI_ERR_NO_MEM, "out of memory");
    return make_grid_type(me, fn, ndims, sz, order, runs, nr, old, &env, newtype);
}

TM_API int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                                     const int array_of_subsizes[], const int array_of_starts[],
                                     int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return subarray_any("MPI_Type_create_subarray", ndims, CV_INT(array_of_sizes),
                        CV_INT(array_of_subsizes), CV_INT(array_of_starts), order, oldtype, 0,
                        newtype);
}
TM_ALIAS(Type_create_subarray)

TM_API int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                       const MPI_Count array_of_subsizes[],
                                       const MPI_Count array_of_starts[], int order,
                                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return subarray_any("MPI_Type_create_subarray_c", ndims, CV_COUNT(array_of_sizes),
                        CV_COUNT(array_of_subsizes), CV_COUNT(array_of_starts), order, oldtype, 1,
                        newtype);
}
TM_ALIAS(Type_create_subarray_c)

/* The runs of global indices that process coordinate c of p owns in a dimension of n
 * elements (MPI 3.1 §4.1.4); *ret_runs is malloc'd. */
static int darray_runs(int distrib, int darg, long long n, int p, int c, struct run **ret_runs,
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

static int darray_any(const char *fn, int size, int rank, int ndims, struct cview gsizes,
                      const int array_of_distribs[], const int array_of_dargs[],
                      const int array_of_psizes[], int order, MPI_Datatype oldtype, int large_api,
                      MPI_Datatype *newtype)
{
    NEED_ME(fn);
    const struct tm_type *old;
    CHECK(check_common(me, fn, 0, oldtype, newtype, &old));
    if (TM_UNLIKELY(size <= 0 || rank < 0 || rank >= size))
        FAIL(MPI_ERR_ARG, "invalid size %d / rank %d", size, rank);
    if (TM_UNLIKELY(ndims <= 0)) FAIL(MPI_ERR_ARG, "invalid ndims %d", ndims);
    if (TM_UNLIKELY(cv_null(gsizes) || !array_of_distribs || !array_of_dargs || !array_of_psizes))
        FAIL(MPI_ERR_ARG, "an array argument is NULL");
    if (TM_UNLIKELY(order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        FAIL(MPI_ERR_ARG, "invalid order %d", order);
    long long procs = 1, gs[ndims > 0 ? ndims : 1];
    for (int k = 0; k < ndims; k++)
        gs[k] = cv_at(gsizes, k);
    for (int k = 0; k < ndims; k++) {
        long long g = gs[k];
        int d = array_of_distribs[k], a = array_of_dargs[k], p = array_of_psizes[k];
        if (TM_UNLIKELY(g <= 0 || p <= 0))
            FAIL(MPI_ERR_ARG, "dimension %d: gsize %lld, psize %d", k, g, p);
        if (TM_UNLIKELY(d != MPI_DISTRIBUTE_BLOCK && d != MPI_DISTRIBUTE_CYCLIC &&
                        d != MPI_DISTRIBUTE_NONE))
            FAIL(MPI_ERR_ARG, "dimension %d: invalid distribution %d", k, d);
        if (TM_UNLIKELY(d == MPI_DISTRIBUTE_NONE && p != 1))
            FAIL(MPI_ERR_ARG, "dimension %d: MPI_DISTRIBUTE_NONE needs psize 1, not %d", k, p);
        if (TM_UNLIKELY(a != MPI_DISTRIBUTE_DFLT_DARG && a <= 0))
            FAIL(MPI_ERR_ARG, "dimension %d: invalid darg %d", k, a);
        if (TM_UNLIKELY(d == MPI_DISTRIBUTE_BLOCK && a != MPI_DISTRIBUTE_DFLT_DARG &&
                        (long long)a * p < g))
            FAIL(MPI_ERR_ARG, "dimension %d: %d blocks of %d do not cover %lld", k, p, a, g);
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
        err = darray_runs(array_of_distribs[k], array_of_dargs[k], gs[k], array_of_psizes[k],
                          coord[k], &runs[k], &nr[k]);
    /* int layout: {size, rank, ndims, gsizes, distribs, dargs, psizes, order}; large-count
     * layout: the same ints without gsizes, which are the large counts */
    const long long *arrays[1] = {gs};
    MPI_Count *v = err ? NULL : grid_values(ndims, arrays, 1);
    int large = v && large_api && !ints_fit(v, ndims);
    int ni = large ? 3 * ndims + 4 : 4 * ndims + 4;
    int *ints = v ? malloc(sizeof *ints * (size_t)ni) : NULL;
    struct tm_envelope env;
    if (ints) {
        int k = 0;
        ints[k++] = size;
        ints[k++] = rank;
        ints[k++] = ndims;
        for (int j = 0; j < ndims && !large; j++)
            ints[k++] = (int)gs[j];
        memcpy(ints + k, array_of_distribs, sizeof *ints * (size_t)ndims);
        memcpy(ints + k + ndims, array_of_dargs, sizeof *ints * (size_t)ndims);
        memcpy(ints + k + 2 * ndims, array_of_psizes, sizeof *ints * (size_t)ndims);
        ints[ni - 1] = order;
        err = tm_envelope_make_c(&env, MPI_COMBINER_DARRAY, ni, ints, 0, NULL, large ? ndims : 0, v,
                                 1, &old);
    } else {
        err = -ENOMEM;
    }
    free(ints);
    free(v);
    int ret = err ? tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory")
                  : make_grid_type(me, fn, ndims, gs, order, runs, nr, old, &env, newtype);
    for (int k = 0; k < ndims; k++)
        free(runs[k]);
    return ret;
}

TM_API int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                                   const int array_of_distribs[], const int array_of_dargs[],
                                   const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                   MPI_Datatype *newtype)
{
    return darray_any("MPI_Type_create_darray", size, rank, ndims, CV_INT(array_of_gsizes),
                      array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, 0,
                      newtype);
}
TM_ALIAS(Type_create_darray)

TM_API int PMPI_Type_create_darray_c(int size, int rank, int ndims,
                                     const MPI_Count array_of_gsizes[],
                                     const int array_of_distribs[], const int array_of_dargs[],
                                     const int array_of_psizes[], int order, MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    return darray_any("MPI_Type_create_darray_c", size, rank, ndims, CV_COUNT(array_of_gsizes),
                      array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, 1,
                      newtype);
}
TM_ALIAS(Type_create_darray_c)

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

TM_API int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                                      MPI_Datatype *newtype)
{
    /* MPI_Aint holds every MPI_Count here (both 64-bit): the int layout keeps them whole */
    return PMPI_Type_create_resized(oldtype, (MPI_Aint)lb, (MPI_Aint)extent, newtype);
}
TM_ALIAS(Type_create_resized_c)

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
