/* port.c — ports, names and joins between rank groups of one job (port.h). */
#include "port.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "ctx.h"
#include "dyn_net.h"
#include "dyn_tab.h"
#include "errh.h"
#include "info.h"
#include "intercomm.h"
#include "mstate.h"
#include "net_p2p.h"
#include "spawn.h"
#include "wait.h"
#include "wake_timer.h"
#include "xconn.h"
#include "xjob.h"

/* What a root tells its communicator after meeting the other side: the other group's job
 * (0: this one; two halves of the id), then its world ranks and their nodes (rn each). */
struct conn_hdr {
    int32_t err, rn, ctx[3];
    uint32_t job[2];
};

/* Whether name looks like a port of another job (for the error's words). */
static int other_job(struct tm_job *j, const char *name)
{
    unsigned long long id;
    int n;
    return sscanf(name, "tmpi-port:%llu:%d", &id, &n) == 2 && id != (unsigned long long)j->id;
}

TM_API int PMPI_Open_port(MPI_Info info, char *port_name)
{
    const char *fn = "MPI_Open_port";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!port_name) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "port_name is NULL");
    struct tm_job *j = me->job;
    struct tm_port *p = calloc(1, sizeof *p);
    if (!p) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    /* the node in the name: a connect from another node of the job goes there (dyn_tab.h) */
    snprintf(p->name, sizeof p->name, "tmpi-port:%" PRIu64 ":%d:%d", j->id,
             atomic_fetch_add(&j->next_port, 1), j->net ? j->net->node : 0);
    /* registered with the agent, so that a connect from another job finds the port and its
     * owner (an agent without port operations answers -EINVAL: the port serves this job) */
    int rc = j->svc && j->svc->name_op
                 ? j->svc->name_op(TMPI_NAME_PORT_OPEN, p->name, NULL, NULL, 0)
                 : 0;
    if (rc == -ENOSPC || rc == -ENOMEM) {
        free(p);
        return tm_err(me, MPI_COMM_WORLD, rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER, fn,
                      "the agent holds as many names and ports of this user as it may (%s)",
                      strerror(-rc));
    }
    pthread_mutex_lock(&j->spawn_lock);
    p->next = j->ports;
    j->ports = p;
    j->spawn_free = tm_dynproc_free;
    pthread_mutex_unlock(&j->spawn_lock);
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s", p->name);
    return MPI_SUCCESS;
}
TM_ALIAS(Open_port)

TM_API int PMPI_Close_port(const char *port_name)
{
    const char *fn = "MPI_Close_port";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!port_name) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "port_name is NULL");
    struct tm_job *j = me->job;
    pthread_mutex_lock(&j->spawn_lock);
    struct tm_port **pp = &j->ports;
    while (*pp && strcmp((*pp)->name, port_name) != 0)
        pp = &(*pp)->next;
    struct tm_port *p = *pp;
    /* one that a root still waits on stays (the program is erroneous; nothing is freed
     * under it) */
    if (p && !p->acceptor && !atomic_load(&p->head)) *pp = p->next;
    pthread_mutex_unlock(&j->spawn_lock);
    if (!p) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_PORT, fn, "no open port %s", port_name);
    if (j->svc && j->svc->name_op)
        (void)j->svc->name_op(TMPI_NAME_PORT_CLOSE, port_name, NULL, NULL, 0);
    if (*pp != p) free(p);
    return MPI_SUCCESS;
}
TM_ALIAS(Close_port)

static int tm_port_other_job(struct tm_rank *me, const char *port_name, char *why, size_t len);

/* A connect to a port of this user's other job (found by the agents): over the path between
 * jobs (comm/xconn.h).  0 with h's ids and *rmap (its ranks as foreign ranks), or an MPI
 * error class with why. */
