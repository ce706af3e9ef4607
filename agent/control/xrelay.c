/* xrelay.c — frames between two jobs of one user, on this agent or across the mesh (xrelay.h). */
#include "xrelay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "job.h"
#include "jobhost.h"
#include "log.h"
#include "mesh.h"
#include "msg_check.h"
#include "names.h"

/* A frame waiting for its link's handshake or its route's find (one allocation: hdr then
 * payload). */
struct xpend {
    struct xpend *next;
    uint64_t to_job, from_job;
    uint32_t to_node, from_node;
    uint32_t uid;
    size_t hlen, len;
    uint8_t data[];
};

/* A queue of such frames, in the order they came, at most XRELAY_PENDING_BYTES_MAX bytes. */
struct xqueue {
    struct xpend *head, **tail;
    size_t bytes;
};

/* A control connection to another agent that carries frames both ways.  conn NULL: closed
 * (freed at once, never kept). */
struct xlink {
    struct xlink *next;
    struct xrelay *x;
    struct mesh_conn *conn;
    char *address; /* outgoing: the peer as configured (routes learned by a find name it) */
    char peer[96]; /* for the log */
    int ready;
    struct xqueue pend;
};

/* Node `node` of job `job` of uid runs at the other end of link; link NULL: the agents are
 * asked where (names_find_job), the frames for it wait in pend, in order. */
struct xroute {
    struct xroute *next;
    uint64_t job;
    uint32_t node;
    uid_t uid;
    struct xlink *link;
    struct xqueue pend;
};

struct xrelay {
    struct agent *a;
    struct mesh *mesh;
    struct xlink *links;
    struct xroute *routes;
    unsigned nlinks, nroutes;
};

int xrelay_new(struct agent *a, struct mesh *m, struct xrelay **ret)
{
    struct xrelay *x = calloc(1, sizeof *x);
    if (!x) return -ENOMEM;
    x->a = a;
    x->mesh = m;
    *ret = x;
    return 0;
}

static void queue_init(struct xqueue *q)
{
    q->head = NULL;
    q->tail = &q->head;
    q->bytes = 0;
}

static void queue_free(struct xqueue *q)
{
    for (struct xpend *p = q->head, *n; p; p = n) {
        n = p->next;
        free(p);
    }
    queue_init(q);
}

/* The frame at the queue's end: 0, -ENOBUFS past XRELAY_PENDING_BYTES_MAX, -ENOMEM. */
static int queue_add(struct xqueue *qu, uint64_t to_job, uint32_t to_node, uint64_t from_job,
                     uint32_t from_node, uid_t uid, const void *hdr, size_t hlen, const void *p,
                     size_t len)
{
    if (qu->bytes + hlen + len > XRELAY_PENDING_BYTES_MAX) return -ENOBUFS;
    struct xpend *q = malloc(sizeof *q + hlen + len);
    if (!q) return -ENOMEM;
    q->next = NULL;
    q->to_job = to_job;
    q->to_node = to_node;
    q->from_job = from_job;
    q->from_node = from_node;
    q->uid = (uint32_t)uid;
    q->hlen = hlen;
    q->len = len;
    if (hlen) memcpy(q->data, hdr, hlen);
    if (len) memcpy(q->data + hlen, p, len);
    *qu->tail = q;
    qu->tail = &q->next;
    qu->bytes += hlen + len;
    return 0;
}

/* The queue's frames, taken out (the caller frees each). */
static struct xpend *queue_take(struct xqueue *q)
{
    struct xpend *h = q->head;
    queue_init(q);
    return h;
}

void xrelay_free(struct xrelay *x)
{
    if (!x) return;
    for (struct xroute *r = x->routes, *n; r; r = n) {
        n = r->next;
        queue_free(&r->pend);
        free(r);
    }
    for (struct xlink *l = x->links, *n; l; l = n) {
        n = l->next;
        queue_free(&l->pend);
        mesh_conn_close(l->conn);
        free(l->address);
        free(l);
    }
    free(x);
}

static void send_gone(struct job *to, uint64_t job, const char *reason)
{
    Tmpi__XGone g = TMPI__XGONE__INIT;
    g.job = job;
    g.reason = (char *)reason;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_XGONE;
    env.xgone = &g;
    jobhost_forward(to, &env);
}

