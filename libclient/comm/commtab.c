/* commtab.c — a rank's communicator handles (comm.h) and its object tables (objs.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "bsbuf.h"
#include "comm.h"
#include "comm_coll.h"
#include "ctx.h"
#include "errh.h"
#include "group.h"
#include "info.h"
#include "job.h"
#include "objs.h"
#include "xjob.h"

#define TM_CTX_SELF 2 /* every rank's MPI_COMM_SELF: its traffic only reaches its own mailbox */

int tm_comm_init_shared(struct tm_comm *c, int ctx, int size, int32_t *world_of)
{
    c->ctx = ctx;
    c->size = size;
    c->world_of = world_of;
    c->builtin = 0;
    c->ctx_reuse = 0;
    c->inter = 0;
    c->remote_size = 0;
    c->remote_of = NULL;
    c->topo = NULL;
    c->topo_free = NULL;
    atomic_init(&c->refs, size);
    atomic_init(&c->coll.arrive, 0);
    atomic_init(&c->coll.hier, NULL);
    c->coll.slot = calloc((size_t)size, sizeof *c->coll.slot);
    if (!c->coll.slot) return -ENOMEM;
    if (tm_lib.comm_coll->state_init(&c->coll) < 0) {
        free(c->coll.slot);
        c->coll.slot = NULL;
        return -ENOMEM;
    }
    return 0;
}

void tm_comm_fini_shared(struct tm_comm *c)
{
    tm_lib.comm_coll->state_fini(&c->coll); /* the collectives' part (comm_coll.h) */
    /* the Bcast rings the members made (coll.c), one allocation each */
    for (int i = 0; c->coll.slot && i < c->size; i++)
        free(atomic_load_explicit(&c->coll.slot[i].bring, memory_order_relaxed));
    free(c->coll.slot);
    free(c->world_of);
    free(c->remote_of);
    if (c->topo && c->topo_free) c->topo_free(c->topo);
    c->topo = NULL;
    c->coll.slot = NULL;
    c->world_of = NULL;
    c->remote_of = NULL;
}

struct tm_comm *tm_comm_new(int ctx, int ctx_reuse, int size, int32_t *world_of, int refs)
{
    struct tm_comm *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (tm_comm_init_shared(c, ctx, size, world_of) < 0) {
        free(c);
        return NULL;
    }
    c->ctx_reuse = ctx_reuse;
    atomic_store_explicit(&c->refs, refs, memory_order_relaxed);
    return c;
}

void tm_comm_mark_xjob(struct tm_rank *me, struct tm_comm *c)
{
    uint64_t mask = c->world_of ? tm_xjob_mask(c->world_of, c->size) : 0;
    if (!mask) return;
    c->xjob = 1;
    if (me) tm_xjob_note(me->job, &c->ctx, 1, mask);
}

void tm_comm_release(struct tm_comm *c)
{
    if (c->builtin) return;
    if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
        struct tm_rank *me = tm_self();
        if (c->ctx_reuse && me) tm_ctx_put(me->job, c->ctx);
        tm_comm_fini_shared(c);
        free(c);
    }
}

int tm_objs_init(struct tm_rank *me)
{
    struct tm_objs *o = calloc(1, sizeof *o);
    if (!o) return -ENOMEM;
    pthread_mutex_init(&o->lock, NULL);
    o->lastcode = TM_ERR_FIRST_USER - 1; /* MPI_ERR_LASTCODE: none added */
    o->file_eh = MPI_ERRORS_RETURN;
    me->objs = o;
    return 0;
}

static void free_any(void *p)
{
    free(p);
}

void tm_objs_free(struct tm_rank *me)
{
    struct tm_objs *o = me->objs;
    if (!o) return;
    if (o->io_free) o->io_free(o);
    tm_objtab_free(o->groups, tm_group_free_obj);
    tm_objtab_free(o->infos, tm_info_free_obj);
    tm_objtab_free(o->errhs, free_any);
    tm_objtab_free(o->keyvals, free_any);
    for (int i = 0; i < o->ntype_attrs; i++)
        tm_attr_drop_all(&o->type_attrs[i]);
    free(o->type_attrs);
    tm_objtab_free(o->sessions, free_any);
    if (o->mpit) o->mpit_free(o->mpit);
    for (int i = 0; o->str && i < o->ncap; i++)
        free(o->str[i]);
    free(o->str);
    free(o->class_of);
    tm_info_free_obj(o->env);
    pthread_mutex_destroy(&o->lock);
    free(o);
    me->objs = NULL;
}

