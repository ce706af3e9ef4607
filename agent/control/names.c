/* names.c — the agents' name service (names.h). */
#include "names.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fanout.h"
#include "job.h"
#include "jobhost.h"
#include "log.h"
#include "mesh.h"
#include "msg_check.h"
#include "svc.h"

struct name_entry {
    struct name_entry *next;
    uid_t uid;
    uint64_t job_id; /* the publishing job: the name goes with it */
    char *service, *port;
    int is_port; /* an open port of the job (service = its name, port unused), not a name */
};

struct name_query;

/* One peer asked by a query. */
struct name_peer {
    struct name_query *q;
    size_t index;
    struct mesh_conn *conn;
};

/* A host's request that needs the peers: the question, whose it is, the round. */
struct name_query {
    struct name_query *next;
    struct names *n;
    uint64_t job_id, query;
    uint32_t op; /* the host's operation (a publish asks the peers a lookup) */
    uid_t uid;
    /* a find: another user's port was found (its owner's uid and job) */
    int refused;
    uid_t owner_uid;
    uint64_t owner_job;
    char *service, *port;
    /* a job find (MSG_NAME_JOB_FIND, the relay's): the node asked for and who hears */
    uint64_t find_job;
    uint32_t find_node;
    names_where_fn where;
    void *where_arg;
    struct fanout *fan;
    uint64_t round;
    size_t npeers;
    struct name_peer *peers;
};

struct names {
    struct mesh *mesh; /* the agent's, to ask its peers */
    struct event_base *base;
    const struct agent_config *cfg;
    names_job_fn job_of;
    void *job_arg;
    struct name_entry *head;
    struct name_query *queries;
    unsigned nqueries;
    /* context ids handed out for communicators between jobs (MSG_NAME_XCTX): the next
     * allocation's index, never reused (loop thread) */
    uint32_t next_xctx;
    /* the agent's slice of the ids (xctx_host_request) and who hears of a port found at a
     * peer (names_set_xjob) */
    uint32_t xctx_slice;
    names_found_fn found;
    void *found_arg;
};

static void entry_free(struct name_entry *e)
{
    free(e->service);
    free(e->port);
    free(e);
}

int names_new(struct mesh *mesh, struct event_base *base, const struct agent_config *cfg,
              names_job_fn job_of, void *job_arg, struct names **ret)
{
    struct names *n = calloc(1, sizeof *n);
    if (!n) return -ENOMEM;
    n->mesh = mesh;
    n->base = base;
    n->cfg = cfg;
    n->job_of = job_of;
    n->job_arg = job_arg;
    *ret = n;
    return 0;
}

static void query_free(struct name_query *q)
{
    for (size_t i = 0; i < q->npeers; i++)
        mesh_conn_close(q->peers[i].conn);
    fanout_free(q->fan);
    free(q->peers);
    free(q->service);
    free(q->port);
    free(q);
}

/* A request of job j's host that the peers must answer: NULL when out of memory. */
static struct name_query *query_new(struct names *n, const struct job *j,
                                    const Tmpi__NameRequest *rq, const char *port)
{
    struct name_query *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->n = n;
    q->job_id = j->id;
    q->query = rq->query;
    q->op = rq->op;
    q->uid = j->uid;
    q->service = strdup(rq->service);
    q->port = strdup(port);
    if (!q->service || !q->port) {
        query_free(q);
        return NULL;
    }
    return q;
}

void names_free(struct names *n)
{
    if (!n) return;
    while (n->head) {
        struct name_entry *e = n->head;
        n->head = e->next;
        entry_free(e);
    }
    while (n->queries) {
        struct name_query *q = n->queries;
        n->queries = q->next;
        query_free(q);
    }
    free(n);
}

/* Whether e's job still runs: once its ranks ended (JobEnd went to its launcher) its names are
 * gone for every lookup, though the job is freed only after its host is reaped. */
static int live(struct names *n, const struct name_entry *e)
{
    struct job *j = n->job_of(n->job_arg, e->job_id);
    return j && atomic_load(&j->state) < JOB_ENDING;
}

