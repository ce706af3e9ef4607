/* dyn_net.c — spawn records and the requests of dynamic processes between a job's hosts
 * (dyn_net.h). */
#include "dyn_net.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "dyn_tab.h"
#include "helper_thread.h"
#include "msg_hdr.h"
#include "net_p2p.h"
#include "net_proto.h"
#include "wait.h"
#include "wake_timer.h"
#include "xconn.h"

/* The most nodes of the job one host name may name, as a node checks whether it is one. */
#define TM_DYN_HOST_NODES 64

/* A request waiting for its answer, on the asking rank's stack: the answer's value, and its
 * payload in rbuf (at most rcap bytes, rlen of them). */
struct dyn_call {
    struct dyn_call *next;
    uint64_t id;
    struct tm_rank *waiter;
    int64_t val;
    void *rbuf;
    uint32_t rcap, rlen;
    _Atomic int done;
};

/* A thread serving a SPAWN, joined at the job's end (tm_dyn_stop). */
struct dyn_helper {
    struct dyn_helper *next;
    pthread_t thread;
};

/* The job's calls in flight, its next call id and its SPAWN threads (all under lock). */
struct tm_spawn_net {
    pthread_mutex_t lock;
    struct dyn_call *calls;
    uint64_t next_id;
    struct dyn_helper *helpers;
};

/* A request with a payload being read, or served. */
struct dyn_serve {
    struct tm_job *j;
    int node;      /* the asker's */
    int32_t asker; /* its world rank, the answer's destination */
    uint64_t id;   /* its call */
    uint32_t len;
    uint8_t buf[]; /* the request */
};

int tm_spawn_rec_add(struct tm_job *j, const struct tm_spawn_req *rq, int wreuse)
{
    struct tm_spawn_rec *rec = calloc(1, sizeof *rec);
    int32_t *cmap = malloc(sizeof *cmap * (size_t)rq->n);
    if (rec) rec->pmap = malloc(sizeof *rec->pmap * (size_t)rq->pn);
    if (!rec || !cmap || !rec->pmap) goto nomem;
    /* the children's MPI_COMM_WORLD: every command's ranks, in command order */
    for (int k = 0, i = 0; k < rq->napps; k++)
        for (int r = 0; r < rq->apps[k].maxprocs && i < rq->n; r++)
            cmap[i++] = rq->apps[k].first + r;
    if (!(rec->world = tm_comm_new(rq->wctx, wreuse, rq->n, cmap, rq->n))) goto nomem;
    rec->world->builtin = 1;
    memcpy(rec->pmap, rq->pmap, sizeof *rec->pmap * (size_t)rq->pn);
    rec->pn = rq->pn;
    rec->first = rq->first;
    rec->n = rq->n;
    memcpy(rec->ctx, rq->ctx, sizeof rec->ctx);
    pthread_mutex_lock(&j->spawn_lock);
    rec->next = j->spawns;
    j->spawns = rec;
    if (!j->spawn_free) j->spawn_free = tm_spawn_recs_free;
    pthread_mutex_unlock(&j->spawn_lock);
    /* before the agent starts them: their MPI_COMM_WORLD and MPI_Comm_get_parent */
    const int32_t *nor = j->net ? j->net->node_of_rank : NULL;
    for (int i = 0; i < rq->n; i++) {
        int32_t g = tm_comm_world_rank(rec->world, i);
        if (nor && nor[g] != j->net->node) continue;
        struct tm_rank *c = tm_job_rank(j, g);
        c->world = rec->world;
        c->world_rank = i;
        c->spawn = rec;
    }
    return 0;
nomem:
    free(cmap);
    if (rec) free(rec->pmap);
    free(rec);
    return -ENOMEM;
}

void tm_spawn_recs_free(struct tm_job *j)
{
    for (struct tm_spawn_rec *r = j->spawns, *next; r; r = next) {
        next = r->next;
        tm_comm_fini_shared(r->world);
        free(r->world);
        free(r->pmap);
        free(r);
    }
    j->spawns = NULL;
    tm_dyn_tabs_free(j);
    if (j->spawn_net) {
        pthread_mutex_destroy(&j->spawn_net->lock);
        free(j->spawn_net);
        j->spawn_net = NULL;
    }
}

/* A rank waiting for a spawned rank to give its slot back (tm_spawn_reserve), on its stack,
 * in the job's list under spawn_lock. */
struct tm_slot_wait {
    struct tm_slot_wait *next;
    struct tm_rank *me;
    _Atomic int woken;
};

/* Node 0's reservation (a one-node job's too): the lowest n free world ranks in a row of the
 * universe beyond the world, all on node (>= 0: MPI_Comm_spawn's info key host) or on any
 * (-1).  Spawns without a host so take the next ranks, as a counter would; the ranks of
 * spawned ranks that finalized are free again (release_here).  The first; -EAGAIN when no
 * such row is free now but one would be once spawned ranks that hold slots give them back;
 * -1 when the universe has no such row at all. */
static int reserve_here(struct tm_job *j, int n, int node)
{
    const int32_t *nor = j->net ? j->net->node_of_rank : NULL;
    int first = -1, could = 0;
    pthread_mutex_lock(&j->spawn_lock);
    if (!j->spawn_taken) j->spawn_taken = calloc((size_t)j->size, 1);
    for (int g = j->world_size, run = 0, all = 0; j->spawn_taken && n >= 1 && g < j->size; g++) {
        int there = node < 0 || (nor ? nor[g] : 0) == node;
        all = there ? all + 1 : 0;
        could |= all >= n;
        run = there && !j->spawn_taken[g] ? run + 1 : 0;
        if (run == n) {
            first = g - n + 1;
            memset(j->spawn_taken + first, 1, (size_t)n);
            atomic_fetch_add(&j->spawn_next, n);
            break;
        }
    }
    pthread_mutex_unlock(&j->spawn_lock);
    return first >= 0 ? first : could ? -EAGAIN : -1;
}