/* The entry of handle h, making its chunk if needed (lock held); NULL when out of memory. */
static struct tm_commref *slot_at(struct tm_commtab *t, int h)
{
    int ci = tm_commtab_chunk(h);
    struct tm_commref *v = atomic_load_explicit(&t->dir[ci], memory_order_relaxed);
    if (!v) {
        v = calloc((size_t)TM_COMMTAB_FIRST << ci, sizeof *v);
        if (!v) return NULL;
        atomic_store_explicit(&t->dir[ci], v, memory_order_release);
        t->cap += TM_COMMTAB_FIRST << ci;
    }
    return &v[tm_commtab_index(h, ci)];
}

int tm_commtab_init(struct tm_rank *me)
{
    struct tm_commtab *t = &me->comms;
    if (tm_objs_init(me) < 0) return -ENOMEM;
    pthread_mutex_init(&t->lock, NULL);
    t->inited = 1;
    t->low_free = MPI_COMM_SELF + 1;
    int32_t *self_map = malloc(sizeof *self_map);
    struct tm_commref *w = slot_at(t, MPI_COMM_WORLD);
    if (!w || !self_map || tm_comm_init_shared(&me->self, TM_CTX_SELF, 1, self_map) < 0) {
        free(self_map);
        return -ENOMEM;
    }
    self_map[0] = me->rank;
    me->self.builtin = 1;
    /* a spawned rank's world is the ranks spawned with it (dynproc/spawn.h) */
    *w = (struct tm_commref){.c = me->world ? me->world : &me->job->world,
                             .rank = me->world ? me->world_rank : me->rank,
                             .eh = MPI_ERRORS_ARE_FATAL};
    *slot_at(t, MPI_COMM_SELF) =
        (struct tm_commref){.c = &me->self, .rank = 0, .eh = MPI_ERRORS_ARE_FATAL};
    return 0;
}

static void ref_clear(struct tm_commref *r)
{
    if (r->bsb) { /* the job's end: nobody sends any more */
        pthread_mutex_destroy(&r->bsb->lock);
        free(r->bsb);
    }
    tm_attr_drop_all(&r->attrs);
    free(r->name);
    tm_info_free_obj(r->hints);
    memset(r, 0, sizeof *r);
}

void tm_commtab_destroy(struct tm_rank *me)
{
    struct tm_commtab *t = &me->comms;
    if (!t->inited) return;
    /* Communicators the program never freed: drop this rank's reference, no callbacks. */
    for (int ci = 0; ci < TM_COMMTAB_CHUNKS; ci++) {
        struct tm_commref *v = atomic_load_explicit(&t->dir[ci], memory_order_relaxed);
        if (!v) continue;
        for (int i = 0; i < TM_COMMTAB_FIRST << ci; i++) {
            if (v[i].c && !v[i].c->builtin) tm_comm_release(v[i].c);
            if (v[i].c) ref_clear(&v[i]);
        }
        free(v);
        atomic_store_explicit(&t->dir[ci], NULL, memory_order_relaxed);
    }
    pthread_mutex_destroy(&t->lock);
    t->inited = 0;
    tm_objs_free(me);
}

MPI_Comm tm_commtab_add(struct tm_rank *me, struct tm_comm *c, int rank, MPI_Errhandler eh)
{
    struct tm_commtab *t = &me->comms;
    pthread_mutex_lock(&t->lock);
    int h = t->low_free;
    struct tm_commref *r = NULL;
    for (; h < TM_COMMTAB_MAX; h++) {
        r = slot_at(t, h);
        if (!r || !r->c) break;
    }
    if (!r || h == TM_COMMTAB_MAX) {
        pthread_mutex_unlock(&t->lock);
        return MPI_COMM_NULL;
    }
    *r = (struct tm_commref){.c = c, .rank = rank, .eh = eh};
    t->low_free = h + 1;
    pthread_mutex_unlock(&t->lock);
    tm_errh_ref(me, eh);
    return h;
}

int tm_commtab_free(struct tm_rank *me, MPI_Comm h)
{
    struct tm_commtab *t = &me->comms;
    struct tm_commref *cr = tm_comm_get(t, h);
    if (!cr) return MPI_ERR_COMM;
    int err = tm_attr_delete_all(me, TM_ATTR_COMM, h, &cr->attrs);
    if (err) return err;
    MPI_Comm hid[2] = {cr->coll_inter, cr->coll_local};
    tm_bsbuf_free(me, cr->bsb); /* its messages leave first (bsbuf.h) */
    cr->bsb = NULL;
    tm_comm_release(cr->c);
    MPI_Errhandler eh = cr->eh;
    pthread_mutex_lock(&t->lock);
    ref_clear(cr);
    if (h < t->low_free) t->low_free = h;
    pthread_mutex_unlock(&t->lock);
    tm_errh_unref(me, eh);
    for (int i = 0; i < 2; i++)
        if (hid[i] != MPI_COMM_NULL) tm_commtab_free(me, hid[i]);
    return MPI_SUCCESS;
}
