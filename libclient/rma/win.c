/* win.c — windows: creation (Win_create, Win_allocate, Win_allocate_shared,
 * Win_create_dynamic), Win_shared_query, Win_attach/detach, Win_free, the job's registry and
 * the rank's handle table (rma.h). */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "mem_align.h"
#include "attr.h"
#include "errh.h"
#include "info.h"
#include "job.h"
#include "net_p2p.h"
#include "objtab.h"
#include "rma.h"
#include "wait.h"

#define WIN_FIRST 1 /* handle of the first window in a rank's table (0 is MPI_WIN_NULL) */
#define WIN_ALIGN 64

struct tm_winref *tm_win_ref(struct tm_rank *me, MPI_Win h)
{
    return tm_objtab_get(me->wins, WIN_FIRST, h);
}

int tm_win_err(struct tm_rank *me, struct tm_winref *wr, int code, const char *fn, const char *fmt,
               ...)
{
    char detail[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    /* An invalid window handle is reported on MPI_COMM_WORLD (MPI 3.1 §8.3). */
    if (!wr) return tm_err(me, MPI_COMM_WORLD, code, fn, "%s", detail);
    return tm_err_obj(me, TM_EH_WIN, wr->handle, wr->eh, code, fn, "%s", detail);
}

struct tm_winref *tm_win_enter(MPI_Win h, const char *fn, int *ret_err)
{
    struct tm_rank *me = tm_self();
    if (TM_UNLIKELY(!me)) {
        *ret_err = tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
        return NULL;
    }
    struct tm_winref *wr = tm_win_ref(me, h);
    if (TM_UNLIKELY(!wr)) *ret_err = tm_win_err(me, NULL, MPI_ERR_WIN, fn, "invalid window %d", h);
    return wr;
}

struct tm_win *tm_win_find(struct tm_job *j, int id)
{
    pthread_mutex_lock(&j->wins_lock);
    struct tm_win *w = j->wins;
    while (w && w->id != id)
        w = w->next;
    pthread_mutex_unlock(&j->wins_lock);
    return w;
}

int tm_win_member_of(const struct tm_win *w, int world)
{
    if (world >= 0 && world < w->size && w->m[world].world == world) return world;
    for (int i = 0; i < w->size; i++)
        if (w->m[i].world == world) return i;
    return -1;
}

char *tm_win_at(struct tm_win *w, int t, uint64_t off, size_t bytes)
{
    struct tm_win_member *m = &w->m[t];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* off is an address in the target: every byte must be attached, in one region or in
         * regions that follow each other (attached separately, they are still attached
         * memory, MPI 4.1 §12.2.4).  Each pass moves past one region or fails, so at most
         * nregions passes. */
        uintptr_t a = (uintptr_t)off;
        size_t left = bytes;
        int covered = 0;
        pthread_mutex_lock(&m->regions_lock);
        for (int pass = 0; pass <= m->nregions && !covered; pass++) {
            int moved = 0;
            for (int i = 0; i < m->nregions; i++) {
                const struct tm_win_region *g = &m->regions[i];
                if (a < g->base || a - g->base > g->size) continue;
                const size_t room = g->size - (a - g->base);
                if (left <= room) {
                    covered = 1;
                    break;
                }
                if (room == 0) continue; /* a is this region's end: the next may start there */
                a += room;
                left -= room;
                moved = 1;
                break;
            }
            if (!moved) break;
        }
        pthread_mutex_unlock(&m->regions_lock);
        return covered ? (char *)(uintptr_t)off : NULL;
    }
    if (off > m->size || bytes > m->size - off) return NULL;
    return m->base + off;
}

char *tm_win_addr(struct tm_win *w, int t, MPI_Aint disp, size_t bytes)
{
    size_t off;
    if (disp < 0) return NULL;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) return tm_win_at(w, t, (uint64_t)disp, bytes);
    if (__builtin_mul_overflow((size_t)disp, (size_t)w->m[t].disp_unit, &off)) return NULL;
    return tm_win_at(w, t, off, bytes);
}

static void win_destroy(struct tm_win *w)
{
    if (!w) return;
    for (int i = 0; i < w->size; i++) {
        struct tm_win_member *m = &w->m[i];
        pthread_mutex_destroy(&m->lockq_lock);
        pthread_mutex_destroy(&m->regions_lock);
        while (m->lockq) {
            struct tm_win_lockreq *q = m->lockq;
            m->lockq = q->next;
            free(q);
        }
        free(m->regions);
        free(m->posts);
    }
    free(w->m);
    free(w->shared_seg);
    free(w);
}