/* Node 0's side of tm_spawn_release: world ranks first .. first+n-1 are free again.  A rank
 * never reserved is left alone (a stray or repeated release). */
static void release_here(struct tm_job *j, int first, int n)
{
    int freed = 0;
    pthread_mutex_lock(&j->spawn_lock);
    for (int g = first; j->spawn_taken && g < first + n; g++)
        if (g >= j->world_size && g < j->size && j->spawn_taken[g]) {
            j->spawn_taken[g] = 0;
            atomic_fetch_sub(&j->spawn_next, 1);
            freed = 1;
        }
    /* the roots waiting for room try again */
    for (struct tm_slot_wait *w = freed ? j->spawn_waiters : NULL; w; w = w->next) {
        atomic_store_explicit(&w->woken, 1, memory_order_seq_cst);
        tm_wake(&w->me->waker);
    }
    pthread_mutex_unlock(&j->spawn_lock);
}

/* The first world rank on node (the destination of a frame to that node's host). */
static int32_t rank_on(const struct tm_net *n, int size, int node)
{
    for (int g = 0; g < size; g++)
        if (n->node_of_rank[g] == node) return g;
    return -1;
}

static void free_done(void *arg, int err)
{
    (void)err;
    free(arg);
}

/* Sends one TM_MSG_DYN frame; payload (malloc'd, len bytes) is freed once sent.  0 or a
 * negative errno. */
static int dyn_send(struct tm_job *j, int32_t src, int node, int32_t dst, int kind, uint64_t id,
                    int64_t val, void *payload, uint32_t len)
{
    struct tm_msg_hdr h = {
        .type = TM_MSG_DYN,
        .payload_len = len,
        .src_rank = src,
        .dst_rank = dst,
        .tag = kind,
        .msg_len = (uint64_t)val,
        .cookie = id,
    };
    int r = tm_net_xmit(j->net, node, TMPI_CH_P2P, 0, &h, len ? payload : NULL,
                        len ? free_done : NULL, payload);
    if (r < 0) free(payload);
    return r;
}

static int called(void *arg)
{
    struct dyn_call *c = arg;
    return atomic_load_explicit(&c->done, memory_order_acquire);
}

/* A call with a deadline: answered, or its timer ran out. */
struct timed_call {
    struct dyn_call *c;
    struct tm_wake_timer *t;
};

static int called_or_late(void *arg)
{
    struct timed_call *tc = arg;
    return called(tc->c) || tm_wake_timer_expired(tc->t);
}

static int call_timed(struct tm_rank *me, int node, int kind, int64_t val, void *payload,
                      uint32_t len, struct dyn_call *c, int64_t ms);

/* Sends a request and waits for its answer in c (val, why). */
static int call(struct tm_rank *me, int node, int kind, int64_t val, void *payload, uint32_t len,
                struct dyn_call *c)
{
    return call_timed(me, node, kind, val, payload, len, c, -1);
}

/* call, and once ms milliseconds (>= 0) passed without an answer, asks node to drop the
 * request (TM_DYN_CONNECT_CANCEL, the only kind with a deadline) and waits for the one answer
 * that then comes: the drop's, or the one already on its way. */
static int call_timed(struct tm_rank *me, int node, int kind, int64_t val, void *payload,
                      uint32_t len, struct dyn_call *c, int64_t ms)
{
    c->rlen = 0;
    struct tm_job *j = me->job;
    struct tm_spawn_net *sn = j->spawn_net;
    int32_t dst = rank_on(j->net, j->size, node);
    if (!sn || dst < 0) {
        free(payload);
        return -EINVAL;
    }
    c->waiter = me;
    atomic_init(&c->done, 0);
    pthread_mutex_lock(&sn->lock);
    c->id = ++sn->next_id;
    c->next = sn->calls;
    sn->calls = c;
    pthread_mutex_unlock(&sn->lock);
    int r = dyn_send(j, me->rank, node, dst, kind, c->id, val, payload, len);
    struct tm_wake_timer *t = r == 0 ? tm_wake_timer_start(me, ms) : NULL;
    if (t) {
        struct timed_call tc = {c, t};
        tm_wait(me, called_or_late, &tc);
        tm_wake_timer_stop(t);
        if (!called(c))
            r = dyn_send(j, me->rank, node, dst, TM_DYN_CONNECT_CANCEL, c->id, 0, NULL, 0);
    }
    if (r == 0) tm_wait(me, called, c);
    pthread_mutex_lock(&sn->lock);
    struct dyn_call **pp = &sn->calls;
    while (*pp && *pp != c)
        pp = &(*pp)->next;
    if (*pp) *pp = c->next;
    pthread_mutex_unlock(&sn->lock);
    return r;
}