/* The entry of uid's service (is_port: uid's open port of that name; any_user: whoever's). */
static struct name_entry **find_kind(struct names *n, uid_t uid, const char *service, int is_port,
                                     int any_user)
{
    struct name_entry **pp = &n->head;
    while (*pp) {
        struct name_entry *e = *pp;
        if (!live(n, e)) { /* dropped here, as names_job_gone would */
            *pp = e->next;
            entry_free(e);
            continue;
        }
        if (e->is_port == is_port && (any_user || e->uid == uid) &&
            strcmp(e->service, service) == 0)
            break;
        pp = &e->next;
    }
    return pp;
}

static struct name_entry **find(struct names *n, uid_t uid, const char *service)
{
    return find_kind(n, uid, service, 0, 0);
}

static int entry_add(struct names *n, uid_t uid, uint64_t job_id, const char *service,
                     const char *port, int is_port)
{
    unsigned mine = 0;
    for (struct name_entry *e = n->head; e; e = e->next)
        mine += e->uid == uid && live(n, e);
    if (mine >= NAMES_PER_USER_MAX) return -ENOSPC;
    struct name_entry *e = calloc(1, sizeof *e);
    if (!e || !(e->service = strdup(service)) || !(e->port = strdup(port))) {
        if (e) entry_free(e);
        return -ENOMEM;
    }
    e->uid = uid;
    e->job_id = job_id;
    e->is_port = is_port;
    e->next = n->head;
    n->head = e;
    return 0;
}

/* This table's part of a port operation: open (-EEXIST when open already, -ENOSPC), close
 * (-ENOENT: not one of job_id's), find (0 uid's, -EACCES another user's: *ret_e is it,
 * -ENOENT). */
static int port_here(struct names *n, uint32_t op, uid_t uid, uint64_t job_id, const char *name,
                     const struct name_entry **ret_e)
{
    struct name_entry **pp = find_kind(n, uid, name, 1, 1), *e = *pp;
    if (op == MSG_NAME_PORT_OPEN) return e ? -EEXIST : entry_add(n, uid, job_id, name, "", 1);
    if (op == MSG_NAME_PORT_CLOSE) {
        if (!e || e->uid != uid || e->job_id != job_id) return -ENOENT;
        *pp = e->next;
        entry_free(e);
        return 0;
    }
    if (!e) return -ENOENT;
    *ret_e = e;
    return e->uid == uid ? 0 : -EACCES;
}

/* This table's part of an operation: 0, -EEXIST, -ENOENT, -ENOSPC, -ENOMEM; a lookup's port
 * in *port. */
static int op_here(struct names *n, uint32_t op, uid_t uid, uint64_t job_id, const char *service,
                   const char *port, const char **ret_port)
{
    struct name_entry **pp = find(n, uid, service), *e = *pp;
    if (op == MSG_NAME_LOOKUP) {
        if (!e) return -ENOENT;
        *ret_port = e->port;
        return 0;
    }
    if (op == MSG_NAME_UNPUBLISH) {
        /* the standard's pair: the service with the port it was published with */
        if (!e || strcmp(e->port, port) != 0) return -ENOENT;
        *pp = e->next;
        entry_free(e);
        return 0;
    }
    if (e) return -EEXIST;
    return entry_add(n, uid, job_id, service, port, 0);
}

static const char *op_name(uint32_t op)
{
    return op == MSG_NAME_PUBLISH     ? "publish"
           : op == MSG_NAME_UNPUBLISH ? "unpublish"
           : op == MSG_NAME_LOOKUP    ? "lookup"
                                      : "port find";
}

/* The refusal of a connect to another user's port, logged where the decision is made: both
 * jobs and both users.  The words go back to the connecting rank as its error's reason. */
static void log_refusal(uint64_t rec_job, const char *rec_user, uint64_t job_id, uid_t uid,
                        const char *port, uint64_t owner_job, uid_t owner_uid, char *words,
                        size_t len)
{
    log_job(LOG_NOTICE, rec_job, rec_user,
            "connect of job %llu (uid %u) to port %s of job %llu (uid %u) refused: the port is "
            "another user's",
            (unsigned long long)job_id, (unsigned)uid, port, (unsigned long long)owner_job,
            (unsigned)owner_uid);
    snprintf(words, len, "job %llu of uid %u", (unsigned long long)owner_job, (unsigned)owner_uid);
}

