/* xjob.c — messages between ranks of two jobs of one user, relayed by the agent (xjob.h). */
#include "xjob.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "match.h"
#include "net_p2p.h"
#include "request.h"
#include "svc.h"
#include "type_copy.h"
#include "wait.h"

/* A send past the flow-control bound (xjob.h): its envelope went alone (RTS); its bytes go
 * when the receiver matched it (CTS).  On the list rts (lock). */
struct xrts {
    struct xrts *next;
    uint64_t id;
    int slot;
    const void *data;
    void *packed; /* data's allocation when the send packed a layout */
    size_t bytes;
    struct tm_request *sreq;
};

/* A receive matched to an RTS envelope, its bytes coming (DATA frames of cookie from the
 * sender's node).  On the list pulls (lock; buf and got: channel thread only). */
struct xpull {
    struct xpull *next;
    uint64_t cookie;
    int slot, node;
    struct tm_request *rreq;
    unsigned char *buf;
    size_t total, got;
    int src, tag;
};

/* One host (node) of another job: the message from it being assembled (its frames come in
 * order, one message at a time), and the flow control between it and this host. */
struct xhost {
    struct tm_envl *asm_e; /* the message whose frames come (channel thread only) */
    int32_t asm_dst;
    size_t asm_got;
    /* sender side (under send): eager bytes sent there and not yet credited, and whether a
     * CREDIT_REQ is out */
    size_t inflight;
    int asked;
    /* receiver side (under lock): bytes of its messages matched and not yet credited; credit
     * at the next match */
    size_t owed;
    int owe_now;
};

/* Another job this one talks to.  hosts[node] (lock: the vector; each xhost stays until the
 * slot is reused) and node_of[rank] (lock: the node of each of its world ranks a handshake
 * named, -1 unknown) grow as connects name more of its ranks. */
struct xpeer {
    uint64_t job; /* 0: free */
    int dead;
    struct xhost **hosts;
    int nhosts;
    int32_t *node_of;
    int nmap;
};

/* A synchronous send waiting for its SACK. */
struct xsync {
    struct xsync *next;
    uint64_t id;
    int slot;
    struct tm_request *sreq;
};

struct xctx {
    int ctx;
    uint64_t mask;
};

/* lock: peers (but asm_*), syncs, ctxs, next_id.  send: held across the frames of one message,
 * so that a message's frames are consecutive on the way (the receiver assembles one at a
 * time per job). */
struct tm_xjob {
    pthread_mutex_t lock, send;
    struct xpeer peers[TM_XJOB_PEERS_MAX];
    struct xsync *syncs;
    uint64_t next_id;
    struct xctx ctxs[TM_XJOB_CTX_MAX];
    int nctx;
    uint64_t dead; /* the slots whose job ended */
    _Atomic(tm_xjob_ctl_fn) ctl;
    size_t window; /* TMPI_XJOB_UNEXPECTED_MAX (0: no bound) */
    struct xrts *rts;
    struct xpull *pulls;
};

long long tm_xjob_unexpected_max(void)
{
    const char *v = getenv("TMPI_XJOB_UNEXPECTED_MAX");
    if (!v || !*v) return (long long)TM_XJOB_UNEXPECTED_DEFAULT;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end || *v == '-' || n > TM_XJOB_UNEXPECTED_LIMIT) return -1;
    return (long long)n;
}

static void xdead_check(struct tm_rank *me, struct tm_mbox *mb, struct tm_request *r);
static void peer_clear(struct xpeer *pe);
static int xdead_ctx(struct tm_job *j, int ctx);

int tm_xjob_init(struct tm_job *j)
{
    struct tm_xjob *x = calloc(1, sizeof *x);
    if (!x) return -ENOMEM;
    pthread_mutex_init(&x->lock, NULL);
    pthread_mutex_init(&x->send, NULL);
    /* a bad value is refused at the connect (dynproc/port.c); the default meanwhile */
    long long w = tm_xjob_unexpected_max();
    x->window = (size_t)(w < 0 ? (long long)TM_XJOB_UNEXPECTED_DEFAULT : w);
    j->xjob = x;
    j->xdead_check = xdead_check;
    j->xdead_ctx = xdead_ctx;
    return 0;
}

void tm_xjob_fini(struct tm_job *j)
{
    struct tm_xjob *x = j->xjob;
    if (!x) return;
    for (int i = 0; i < TM_XJOB_PEERS_MAX; i++)
        peer_clear(&x->peers[i]);
    for (struct xrts *r = x->rts, *n; r; r = n) {
        n = r->next;
        free(r->packed);
        free(r);
    }
    for (struct xpull *p = x->pulls, *n; p; p = n) {
        n = p->next;
        free(p->buf);
        free(p);
    }
    for (struct xsync *s = x->syncs, *n; s; s = n) {
        n = s->next;
        free(s);
    }
    pthread_mutex_destroy(&x->lock);
    pthread_mutex_destroy(&x->send);
    free(x);
    j->xjob = NULL;
}