/* One reservation: node 0's answer (reserve_here). */
static int reserve_once(struct tm_rank *me, int n, int node)
{
    struct tm_job *j = me->job;
    if (!j->net || j->net->node == 0) return reserve_here(j, n, node);
    /* the node, when one is asked for: a 32-bit big-endian number */
    uint8_t *q = NULL;
    if (node >= 0) {
        if (!(q = malloc(4))) return -ENOMEM;
        q[0] = (uint8_t)(node >> 24), q[1] = (uint8_t)(node >> 16), q[2] = (uint8_t)(node >> 8),
        q[3] = (uint8_t)node;
    }
    struct dyn_call c = {0};
    int r = call(me, 0, TM_DYN_RESERVE, n, q, q ? 4 : 0, &c);
    return r < 0 ? r : (int)c.val;
}

/* A slot wait's condition: a release woke it, or its timer ran out. */
struct slot_wait_cond {
    struct tm_slot_wait *w;
    struct tm_wake_timer *t;
};

static int slot_freed_or_late(void *arg)
{
    struct slot_wait_cond *c = arg;
    return atomic_load_explicit(&c->w->woken, memory_order_seq_cst) || tm_wake_timer_expired(c->t);
}

/* Waits until a spawned rank on node 0 gives its slot back or ms milliseconds pass. */
static void slot_wait(struct tm_rank *me, int64_t ms)
{
    struct tm_job *j = me->job;
    struct tm_slot_wait w = {.me = me};
    atomic_init(&w.woken, 0);
    int local = !j->net || j->net->node == 0;
    if (local) {
        pthread_mutex_lock(&j->spawn_lock);
        w.next = j->spawn_waiters;
        j->spawn_waiters = &w;
        pthread_mutex_unlock(&j->spawn_lock);
    }
    struct slot_wait_cond c = {&w, tm_wake_timer_start(me, ms)};
    if (c.t) tm_wait(me, slot_freed_or_late, &c);
    tm_wake_timer_stop(c.t);
    if (local) {
        pthread_mutex_lock(&j->spawn_lock);
        struct tm_slot_wait **pp = &j->spawn_waiters;
        while (*pp && *pp != &w)
            pp = &(*pp)->next;
        if (*pp) *pp = w.next;
        pthread_mutex_unlock(&j->spawn_lock);
    }
}

int tm_spawn_reserve(struct tm_rank *me, int n, int node)
{
    struct tm_job *j = me->job;
    int first = reserve_once(me, n, node);
    if (first != -EAGAIN) return first;
    /* The slots are held by spawned ranks that have not finalized yet: a program that
     * spawns, disconnects and spawns again usually finds its last children still in
     * MPI_Finalize.  Wait for them (node 0 wakes its own waiters; another node asks again). */
    int local = !j->net || j->net->node == 0;
    struct tm_wake_timer *deadline = tm_wake_timer_start(me, TM_SPAWN_SLOT_WAIT_MS);
    while (first == -EAGAIN && deadline && !tm_wake_timer_expired(deadline)) {
        slot_wait(me, local ? TM_SPAWN_SLOT_WAIT_MS : TM_SPAWN_SLOT_RETRY_MS);
        first = reserve_once(me, n, node);
    }
    tm_wake_timer_stop(deadline);
    return first == -EAGAIN ? -1 : first;
}

int tm_spawn_release(struct tm_rank *me, int first, int n)
{
    struct tm_job *j = me->job;
    if (n < 1 || first < j->world_size || first > j->size - n) return -EINVAL;
    if (!j->net || j->net->node == 0) {
        release_here(j, first, n);
        return 0;
    }
    int32_t dst = rank_on(j->net, j->size, 0);
    if (dst < 0) return -EINVAL;
    return dyn_send(j, me->rank, 0, dst, TM_DYN_RELEASE, (uint64_t)n, first, NULL, 0);
}

int tm_dyn_host_nodes(struct tm_rank *me, const char *host, int *out, int cap)
{
    struct tm_job *j = me->job;
    size_t len = strlen(host) + 1;
    if (!j->net || len > TM_DYN_HOST_MAX) return 0;
    int n = 0;
    for (int node = 0; node < j->net->nnodes; node++) {
        if (node == j->net->node) continue;
        char *q = malloc(len);
        if (!q) return -ENOMEM;
        memcpy(q, host, len);
        struct dyn_call c = {0};
        int r = call(me, node, TM_DYN_HOST, 0, q, (uint32_t)len, &c);
        if (r < 0) return r;
        if (c.val != 1) continue;
        if (n < cap) out[n] = node;
        n++;
    }
    return n;
}

/* Receive daemon: whether this node answers to the host name of a TM_DYN_HOST (its NUL
 * within the payload), answered at once. */
static void serve_host(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx)
{
    struct dyn_serve *s = ctx;
    if (!s || strnlen((const char *)s->buf, s->len) != s->len - 1) {
        tm_net_proto_error(j->net, node, "a malformed host request");
        free(s);
        return;
    }
    int nodes[TM_DYN_HOST_NODES], self = 0;
    int n =
        j->svc->host_nodes ? j->svc->host_nodes((const char *)s->buf, nodes, TM_DYN_HOST_NODES) : 0;
    for (int i = 0; i < n && i < TM_DYN_HOST_NODES; i++)
        self |= nodes[i] == j->net->node;
    int32_t src = rank_on(j->net, j->size, j->net->node);
    dyn_send(j, src, node, s->asker, TM_DYN_HOST_ANS, s->id, self, NULL, 0);
    free(s);
}

/* The request's encoding: 32-bit big-endian numbers, strings as a length and their bytes. */
struct wbuf {
    uint8_t *p;
    size_t len, cap;
    int err;
};

