/* win_attr.c — what a window says about itself: the predefined attributes (MPI_WIN_BASE,
 * _SIZE, _DISP_UNIT, _CREATE_FLAVOR, _MODEL), its name, its error handler; and
 * MPI_Alloc_mem / MPI_Free_mem (memory for windows is ordinary memory here: every window of a
 * node is shared already). */
#include <stdlib.h>
#include <string.h>

#include "mem_align.h"
#include "attr.h"
#include "errh.h"
#include "info.h"
#include "job.h"
#include "rma.h"

TM_API int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Win_get_attr";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (!attribute_val || !flag)
        return tm_win_err(me, wr, MPI_ERR_ARG, fn, "attribute_val or flag is NULL");
    const struct tm_win_member *m = &wr->w->m[wr->rank];
    /* MPI returns the predefined window attributes as pointers to values that live as long as
     * the window (C binding: BASE is the pointer itself, the others point to integers). */
    static const int model = MPI_WIN_UNIFIED;
    static const int flavors[5] = {0, MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                                   MPI_WIN_FLAVOR_DYNAMIC, MPI_WIN_FLAVOR_SHARED};
    switch (win_keyval) {
    case MPI_WIN_BASE:
        *(void **)attribute_val = m->base;
        break;
    case MPI_WIN_SIZE:
        *(const void **)attribute_val = &m->size; /* size_t and MPI_Aint have one size */
        break;
    case MPI_WIN_DISP_UNIT:
        *(const void **)attribute_val = &m->disp_unit_int;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        *(const void **)attribute_val = &flavors[wr->w->flavor];
        break;
    case MPI_WIN_MODEL:
        *(const void **)attribute_val = &model;
        break;
    default: {
        void *v = NULL;
        int e = tm_attr_get(me, TM_ATTR_WIN, wr->attrs, win_keyval, &v, flag);
        if (e) return tm_win_err(me, wr, e, fn, "invalid window keyval %d", win_keyval);
        if (*flag) *(void **)attribute_val = v;
        return MPI_SUCCESS;
    }
    }
    *flag = 1;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_get_attr)

static int predefined(int keyval)
{
    return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
           keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

TM_API int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Win_set_attr";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (predefined(win_keyval))
        return tm_win_err(me, wr, MPI_ERR_KEYVAL, fn, "keyval %d is predefined", win_keyval);
    err = tm_attr_set(me, TM_ATTR_WIN, win, &wr->attrs, win_keyval, attribute_val);
    if (err) return tm_win_err(me, wr, err, fn, "cannot set keyval %d", win_keyval);
    return MPI_SUCCESS;
}
TM_ALIAS(Win_set_attr)

TM_API int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    static const char fn[] = "MPI_Win_delete_attr";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (predefined(win_keyval))
        return tm_win_err(me, wr, MPI_ERR_KEYVAL, fn, "keyval %d is predefined", win_keyval);
    err = tm_attr_delete(me, TM_ATTR_WIN, win, &wr->attrs, win_keyval);
    if (err) return tm_win_err(me, wr, err, fn, "cannot delete keyval %d", win_keyval);
    return MPI_SUCCESS;
}
TM_ALIAS(Win_delete_attr)

/* Hints: none changes what this implementation does (every window is shared memory and every
 * accumulate is atomic per element whatever accumulate_ordering says), so the window keeps
 * what it was given and gives it back. */
TM_API int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char fn[] = "MPI_Win_set_info";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    const struct tm_info *in = info == MPI_INFO_NULL ? NULL : tm_info_get(me, info);
    if (info != MPI_INFO_NULL && !in)
        return tm_win_err(me, wr, MPI_ERR_INFO, fn, "invalid info %d", info);
    struct tm_info *cp = tm_info_dup_obj(in);
    if (!cp) return tm_win_err(me, wr, MPI_ERR_NO_MEM, fn, "out of memory");
    tm_info_free_obj(wr->info);
    wr->info = cp;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_set_info)

TM_API int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Win_get_info";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (!info_used) return tm_win_err(me, wr, MPI_ERR_ARG, fn, "info_used is NULL");
    MPI_Info h = tm_info_new_handle(me, wr->info);
    if (h == MPI_INFO_NULL) return tm_win_err(me, wr, MPI_ERR_NO_MEM, fn, "out of memory");
    *info_used = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_get_info)

TM_API int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    static const char fn[] = "MPI_Win_set_name";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    if (!win_name) return tm_win_err(tm_self(), wr, MPI_ERR_ARG, fn, "win_name is NULL");
    size_t n = strnlen(win_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(wr->name, win_name, n);
    wr->name[n] = 0;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_set_name)

TM_API int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    static const char fn[] = "MPI_Win_get_name";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    if (!win_name || !resultlen)
        return tm_win_err(tm_self(), wr, MPI_ERR_ARG, fn, "win_name or resultlen is NULL");
    size_t n = strlen(wr->name);
    memcpy(win_name, wr->name, n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_get_name)

TM_API int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Win_set_errhandler";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (tm_errh_check(me, errhandler, TM_EH_WIN))
        return tm_win_err(me, wr, MPI_ERR_ERRHANDLER, fn, "invalid error handler %d", errhandler);
    tm_errh_ref(me, errhandler);
    MPI_Errhandler old = wr->eh;
    wr->eh = errhandler;
    tm_errh_unref(me, old);
    return MPI_SUCCESS;
}
TM_ALIAS(Win_set_errhandler)

TM_API int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Win_get_errhandler";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (!errhandler) return tm_win_err(me, wr, MPI_ERR_ARG, fn, "errhandler is NULL");
    tm_errh_ref(me, wr->eh); /* the caller's handle is a reference of its own (Errhandler_free) */
    *errhandler = wr->eh;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_get_errhandler)

TM_API int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    static const char fn[] = "MPI_Win_call_errhandler";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    /* The handler ran (a fatal one does not come back): the call itself succeeded. */
    tm_win_err(tm_self(), wr, errorcode, fn, "error %d raised by the program", errorcode);
    return MPI_SUCCESS;
}
TM_ALIAS(Win_call_errhandler)

TM_API int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char fn[] = "MPI_Alloc_mem";
    if (size < 0) return tm_err_noco(MPI_ERR_SIZE, fn, "negative size %td", size);
    if (!baseptr) return tm_err_noco(MPI_ERR_ARG, fn, "baseptr is NULL");
    void *p = NULL;
    if (posix_memalign(&p, tm_mem_align(info, 64), size ? (size_t)size : 1))
        return tm_err_noco(MPI_ERR_NO_MEM, fn, "cannot allocate %td bytes", size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
TM_ALIAS(Alloc_mem)

TM_API int PMPI_Free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
TM_ALIAS(Free_mem)
