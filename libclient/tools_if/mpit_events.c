/* mpit_events.c — MPI_T events (MPI 4.0 §15.3.8): the event types libtmpi raises
 * (core/t_event.h), their registrations, callbacks and instances, and the one source of
 * timestamps.
 *
 * Events are raised in the rank's own thread inside an MPI call, holding no lock
 * (t_event.h), so they are delivered at once, in that context: it requires
 * MPI_T_CB_REQUIRE_MPI_RESTRICTED (the callback may call only the restricted set of MPI
 * functions), and the callback chosen is the one registered for the lowest level at least
 * that safe.  A registration with callbacks for MPI_T_CB_REQUIRE_NONE only drops the event
 * (its dropped handler says so, in the same context).  An instance is valid during its
 * callback only.  Registrations are the rank's (its struct tm_mpit, under its lock); a
 * callback runs without that lock, so it may call MPI_T_event_read and the other MPI_T
 * calls, and a registration freed while one of its callbacks runs goes (with its free
 * callback) when the last one returns. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "info.h"
#include "job.h"
#include "mpit.h"
#include "t_event.h"

#define EV_ELEMS_MAX 3
#define EV_SAFETY_LEVELS 4 /* MPI_T_CB_REQUIRE_NONE .. _ASYNC_SIGNAL_SAFE */
#define EV_INSTANCE_MAGIC 0x7e5e4701u

struct ev_type {
    const char *name, *desc;
    int nelems;
    MPI_Datatype types[EV_ELEMS_MAX];
    MPI_Aint displs[EV_ELEMS_MAX];
    size_t size; /* bytes of the element data (MPI_T_event_copy) */
};

/* One table, indexed by enum tm_t_event_kind: an event index names the same event in every
 * rank and every run of one build. */
static const struct ev_type ev_types[TM_T_EV_KINDS] = {
    [TM_T_EV_UNEXPECTED] = {"tmpi.p2p.unexpected_matched",
                            "a receive of this rank took a message that had arrived before it "
                            "was posted (the unexpected queue): source rank, tag, bytes",
                            3,
                            {MPI_INT, MPI_INT, MPI_COUNT},
                            {offsetof(struct tm_t_ev_unexpected, source),
                             offsetof(struct tm_t_ev_unexpected, tag),
                             offsetof(struct tm_t_ev_unexpected, bytes)},
                            sizeof(struct tm_t_ev_unexpected)},
    [TM_T_EV_BSEND_FULL] = {"tmpi.bsend.buffer_full",
                            "a buffered send of this rank found too little room in its buffer "
                            "and failed with MPI_ERR_BUFFER: destination rank, bytes needed "
                            "(with MPI_BSEND_OVERHEAD), bytes free",
                            3,
                            {MPI_INT, MPI_COUNT, MPI_COUNT},
                            {offsetof(struct tm_t_ev_bsend, dest),
                             offsetof(struct tm_t_ev_bsend, need),
                             offsetof(struct tm_t_ev_bsend, avail)},
                            sizeof(struct tm_t_ev_bsend)},
};

struct tm_t_evreg {
    int kind;
    struct tm_info *info; /* MPI_T_event_handle_set_info's hints (NULL: none) */
    MPI_T_event_cb_function *cb[EV_SAFETY_LEVELS];
    void *user[EV_SAFETY_LEVELS];
    struct tm_info *cb_info[EV_SAFETY_LEVELS];
    MPI_T_event_dropped_cb_function *dropped;
    MPI_Count ndropped;
    int busy;  /* callbacks of it running now */
    int freed; /* MPI_T_event_handle_free'd while busy */
    MPI_T_event_free_cb_function *free_cb;
    void *free_user;
    struct tm_t_evreg *next;
};

struct tm_t_events {
    struct tm_t_evreg *regs;
};

struct tm_t_evinst {
    unsigned magic;
    int kind;
    MPI_Count ts;
    const void *data;
};

static MPI_Count now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (MPI_Count)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void reg_free(struct tm_t_evreg *r)
{
    tm_info_free_obj(r->info);
    for (int i = 0; i < EV_SAFETY_LEVELS; i++)
        tm_info_free_obj(r->cb_info[i]);
    free(r);
}

