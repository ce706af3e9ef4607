/* errh_obj.c — error handler objects of every kind, and the error classes, codes and strings
 * a program adds (errh.h). */
#include <stdlib.h>
#include <string.h>

#include "errh.h"
#include "job.h"
#include "objs.h"

struct tm_errh {
    int kind;
    void (*fn)(void);
    int refs; /* the program's handle + objects holding it (objs lock) */
};

static int predefined(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT;
}

int tm_errh_check(struct tm_rank *me, MPI_Errhandler eh, int kind)
{
    if (predefined(eh)) return MPI_SUCCESS;
    pthread_mutex_lock(&me->objs->lock);
    struct tm_errh *e = tm_objtab_get(me->objs->errhs, TM_ERRH_BASE, eh);
    int ok = e && e->kind == kind;
    pthread_mutex_unlock(&me->objs->lock);
    return ok ? MPI_SUCCESS : MPI_ERR_ARG;
}

void tm_errh_ref(struct tm_rank *me, MPI_Errhandler eh)
{
    if (predefined(eh) || !me->objs) return;
    pthread_mutex_lock(&me->objs->lock);
    struct tm_errh *e = tm_objtab_get(me->objs->errhs, TM_ERRH_BASE, eh);
    if (e) e->refs++;
    pthread_mutex_unlock(&me->objs->lock);
}

void tm_errh_unref(struct tm_rank *me, MPI_Errhandler eh)
{
    if (predefined(eh) || !me->objs) return;
    pthread_mutex_lock(&me->objs->lock);
    struct tm_errh *e = tm_objtab_get(me->objs->errhs, TM_ERRH_BASE, eh);
    if (e && --e->refs == 0) {
        tm_objtab_del(me->objs->errhs, TM_ERRH_BASE, eh);
        free(e);
    }
    pthread_mutex_unlock(&me->objs->lock);
}

void tm_errh_call(struct tm_rank *me, MPI_Errhandler eh, int kind, int *handle, int *code);
void tm_errh_call(struct tm_rank *me, MPI_Errhandler eh, int kind, int *handle, int *code)
{
    pthread_mutex_lock(&me->objs->lock);
    struct tm_errh *e = tm_objtab_get(me->objs->errhs, TM_ERRH_BASE, eh);
    void (*fn)(void) = e && e->kind == kind ? e->fn : NULL;
    pthread_mutex_unlock(&me->objs->lock);
    if (!fn) return;
    /* Every kind's handle is an int, so one call shape serves them all. */
    ((MPI_Comm_errhandler_function *)(void *)fn)(handle, code);
}

static int create(const char *fn, int kind, void (*f)(void), MPI_Errhandler *errhandler)
{
    /* A session's handler is made before the session (MPI 4.0 §11.4.1). */
    struct tm_rank *me = kind == TM_EH_SESSION ? tm_rank_pre(fn) : tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!f || !errhandler)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "function or errhandler is NULL");
    struct tm_errh *e = malloc(sizeof *e);
    if (!e) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    *e = (struct tm_errh){kind, f, 1};
    pthread_mutex_lock(&me->objs->lock);
    int h = tm_objtab_add(&me->objs->errhs, TM_ERRH_BASE, e);
    pthread_mutex_unlock(&me->objs->lock);
    if (h < 0) {
        free(e);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *errhandler = h;
    return MPI_SUCCESS;
}

TM_API int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                       MPI_Errhandler *errhandler)
{
    return create("MPI_Comm_create_errhandler", TM_EH_COMM, (void (*)(void))comm_errhandler_fn,
                  errhandler);
}
TM_ALIAS(Comm_create_errhandler)

TM_API int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                                      MPI_Errhandler *errhandler)
{
    return create("MPI_Win_create_errhandler", TM_EH_WIN, (void (*)(void))win_errhandler_fn,
                  errhandler);
}
TM_ALIAS(Win_create_errhandler)

TM_API int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                       MPI_Errhandler *errhandler)
{
    return create("MPI_File_create_errhandler", TM_EH_FILE, (void (*)(void))file_errhandler_fn,
                  errhandler);
}
TM_ALIAS(File_create_errhandler)

TM_API int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                          MPI_Errhandler *errhandler)
{
    return create("MPI_Session_create_errhandler", TM_EH_SESSION,
                  (void (*)(void))session_errhandler_fn, errhandler);
}
TM_ALIAS(Session_create_errhandler)

TM_API int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Errhandler_free", TM_ERR_NOINIT);
    if (!errhandler)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler is NULL");
    MPI_Errhandler eh = *errhandler;
    if (!predefined(eh)) {
        pthread_mutex_lock(&me->objs->lock);
        int ok = tm_objtab_get(me->objs->errhs, TM_ERRH_BASE, eh) != NULL;
        pthread_mutex_unlock(&me->objs->lock);
        if (!ok)
            return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ERRHANDLER, "MPI_Errhandler_free",
                          "invalid error handler %d", eh);
        /* Objects that use it keep it until they go (MPI 3.1 §8.3.4). */
        tm_errh_unref(me, eh);
    }
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Errhandler_free)

/* MPI_File_set/get/call_errhandler: io/io_errh.c (files and MPI_FILE_NULL). */

