/* xconn.c — the handshake of a connect between two jobs (xconn.h). */
#include "xconn.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dyn_tab.h"
#include "net_p2p.h"
#include "mpi.h"
#include "wait.h"
#include "wake_timer.h"
#include "xjob.h"

/* A connect waiting for its answer (on the root's stack). */
struct xcall {
    struct xcall *next;
    uint64_t id;
    int slot;
    struct tm_rank *waiter;
    _Atomic int done;
    int64_t val;
    int32_t ctx[3];
    int32_t *amap;
    int an;
    char why[96]; /* the agent's words when the job is gone */
};

/* The calls in flight of the host's jobs (one list: connects are few; a host runs one job). */
static struct {
    pthread_mutex_t lock;
    struct xcall *calls;
    uint64_t next;
} xc = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int called(void *arg)
{
    struct xcall *c = arg;
    return atomic_load_explicit(&c->done, memory_order_acquire);
}

struct timed {
    struct xcall *c;
    struct tm_wake_timer *t;
};

static int called_or_late(void *arg)
{
    struct timed *t = arg;
    return called(t->c) || tm_wake_timer_expired(t->t);
}

static void unlist(struct xcall *c)
{
    pthread_mutex_lock(&xc.lock);
    for (struct xcall **pp = &xc.calls; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    pthread_mutex_unlock(&xc.lock);
}

/* The node of this job's world rank w. */
static int32_t own_node(const struct tm_job *j, int32_t w)
{
    return j->net ? j->net->node_of_rank[w] : 0;
}

/* A group's world ranks v[0..n) of job j and their nodes, as a handshake carries them (ranks,
 * then nodes) at b. */
static void put_group(const struct tm_job *j, char *b, const int32_t *v, int n)
{
    memcpy(b, v, 4 * (size_t)n);
    for (int i = 0; i < n; i++) {
        int32_t nd = own_node(j, v[i]);
        memcpy(b + 4 * ((size_t)n + (size_t)i), &nd, 4);
    }
}

/* The other job's group of n ranks at p (ranks, then nodes): its ranks as foreign ranks of
 * slot into out[0..n), their nodes noted.  0 or -EPROTO, -ENOMEM. */
static int take_group(struct tm_job *j, int slot, const char *p, int n, int32_t *out)
{
    int32_t *ranks = malloc(sizeof *ranks * 2 * (size_t)n);
    if (!ranks) return -ENOMEM;
    memcpy(ranks, p, 8 * (size_t)n);
    int rc = tm_xjob_set_nodes(j, slot, ranks, ranks + n, n);
    for (int i = 0; rc == 0 && i < n; i++)
        out[i] = TM_XRANK(slot, ranks[i]);
    free(ranks);
    return rc;
}

/* A call's answer: 0 with the ids and the group (payload: 3 ids, world ranks, their nodes),
 * or its error. */
static int64_t take_answer(struct tm_job *j, struct xcall *c, int slot, int64_t val, const void *p,
                           size_t len)
{
    if (val) return val;
    if (len < 20 || (len - 12) % 8) return -EPROTO;
    size_t an = (len - 12) / 8;
    if (!(c->amap = malloc(sizeof *c->amap * an))) return -ENOMEM;
    memcpy(c->ctx, p, 12);
    int rc = take_group(j, slot, (const char *)p + 12, (int)an, c->amap);
    if (rc) {
        free(c->amap);
        c->amap = NULL;
        return rc;
    }
    c->an = (int)an;
    return 0;
}

/* The answer to call id from slot's job (val, payload), or (gone) that job's end for all its
 * calls. */
static void finish(struct tm_job *j, int slot, uint64_t id, int64_t val, const void *p, size_t len,
                   int gone)
{
    pthread_mutex_lock(&xc.lock);
    for (struct xcall **pp = &xc.calls, *c; (c = *pp);) {
        if (c->slot != slot || c->waiter->job != j || (!gone && c->id != id)) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        c->val = gone ? -EPIPE : take_answer(j, c, slot, val, p, len);
        if (gone)
            snprintf(c->why, sizeof c->why, "%.*s", (int)(len < sizeof c->why ? len : 95),
                     p ? (const char *)p : "");
        struct tm_waker *wk = &c->waiter->waker;
        atomic_store_explicit(&c->done, 1, memory_order_release);
        tm_wake(wk);
        if (!gone) break;
    }
    pthread_mutex_unlock(&xc.lock);
}

int tm_xconn_connect(struct tm_rank *me, uint64_t job, const char *port, const int32_t *cmap,
                     int cn, int64_t ms, int32_t ctx[3], int32_t **ret_amap, int *ret_an, char *why,
                     size_t wlen)
{
    struct tm_job *j = me->job;
    if (!j->svc || !j->svc->xjob_send) return -ENOTSUP;
    if (tm_xjob_mask(cmap, cn)) return -EXDEV; /* the handshake names ranks of one job */
    int slot = tm_xjob_slot(j, job, 1);
    if (slot < 0) return slot == -ENOENT ? -ENOENT : -ENOSPC;
    /* the port's node of its job (its name's last number): the connect goes to that host */
    unsigned long long pid = 0;
    int pn = 0, pnode = 0;
    if (sscanf(port, "tmpi-port:%llu:%d:%d", &pid, &pn, &pnode) < 3 || pnode < 0) pnode = 0;
    size_t pl = strlen(port) + 1, len = pl + 8 * (size_t)cn;
    char *b = malloc(len);
    if (!b) return -ENOMEM;
    memcpy(b, port, pl);
    put_group(j, b + pl, cmap, cn);
    struct xcall c = {.slot = slot, .waiter = me};
    atomic_init(&c.done, 0);
    pthread_mutex_lock(&xc.lock);
    c.id = ++xc.next;
    c.next = xc.calls;
    xc.calls = &c;
    pthread_mutex_unlock(&xc.lock);
    struct tm_xhdr h = {.kind = TM_XK_CONNECT, .src = me->rank, .cookie = c.id};
    int rc = tm_xjob_ctl_send(j, job, pnode, &h, b, len);
    free(b);
    if (rc < 0) {
        unlist(&c);
        return rc;
    }
    struct tm_wake_timer *t = ms >= 0 ? tm_wake_timer_start(me, ms) : NULL;
    if (t) {
        struct timed tw = {&c, t};
        tm_wait(me, called_or_late, &tw);
        tm_wake_timer_stop(t);
        if (!called(&c)) { /* late: the port's job drops it, or its answer is on the way */
            struct tm_xhdr x = {.kind = TM_XK_CANCEL, .src = me->rank, .cookie = c.id};
            if (tm_xjob_ctl_send(j, job, pnode, &x, NULL, 0) < 0) {
                unlist(&c);
                if (!called(&c)) return -EPIPE;
            }
        }
    }
    tm_wait(me, called, &c);
    if (c.val == -EPIPE && why && wlen) snprintf(why, wlen, "%s", c.why);
    if (c.val) return (int)c.val;
    memcpy(ctx, c.ctx, sizeof c.ctx);
    *ret_amap = c.amap;
    *ret_an = c.an;
    return 0;
}

/* The answer to call id of world rank asker of job `to`, on its node `node`. */
static void answer(struct tm_job *j, uint64_t to, int node, int32_t asker, uint64_t id, int64_t val,
                   const void *p, size_t len)
{
    struct tm_xhdr h = {.kind = TM_XK_CONNECT_ANS, .dst = asker, .cookie = id, .val = val};
    (void)tm_xjob_ctl_send(j, to, node, &h, p, len);
}

void tm_xconn_answer(struct tm_job *j, struct tm_conn_req *r)
{
    int64_t err = r->err;
    if (!err && tm_xjob_mask(r->amap, r->an)) err = -EXDEV;
    size_t len = err ? 0 : 12 + 8 * (size_t)r->an;
    char *b = len ? malloc(len) : NULL;
    if (len && !b) err = MPI_ERR_NO_MEM;
    if (b) {
        memcpy(b, r->ctx, 12);
        put_group(j, b + 12, r->amap, r->an);
    }
    answer(j, r->xjob, r->node, r->asker, r->id, err, b, b ? len : 0);
    free(b);
    free(r->amap);
    free(r);
}

/* A connect from job `from` (slot): queued on its port, or answered with why not. */
static void serve_connect(struct tm_job *j, uint64_t from, int slot, const struct tm_xhdr *h,
                          const char *p, size_t len)
{
    size_t nl = strnlen(p ? p : "", len);
    size_t rest = nl < len ? len - nl - 1 : 1;
    int cn = (int)(rest / 8), rc = 0;
    if (!p || nl >= len || rest % 8 || cn < 1) return; /* malformed: nobody to answer sanely */
    /* the connecting root's host: its answer goes there */
    int node = h->snode;
    struct tm_conn_req *r = calloc(1, sizeof *r + sizeof(int32_t) * (size_t)cn);
    if (!r) {
        answer(j, from, node, h->src, h->cookie, -ENOMEM, NULL, 0);
        return;
    }
    rc = take_group(j, slot, p + nl + 1, cn, r->own);
    if (rc) {
        free(r);
        answer(j, from, node, h->src, h->cookie, rc, NULL, 0);
        return;
    }
    r->cmap = r->own;
    r->cn = cn;
    r->remote = 2;
    r->node = node;
    r->xjob = from;
    r->asker = h->src;
    r->id = h->cookie;
    atomic_init(&r->done, 0);
    int max = tm_connect_pending_max();
    if (max < 0) max = TM_CONNECT_PENDING_MAX;
    pthread_mutex_lock(&j->spawn_lock);
    struct tm_port *pt = tm_port_find(j, p);
    if (!pt)
        rc = -ENOENT;
    else if (tm_port_pending(j) >= max)
        rc = -EBUSY;
    else
        tm_port_enqueue(pt, r);
    pthread_mutex_unlock(&j->spawn_lock);
    if (rc) {
        free(r);
        answer(j, from, node, h->src, h->cookie, rc, NULL, 0);
    }
}

/* Connects of job `from` still queued (id: that call only; gone: all, unanswered). */
static void drop_queued(struct tm_job *j, uint64_t from, int all, uint64_t id)
{
    for (;;) {
        struct tm_conn_req *found = NULL;
        pthread_mutex_lock(&j->spawn_lock);
        for (struct tm_port *p = j->ports; p && !found; p = p->next)
            for (struct tm_conn_req *r = atomic_load(&p->head); r; r = r->next)
                if (r->remote == 2 && r->xjob == from && (all || r->id == id)) {
                    found = tm_port_dequeue(p, r) ? r : NULL;
                    break;
                }
        pthread_mutex_unlock(&j->spawn_lock);
        if (!found) return;
        if (!all) answer(j, from, found->node, found->asker, found->id, -ETIMEDOUT, NULL, 0);
        free(found);
        if (!all) return;
    }
}

static void on_ctl(struct tm_job *j, uint64_t from, int slot, const struct tm_xhdr *h,
                   const void *payload, size_t len)
{
    if (!h) { /* the job is gone: its connects here go, ours to it fail */
        drop_queued(j, from, 1, 0);
        finish(j, slot, 0, 0, payload, len, 1);
        return;
    }
    switch (h->kind) {
    case TM_XK_CONNECT:
        serve_connect(j, from, slot, h, payload, len);
        break;
    case TM_XK_CONNECT_ANS:
        finish(j, slot, h->cookie, h->val, payload, len, 0);
        break;
    case TM_XK_CANCEL:
        drop_queued(j, from, 0, h->cookie);
        break;
    default:
        break;
    }
}

void tm_xconn_register(struct tm_job *j)
{
    tm_xjob_set_ctl(j, on_ctl);
}