/* A peer's hosts and rank map, freed (its slot is free or reused). */
static void peer_clear(struct xpeer *pe)
{
    for (int k = 0; k < pe->nhosts; k++)
        if (pe->hosts[k]) {
            free(pe->hosts[k]->asm_e);
            free(pe->hosts[k]);
        }
    free(pe->hosts);
    free(pe->node_of);
    memset(pe, 0, sizeof *pe);
}

/* x->lock held: host `node` of slot's job (made when add), or NULL (out of memory, a node
 * past TM_XJOB_NODES_MAX, none yet). */
static struct xhost *host_locked(struct tm_xjob *x, int slot, int node, int add)
{
    struct xpeer *pe = &x->peers[slot];
    if (node < 0 || node >= TM_XJOB_NODES_MAX) return NULL;
    if (node >= pe->nhosts) {
        if (!add) return NULL;
        int n = node + 1 > 2 * pe->nhosts ? node + 1 : 2 * pe->nhosts;
        if (n > TM_XJOB_NODES_MAX) n = TM_XJOB_NODES_MAX;
        struct xhost **v = realloc(pe->hosts, sizeof *v * (size_t)n);
        if (!v) return NULL;
        memset(v + pe->nhosts, 0, sizeof *v * (size_t)(n - pe->nhosts));
        pe->hosts = v;
        pe->nhosts = n;
    }
    if (!pe->hosts[node] && add) pe->hosts[node] = calloc(1, sizeof *pe->hosts[node]);
    return pe->hosts[node];
}

static struct xhost *host_of(struct tm_xjob *x, int slot, int node)
{
    pthread_mutex_lock(&x->lock);
    struct xhost *h = host_locked(x, slot, node, 1);
    pthread_mutex_unlock(&x->lock);
    return h;
}

/* This host's node in its job. */
static int my_node(const struct tm_job *j)
{
    return j->net ? j->net->node : 0;
}

int tm_xjob_set_nodes(struct tm_job *j, int slot, const int32_t *ranks, const int32_t *nodes, int n)
{
    struct tm_xjob *x = j->xjob;
    if (!x || slot < 0 || slot >= TM_XJOB_PEERS_MAX) return -EINVAL;
    int top = -1;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= (1 << TM_XRANK_SHIFT) || nodes[i] < 0 ||
            nodes[i] >= TM_XJOB_NODES_MAX)
            return -EPROTO;
        if (ranks[i] > top) top = ranks[i];
    }
    pthread_mutex_lock(&x->lock);
    struct xpeer *pe = &x->peers[slot];
    int rc = 0;
    if (top >= pe->nmap) {
        int32_t *v = realloc(pe->node_of, sizeof *v * (size_t)(top + 1));
        if (v) {
            for (int k = pe->nmap; k <= top; k++)
                v[k] = -1;
            pe->node_of = v;
            pe->nmap = top + 1;
        } else {
            rc = -ENOMEM;
        }
    }
    for (int i = 0; rc == 0 && i < n; i++)
        pe->node_of[ranks[i]] = nodes[i];
    pthread_mutex_unlock(&x->lock);
    return rc;
}

/* x->lock held: the node of slot's world rank r (0 when no handshake named it: a job on one
 * node). */
static int node_locked(const struct tm_xjob *x, int slot, int r)
{
    const struct xpeer *pe = &x->peers[slot];
    return r >= 0 && r < pe->nmap && pe->node_of[r] >= 0 ? pe->node_of[r] : 0;
}

int tm_xjob_node(struct tm_job *j, int w)
{
    struct tm_xjob *x = j->xjob;
    int slot = TM_XRANK_SLOT(w);
    if (!x || !tm_xrank(w) || slot >= TM_XJOB_PEERS_MAX) return -1;
    pthread_mutex_lock(&x->lock);
    int n = node_locked(x, slot, TM_XRANK_RANK(w));
    pthread_mutex_unlock(&x->lock);
    return n;
}

/* x->lock held: whether a communicator noted with slot's ranks may still be in use. */
static int slot_noted(const struct tm_xjob *x, int slot)
{
    for (int k = 0; k < x->nctx; k++)
        if (x->ctxs[k].mask & (1ull << slot)) return 1;
    return 0;
}

/* x->lock held: the slot of job id, added when add (the job's helpers_busy counts each live
 * one, see tm_xjob_slot). */
static int slot_locked(struct tm_job *j, struct tm_xjob *x, uint64_t id, int add)
{
    int free_slot = -1;
    for (int i = 0; i < TM_XJOB_PEERS_MAX; i++) {
        if (x->peers[i].job == id) return i;
        if (!x->peers[i].job && free_slot < 0) free_slot = i;
    }
    if (!add) return -ENOENT;
    /* full: a dead job's slot that no communicator names (a connect that failed) is reused */
    for (int i = 0; free_slot < 0 && i < TM_XJOB_PEERS_MAX; i++)
        if (x->peers[i].dead && !slot_noted(x, i)) {
            x->dead &= ~(1ull << i);
            free_slot = i;
        }
    if (free_slot < 0) return -ENOSPC;
    peer_clear(&x->peers[free_slot]);
    x->peers[free_slot].job = id;
    atomic_fetch_add_explicit(&j->helpers_busy, 1, memory_order_seq_cst);
    return free_slot;
}