static int connect_other_job(struct tm_rank *me, const char *port_name, const int32_t *lmap, int n,
                             int64_t ms, struct conn_hdr *h, int32_t **rmap, char *why, size_t len)
{
    int rc = tm_port_other_job(me, port_name, why, len);
    if (rc) return rc;
    unsigned long long id = 0;
    sscanf(port_name, "tmpi-port:%llu:", &id);
    int an = 0;
    char agent_why[96] = "";
    rc = tm_xconn_connect(me, id, port_name, lmap, n, ms, h->ctx, rmap, &an, agent_why,
                          sizeof agent_why);
    if (rc == 0) {
        h->rn = an;
        return MPI_SUCCESS;
    }
    if (rc > 0) return snprintf(why, len, "the accepting side failed"), rc;
    if (rc == -ETIMEDOUT)
        snprintf(why, len, "nobody accepted on port %s within the timeout (%lld s)", port_name,
                 (long long)((ms + 999) / 1000));
    else if (rc == -EBUSY)
        snprintf(why, len, "port %s: %d connects wait on the ports of its job already", port_name,
                 tm_connect_pending_max());
    else if (rc == -ENOTSUP)
        snprintf(why, len, "port %s is another job's: this agent carries no frames between jobs",
                 port_name);
    else if (rc == -EXDEV)
        snprintf(why, len,
                 "port %s: a communicator with ranks of two jobs connects to no third job, "
                 "nor accepts its connect",
                 port_name);
    else if (rc == -EPIPE)
        snprintf(why, len, "port %s: its job cannot be reached: %s", port_name,
                 agent_why[0] ? agent_why : "it ended");
    else if (rc == -ENOSPC)
        snprintf(why, len, "port %s: this job is connected to %d other jobs already", port_name,
                 TM_XJOB_PEERS_MAX);
    else
        snprintf(why, len, "%s %s%s%s", rc == -ENOENT ? "no open port" : "cannot connect to port",
                 port_name, rc == -ENOENT ? "" : ": ", rc == -ENOENT ? "" : strerror(-rc));
    return MPI_ERR_PORT;
}

/* A connect to a port of another job: the agents find the port and check its owner (the
 * refusal of another user's is logged there, naming both users and jobs).  0 when it is
 * this user's, else MPI_ERR_PORT with why. */
static int tm_port_other_job(struct tm_rank *me, const char *port_name, char *why, size_t len)
{
    const struct tmpi_svc *svc = me->job->svc;
    char words[MPI_MAX_PORT_NAME] = "";
    int rc = svc && svc->name_op
                 ? svc->name_op(TMPI_NAME_PORT_FIND, port_name, NULL, words, sizeof words)
                 : -ENOTSUP;
    if (rc == -EACCES)
        snprintf(why, len, "port %s is another user's (%s): refused", port_name,
                 words[0] ? words : "?");
    else if (rc == -ENOENT)
        snprintf(why, len, "no open port %s (no job of this user has it open)", port_name);
    else if (rc == 0)
        return 0;
    else
        snprintf(why, len, "cannot find port %s of another job: %s", port_name, strerror(-rc));
    return MPI_ERR_PORT;
}

static int32_t *members(const struct tm_comm *c)
{
    int32_t *v = malloc(sizeof *v * ((size_t)c->size + 1));
    if (v)
        for (int i = 0; i < c->size; i++)
            v[i] = tm_comm_world_rank(c, i);
    return v;
}

static int queued(void *arg)
{
    struct tm_port *p = arg;
    return atomic_load(&p->head) != NULL;
}

static int answered(void *arg)
{
    struct tm_conn_req *r = arg;
    return atomic_load(&r->done);
}

/* The accepting root: waits for a connect on port_name, answers it.  *rmap (malloc'd) and
 * h; an MPI error class with why. */