void tm_t_events_free(struct tm_t_events *ev)
{
    if (!ev) return;
    while (ev->regs) {
        struct tm_t_evreg *r = ev->regs;
        ev->regs = r->next;
        reg_free(r);
    }
    free(ev);
}

/* r if it is one of the rank's live registrations, else NULL (t locked). */
static struct tm_t_evreg *reg_find(struct tm_mpit *t, MPI_T_event_registration h)
{
    struct tm_t_events *ev = *tm_mpit_events(t);
    for (struct tm_t_evreg *r = ev ? ev->regs : NULL; r; r = r->next)
        if (r == h && !r->freed) return r;
    return NULL;
}

static void reg_unlink(struct tm_mpit *t, struct tm_t_evreg *r)
{
    struct tm_t_evreg **p = &(*tm_mpit_events(t))->regs;
    while (*p && *p != r)
        p = &(*p)->next;
    if (*p) *p = r->next;
}

/* One registration's part of a delivery, taken under the lock and run without it. */
struct ev_call {
    struct tm_t_evreg *r;
    MPI_T_event_cb_function *cb;
    void *user;
    MPI_T_event_dropped_cb_function *dropped;
    MPI_Count ndropped;
};

/* The rank's hook (job.h t_event): delivers one instance of kind to its registrations. */
static void ev_fire(struct tm_rank *me, int kind, const void *data)
{
    (void)me;
    struct tm_mpit *t = tm_mpit_enter();
    if (!t) return; /* MPI_T finalized: nobody listens */
    struct tm_t_events *ev = *tm_mpit_events(t);
    int n = 0;
    for (struct tm_t_evreg *r = ev ? ev->regs : NULL; r; r = r->next)
        n += r->kind == kind && !r->freed;
    if (n == 0) {
        tm_mpit_leave(t);
        return;
    }
    struct ev_call *calls = malloc((size_t)n * sizeof *calls);
    n = 0;
    for (struct tm_t_evreg *r = ev->regs; calls && r; r = r->next) {
        if (r->kind != kind || r->freed) continue;
        struct ev_call c = {r, NULL, NULL, NULL, 0};
        int any = 0;
        for (int l = EV_SAFETY_LEVELS - 1; l >= 0; l--) {
            any |= r->cb[l] != NULL;
            if (l >= MPI_T_CB_REQUIRE_MPI_RESTRICTED && r->cb[l]) {
                c.cb = r->cb[l];
                c.user = r->user[l];
            }
        }
        if (!any) continue; /* nobody asked for it */
        if (!c.cb) {        /* only callbacks this context may not call: dropped */
            r->ndropped++;
            c.dropped = r->dropped;
            c.ndropped = r->ndropped;
            c.user = r->user[MPI_T_CB_REQUIRE_NONE];
            if (c.dropped) r->ndropped = 0;
        }
        if (!c.cb && !c.dropped) continue;
        r->busy++;
        calls[n++] = c;
    }
    tm_mpit_leave(t);
    struct tm_t_evinst inst = {EV_INSTANCE_MAGIC, kind, now_ns(), data};
    for (int i = 0; i < n; i++) {
        struct ev_call *c = &calls[i];
        if (c->cb)
            c->cb(&inst, c->r, MPI_T_CB_REQUIRE_MPI_RESTRICTED, c->user);
        else
            c->dropped(c->ndropped, c->r, 0, MPI_T_CB_REQUIRE_MPI_RESTRICTED, c->user);
    }
    inst.magic = 0;
    if (n == 0) {
        free(calls);
        return;
    }
    /* the registrations freed while their callbacks ran go now */
    t = tm_mpit_enter();
    for (int i = 0; i < n; i++) {
        struct tm_t_evreg *r = calls[i].r;
        if (t) r->busy--;
        if (!t || !r->freed || r->busy) {
            calls[i].r = NULL;
            continue;
        }
        reg_unlink(t, r);
    }
    if (t) tm_mpit_leave(t);
    for (int i = 0; i < n; i++) {
        struct tm_t_evreg *r = calls[i].r;
        if (!r) continue;
        if (r->free_cb) r->free_cb(r, MPI_T_CB_REQUIRE_MPI_RESTRICTED, r->free_user);
        reg_free(r);
    }
    free(calls);
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
    goto out;                                                                                      \
    out:                                                                                           \
    tm_mpit_leave(t);                                                                              \
    return rc;

TM_API int PMPI_T_event_get_num(int *num_events)
{
    ENTER();
    if (!num_events) OUT(MPI_T_ERR_INVALID);
    *num_events = TM_T_EV_KINDS;
    LEAVE();
}
TM_ALIAS(T_event_get_num)

TM_API int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                                 MPI_Datatype array_of_datatypes[],
                                 MPI_Aint array_of_displacements[], int *num_elements,
                                 MPI_T_enum *enumtype, MPI_Info *info, char *desc, int *desc_len,
                                 int *bind)
{
    ENTER();
    if (event_index < 0 || event_index >= TM_T_EV_KINDS) OUT(MPI_T_ERR_INVALID_INDEX);
    const struct ev_type *e = &ev_types[event_index];
    if (info) {
        *info = tm_info_new_handle(me, NULL);
        if (*info == MPI_INFO_NULL) OUT(MPI_T_ERR_MEMORY);
    }
    tm_t_put_str(e->name, name, name_len);
    tm_t_put_str(e->desc, desc, desc_len);
    if (verbosity) *verbosity = MPI_T_VERBOSITY_USER_DETAIL;
    /* num_elements: in, the arrays' length; out, the event's element count */
    if (num_elements) {
        for (int i = 0; i < e->nelems && i < *num_elements; i++) {
            if (array_of_datatypes) array_of_datatypes[i] = e->types[i];
            if (array_of_displacements) array_of_displacements[i] = e->displs[i];
        }
        *num_elements = e->nelems;
    }
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    LEAVE();
}
TM_ALIAS(T_event_get_info)

