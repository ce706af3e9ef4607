/* attr_api.c — communicator attributes and keyvals (MPI_Comm_*_attr, the deprecated
 * MPI_Attr_* / MPI_Keyval_*), the predefined attributes of MPI_COMM_WORLD, the keyvals of
 * datatypes and windows (the predefined callbacks are in attr_predef.c). */
#include <string.h>

#include "attr.h"
#include "comm.h"
#include "errh.h"
#include "job.h"
#include "objs.h"

#define ENTER(fn)                                                                                  \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define GET_COMM(fn, comm)                                                                         \
    ENTER(fn);                                                                                     \
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);                                    \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);

/* ---- keyvals ---- */

static int create_keyval(const char *fn, int kind, void (*copy)(void), void (*del)(void),
                         int *keyval, void *extra)
{
    ENTER(fn);
    if (!keyval) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "keyval is NULL");
    int err = tm_keyval_create(me, kind, copy, del, extra, keyval);
    if (err) return tm_err(me, MPI_COMM_WORLD, err, fn, "out of memory");
    return MPI_SUCCESS;
}

static int free_keyval(const char *fn, int kind, int *keyval)
{
    ENTER(fn);
    if (!keyval) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "keyval is NULL");
    int err = tm_keyval_free(me, kind, keyval);
    if (err) return tm_err(me, MPI_COMM_WORLD, err, fn, "invalid keyval %d", *keyval);
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                   MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                                   int *comm_keyval, void *extra_state)
{
    return create_keyval("MPI_Comm_create_keyval", TM_ATTR_COMM, (void (*)(void))comm_copy_attr_fn,
                         (void (*)(void))comm_delete_attr_fn, comm_keyval, extra_state);
}
TM_ALIAS(Comm_create_keyval)

TM_API int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
                              int *keyval, void *extra_state)
{
    return create_keyval("MPI_Keyval_create", TM_ATTR_COMM, (void (*)(void))copy_fn,
                         (void (*)(void))delete_fn, keyval, extra_state);
}
TM_ALIAS(Keyval_create)

TM_API int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                                   MPI_Type_delete_attr_function *type_delete_attr_fn,
                                   int *type_keyval, void *extra_state)
{
    return create_keyval("MPI_Type_create_keyval", TM_ATTR_TYPE, (void (*)(void))type_copy_attr_fn,
                         (void (*)(void))type_delete_attr_fn, type_keyval, extra_state);
}
TM_ALIAS(Type_create_keyval)

TM_API int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                                  MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                                  void *extra_state)
{
    return create_keyval("MPI_Win_create_keyval", TM_ATTR_WIN, (void (*)(void))win_copy_attr_fn,
                         (void (*)(void))win_delete_attr_fn, win_keyval, extra_state);
}
TM_ALIAS(Win_create_keyval)

TM_API int PMPI_Comm_free_keyval(int *comm_keyval)
{
    return free_keyval("MPI_Comm_free_keyval", TM_ATTR_COMM, comm_keyval);
}
TM_ALIAS(Comm_free_keyval)

TM_API int PMPI_Keyval_free(int *keyval)
{
    return free_keyval("MPI_Keyval_free", TM_ATTR_COMM, keyval);
}
TM_ALIAS(Keyval_free)

TM_API int PMPI_Type_free_keyval(int *type_keyval)
{
    return free_keyval("MPI_Type_free_keyval", TM_ATTR_TYPE, type_keyval);
}
TM_ALIAS(Type_free_keyval)

TM_API int PMPI_Win_free_keyval(int *win_keyval)
{
    return free_keyval("MPI_Win_free_keyval", TM_ATTR_WIN, win_keyval);
}
TM_ALIAS(Win_free_keyval)

/* ---- communicator attributes ---- */

/* The predefined keys (mpi.h); their values live in the rank's objs (pointers stay valid). */
static int predef_index(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB:
        return 0;
    case MPI_HOST:
        return 1;
    case MPI_IO:
        return 2;
    case MPI_WTIME_IS_GLOBAL:
        return 3;
    case MPI_UNIVERSE_SIZE:
        return 4;
    case MPI_APPNUM:
        return 5;
    case MPI_LASTUSEDCODE:
        return 6;
    default:
        return -1;
    }
}