static int root_accept(struct tm_rank *me, const struct tm_comm *c, const char *port_name,
                       struct conn_hdr *h, int32_t **rmap, char *why, size_t len)
{
    struct tm_job *j = me->job;
    pthread_mutex_lock(&j->spawn_lock);
    struct tm_port *p = tm_port_find(j, port_name);
    int busy = p && p->acceptor;
    if (p && !busy) p->acceptor = me;
    pthread_mutex_unlock(&j->spawn_lock);
    if (!p || busy) {
        snprintf(why, len, "%s %s", busy ? "another accept waits on port" : "no open port",
                 port_name);
        return MPI_ERR_PORT;
    }
    tm_wait(me, queued, p);
    pthread_mutex_lock(&j->spawn_lock);
    struct tm_conn_req *r = atomic_load(&p->head);
    atomic_store(&p->head, r->next);
    if (!r->next) p->tail = NULL;
    p->acceptor = NULL;
    pthread_mutex_unlock(&j->spawn_lock);
    int32_t *lmap = members(c), *copy = malloc(sizeof *copy * (size_t)r->cn);
    int reuse = 0, err = MPI_SUCCESS;
    if (!lmap || !copy || tm_ctx_for(me, lmap, c->size, r->cmap, r->cn, 3, h->ctx, &reuse) < 0) {
        snprintf(why, len, "out of memory or context ids");
        err = MPI_ERR_NO_MEM;
        free(lmap);
        free(copy);
        copy = lmap = NULL;
    } else {
        memcpy(copy, r->cmap, sizeof *copy * (size_t)r->cn);
        h->rn = r->cn;
    }
    r->err = err;
    memcpy(r->ctx, h->ctx, sizeof r->ctx);
    r->amap = lmap;
    r->an = c->size;
    *rmap = copy;
    if (r->remote) { /* a root on another node: the answer goes back as a frame */
        tm_dyn_connect_answer(j, r);
        return err;
    }
    struct tm_rank *w = r->waiter;
    atomic_store(&r->done, 1); /* r is the connector's from here on */
    tm_wake(&w->waker);
    return err;
}

/* A local connect waiting: answered, or its deadline passed. */
struct conn_wait {
    struct tm_conn_req *r;
    struct tm_wake_timer *t;
};

static int answered_or_late(void *arg)
{
    struct conn_wait *cw = arg;
    return answered(cw->r) || tm_wake_timer_expired(cw->t);
}

/* How long a connect waits for its accept: MPI_Comm_connect's info key "timeout" (seconds, as
 * MPICH reads it), else TMPI_CONNECT_TIMEOUT, else TM_CONNECT_TIMEOUT_S.  0 with *ret_ms, or
 * MPI_ERR_INFO_VALUE with why for a value that is no number of seconds. */
static int connect_timeout(struct tm_rank *me, MPI_Info info, int64_t *ret_ms, char *why,
                           size_t len)
{
    const char *v = NULL, *from = "info key timeout";
    if (info != MPI_INFO_NULL) {
        struct tm_info *in = tm_info_get(me, info);
        if (!in) return snprintf(why, len, "invalid info %d", info), MPI_ERR_INFO;
        v = tm_info_lookup(in, "timeout");
    }
    if (!v) {
        v = getenv("TMPI_CONNECT_TIMEOUT");
        from = "TMPI_CONNECT_TIMEOUT";
    }
    if (!v || !*v) {
        *ret_ms = (int64_t)TM_CONNECT_TIMEOUT_S * 1000;
        return 0;
    }
    char *end;
    double sec = strtod(v, &end);
    while (*end == ' ')
        end++;
    if (end == v || *end || !(sec > 0) || sec > 1e9) {
        snprintf(why, len, "%s is '%s', not a positive number of seconds", from, v);
        return MPI_ERR_INFO_VALUE;
    }
    *ret_ms = (int64_t)(sec * 1000.0 + 0.5);
    if (*ret_ms < 1) *ret_ms = 1;
    return 0;
}