/* What every member tells the others at creation. */
struct win_info {
    uint64_t base, size;
    int64_t disp_unit;
    /* its memory's registration for remote access (rma_ok: there is one) */
    uint64_t key, addr;
    int64_t rma_ok;
    /* the element types whose accumulates its transport carries (tm_rma_acc_net_types) */
    uint64_t acc_types, acc_ordered;
};

static struct tm_win *win_new(struct tm_job *j, int id, int flavor, int size,
                              const struct win_info *all, const int32_t *world_of)
{
    struct tm_win *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->id = id;
    w->flavor = flavor;
    w->net = j->net;
    w->size = size;
    w->m = calloc((size_t)size, sizeof *w->m);
    if (!w->m) {
        free(w);
        return NULL;
    }
    size_t seg = 0;
    for (int i = 0; i < size; i++) {
        struct tm_win_member *m = &w->m[i];
        m->world = world_of ? world_of[i] : i;
        m->node = j->net ? j->net->node_of_rank[m->world] : 0;
        m->base = (char *)(uintptr_t)all[i].base;
        m->size = all[i].size;
        m->disp_unit = (MPI_Aint)all[i].disp_unit;
        m->disp_unit_int = m->disp_unit > INT_MAX ? MPI_UNDEFINED : (int)m->disp_unit;
        m->rma_ok = all[i].rma_ok != 0;
        m->rkey = all[i].key;
        m->raddr = all[i].addr;
        pthread_mutex_init(&m->lockq_lock, NULL);
        pthread_mutex_init(&m->regions_lock, NULL);
        seg += m->size;
    }
    for (int i = 0; i < size; i++) {
        w->m[i].posts = calloc((size_t)size, sizeof *w->m[i].posts);
        if (!w->m[i].posts) goto err;
    }
    /* Accumulates as the transport's atomics (rma_acc_net.c): for the types every member's
     * transport carries, when every member's memory is registered (a member with none has no
     * memory to target) and the window spans nodes. */
    uint64_t acc = j->net ? ~0ull : 0;
    int spans = 0, ordered = 1;
    for (int i = 0; i < size && acc; i++) {
        if (!all[i].rma_ok && all[i].size) acc = 0;
        acc &= all[i].acc_types;
        ordered &= all[i].acc_ordered != 0;
        spans |= w->m[i].node != w->m[0].node;
    }
    w->acc_net = spans ? acc : 0;
    w->acc_ordered = ordered;
    if (w->acc_net) tm_rma_acc_net_types(j->net->svc, j->net->link, w->acc_max, &ordered);
    if (flavor == MPI_WIN_FLAVOR_SHARED) {
        /* One segment, the members' parts one after the other in rank order (contiguous, as
         * MPI 3.1 §11.2.3 says unless alloc_shared_noncontig, which we need not honour). */
        if (posix_memalign((void **)&w->shared_seg, WIN_ALIGN, seg ? seg : 1)) goto err;
        memset(w->shared_seg, 0, seg ? seg : 1);
        size_t off = 0;
        for (int i = 0; i < size; i++) {
            w->m[i].base = w->shared_seg + off;
            off += w->m[i].size;
        }
    }
    return w;
err:
    win_destroy(w);
    return NULL;
}

/* The members' communicator ranks -> world ranks (NULL: identity). */
static const int32_t *world_map(struct tm_rank *me, MPI_Comm comm)
{
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    return cr->c->world_of;
}

