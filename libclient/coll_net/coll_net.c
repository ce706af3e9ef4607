/* coll_net.c — communicators across nodes: grouping members by node, the per-node round
 * (fan-in to the leader, fan-out), and the leaders' messages (coll_net.h). */
#include "coll_net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_p2p.h"
#include "p2p.h"
#include "p2p_route.h"
#include "svc_conf.h"
#include "wait.h"

/* ---- configuration ---- */

/* The agent's value of a setting (tmpid.conf [mpi] key) fits this. */
#define CONF_VALUE_MAX 4096

/* One setting: the environment (the job's -x variables, then the agent's: getenv is
 * interposed for rank threads) wins over tmpid.conf's [mpi] key, which the agent tells by
 * key (svc_conf.h) into buf. */
static const char *setting(const struct tmpi_svc *svc, const char *env, const char *key, char *buf,
                           const char **ret_from)
{
    const char *v = getenv(env);
    *ret_from = env;
    if (v && *v) return v;
    *ret_from = NULL;
    return tm_svc_conf(svc, "mpi", key, buf, CONF_VALUE_MAX) ? buf : NULL;
}

static void conf_bad(struct tm_cconf *cf, const char *env, const char *v, enum tm_coll_id coll)
{
    if (cf->err) return; /* the first problem is the one reported */
    cf->err = -EINVAL;
    char names[200];
    if (env)
        snprintf(cf->msg, sizeof cf->msg, "%s=\"%s\": not one of %s", env, v,
                 tm_coll_algo_names(coll, names, sizeof names));
    else /* the agent checked its file; only a mismatched agent gets here */
        snprintf(cf->msg, sizeof cf->msg, "tmpid.conf: bad collective algorithm \"%s\"", v);
}

static void conf_read(const struct tmpi_svc *svc, int world, struct tm_cconf *cf)
{
    const char *v, *from;
    char *buf = malloc(CONF_VALUE_MAX);
    cf->err = 0;
    cf->msg[0] = '\0';
    cf->world = world;
    cf->tree_path = NULL;
    atomic_init(&cf->tree, NULL);
    int wants_file = 0;
    for (int k = 0; k < TM_COLL_COUNT; k++) {
        const struct tm_coll_kind *kind = tm_coll_kind((enum tm_coll_id)k);
        cf->algo[k] = 0;
        if (buf && (v = setting(svc, kind->env, kind->conf_key, buf, &from)) &&
            tm_coll_algo_parse((enum tm_coll_id)k, v, strlen(v), &cf->algo[k]) < 0) {
            cf->algo[k] = 0;
            conf_bad(cf, from, v, (enum tm_coll_id)k);
        }
        wants_file |= cf->algo[k] != 0 && tm_coll_takes_file((enum tm_coll_id)k, cf->algo[k]);
    }
    v = buf ? setting(svc, "TMPI_COLL_TREE_FILE", "coll_tree_file", buf, &from) : NULL;
    if ((!buf || (v && !(cf->tree_path = strdup(v)))) && !cf->err) {
        cf->err = -EINVAL;
        snprintf(cf->msg, sizeof cf->msg, "out of memory reading the collective settings");
    }
    int have_file = v != NULL;
    free(buf);
    if (!have_file && !cf->err && wants_file) {
        cf->err = -EINVAL;
        snprintf(cf->msg, sizeof cf->msg,
                 "algorithm tree_file without a tree file (set TMPI_COLL_TREE_FILE or tmpid.conf "
                 "[mpi] coll_tree_file)");
    }
}

int tm_coll_conf_check(const struct tmpi_svc *svc, char *msg, size_t len)
{
    struct tm_cconf cf;
    conf_read(svc, 0, &cf);
    free(cf.tree_path);
    if (cf.err) snprintf(msg, len, "%s", cf.msg);
    return cf.err;
}

/* Loads the tree file for c once; every leader gets the same result. */
static struct tm_ctree *ctree_load(struct tm_chier *h, int size)
{
    struct tm_ctree *t = atomic_load_explicit(&h->conf.tree, memory_order_acquire);
    if (t) return t;
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    char why[256];
    if (tm_tree_file_load(h->conf.tree_path, &t->t, why, sizeof why) < 0) {
        t->err = -EINVAL;
        snprintf(t->msg, sizeof t->msg, "tree file rejected: %s", why);
    } else {
        t->fits = t->t.n == size;
        if (!t->fits)
            snprintf(t->msg, sizeof t->msg,
                     "tree file %s has %d ranks but MPI_COMM_WORLD has %d (algorithm tree_file)",
                     h->conf.tree_path, t->t.n, size);
    }
    struct tm_ctree *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&h->conf.tree, &expected, t, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        tm_tree_file_free(&t->t);
        free(t);
        t = expected;
    }
    return t;
}

