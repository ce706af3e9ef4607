/* errh.c — error classes, strings and handlers (errh.h). */
#include "errh.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "job.h"
#include "objs.h"

struct tm_errdesc {
    const char *name;
    const char *text;
};

static const struct tm_errdesc tm_errs[MPI_ERR_LASTCODE] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "no error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "invalid datatype"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "invalid tag"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "invalid rank"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "invalid request"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "invalid reduce operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "invalid argument"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE", "message truncated"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "other error"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "internal error"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS", "error code is in status"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "pending request"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "invalid keyval"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "out of memory"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "invalid base"},
    [MPI_ERR_INFO_KEY] = {"MPI_ERR_INFO_KEY", "info key too long"},
    [MPI_ERR_INFO_VALUE] = {"MPI_ERR_INFO_VALUE", "info value too long"},
    [MPI_ERR_INFO_NOKEY] = {"MPI_ERR_INFO_NOKEY", "info key not defined"},
    [MPI_ERR_SPAWN] = {"MPI_ERR_SPAWN", "error spawning processes"},
    [MPI_ERR_PORT] = {"MPI_ERR_PORT", "invalid port name"},
    [MPI_ERR_SERVICE] = {"MPI_ERR_SERVICE", "invalid service name"},
    [MPI_ERR_NAME] = {"MPI_ERR_NAME", "invalid service name in lookup"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "invalid window"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "invalid size"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "invalid displacement"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "invalid info object"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "invalid lock type"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "invalid assert"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT", "conflicting window accesses"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC", "wrong RMA synchronisation"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "invalid file handle"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME", "collective arguments not identical"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "invalid file access mode"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP",
                                     "unsupported data representation"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION", "unsupported operation"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "file does not exist"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "file exists"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "invalid file name"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "permission denied"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "not enough space"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "read-only file or file system"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE", "file in use"},
    [MPI_ERR_DUP_DATAREP] = {"MPI_ERR_DUP_DATAREP", "data representation already defined"},
    [MPI_ERR_CONVERSION] = {"MPI_ERR_CONVERSION", "data conversion failed"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "I/O error"},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE", "RMA target out of window"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH", "cannot attach memory to window"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED", "memory cannot be shared"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR", "wrong window flavor"},
    [MPI_T_ERR_INVALID] = {"MPI_T_ERR_INVALID", "invalid tool interface use"},
    [MPI_T_ERR_MEMORY] = {"MPI_T_ERR_MEMORY", "out of memory in the tool interface"},
    [MPI_T_ERR_NOT_INITIALIZED] = {"MPI_T_ERR_NOT_INITIALIZED",
                                   "the tool interface is not initialized"},
    [MPI_T_ERR_CANNOT_INIT] = {"MPI_T_ERR_CANNOT_INIT", "the tool interface cannot be initialized"},
    [MPI_T_ERR_INVALID_INDEX] = {"MPI_T_ERR_INVALID_INDEX", "invalid variable or category index"},
    [MPI_T_ERR_INVALID_ITEM] = {"MPI_T_ERR_INVALID_ITEM", "invalid enumeration item"},
    [MPI_T_ERR_INVALID_HANDLE] = {"MPI_T_ERR_INVALID_HANDLE", "invalid tool interface handle"},
    [MPI_T_ERR_OUT_OF_HANDLES] = {"MPI_T_ERR_OUT_OF_HANDLES", "no more tool interface handles"},
    [MPI_T_ERR_OUT_OF_SESSIONS] = {"MPI_T_ERR_OUT_OF_SESSIONS",
                                   "no more performance variable sessions"},
    [MPI_T_ERR_INVALID_SESSION] = {"MPI_T_ERR_INVALID_SESSION",
                                   "invalid performance variable session"},
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = {"MPI_T_ERR_CVAR_SET_NOT_NOW",
                                    "control variable cannot be set now"},
    [MPI_T_ERR_CVAR_SET_NEVER] = {"MPI_T_ERR_CVAR_SET_NEVER", "control variable can never be set"},
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = {"MPI_T_ERR_PVAR_NO_STARTSTOP",
                                     "performance variable cannot be started or stopped"},
    [MPI_T_ERR_PVAR_NO_WRITE] = {"MPI_T_ERR_PVAR_NO_WRITE",
                                 "performance variable cannot be written or reset"},
    [MPI_T_ERR_PVAR_NO_ATOMIC] = {"MPI_T_ERR_PVAR_NO_ATOMIC",
                                  "performance variable cannot be read and reset at once"},
    [MPI_T_ERR_INVALID_NAME] = {"MPI_T_ERR_INVALID_NAME", "no variable or category of that name"},
    [MPI_ERR_SESSION] = {"MPI_ERR_SESSION", "invalid session"},
    [MPI_T_ERR_NOT_ACCESSIBLE] = {"MPI_T_ERR_NOT_ACCESSIBLE", "not accessible now"},
    [MPI_T_ERR_NOT_SUPPORTED] = {"MPI_T_ERR_NOT_SUPPORTED", "not supported"},
    [MPI_ERR_ERRHANDLER] = {"MPI_ERR_ERRHANDLER", "invalid error handler"},
};