static int root_connect(struct tm_rank *me, const struct tm_comm *c, const char *port_name,
                        MPI_Info info, struct conn_hdr *h, int32_t **rmap, char *why, size_t len)
{
    int64_t ms;
    int terr = connect_timeout(me, info, &ms, why, len);
    if (terr) return terr;
    if (tm_connect_pending_max() < 0) {
        snprintf(why, len, "TMPI_CONNECT_PENDING_MAX is '%s', not a number from 0 to %d",
                 getenv("TMPI_CONNECT_PENDING_MAX"), TM_CONNECT_PENDING_LIMIT);
        return MPI_ERR_OTHER;
    }
    struct tm_job *j = me->job;
    int32_t *lmap = members(c);
    if (!lmap) return snprintf(why, len, "out of memory"), MPI_ERR_NO_MEM;
    long long secs = (long long)((ms + 999) / 1000);
    if (other_job(j, port_name)) { /* its node is the other job's: the agents find it */
        int rc = connect_other_job(me, port_name, lmap, c->size, ms, h, rmap, why, len);
        free(lmap);
        return rc;
    }
    int node = tm_port_node(j, port_name);
    if (j->net && node >= 0 && node != j->net->node) {
        if (node >= j->net->nnodes) {
            free(lmap);
            snprintf(why, len, "no open port %s (no node %d in the job)", port_name, node);
            return MPI_ERR_PORT;
        }
        int an = 0, rc = tm_dyn_connect(me, node, port_name, lmap, c->size, ms, h->ctx, rmap, &an);
        free(lmap);
        if (rc == 0) {
            h->rn = an;
            return MPI_SUCCESS;
        }
        if (rc > 0) return snprintf(why, len, "the accepting side failed"), rc;
        if (rc == -ETIMEDOUT)
            snprintf(why, len, "nobody accepted on port %s within the timeout (%lld s)", port_name,
                     secs);
        else if (rc == -EBUSY)
            snprintf(why, len, "port %s: %d connects wait on the job's ports of its node already",
                     port_name, tm_connect_pending_max());
        else
            snprintf(why, len, "%s %s%s%s",
                     rc == -ENOENT ? "no open port" : "cannot connect to port", port_name,
                     rc == -ENOENT ? "" : ": ", rc == -ENOENT ? "" : strerror(-rc));
        return MPI_ERR_PORT;
    }
    struct tm_conn_req r = {.waiter = me, .cmap = lmap, .cn = c->size};
    atomic_init(&r.done, 0);
    int max = tm_connect_pending_max(), full = 0;
    pthread_mutex_lock(&j->spawn_lock);
    struct tm_port *p = tm_port_find(j, port_name);
    if (p && !(full = tm_port_pending(j) >= max)) tm_port_enqueue(p, &r);
    pthread_mutex_unlock(&j->spawn_lock);
    if (!p || full) {
        free(lmap);
        if (full)
            snprintf(why, len,
                     "port %s: %d connects wait on the job's ports of this node already "
                     "(TMPI_CONNECT_PENDING_MAX)",
                     port_name, max);
        else
            snprintf(why, len, "no open port %s", port_name);
        return MPI_ERR_PORT;
    }
    struct tm_wake_timer *t = tm_wake_timer_start(me, ms);
    if (t) {
        struct conn_wait cw = {&r, t};
        tm_wait(me, answered_or_late, &cw);
        tm_wake_timer_stop(t);
        if (!answered(&r)) {
            pthread_mutex_lock(&j->spawn_lock);
            int dropped = tm_port_dequeue(p, &r);
            pthread_mutex_unlock(&j->spawn_lock);
            if (dropped) {
                free(lmap);
                snprintf(why, len, "nobody accepted on port %s within the timeout (%lld s)",
                         port_name, secs);
                return MPI_ERR_PORT;
            }
        }
    }
    /* answered, or an acceptor took the request just as the time ran out: its answer comes */
    tm_wait(me, answered, &r);
    free(lmap);
    if (r.err) {
        snprintf(why, len, "the accepting side failed");
        return r.err;
    }
    memcpy(h->ctx, r.ctx, sizeof r.ctx);
    h->rn = r.an;
    *rmap = r.amap;
    return MPI_SUCCESS;
}