int tm_chier_tree(struct tm_cnet *x, int explicit_, const struct tm_tree_file **ret)
{
    *ret = NULL;
    if (!x->h->conf.tree_path) return 0;
    struct tm_ctree *t = ctree_load(x->h, x->c->size);
    if (!t) return -ENOMEM;
    if (t->err) return t->err;
    if (t->fits) {
        *ret = &t->t;
        return 0;
    }
    /* A tree file written for the job that does not fit it is a mistake worth stopping for;
     * other communicators just do not use it. */
    return explicit_ && x->h->conf.world ? -EINVAL : 0;
}

const char *tm_chier_error(struct tm_rank *me, struct tm_comm *c)
{
    (void)me;
    struct tm_chier *h = atomic_load_explicit(&c->coll.hier, memory_order_acquire);
    if (!h) return NULL;
    if (h->conf.err) return h->conf.msg;
    struct tm_ctree *t = atomic_load_explicit(&h->conf.tree, memory_order_acquire);
    if (t && (t->err || (!t->fits && h->conf.world))) return t->msg;
    return NULL;
}

/* ---- the hierarchy ---- */

void tm_chier_free(struct tm_chier *h)
{
    if (!h) return;
    for (int i = 0; h->g && i < h->ngroups; i++) {
        tm_cprog_stop_group(atomic_load_explicit(&h->g[i].prog, memory_order_acquire));
        free(h->g[i].members);
        tm_tplan_free(h->g[i].plan);
    }
    free(h->g);
    free(h->group_of);
    free(h->group_of_node);
    struct tm_ctree *t = atomic_load_explicit(&h->conf.tree, memory_order_acquire);
    if (t) tm_tree_file_free(&t->t);
    free(t);
    free(h->conf.tree_path);
    free(h);
}

static struct tm_chier *chier_build(const struct tm_rank *me, const struct tm_comm *c)
{
    const struct tmpi_rank_info *info = me->info;
    struct tm_chier *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    conf_read(me->job->svc, c->builtin && !c->world_of, &h->conf);
    int nn = info->nnodes, n = c->size;
    h->nnodes = nn;
    h->group_of = malloc(sizeof *h->group_of * (size_t)n);
    h->group_of_node = malloc(sizeof *h->group_of_node * (size_t)nn);
    int *count = calloc((size_t)nn, sizeof *count);
    if (!h->group_of || !h->group_of_node || !count) goto err;
    for (int i = 0; i < nn; i++)
        h->group_of_node[i] = -1;
    /* Groups in order of their leaders (lowest comm rank): a walk in rank order meets each
     * node first at its leader. */
    for (int r = 0; r < n; r++) {
        int node = info->node_of_rank[tm_comm_world_rank(c, r)];
        if (h->group_of_node[node] < 0) h->group_of_node[node] = h->ngroups++;
        count[node]++;
    }
    /* aligned: each group's arrival counter has a cache line of its own (coll_net.h) */
    size_t gbytes = sizeof *h->g * (size_t)h->ngroups;
    h->g = aligned_alloc(_Alignof(struct tm_cgroup), gbytes);
    if (!h->g) goto err;
    memset(h->g, 0, gbytes);
    for (int node = 0; node < nn; node++) {
        int gi = h->group_of_node[node];
        if (gi < 0) continue;
        struct tm_cgroup *g = &h->g[gi];
        g->node = node;
        g->members = malloc(sizeof *g->members * (size_t)count[node]);
        if (!g->members) goto err;
        atomic_init(&g->arrive, 0);
        atomic_init(&g->release, 0);
    }
    h->contiguous = 1;
    for (int r = 0; r < n; r++) {
        int gi = h->group_of_node[info->node_of_rank[tm_comm_world_rank(c, r)]];
        h->group_of[r] = gi;
        h->g[gi].members[h->g[gi].n++] = r;
        if (r && gi != h->group_of[r - 1] && gi != h->group_of[r - 1] + 1) h->contiguous = 0;
    }
    free(count);
    return h;
err:
    free(count);
    tm_chier_free(h);
    return NULL;
}

struct tm_chier *tm_chier_get(struct tm_rank *me, struct tm_comm *c)
{
    struct tm_chier *h = atomic_load_explicit(&c->coll.hier, memory_order_acquire);
    if (h) return h;
    h = chier_build(me, c);
    if (!h) return NULL;
    struct tm_chier *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&c->coll.hier, &expected, h, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        tm_chier_free(h); /* another member installed the same thing first */
        h = expected;
    }
    return h;
}

