/* mpit.c — the MPI_T entry points (mpit.h): init/finalize, enumerations, control variables
 * and their handles, performance variable sessions and handles, categories.
 *
 * Every call takes the rank's struct tm_mpit lock; handles are checked against the lists the
 * rank made them into, so a stale or foreign one gets MPI_T_ERR_INVALID_HANDLE instead of a
 * crash.  Every performance variable counts continuously (start and stop refuse with
 * MPI_T_ERR_PVAR_NO_STARTSTOP); a handle reads a counter from where it was allocated, reset
 * or written (its base), a level as it is now. */
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "mpit.h"
#include "objs.h"
#include "rank_open.h"

struct tm_t_cvar {
    int index;
    struct tm_t_cvar *next;
};

struct tm_t_pvar {
    int index;
    uint64_t base; /* counters: the value read as 0 */
    struct tm_t_pvar *next;
};

struct tm_t_session {
    struct tm_t_pvar *handles;
    struct tm_t_session *next;
};

struct tm_mpit {
    pthread_mutex_t lock; /* everything below and every handle */
    int inits;            /* MPI_T_init_thread calls not yet finalized */
    struct tm_t_cvar *cvars;
    struct tm_t_session *sessions;
    struct tm_t_events *events; /* event registrations (mpit_events.c), NULL: none yet */
};

static void free_handles(struct tm_mpit *t)
{
    while (t->cvars) {
        struct tm_t_cvar *c = t->cvars;
        t->cvars = c->next;
        free(c);
    }
    while (t->sessions) {
        struct tm_t_session *s = t->sessions;
        t->sessions = s->next;
        while (s->handles) {
            struct tm_t_pvar *p = s->handles;
            s->handles = p->next;
            free(p);
        }
        free(s);
    }
    tm_t_events_free(t->events);
    t->events = NULL;
}