static int conn_common(const char *fn, int accept, const char *port_name, MPI_Info info, int root,
                       MPI_Comm comm, MPI_Comm *newcomm)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    struct tm_commref *cr = tm_comm_get_user(&me->comms, comm);
    if (!cr) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);
    if (cr->c->inter) return tm_err(me, comm, MPI_ERR_COMM, fn, "comm is an inter-communicator");
    if (root < 0 || root >= cr->c->size)
        return tm_err(me, comm, MPI_ERR_ROOT, fn, "invalid root %d", root);
    if (!newcomm) return tm_err(me, comm, MPI_ERR_ARG, fn, "newcomm is NULL");
    struct conn_hdr h = {0, 0, {0, 0, 0}, {0, 0}};
    int32_t *rmap = NULL;
    char why[256] = "";
    if (cr->rank == root) {
        if (!port_name) {
            snprintf(why, sizeof why, "port_name is NULL");
            h.err = MPI_ERR_ARG;
        } else if (tm_xjob_unexpected_max() < 0) {
            snprintf(why, sizeof why,
                     "TMPI_XJOB_UNEXPECTED_MAX is '%s', not a number of bytes from 0 to %llu",
                     getenv("TMPI_XJOB_UNEXPECTED_MAX"),
                     (unsigned long long)TM_XJOB_UNEXPECTED_LIMIT);
            h.err = MPI_ERR_OTHER;
        } else {
            /* what the root waits in, for tmpictl ranks and the deadlock report */
            int began = tm_mst_begin(me, fn, cr, comm, TMPI_PEER_NONE, TMPI_TAG_NONE);
            h.err = accept ? root_accept(me, cr->c, port_name, &h, &rmap, why, sizeof why)
                           : root_connect(me, cr->c, port_name, info, &h, &rmap, why, sizeof why);
            tm_mst_end(me, began);
        }
    }
    /* the other group as its job's world ranks and their nodes: every host of this job names
     * them by a slot of its own (net/xjob.h) and sends to each rank's node */
    int32_t *wire = NULL;
    if (cr->rank == root && !h.err) {
        uint64_t other = 0;
        if (!(wire = malloc(sizeof *wire * 2 * ((size_t)h.rn + 1)))) h.err = MPI_ERR_NO_MEM;
        for (int i = 0; wire && i < h.rn; i++) {
            int x = tm_xrank(rmap[i]);
            if (x) other = tm_xjob_job(me->job, TM_XRANK_SLOT(rmap[i]));
            wire[i] = x ? TM_XRANK_RANK(rmap[i]) : rmap[i];
            wire[h.rn + i] = x ? tm_xjob_node(me->job, rmap[i]) : 0;
        }
        h.job[0] = (uint32_t)other;
        h.job[1] = (uint32_t)(other >> 32);
    }
    int e = PMPI_Bcast(&h, (int)(sizeof h / sizeof(int32_t)), MPI_INT, root, comm);
    if (e == MPI_SUCCESS && !h.err && cr->rank != root &&
        (!(rmap = malloc(sizeof *rmap * ((size_t)h.rn + 1))) ||
         !(wire = malloc(sizeof *wire * 2 * ((size_t)h.rn + 1)))))
        e = MPI_ERR_NO_MEM;
    if (e == MPI_SUCCESS && !h.err) e = PMPI_Bcast(wire, 2 * h.rn, MPI_INT, root, comm);
    if (e == MPI_SUCCESS && !h.err && cr->rank != root) {
        uint64_t other = (uint64_t)h.job[0] | (uint64_t)h.job[1] << 32;
        int slot = other ? tm_xjob_slot(me->job, other, 1) : 0;
        if (slot < 0 || (other && tm_xjob_set_nodes(me->job, slot, wire, wire + h.rn, h.rn) < 0)) {
            snprintf(why, sizeof why, "this job is connected to %d other jobs already",
                     TM_XJOB_PEERS_MAX);
            h.err = MPI_ERR_OTHER;
        }
        for (int i = 0; !h.err && i < h.rn; i++)
            rmap[i] = other ? TM_XRANK(slot, wire[i]) : wire[i];
    }
    free(wire);
    if (e != MPI_SUCCESS || h.err) {
        free(rmap);
        *newcomm = MPI_COMM_NULL;
        if (e != MPI_SUCCESS) return e;
        return tm_err(me, comm, h.err, fn, "%s",
                      cr->rank == root || why[0] ? why : "the root could not make the connection");
    }
    int32_t *lmap = members(cr->c);
    int err = lmap ? tm_intercomm_attach(me, h.ctx, lmap, cr->c->size, rmap, h.rn, cr->rank, cr->eh,
                                         newcomm)
                   : MPI_ERR_NO_MEM;
    free(lmap);
    free(rmap);
    return err ? tm_err(me, comm, err, fn, "out of memory") : MPI_SUCCESS;
}

