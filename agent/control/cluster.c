/* cluster.c — tmpictl nodes and jobs --all: asking every agent of the mesh (cluster.h). */
#include "cluster.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "fanout.h"
#include "job_info.h"
#include "mesh.h"
#include "tmpi_config.h"

struct cluster_node {
    struct cluster_query *q;
    size_t index;
    const char *address; /* the configured peer's, as written in the configuration */
    struct mesh_conn *conn;
};

struct cluster_query {
    struct agent *a;
    int jobs, all_users;
    uid_t uid;
    cluster_done_fn done;
    void *arg;
    size_t n;
    struct cluster_node *nodes;
    struct fanout *fan; /* the peers' NodeReports (fanout.h: query_timeout_ms) */
    uint64_t round;
};

/* This agent as a NodeInfo; strings point into a and literals. */
static void self_info(struct agent *a, Tmpi__NodeInfo *ni)
{
    tmpi__node_info__init(ni);
    ni->name = a->cfg.name;
    const char *listen = "";
    uint64_t accepted, failures;
    mesh_stats(a->mesh, &listen, &accepted, &failures);
    ni->address = (char *)(listen ? listen : "");
    ni->state = (char *)fanout_state_name(FANOUT_UP);
    ni->jobs = job_info_running(a->jobs, &ni->ranks);
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) == 3) {
        ni->load1 = load[0];
        ni->load5 = load[1];
        ni->load15 = load[2];
    }
    ni->ncpus = (uint32_t)a->ncpus;
    ni->uptime_sec = agent_now() - a->start_time;
    ni->version = TMPI_VERSION;
    ni->node_number = a->node_number;
    ni->pool_used = atomic_load_explicit(&a->pool.used, memory_order_relaxed);
    ni->pool_capacity = a->cfg.pool_size;
}

void cluster_answer(struct agent *a, struct mesh_conn *c, const Tmpi__NodeQuery *q)
{
    Tmpi__NodeInfo ni;
    self_info(a, &ni);
    Tmpi__NodeReport nr = TMPI__NODE_REPORT__INIT;
    nr.node = &ni;
    Tmpi__JobInfo *infos = NULL;
    /* the asking agent decided whose jobs its client may see, as it does for its own */
    if (q->jobs)
        nr.n_jobs = job_info_visible(a->jobs, &a->ended, a->cfg.ended_job_keep_sec, (uid_t)q->uid,
                                     q->all_users, &infos, &nr.jobs);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NODE_REPORT;
    env.node_report = &nr;
    (void)mesh_send(c, &env); /* a failure closes: the asker reports the node down */
    free(infos);
    free(nr.jobs);
    mesh_conn_close(c);
}

static void query_free(struct cluster_query *q)
{
    for (size_t i = 0; i < q->n; i++)
        mesh_conn_close(q->nodes[i].conn);
    fanout_free(q->fan);
    free(q->nodes);
    free(q);
}

void cluster_query_cancel(struct cluster_query *q)
{
    if (q) query_free(q);
}

/* The peer is done with, one way or another: its connection goes. */
static void node_finish(struct cluster_node *n, const char *error)
{
    if (error) fanout_fail(n->q->fan, n->q->round, n->index, error);
    mesh_conn_close(n->conn);
    n->conn = NULL;
}

static void on_ready(void *arg, struct mesh_conn *c)
{
    struct cluster_node *n = arg;
    Tmpi__NodeQuery nq = TMPI__NODE_QUERY__INIT;
    nq.jobs = n->q->jobs;
    nq.uid = (uint32_t)n->q->uid;
    nq.all_users = n->q->all_users;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NODE_QUERY;
    env.node_query = &nq;
    int r = mesh_send(c, &env);
    if (r < 0) {
        char why[120];
        snprintf(why, sizeof why, "cannot send the query: %s", strerror(-r));
        node_finish(n, why);
    }
}

/* Our own copy: the frame goes away when the callback returns. */
static Tmpi__NodeReport *copy_report(const Tmpi__NodeReport *r)
{
    size_t len = tmpi__node_report__get_packed_size(r);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) return NULL;
    tmpi__node_report__pack(r, buf);
    Tmpi__NodeReport *copy = tmpi__node_report__unpack(NULL, len, buf);
    free(buf);
    return copy;
}

static void on_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    struct cluster_node *n = arg;
    if (env->msg_case != TMPI__ENVELOPE__MSG_NODE_REPORT || !env->node_report->node) {
        node_finish(n, "answered something else than a node report (another version?)");
        return;
    }
    Tmpi__NodeReport *report = copy_report(env->node_report);
    if (report) (void)fanout_answer(n->q->fan, n->q->round, n->index, report);
    node_finish(n, report ? NULL : "out of memory");
}