/* The answer to the host of job_id (gone: nobody waits any more). */
static void reply_host(struct names *n, uint64_t job_id, uint64_t query, int err, const char *port)
{
    struct job *j = n->job_of(n->job_arg, job_id);
    if (!j) return;
    Tmpi__NameReply r = TMPI__NAME_REPLY__INIT;
    r.query = query;
    r.error = err;
    r.port = (char *)(port ? port : "");
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NAME_REPLY;
    env.name_reply = &r;
    jobhost_forward(j, &env);
}

/* The decision on the host's operation, once this table and the peers have said theirs. */
static void finish(struct names *n, struct name_query *q, int found, const char *port)
{
    struct job *j = n->job_of(n->job_arg, q->job_id);
    const char *user = j ? j->owner : "?";
    int err;
    const char *ans = NULL;
    char words[96] = "";
    if (q->op == MSG_NAME_PORT_FIND) {
        err = found ? 0 : q->refused ? -EACCES : -ENOENT;
        if (q->refused)
            log_refusal(q->job_id, user, q->job_id, q->uid, q->service, q->owner_job, q->owner_uid,
                        words, sizeof words);
        reply_host(n, q->job_id, q->query, err, words);
        return;
    }
    if (q->op == MSG_NAME_LOOKUP) {
        err = found ? 0 : -ENOENT;
        ans = port;
    } else if (q->op == MSG_NAME_UNPUBLISH) {
        err = found ? 0 : -ENOENT;
    } else if (found) {
        err = -EEXIST;
    } else {
        /* entered now: another publish here may have come first meanwhile */
        err = op_here(n, MSG_NAME_PUBLISH, q->uid, q->job_id, q->service, q->port, &ans);
    }
    if (q->op != MSG_NAME_LOOKUP)
        log_job(err ? LOG_NOTICE : LOG_INFO, q->job_id, user, "%s of service '%s' (port %s)%s%s",
                op_name(q->op), q->service, q->port, err ? ": " : "", err ? strerror(-err) : "");
    reply_host(n, q->job_id, q->query, err, ans);
}

/* ---- the peers' part: one mesh control connection each, as cluster.c asks them ---- */

static void peer_finish(struct name_peer *p, const char *error)
{
    if (error) fanout_fail(p->q->fan, p->q->round, p->index, error);
    mesh_conn_close(p->conn);
    p->conn = NULL;
}

static void on_ready(void *arg, struct mesh_conn *c)
{
    struct name_peer *p = arg;
    struct name_query *q = p->q;
    Tmpi__NameRequest rq = TMPI__NAME_REQUEST__INIT;
    rq.query = q->round;
    /* a publish asks whether the name is taken anywhere */
    rq.op = q->op == MSG_NAME_PUBLISH ? MSG_NAME_LOOKUP : q->op;
    rq.service = q->service;
    rq.port = q->port ? q->port : "";
    rq.uid = (uint32_t)q->uid;
    rq.job_id = q->op == MSG_NAME_JOB_FIND ? q->find_job : q->job_id;
    rq.node = q->find_node;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NAME_REQUEST;
    env.name_request = &rq;
    int r = mesh_send(c, &env);
    if (r < 0) {
        char why[120];
        snprintf(why, sizeof why, "cannot send the name request: %s", strerror(-r));
        peer_finish(p, why);
    }
}

static void on_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    struct name_peer *p = arg;
    if (env->msg_case != TMPI__ENVELOPE__MSG_NAME_REPLY) {
        peer_finish(p, "answered something else than a name reply (another version?)");
        return;
    }
    const Tmpi__NameReply *r = env->name_reply;
    Tmpi__NameReply *copy = calloc(1, sizeof *copy);
    if (copy) {
        tmpi__name_reply__init(copy);
        copy->error = r->error;
        copy->owner_uid = r->owner_uid;
        copy->job_id = r->job_id;
        copy->port = strndup(r->port ? r->port : "", MSG_NAME_PORT_MAX);
        if (!copy->port) {
            free(copy);
            copy = NULL;
        }
    }
    if (copy) (void)fanout_answer(p->q->fan, p->q->round, p->index, copy);
    peer_finish(p, copy ? NULL : "out of memory");
}

static void on_drain(void *arg, struct mesh_conn *c) {}

static void on_close(void *arg, struct mesh_conn *c, int err, const char *why)
{
    struct name_peer *p = arg;
    p->conn = NULL;
    peer_finish(p, why && *why ? why : strerror(err < 0 ? -err : EPIPE));
}

static const struct mesh_ctl_ops peer_ops = {
    .on_ready = on_ready,
    .on_frame = on_frame,
    .on_drain = on_drain,
    .on_close = on_close,
};