void tm_mpit_free(void *p)
{
    struct tm_mpit *t = p;
    free_handles(t);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

TM_API int PMPI_T_init_thread(int required, int *provided)
{
    (void)required;
    struct tm_rank *me = tm_rank_pre("MPI_T_init_thread");
    if (!me) return MPI_T_ERR_CANNOT_INIT;
    pthread_mutex_lock(&me->objs->lock);
    struct tm_mpit *t = me->objs->mpit;
    if (!t && (t = calloc(1, sizeof *t))) {
        pthread_mutex_init(&t->lock, NULL);
        me->objs->mpit = t;
        me->objs->mpit_free = tm_mpit_free;
    }
    pthread_mutex_unlock(&me->objs->lock);
    if (!t) return MPI_T_ERR_MEMORY;
    pthread_mutex_lock(&t->lock);
    t->inits++;
    pthread_mutex_unlock(&t->lock);
    /* every call holds the lock: any thread of the rank may call at any time */
    if (provided) *provided = MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}
TM_ALIAS(T_init_thread)

/* The calling rank's interface, locked, or NULL (not initialized). */
struct tm_mpit *tm_mpit_enter(void)
{
    struct tm_rank *me = tm_self();
    if (!me || !me->objs) return NULL;
    pthread_mutex_lock(&me->objs->lock);
    struct tm_mpit *t = me->objs->mpit;
    pthread_mutex_unlock(&me->objs->lock);
    if (!t) return NULL;
    pthread_mutex_lock(&t->lock);
    if (t->inits > 0) return t;
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

#define ENTER()                                                                                    \
    struct tm_mpit *t = tm_mpit_enter();                                                           \
    if (!t) return MPI_T_ERR_NOT_INITIALIZED;                                                      \
    struct tm_rank *me = tm_self();                                                                \
    (void)me;                                                                                      \
    int rc = MPI_SUCCESS;
#define OUT(code)                                                                                  \
    do {                                                                                           \
        rc = (code);                                                                               \
        goto out;                                                                                  \
    } while (0)
#define LEAVE()                                                                                    \
    goto out; /* every exit passes the unlock, also in calls that never leave early */             \
    out:                                                                                           \
    pthread_mutex_unlock(&t->lock);                                                                \
    return rc;

TM_API int PMPI_T_finalize(void)
{
    ENTER();
    /* the last finalize ends every handle the rank had (MPI 4.0 §15.3.4) */
    if (--t->inits == 0) free_handles(t);
    LEAVE();
}
TM_ALIAS(T_finalize)

/* MPI's string out-arguments: with len 0 or buf NULL only the length the string needs (its
 * NUL included) is returned; otherwise up to *len - 1 characters and a NUL. */
static void put_str(const char *s, char *buf, int *len)
{
    if (!len) return;
    size_t n = strlen(s);
    if (!buf || *len <= 0) {
        *len = (int)n + 1;
        return;
    }
    size_t c = n < (size_t)*len - 1 ? n : (size_t)*len - 1;
    memcpy(buf, s, c);
    buf[c] = '\0';
    *len = (int)c + 1;
}

static MPI_Datatype dtype_of(enum tm_t_type ty)
{
    return ty == TM_T_INT        ? MPI_INT
           : ty == TM_T_UNSIGNED ? MPI_UNSIGNED
           : ty == TM_T_ULL      ? MPI_UNSIGNED_LONG_LONG
                                 : MPI_CHAR;
}

static const struct tm_t_enum *enum_get(MPI_T_enum e)
{
    for (int i = 0; i < tm_t_nenums; i++)
        if ((const struct tm_t_enum *)e == &tm_t_enums[i]) return &tm_t_enums[i];
    return NULL;
}

static MPI_T_enum enum_handle(int i)
{
    return i < 0 ? MPI_T_ENUM_NULL : (MPI_T_enum)(uintptr_t)&tm_t_enums[i];
}

TM_API int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    ENTER();
    const struct tm_t_enum *e = enum_get(enumtype);
    if (!e) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (num) *num = e->n;
    put_str(e->name, name, name_len);
    LEAVE();
}
TM_ALIAS(T_enum_get_info)

TM_API int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name,
                                int *name_len)
{
    ENTER();
    const struct tm_t_enum *e = enum_get(enumtype);
    if (!e) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (index < 0 || index >= e->n) OUT(MPI_T_ERR_INVALID_ITEM);
    if (value) *value = index;
    put_str(e->items[index], name, name_len);
    LEAVE();
}
TM_ALIAS(T_enum_get_item)

TM_API int PMPI_T_cvar_get_num(int *num_cvar)
{
    ENTER();
    if (!num_cvar) OUT(MPI_T_ERR_INVALID);
    *num_cvar = tm_t_ncvars();
    LEAVE();
}
TM_ALIAS(T_cvar_get_num)

TM_API int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                                MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                                int *desc_len, int *bind, int *scope)
{
    ENTER();
    struct tm_t_var var;
    char nm[TM_T_NAME_MAX];
    if (tm_t_cvar(cvar_index, &var, nm) < 0) OUT(MPI_T_ERR_INVALID_INDEX);
    const struct tm_t_var *v = &var;
    put_str(v->name, name, name_len);
    put_str(v->desc, desc, desc_len);
    if (verbosity) *verbosity = v->verbosity;
    if (datatype) *datatype = dtype_of(v->type);
    if (enumtype) *enumtype = enum_handle(v->enumtype);
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (scope) *scope = v->scope;
    LEAVE();
}
TM_ALIAS(T_cvar_get_info)

static const char *cvar_name_at(int i, void *arg, char buf[TM_T_NAME_MAX])
{
    struct tm_t_var v;
    return tm_t_cvar(i, &v, buf) == 0 ? v.name : NULL;
}

TM_API int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    ENTER();
    if (!name || !cvar_index) OUT(MPI_T_ERR_INVALID);
    int i = tm_t_find(name, cvar_name_at, NULL);
    if (i < 0) OUT(MPI_T_ERR_INVALID_NAME);
    *cvar_index = i;
    LEAVE();
}
TM_ALIAS(T_cvar_get_index)