static void on_drain(void *arg, struct mesh_conn *c) {}

static void on_close(void *arg, struct mesh_conn *c, int err, const char *why)
{
    struct cluster_node *n = arg;
    n->conn = NULL;
    node_finish(n, why && *why ? why : strerror(err < 0 ? -err : EPIPE));
}

static const struct mesh_ctl_ops query_ops = {
    .on_ready = on_ready,
    .on_frame = on_frame,
    .on_drain = on_drain,
    .on_close = on_close,
};

/* Peer i's answer, NULL when it gave none. */
static const Tmpi__NodeReport *report_of(const struct cluster_query *q, size_t i)
{
    return fanout_answer_of(q->fan, i);
}

/* A peer's NodeInfo in the reply: its own word when it answered, else what we know. */
static void peer_info(const struct cluster_query *q, size_t i, const struct mesh_peer_info *known,
                      size_t nknown, Tmpi__NodeInfo *ni)
{
    const struct cluster_node *n = &q->nodes[i];
    enum fanout_state st = fanout_state_of(q->fan, i);
    if (st == FANOUT_UP) {
        *ni = *report_of(q, i)->node;
    } else {
        tmpi__node_info__init(ni);
        ni->name = "";
        for (size_t k = 0; k < nknown; k++)
            if (strcmp(known[k].address, n->address) == 0 && known[k].name)
                ni->name = (char *)known[k].name;
        ni->error = (char *)fanout_error(q->fan, i);
    }
    ni->address = (char *)n->address;
    ni->state = (char *)fanout_state_name(st);
    ni->self = 0;
}

/* The same job from several nodes (a job across nodes has one id everywhere, job_id.h)
 * becomes one entry: its ranks are those of the coordinator's own part, which counts the
 * whole job (its world and every node's spawned ranks, job_info.c), or without that part the
 * parts' added.  Entries are shallow copies of the given infos; names[i] is the node that
 * reported in[i]. */
static size_t merge_jobs(Tmpi__JobInfo **in, const char **names, size_t n, Tmpi__JobInfo *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t m;
        for (m = 0; m < k; m++)
            if (out[m].id == in[i]->id) break;
        if (m == k) out[k++] = *in[i];
    }
    for (size_t m = 0; m < k; m++) {
        uint32_t sum = 0, whole = 0;
        int coord = 0;
        for (size_t i = 0; i < n; i++) {
            if (in[i]->id != out[m].id) continue;
            sum += in[i]->nprocs;
            /* the coordinator's own part says most about the job: its state wins */
            if (in[i]->coordinator && strcmp(in[i]->coordinator, names[i]) == 0) {
                coord = 1;
                whole = in[i]->nprocs;
                out[m].state = in[i]->state;
                out[m].runtime_sec = in[i]->runtime_sec;
            }
        }
        out[m].nprocs = coord ? whole : sum;
    }
    return k;
}