int tm_xjob_slot(struct tm_job *j, uint64_t id, int add)
{
    struct tm_xjob *x = j->xjob;
    if (!x || !id || id == j->id) return -ENOENT;
    pthread_mutex_lock(&x->lock);
    /* a job connected to another that lives is never taken for stuck by the deadlock watch
     * (mstate.h helpers_busy): that job's ranks may send at any time */
    int s = slot_locked(j, x, id, add);
    /* a job id is never reused: a dead slot stays dead (a reconnect after its end fails)
     * until a connect to another job needs the room */
    pthread_mutex_unlock(&x->lock);
    return s;
}

uint64_t tm_xjob_job(struct tm_job *j, int slot)
{
    struct tm_xjob *x = j->xjob;
    if (!x || slot < 0 || slot >= TM_XJOB_PEERS_MAX) return 0;
    pthread_mutex_lock(&x->lock);
    uint64_t id = x->peers[slot].job;
    pthread_mutex_unlock(&x->lock);
    return id;
}

int tm_xjob_before(struct tm_job *j, int a, int b)
{
    uint64_t ja = tm_xrank(a) ? tm_xjob_job(j, TM_XRANK_SLOT(a)) : j->id;
    uint64_t jb = tm_xrank(b) ? tm_xjob_job(j, TM_XRANK_SLOT(b)) : j->id;
    int ra = tm_xrank(a) ? TM_XRANK_RANK(a) : a, rb = tm_xrank(b) ? TM_XRANK_RANK(b) : b;
    return ja != jb ? ja < jb : ra < rb;
}

uint64_t tm_xjob_mask(const int32_t *v, int n)
{
    uint64_t m = 0;
    for (int i = 0; v && i < n; i++)
        if (tm_xrank(v[i])) m |= 1ull << TM_XRANK_SLOT(v[i]);
    return m;
}

void tm_xjob_note(struct tm_job *j, const int *ctx, int n, uint64_t mask)
{
    struct tm_xjob *x = j->xjob;
    if (!x || !mask) return;
    pthread_mutex_lock(&x->lock);
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < x->nctx && x->ctxs[k].ctx != ctx[i])
            k++;
        if (k == x->nctx) {
            /* full: the oldest goes (its receives then wait past the peer's end) */
            if (x->nctx == TM_XJOB_CTX_MAX)
                memmove(x->ctxs, x->ctxs + 1, sizeof x->ctxs[0] * (size_t)--x->nctx);
            k = x->nctx++;
            x->ctxs[k].ctx = ctx[i];
            x->ctxs[k].mask = 0;
        }
        x->ctxs[k].mask |= mask;
    }
    pthread_mutex_unlock(&x->lock);
}

/* A frame to node `node` of job `to`, stamped with this host's node (the receiver's replies
 * and its assembly go by it). */
static int send_frame(struct tm_job *j, uint64_t to, int node, const struct tm_xhdr *h,
                      const void *p, size_t len)
{
    if (!j->svc || !j->svc->xjob_send) return -ENOTSUP;
    struct tm_xhdr c = *h;
    c.snode = my_node(j);
    return j->svc->xjob_send(to, (uint32_t)node, &c, sizeof c, p, len);
}

int tm_xjob_ctl_send(struct tm_job *j, uint64_t to, int node, const struct tm_xhdr *h,
                     const void *payload, size_t len)
{
    return send_frame(j, to, node, h, payload, len);
}

void tm_xjob_set_ctl(struct tm_job *j, tm_xjob_ctl_fn fn)
{
    if (j->xjob) atomic_store(&j->xjob->ctl, fn);
}

/* The peer of a foreign rank, alive: its job id, or 0. */
static uint64_t live_peer(struct tm_xjob *x, int slot)
{
    pthread_mutex_lock(&x->lock);
    uint64_t id = x->peers[slot].dead ? 0 : x->peers[slot].job;
    pthread_mutex_unlock(&x->lock);
    return id;
}

/* x->send held: a message's frames, consecutive (the receiver assembles one at a time per
 * job).  0 or send_frame's error. */
static int send_msg(struct tm_job *j, uint64_t to, int node, struct tm_xhdr *h, const void *data,
                    size_t bytes)
{
    int rc = 0;
    size_t off = 0;
    do {
        size_t n = bytes - off < TMPI_XJOB_PAYLOAD_MAX ? bytes - off : TMPI_XJOB_PAYLOAD_MAX;
        rc = send_frame(j, to, node, h, (const char *)data + off, n);
        h->flags &= ~TM_XF_FIRST;
        off += n;
    } while (rc == 0 && off < bytes);
    return rc;
}