/* Every job of uid here (but `except`) hears that job is gone. */
static void gone_to_user(struct agent *a, uid_t uid, uint64_t job, const struct job *except,
                         const char *why)
{
    for (struct job *o = a->jobs; o; o = o->next)
        if (o != except && o->uid == uid && o->host) send_gone(o, job, why);
}

static struct xroute *route_of(struct xrelay *x, uint64_t job, uint32_t node)
{
    for (struct xroute *r = x->routes; r; r = r->next)
        if (r->job == job && r->node == node) return r;
    return NULL;
}

/* A link's frames to the other agent: XGone for to_job there (0: every job of uid). */
static int link_gone(struct xlink *l, uint64_t job, uint64_t to_job, uid_t uid, const char *why)
{
    if (!l->conn || !l->ready) return -ENOTCONN;
    Tmpi__XGone g = TMPI__XGONE__INIT;
    g.job = job;
    g.reason = (char *)why;
    g.to_job = to_job;
    g.uid = (uint32_t)uid;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_XGONE;
    env.xgone = &g;
    return mesh_send(l->conn, &env);
}

static int link_frame(struct xlink *l, uint64_t to_job, uint32_t to_node, uint64_t from_job,
                      uint32_t from_node, uid_t uid, const void *hdr, size_t hlen, const void *p,
                      size_t len)
{
    if (!l->conn) return -ENOTCONN;
    if (!l->ready) /* the handshake is under way: the frame waits, in order */
        return queue_add(&l->pend, to_job, to_node, from_job, from_node, uid, hdr, hlen, p, len);
    Tmpi__XFrame f = TMPI__XFRAME__INIT;
    f.to_job = to_job;
    f.to_node = to_node;
    f.from_job = from_job;
    f.from_node = from_node;
    f.uid = (uint32_t)uid;
    f.hdr.data = (uint8_t *)hdr;
    f.hdr.len = hlen;
    f.payload.data = (uint8_t *)p;
    f.payload.len = len;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_XFRAME;
    env.xframe = &f;
    return mesh_send(l->conn, &env);
}

/* The link is gone (closed by the peer, failed, timed out): the jobs routed over it are
 * unreachable, and every job of their users here hears so; the link is freed. */
static void link_lost(struct xlink *l, const char *why)
{
    struct xrelay *x = l->x;
    for (struct xroute **pp = &x->routes, *r; (r = *pp);) {
        if (r->link != l) {
            pp = &r->next;
            continue;
        }
        char words[200];
        snprintf(words, sizeof words, "the agent of job %llu (%s) is unreachable: %s",
                 (unsigned long long)r->job, l->peer, why);
        gone_to_user(x->a, r->uid, r->job, NULL, words);
        *pp = r->next;
        x->nroutes--;
        queue_free(&r->pend);
        free(r);
    }
    for (struct xlink **pp = &x->links; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            x->nlinks--;
            break;
        }
    log_info("xrelay: link to %s closed: %s", l->peer, why);
    queue_free(&l->pend);
    free(l->address);
    free(l);
}

static void on_link_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env);

static void on_link_ready(void *arg, struct mesh_conn *c)
{
    struct xlink *l = arg;
    l->ready = 1;
    snprintf(l->peer, sizeof l->peer, "%s (%s)", l->address, mesh_conn_peer_name(c));
    for (struct xpend *q = queue_take(&l->pend), *n; q; q = n) {
        n = q->next;
        if (link_frame(l, q->to_job, q->to_node, q->from_job, q->from_node, q->uid, q->data,
                       q->hlen, q->data + q->hlen, q->len) < 0) {
            struct job *from = agent_job(l->x->a, q->from_job);
            if (from && from->host)
                send_gone(from, q->to_job, "the link to the job's agent failed");
        }
        free(q);
    }
}

static void on_link_drain(void *arg, struct mesh_conn *c) {}

static void on_link_close(void *arg, struct mesh_conn *c, int err, const char *why)
{
    struct xlink *l = arg;
    l->conn = NULL;
    link_lost(l, why && *why ? why : strerror(err < 0 ? -err : EPIPE));
}

static const struct mesh_ctl_ops link_ops = {
    .on_ready = on_link_ready,
    .on_frame = on_link_frame,
    .on_drain = on_link_drain,
    .on_close = on_link_close,
};

static struct xlink *link_alloc(struct xrelay *x)
{
    if (x->nlinks >= XRELAY_LINKS_MAX) return NULL;
    struct xlink *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->x = x;
    queue_init(&l->pend);
    l->next = x->links;
    x->links = l;
    x->nlinks++;
    return l;
}

