/* type_query.c — what a program may ask about a type (MPI 3.1 §4.1.5, §4.1.8, §4.1.11,
 * §6.8): sizes, bounds, element counts of a status, addresses, names, Type_match_size; each
 * with its MPI_Count forms (_x, and MPI 4.0's large-count _c), never MPI_UNDEFINED there for
 * lack of room. */
#include <limits.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "lib.h"
#include "objtab.h"
#include "type.h"
#include "type_flat.h"

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define FAIL(code, ...) return tm_err(me, MPI_COMM_WORLD, code, fn, __VA_ARGS__)

/* The type behind a handle for a query (committed or not), or an error. */
#define QUERY(t, dt)                                                                               \
    const struct tm_type *t = tm_type_query(dt);                                                   \
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", dt);

TM_API int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    const char *fn = "MPI_Type_size";
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!size)) FAIL(MPI_ERR_ARG, "size is NULL");
    *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_size)

/* The MPI_Count forms: MPI-3.0's _x and MPI-4.0's _c ask the same, under their own names. */
static int size_count(const char *fn, MPI_Datatype datatype, MPI_Count *size)
{
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!size)) FAIL(MPI_ERR_ARG, "size is NULL");
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}

TM_API int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_x", datatype, size);
}
TM_ALIAS(Type_size_x)

TM_API int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_c", datatype, size);
}
TM_ALIAS(Type_size_c)

TM_API int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    const char *fn = "MPI_Type_get_extent";
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!lb || !extent)) FAIL(MPI_ERR_ARG, "lb or extent is NULL");
    *lb = t->lb;
    *extent = (MPI_Aint)t->extent;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_extent)

static int extent_count(const char *fn, MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!lb || !extent)) FAIL(MPI_ERR_ARG, "lb or extent is NULL");
    *lb = t->lb;
    *extent = (MPI_Count)t->extent;
    return MPI_SUCCESS;
}

TM_API int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_count("MPI_Type_get_extent_x", datatype, lb, extent);
}
TM_ALIAS(Type_get_extent_x)

TM_API int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_count("MPI_Type_get_extent_c", datatype, lb, extent);
}
TM_ALIAS(Type_get_extent_c)

TM_API int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb,
                                     MPI_Aint *true_extent)
{
    const char *fn = "MPI_Type_get_true_extent";
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!true_lb || !true_extent)) FAIL(MPI_ERR_ARG, "true_lb or true_extent is NULL");
    *true_lb = t->true_lb;
    *true_extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_true_extent)

static int true_extent_count(const char *fn, MPI_Datatype datatype, MPI_Count *true_lb,
                             MPI_Count *true_extent)
{
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!true_lb || !true_extent)) FAIL(MPI_ERR_ARG, "true_lb or true_extent is NULL");
    *true_lb = t->true_lb;
    *true_extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}

TM_API int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                                       MPI_Count *true_extent)
{
    return true_extent_count("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent);
}
TM_ALIAS(Type_get_true_extent_x)

TM_API int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb,
                                       MPI_Count *true_extent)
{
    return true_extent_count("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent);
}
TM_ALIAS(Type_get_true_extent_c)

/* The packed bytes of basic type b and, for a pair (returns 1), where its index starts in them:
 * right after the value, the packed form has no padding (typecore/type.h). */
static int packed_basic(enum tm_basic b, size_t *ret_size, size_t *ret_ioff)
{
    enum tm_basic v;
    size_t ioff;
    *ret_size = tm_basic_psize(b);
    if (!tm_basic_pair(b, &v, &ioff)) return 0;
    *ret_ioff = tm_basic_size(v);
    return 1;
}

/* Basic elements in the first r packed bytes of one element of t; -1 if r does not end on an
 * element boundary (a pair whose value came without its index counts one). */
static long long partial_elements(const struct tm_type *t, size_t r)
{
    struct tm_sigrun one;
    size_t ns;
    const struct tm_sigrun *s = tm_type_sig(t, &one, &ns);
    long long n = 0;
    for (size_t i = 0; i < ns && r; i++) {
        size_t bs, ioff = 0;
        int pair = packed_basic(s[i].basic, &bs, &ioff);
        size_t w = pair ? 2 : 1;
        if (r >= s[i].n * bs) {
            n += (long long)(s[i].n * w);
            r -= s[i].n * bs;
            continue;
        }
        n += (long long)((r / bs) * w);
        r %= bs;
        if (pair && r >= ioff && r < ioff + tm_basic_size(tm_basic_pair_index(s[i].basic)))
            return r == ioff ? n + 1 : -1;
        return r ? -1 : n;
    }
    return r ? -1 : n;
}

long long tm_type_elements(const struct tm_type *t, long long bytes)
{
    if (!t->psize) return 0;
    long long q = bytes / (long long)t->psize;
    long long p = partial_elements(t, (size_t)(bytes % (long long)t->psize));
    return p < 0 ? -1 : q * (long long)t->nelem + p;
}

/* Packed bytes that count basic elements of t fill; -1 if count does not end on an element. */
static long long elements_to_bytes(const struct tm_type *t, long long count)
{
    if (!t->nelem) return count ? -1 : 0;
    long long q = count / (long long)t->nelem, rest = count % (long long)t->nelem;
    long long b = q * (long long)t->psize;
    struct tm_sigrun one;
    size_t ns;
    const struct tm_sigrun *s = tm_type_sig(t, &one, &ns);
    for (size_t i = 0; i < ns && rest; i++) {
        size_t bs, ioff = 0;
        long long w = packed_basic(s[i].basic, &bs, &ioff) ? 2 : 1;
        long long run = (long long)s[i].n * w;
        if (rest >= run) {
            rest -= run;
            b += (long long)(s[i].n * bs);
            continue;
        }
        b += rest / w * (long long)bs;
        if (rest % w) b += (long long)ioff;
        rest = 0;
    }
    return b;
}

/* What a status holds in units of datatype, for every width of the answer: whole elements
 * (count) or basic elements (elements); *ret -1 when they do not divide evenly. */
static int status_units(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                        const void *out, int elements, long long *ret)
{
    NEED_ME(fn);
    const struct tm_type *t = tm_type_get(datatype);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", datatype);
    if (TM_UNLIKELY(!status || !out)) FAIL(MPI_ERR_ARG, "status or count is NULL");
    long long b = status->tm_bytes;
    if (elements)
        *ret = tm_type_elements(t, b);
    else if (!t->psize)
        *ret = 0;
    else
        *ret = b % (long long)t->psize ? -1 : b / (long long)t->psize;
    return MPI_SUCCESS;
}

static int status_int(const char *fn, const MPI_Status *status, MPI_Datatype datatype, int elements,
                      int *count)
{
    long long n;
    int err = status_units(fn, status, datatype, count, elements, &n);
    if (err == MPI_SUCCESS) *count = n < 0 || n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return err;
}

static int status_count(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                        int elements, MPI_Count *count)
{
    long long n;
    int err = status_units(fn, status, datatype, count, elements, &n);
    if (err == MPI_SUCCESS) *count = n < 0 ? MPI_UNDEFINED : n;
    return err;
}

TM_API int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return status_int("MPI_Get_count", status, datatype, 0, count);
}
TM_ALIAS(Get_count)