static void put32(struct wbuf *w, uint32_t v)
{
    if (w->err || w->len + 4 > w->cap) {
        w->err = 1;
        return;
    }
    uint8_t *q = w->p + w->len;
    q[0] = (uint8_t)(v >> 24), q[1] = (uint8_t)(v >> 16), q[2] = (uint8_t)(v >> 8),
    q[3] = (uint8_t)v;
    w->len += 4;
}

static void put_str(struct wbuf *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    put32(w, (uint32_t)n);
    if (w->err || w->len + n > w->cap) {
        w->err = 1;
        return;
    }
    memcpy(w->p + w->len, s, n);
    w->len += n;
}

struct rbuf {
    const uint8_t *p;
    size_t len, off;
    int err;
};

static uint32_t get32(struct rbuf *r)
{
    if (r->err || r->off + 4 > r->len) {
        r->err = 1;
        return 0;
    }
    const uint8_t *q = r->p + r->off;
    r->off += 4;
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

/* A string of the request, malloc'd with its NUL (NULL for an empty one when empty_null). */
static char *get_str(struct rbuf *r, int empty_null)
{
    uint32_t n = get32(r);
    if (r->err || n > r->len - r->off) {
        r->err = 1;
        return NULL;
    }
    if (n == 0 && empty_null) return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->err = 1;
        return NULL;
    }
    memcpy(s, r->p + r->off, n);
    s[n] = 0;
    r->off += n;
    return s;
}

int tm_spawn_remote(struct tm_rank *me, int node, const struct tm_spawn_req *rq, char *why,
                    size_t len)
{
    struct wbuf w = {.cap = TM_SPAWN_MSG_MAX};
    if (!(w.p = malloc(w.cap))) return snprintf(why, len, "out of memory"), -ENOMEM;
    put32(&w, (uint32_t)rq->first);
    put32(&w, (uint32_t)rq->n);
    put32(&w, (uint32_t)rq->wctx);
    for (int i = 0; i < 3; i++)
        put32(&w, (uint32_t)rq->ctx[i]);
    put32(&w, (uint32_t)rq->pn);
    for (int i = 0; i < rq->pn; i++)
        put32(&w, (uint32_t)rq->pmap[i]);
    put32(&w, (uint32_t)rq->napps);
    for (int k = 0; k < rq->napps; k++) {
        const struct tmpi_spawn_app *a = &rq->apps[k];
        int nargs = 0;
        while (a->argv && a->argv[nargs])
            nargs++;
        put32(&w, (uint32_t)a->maxprocs);
        put32(&w, (uint32_t)a->first);
        put32(&w, (uint32_t)a->appnum);
        put_str(&w, a->command);
        put_str(&w, a->wdir);
        put_str(&w, a->path);
        put32(&w, (uint32_t)nargs);
        for (int i = 0; i < nargs; i++)
            put_str(&w, a->argv[i]);
    }
    if (w.err) {
        free(w.p);
        snprintf(why, len, "the spawn's commands and arguments exceed %u bytes", TM_SPAWN_MSG_MAX);
        return -E2BIG;
    }
    char answer_why[TM_SPAWN_WHY_MAX] = "";
    struct dyn_call c = {.rbuf = answer_why, .rcap = TM_SPAWN_WHY_MAX - 1};
    int r = call(me, node, TM_DYN_SPAWN, 0, w.p, (uint32_t)w.len, &c);
    if (r < 0) return snprintf(why, len, "cannot reach node %d: %s", node, strerror(-r)), r;
    answer_why[c.rlen] = 0;
    if (c.val < 0) snprintf(why, len, "node %d: %s", node, answer_why[0] ? answer_why : "refused");
    return (int)c.val;
}

int tm_spawn_remote_gate(struct tm_rank *me, int node, int first, int go)
{
    struct tm_job *j = me->job;
    int32_t dst = rank_on(j->net, j->size, node);
    if (dst < 0) return -EINVAL;
    return dyn_send(j, me->rank, node, dst, TM_DYN_SPAWN_GO, go ? 1 : 0, first, NULL, 0);
}