/* The outgoing link to address, opened now if there is none. */
static struct xlink *link_to(struct xrelay *x, const char *address)
{
    for (struct xlink *l = x->links; l; l = l->next)
        if (l->conn && l->address && strcmp(l->address, address) == 0) return l;
    struct xlink *l = link_alloc(x);
    if (!l) return NULL;
    snprintf(l->peer, sizeof l->peer, "%s", address);
    if (!(l->address = strdup(address)) ||
        mesh_ctl_connect(x->mesh, address, &link_ops, l, &l->conn) < 0) {
        l->conn = NULL;
        link_lost(l, "cannot connect");
        return NULL;
    }
    return l;
}

/* The link's frames for a route that was being found, now that it has its link (those it
 * cannot take are answered XGone to their senders). */
static void route_flush(struct xrelay *x, struct xroute *r)
{
    for (struct xpend *q = queue_take(&r->pend), *n; q; q = n) {
        n = q->next;
        if (link_frame(r->link, q->to_job, q->to_node, q->from_job, q->from_node, q->uid, q->data,
                       q->hlen, q->data + q->hlen, q->len) < 0) {
            struct job *from = agent_job(x->a, q->from_job);
            if (from && from->host)
                send_gone(from, q->to_job, "the link to the job's agent failed");
        }
        free(q);
    }
}

/* A route to node `node` of job via l (NULL: being found).  NULL when XRELAY_ROUTES_MAX are
 * known or out of memory. */
static struct xroute *route_new(struct xrelay *x, uint64_t job, uint32_t node, uid_t uid,
                                struct xlink *l)
{
    if (x->nroutes >= XRELAY_ROUTES_MAX) return NULL;
    struct xroute *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->job = job;
    r->node = node;
    r->uid = uid;
    r->link = l;
    queue_init(&r->pend);
    r->next = x->routes;
    x->routes = r;
    x->nroutes++;
    return r;
}

/* Node `node` of job runs at l's other end (the first path found stays: frames for one node
 * of a job keep one path, in order; a route being found takes l and sends what waited).  0,
 * or -ENOSPC when XRELAY_ROUTES_MAX are known. */
static int route_add(struct xrelay *x, uint64_t job, uint32_t node, uid_t uid, struct xlink *l)
{
    struct xroute *r = route_of(x, job, node);
    if (r && !r->link && r->uid == uid) {
        r->link = l;
        route_flush(x, r);
    }
    if (r) return 0;
    return route_new(x, job, node, uid, l) ? 0 : -ENOSPC;
}

static void route_free(struct xrelay *x, struct xroute **pp)
{
    struct xroute *r = *pp;
    *pp = r->next;
    x->nroutes--;
    queue_free(&r->pend);
    free(r);
}

/* Every route to a node of job goes (it ended, or cannot be reached). */
static void route_drop(struct xrelay *x, uint64_t job)
{
    for (struct xroute **pp = &x->routes; *pp;)
        if ((*pp)->job == job)
            route_free(x, pp);
        else
            pp = &(*pp)->next;
}

/* The address of node `node` of job j (a part of a job across nodes knows them all from its
 * JobAssign, as its data links dial them): 0, or -ENOENT. */
static int node_address(const struct job *j, uint32_t node, char *buf, size_t len)
{
    if (!j->assign || node >= j->assign->n_nodes) return -ENOENT;
    const Tmpi__NodePlacement *np = j->assign->nodes[node];
    const char *h = np->host ? np->host : "";
    snprintf(buf, len, strchr(h, ':') ? "[%s]:%u" : "%s:%u", h, np->port);
    return 0;
}

void xrelay_route(struct xrelay *x, uint64_t job, uint32_t node, uid_t uid, const char *address)
{
    if (!x || !job) return;
    struct job *here = agent_job(x->a, job);
    if (here && (uint32_t)here->node == node) return;
    struct xroute *r = route_of(x, job, node);
    if (r && r->link) return;
    struct xlink *l = link_to(x, address);
    if (!l || route_add(x, job, node, uid, l) < 0)
        log_notice("xrelay: no route to job %llu node %u at %s (%u links, %u routes)",
                   (unsigned long long)job, (unsigned)node, address, x->nlinks, x->nroutes);
}