static int win_make(const char *fn, MPI_Comm comm, int flavor, void *base, MPI_Aint size,
                    MPI_Aint disp_unit, MPI_Info info, void *baseptr, MPI_Win *win)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (size < 0) return tm_err(me, comm, MPI_ERR_SIZE, fn, "negative size %td", size);
    if (disp_unit <= 0)
        return tm_err(me, comm, MPI_ERR_DISP, fn, "displacement unit %td is not positive",
                      disp_unit);
    if (!win) return tm_err(me, comm, MPI_ERR_ARG, fn, "win is NULL");
    if (flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC && !baseptr)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "baseptr is NULL");
    if (flavor == MPI_WIN_FLAVOR_CREATE && !base && size > 0)
        return tm_err(me, comm, MPI_ERR_ARG, fn, "base is NULL with size %td", size);
    struct tm_job *j = me->job;
    if (flavor == MPI_WIN_FLAVOR_SHARED && j->net) {
        for (int i = 0; i < cr->c->size; i++)
            if (tm_net_remote(j->net, tm_comm_world_rank(cr->c, i)))
                return tm_err(me, comm, MPI_ERR_RMA_SHARED, fn,
                              "rank %d of the communicator is on another node", i);
    }
    const struct tm_info *hints = NULL;
    if (info != MPI_INFO_NULL && !(hints = tm_info_get(me, info)))
        return tm_err(me, comm, MPI_ERR_INFO, fn, "invalid info %d", info);
    struct tm_winref *wr = calloc(1, sizeof *wr);
    if (!wr) return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    wr->info = tm_info_dup_obj(hints);
    if (!wr->info) {
        free(wr);
        return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    wr->eh = MPI_ERRORS_ARE_FATAL;
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        if (posix_memalign(&wr->own_alloc, tm_mem_align(info, WIN_ALIGN),
                           size ? (size_t)size : 1)) {
            free(wr);
            return tm_err(me, comm, MPI_ERR_NO_MEM, fn, "cannot allocate %td bytes", size);
        }
        base = wr->own_alloc;
    }
    int err = PMPI_Comm_dup(comm, &wr->comm);
    if (err) {
        tm_info_free_obj(wr->info);
        free(wr->own_alloc);
        free(wr);
        return err;
    }
    tm_comm_get(&me->comms, wr->comm)->eh = MPI_ERRORS_ARE_FATAL;
    struct tm_commref *wc = tm_comm_get(&me->comms, wr->comm);
    const int n = wc->c->size;
    wr->rank = wc->rank;
    struct win_info mine = {(uintptr_t)base, (uint64_t)size, disp_unit, 0, 0, 0, 0, 0};
    /* Origins on other nodes Put and Get into this memory themselves where the job's links
     * have remote access (rma_net.c "Remote memory access"); a dynamic window's regions come
     * and go, and a shared one has no member on another node. */
    const struct tmpi_svc *svc = j->net ? j->net->svc : NULL;
    if (svc && svc->net_mr_reg && size > 0 &&
        (flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_ALLOCATE) &&
        svc->net_mr_reg(j->net->link, base, (size_t)size, &wr->mr, &mine.key, &mine.addr) == 0)
        mine.rma_ok = 1;
    if (svc && (flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_ALLOCATE)) {
        uint32_t max[TM_T__COUNT];
        int ordered = 0;
        mine.acc_types = tm_rma_acc_net_types(svc, j->net->link, max, &ordered);
        mine.acc_ordered = (uint64_t)ordered;
    }
    struct win_info *all = calloc((size_t)n, sizeof *all);
    if (!all) goto nomem;
    err = PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, wr->comm);
    if (err) goto fail;
    /* The first member of this node to get here makes the node's window. */
    const int id = wc->c->ctx;
    pthread_mutex_lock(&j->wins_lock);
    struct tm_win *w = j->wins;
    while (w && w->id != id)
        w = w->next;
    if (!w) {
        w = win_new(j, id, flavor, n, all, world_map(me, wr->comm));
        if (w) {
            w->next = j->wins;
            j->wins = w;
        }
    }
    if (w) atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&j->wins_lock);
    free(all);
    all = NULL;
    if (!w) goto nomem;
    wr->w = w;
    if (tm_rma_origin_init(me, wr) < 0) goto nomem;
    /* Every node has registered the window before any member can send it an operation. */
    err = PMPI_Barrier(wr->comm);
    if (err) goto fail;
    int h = tm_objtab_add(&me->wins, WIN_FIRST, wr);
    if (h < 0) goto nomem;
    wr->handle = h;
    if (baseptr) *(void **)baseptr = w->m[wr->rank].base;
    *win = h;
    return MPI_SUCCESS;
nomem:
    err = tm_err(me, comm, MPI_ERR_NO_MEM, fn, "out of memory");
fail:
    /* Other members may be inside the collective steps: a window that failed half-way is
     * not usable anywhere (the error is fatal by default). */
    free(all);
    return err;
}

TM_API int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                           MPI_Win *win)
{
    return win_make("MPI_Win_create", comm, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info,
                    NULL, win);
}
TM_ALIAS(Win_create)

TM_API int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return win_make("MPI_Win_allocate", comm, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info,
                    baseptr, win);
}
TM_ALIAS(Win_allocate)

TM_API int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                    void *baseptr, MPI_Win *win)
{
    return win_make("MPI_Win_allocate_shared", comm, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit,
                    info, baseptr, win);
}
TM_ALIAS(Win_allocate_shared)

