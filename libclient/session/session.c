/* session.c — MPI_Session_* (MPI 4.0 §11.3): opening and closing sessions, their info, their
 * error handlers, their process sets and the groups made from them (session.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bsend_buf.h"
#include "coll_net.h"
#include "errh.h"
#include "group.h"
#include "info.h"
#include "job.h"
#include "objs.h"
#include "rank_open.h"
#include "session.h"

static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

struct tm_session *tm_session_get(struct tm_rank *me, MPI_Session h)
{
    return me && me->objs ? tm_objtab_get(me->objs->sessions, TM_SESSION_BASE, h) : NULL;
}

static MPI_Errhandler session_eh(struct tm_rank *me, struct tm_session *s)
{
    pthread_mutex_lock(&me->objs->lock);
    MPI_Errhandler eh = s->eh;
    pthread_mutex_unlock(&me->objs->lock);
    return eh;
}

/* Raises code on session h: its handler if h is a session, else as calls tied to no object
 * raise it (MPI_COMM_WORLD's handler, MPI_ERRORS_ARE_FATAL unless the program changed it). */
#define SERR(me, h, code, ...)                                                                     \
    ({                                                                                             \
        struct tm_session *s_ = tm_session_get(me, h);                                             \
        s_ ? tm_err_obj(me, TM_EH_SESSION, h, session_eh(me, s_), code, fn, __VA_ARGS__)           \
           : tm_err(me, MPI_COMM_WORLD, code, fn, __VA_ARGS__);                                    \
    })

#define ENTER(h)                                                                                   \
    struct tm_rank *me = tm_self();                                                                \
    struct tm_session *s = tm_session_get(me, h);                                                  \
    if (!s) return SERR(me, h, MPI_ERR_SESSION, "invalid session %d", h);

/* The thread level a session asks for in its info ("thread_level", MPI 4.0 §11.3.1): the
 * level, MPI_THREAD_SINGLE without the key, -1 for a value that names no level. */
static int asked_level(const struct tm_info *in)
{
    const char *v = in ? tm_info_lookup(in, "thread_level") : NULL;
    if (!v) return MPI_THREAD_SINGLE;
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(v, level_names[i])) return i;
    return -1;
}

TM_API int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    const char *fn = "MPI_Session_init";
    /* The rank's state first: info handles and error handlers are the rank's objects, made
     * before any session as MPI allows (rank_open.h). */
    struct tm_rank *me = tm_rank_pre(fn);
    if (!me)
        return tm_err_noco(MPI_ERR_OTHER, fn, "called from a thread that is not an MPI rank's");
    if (tm_errh_check(me, errhandler, TM_EH_SESSION))
        return tm_err_obj(me, TM_EH_SESSION, MPI_SESSION_NULL, MPI_ERRORS_ARE_FATAL,
                          MPI_ERR_ERRHANDLER, fn, "%d is not an error handler for sessions",
                          errhandler);
    if (!session)
        return tm_err_obj(me, TM_EH_SESSION, MPI_SESSION_NULL, errhandler, MPI_ERR_ARG, fn,
                          "session is NULL");
    struct tm_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = tm_info_get(me, info)))
        return tm_err_obj(me, TM_EH_SESSION, MPI_SESSION_NULL, errhandler, MPI_ERR_INFO, fn,
                          "invalid info %d", info);
    int level = asked_level(in);
    if (level < 0)
        return tm_err_obj(me, TM_EH_SESSION, MPI_SESSION_NULL, errhandler, MPI_ERR_INFO_VALUE, fn,
                          "thread_level \"%s\" is none of MPI_THREAD_SINGLE, _FUNNELED, "
                          "_SERIALIZED, _MULTIPLE",
                          tm_info_lookup(in, "thread_level"));
    struct tm_session *s = malloc(sizeof *s);
    if (!s)
        return tm_err_obj(me, TM_EH_SESSION, MPI_SESSION_NULL, errhandler, MPI_ERR_NO_MEM, fn,
                          "out of memory");
    int r = tm_rank_open(fn, level, TM_OPEN_SESSION, &me);
    if (r != MPI_SUCCESS) {
        free(s);
        return r;
    }
    /* as MPI_Init: a bad collective setting is this call's error (coll_net.h) */
    char why[256];
    if (tm_coll_conf_check(me->job->svc, why, sizeof why) < 0) {
        free(s);
        tm_rank_close(me, TM_OPEN_SESSION);
        return tm_err_obj(me, TM_EH_SESSION, MPI_SESSION_NULL, errhandler, MPI_ERR_ARG, fn, "%s",
                          why);
    }
    *s = (struct tm_session){me->thread_level, errhandler, tm_bsbuf_new(me)};
    tm_errh_ref(me, errhandler);
    int h = -1;
    if (s->bsb) {
        pthread_mutex_lock(&me->objs->lock);
        h = tm_objtab_add(&me->objs->sessions, TM_SESSION_BASE, s);
        pthread_mutex_unlock(&me->objs->lock);
    }
    if (h < 0) {
        tm_errh_unref(me, errhandler);
        tm_bsbuf_free(me, s->bsb);
        free(s);
        tm_rank_close(me, TM_OPEN_SESSION);
        return tm_err_obj(me, TM_EH_SESSION, MPI_SESSION_NULL, errhandler, MPI_ERR_NO_MEM, fn,
                          "out of memory");
    }
    *session = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Session_init)