TM_API int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                            MPI_Comm *newcomm)
{
    return conn_common("MPI_Comm_accept", 1, port_name, info, root, comm, newcomm);
}
TM_ALIAS(Comm_accept)

TM_API int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                             MPI_Comm *newcomm)
{
    return conn_common("MPI_Comm_connect", 0, port_name, info, root, comm, newcomm);
}
TM_ALIAS(Comm_connect)

/* The three name calls: the operation on the job's table (node 0's across nodes). */
static int name_call(const char *fn, int op, const char *service_name, const char *port_name,
                     char *out)
{
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!service_name || !port_name)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "service_name or port_name is NULL");
    struct tm_job *j = me->job;
    pthread_mutex_lock(&j->spawn_lock);
    j->spawn_free = tm_dynproc_free;
    pthread_mutex_unlock(&j->spawn_lock);
    int rc = tm_dyn_name(me, op, service_name, op == TM_NAME_LOOKUP ? "" : port_name, out,
                         MPI_MAX_PORT_NAME);
    if (rc == 0) return MPI_SUCCESS;
    if (rc == -EEXIST)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_SERVICE, fn, "service %s is already published",
                      service_name);
    if (rc == -ENOENT && op == TM_NAME_UNPUBLISH)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_SERVICE, fn,
                      "service %s is not published with port %s", service_name, port_name);
    if (rc == -ENOENT)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NAME, fn, "no service %s is published",
                      service_name);
    if (rc == -ENOSPC)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_SERVICE, fn,
                      "service %s: the agent holds as many names of this user as it may",
                      service_name);
    if (rc == -ENAMETOOLONG)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                      "service %s: a service name of more than %d or a port name of more than %d "
                      "characters",
                      service_name, MPI_MAX_INFO_VAL, MPI_MAX_PORT_NAME - 1);
    return tm_err(me, MPI_COMM_WORLD, rc == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER, fn,
                  "service %s: %s", service_name, strerror(-rc));
}

TM_API int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    return name_call("MPI_Publish_name", TM_NAME_PUBLISH, service_name, port_name, NULL);
}
TM_ALIAS(Publish_name)

TM_API int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    return name_call("MPI_Unpublish_name", TM_NAME_UNPUBLISH, service_name, port_name, NULL);
}
TM_ALIAS(Unpublish_name)

TM_API int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    return name_call("MPI_Lookup_name", TM_NAME_LOOKUP, service_name, port_name, port_name);
}
TM_ALIAS(Lookup_name)