static const char *ev_name_at(int i, void *arg, char buf[TM_T_NAME_MAX])
{
    return i < TM_T_EV_KINDS ? ev_types[i].name : NULL;
}

TM_API int PMPI_T_event_get_index(const char *name, int *event_index)
{
    ENTER();
    if (!name || !event_index) OUT(MPI_T_ERR_INVALID);
    int i = tm_t_find(name, ev_name_at, NULL);
    if (i < 0) OUT(MPI_T_ERR_INVALID_NAME);
    *event_index = i;
    LEAVE();
}
TM_ALIAS(T_event_get_index)

TM_API int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                     MPI_T_event_registration *event_registration)
{
    ENTER();
    (void)obj_handle; /* every event binds to no object */
    if (event_index < 0 || event_index >= TM_T_EV_KINDS) OUT(MPI_T_ERR_INVALID_INDEX);
    if (!event_registration) OUT(MPI_T_ERR_INVALID);
    const struct tm_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = tm_info_get(me, info))) OUT(MPI_T_ERR_INVALID);
    struct tm_t_events **evp = tm_mpit_events(t);
    if (!*evp && !(*evp = calloc(1, sizeof **evp))) OUT(MPI_T_ERR_MEMORY);
    struct tm_t_evreg *r = calloc(1, sizeof *r);
    if (!r || (in && !(r->info = tm_info_dup_obj(in)))) {
        free(r);
        OUT(MPI_T_ERR_MEMORY);
    }
    r->kind = event_index;
    r->next = (*evp)->regs;
    (*evp)->regs = r;
    /* from now the layers below report this rank's events (t_event.h) */
    atomic_store_explicit(&me->t_event, ev_fire, memory_order_release);
    *event_registration = r;
    LEAVE();
}
TM_ALIAS(T_event_handle_alloc)

TM_API int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    ENTER();
    struct tm_t_evreg *r = reg_find(t, event_registration);
    if (!r) OUT(MPI_T_ERR_INVALID_HANDLE);
    const struct tm_info *in = tm_info_get(me, info);
    if (!in) OUT(MPI_T_ERR_INVALID);
    struct tm_info *copy = tm_info_dup_obj(in);
    if (!copy) OUT(MPI_T_ERR_MEMORY);
    tm_info_free_obj(r->info);
    r->info = copy;
    LEAVE();
}
TM_ALIAS(T_event_handle_set_info)