/* Local: the program has completed its communication on the session's communicators (MPI 4.0
 * §11.3.1 lets finalize synchronise, and asks nothing of it when that is done). */
TM_API int PMPI_Session_finalize(MPI_Session *session)
{
    const char *fn = "MPI_Session_finalize";
    struct tm_rank *me = tm_self();
    if (!session) return tm_err_noco(MPI_ERR_ARG, fn, "session is NULL");
    MPI_Session h = *session;
    struct tm_session *s = tm_session_get(me, h);
    if (!s) return SERR(me, h, MPI_ERR_SESSION, "invalid session %d", h);
    pthread_mutex_lock(&me->objs->lock);
    tm_objtab_del(me->objs->sessions, TM_SESSION_BASE, h);
    pthread_mutex_unlock(&me->objs->lock);
    tm_errh_unref(me, s->eh);
    tm_bsbuf_free(me, s->bsb); /* the session's buffered messages leave first */
    free(s);
    tm_rank_close(me, TM_OPEN_SESSION);
    *session = MPI_SESSION_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Session_finalize)

TM_API int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    const char *fn = "MPI_Session_get_info";
    ENTER(session);
    if (!info_used) return SERR(me, session, MPI_ERR_ARG, "info_used is NULL");
    MPI_Info h = tm_info_new_handle(me, NULL);
    if (h == MPI_INFO_NULL) return SERR(me, session, MPI_ERR_NO_MEM, "out of memory");
    int r = PMPI_Info_set(h, "thread_level", level_names[s->thread_level]);
    if (r != MPI_SUCCESS) {
        PMPI_Info_free(&h);
        return SERR(me, session, MPI_ERR_NO_MEM, "out of memory");
    }
    *info_used = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Session_get_info)

TM_API int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    const char *fn = "MPI_Session_get_num_psets";
    ENTER(session);
    (void)s;
    if (info != MPI_INFO_NULL && !tm_info_get(me, info))
        return SERR(me, session, MPI_ERR_INFO, "invalid info %d", info);
    if (!npset_names) return SERR(me, session, MPI_ERR_ARG, "npset_names is NULL");
    *npset_names = tm_pset_count(me);
    return MPI_SUCCESS;
}
TM_ALIAS(Session_get_num_psets)

/* *pset_len 0 asks for the length the name needs (with its terminating NUL); otherwise up to
 * *pset_len - 1 characters and a NUL are copied (MPI 4.0 §11.3.2). */
TM_API int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                                     char *pset_name)
{
    const char *fn = "MPI_Session_get_nth_pset";
    ENTER(session);
    (void)s;
    if (info != MPI_INFO_NULL && !tm_info_get(me, info))
        return SERR(me, session, MPI_ERR_INFO, "invalid info %d", info);
    if (!pset_len || *pset_len < 0 || (*pset_len > 0 && !pset_name))
        return SERR(me, session, MPI_ERR_ARG, "pset_len is NULL or negative, or pset_name NULL");
    int count = tm_pset_count(me);
    if (n < 0 || n >= count)
        return SERR(me, session, MPI_ERR_ARG, "n %d is not below the %d process sets", n, count);
    char name[MPI_MAX_PSET_NAME_LEN];
    int len = tm_pset_name(me, n, name, sizeof name);
    if (*pset_len == 0) {
        *pset_len = len + 1;
        return MPI_SUCCESS;
    }
    int copy = len < *pset_len - 1 ? len : *pset_len - 1;
    memcpy(pset_name, name, (size_t)copy);
    pset_name[copy] = '\0';
    return MPI_SUCCESS;
}
TM_ALIAS(Session_get_nth_pset)

static int pset_check(struct tm_rank *me, MPI_Session session, const char *fn, const char *name,
                      int32_t **ret, int *ret_n)
{
    if (!name) return SERR(me, session, MPI_ERR_ARG, "pset_name is NULL");
    int r = tm_pset_members(me, name, ret, ret_n);
    if (r == -ENOMEM) return SERR(me, session, MPI_ERR_NO_MEM, "out of memory");
    if (r < 0)
        return SERR(me, session, MPI_ERR_ARG,
                    "no process set \"%s\" (MPI_Session_get_nth_pset lists them)", name);
    return MPI_SUCCESS;
}

/* The info of a process set: mpi_size, its number of processes (MPI 4.0 §11.3.2). */
TM_API int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    const char *fn = "MPI_Session_get_pset_info";
    ENTER(session);
    (void)s;
    if (!info) return SERR(me, session, MPI_ERR_ARG, "info is NULL");
    int32_t *v = NULL;
    int n = 0, r = pset_check(me, session, fn, pset_name, &v, &n);
    if (r != MPI_SUCCESS) return r;
    free(v);
    MPI_Info h = tm_info_new_handle(me, NULL);
    char size[16];
    snprintf(size, sizeof size, "%d", n);
    if (h == MPI_INFO_NULL || PMPI_Info_set(h, "mpi_size", size) != MPI_SUCCESS) {
        if (h != MPI_INFO_NULL) PMPI_Info_free(&h);
        return SERR(me, session, MPI_ERR_NO_MEM, "out of memory");
    }
    *info = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Session_get_pset_info)