TM_API int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return status_count("MPI_Get_count_c", status, datatype, 0, count);
}
TM_ALIAS(Get_count_c)

TM_API int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return status_int("MPI_Get_elements", status, datatype, 1, count);
}
TM_ALIAS(Get_elements)

TM_API int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return status_count("MPI_Get_elements_x", status, datatype, 1, count);
}
TM_ALIAS(Get_elements_x)

TM_API int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return status_count("MPI_Get_elements_c", status, datatype, 1, count);
}
TM_ALIAS(Get_elements_c)

static int set_elements(const char *fn, MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!status || status == MPI_STATUS_IGNORE)) FAIL(MPI_ERR_ARG, "status is NULL");
    if (TM_UNLIKELY(count < 0)) FAIL(MPI_ERR_COUNT, "invalid count %lld", (long long)count);
    long long b = elements_to_bytes(t, count);
    if (TM_UNLIKELY(b < 0))
        FAIL(MPI_ERR_COUNT, "%lld elements of a type with none", (long long)count);
    status->tm_bytes = b;
    return MPI_SUCCESS;
}

TM_API int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}
TM_ALIAS(Status_set_elements)

TM_API int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}
TM_ALIAS(Status_set_elements_x)

TM_API int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_c", status, datatype, count);
}
TM_ALIAS(Status_set_elements_c)

/* MPI_Get_address, MPI_Aint_add, MPI_Aint_diff: mpi/handle_conv.c. */

TM_API int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_match_size";
    NEED_ME(fn);
    if (TM_UNLIKELY(!datatype)) FAIL(MPI_ERR_ARG, "datatype is NULL");
    static const MPI_Datatype ints[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
    static const MPI_Datatype reals[] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
    static const MPI_Datatype cplx[] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    const MPI_Datatype *c;
    size_t n;
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        c = ints, n = sizeof ints / sizeof *ints;
        break;
    case MPI_TYPECLASS_REAL:
        c = reals, n = sizeof reals / sizeof *reals;
        break;
    case MPI_TYPECLASS_COMPLEX:
        c = cplx, n = sizeof cplx / sizeof *cplx;
        break;
    default:
        FAIL(MPI_ERR_ARG, "invalid typeclass %d", typeclass);
    }
    for (size_t i = 0; i < n; i++)
        if (tm_type_predef(c[i])->size == (size_t)size) {
            *datatype = c[i];
            return MPI_SUCCESS;
        }
    FAIL(MPI_ERR_ARG, "no type of class %d has size %d", typeclass, size);
}
TM_ALIAS(Type_match_size)

TM_API int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    const char *fn = "MPI_Type_set_name";
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!type_name)) FAIL(MPI_ERR_ARG, "type_name is NULL");
    if (TM_UNLIKELY(!t->derived))
        FAIL(MPI_ERR_TYPE, "the name of predefined datatype %s cannot be changed", t->name);
    struct tm_dtype *d = (struct tm_dtype *)t;
    /* Longer names are truncated (MPI 3.1 §6.8 allows it). */
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(d->name, type_name, n);
    d->name[n] = 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_set_name)

TM_API int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    const char *fn = "MPI_Type_get_name";
    NEED_ME(fn);
    QUERY(t, datatype);
    if (TM_UNLIKELY(!type_name || !resultlen)) FAIL(MPI_ERR_ARG, "type_name or resultlen is NULL");
    const char *s = t->derived ? ((const struct tm_dtype *)t)->name : t->name;
    size_t n = strnlen(s, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, s, n);
    type_name[n] = 0;
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_name)