static int fan_ask(void *arg, uint64_t round)
{
    struct name_query *q = arg;
    struct names *n = q->n;
    q->round = round;
    for (size_t i = 0; i < q->npeers; i++) {
        struct name_peer *p = &q->peers[i];
        int r = mesh_ctl_connect(n->mesh, n->cfg->peers[i], &peer_ops, p, &p->conn);
        if (r < 0) {
            p->conn = NULL;
            char why[120];
            snprintf(why, sizeof why, "cannot connect: %s", strerror(-r));
            fanout_fail(q->fan, round, i, why);
        }
    }
    return 0;
}

static void query_drop(struct names *n, struct name_query *q)
{
    for (struct name_query **pp = &n->queries; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            break;
        }
    n->nqueries--;
    query_free(q);
}

/* A job find's round is over: the first peer that runs the node (peers answer 0 only for the
 * asker's uid) is where its frames go. */
static void where_done(struct names *n, struct name_query *q, struct fanout *f)
{
    const char *address = NULL;
    int err = -ENOENT;
    for (size_t i = 0; i < q->npeers && !address; i++) {
        const Tmpi__NameReply *r =
            fanout_state_of(f, i) == FANOUT_UP ? fanout_answer_of(f, i) : NULL;
        if (r && r->error == 0 && i < n->cfg->npeers) address = n->cfg->peers[i];
        if (r && r->error == -EACCES) err = -EACCES;
    }
    names_where_fn cb = q->where;
    void *arg = q->where_arg;
    uint64_t job = q->find_job;
    uint32_t node = q->find_node;
    uid_t uid = q->uid;
    query_drop(n, q);
    cb(arg, job, node, uid, address, address ? 0 : err);
}

static void fan_done(void *arg, struct fanout *f)
{
    struct name_query *q = arg;
    struct names *n = q->n;
    const char *port = NULL;
    int found = 0;
    if (q->op == MSG_NAME_JOB_FIND) {
        where_done(n, q, f);
        return;
    }
    for (size_t i = 0; i < q->npeers && !found; i++) {
        const Tmpi__NameReply *r =
            fanout_state_of(f, i) == FANOUT_UP ? fanout_answer_of(f, i) : NULL;
        if (r && r->error == 0) {
            found = 1;
            port = r->port;
            /* a port of another job: its frames go to that peer (xrelay.h) */
            if (q->op == MSG_NAME_PORT_FIND && n->found && r->job_id && i < n->cfg->npeers)
                n->found(n->found_arg, r->job_id, r->node, q->uid, n->cfg->peers[i]);
        } else if (r && r->error == -EACCES && q->op == MSG_NAME_PORT_FIND && !q->refused) {
            q->refused = 1;
            q->owner_uid = (uid_t)r->owner_uid;
            q->owner_job = r->job_id;
        }
    }
    /* a peer that could not answer holds nothing this user can reach now: not found */
    finish(n, q, found, port);
    query_drop(n, q);
}

static void free_reply(void *r)
{
    Tmpi__NameReply *nr = r;
    free(nr->port);
    free(nr);
}

static const struct fanout_ops fan_ops = {
    .ask = fan_ask,
    .done = fan_done,
    .free_answer = free_reply,
};

/* Asks the peers for q (0), or a negative errno: q is freed then. */
static int ask_peers(struct names *n, struct name_query *q)
{
    q->npeers = n->cfg->npeers;
    q->peers = calloc(q->npeers, sizeof *q->peers);
    if (!q->peers || fanout_new(n->base, q->npeers, &fan_ops, q, &q->fan) < 0) {
        query_free(q);
        return -ENOMEM;
    }
    for (size_t i = 0; i < q->npeers; i++) {
        q->peers[i].q = q;
        q->peers[i].index = i;
    }
    q->next = n->queries;
    n->queries = q;
    n->nqueries++;
    (void)fanout_start(q->fan, n->cfg->query_timeout_ms);
    return 0;
}

/* A port operation of job j's host: open and close here only, a find here, then at the
 * peers. */