/* A variable's value: integers as uint64, a string (never NULL: "" when unset). */
static void var_read(struct tm_rank *me, const struct tm_t_var *v, uint64_t *val, const char **s,
                     char buf[TM_T_STR_MAX])
{
    *val = 0;
    *s = NULL;
    v->read(me, v->arg, val, s, buf);
    if (v->type == TM_T_STRING && !*s) *s = "";
}

static int var_count(struct tm_rank *me, const struct tm_t_var *v)
{
    if (v->type != TM_T_STRING) return 1;
    uint64_t val;
    const char *s;
    char buf[TM_T_STR_MAX];
    var_read(me, v, &val, &s, buf);
    return (int)strlen(s) + 1;
}

static void var_store(const struct tm_t_var *v, uint64_t val, const char *s, void *buf)
{
    switch (v->type) {
    case TM_T_INT:
        *(int *)buf = (int)val;
        break;
    case TM_T_UNSIGNED:
        *(unsigned *)buf = (unsigned)val;
        break;
    case TM_T_ULL:
        *(unsigned long long *)buf = val;
        break;
    default:
        memcpy(buf, s, strlen(s) + 1);
        break;
    }
}

TM_API int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                                    int *count)
{
    ENTER();
    (void)obj_handle; /* every variable binds to no object */
    struct tm_t_var var;
    char nm[TM_T_NAME_MAX];
    if (tm_t_cvar(cvar_index, &var, nm) < 0) OUT(MPI_T_ERR_INVALID_INDEX);
    const struct tm_t_var *v = &var;
    if (!handle || !count) OUT(MPI_T_ERR_INVALID);
    struct tm_t_cvar *c = malloc(sizeof *c);
    if (!c) OUT(MPI_T_ERR_MEMORY);
    *c = (struct tm_t_cvar){cvar_index, t->cvars};
    t->cvars = c;
    *count = var_count(me, v);
    *handle = c;
    LEAVE();
}
TM_ALIAS(T_cvar_handle_alloc)

/* The cvar handle h of t, unlinked when unlink; NULL when it is not one of t's. */
static struct tm_t_cvar *cvar_find(struct tm_mpit *t, MPI_T_cvar_handle h, int unlink)
{
    for (struct tm_t_cvar **pp = &t->cvars; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            struct tm_t_cvar *c = *pp;
            if (unlink) *pp = c->next;
            return c;
        }
    return NULL;
}

TM_API int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    ENTER();
    struct tm_t_cvar *c = handle ? cvar_find(t, *handle, 1) : NULL;
    if (!c) OUT(MPI_T_ERR_INVALID_HANDLE);
    free(c);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    LEAVE();
}
TM_ALIAS(T_cvar_handle_free)

TM_API int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    ENTER();
    struct tm_t_cvar *c = cvar_find(t, handle, 0);
    if (!c) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (!buf) OUT(MPI_T_ERR_INVALID);
    struct tm_t_var var;
    char nm[TM_T_NAME_MAX], sbuf[TM_T_STR_MAX];
    tm_t_cvar(c->index, &var, nm);
    const struct tm_t_var *v = &var;
    uint64_t val;
    const char *s;
    var_read(me, v, &val, &s, sbuf);
    var_store(v, val, s, buf);
    LEAVE();
}
TM_ALIAS(T_cvar_read)

/* No setting changes once the job runs: the agent's are the agent's, the job's were applied
 * when the job's state was made (mpit.h). */
TM_API int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    ENTER();
    struct tm_t_cvar *c = cvar_find(t, handle, 0);
    if (!c) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (!buf) OUT(MPI_T_ERR_INVALID);
    rc = MPI_T_ERR_CVAR_SET_NEVER;
    LEAVE();
}
TM_ALIAS(T_cvar_write)

TM_API int PMPI_T_pvar_get_num(int *num_pvar)
{
    ENTER();
    if (!num_pvar) OUT(MPI_T_ERR_INVALID);
    *num_pvar = tm_t_npvars();
    LEAVE();
}
TM_ALIAS(T_pvar_get_num)