static void deliver(struct cluster_query *q)
{
    struct agent *a = q->a;
    size_t np = mesh_npeers(a->mesh);
    struct mesh_peer_info *known = np ? calloc(np, sizeof *known) : NULL;
    if (known)
        np = mesh_peers(a->mesh, known, np);
    else
        np = 0;
    Tmpi__NodeInfo *infos = calloc(q->n + 1, sizeof *infos);
    Tmpi__NodeInfo **ptrs = calloc(q->n + 1, sizeof *ptrs);
    Tmpi__JobInfo *local = NULL, **localp = NULL;
    Tmpi__JobInfo **all = NULL, *merged = NULL, **mergedp = NULL;
    const char **owner_node = NULL;
    char **node_names = NULL;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    Tmpi__NodesReply nodes = TMPI__NODES_REPLY__INIT;
    Tmpi__JobsReply jobs = TMPI__JOBS_REPLY__INIT;
    Tmpi__Error err = TMPI__ERROR__INIT;
    if (!infos || !ptrs) goto oom;
    self_info(a, &infos[0]);
    infos[0].self = 1;
    ptrs[0] = &infos[0];
    for (size_t i = 0; i < q->n; i++) {
        peer_info(q, i, known, np, &infos[i + 1]);
        ptrs[i + 1] = &infos[i + 1];
    }
    if (!q->jobs) {
        nodes.n_nodes = q->n + 1;
        nodes.nodes = ptrs;
        env.msg_case = TMPI__ENVELOPE__MSG_NODES_REPLY;
        env.nodes_reply = &nodes;
        q->done(q->arg, &env);
        goto out;
    }
    size_t nlocal = job_info_visible(a->jobs, &a->ended, a->cfg.ended_job_keep_sec, q->uid,
                                     q->all_users, &local, &localp);
    size_t total = nlocal;
    for (size_t i = 0; i < q->n; i++)
        if (report_of(q, i)) total += report_of(q, i)->n_jobs;
    all = calloc(total + 1, sizeof *all);
    owner_node = calloc(total + 1, sizeof *owner_node);
    merged = calloc(total + 1, sizeof *merged);
    mergedp = calloc(total + 1, sizeof *mergedp);
    node_names = calloc(total + 1, sizeof *node_names);
    if (!all || !owner_node || !merged || !mergedp || !node_names || (nlocal && !localp)) goto oom;
    size_t k = 0;
    for (size_t j = 0; j < nlocal; j++) {
        owner_node[k] = a->cfg.name;
        all[k++] = localp[j];
    }
    for (size_t i = 0; i < q->n; i++) {
        const Tmpi__NodeReport *r = report_of(q, i);
        for (size_t j = 0; r && j < r->n_jobs; j++) {
            owner_node[k] = r->node->name;
            all[k++] = r->jobs[j];
        }
    }
    size_t nm = merge_jobs(all, owner_node, k, merged);
    /* each merged entry's node list: the names of the parts with its id, in node order */
    size_t used = 0;
    for (size_t m = 0; m < nm; m++) {
        merged[m].nodes = node_names + used;
        merged[m].n_nodes = 0;
        for (size_t j = 0; j < k; j++)
            if (all[j]->id == merged[m].id)
                merged[m].nodes[merged[m].n_nodes++] = (char *)owner_node[j];
        used += merged[m].n_nodes;
        mergedp[m] = &merged[m];
    }
    jobs.n_jobs = nm;
    jobs.jobs = mergedp;
    jobs.n_nodes = q->n + 1;
    jobs.nodes = ptrs;
    env.msg_case = TMPI__ENVELOPE__MSG_JOBS_REPLY;
    env.jobs_reply = &jobs;
    q->done(q->arg, &env);
    goto out;
oom:
    err.code = -ENOMEM;
    err.message = "out of memory for the cluster view";
    env.msg_case = TMPI__ENVELOPE__MSG_ERROR;
    env.error = &err;
    q->done(q->arg, &env);
out:
    free(known);
    free(infos);
    free(ptrs);
    free(local);
    free(localp);
    free(all);
    free(owner_node);
    free(merged);
    free(mergedp);
    free(node_names);
    query_free(q);
}

/* Every peer answered, went away or timed out (fanout.h). */
static void fan_done(void *arg, struct fanout *f)
{
    struct cluster_query *q = arg;
    for (size_t i = 0; i < q->n; i++) {
        mesh_conn_close(q->nodes[i].conn);
        q->nodes[i].conn = NULL;
    }
    deliver(q);
}

/* The round's question: a mesh control connection to every configured peer, which sends the
 * NodeQuery once it is up (on_ready). */
static int fan_ask(void *arg, uint64_t round)
{
    struct cluster_query *q = arg;
    q->round = round;
    for (size_t i = 0; i < q->n; i++) {
        struct cluster_node *n = &q->nodes[i];
        int r = mesh_ctl_connect(q->a->mesh, n->address, &query_ops, n, &n->conn);
        if (r < 0) {
            n->conn = NULL;
            char why[120];
            snprintf(why, sizeof why, "cannot connect: %s", strerror(-r));
            fanout_fail(q->fan, round, i, why);
        }
    }
    return 0;
}

static void free_report(void *r)
{
    tmpi__node_report__free_unpacked(r, NULL);
}

static const struct fanout_ops fan_ops = {
    .ask = fan_ask,
    .done = fan_done,
    .free_answer = free_report,
};

int cluster_query_start(struct agent *a, int jobs, uid_t uid, int all_users, cluster_done_fn done,
                        void *arg, struct cluster_query **ret)
{
    struct cluster_query *q = calloc(1, sizeof *q);
    if (!q) return -ENOMEM;
    q->a = a;
    q->jobs = jobs;
    q->uid = uid;
    q->all_users = all_users;
    q->done = done;
    q->arg = arg;
    q->n = a->cfg.npeers;
    q->nodes = q->n ? calloc(q->n, sizeof *q->nodes) : NULL;
    if ((q->n && !q->nodes) || fanout_new(a->base, q->n, &fan_ops, q, &q->fan) < 0) {
        query_free(q);
        return -ENOMEM;
    }
    for (size_t i = 0; i < q->n; i++) {
        q->nodes[i].q = q;
        q->nodes[i].index = i;
        q->nodes[i].address = a->cfg.peers[i];
    }
    (void)fanout_start(q->fan, a->cfg.query_timeout_ms);
    *ret = q;
    return 0;
}