static void port_host_request(struct names *n, struct job *j, const Tmpi__NameRequest *rq)
{
    const struct name_entry *e = NULL;
    int r = port_here(n, rq->op, j->uid, j->id, rq->service, &e);
    char words[96] = "";
    if (rq->op != MSG_NAME_PORT_FIND || r != -ENOENT || n->cfg->npeers == 0) {
        if (rq->op == MSG_NAME_PORT_FIND && r == -EACCES)
            log_refusal(j->id, j->owner, j->id, j->uid, rq->service, e->job_id, e->uid, words,
                        sizeof words);
        else if (r && rq->op == MSG_NAME_PORT_OPEN)
            log_job(LOG_NOTICE, j->id, j->owner, "port %s not registered: %s", rq->service,
                    strerror(-r));
        reply_host(n, j->id, rq->query, r, words);
        return;
    }
    struct name_query *q = query_new(n, j, rq, "");
    if (!q) {
        reply_host(n, j->id, rq->query, -ENOMEM, NULL);
        return;
    }
    if (n->nqueries >= NAMES_QUERIES_MAX) {
        log_job(LOG_WARNING, j->id, j->owner,
                "port find of %s refused: %d name requests wait for the peers already", rq->service,
                NAMES_QUERIES_MAX);
        query_free(q);
        reply_host(n, j->id, rq->query, -EAGAIN, NULL);
        return;
    }
    r = ask_peers(n, q);
    if (r < 0) reply_host(n, j->id, rq->query, r, NULL);
}

/* MSG_NAME_XCTX: three ids no other communicator between jobs of this agent has (svc.h
 * TMPI_XCTX_*): the first as decimal text, or -ENOSPC once the range is used up. */
static void xctx_host_request(struct names *n, struct job *j, const Tmpi__NameRequest *rq)
{
    /* the ids of one agent are its slice of the range (its node number's), so two agents never
     * hand out one id (when their node numbers differ modulo NAMES_XCTX_SLICES): a job
     * connected to jobs on two agents gets ids from both, and each stays its own */
    const uint32_t per = TMPI_XCTX_COUNT / NAMES_XCTX_SLICES;
    if (n->next_xctx >= per / 3) {
        log_job(LOG_WARNING, j->id, j->owner,
                "no context ids between jobs are left on this agent (%u used)", 3 * per / 3);
        reply_host(n, j->id, rq->query, -ENOSPC, NULL);
        return;
    }
    char text[16];
    snprintf(text, sizeof text, "%u", TMPI_XCTX_BASE + n->xctx_slice * per + 3u * n->next_xctx++);
    reply_host(n, j->id, rq->query, 0, text);
}

int names_find_job(struct names *n, uint64_t job_id, uint32_t node, uid_t uid, uint64_t asker,
                   names_where_fn where, void *arg)
{
    if (n->cfg->npeers == 0) return -ENOENT;
    if (n->nqueries >= NAMES_QUERIES_MAX) return -EAGAIN;
    struct name_query *q = calloc(1, sizeof *q);
    if (!q || !(q->service = strdup("")) || !(q->port = strdup(""))) {
        if (q) query_free(q);
        return -ENOMEM;
    }
    q->n = n;
    q->job_id = asker;
    q->op = MSG_NAME_JOB_FIND;
    q->uid = uid;
    q->find_job = job_id;
    q->find_node = node;
    q->where = where;
    q->where_arg = arg;
    return ask_peers(n, q);
}

/* A peer asks whether node rq->node of job rq->job_id runs here for rq->uid. */
static int job_here(struct names *n, const Tmpi__NameRequest *rq)
{
    struct job *j = n->job_of(n->job_arg, rq->job_id);
    if (!j || !j->host || atomic_load(&j->state) >= JOB_ENDING || (uint32_t)j->node != rq->node)
        return -ENOENT;
    if (j->uid == (uid_t)rq->uid) return 0;
    log_job(LOG_WARNING, j->id, j->owner,
            "a peer asked for node %u of this job for uid %u: refused, the job is another "
            "user's",
            (unsigned)rq->node, (unsigned)rq->uid);
    return -EACCES;
}