TM_API int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                                int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                                char *desc, int *desc_len, int *bind, int *readonly,
                                int *continuous, int *atomic)
{
    ENTER();
    struct tm_t_var v;
    char nm[TM_T_NAME_MAX];
    if (tm_t_pvar(pvar_index, &v, nm) < 0) OUT(MPI_T_ERR_INVALID_INDEX);
    put_str(v.name, name, name_len);
    put_str(v.desc, desc, desc_len);
    if (verbosity) *verbosity = v.verbosity;
    if (var_class) *var_class = v.var_class;
    if (datatype) *datatype = dtype_of(v.type);
    if (enumtype) *enumtype = enum_handle(v.enumtype);
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    /* counters may be reset and written (a handle's base), levels only read */
    if (readonly) *readonly = v.var_class != MPI_T_PVAR_CLASS_COUNTER;
    if (continuous) *continuous = 1;
    if (atomic) *atomic = v.var_class == MPI_T_PVAR_CLASS_COUNTER;
    LEAVE();
}
TM_ALIAS(T_pvar_get_info)

/* Variables of the class *arg only: a name may be one of each class (MPI 4.0 §15.3.7). */
static const char *pvar_name_at(int i, void *arg, char buf[TM_T_NAME_MAX])
{
    struct tm_t_var v;
    if (i >= tm_t_npvars() || tm_t_pvar(i, &v, buf) < 0) return NULL;
    return v.var_class == *(const int *)arg ? v.name : tm_t_skip;
}

TM_API int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    ENTER();
    if (!name || !pvar_index) OUT(MPI_T_ERR_INVALID);
    if (var_class < MPI_T_PVAR_CLASS_STATE || var_class > MPI_T_PVAR_CLASS_GENERIC)
        OUT(MPI_T_ERR_INVALID_NAME);
    int i = tm_t_find(name, pvar_name_at, &var_class);
    if (i < 0) OUT(MPI_T_ERR_INVALID_NAME);
    *pvar_index = i;
    LEAVE();
}
TM_ALIAS(T_pvar_get_index)

TM_API int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    ENTER();
    if (!session) OUT(MPI_T_ERR_INVALID);
    struct tm_t_session *s = calloc(1, sizeof *s);
    if (!s) OUT(MPI_T_ERR_MEMORY);
    s->next = t->sessions;
    t->sessions = s;
    *session = s;
    LEAVE();
}
TM_ALIAS(T_pvar_session_create)

static struct tm_t_session *session_find(struct tm_mpit *t, MPI_T_pvar_session h, int unlink)
{
    for (struct tm_t_session **pp = &t->sessions; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            struct tm_t_session *s = *pp;
            if (unlink) *pp = s->next;
            return s;
        }
    return NULL;
}

TM_API int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    ENTER();
    struct tm_t_session *s = session ? session_find(t, *session, 1) : NULL;
    if (!s) OUT(MPI_T_ERR_INVALID_SESSION);
    while (s->handles) {
        struct tm_t_pvar *p = s->handles;
        s->handles = p->next;
        free(p);
    }
    free(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    LEAVE();
}
TM_ALIAS(T_pvar_session_free)

static uint64_t pvar_now(struct tm_rank *me, int index)
{
    struct tm_t_var v;
    char nm[TM_T_NAME_MAX];
    tm_t_pvar(index, &v, nm);
    uint64_t val = 0;
    const char *s = NULL;
    char buf[TM_T_STR_MAX];
    v.read(me, v.arg, &val, &s, buf);
    return val;
}

static int pvar_is_counter(int index)
{
    struct tm_t_var v;
    char nm[TM_T_NAME_MAX];
    return tm_t_pvar(index, &v, nm) == 0 && v.var_class == MPI_T_PVAR_CLASS_COUNTER;
}

