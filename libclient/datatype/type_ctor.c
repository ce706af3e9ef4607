/* dtype.c — derived datatype handles: MPI_Type_contiguous, MPI_Type_commit, MPI_Type_free
 * (dtype.h has the lifetime rules). */
#include "type_copy.h"

#include <limits.h>
#include <stdlib.h>

#include "errh.h"
#include "job.h"
#include "objtab.h"

const struct tm_type *tm_dtype_get(struct tm_rank *me, MPI_Datatype dt, int committed_only)
{
    if (!me) return NULL;
    struct tm_dtype *d = tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, dt);
    if (!d || (committed_only && !d->committed)) return NULL;
    return &d->t;
}

void tm_type_release(const struct tm_type *t)
{
    if (!t || !t->derived) return;
    struct tm_dtype *d = (struct tm_dtype *)t;
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1) free(d);
}

static void dtype_drop(void *p)
{
    tm_type_release(&((struct tm_dtype *)p)->t);
}

void tm_dtype_tab_free(struct tm_rank *me)
{
    tm_objtab_free(me->dtypes, dtype_drop);
    me->dtypes = NULL;
}

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

TM_API int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_contiguous";
    NEED_ME(fn);
    if (TM_UNLIKELY(count < 0))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COUNT, fn, "invalid count %d", count);
    const struct tm_type *old = tm_type_query(oldtype);
    if (TM_UNLIKELY(!old))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", oldtype);
    if (TM_UNLIKELY(!newtype))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "newtype is NULL");
    /* Sizes stay representable as an int (MPI_Type_size) and a count of them as a size_t. */
    if (TM_UNLIKELY(count && old->extent > (size_t)INT_MAX / (size_t)count))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COUNT, fn, "type of %d x %zu bytes is too large",
                      count, old->extent);
    struct tm_dtype *d = calloc(1, sizeof *d);
    if (!d) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    d->t = (struct tm_type){
        .size = (size_t)count * old->size,
        .extent = (size_t)count * old->extent,
        .nbasic = count * old->nbasic,
        .basic = old->basic,
        .name = "contiguous type",
        .nunits = (size_t)count * tm_dt_units(old),
        .derived = 1,
    };
    atomic_init(&d->refs, 1);
    int h = tm_objtab_add(&me->dtypes, TM_DTYPE_FIRST, d);
    if (h < 0) {
        free(d);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *newtype = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_contiguous)

TM_API int PMPI_Type_commit(MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_commit";
    NEED_ME(fn);
    if (TM_UNLIKELY(!datatype))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "datatype is NULL");
    /* Committing a predefined type is allowed and does nothing. */
    if (*datatype < TM_DTYPE_FIRST && tm_type_get(*datatype)) return MPI_SUCCESS;
    struct tm_dtype *d = tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, *datatype);
    if (TM_UNLIKELY(!d))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "invalid datatype %d", *datatype);
    d->committed = 1;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_commit)

TM_API int PMPI_Type_free(MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_free";
    NEED_ME(fn);
    if (TM_UNLIKELY(!datatype))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "datatype is NULL");
    struct tm_dtype *d = tm_objtab_get(me->dtypes, TM_DTYPE_FIRST, *datatype);
    if (TM_UNLIKELY(!d))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_TYPE, fn, "%s datatype %d cannot be freed",
                      tm_type_get(*datatype) ? "predefined" : "invalid", *datatype);
    tm_objtab_del(me->dtypes, TM_DTYPE_FIRST, *datatype);
    /* Pending operations keep their own references: they complete normally (MPI 3.1 §4.1.9). */
    tm_type_release(&d->t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Type_free)