/* x->send held: the sends to host hs (node of job to) wait; ask it for what it owes (once
 * until credit comes). */
static void ask_credit(struct tm_job *j, struct xhost *hs, uint64_t to, int node)
{
    if (hs->asked) return;
    struct tm_xhdr h = {.kind = TM_XK_CREDIT_REQ};
    hs->asked = send_frame(j, to, node, &h, NULL, 0) == 0;
}

/* s off the list of synchronous sends: 1, or 0 when a peer's end took (and completed) it. */
static int unlist_sync(struct tm_xjob *x, struct xsync *s)
{
    pthread_mutex_lock(&x->lock);
    struct xsync **pp = &x->syncs;
    while (*pp && *pp != s)
        pp = &(*pp)->next;
    int mine = *pp == s;
    if (mine) *pp = s->next;
    pthread_mutex_unlock(&x->lock);
    return mine;
}

/* The send of RTS id from slot's job's view (slot < 0: any), off the list: NULL when none. */
static struct xrts *take_rts(struct tm_xjob *x, int slot, uint64_t id, int any)
{
    pthread_mutex_lock(&x->lock);
    struct xrts **pp = &x->rts, *r;
    while ((r = *pp) && !(r->slot == slot && (any || r->id == id)))
        pp = &r->next;
    if (r) *pp = r->next;
    pthread_mutex_unlock(&x->lock);
    return r;
}

int tm_xjob_send(struct tm_rank *me, int w, int ctx, int src, int dest, int tag, const void *buf,
                 size_t bytes, enum tm_send_mode mode, struct tm_request *sreq)
{
    struct tm_job *j = me->job;
    struct tm_xjob *x = j->xjob;
    int slot = TM_XRANK_SLOT(w);
    if (!x || slot < 0 || slot >= TM_XJOB_PEERS_MAX) return -EINVAL;
    uint64_t to = live_peer(x, slot);
    if (!to) return -EPIPE;
    int node = tm_xjob_node(j, w);
    struct xhost *pe = host_of(x, slot, node);
    if (!pe) return -ENOMEM;
    sreq->st_source = dest;
    sreq->st_tag = tag;
    const void *data = buf;
    void *packed = NULL;
    if (sreq->dt && bytes) { /* a layout: packed once, the frames take the packed bytes */
        if (!(packed = malloc(bytes))) return -ENOMEM;
        tm_type_pack(packed, buf, bytes / sreq->dt->psize, sreq->dt, 0, bytes);
        data = packed;
    }
    struct tm_xhdr h = {.kind = TM_XK_MSG,
                        .flags = TM_XF_FIRST,
                        .dst = TM_XRANK_RANK(w),
                        .src = me->rank,
                        .ctx = ctx,
                        .csrc = src,
                        .tag = tag,
                        .total = bytes};
    pthread_mutex_lock(&x->send);
    /* past the bound: the envelope alone, its bytes when the receiver matched it */
    int rts = x->window && bytes && pe->inflight + bytes > x->window;
    if (rts) {
        struct xrts *r = calloc(1, sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&x->send);
            free(packed);
            return -ENOMEM;
        }
        r->slot = slot;
        r->data = data;
        r->packed = packed;
        r->bytes = bytes;
        r->sreq = sreq;
        pthread_mutex_lock(&x->lock);
        int dead = x->peers[slot].dead; /* its end fails the listed ones (on_gone) */
        r->id = h.cookie = ++x->next_id;
        if (!dead) {
            r->next = x->rts;
            x->rts = r;
        }
        pthread_mutex_unlock(&x->lock);
        if (dead) {
            pthread_mutex_unlock(&x->send);
            free(packed);
            free(r);
            return -EPIPE;
        }
        h.flags |= TM_XF_RTS;
        int rc = send_frame(j, to, node, &h, NULL, 0);
        if (rc == 0) ask_credit(j, pe, to, node);
        pthread_mutex_unlock(&x->send);
        if (rc == 0) return 1;
        if (!take_rts(x, slot, r->id, 0)) return 1; /* the peer's end completed it */
        free(r->packed);
        free(r);
        return rc == -ENOTSUP ? -EPIPE : rc;
    }
    struct xsync *s = NULL;
    if (mode == TM_SEND_SYNC) {
        if (!(s = calloc(1, sizeof *s))) {
            pthread_mutex_unlock(&x->send);
            free(packed);
            return -ENOMEM;
        }
        s->sreq = sreq;
        s->slot = slot;
        pthread_mutex_lock(&x->lock);
        s->id = h.cookie = ++x->next_id;
        s->next = x->syncs;
        x->syncs = s;
        pthread_mutex_unlock(&x->lock);
        h.flags |= TM_XF_SYNC;
    }
    int rc = send_msg(j, to, node, &h, data, bytes);
    if (rc == 0) pe->inflight += bytes;
    pthread_mutex_unlock(&x->send);
    free(packed);
    if (rc < 0) {
        if (s && !unlist_sync(x, s)) return 1; /* completed with its error */
        free(s);
        return rc == -ENOTSUP ? -EPIPE : rc;
    }
    if (s) return 1;
    tm_req_set_done(sreq, dest, tag, bytes, MPI_SUCCESS);
    return 0;
}

