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

/* A frame waiting for its link's handshake (one allocation: hdr then payload). */
struct xpend {
    struct xpend *next;
    uint64_t to_job, from_job;
    uint32_t uid;
    size_t hlen, len;
    uint8_t data[];
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
    struct xpend *pend, **pend_tail;
    size_t pend_bytes;
};

/* Job `job` of uid runs at the other end of link. */
struct xroute {
    struct xroute *next;
    uint64_t job;
    uid_t uid;
    struct xlink *link;
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

static void pend_free(struct xlink *l)
{
    for (struct xpend *p = l->pend, *n; p; p = n) {
        n = p->next;
        free(p);
    }
    l->pend = NULL;
    l->pend_tail = &l->pend;
    l->pend_bytes = 0;
}

void xrelay_free(struct xrelay *x)
{
    if (!x) return;
    for (struct xroute *r = x->routes, *n; r; r = n) {
        n = r->next;
        free(r);
    }
    for (struct xlink *l = x->links, *n; l; l = n) {
        n = l->next;
        pend_free(l);
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

static struct xroute *route_of(struct xrelay *x, uint64_t job)
{
    for (struct xroute *r = x->routes; r; r = r->next)
        if (r->job == job) return r;
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

static int link_frame(struct xlink *l, uint64_t to_job, uint64_t from_job, uid_t uid,
                      const void *hdr, size_t hlen, const void *p, size_t len)
{
    if (!l->conn) return -ENOTCONN;
    if (!l->ready) { /* the handshake is under way: the frame waits, in order */
        if (l->pend_bytes + hlen + len > XRELAY_PENDING_BYTES_MAX) return -ENOBUFS;
        struct xpend *q = malloc(sizeof *q + hlen + len);
        if (!q) return -ENOMEM;
        q->next = NULL;
        q->to_job = to_job;
        q->from_job = from_job;
        q->uid = (uint32_t)uid;
        q->hlen = hlen;
        q->len = len;
        if (hlen) memcpy(q->data, hdr, hlen);
        if (len) memcpy(q->data + hlen, p, len);
        *l->pend_tail = q;
        l->pend_tail = &q->next;
        l->pend_bytes += hlen + len;
        return 0;
    }
    Tmpi__XFrame f = TMPI__XFRAME__INIT;
    f.to_job = to_job;
    f.from_job = from_job;
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
        free(r);
    }
    for (struct xlink **pp = &x->links; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            x->nlinks--;
            break;
        }
    log_info("xrelay: link to %s closed: %s", l->peer, why);
    pend_free(l);
    free(l->address);
    free(l);
}

static void on_link_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env);

static void on_link_ready(void *arg, struct mesh_conn *c)
{
    struct xlink *l = arg;
    l->ready = 1;
    snprintf(l->peer, sizeof l->peer, "%s (%s)", l->address, mesh_conn_peer_name(c));
    struct xpend *q = l->pend;
    l->pend = NULL;
    l->pend_tail = &l->pend;
    l->pend_bytes = 0;
    for (struct xpend *n; q; q = n) {
        n = q->next;
        if (link_frame(l, q->to_job, q->from_job, q->uid, q->data, q->hlen, q->data + q->hlen,
                       q->len) < 0) {
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
    l->pend_tail = &l->pend;
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

/* A route to job via l (the first one found stays: frames of one job keep one path, in
 * order).  0, or -ENOSPC when XRELAY_ROUTES_MAX are known. */
static int route_add(struct xrelay *x, uint64_t job, uid_t uid, struct xlink *l)
{
    struct xroute *r = route_of(x, job);
    if (r) return 0;
    if (x->nroutes >= XRELAY_ROUTES_MAX) return -ENOSPC;
    if (!(r = calloc(1, sizeof *r))) return -ENOMEM;
    r->job = job;
    r->uid = uid;
    r->link = l;
    r->next = x->routes;
    x->routes = r;
    x->nroutes++;
    return 0;
}

static void route_drop(struct xrelay *x, uint64_t job)
{
    for (struct xroute **pp = &x->routes, *r; (r = *pp); pp = &r->next)
        if (r->job == job) {
            *pp = r->next;
            x->nroutes--;
            free(r);
            return;
        }
}

void xrelay_route(struct xrelay *x, uint64_t job, uid_t uid, const char *address)
{
    if (!x || !job || agent_job(x->a, job)) return;
    struct xroute *r = route_of(x, job);
    if (r) return;
    struct xlink *l = link_to(x, address);
    if (!l || route_add(x, job, uid, l) < 0)
        log_notice("xrelay: no route to job %llu at %s (%u links, %u routes)",
                   (unsigned long long)job, address, x->nlinks, x->nroutes);
}

void xrelay_frame(struct agent *a, struct job *from, const Tmpi__XFrame *f)
{
    struct job *to = agent_job(a, f->to_job);
    if (to == from) {
        send_gone(from, f->to_job, "a job cannot send to itself");
        return;
    }
    if (!to || !to->host) {
        struct xroute *r = a->xrelay ? route_of(a->xrelay, f->to_job) : NULL;
        if (r && r->uid != from->uid) {
            log_job(LOG_WARNING, from->id, from->owner,
                    "frame for job %llu (uid %u) refused: it is another user's",
                    (unsigned long long)f->to_job, (unsigned)r->uid);
            send_gone(from, f->to_job, "the job is another user's");
            return;
        }
        int rc = r ? link_frame(r->link, f->to_job, from->id, from->uid, f->hdr.data, f->hdr.len,
                                f->payload.data, f->payload.len)
                   : -ENOENT;
        if (rc == -ENOENT)
            send_gone(from, f->to_job,
                      "no such job on this agent, nor one this agent knows a "
                      "path to");
        else if (rc < 0)
            send_gone(from, f->to_job,
                      rc == -ENOBUFS ? "the link to the job's agent is not up yet and holds "
                                       "XRELAY_PENDING_BYTES_MAX bytes already"
                                     : "the link to the job's agent failed");
        return;
    }
    if (to->uid != from->uid) {
        /* the owner check of the port (names.c) refuses a connect first: a frame that comes
         * here all the same is the host's own doing, and never carried */
        log_job(LOG_WARNING, from->id, from->owner,
                "frame for job %llu (uid %u) refused: it is another user's",
                (unsigned long long)to->id, (unsigned)to->uid);
        send_gone(from, f->to_job, "the job is another user's");
        return;
    }
    Tmpi__XFrame out = *f;
    out.from_job = from->id;
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
    if (!to || !to->host) {
        (void)link_gone(l, f->to_job, f->from_job, (uid_t)f->uid,
                        "no such job on the agent it was sent to");
        return;
    }
    if (to->uid != (uid_t)f->uid) {
        log_job(LOG_WARNING, to->id, to->owner,
                "frame from job %llu (uid %u) at %s refused: the job is another user's",
                (unsigned long long)f->from_job, (unsigned)f->uid, l->peer);
        (void)link_gone(l, f->to_job, f->from_job, (uid_t)f->uid, "the job is another user's");
        return;
    }
    /* the sender's job runs at the other end: the answers go back the same way */
    if (route_add(x, f->from_job, (uid_t)f->uid, l) < 0) {
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
    struct xroute *r = route_of(x, g->job);
    if (r && r->link == l) route_drop(x, g->job);
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
    for (struct xlink *l = a->xrelay->links; l; l = l->next)
        (void)link_gone(l, j->id, 0, j->uid, why);
}