TM_API int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                             MPI_Comm comm, MPI_Win *win)
{
    return win_make("MPI_Win_create_c", comm, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info,
                    NULL, win);
}
TM_ALIAS(Win_create_c)

TM_API int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win)
{
    return win_make("MPI_Win_allocate_c", comm, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit,
                    info, baseptr, win);
}
TM_ALIAS(Win_allocate_c)

TM_API int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                                      MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return win_make("MPI_Win_allocate_shared_c", comm, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit,
                    info, baseptr, win);
}
TM_ALIAS(Win_allocate_shared_c)

TM_API int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_make("MPI_Win_create_dynamic", comm, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, NULL,
                    win);
}
TM_ALIAS(Win_create_dynamic)

/* One body for MPI_Win_shared_query (int_unit) and MPI_Win_shared_query_c (aint_unit). */
static int shared_query(const char *fn, MPI_Win win, int rank, MPI_Aint *size, int *int_unit,
                        MPI_Aint *aint_unit, void *baseptr)
{
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    struct tm_win *w = wr->w;
    /* MPI 4.1 §12.2.3: any flavor but dynamic.  Ranks are threads of one process per node, so
     * the memory of every member on this node is load/store accessible, whatever the flavor;
     * a member on another node's is not: size 0 and a NULL base. */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return tm_win_err(me, wr, MPI_ERR_RMA_FLAVOR, fn, "a dynamic window has no segments");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return tm_win_err(me, wr, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (!size || (!int_unit && !aint_unit) || !baseptr)
        return tm_win_err(me, wr, MPI_ERR_ARG, fn, "size, disp_unit or baseptr is NULL");
    const int node = w->m[wr->rank].node;
    int r = rank;
    if (r == MPI_PROC_NULL) { /* the first member on this node with a non-empty segment */
        for (r = 0; r < w->size - 1 && (!w->m[r].size || w->m[r].node != node); r++)
            ;
    }
    const int here = w->m[r].node == node;
    *size = here ? (MPI_Aint)w->m[r].size : 0;
    if (int_unit)
        *int_unit = w->m[r].disp_unit_int;
    else
        *aint_unit = w->m[r].disp_unit;
    *(void **)baseptr = here ? w->m[r].base : NULL;
    return MPI_SUCCESS;
}
TM_API int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                 void *baseptr)
{
    return shared_query("MPI_Win_shared_query", win, rank, size, disp_unit, NULL, baseptr);
}
TM_ALIAS(Win_shared_query)

TM_API int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                                   void *baseptr)
{
    return shared_query("MPI_Win_shared_query_c", win, rank, size, NULL, disp_unit, baseptr);
}
TM_ALIAS(Win_shared_query_c)

TM_API int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char fn[] = "MPI_Win_attach";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (wr->w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return tm_win_err(me, wr, MPI_ERR_RMA_FLAVOR, fn, "not a dynamic window");
    if (size < 0) return tm_win_err(me, wr, MPI_ERR_SIZE, fn, "negative size %td", size);
    if (!base && size > 0) return tm_win_err(me, wr, MPI_ERR_ARG, fn, "base is NULL");
    struct tm_win_member *m = &wr->w->m[wr->rank];
    uintptr_t a = (uintptr_t)base;
    err = MPI_SUCCESS;
    pthread_mutex_lock(&m->regions_lock);
    for (int i = 0; i < m->nregions && !err; i++) {
        const struct tm_win_region *g = &m->regions[i];
        if (a < g->base + g->size && g->base < a + (size_t)size) err = MPI_ERR_RMA_ATTACH;
    }
    if (!err && m->nregions >= TM_WIN_MAX_ATTACH) err = MPI_ERR_RMA_ATTACH;
    if (!err) {
        struct tm_win_region *nr = realloc(m->regions, sizeof *nr * (size_t)(m->nregions + 1));
        if (nr) {
            m->regions = nr;
            nr[m->nregions++] = (struct tm_win_region){a, (size_t)size};
        } else {
            err = MPI_ERR_NO_MEM;
        }
    }
    pthread_mutex_unlock(&m->regions_lock);
    if (err == MPI_ERR_RMA_ATTACH)
        return tm_win_err(me, wr, err, fn,
                          "region overlaps an attached one, or %d regions are attached",
                          TM_WIN_MAX_ATTACH);
    if (err) return tm_win_err(me, wr, err, fn, "out of memory");
    return MPI_SUCCESS;
}
TM_ALIAS(Win_attach)