/* A new code of class cls (a new class when cls < 0: its own class) in *ret. */
static int add_code(struct tm_rank *me, int cls, int *ret)
{
    struct tm_objs *o = me->objs;
    pthread_mutex_lock(&o->lock);
    int idx = o->lastcode + 1 - TM_ERR_FIRST_USER;
    if (idx >= o->ncap) {
        int ncap = o->ncap ? o->ncap * 2 : 16;
        int *nc = realloc(o->class_of, sizeof *nc * (size_t)ncap);
        if (nc) o->class_of = nc;
        char **ns = nc ? realloc(o->str, sizeof *ns * (size_t)ncap) : NULL;
        if (!ns) {
            pthread_mutex_unlock(&o->lock);
            return MPI_ERR_NO_MEM;
        }
        memset(ns + o->ncap, 0, sizeof *ns * (size_t)(ncap - o->ncap));
        o->str = ns;
        o->ncap = ncap;
    }
    int code = ++o->lastcode;
    o->class_of[idx] = cls < 0 ? code : cls;
    pthread_mutex_unlock(&o->lock);
    *ret = code;
    return MPI_SUCCESS;
}

TM_API int PMPI_Add_error_class(int *errorclass)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Add_error_class", TM_ERR_NOINIT);
    if (!errorclass)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_class", "errorclass is NULL");
    int err = add_code(me, -1, errorclass);
    if (err) return tm_err(me, MPI_COMM_WORLD, err, "MPI_Add_error_class", "out of memory");
    return MPI_SUCCESS;
}
TM_ALIAS(Add_error_class)

TM_API int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Add_error_code", TM_ERR_NOINIT);
    if (!errorcode)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code", "errorcode is NULL");
    /* The class must be a class: predefined, or added (its own class). */
    if (tm_err_class_of(me, errorclass) != errorclass)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code",
                      "%d is not an error class", errorclass);
    int err = add_code(me, errorclass, errorcode);
    if (err) return tm_err(me, MPI_COMM_WORLD, err, "MPI_Add_error_code", "out of memory");
    return MPI_SUCCESS;
}
TM_ALIAS(Add_error_code)

TM_API int PMPI_Add_error_string(int errorcode, const char *string)
{
    struct tm_rank *me = tm_self();
    const char *fn = "MPI_Add_error_string";
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!string) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "string is NULL");
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                      "string longer than MPI_MAX_ERROR_STRING - 1 (%d)", MPI_MAX_ERROR_STRING - 1);
    /* Predefined codes keep their strings (MPI 3.1 §8.5). */
    if (errorcode < TM_ERR_FIRST_USER || tm_err_class_of(me, errorcode) < 0)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "%d is not an added error code",
                      errorcode);
    char *s = strdup(string);
    if (!s) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    struct tm_objs *o = me->objs;
    pthread_mutex_lock(&o->lock);
    free(o->str[errorcode - TM_ERR_FIRST_USER]);
    o->str[errorcode - TM_ERR_FIRST_USER] = s;
    pthread_mutex_unlock(&o->lock);
    return MPI_SUCCESS;
}
TM_ALIAS(Add_error_string)

/* MPI 4.1 §9.5: strings go before their codes, codes before their classes.  A removed code's
 * slot reads -1 (tm_err_class_of: not a code); removed codes at the top give their numbers back
 * (MPI_LASTUSEDCODE is the largest code still in use). */
enum rm_what { RM_STRING, RM_CODE, RM_CLASS };

static int rm_code(struct tm_rank *me, const char *fn, int code, enum rm_what what)
{
    struct tm_objs *o = me->objs;
    const char *why = NULL;
    pthread_mutex_lock(&o->lock);
    int idx = code - TM_ERR_FIRST_USER;
    int cls = code >= TM_ERR_FIRST_USER && code <= o->lastcode ? o->class_of[idx] : -1;
    if (cls < 0)
        why = "was not added by MPI_Add_error_class or MPI_Add_error_code";
    else if (what == RM_STRING && !o->str[idx])
        why = "has no string added by MPI_Add_error_string";
    else if (what == RM_CODE && cls == code)
        why = "is an error class (MPI_Remove_error_class removes it)";
    else if (what == RM_CLASS && cls != code)
        why = "is an error code, not a class";
    else if (what == RM_CODE && o->str[idx])
        why = "still has its string (MPI_Remove_error_string first)";
    for (int i = 0; !why && what == RM_CLASS && i <= o->lastcode - TM_ERR_FIRST_USER; i++)
        if (i != idx && o->class_of[i] == code) why = "still has error codes (remove them first)";
    if (!why && what == RM_STRING) {
        free(o->str[idx]);
        o->str[idx] = NULL;
    } else if (!why) {
        free(o->str[idx]); /* a class's own string goes with it */
        o->str[idx] = NULL;
        o->class_of[idx] = -1;
        while (o->lastcode >= TM_ERR_FIRST_USER && o->class_of[o->lastcode - TM_ERR_FIRST_USER] < 0)
            o->lastcode--;
    }
    pthread_mutex_unlock(&o->lock);
    if (why) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "%d %s", code, why);
    return MPI_SUCCESS;
}

TM_API int PMPI_Remove_error_string(int errorcode)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Remove_error_string", TM_ERR_NOINIT);
    return rm_code(me, "MPI_Remove_error_string", errorcode, RM_STRING);
}
TM_ALIAS(Remove_error_string)

TM_API int PMPI_Remove_error_code(int errorcode)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Remove_error_code", TM_ERR_NOINIT);
    return rm_code(me, "MPI_Remove_error_code", errorcode, RM_CODE);
}
TM_ALIAS(Remove_error_code)

TM_API int PMPI_Remove_error_class(int errorclass)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Remove_error_class", TM_ERR_NOINIT);
    return rm_code(me, "MPI_Remove_error_class", errorclass, RM_CLASS);
}
TM_ALIAS(Remove_error_class)