/* The thread that serves one SPAWN: decode, record, start, answer. */
static void *serve_main(void *arg)
{
    struct dyn_serve *s = arg;
    struct tm_job *j = s->j;
    struct rbuf r = {.p = s->buf, .len = s->len};
    struct tm_spawn_req rq = {0};
    struct tmpi_spawn_app *apps = NULL;
    int32_t *pmap = NULL;
    char *why = calloc(1, TM_SPAWN_WHY_MAX);
    int rc = why ? 0 : -ENOMEM;
    rq.first = (int)get32(&r);
    rq.n = (int)get32(&r);
    rq.wctx = (int32_t)get32(&r);
    for (int i = 0; i < 3; i++)
        rq.ctx[i] = (int32_t)get32(&r);
    rq.pn = (int)get32(&r);
    /* every count is bounded by what the payload holds before anything is allocated */
    if (r.err || rq.n < 1 || rq.n > j->size - j->world_size || rq.pn < 1 ||
        (size_t)rq.pn > (r.len - r.off) / 4)
        r.err = 1;
    if (!r.err && !(pmap = malloc(sizeof *pmap * (size_t)rq.pn))) r.err = 1;
    for (int i = 0; !r.err && i < rq.pn; i++)
        if ((pmap[i] = (int32_t)get32(&r)) < 0 || pmap[i] >= j->size) r.err = 1;
    rq.pmap = pmap;
    rq.napps = (int)get32(&r);
    if (!r.err && (rq.napps < 1 || (size_t)rq.napps > (r.len - r.off) / 28)) r.err = 1;
    if (!r.err && !(apps = calloc((size_t)rq.napps, sizeof *apps))) r.err = 1;
    int total = 0;
    for (int k = 0; !r.err && k < rq.napps; k++) {
        struct tmpi_spawn_app *a = &apps[k];
        a->maxprocs = (int)get32(&r);
        a->first = (int)get32(&r);
        a->appnum = (int)get32(&r);
        a->command = get_str(&r, 0);
        a->wdir = get_str(&r, 1);
        a->path = get_str(&r, 1);
        uint32_t nargs = get32(&r);
        /* each command's ranks in the universe beyond the world; the first names the spawn */
        if (r.err || a->maxprocs < 1 || a->maxprocs > rq.n - total || a->first < j->world_size ||
            a->first > j->size - a->maxprocs || (k == 0 && a->first != rq.first) || a->appnum < 0 ||
            a->appnum > k || (k > 0 && a->appnum < apps[k - 1].appnum) ||
            nargs > (r.len - r.off) / 4) {
            r.err = 1;
            break;
        }
        total += a->maxprocs;
        char **av = calloc((size_t)nargs + 1, sizeof *av);
        if (!av) {
            r.err = 1;
            break;
        }
        a->argv = av;
        for (uint32_t i = 0; !r.err && i < nargs; i++)
            av[i] = get_str(&r, 0);
    }
    if (!r.err && total != rq.n) r.err = 1;
    rq.apps = apps;
    if (rc == 0 && r.err) {
        rc = -EPROTO;
        snprintf(why, TM_SPAWN_WHY_MAX, "a malformed spawn request");
    }
    if (rc == 0 && tm_spawn_rec_add(j, &rq, 0) < 0) {
        rc = -ENOMEM;
        snprintf(why, TM_SPAWN_WHY_MAX, "out of memory");
    }
    if (rc == 0 && !j->svc->spawn) {
        rc = -ENOTSUP;
        snprintf(why, TM_SPAWN_WHY_MAX, "the agent cannot spawn ranks");
    }
    if (rc == 0) rc = j->svc->spawn(apps, rq.napps, rq.first, why, TM_SPAWN_WHY_MAX);
    for (int k = 0; apps && k < rq.napps; k++) {
        free((char *)apps[k].command);
        free((char *)apps[k].wdir);
        free((char *)apps[k].path);
        for (char *const *v = apps[k].argv; v && *v; v++)
            free(*v);
        free((void *)apps[k].argv);
    }
    free(apps);
    free(pmap);
    uint32_t wl = why && rc < 0 ? (uint32_t)strnlen(why, TM_SPAWN_WHY_MAX - 1) : 0;
    if (why && wl == 0) {
        free(why);
        why = NULL;
    }
    int32_t src = rank_on(j->net, j->size, j->net->node);
    dyn_send(j, src, s->node, s->asker, TM_DYN_SPAWN_ANS, s->id, rc, why, wl);
    free(s);
    return NULL;
}

/* The largest payload of a request of kind (0: none allowed). */
static uint32_t request_max(const struct tm_job *j, int kind)
{
    switch (kind) {
    case TM_DYN_RESERVE:
        return 4; /* the node asked for, if any */
    case TM_DYN_SPAWN:
        return TM_SPAWN_MSG_MAX;
    case TM_DYN_NAME:
        return TM_DYN_NAME_MAX;
    case TM_DYN_HOST:
        return TM_DYN_HOST_MAX;
    case TM_DYN_CONNECT:
        return MPI_MAX_PORT_NAME + 4 * (uint32_t)j->size;
    default:
        return 0;
    }
}

/* Receive daemon: where a TM_MSG_DYN frame's payload goes. */
static void *dyn_header(struct tm_job *j, int node, const struct tm_msg_hdr *h, void **ctx)
{
    struct tm_net *n = j->net;
    struct tm_spawn_net *sn = j->spawn_net;
    *ctx = NULL;
    if (!h->payload_len) return NULL;
    if (h->tag == TM_DYN_SPAWN_ANS || h->tag == TM_DYN_NAME_ANS || h->tag == TM_DYN_CONNECT_ANS) {
        pthread_mutex_lock(&sn->lock);
        struct dyn_call *c = sn->calls;
        while (c && c->id != h->cookie)
            c = c->next;
        pthread_mutex_unlock(&sn->lock);
        /* a call stays listed until it is answered: its buffer is safe to fill */
        if (!c || h->payload_len > c->rcap) {
            tm_net_proto_error(n, node, "an answer of %u bytes to %s", h->payload_len,
                               c ? "a smaller request" : "no request");
            return NULL;
        }
        c->rlen = h->payload_len;
        *ctx = c;
        return c->rbuf;
    }
    uint32_t max = request_max(j, h->tag);
    if (h->payload_len > max) {
        tm_net_proto_error(n, node, "a dynamic-process frame of kind %d with %u bytes", h->tag,
                           h->payload_len);
        return NULL;
    }
    struct dyn_serve *s = malloc(sizeof *s + h->payload_len);
    if (!s) {
        tm_net_proto_error(n, node, "out of memory for a dynamic-process request");
        return NULL;
    }
    *s = (struct dyn_serve){j, node, h->src_rank, h->cookie, h->payload_len};
    *ctx = s;
    return s->buf;
}

