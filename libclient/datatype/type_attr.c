/* type_attr.c — attributes on derived datatypes (MPI 3.1 §6.7.4) over the generic keyval and
 * attribute machinery (comm/attr.h): a type's list lives in its struct tm_dtype; Type_dup
 * copies it through the copy callbacks, Type_free deletes it through the delete callbacks
 * (type_ctor.c).  Predefined types have no list here: setting an attribute on one is refused
 * with MPI_ERR_TYPE. */
#include "attr.h"
#include "errh.h"
#include "job.h"
#include "lib.h"
#include "type.h"

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define FAIL(code, ...) return tm_err(me, MPI_COMM_WORLD, code, fn, __VA_ARGS__)

/* The derived type behind a handle for attribute calls, or an error. */
static int attr_type(struct tm_rank *me, const char *fn, MPI_Datatype dt, struct tm_dtype **ret)
{
    const struct tm_type *t = tm_type_query(dt);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", dt);
    if (TM_UNLIKELY(!t->derived))
        FAIL(MPI_ERR_TYPE, "attributes on predefined datatype %s are not supported", t->name);
    *ret = (struct tm_dtype *)t;
    return MPI_SUCCESS;
}

TM_API int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    const char *fn = "MPI_Type_set_attr";
    NEED_ME(fn);
    struct tm_dtype *d = NULL;
    int err = attr_type(me, fn, datatype, &d);
    if (err || !d) return err;
    err = tm_attr_set(me, TM_ATTR_TYPE, datatype, &d->attrs, type_keyval, attribute_val);
    if (err) FAIL(err, "keyval %d", type_keyval);
    return MPI_SUCCESS;
}
TM_ALIAS(Type_set_attr)

TM_API int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                              int *flag)
{
    const char *fn = "MPI_Type_get_attr";
    NEED_ME(fn);
    if (TM_UNLIKELY(!attribute_val || !flag)) FAIL(MPI_ERR_ARG, "attribute_val or flag is NULL");
    const struct tm_type *t = tm_type_query(datatype);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", datatype);
    struct tm_attr *list = t->derived ? ((struct tm_dtype *)t)->attrs : NULL;
    int err = tm_attr_get(me, TM_ATTR_TYPE, list, type_keyval, (void **)attribute_val, flag);
    if (err) FAIL(err, "keyval %d", type_keyval);
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_attr)

TM_API int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    const char *fn = "MPI_Type_delete_attr";
    NEED_ME(fn);
    struct tm_dtype *d = NULL;
    int err = attr_type(me, fn, datatype, &d);
    if (err || !d) return err;
    err = tm_attr_delete(me, TM_ATTR_TYPE, datatype, &d->attrs, type_keyval);
    if (err) FAIL(err, "keyval %d", type_keyval);
    return MPI_SUCCESS;
}
TM_ALIAS(Type_delete_attr)