/* An envelope of another job: e->node its slot, e->chan its sender's node there. */
static void send_sack(struct tm_job *j, struct tm_envl *e)
{
    struct tm_xhdr h = {.kind = TM_XK_SACK, .dst = e->wsrc, .cookie = e->cookie};
    uint64_t to = tm_xjob_job(j, e->node);
    if (to) (void)send_frame(j, to, e->chan, &h, NULL, 0);
}

/* The receiver matched bytes of the messages of node `node` of slot's job: credit, in batches,
 * or at once when that host waits for it (xjob.h flow control). */
static void credit(struct tm_job *j, int slot, int node, size_t bytes)
{
    struct tm_xjob *x = j->xjob;
    pthread_mutex_lock(&x->lock);
    struct xhost *pe = host_locked(x, slot, node, 1);
    if (!pe) {
        pthread_mutex_unlock(&x->lock);
        return;
    }
    pe->owed += bytes;
    size_t val = 0;
    if (pe->owed && (pe->owe_now || pe->owed >= TM_XJOB_CREDIT_BATCH)) {
        val = pe->owed;
        pe->owed = 0;
        pe->owe_now = 0;
    }
    uint64_t to = x->peers[slot].dead ? 0 : x->peers[slot].job;
    pthread_mutex_unlock(&x->lock);
    if (!val || !to) return;
    struct tm_xhdr h = {.kind = TM_XK_CREDIT, .val = (int64_t)val};
    (void)send_frame(j, to, node, &h, NULL, 0);
}

/* The other job's host `node` waits for credit: what is owed now, or at the next match. */
static void on_credit_req(struct tm_job *j, int slot, int node)
{
    struct tm_xjob *x = j->xjob;
    pthread_mutex_lock(&x->lock);
    struct xhost *pe = host_locked(x, slot, node, 1);
    if (pe) pe->owe_now = 1;
    pthread_mutex_unlock(&x->lock);
    credit(j, slot, node, 0);
}

/* Credit from the receiving host `node`: its matched eager bytes. */
static void on_credit(struct tm_job *j, int slot, int node, const struct tm_xhdr *h)
{
    struct tm_xjob *x = j->xjob;
    struct xhost *pe = host_of(x, slot, node);
    if (!pe) return;
    pthread_mutex_lock(&x->send);
    size_t val = h->val > 0 ? (size_t)h->val : 0;
    pe->inflight = val < pe->inflight ? pe->inflight - val : 0;
    pe->asked = 0;
    pthread_mutex_unlock(&x->send);
}

/* rreq matched RTS envelope e (taken over): its bytes are asked for (CTS) and land in a
 * buffer of the pull; rreq completes when the last came. */
static void start_pull(struct tm_job *j, struct tm_request *rreq, struct tm_envl *e)
{
    struct tm_xjob *x = j->xjob;
    struct xpull *p = calloc(1, sizeof *p);
    if (p) p->buf = malloc(e->bytes ? e->bytes : 1);
    if (!p || !p->buf) {
        free(p);
        free(e);
        struct tm_waker *w = &rreq->owner->waker;
        tm_req_set_done(rreq, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_ERR_NO_MEM);
        tm_wake(w);
        return;
    }
    p->cookie = e->cookie;
    p->slot = e->node;
    p->node = e->chan;
    p->rreq = rreq;
    p->total = e->bytes;
    p->src = e->src;
    p->tag = e->tag;
    struct tm_xhdr h = {.kind = TM_XK_CTS, .dst = e->wsrc, .cookie = e->cookie};
    free(e);
    pthread_mutex_lock(&x->lock);
    int dead = x->peers[p->slot].dead;
    uint64_t to = x->peers[p->slot].job;
    if (!dead) {
        p->next = x->pulls;
        x->pulls = p;
    }
    pthread_mutex_unlock(&x->lock);
    if (dead || send_frame(j, to, p->node, &h, NULL, 0) < 0) {
        pthread_mutex_lock(&x->lock);
        int mine = 0;
        for (struct xpull **pp = &x->pulls; *pp; pp = &(*pp)->next)
            if (*pp == p) {
                *pp = p->next;
                mine = 1;
                break;
            }
        pthread_mutex_unlock(&x->lock);
        if (!mine && !dead) return; /* the peer's end failed it meanwhile */
        free(p->buf);
        free(p);
        struct tm_waker *w = &rreq->owner->waker;
        tm_req_set_done(rreq, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_ERR_OTHER);
        tm_wake(w);
    }
}