TM_API int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name,
                                        MPI_Group *newgroup)
{
    const char *fn = "MPI_Group_from_session_pset";
    ENTER(session);
    if (!newgroup) return SERR(me, session, MPI_ERR_ARG, "newgroup is NULL");
    int32_t *v = NULL;
    int n = 0, r = pset_check(me, session, fn, pset_name, &v, &n);
    if (r != MPI_SUCCESS) return r;
    MPI_Group g = tm_group_new(me, v, n);
    free(v);
    if (g == MPI_GROUP_NULL) return SERR(me, session, MPI_ERR_NO_MEM, "out of memory");
    /* made by this rank, not yet given out: nobody else reads it */
    ((struct tm_group *)tm_group_get(me, g))->session_bsb = s->bsb;
    *newgroup = g;
    return MPI_SUCCESS;
}
TM_ALIAS(Group_from_session_pset)

TM_API int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    const char *fn = "MPI_Session_set_errhandler";
    ENTER(session);
    if (tm_errh_check(me, errhandler, TM_EH_SESSION))
        return SERR(me, session, MPI_ERR_ERRHANDLER, "%d is not an error handler for sessions",
                    errhandler);
    tm_errh_ref(me, errhandler);
    pthread_mutex_lock(&me->objs->lock);
    MPI_Errhandler old = s->eh;
    s->eh = errhandler;
    pthread_mutex_unlock(&me->objs->lock);
    tm_errh_unref(me, old);
    return MPI_SUCCESS;
}
TM_ALIAS(Session_set_errhandler)

TM_API int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    const char *fn = "MPI_Session_get_errhandler";
    ENTER(session);
    if (!errhandler) return SERR(me, session, MPI_ERR_ARG, "errhandler is NULL");
    /* A new reference, which the program frees with MPI_Errhandler_free (MPI 3.1 §8.3.4). */
    MPI_Errhandler eh = session_eh(me, s);
    tm_errh_ref(me, eh);
    *errhandler = eh;
    return MPI_SUCCESS;
}
TM_ALIAS(Session_get_errhandler)

TM_API int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    const char *fn = "MPI_Session_call_errhandler";
    ENTER(session);
    (void)s;
    SERR(me, session, errorcode, "called by the program");
    return MPI_SUCCESS;
}
TM_ALIAS(Session_call_errhandler)

/* A session's Fortran handle is its C one: both are small integers of the rank's table. */
TM_API MPI_Fint PMPI_Session_c2f(MPI_Session session)
{
    return (MPI_Fint)session;
}
TM_ALIAS(Session_c2f)

TM_API MPI_Session PMPI_Session_f2c(MPI_Fint session)
{
    return (MPI_Session)session;
}
TM_ALIAS(Session_f2c)

/* ---- the session's buffer for buffered sends (MPI 4.1 §3.6.2) ---- */

static int session_err(struct tm_rank *me, int h, int code, const char *fn, const char *msg)
{
    return SERR(me, h, code, "%s", msg);
}

static int session_attach(const char *fn, MPI_Session session, void *buffer, MPI_Count size)
{
    ENTER(session);
    return tm_bsbuf_attach(me, s->bsb, session_err, session, fn, buffer, size);
}
TM_API int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    return session_attach("MPI_Session_attach_buffer", session, buffer, size);
}
TM_ALIAS(Session_attach_buffer)
TM_API int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    return session_attach("MPI_Session_attach_buffer_c", session, buffer, size);
}
TM_ALIAS(Session_attach_buffer_c)

static int session_detach(const char *fn, MPI_Session session, void *buffer_addr, int *int_size,
                          MPI_Count *count_size)
{
    ENTER(session);
    return tm_bsbuf_detach(me, s->bsb, session_err, session, fn, buffer_addr, int_size, count_size);
}
TM_API int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    return session_detach("MPI_Session_detach_buffer", session, buffer_addr, size, NULL);
}
TM_ALIAS(Session_detach_buffer)
TM_API int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    return session_detach("MPI_Session_detach_buffer_c", session, buffer_addr, NULL, size);
}
TM_ALIAS(Session_detach_buffer_c)

TM_API int PMPI_Session_flush_buffer(MPI_Session session)
{
    const char *fn = "MPI_Session_flush_buffer";
    ENTER(session);
    (void)fn;
    tm_bsbuf_flush(me, s->bsb);
    return MPI_SUCCESS;
}
TM_ALIAS(Session_flush_buffer)

TM_API int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    const char *fn = "MPI_Session_iflush_buffer";
    ENTER(session);
    return tm_bsbuf_iflush(me, s->bsb, session_err, session, fn, request);
}
TM_ALIAS(Session_iflush_buffer)