TM_API int PMPI_Win_detach(MPI_Win win, const void *base)
{
    static const char fn[] = "MPI_Win_detach";
    int err;
    struct tm_winref *wr = tm_win_enter(win, fn, &err);
    if (!wr) return err;
    struct tm_rank *me = tm_self();
    if (wr->w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return tm_win_err(me, wr, MPI_ERR_RMA_FLAVOR, fn, "not a dynamic window");
    struct tm_win_member *m = &wr->w->m[wr->rank];
    int found = 0;
    pthread_mutex_lock(&m->regions_lock);
    for (int i = 0; i < m->nregions; i++)
        if (m->regions[i].base == (uintptr_t)base) {
            m->regions[i] = m->regions[--m->nregions];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&m->regions_lock);
    if (!found) return tm_win_err(me, wr, MPI_ERR_RMA_ATTACH, fn, "no region attached at %p", base);
    return MPI_SUCCESS;
}
TM_ALIAS(Win_detach)

/* Drops the rank's reference to w; the last one of the node takes it out of the registry and,
 * once the links released every answer sent from its memory, frees it. */
static void win_unref(struct tm_rank *me, struct tm_win *w)
{
    struct tm_job *j = me->job;
    pthread_mutex_lock(&j->wins_lock);
    int last = atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) == 1;
    if (last) {
        struct tm_win **pp = &j->wins;
        while (*pp != w)
            pp = &(*pp)->next;
        *pp = w->next;
    }
    pthread_mutex_unlock(&j->wins_lock);
    if (!last) return;
    while (atomic_load_explicit(&w->replies_inflight, memory_order_acquire))
        sched_yield();
    win_destroy(w);
}

static void winref_free(struct tm_rank *me, struct tm_winref *wr, int job_end)
{
    if (!job_end)
        tm_rma_origin_fini(me, wr);
    else
        tm_rma_origin_free(wr->org);
    win_unref(me, wr->w);
    /* Win_free: every origin flushed before its barrier; job end: nobody accesses it */
    if (wr->mr && me->job->net && me->job->net->svc->net_mr_dereg)
        me->job->net->svc->net_mr_dereg(me->job->net->link, wr->mr);
    free(wr->own_alloc);
    free(wr->lock_of);
    free(wr->dirty);
    free(wr->acc_grp);
    free(wr->exp_grp);
    free(wr->posts_used);
    tm_info_free_obj(wr->info);
    if (job_end)
        tm_attr_drop_all(&wr->attrs);
    else
        tm_errh_unref(me, wr->eh);
    free(wr);
}

TM_API int PMPI_Win_free(MPI_Win *win)
{
    static const char fn[] = "MPI_Win_free";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!win) return tm_win_err(me, NULL, MPI_ERR_ARG, fn, "win is NULL");
    int err;
    struct tm_winref *wr = tm_win_enter(*win, fn, &err);
    if (!wr) return err;
    if (wr->lock_all || wr->nlocks || wr->access || wr->exposure)
        return tm_win_err(me, wr, MPI_ERR_RMA_SYNC, fn,
                          "a lock, access or exposure epoch is still open");
    if (wr->org) {
        err = tm_rma_remote_flush_all(me, wr);
        if (err) return tm_win_err(me, wr, err, fn, "operations to other nodes failed");
    }
    /* MPI 3.1 §6.7.3: the attributes go first; a delete callback that fails fails the call. */
    err = tm_attr_delete_all(me, TM_ATTR_WIN, *win, &wr->attrs);
    if (err) return tm_win_err(me, wr, err, fn, "an attribute's delete callback failed");
    /* Nobody accesses the window any more once every member got here. */
    err = PMPI_Barrier(wr->comm);
    if (err) return err;
    MPI_Comm c = wr->comm;
    tm_objtab_del(me->wins, WIN_FIRST, *win);
    winref_free(me, wr, 0);
    PMPI_Comm_free(&c);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Win_free)

void tm_win_tab_free(struct tm_rank *me)
{
    if (!me->wins) return;
    /* Windows the program did not free: job end, no thread uses them. */
    for (int i = 0; i < me->wins->cap; i++) {
        struct tm_winref *wr = tm_objtab_get(me->wins, WIN_FIRST, WIN_FIRST + i);
        if (!wr) continue;
        tm_rma_origin_free(wr->org);
        wr->org = NULL;
        winref_free(me, wr, 1);
        tm_objtab_del(me->wins, WIN_FIRST, WIN_FIRST + i);
    }
    tm_objtab_free(me->wins, free); /* every slot is empty by now */
    me->wins = NULL;
}