const char *tm_err_name(int code)
{
    if (code < 0 || code >= MPI_ERR_LASTCODE) return "MPI_ERR_UNKNOWN";
    return tm_errs[code].name;
}

/* Calls user handler fn of kind on *handle with *code (errh_obj.c knows the kinds). */
void tm_errh_call(struct tm_rank *me, MPI_Errhandler eh, int kind, int *handle, int *code);

/* Keeps "fn: detail" as the reason of the returned predefined code (objs.h details). */
static void keep_detail(struct tm_rank *me, int code, const char *fn, const char *detail)
{
    if (!me || !me->objs || code <= MPI_SUCCESS || code >= MPI_ERR_LASTCODE) return;
    struct tm_objs *o = me->objs;
    pthread_mutex_lock(&o->lock);
    struct tm_err_detail *d = &o->details[o->next_detail];
    o->next_detail = (o->next_detail + 1) % TM_ERR_DETAILS;
    d->code = code;
    snprintf(d->text, sizeof d->text, "%s: %s", fn, detail);
    pthread_mutex_unlock(&o->lock);
}

/* The newest kept reason of code into buf, or 0 if none is kept. */
static int find_detail(struct tm_rank *me, int code, char *buf, size_t len)
{
    if (!me || !me->objs) return 0;
    struct tm_objs *o = me->objs;
    int found = 0;
    pthread_mutex_lock(&o->lock);
    for (int i = 1; i <= TM_ERR_DETAILS && !found; i++) {
        struct tm_err_detail *d =
            &o->details[(o->next_detail - i + TM_ERR_DETAILS) % TM_ERR_DETAILS];
        if (d->code == code && d->text[0]) {
            snprintf(buf, len, "%s", d->text);
            found = 1;
        }
    }
    pthread_mutex_unlock(&o->lock);
    return found;
}

static int vraise(struct tm_rank *me, int kind, int handle, MPI_Errhandler eh, int code,
                  const char *fn, const char *fmt, va_list ap)
{
    char detail[200], line[400];
    if (!fmt) fmt = "";
    vsnprintf(detail, sizeof detail, fmt, ap);
    if (eh == MPI_ERRORS_RETURN || (me && eh >= TM_ERRH_BASE)) {
        /* The program sees the code: MPI_Error_string of it gives this reason. */
        keep_detail(me, code, fn, detail);
        if (eh == MPI_ERRORS_RETURN) return code;
        tm_errh_call(me, eh, kind, &handle, &code);
        return code;
    }
    int cls = me ? tm_err_class_of(me, code) : code;
    if (me)
        snprintf(line, sizeof line, "rank %d: %s: %s (%s)", me->rank, fn, detail,
                 tm_err_name(cls < 0 ? code : cls));
    else
        snprintf(line, sizeof line, "%s: %s (%s)", fn, detail, tm_err_name(code));
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    const struct tmpi_svc *svc = tm_lib_load();
    if (svc && svc->rank_self()) svc->job_abort(1, line);
    /* Inside an agent but not on a rank thread (a thread the program started): there is no
     * rank to end and exit() would take the agent down, so report and return. */
    if (svc) return code;
    exit(1);
}