/* A find of a node asked for by xrelay_frame is over (names.h). */
static void route_found(void *arg, uint64_t job, uint32_t node, uid_t uid, const char *address,
                        int err)
{
    struct xrelay *x = arg;
    struct xroute **pp = &x->routes;
    while (*pp && !((*pp)->job == job && (*pp)->node == node))
        pp = &(*pp)->next;
    struct xroute *r = *pp;
    if (!r || r->link || r->uid != uid) return; /* gone meanwhile, or found another way */
    struct xlink *l = address ? link_to(x, address) : NULL;
    if (l) {
        r->link = l;
        route_flush(x, r);
        return;
    }
    char why[160];
    snprintf(why, sizeof why, "%s node %u of job %llu",
             address          ? "cannot link to the agent of"
             : err == -EACCES ? "no agent runs for this user"
                              : "no agent runs (none of the configured peers answered for)",
             (unsigned)node, (unsigned long long)job);
    for (struct xpend *q = queue_take(&r->pend), *n; q; q = n) {
        n = q->next;
        struct job *from = agent_job(x->a, q->from_job);
        if (from && from->host) send_gone(from, job, why);
        free(q);
    }
    route_free(x, pp);
}

/* Refuses f of job `from` for another user's job (logged). */
static void refuse_other_user(struct job *from, uint64_t to_job, uid_t uid)
{
    log_job(LOG_WARNING, from->id, from->owner,
            "frame for job %llu (uid %u) refused: it is another user's", (unsigned long long)to_job,
            (unsigned)uid);
    send_gone(from, to_job, "the job is another user's");
}

/* The route for f of job `from`, made now when there is none: to the node's address when a
 * part of its job runs here, else asked of the peers.  NULL when job `from` heard XGone. */
static struct xroute *route_for(struct agent *a, struct job *from, struct job *to,
                                const Tmpi__XFrame *f)
{
    struct xrelay *x = a->xrelay;
    struct xroute *r = route_of(x, f->to_job, f->to_node);
    if (r) return r;
    char addr[300];
    if (to && to->uid != from->uid) {
        refuse_other_user(from, f->to_job, to->uid);
        return NULL;
    }
    if (to && node_address(to, f->to_node, addr, sizeof addr) == 0) {
        struct xlink *l = link_to(x, addr);
        if (l && (r = route_new(x, f->to_job, f->to_node, from->uid, l))) return r;
        send_gone(from, f->to_job,
                  l ? "this agent knows XRELAY_ROUTES_MAX routes to other jobs already"
                    : "cannot link to the agent of the job's node");
        return NULL;
    }
    if (!(r = route_new(x, f->to_job, f->to_node, from->uid, NULL))) {
        send_gone(from, f->to_job,
                  "this agent knows XRELAY_ROUTES_MAX routes to other jobs already");
        return NULL;
    }
    int rc = a->names ? names_find_job(a->names, f->to_job, f->to_node, from->uid, from->id,
                                       route_found, x)
                      : -ENOENT;
    if (rc < 0) {
        route_drop(x, f->to_job);
        send_gone(from, f->to_job,
                  rc == -EAGAIN ? "the agent asks its peers NAMES_QUERIES_MAX questions already"
                                : "no such job on this agent, nor one this agent knows a path to");
        return NULL;
    }
    return r;
}

void xrelay_frame(struct agent *a, struct job *from, const Tmpi__XFrame *f)
{
    struct job *to = agent_job(a, f->to_job);
    if (to == from) {
        send_gone(from, f->to_job, "a job cannot send to itself");
        return;
    }
    if (!to || !to->host || (uint32_t)to->node != f->to_node) {
        if (!a->xrelay) {
            send_gone(from, f->to_job, "no such job on this agent");
            return;
        }
        struct xroute *r = route_for(a, from, to && to->host ? to : NULL, f);
        if (!r) return;
        if (r->uid != from->uid) {
            refuse_other_user(from, f->to_job, r->uid);
            return;
        }
        int rc =
            r->link
                ? link_frame(r->link, f->to_job, f->to_node, from->id, (uint32_t)from->node,
                             from->uid, f->hdr.data, f->hdr.len, f->payload.data, f->payload.len)
                : queue_add(&r->pend, f->to_job, f->to_node, from->id, (uint32_t)from->node,
                            from->uid, f->hdr.data, f->hdr.len, f->payload.data, f->payload.len);
        if (rc < 0)
            send_gone(from, f->to_job,
                      rc == -ENOBUFS ? "the path to the job's agent is not up yet and holds "
                                       "XRELAY_PENDING_BYTES_MAX bytes already"
                                     : "the link to the job's agent failed");
        return;
    }
    if (to->uid != from->uid) {
        /* the owner check of the port (names.c) refuses a connect first: a frame that comes
         * here all the same is the host's own doing, and never carried */
        refuse_other_user(from, to->id, to->uid);
        return;
    }
    Tmpi__XFrame out = *f;
    out.from_job = from->id;
    out.from_node = (uint32_t)from->node;
    out.uid = 0;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_XFRAME;
    env.xframe = &out;
    jobhost_forward(to, &env);
}