/* CTS from the receiving host: the RTS send's bytes go (straight to its receive), the send is
 * done. */
static void on_cts(struct tm_job *j, int slot, const struct tm_xhdr *h)
{
    struct tm_xjob *x = j->xjob;
    struct xrts *r = take_rts(x, slot, h->cookie, 0);
    if (!r) return;
    struct tm_xhdr d = {.kind = TM_XK_DATA, .cookie = h->cookie};
    uint64_t to = tm_xjob_job(j, slot);
    pthread_mutex_lock(&x->send);
    int rc = send_msg(j, to, h->snode, &d, r->data, r->bytes);
    pthread_mutex_unlock(&x->send);
    struct tm_request *q = r->sreq;
    struct tm_waker *w = &q->owner->waker;
    size_t bytes = r->bytes;
    free(r->packed);
    free(r);
    tm_req_set_done(q, q->st_source, q->st_tag, rc ? 0 : bytes, rc ? MPI_ERR_OTHER : MPI_SUCCESS);
    tm_wake(w);
}

/* The next bytes of a pull: into its buffer, then into its receive. */
static void on_data(struct tm_job *j, int slot, const struct tm_xhdr *h, const void *p, size_t len)
{
    struct tm_xjob *x = j->xjob;
    pthread_mutex_lock(&x->lock);
    struct xpull **pp = &x->pulls, *pl;
    while ((pl = *pp) && !(pl->slot == slot && pl->node == h->snode && pl->cookie == h->cookie))
        pp = &pl->next;
    if (pl && len <= pl->total - pl->got && pl->got + len == pl->total) *pp = pl->next;
    pthread_mutex_unlock(&x->lock);
    if (!pl || len > pl->total - pl->got) return;
    memcpy(pl->buf + pl->got, p, len);
    pl->got += len;
    if (pl->got < pl->total) return;
    struct tm_request *rreq = pl->rreq;
    size_t k = pl->total <= rreq->cap ? pl->total : rreq->cap;
    tm_copy_in(rreq, pl->buf, NULL, k);
    struct tm_waker *w = &rreq->owner->waker;
    tm_req_set_done(rreq, pl->src, pl->tag, k,
                    pl->total > rreq->cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    tm_wake(w);
    free(pl->buf);
    free(pl);
}

void tm_xjob_consume(struct tm_rank *me, struct tm_request *rreq, struct tm_envl *e)
{
    if (e->kind != TM_ENVL_XJOB) {
        tm_net_consume(me, rreq, e);
        return;
    }
    if (e->flags & TM_XF_RTS) {
        start_pull(me->job, rreq, e);
        return;
    }
    size_t k = e->bytes <= rreq->cap ? e->bytes : rreq->cap;
    tm_copy_in(rreq, e->data, NULL, k);
    tm_req_set_done(rreq, e->src, e->tag, k, e->bytes > rreq->cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    if (e->flags & TM_XF_SYNC) send_sack(me->job, e);
    credit(me->job, e->node, e->chan, e->bytes);
    free(e);
}

/* A whole message: to its receive, or queued. */
static void arrived(struct tm_job *j, int32_t dst, struct tm_envl *e)
{
    struct tm_rank *r = tm_job_rank(j, dst);
    struct tm_mbox *mb = &r->mbox;
    pthread_mutex_lock(&mb->lock);
    struct tm_request *rr = tm_match_posted(mb, e->ctx, e->src, e->tag);
    if (!rr) tm_add_unexp(mb, e);
    pthread_mutex_unlock(&mb->lock);
    if (!rr) {
        tm_wake(&r->waker); /* a Probe may be waiting */
        return;
    }
    if (e->flags & TM_XF_RTS) {
        start_pull(j, rr, e);
        return;
    }
    tm_deliver(rr, e->data, e->bytes, e->src, e->tag);
    if (e->flags & TM_XF_SYNC) send_sack(j, e);
    credit(j, e->node, e->chan, e->bytes);
    free(e);
}

/* Whether world rank dst runs in this host. */
static int here(struct tm_job *j, int32_t dst)
{
    if (dst < 0 || dst >= j->size) return 0;
    return !j->net || j->net->node_of_rank[dst] == j->net->node;
}

static void on_msg(struct tm_job *j, int slot, const struct tm_xhdr *h, const void *p, size_t len)
{
    struct xhost *pe = host_of(j->xjob, slot, h->snode);
    if (!pe) return; /* out of memory: the message is lost, its sender not told (xjob.h) */
    if (h->flags & TM_XF_FIRST) {
        free(pe->asm_e); /* a message cut short (its sender's send failed): gone */
        pe->asm_e = NULL;
        if (!here(j, h->dst) || h->total > SIZE_MAX - sizeof(struct tm_envl) || len > h->total)
            return;
        int rts = (h->flags & TM_XF_RTS) != 0;
        /* an RTS envelope holds no bytes: they come once a receive matched it */
        struct tm_envl *e = malloc(sizeof *e + (rts ? 0 : (size_t)h->total));
        if (!e) return; /* out of memory: the message is lost, its sender not told (xjob.h) */
        memset(e, 0, sizeof *e);
        e->kind = TM_ENVL_XJOB;
        e->ctx = h->ctx;
        e->src = h->csrc;
        e->tag = h->tag;
        e->bytes = (size_t)h->total;
        e->cls = TM_ENVL_NCLASS; /* a heap envelope (envelope_pool.h) */
        e->node = slot;
        e->chan = h->snode;
        e->wsrc = h->src;
        e->flags = (uint16_t)(h->flags & (TM_XF_SYNC | TM_XF_RTS));
        e->cookie = h->cookie;
        if (rts) {
            arrived(j, h->dst, e);
            return;
        }
        pe->asm_e = e;
        pe->asm_dst = h->dst;
        pe->asm_got = 0;
    }
    struct tm_envl *e = pe->asm_e;
    if (!e || len > e->bytes - pe->asm_got) return;
    if (len) memcpy(e->data + pe->asm_got, p, len);
    pe->asm_got += len;
    if (pe->asm_got < e->bytes) return;
    pe->asm_e = NULL;
    arrived(j, pe->asm_dst, e);
}

static void on_sack(struct tm_job *j, int slot, const struct tm_xhdr *h)
{
    struct tm_xjob *x = j->xjob;
    pthread_mutex_lock(&x->lock);
    struct xsync **pp = &x->syncs, *s;
    while ((s = *pp) && !(s->id == h->cookie && s->slot == slot))
        pp = &s->next;
    if (s) *pp = s->next;
    pthread_mutex_unlock(&x->lock);
    if (!s) return;
    struct tm_request *q = s->sreq;
    struct tm_waker *w = &q->owner->waker;
    tm_req_set_done(q, q->st_source, q->st_tag, 0, MPI_SUCCESS);
    tm_wake(w);
    free(s);
}

struct dead_pick {
    struct tm_xjob *x;
    uint64_t bit;
};

/* The id a derived context comes from (part.h, nbr.h, cp2p.h, coll_net: -2 ctx - 3). */
static int ctx_base(int c)
{
    if (c >= (1 << 30)) return c - (1 << 30);
    if (c >= (1 << 29)) return c - (1 << 29);
    if (c < -(1 << 30) - 7) return -(1 << 30) - 8 - c;
    if (c < 0) return (-c - 3) / 2;
    return c;
}

static int dead_ctx(void *arg, int ctx)
{
    struct dead_pick *d = arg;
    int b = ctx_base(ctx);
    for (int i = 0; i < d->x->nctx; i++)
        if (d->x->ctxs[i].ctx == b) return (d->x->ctxs[i].mask & d->bit) != 0;
    return 0;
}

/* j->xdead_check: r was posted on me's mailbox mb (its lock held) after a peer's end. */
static void xdead_check(struct tm_rank *me, struct tm_mbox *mb, struct tm_request *r)
{
    struct tm_xjob *x = me->job->xjob;
    (void)mb;
    pthread_mutex_lock(&x->lock);
    struct dead_pick d = {x, x->dead};
    int gone = dead_ctx(&d, r->ctx);
    pthread_mutex_unlock(&x->lock);
    if (gone && tm_unpost_recv(r))
        tm_req_set_done(r, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_ERR_OTHER);
}

/* j->xdead_ctx: does ctx name a communicator with ranks of a job that ended? */
static int xdead_ctx(struct tm_job *j, int ctx)
{
    struct tm_xjob *x = j->xjob;
    pthread_mutex_lock(&x->lock);
    struct dead_pick d = {x, x->dead};
    int gone = dead_ctx(&d, ctx);
    pthread_mutex_unlock(&x->lock);
    return gone;
}

/* The agent says job `from` is gone: fail what waits on it. */
static void on_gone(struct tm_job *j, uint64_t from, const char *reason)
{
    struct tm_xjob *x = j->xjob;
    pthread_mutex_lock(&x->lock);
    int slot = slot_locked(j, x, from, 0);
    if (slot < 0 || x->peers[slot].dead) {
        pthread_mutex_unlock(&x->lock);
        return;
    }
    x->peers[slot].dead = 1;
    x->dead |= 1ull << slot;
    atomic_fetch_sub_explicit(&j->helpers_busy, 1, memory_order_seq_cst);
    /* under the lock: a connect that reuses the slot (slot_locked) clears it after this */
    for (int k = 0; k < x->peers[slot].nhosts; k++)
        if (x->peers[slot].hosts[k]) {
            free(x->peers[slot].hosts[k]->asm_e);
            x->peers[slot].hosts[k]->asm_e = NULL;
        }
    struct xsync *failed = NULL;
    for (struct xsync **pp = &x->syncs, *s; (s = *pp);)
        if (s->slot == slot) {
            *pp = s->next;
            s->next = failed;
            failed = s;
        } else {
            pp = &s->next;
        }
    pthread_mutex_unlock(&x->lock);
    /* its RTS sends and the receives matched to its RTS envelopes: nothing more comes */
    struct xrts *rts_failed = NULL;
    struct xpull *pull_failed = NULL;
    pthread_mutex_lock(&x->lock);
    for (struct xrts **pp = &x->rts, *r; (r = *pp);)
        if (r->slot == slot) {
            *pp = r->next;
            r->next = rts_failed;
            rts_failed = r;
        } else {
            pp = &r->next;
        }
    for (struct xpull **pp = &x->pulls, *p; (p = *pp);)
        if (p->slot == slot) {
            *pp = p->next;
            p->next = pull_failed;
            pull_failed = p;
        } else {
            pp = &p->next;
        }
    pthread_mutex_unlock(&x->lock);
    for (struct xrts *r = rts_failed, *n; r; r = n) {
        n = r->next;
        struct tm_waker *w = &r->sreq->owner->waker;
        tm_req_set_done(r->sreq, r->sreq->st_source, r->sreq->st_tag, 0, MPI_ERR_OTHER);
        tm_wake(w);
        free(r->packed);
        free(r);
    }
    for (struct xpull *p = pull_failed, *n; p; p = n) {
        n = p->next;
        struct tm_waker *w = &p->rreq->owner->waker;
        tm_req_set_done(p->rreq, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_ERR_OTHER);
        tm_wake(w);
        free(p->buf);
        free(p);
    }
    for (struct xsync *s = failed, *n; s; s = n) {
        n = s->next;
        struct tm_waker *w = &s->sreq->owner->waker;
        tm_req_set_done(s->sreq, s->sreq->st_source, s->sreq->st_tag, 0, MPI_ERR_OTHER);
        tm_wake(w);
        free(s);
    }
    /* receives posted on communicators with its ranks: no message can come any more; those
     * posted after this walk fail at their post (xdead_check) */
    atomic_store_explicit(&j->xdead, 1, memory_order_seq_cst);
    struct dead_pick d = {x, 1ull << slot};
    for (int i = 0; i < j->size; i++) {
        if (!here(j, i)) continue;
        struct tm_rank *r = tm_job_rank(j, i);
        struct tm_request *out[16];
        int k;
        do {
            pthread_mutex_lock(&r->mbox.lock);
            pthread_mutex_lock(&x->lock);
            k = tm_unpost_ctx(&r->mbox, dead_ctx, &d, out, 16);
            pthread_mutex_unlock(&x->lock);
            pthread_mutex_unlock(&r->mbox.lock);
            for (int q = 0; q < k; q++)
                tm_req_set_done(out[q], MPI_ANY_SOURCE, MPI_ANY_TAG, 0, MPI_ERR_OTHER);
            if (k) tm_wake(&r->waker);
        } while (k == 16);
        /* a probe waiting for an arrival looks again, and finds the job gone */
        atomic_fetch_add_explicit(&r->mbox.arrivals, 1, memory_order_seq_cst);
        tm_wake(&r->waker);
    }
    tm_xjob_ctl_fn fn = atomic_load(&x->ctl);
    if (fn) fn(j, from, slot, NULL, reason, reason ? strlen(reason) : 0);
}

void tm_xjob_upcall(void *state, uint64_t from_job, const void *hdr, size_t hlen,
                    const void *payload, size_t len, const char *reason)
{
    struct tm_job *j = state;
    struct tm_xjob *x = j->xjob;
    if (!x) return;
    if (!hdr) {
        on_gone(j, from_job, reason);
        return;
    }
    struct tm_xhdr h;
    if (hlen != sizeof h) return;
    memcpy(&h, hdr, sizeof h);
    if (h.snode < 0 || h.snode >= TM_XJOB_NODES_MAX) return;
    /* a message may come before this host met its job: a job across nodes learns of a connect
     * from its root, while the other job's ranks may send as soon as theirs returned (the
     * message waits in the mailbox like any unexpected one) */
    int slot = tm_xjob_slot(j, from_job, h.kind == TM_XK_CONNECT || h.kind == TM_XK_MSG);
    if (slot < 0) return; /* a job this one never met: nothing waits for it */
    switch (h.kind) {
    case TM_XK_MSG:
        on_msg(j, slot, &h, payload, len);
        break;
    case TM_XK_SACK:
        on_sack(j, slot, &h);
        break;
    case TM_XK_CREDIT:
        on_credit(j, slot, h.snode, &h);
        break;
    case TM_XK_CREDIT_REQ:
        on_credit_req(j, slot, h.snode);
        break;
    case TM_XK_CTS:
        on_cts(j, slot, &h);
        break;
    case TM_XK_DATA:
        on_data(j, slot, &h, payload, len);
        break;
    default: {
        tm_xjob_ctl_fn fn = atomic_load(&x->ctl);
        if (fn) fn(j, from_job, slot, &h, payload, len);
        break;
    }
    }
}