TM_API int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                                    MPI_T_pvar_handle *handle, int *count)
{
    ENTER();
    (void)obj_handle;
    struct tm_t_session *s = session_find(t, session, 0);
    if (!s) OUT(MPI_T_ERR_INVALID_SESSION);
    if (pvar_index < 0 || pvar_index >= tm_t_npvars()) OUT(MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count) OUT(MPI_T_ERR_INVALID);
    struct tm_t_pvar *p = malloc(sizeof *p);
    if (!p) OUT(MPI_T_ERR_MEMORY);
    /* a counter starts at 0 for its handle (MPI 4.0 §15.3.7: the value at allocation is the
     * variable's starting value) */
    *p = (struct tm_t_pvar){pvar_index, pvar_is_counter(pvar_index) ? pvar_now(me, pvar_index) : 0,
                            s->handles};
    s->handles = p;
    *handle = p;
    *count = 1;
    LEAVE();
}
TM_ALIAS(T_pvar_handle_alloc)

static struct tm_t_pvar *pvar_find(struct tm_t_session *s, MPI_T_pvar_handle h, int unlink)
{
    for (struct tm_t_pvar **pp = &s->handles; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            struct tm_t_pvar *p = *pp;
            if (unlink) *pp = p->next;
            return p;
        }
    return NULL;
}

TM_API int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    ENTER();
    struct tm_t_session *s = session_find(t, session, 0);
    if (!s) OUT(MPI_T_ERR_INVALID_SESSION);
    struct tm_t_pvar *p = handle ? pvar_find(s, *handle, 1) : NULL;
    if (!p) OUT(MPI_T_ERR_INVALID_HANDLE);
    free(p);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    LEAVE();
}
TM_ALIAS(T_pvar_handle_free)

/* Start and stop: every variable is continuous; with MPI_T_PVAR_ALL_HANDLES there is nothing
 * to do (MPI 4.0 §15.3.7 applies them to the handles that can). */
static int startstop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    ENTER();
    struct tm_t_session *s = session_find(t, session, 0);
    if (!s) OUT(MPI_T_ERR_INVALID_SESSION);
    if (handle == MPI_T_PVAR_ALL_HANDLES) OUT(MPI_SUCCESS);
    if (!pvar_find(s, handle, 0)) OUT(MPI_T_ERR_INVALID_HANDLE);
    rc = MPI_T_ERR_PVAR_NO_STARTSTOP;
    LEAVE();
}

TM_API int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return startstop(session, handle);
}
TM_ALIAS(T_pvar_start)

TM_API int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return startstop(session, handle);
}
TM_ALIAS(T_pvar_stop)

enum pv_op { PV_READ, PV_WRITE, PV_RESET, PV_READRESET };

static int pvar_op(MPI_T_pvar_session session, MPI_T_pvar_handle handle, enum pv_op op, void *buf)
{
    ENTER();
    struct tm_t_session *s = session_find(t, session, 0);
    if (!s) OUT(MPI_T_ERR_INVALID_SESSION);
    if (handle == MPI_T_PVAR_ALL_HANDLES && op == PV_RESET) {
        for (struct tm_t_pvar *p = s->handles; p; p = p->next)
            if (pvar_is_counter(p->index)) p->base = pvar_now(me, p->index);
        OUT(MPI_SUCCESS);
    }
    struct tm_t_pvar *p = pvar_find(s, handle, 0);
    if (!p) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (op != PV_RESET && !buf) OUT(MPI_T_ERR_INVALID);
    int counter = pvar_is_counter(p->index);
    if (op != PV_READ && !counter)
        OUT(op == PV_READRESET ? MPI_T_ERR_PVAR_NO_ATOMIC : MPI_T_ERR_PVAR_NO_WRITE);
    uint64_t now = pvar_now(me, p->index);
    if (op == PV_READ || op == PV_READRESET)
        *(unsigned long long *)buf = counter ? now - p->base : now;
    if (op == PV_RESET || op == PV_READRESET) p->base = now;
    /* writing x makes the handle read x now: its base moves */
    if (op == PV_WRITE) p->base = now - *(const unsigned long long *)buf;
    LEAVE();
}

TM_API int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_op(session, handle, PV_READ, buf);
}
TM_ALIAS(T_pvar_read)