/* Both ends over fd: [job id, world rank]; the lower rank then sends the three ids. */
static int full_io(int fd, void *buf, size_t len, int out)
{
    char *b = buf;
    while (len) {
        ssize_t n = out ? write(fd, b, len) : read(fd, b, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? -errno : -EPIPE;
        b += n;
        len -= (size_t)n;
    }
    return 0;
}

/* MPI_Comm_join with a rank of the user's other job: the side of the lower job id opens a
 * port and writes its name over fd (MPI_MAX_PORT_NAME bytes; empty: it could not), the other
 * reads it and connects; accept and connect on MPI_COMM_SELF, their errors its handler's. */
static int join_other_job(struct tm_rank *me, const char *fn, int fd, int opener,
                          MPI_Comm *intercomm)
{
    char port[MPI_MAX_PORT_NAME];
    memset(port, 0, sizeof port);
    int rc;
    if (opener) {
        int e = PMPI_Open_port(MPI_INFO_NULL, port);
        if (e != MPI_SUCCESS) port[0] = 0;
        rc = full_io(fd, port, sizeof port, 1);
        if (rc < 0 || e != MPI_SUCCESS) {
            if (e == MPI_SUCCESS) PMPI_Close_port(port);
            return e != MPI_SUCCESS ? e
                                    : tm_err(me, MPI_COMM_SELF, MPI_ERR_OTHER, fn, "fd %d: %s", fd,
                                             strerror(-rc));
        }
        e = PMPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, intercomm);
        PMPI_Close_port(port);
        return e;
    }
    rc = full_io(fd, port, sizeof port, 0);
    if (rc < 0) return tm_err(me, MPI_COMM_SELF, MPI_ERR_OTHER, fn, "fd %d: %s", fd, strerror(-rc));
    port[sizeof port - 1] = 0;
    if (!port[0])
        return tm_err(me, MPI_COMM_SELF, MPI_ERR_OTHER, fn,
                      "the other end (another job) could not open a port");
    return PMPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, intercomm);
}

TM_API int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    const char *fn = "MPI_Comm_join";
    struct tm_rank *me = tm_self();
    if (!me) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);
    if (!intercomm) return tm_err(me, MPI_COMM_SELF, MPI_ERR_ARG, fn, "intercomm is NULL");
    *intercomm = MPI_COMM_NULL;
    int64_t mine[2] = {(int64_t)me->job->id, me->rank}, theirs[2];
    int rc = full_io(fd, mine, sizeof mine, 1);
    if (rc == 0) rc = full_io(fd, theirs, sizeof theirs, 0);
    if (rc < 0) return tm_err(me, MPI_COMM_SELF, MPI_ERR_OTHER, fn, "fd %d: %s", fd, strerror(-rc));
    if (theirs[0] != mine[0]) return join_other_job(me, fn, fd, mine[0] < theirs[0], intercomm);
    if (theirs[1] == me->rank || theirs[1] < 0 || theirs[1] >= me->job->size)
        return tm_err(me, MPI_COMM_SELF, MPI_ERR_OTHER, fn,
                      "the other end is not a rank of this job");
    int32_t lmap[1] = {me->rank}, rmap[1] = {(int32_t)theirs[1]}, ctx[3] = {0, 0, 0};
    int reuse = 0;
    if (me->rank < theirs[1]) {
        int32_t err = tm_ctx_for(me, lmap, 1, rmap, 1, 3, ctx, &reuse) < 0;
        int32_t msg[4] = {err, ctx[0], ctx[1], ctx[2]};
        rc = full_io(fd, msg, sizeof msg, 1);
        if (err) rc = -ENOSPC;
    } else {
        int32_t msg[4];
        rc = full_io(fd, msg, sizeof msg, 0);
        if (rc == 0 && msg[0]) rc = -ENOSPC;
        memcpy(ctx, msg + 1, sizeof ctx);
    }
    if (rc < 0) return tm_err(me, MPI_COMM_SELF, MPI_ERR_OTHER, fn, "fd %d: %s", fd, strerror(-rc));
    int err = tm_intercomm_attach(me, ctx, lmap, 1, rmap, 1, 0, MPI_ERRORS_ARE_FATAL, intercomm);
    return err ? tm_err(me, MPI_COMM_SELF, err, fn, "out of memory") : MPI_SUCCESS;
}
TM_ALIAS(Comm_join)
