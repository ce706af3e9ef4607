/* ctx.c — context ids and the node's meeting point for new communicators (ctx.h). */
#include "ctx.h"

#include <errno.h>
#include <stdlib.h>

#include "comm.h"
#include "job.h"
#include "svc.h"
#include "xjob.h"

struct tm_ctx_wait {
    struct tm_ctx_wait *next;
    int ctx, key;
    int left; /* local members still to come */
    struct tm_comm *c;
};

void tm_ctxs_init(struct tm_ctxs *x)
{
    pthread_mutex_init(&x->lock, NULL);
    x->free = NULL;
    x->nfree = x->cap = 0;
    x->meet = NULL;
}

void tm_ctxs_fini(struct tm_ctxs *x)
{
    free(x->free);
    x->free = NULL;
    while (x->meet) {
        struct tm_ctx_wait *w = x->meet;
        x->meet = w->next;
        free(w);
    }
    pthread_mutex_destroy(&x->lock);
}

int tm_ctx_local(struct tm_job *j)
{
    struct tm_ctxs *x = &j->ctxs;
    pthread_mutex_lock(&x->lock);
    int ctx = x->nfree ? x->free[--x->nfree] : -1;
    pthread_mutex_unlock(&x->lock);
    if (ctx >= 0) return ctx;
    ctx = atomic_fetch_add_explicit(&j->next_ctx, 1, memory_order_relaxed);
    return ctx < TM_CTX_SPAN_BASE ? ctx : -ENOSPC;
}

void tm_ctx_put(struct tm_job *j, int ctx)
{
    struct tm_ctxs *x = &j->ctxs;
    pthread_mutex_lock(&x->lock);
    if (x->nfree == x->cap) {
        int ncap = x->cap ? x->cap * 2 : 64;
        int *nv = realloc(x->free, sizeof *nv * (size_t)ncap);
        if (!nv) { /* the id is lost, not reused: harmless */
            pthread_mutex_unlock(&x->lock);
            return;
        }
        x->free = nv;
        x->cap = ncap;
    }
    x->free[x->nfree++] = ctx;
    pthread_mutex_unlock(&x->lock);
}

int tm_ctx_span(struct tm_rank *me, int count, int *out)
{
    int node = me->info ? me->info->node : 0, nnodes = me->info ? me->info->nnodes : 1;
    if (nnodes < 1) nnodes = 1;
    int k =
        atomic_fetch_add_explicit(&me->job->next_ctx, count > 0 ? count : 1, memory_order_relaxed);
    long first = TM_CTX_SPAN_BASE + node + (long)nnodes * k;
    /* below the ids of communicators between jobs (svc.h TMPI_XCTX_BASE) */
    if (first + (long)nnodes * count >= TMPI_XCTX_BASE) return -ENOSPC;
    for (int i = 0; i < count; i++)
        out[i] = (int)(first + (long)nnodes * i);
    return 0;
}

static int on_node(struct tm_rank *me, const int32_t *v, int n)
{
    const struct tmpi_rank_info *in = me->info;
    for (int i = 0; i < n; i++)
        if (tm_xrank(v[i])) return 0;
    if (!in || !in->node_of_rank || in->nnodes <= 1) return 1;
    for (int i = 0; i < n; i++)
        if (in->node_of_rank[v[i]] != in->node) return 0;
    return 1;
}

int tm_ctx_nlocal(struct tm_rank *me, const int32_t *v, int n)
{
    const struct tmpi_rank_info *in = me->info;
    int k = 0;
    for (int i = 0; i < n; i++)
        k += !tm_xrank(v[i]) &&
             (!in || !in->node_of_rank || in->nnodes <= 1 || in->node_of_rank[v[i]] == in->node);
    return k;
}

/* count ids for a communicator with ranks of other jobs: from the agent, which hands out each
 * of them once (svc name_op TMPI_NAME_XCTX, three at a time), so no communicator of either job
 * has it.  0, -ENOSPC, -ENOTSUP (no agent to ask), or name_op's error. */
static int ctx_xjob(struct tm_rank *me, int count, int *out)
{
    const struct tmpi_svc *svc = me->job->svc;
    if (!svc || !svc->name_op) return -ENOTSUP;
    for (int i = 0; i < count; i += 3) {
        char text[32] = "";
        int rc = svc->name_op(TMPI_NAME_XCTX, "ctx", NULL, text, sizeof text);
        if (rc < 0) return rc;
        long first = strtol(text, NULL, 10);
        if (first < TMPI_XCTX_BASE || first > TMPI_XCTX_BASE + TMPI_XCTX_COUNT - 3) return -EPROTO;
        for (int k = 0; k < 3 && i + k < count; k++)
            out[i + k] = (int)first + k;
    }
    return 0;
}

int tm_ctx_for(struct tm_rank *me, const int32_t *a, int na, const int32_t *b, int nb, int count,
               int *out, int *reuse)
{
    if (on_node(me, a, na) && (!b || on_node(me, b, nb))) {
        for (int i = 0; i < count; i++) {
            out[i] = tm_ctx_local(me->job);
            if (out[i] < 0) {
                while (i-- > 0)
                    tm_ctx_put(me->job, out[i]);
                return -ENOSPC;
            }
        }
        *reuse = 1;
        return 0;
    }
    *reuse = 0;
    uint64_t mask = tm_xjob_mask(a, na) | tm_xjob_mask(b, nb);
    if (!mask) return tm_ctx_span(me, count, out);
    int rc = ctx_xjob(me, count, out);
    if (rc == 0) tm_xjob_note(me->job, out, count, mask);
    return rc;
}

struct tm_comm *tm_ctx_meet(struct tm_job *j, int ctx, int key, int nlocal,
                            struct tm_comm *(*make)(void *arg), void *arg)
{
    struct tm_ctxs *x = &j->ctxs;
    pthread_mutex_lock(&x->lock);
    struct tm_ctx_wait **pw = &x->meet, *w;
    while ((w = *pw) && !(w->ctx == ctx && w->key == key))
        pw = &w->next;
    struct tm_comm *c = NULL;
    if (w) {
        c = w->c;
        if (--w->left == 0) {
            *pw = w->next;
            free(w);
        }
    } else {
        /* Made under the lock: another member of the same communicator must not make a
         * second copy.  make() only allocates. */
        c = make(arg);
        if (c && nlocal > 1) {
            w = malloc(sizeof *w);
            if (!w) {
                /* The others could not find it: fail this member too (its reference goes). */
                tm_comm_release(c);
                c = NULL;
            } else {
                *w = (struct tm_ctx_wait){x->meet, ctx, key, nlocal - 1, c};
                x->meet = w;
            }
        }
    }
    pthread_mutex_unlock(&x->lock);
    return c;
}
