/* type_attr.c — attributes on derived datatypes (MPI 3.1 §6.7.4) over the generic keyval and
 * attribute machinery (comm/attr.h): a type's list lives in its struct tm_dtype; Type_dup
 * copies it through the copy callbacks, Type_free deletes it through the delete callbacks
 * (type_ctor.c).  A predefined type is shared by every rank, so each rank keeps the lists of
 * the predefined types it puts attributes on in its objs (objs.h type_attrs, by handle). */
#include <stdlib.h>

#include "attr.h"
#include "errh.h"
#include "job.h"
#include "lib.h"
#include "objs.h"
#include "type.h"

#define NEED_ME(fn)                                                                                \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define FAIL(code, ...) return tm_err(me, MPI_COMM_WORLD, code, fn, __VA_ARGS__)

/* The attribute list of datatype dt for attribute calls, or an error.  A predefined type's
 * list is made when make is set (the first set), else *ret may be NULL: no attributes. */
static int attr_list(struct tm_rank *me, const char *fn, MPI_Datatype dt, int make,
                     struct tm_attr ***ret)
{
    const struct tm_type *t = tm_type_query(dt);
    if (TM_UNLIKELY(!t)) FAIL(MPI_ERR_TYPE, "invalid datatype %d", dt);
    if (t->derived) {
        *ret = &((struct tm_dtype *)t)->attrs;
        return MPI_SUCCESS;
    }
    struct tm_objs *o = me->objs;
    *ret = NULL;
    if (o->type_attrs) {
        *ret = &o->type_attrs[dt];
    } else if (make) {
        o->type_attrs = calloc(TM_DTYPE_FIRST, sizeof *o->type_attrs);
        if (!o->type_attrs) FAIL(MPI_ERR_NO_MEM, "out of memory");
        o->ntype_attrs = TM_DTYPE_FIRST;
        *ret = &o->type_attrs[dt];
    }
    return MPI_SUCCESS;
}

struct tm_attr *tm_type_attrs(struct tm_rank *me, MPI_Datatype dt)
{
    const struct tm_type *t = tm_type_query(dt);
    if (!t) return NULL;
    if (t->derived) return ((const struct tm_dtype *)t)->attrs;
    return me->objs->type_attrs ? me->objs->type_attrs[dt] : NULL;
}

TM_API int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    const char *fn = "MPI_Type_set_attr";
    NEED_ME(fn);
    struct tm_attr **list = NULL;
    int err = attr_list(me, fn, datatype, 1, &list);
    if (err) return err;
    err = tm_attr_set(me, TM_ATTR_TYPE, datatype, list, type_keyval, attribute_val);
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
    struct tm_attr **list = NULL;
    int err = attr_list(me, fn, datatype, 0, &list);
    if (err) return err;
    err = tm_attr_get(me, TM_ATTR_TYPE, list ? *list : NULL, type_keyval, (void **)attribute_val,
                      flag);
    if (err) FAIL(err, "keyval %d", type_keyval);
    return MPI_SUCCESS;
}
TM_ALIAS(Type_get_attr)

TM_API int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    const char *fn = "MPI_Type_delete_attr";
    NEED_ME(fn);
    struct tm_attr **list = NULL;
    int err = attr_list(me, fn, datatype, 0, &list);
    if (err) return err;
    struct tm_attr *none = NULL;
    err = tm_attr_delete(me, TM_ATTR_TYPE, datatype, list ? list : &none, type_keyval);
    if (err) FAIL(err, "keyval %d", type_keyval);
    return MPI_SUCCESS;
}
TM_ALIAS(Type_delete_attr)