static void answer(struct tm_job *j, int node, const struct tm_msg_hdr *h, struct dyn_call *c)
{
    struct tm_spawn_net *sn = j->spawn_net;
    if (!c) {
        pthread_mutex_lock(&sn->lock);
        for (c = sn->calls; c && c->id != h->cookie; c = c->next)
            ;
        pthread_mutex_unlock(&sn->lock);
    }
    if (!c) {
        tm_net_proto_error(j->net, node, "an answer to no spawn request");
        return;
    }
    c->val = (int64_t)h->msg_len;
    struct tm_rank *w = c->waiter;
    atomic_store_explicit(&c->done, 1, memory_order_release); /* the caller's from here on */
    tm_wake(&w->waker);
}

/* Receive daemon: a name operation on node 0's table (TM_DYN_NAME: the service and the port,
 * each with its NUL), answered at once. */
static void serve_name(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx)
{
    struct dyn_serve *s = ctx;
    const char *svc = s ? (const char *)s->buf : NULL;
    size_t l1 = s ? strnlen(svc, s->len) : 0;
    const char *port = svc && l1 + 1 < s->len ? svc + l1 + 1 : NULL;
    if (!port || strnlen(port, s->len - l1 - 1) == s->len - l1 - 1 || j->net->node != 0) {
        tm_net_proto_error(j->net, node, "a malformed name request");
        free(s);
        return;
    }
    char *out = malloc(MPI_MAX_PORT_NAME);
    int rc =
        out ? tm_names_op_here(j, (int)h->msg_len, svc, port, out, MPI_MAX_PORT_NAME) : -ENOMEM;
    uint32_t ol = rc == 0 && h->msg_len == TM_NAME_LOOKUP ? (uint32_t)strlen(out) : 0;
    if (!ol) {
        free(out);
        out = NULL;
    }
    int32_t src = rank_on(j->net, j->size, j->net->node);
    dyn_send(j, src, node, s->asker, TM_DYN_NAME_ANS, s->id, rc, out, ol);
    free(s);
}

/* Receive daemon: a connect to a port of this node (TM_DYN_CONNECT: the port name with its
 * NUL, then the connecting group's world ranks), queued for its acceptor, or refused at once
 * when no such port is open. */
static void serve_connect(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx)
{
    struct dyn_serve *s = ctx;
    size_t nl = s ? strnlen((const char *)s->buf, s->len) : 0;
    size_t rest = s && nl < s->len ? s->len - nl - 1 : 1;
    int cn = (int)(rest / 4);
    if (!s || nl >= s->len || rest % 4 || cn < 1) {
        tm_net_proto_error(j->net, node, "a malformed connect request");
        free(s);
        return;
    }
    struct tm_conn_req *r = calloc(1, sizeof *r + sizeof(int32_t) * (size_t)cn);
    const uint8_t *q = s->buf + nl + 1;
    for (int i = 0; r && i < cn; i++, q += 4) {
        r->own[i] =
            (int32_t)((uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3]);
        if (r->own[i] < 0 || r->own[i] >= j->size) {
            tm_net_proto_error(j->net, node, "a connect request with rank %d", r->own[i]);
            free(r);
            free(s);
            return;
        }
    }
    int rc = r ? 0 : -ENOMEM;
    if (r) {
        r->cmap = r->own;
        r->cn = cn;
        r->remote = 1;
        r->node = node;
        r->asker = s->asker;
        r->id = s->id;
        atomic_init(&r->done, 0);
        /* a bad setting was refused at the connecting rank; the daemon keeps the default */
        int max = tm_connect_pending_max();
        if (max < 0) max = TM_CONNECT_PENDING_MAX;
        pthread_mutex_lock(&j->spawn_lock);
        struct tm_port *p = tm_port_find(j, (const char *)s->buf);
        if (!p)
            rc = -ENOENT;
        else if (tm_port_pending(j) >= max)
            rc = -EBUSY;
        else
            tm_port_enqueue(p, r);
        pthread_mutex_unlock(&j->spawn_lock);
        if (rc) free(r);
    }
    if (rc) {
        int32_t src = rank_on(j->net, j->size, j->net->node);
        dyn_send(j, src, node, s->asker, TM_DYN_CONNECT_ANS, s->id, rc, NULL, 0);
    }
    free(s);
}

/* Receive daemon: the asker of a connect gave up waiting (TM_DYN_CONNECT_CANCEL, cookie its
 * call): its request leaves the port's queue and is answered -ETIMEDOUT; one an acceptor took
 * already is answered by that acceptor. */
static void serve_cancel(struct tm_job *j, int node, const struct tm_msg_hdr *h)
{
    struct tm_conn_req *found = NULL;
    pthread_mutex_lock(&j->spawn_lock);
    for (struct tm_port *p = j->ports; p && !found; p = p->next)
        for (struct tm_conn_req *r = atomic_load(&p->head); r; r = r->next)
            if (r->remote && r->node == node && r->asker == h->src_rank && r->id == h->cookie) {
                found = tm_port_dequeue(p, r) ? r : NULL;
                break;
            }
    pthread_mutex_unlock(&j->spawn_lock);
    if (!found) return;
    free(found);
    int32_t src = rank_on(j->net, j->size, j->net->node);
    dyn_send(j, src, node, h->src_rank, TM_DYN_CONNECT_ANS, h->cookie, -ETIMEDOUT, NULL, 0);
}