TM_API int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
                                        MPI_Info *info_used)
{
    ENTER();
    struct tm_t_evreg *r = reg_find(t, event_registration);
    if (!r) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (!info_used) OUT(MPI_T_ERR_INVALID);
    *info_used = tm_info_new_handle(me, r->info);
    if (*info_used == MPI_INFO_NULL) OUT(MPI_T_ERR_MEMORY);
    LEAVE();
}
TM_ALIAS(T_event_handle_get_info)

static int bad_safety(MPI_T_cb_safety s)
{
    return (int)s < MPI_T_CB_REQUIRE_NONE || (int)s >= EV_SAFETY_LEVELS;
}

TM_API int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                          MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                          MPI_T_event_cb_function event_cb_function)
{
    ENTER();
    struct tm_t_evreg *r = reg_find(t, event_registration);
    if (!r) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (bad_safety(cb_safety)) OUT(MPI_T_ERR_INVALID);
    const struct tm_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = tm_info_get(me, info))) OUT(MPI_T_ERR_INVALID);
    struct tm_info *copy = NULL;
    if (in && !(copy = tm_info_dup_obj(in))) OUT(MPI_T_ERR_MEMORY);
    /* a NULL function takes the level's callback away */
    tm_info_free_obj(r->cb_info[cb_safety]);
    r->cb_info[cb_safety] = copy;
    r->cb[cb_safety] = event_cb_function;
    r->user[cb_safety] = user_data;
    LEAVE();
}
TM_ALIAS(T_event_register_callback)

TM_API int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                          MPI_T_cb_safety cb_safety, MPI_Info info)
{
    ENTER();
    struct tm_t_evreg *r = reg_find(t, event_registration);
    if (!r) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (bad_safety(cb_safety) || !r->cb[cb_safety]) OUT(MPI_T_ERR_INVALID);
    const struct tm_info *in = tm_info_get(me, info);
    if (!in) OUT(MPI_T_ERR_INVALID);
    struct tm_info *copy = tm_info_dup_obj(in);
    if (!copy) OUT(MPI_T_ERR_MEMORY);
    tm_info_free_obj(r->cb_info[cb_safety]);
    r->cb_info[cb_safety] = copy;
    LEAVE();
}
TM_ALIAS(T_event_callback_set_info)

TM_API int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                          MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    ENTER();
    struct tm_t_evreg *r = reg_find(t, event_registration);
    if (!r) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (bad_safety(cb_safety) || !r->cb[cb_safety] || !info_used) OUT(MPI_T_ERR_INVALID);
    *info_used = tm_info_new_handle(me, r->cb_info[cb_safety]);
    if (*info_used == MPI_INFO_NULL) OUT(MPI_T_ERR_MEMORY);
    LEAVE();
}
TM_ALIAS(T_event_callback_get_info)

TM_API int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                                    MPI_T_event_free_cb_function free_cb_function)
{
    ENTER();
    struct tm_t_evreg *r = reg_find(t, event_registration);
    if (!r) OUT(MPI_T_ERR_INVALID_HANDLE);
    r->freed = 1; /* no callback of it starts from now */
    r->free_cb = free_cb_function;
    r->free_user = user_data;
    if (r->busy) OUT(MPI_SUCCESS); /* the last running callback's delivery frees it */
    reg_unlink(t, r);
    tm_mpit_leave(t);
    /* no callback of r runs any more: the free callback may run now, in the caller's context */
    if (free_cb_function) free_cb_function(r, MPI_T_CB_REQUIRE_NONE, user_data);
    reg_free(r);
    return MPI_SUCCESS;
    LEAVE();
}
TM_ALIAS(T_event_handle_free)

TM_API int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                            MPI_T_event_dropped_cb_function dropped_cb_function)
{
    ENTER();
    struct tm_t_evreg *r = reg_find(t, event_registration);
    if (!r) OUT(MPI_T_ERR_INVALID_HANDLE);
    r->dropped = dropped_cb_function;
    LEAVE();
}
TM_ALIAS(T_event_set_dropped_handler)

/* An instance the rank is delivering now (valid inside its callback only), or NULL. */
static const struct tm_t_evinst *inst_get(MPI_T_event_instance h)
{
    const struct tm_t_evinst *i = h;
    return i && i->magic == EV_INSTANCE_MAGIC && i->kind >= 0 && i->kind < TM_T_EV_KINDS ? i : NULL;
}