TM_API int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    return pvar_op(session, handle, PV_WRITE, (void *)buf);
}
TM_ALIAS(T_pvar_write)

TM_API int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(session, handle, PV_RESET, NULL);
}
TM_ALIAS(T_pvar_reset)

TM_API int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_op(session, handle, PV_READRESET, buf);
}
TM_ALIAS(T_pvar_readreset)

TM_API int PMPI_T_category_get_num(int *num_cat)
{
    ENTER();
    if (!num_cat) OUT(MPI_T_ERR_INVALID);
    *num_cat = tm_t_ncats;
    LEAVE();
}
TM_ALIAS(T_category_get_num)

/* Indices of the cvars (pvars when pv) of category cat into out[len] (NULL: count only);
 * returns how many there are. */
static int cat_members(int cat, int pv, int len, int *out)
{
    int n = 0, total = pv ? tm_t_npvars() : tm_t_ncvars();
    for (int i = 0; i < total; i++) {
        struct tm_t_var v;
        char nm[TM_T_NAME_MAX];
        if (pv)
            tm_t_pvar(i, &v, nm);
        else
            tm_t_cvar(i, &v, nm);
        if (v.category != cat) continue;
        if (out && n < len) out[n] = i;
        n++;
    }
    return n;
}

TM_API int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
                                    int *desc_len, int *num_cvars, int *num_pvars,
                                    int *num_categories)
{
    ENTER();
    if (cat_index < 0 || cat_index >= tm_t_ncats) OUT(MPI_T_ERR_INVALID_INDEX);
    put_str(tm_t_cats[cat_index].name, name, name_len);
    put_str(tm_t_cats[cat_index].desc, desc, desc_len);
    if (num_cvars) *num_cvars = cat_members(cat_index, 0, 0, NULL);
    if (num_pvars) *num_pvars = cat_members(cat_index, 1, 0, NULL);
    if (num_categories) *num_categories = 0; /* the categories are flat */
    LEAVE();
}
TM_ALIAS(T_category_get_info)

static const char *cat_name_at(int i, void *arg, char buf[TM_T_NAME_MAX])
{
    return i < tm_t_ncats ? tm_t_cats[i].name : NULL;
}

int tm_t_cat_find(const char *name)
{
    return tm_t_find(name, cat_name_at, NULL);
}

TM_API int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    ENTER();
    if (!name || !cat_index) OUT(MPI_T_ERR_INVALID);
    int i = tm_t_cat_find(name);
    if (i < 0) OUT(MPI_T_ERR_INVALID_NAME);
    *cat_index = i;
    LEAVE();
}
TM_ALIAS(T_category_get_index)

static int cat_list(int cat_index, int len, int indices[], int pv)
{
    ENTER();
    if (cat_index < 0 || cat_index >= tm_t_ncats) OUT(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices)) OUT(MPI_T_ERR_INVALID);
    cat_members(cat_index, pv, len, indices);
    LEAVE();
}

TM_API int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return cat_list(cat_index, len, indices, 0);
}
TM_ALIAS(T_category_get_cvars)

TM_API int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return cat_list(cat_index, len, indices, 1);
}
TM_ALIAS(T_category_get_pvars)

TM_API int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    ENTER();
    (void)len, (void)indices;
    if (cat_index < 0 || cat_index >= tm_t_ncats) OUT(MPI_T_ERR_INVALID_INDEX);
    LEAVE();
}
TM_ALIAS(T_category_get_categories)

/* The variables and categories are one table fixed for the build: they never change. */
TM_API int PMPI_T_category_changed(int *stamp)
{
    ENTER();
    if (!stamp) OUT(MPI_T_ERR_INVALID);
    *stamp = 0;
    LEAVE();
}
TM_ALIAS(T_category_changed)

void tm_mpit_leave(struct tm_mpit *t)
{
    pthread_mutex_unlock(&t->lock);
}

struct tm_t_events **tm_mpit_events(struct tm_mpit *t)
{
    return &t->events;
}

void tm_t_put_str(const char *s, char *buf, int *len)
{
    put_str(s, buf, len);
}