static void *predef_value(struct tm_rank *me, int i)
{
    struct tm_objs *o = me->objs;
    pthread_mutex_lock(&o->lock);
    int v = 0;
    switch (i) {
    case 0:
        v = TM_TAG_UB;
        break; /* the largest tag, the key's own value */
    case 1:
        v = MPI_PROC_NULL;
        break; /* no host process */
    case 2:
        v = MPI_ANY_SOURCE;
        break; /* every rank can do I/O */
    case 3:
        v = 0;
        break; /* clocks are per node */
    case 4:
        v = me->job->size;
        break; /* the universe: the job's ranks and those it may spawn */
    case 5:
        v = me->info ? me->info->appnum : 0;
        break; /* which program of an MPMD launch this rank runs */
    case 6:    /* the largest code in use: MPI_ERR_LASTCODE while the program added none */
        v = o->lastcode;
        break;
    }
    o->predef[i] = v;
    pthread_mutex_unlock(&o->lock);
    return &o->predef[i];
}

static int comm_get_attr(const char *fn, MPI_Comm comm, int keyval, void *value, int *flag)
{
    GET_COMM(fn, comm);
    if (!value || !flag) return tm_err(me, comm, MPI_ERR_ARG, fn, "value or flag is NULL");
    int pi = predef_index(keyval);
    if (pi >= 0) {
        *(void **)value = predef_value(me, pi);
        *flag = 1;
        return MPI_SUCCESS;
    }
    void *v = NULL;
    int err = tm_attr_get(me, TM_ATTR_COMM, cr->attrs, keyval, &v, flag);
    if (err) return tm_err(me, comm, err, fn, "invalid keyval %d", keyval);
    if (*flag) *(void **)value = v;
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    return comm_get_attr("MPI_Comm_get_attr", comm, comm_keyval, attribute_val, flag);
}
TM_ALIAS(Comm_get_attr)

TM_API int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return comm_get_attr("MPI_Attr_get", comm, keyval, attribute_val, flag);
}
TM_ALIAS(Attr_get)

static int comm_set_attr(const char *fn, MPI_Comm comm, int keyval, void *val)
{
    GET_COMM(fn, comm);
    if (predef_index(keyval) >= 0)
        return tm_err(me, comm, MPI_ERR_KEYVAL, fn, "keyval %d is predefined", keyval);
    int err = tm_attr_set(me, TM_ATTR_COMM, comm, &cr->attrs, keyval, val);
    if (err) return tm_err(me, comm, err, fn, "keyval %d", keyval);
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return comm_set_attr("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}
TM_ALIAS(Comm_set_attr)

TM_API int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return comm_set_attr("MPI_Attr_put", comm, keyval, attribute_val);
}
TM_ALIAS(Attr_put)

static int comm_delete_attr(const char *fn, MPI_Comm comm, int keyval)
{
    GET_COMM(fn, comm);
    if (predef_index(keyval) >= 0)
        return tm_err(me, comm, MPI_ERR_KEYVAL, fn, "keyval %d is predefined", keyval);
    int err = tm_attr_delete(me, TM_ATTR_COMM, comm, &cr->attrs, keyval);
    if (err) return tm_err(me, comm, err, fn, "keyval %d", keyval);
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return comm_delete_attr("MPI_Comm_delete_attr", comm, comm_keyval);
}
TM_ALIAS(Comm_delete_attr)

TM_API int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return comm_delete_attr("MPI_Attr_delete", comm, keyval);
}
TM_ALIAS(Attr_delete)

int tm_comm_finalize_attrs(struct tm_rank *me)
{
    /* MPI 3.1 §8.7.1: MPI_COMM_SELF's attributes go first, as if it were freed; then
     * MPI_COMM_WORLD's (MPI 4.0 §11.2.4). */
    static const MPI_Comm order[2] = {MPI_COMM_SELF, MPI_COMM_WORLD};
    for (int i = 0; i < 2; i++) {
        struct tm_commref *cr = tm_comm_get(&me->comms, order[i]);
        int err = cr ? tm_attr_delete_all(me, TM_ATTR_COMM, order[i], &cr->attrs) : 0;
        if (err) return err;
    }
    return MPI_SUCCESS;
}