static int verr(struct tm_rank *me, MPI_Comm comm, int code, const char *fn, const char *fmt,
                va_list ap)
{
    MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;
    if (me) {
        struct tm_commref *cr = tm_comm_get(&me->comms, comm);
        if (!cr) {
            comm = MPI_COMM_WORLD;
            cr = tm_comm_get(&me->comms, MPI_COMM_WORLD);
        }
        if (cr) eh = cr->eh;
    }
    return vraise(me, TM_EH_COMM, comm, eh, code, fn, fmt, ap);
}

int tm_err_obj(struct tm_rank *me, int kind, int handle, MPI_Errhandler eh, int code,
               const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vraise(me, kind, handle, eh, code, fn, fmt, ap);
    va_end(ap);
    return r;
}

int tm_err(struct tm_rank *me, MPI_Comm comm, int code, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = verr(me, comm, code, fn, fmt, ap);
    va_end(ap);
    return r;
}

int tm_err_noco(int code, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = verr(tm_self(), MPI_COMM_WORLD, code, fn, fmt, ap);
    va_end(ap);
    return r;
}

int tm_err_class_of(struct tm_rank *me, int code)
{
    if (code >= 0 && code < MPI_ERR_LASTCODE) return code;
    struct tm_objs *o = me ? me->objs : NULL;
    if (!o || code < TM_ERR_FIRST_USER) return -1;
    pthread_mutex_lock(&o->lock);
    int cls = code <= o->lastcode ? o->class_of[code - TM_ERR_FIRST_USER] : -1;
    pthread_mutex_unlock(&o->lock);
    return cls;
}

TM_API int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_set_errhandler", TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_set_errhandler",
                      "invalid communicator %d", comm);
    if (tm_errh_check(me, errhandler, TM_EH_COMM))
        return tm_err(me, comm, MPI_ERR_ERRHANDLER, "MPI_Comm_set_errhandler",
                      "invalid error handler %d", errhandler);
    tm_errh_ref(me, errhandler);
    MPI_Errhandler old = cr->eh;
    cr->eh = errhandler;
    tm_errh_unref(me, old);
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_set_errhandler)

TM_API int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_get_errhandler", TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_get_errhandler",
                      "invalid communicator %d", comm);
    if (!errhandler)
        return tm_err(me, comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler is NULL");
    /* The program gets a reference of its own, to free with MPI_Errhandler_free. */
    tm_errh_ref(me, cr->eh);
    *errhandler = cr->eh;
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_get_errhandler)

TM_API int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, "MPI_Comm_call_errhandler", TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, "MPI_Comm_call_errhandler",
                      "invalid communicator %d", comm);
    tm_err(me, comm, errorcode, "MPI_Comm_call_errhandler", "called by the program");
    /* MPI 3.1 §8.3.4: returns MPI_SUCCESS when the handler returned (whatever it did). */
    return MPI_SUCCESS;
}
TM_ALIAS(Comm_call_errhandler)

TM_API int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Error_string", "string or resultlen is NULL");
    struct tm_rank *me = tm_self();
    int n;
    if (errorcode >= 0 && errorcode < MPI_ERR_LASTCODE) {
        char why[TM_ERR_DETAIL_LEN];
        if (find_detail(me, errorcode, why, sizeof why))
            n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s: %s", tm_errs[errorcode].name,
                         tm_errs[errorcode].text, why);
        else
            n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", tm_errs[errorcode].name,
                         tm_errs[errorcode].text);
    } else {
        if (tm_err_class_of(me, errorcode) < 0)
            return tm_err_noco(MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
        struct tm_objs *o = me->objs;
        pthread_mutex_lock(&o->lock);
        const char *str = o->str[errorcode - TM_ERR_FIRST_USER];
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", str ? str : "");
        pthread_mutex_unlock(&o->lock);
    }
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
TM_ALIAS(Error_string)

TM_API int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass) return tm_err_noco(MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
    int cls = tm_err_class_of(tm_self(), errorcode);
    if (cls < 0)
        return tm_err_noco(MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}
TM_ALIAS(Error_class)