/* Receive daemon: a whole TM_MSG_DYN frame. */
static void dyn_frame(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx)
{
    switch (h->tag) {
    case TM_DYN_RESERVE: {
        struct dyn_serve *s = ctx;
        int want = -1;
        if (s && s->len == 4)
            want = (int)((uint32_t)s->buf[0] << 24 | (uint32_t)s->buf[1] << 16 |
                         (uint32_t)s->buf[2] << 8 | s->buf[3]);
        free(s);
        if ((s && (want < 0 || want >= j->net->nnodes)) || h->msg_len > (uint64_t)j->size) {
            tm_net_proto_error(j->net, node, "a reservation of %llu ranks on node %d",
                               (unsigned long long)h->msg_len, want);
            break;
        }
        int first = j->net->node == 0 ? reserve_here(j, (int)h->msg_len, want) : -1;
        int32_t src = rank_on(j->net, j->size, j->net->node);
        dyn_send(j, src, node, h->src_rank, TM_DYN_RESERVE_ANS, h->cookie, first, NULL, 0);
        break;
    }
    case TM_DYN_RESERVE_ANS:
    case TM_DYN_HOST_ANS:
    case TM_DYN_SPAWN_ANS:
    case TM_DYN_NAME_ANS:
    case TM_DYN_CONNECT_ANS:
        answer(j, node, h, ctx);
        break;
    case TM_DYN_NAME:
        serve_name(j, node, h, ctx);
        break;
    case TM_DYN_CONNECT:
        serve_connect(j, node, h, ctx);
        break;
    case TM_DYN_CONNECT_CANCEL:
        serve_cancel(j, node, h);
        break;
    case TM_DYN_HOST:
        serve_host(j, node, h, ctx);
        break;
    case TM_DYN_SPAWN_GO:
        /* the spawn's outcome on every node: its ranks here run or end unrun */
        if (h->msg_len < (uint64_t)j->world_size || h->msg_len >= (uint64_t)j->size) {
            tm_net_proto_error(j->net, node, "a spawn outcome for rank %llu",
                               (unsigned long long)h->msg_len);
            break;
        }
        if (j->svc->spawn_gate) (void)j->svc->spawn_gate((int)h->msg_len, h->cookie != 0);
        break;
    case TM_DYN_RELEASE:
        if (j->net->node != 0 || h->msg_len < (uint64_t)j->world_size || h->cookie < 1 ||
            h->msg_len >= (uint64_t)j->size || h->cookie > (uint64_t)j->size - h->msg_len) {
            tm_net_proto_error(j->net, node, "a release of %llu ranks from %llu",
                               (unsigned long long)h->cookie, (unsigned long long)h->msg_len);
            break;
        }
        release_here(j, (int)h->msg_len, (int)h->cookie);
        break;
    case TM_DYN_SPAWN: {
        struct dyn_serve *s = ctx;
        if (!s) break;
        struct tm_spawn_net *sn = j->spawn_net;
        struct dyn_helper *hp = malloc(sizeof *hp);
        int e = hp ? 0 : ENOMEM;
        if (hp) {
            /* under the lock: tm_dyn_stop sees every thread it must join */
            pthread_mutex_lock(&sn->lock);
            e = pthread_create(&hp->thread, NULL, serve_main, s);
            if (e == 0) {
                hp->next = sn->helpers;
                sn->helpers = hp;
            }
            pthread_mutex_unlock(&sn->lock);
            if (e) free(hp);
        }
        if (e) {
            int32_t src = rank_on(j->net, j->size, j->net->node);
            dyn_send(j, src, node, s->asker, TM_DYN_SPAWN_ANS, s->id, -e, NULL, 0);
            free(s);
        }
        break;
    }
    default:
        tm_net_proto_error(j->net, node, "a spawn frame of kind %d", h->tag);
    }
}

/* A name operation a helper thread asks of the agent while a carried rank parks. */
struct name_call {
    const struct tmpi_svc *svc;
    struct tm_rank *me;
    int op, rc;
    const char *service, *port;
    char *out;
    size_t cap;
    _Atomic int done;
};

static void *name_main(void *arg)
{
    struct name_call *c = arg;
    c->rc = c->svc->name_op(c->op, c->service, c->port, c->out, c->cap);
    struct tm_rank *me = c->me;
    atomic_store_explicit(&c->done, 1, memory_order_seq_cst); /* the rank's again */
    tm_wake(&me->waker);
    return NULL;
}

static int name_done(void *arg)
{
    struct name_call *c = arg;
    return atomic_load_explicit(&c->done, memory_order_seq_cst);
}

/* svc name_op waits for the agent's answer (up to its timeout).  A carried rank would hold its
 * carrier, and the carrier's other ranks, that long: a helper thread asks while the rank parks
 * (core/wait.h tm_park_until), as MPI-IO's long calls do (io/io_pool.h).  A rank on a thread of
 * its own asks itself. */
static int name_op_agent(struct tm_rank *me, int op, const char *service, const char *port,
                         char *out, size_t cap)
{
    const struct tmpi_svc *svc = me->job->svc;
    if (!tm_wait_parks(me)) return svc->name_op(op, service, port, out, cap);
    struct name_call c = {svc, me, op, 0, service, port, out, cap, 0};
    pthread_t t;
    if (tm_helper_thread_start(&t, name_main, &c) != 0)
        return svc->name_op(op, service, port, out, cap);
    (void)tm_park_until(me, name_done, &c); /* -ENOTSUP cannot be: tm_wait_parks said so */
    pthread_join(t, NULL);
    return c.rc;
}