/* An XFrame from the agent at l's other end, for a job here. */
static void link_xframe(struct xlink *l, const Tmpi__XFrame *f)
{
    struct xrelay *x = l->x;
    if (f->hdr.len > MSG_XFRAME_HDR_MAX || f->payload.len > MSG_XFRAME_PAYLOAD_MAX ||
        !f->from_job) {
        log_warning("xrelay: malformed frame from %s (%zu header bytes, %zu payload bytes); "
                    "dropped",
                    l->peer, f->hdr.len, f->payload.len);
        return;
    }
    struct job *to = agent_job(x->a, f->to_job);
    if (!to || !to->host || (uint32_t)to->node != f->to_node) {
        char why[120];
        snprintf(why, sizeof why, "no such job (node %u) on the agent it was sent to",
                 (unsigned)f->to_node);
        (void)link_gone(l, f->to_job, f->from_job, (uid_t)f->uid, why);
        return;
    }
    if (to->uid != (uid_t)f->uid) {
        log_job(LOG_WARNING, to->id, to->owner,
                "frame from job %llu (uid %u) at %s refused: the job is another user's",
                (unsigned long long)f->from_job, (unsigned)f->uid, l->peer);
        (void)link_gone(l, f->to_job, f->from_job, (uid_t)f->uid, "the job is another user's");
        return;
    }
    /* the sender's node of its job runs at the other end: the answers go back the same way */
    if (route_add(x, f->from_job, f->from_node, (uid_t)f->uid, l) < 0) {
        (void)link_gone(l, f->to_job, f->from_job, (uid_t)f->uid,
                        "the receiving agent knows XRELAY_ROUTES_MAX other jobs already");
        return;
    }
    Tmpi__XFrame out = *f;
    out.uid = 0;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_XFRAME;
    env.xframe = &out;
    jobhost_forward(to, &env);
}

static void link_xgone(struct xlink *l, const Tmpi__XGone *g)
{
    struct xrelay *x = l->x;
    route_drop(x, g->job);
    const char *why = g->reason && *g->reason ? g->reason : "the job is gone";
    if (!g->to_job) {
        gone_to_user(x->a, (uid_t)g->uid, g->job, NULL, why);
        return;
    }
    struct job *to = agent_job(x->a, g->to_job);
    if (to && to->host && to->uid == (uid_t)g->uid) send_gone(to, g->job, why);
}

static void on_link_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    struct xlink *l = arg;
    if (env->msg_case == TMPI__ENVELOPE__MSG_XFRAME)
        link_xframe(l, env->xframe);
    else if (env->msg_case == TMPI__ENVELOPE__MSG_XGONE)
        link_xgone(l, env->xgone);
    else
        log_warning("xrelay: unexpected '%d' on the link from %s; ignored", (int)env->msg_case,
                    l->peer);
}

void xrelay_accept(struct xrelay *x, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    struct xlink *l = x ? link_alloc(x) : NULL;
    if (!l) {
        log_warning("xrelay: link from %s refused (%u links)", mesh_conn_peer_name(c),
                    x ? x->nlinks : 0);
        mesh_conn_close(c);
        return;
    }
    l->conn = c;
    l->ready = 1;
    snprintf(l->peer, sizeof l->peer, "%s", mesh_conn_peer_name(c));
    mesh_conn_set_ops(c, &link_ops, l);
    on_link_frame(l, c, env);
}

void xrelay_job_gone(struct agent *a, const struct job *j)
{
    char why[96];
    snprintf(why, sizeof why, "job %llu ended", (unsigned long long)j->id);
    gone_to_user(a, j->uid, j->id, j, why);
    if (!a->xrelay) return;
    route_drop(a->xrelay, j->id); /* routes to its other nodes */
    for (struct xlink *l = a->xrelay->links; l; l = l->next)
        (void)link_gone(l, j->id, 0, j->uid, why);
}