TM_API int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    ENTER();
    const struct tm_t_evinst *i = inst_get(event_instance);
    if (!i) OUT(MPI_T_ERR_INVALID_HANDLE);
    const struct ev_type *e = &ev_types[i->kind];
    if (element_index < 0 || element_index >= e->nelems) OUT(MPI_T_ERR_INVALID_INDEX);
    if (!buffer) OUT(MPI_T_ERR_INVALID);
    size_t n = e->types[element_index] == MPI_COUNT ? sizeof(MPI_Count) : sizeof(int);
    memcpy(buffer, (const char *)i->data + e->displs[element_index], n);
    LEAVE();
}
TM_ALIAS(T_event_read)

TM_API int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    ENTER();
    const struct tm_t_evinst *i = inst_get(event_instance);
    if (!i) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (!buffer) OUT(MPI_T_ERR_INVALID);
    memcpy(buffer, i->data, ev_types[i->kind].size);
    LEAVE();
}
TM_ALIAS(T_event_copy)

TM_API int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance,
                                      MPI_Count *event_timestamp)
{
    ENTER();
    const struct tm_t_evinst *i = inst_get(event_instance);
    if (!i) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (!event_timestamp) OUT(MPI_T_ERR_INVALID);
    *event_timestamp = i->ts;
    LEAVE();
}
TM_ALIAS(T_event_get_timestamp)

TM_API int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    ENTER();
    if (!inst_get(event_instance)) OUT(MPI_T_ERR_INVALID_HANDLE);
    if (!source_index) OUT(MPI_T_ERR_INVALID);
    *source_index = 0;
    LEAVE();
}
TM_ALIAS(T_event_get_source)

/* ---- the one source: the rank's monotonic clock, in nanoseconds ---- */

TM_API int PMPI_T_source_get_num(int *num_sources)
{
    ENTER();
    if (!num_sources) OUT(MPI_T_ERR_INVALID);
    *num_sources = 1;
    LEAVE();
}
TM_ALIAS(T_source_get_num)

TM_API int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc,
                                  int *desc_len, MPI_T_source_order *ordering,
                                  MPI_Count *ticks_per_second, MPI_Count *max_ticks, MPI_Info *info)
{
    ENTER();
    if (source_index != 0) OUT(MPI_T_ERR_INVALID_INDEX);
    if (info) {
        *info = tm_info_new_handle(me, NULL);
        if (*info == MPI_INFO_NULL) OUT(MPI_T_ERR_MEMORY);
    }
    tm_t_put_str("tmpi.rank_clock", name, name_len);
    tm_t_put_str("the calling rank's events, in the order they happen, stamped with "
                 "CLOCK_MONOTONIC in nanoseconds",
                 desc, desc_len);
    /* one rank's events are raised by its own thread, one after the other */
    if (ordering) *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second) *ticks_per_second = 1000000000;
    if (max_ticks) *max_ticks = INT64_MAX;
    LEAVE();
}
TM_ALIAS(T_source_get_info)

TM_API int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    ENTER();
    if (source_index != 0) OUT(MPI_T_ERR_INVALID_INDEX);
    if (!timestamp) OUT(MPI_T_ERR_INVALID);
    *timestamp = now_ns();
    LEAVE();
}
TM_ALIAS(T_source_get_timestamp)

/* ---- categories: every event is the calling rank's ("tmpi.rank") ---- */

static int events_cat(void)
{
    return tm_t_cat_find("tmpi.rank");
}

TM_API int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    ENTER();
    if (cat_index < 0 || cat_index >= tm_t_ncats) OUT(MPI_T_ERR_INVALID_INDEX);
    if (!num_events) OUT(MPI_T_ERR_INVALID);
    *num_events = cat_index == events_cat() ? TM_T_EV_KINDS : 0;
    LEAVE();
}
TM_ALIAS(T_category_get_num_events)

TM_API int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    ENTER();
    if (cat_index < 0 || cat_index >= tm_t_ncats) OUT(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices)) OUT(MPI_T_ERR_INVALID);
    if (cat_index == events_cat())
        for (int i = 0; i < TM_T_EV_KINDS && i < len; i++)
            indices[i] = i;
    LEAVE();
}
TM_ALIAS(T_category_get_events)