/* ---- the round ---- */

/* Context of the leaders' messages: below every user context (those are >= 1); blocking
 * rounds take the even ones, non-blocking rounds (coll_net_nb.c) the odd ones. */
static int coll_ctx(const struct tm_comm *c)
{
    return -2 * c->ctx - 2;
}

void tm_cnet_setup(struct tm_cnet *x, struct tm_rank *me, struct tm_comm *c, struct tm_chier *h,
                   int gi, int kind, uint32_t seq, int ctx)
{
    int lead = h->g[gi].members[0];
    *x = (struct tm_cnet){.me = me, .c = c, .h = h, .gi = gi, .kind = kind, .seq = seq};
    x->box = tm_job_rank(me->job, tm_comm_world_rank(c, lead));
    x->xc.ctx = ctx;
    x->xc.size = c->size;
    x->xc.world_of = c->world_of;
    x->xcr = (struct tm_commref){.c = &x->xc, .rank = lead, .eh = MPI_ERRORS_RETURN};
}

int tm_chier_round(struct tm_rank *me, struct tm_commref *cr, int kind,
                   int (*fn)(struct tm_cnet *x))
{
    struct tm_comm *c = cr->c;
    struct tm_chier *h = tm_chier_get(me, c);
    if (!h) return -ENOMEM; /* every member fails alike: building needs the same memory */
    int gi = h->group_of[cr->rank];
    struct tm_cgroup *g = &h->g[gi];
    uint64_t k = ++cr->nbarrier;
    uint64_t prev = atomic_fetch_add_explicit(&g->arrive, 1, memory_order_seq_cst);
    if (g->members[0] != cr->rank) {
        /* the last to arrive wakes the leader (a syscall only if it sleeps) */
        if (prev + 1 == k * (uint64_t)g->n)
            tm_wake(&tm_job_rank(me->job, tm_comm_world_rank(c, g->members[0]))->waker);
        tm_coll_wait_ctr(me, &g->release, k);
        return g->err;
    }
    tm_coll_wait_ctr(me, &g->arrive, k * (uint64_t)g->n);
    struct tm_cnet x;
    tm_cnet_setup(&x, me, c, h, gi, kind, (uint32_t)g->seq++, coll_ctx(c));
    x.plan = &g->plan;
    int err = fn ? fn(&x) : tm_hier_barrier(&x);
    g->err = err;
    atomic_store_explicit(&g->release, k, memory_order_seq_cst);
    for (int i = 1; i < g->n; i++)
        tm_wake(&tm_job_rank(me->job, tm_comm_world_rank(c, g->members[i]))->waker);
    return err;
}

/* ---- leader messages ---- */

static int mk_tag(const struct tm_cnet *x, int step)
{
    return (int)(((x->seq & 0x3fffffu) << 8) | ((unsigned)step & 0xffu));
}

int tm_cnet_isend(struct tm_cnet *x, int dst, int step, const void *buf, size_t bytes,
                  struct tm_request *req)
{
    tm_req_init_stack(req, x->me, TM_REQ_SEND, MPI_COMM_NULL);
    int dest = x->h->g[dst].members[0], tag = mk_tag(x, step);
    atomic_fetch_add_explicit(&x->me->job->coll_stats.net[x->kind], 1, memory_order_relaxed);
    int r;
    if (x->me->job->net)
        r = tm_net_isend(x->me, tm_comm_world_rank(x->c, dest), x->xc.ctx, x->xcr.rank, tag, buf,
                         bytes, TMPI_CH_COLL, TM_SEND_STANDARD, req);
    else /* every node of the job is in this process: the mailbox is the wire */
        r = tm_send(x->me, &x->xcr, buf, bytes, dest, tag, TM_SEND_STANDARD, req);
    return r < 0 ? r : 0;
}

int tm_cnet_wait(struct tm_cnet *x, struct tm_request *req)
{
    tm_wait(x->me, tm_req_done_cond, req);
    return req->st_error == MPI_SUCCESS ? 0 : -EIO;
}

int tm_cnet_recv(struct tm_cnet *x, int src, int step, void *buf, size_t cap, size_t *ret_bytes)
{
    struct tm_request req;
    tm_req_init_stack(&req, x->me, TM_REQ_RECV, MPI_COMM_NULL);
    tm_recv_box(x->me, x->box, x->xc.ctx, buf, cap, x->h->g[src].members[0], mk_tag(x, step), &req);
    tm_wait(x->me, tm_req_done_cond, &req);
    if (ret_bytes) *ret_bytes = req.st_bytes;
    return req.st_error == MPI_ERR_TRUNCATE ? -EMSGSIZE : req.st_error ? -EIO : 0;
}