void names_host_request(struct names *n, struct job *j, const Tmpi__NameRequest *rq)
{
    if (rq->op == MSG_NAME_JOB_FIND) { /* the agents' own question, never a host's */
        reply_host(n, j->id, rq->query, -EINVAL, NULL);
        return;
    }
    if (rq->op == MSG_NAME_XCTX) {
        xctx_host_request(n, j, rq);
        return;
    }
    if (rq->op >= MSG_NAME_PORT_OPEN) {
        port_host_request(n, j, rq);
        return;
    }
    const char *port = rq->port ? rq->port : "", *ans = NULL;
    int r = op_here(n, rq->op == MSG_NAME_PUBLISH ? MSG_NAME_LOOKUP : rq->op, j->uid, j->id,
                    rq->service, port, &ans);
    if (rq->op == MSG_NAME_PUBLISH && r == 0)
        r = -EEXIST; /* published here already */
    else if (rq->op == MSG_NAME_PUBLISH)
        r = -EAGAIN; /* not here: ask the peers */
    if (r != -ENOENT && r != -EAGAIN) {
        if (rq->op != MSG_NAME_LOOKUP)
            log_job(r ? LOG_NOTICE : LOG_INFO, j->id, j->owner, "%s of service '%s' (port %s)%s%s",
                    op_name(rq->op), rq->service, port, r ? ": " : "", r ? strerror(-r) : "");
        reply_host(n, j->id, rq->query, r, ans);
        return;
    }
    struct name_query *q = query_new(n, j, rq, port);
    if (!q) {
        reply_host(n, j->id, rq->query, -ENOMEM, NULL);
        return;
    }
    if (n->cfg->npeers == 0) { /* nobody else to ask */
        finish(n, q, 0, NULL);
        query_free(q);
        return;
    }
    if (n->nqueries >= NAMES_QUERIES_MAX) {
        log_job(LOG_WARNING, j->id, j->owner,
                "name %s of service '%s' refused: %d name requests wait for the peers already",
                op_name(rq->op), rq->service, NAMES_QUERIES_MAX);
        query_free(q);
        reply_host(n, j->id, rq->query, -EAGAIN, NULL);
        return;
    }
    r = ask_peers(n, q);
    if (r < 0) reply_host(n, j->id, rq->query, r, NULL);
}

void names_answer(struct names *n, struct mesh_conn *c, const Tmpi__NameRequest *rq)
{
    char why[160];
    Tmpi__NameReply r = TMPI__NAME_REPLY__INIT;
    r.query = rq->query;
    const char *port = NULL;
    if (msg_check_name_request(rq, why, sizeof why) < 0 || rq->op == MSG_NAME_PUBLISH ||
        rq->op == MSG_NAME_PORT_OPEN || rq->op == MSG_NAME_PORT_CLOSE) {
        /* a peer only ever asks lookups, unpublishes and port finds of its own requests */
        r.error = -EINVAL;
    } else if (rq->op == MSG_NAME_PORT_FIND) {
        const struct name_entry *e = NULL;
        r.error = port_here(n, rq->op, (uid_t)rq->uid, 0, rq->service, &e);
        if (r.error == 0) { /* where the asker's frames go (xrelay.h) */
            struct job *pj = n->job_of(n->job_arg, e->job_id);
            r.job_id = e->job_id;
            r.node = pj ? (uint32_t)pj->node : 0;
        }
        if (r.error == -EACCES) {
            /* this agent holds the port: its log says the refusal too */
            char words[96];
            struct job *oj = n->job_of(n->job_arg, e->job_id);
            log_refusal(e->job_id, oj ? oj->owner : "?", rq->job_id, (uid_t)rq->uid, rq->service,
                        e->job_id, e->uid, words, sizeof words);
            r.owner_uid = (uint32_t)e->uid;
            r.job_id = e->job_id;
        }
    } else if (rq->op == MSG_NAME_JOB_FIND) {
        r.error = job_here(n, rq);
    } else {
        r.error =
            op_here(n, rq->op, (uid_t)rq->uid, 0, rq->service, rq->port ? rq->port : "", &port);
    }
    r.port = (char *)(port ? port : "");
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NAME_REPLY;
    env.name_reply = &r;
    (void)mesh_send(c, &env); /* a failure closes: the asker counts the peer as down */
    mesh_conn_close(c);
}

void names_set_xjob(struct names *n, uint32_t node_number, names_found_fn found, void *arg)
{
    n->xctx_slice = node_number % NAMES_XCTX_SLICES;
    n->found = found;
    n->found_arg = arg;
}

void names_job_gone(struct names *n, uint64_t job_id)
{
    struct name_entry **pp = &n->head;
    while (*pp) {
        struct name_entry *e = *pp;
        if (e->job_id != job_id) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        entry_free(e);
    }
}