int tm_dyn_name(struct tm_rank *me, int op, const char *service, const char *port, char *out,
                size_t cap)
{
    struct tm_job *j = me->job;
    _Static_assert(TM_NAME_PUBLISH == TMPI_NAME_PUBLISH &&
                       TM_NAME_UNPUBLISH == TMPI_NAME_UNPUBLISH &&
                       TM_NAME_LOOKUP == TMPI_NAME_LOOKUP,
                   "libtmpi's name operations are the service table's");
    /* the agents' name service: every job of the user sees the name, on every node */
    if (j->svc && j->svc->name_op) return name_op_agent(me, op, service, port, out, cap);
    if (!j->net || j->net->node == 0) return tm_names_op_here(j, op, service, port, out, cap);
    size_t l1 = strlen(service), l2 = port ? strlen(port) : 0;
    if (l1 + l2 + 2 > TM_DYN_NAME_MAX) return -ENAMETOOLONG;
    char *b = malloc(l1 + l2 + 2);
    if (!b) return -ENOMEM;
    memcpy(b, service, l1 + 1);
    memcpy(b + l1 + 1, port ? port : "", l2 + 1);
    char got[MPI_MAX_PORT_NAME];
    struct dyn_call c = {.rbuf = got, .rcap = sizeof got - 1};
    int r = call(me, 0, TM_DYN_NAME, op, b, (uint32_t)(l1 + l2 + 2), &c);
    if (r < 0) return r;
    got[c.rlen] = 0;
    if (c.val == 0 && op == TM_NAME_LOOKUP) snprintf(out, cap, "%s", got);
    return (int)c.val;
}

int tm_dyn_connect(struct tm_rank *me, int node, const char *port, const int32_t *cmap, int cn,
                   int64_t ms, int32_t ctx[3], int32_t **ret_amap, int *ret_an)
{
    struct tm_job *j = me->job;
    size_t nl = strlen(port);
    if (nl >= MPI_MAX_PORT_NAME) return -ENAMETOOLONG;
    size_t len = nl + 1 + 4 * (size_t)cn;
    uint8_t *b = malloc(len);
    uint32_t rcap = 4 * (3 + (uint32_t)j->size);
    uint8_t *ans = malloc(rcap);
    if (!b || !ans) {
        free(b);
        free(ans);
        return -ENOMEM;
    }
    memcpy(b, port, nl + 1);
    struct wbuf w = {.p = b + nl + 1, .cap = 4 * (size_t)cn};
    for (int i = 0; i < cn; i++)
        put32(&w, (uint32_t)cmap[i]);
    struct dyn_call c = {.rbuf = ans, .rcap = rcap};
    int r = call_timed(me, node, TM_DYN_CONNECT, 0, b, (uint32_t)len, &c, ms);
    if (r == 0) r = (int)c.val;
    struct rbuf rb = {.p = ans, .len = c.rlen};
    int an = c.rlen >= 12 ? (int)(c.rlen / 4) - 3 : 0;
    int32_t *amap = r == 0 && an > 0 ? malloc(sizeof *amap * (size_t)an) : NULL;
    if (r == 0 && (!amap || c.rlen % 4)) r = amap ? -EPROTO : -ENOMEM;
    for (int i = 0; r == 0 && i < 3; i++)
        ctx[i] = (int32_t)get32(&rb);
    for (int i = 0; r == 0 && i < an; i++)
        amap[i] = (int32_t)get32(&rb);
    free(ans);
    if (r != 0) {
        free(amap);
        return r;
    }
    *ret_amap = amap;
    *ret_an = an;
    return 0;
}

void tm_dyn_connect_answer(struct tm_job *j, struct tm_conn_req *r)
{
    if (r->remote == 2) {
        tm_xconn_answer(j, r);
        return;
    }
    uint32_t len = r->err ? 0 : 4 * (3 + (uint32_t)r->an);
    uint8_t *b = len ? malloc(len) : NULL;
    int err = len && !b ? MPI_ERR_NO_MEM : r->err;
    if (b) {
        struct wbuf w = {.p = b, .cap = len};
        for (int i = 0; i < 3; i++)
            put32(&w, (uint32_t)r->ctx[i]);
        for (int i = 0; i < r->an; i++)
            put32(&w, (uint32_t)r->amap[i]);
    }
    int32_t src = rank_on(j->net, j->size, j->net->node);
    dyn_send(j, src, r->node, r->asker, TM_DYN_CONNECT_ANS, r->id, err, b, b ? len : 0);
    free(r->amap);
    free(r);
}

static const struct tm_net_proto dyn_proto = {
    .header = dyn_header,
    .frame = dyn_frame,
};

void tm_dyn_stop(struct tm_job *j)
{
    struct tm_spawn_net *sn = j->spawn_net;
    if (!sn) return;
    pthread_mutex_lock(&sn->lock);
    struct dyn_helper *hp = sn->helpers;
    sn->helpers = NULL;
    pthread_mutex_unlock(&sn->lock);
    while (hp) {
        struct dyn_helper *next = hp->next;
        pthread_join(hp->thread, NULL);
        free(hp);
        hp = next;
    }
}

int tm_spawn_net_register(struct tm_job *j)
{
    struct tm_spawn_net *sn = calloc(1, sizeof *sn);
    if (!sn) return -ENOMEM;
    pthread_mutex_init(&sn->lock, NULL);
    j->spawn_net = sn;
    pthread_mutex_lock(&j->spawn_lock);
    if (!j->spawn_free) j->spawn_free = tm_spawn_recs_free;
    pthread_mutex_unlock(&j->spawn_lock);
    return tm_net_proto_register(j, TM_MSG_DYN, &dyn_proto);
}
