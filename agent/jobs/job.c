#include "job.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "frame.h"
#include "job_id.h"
#include "job_link.h"
#include "job_member.h"
#include "job_quota.h"
#include "jobhost.h"
#include "log.h"
#include "msg_check.h"
#include "progcache.h"

/* Rank threads stop producing output while this much is queued for a launcher. */
#define JOB_OUTPUT_HIGH (4u << 20)

const char *job_state_name(int state)
{
    switch (state) {
    case JOB_LOADING:
        return "loading";
    case JOB_RUNNING:
        return "running";
    case JOB_ENDING:
        return "ending";
    case JOB_ENDED:
        return "ended";
    default:
        return "unknown";
    }
}

static char *xstrdup(const char *s, int *oom)
{
    char *d = strdup(s ? s : "");
    if (!d) *oom = 1;
    return d;
}

static int valid_env_name(const char *n)
{
    if (!*n) return 0;
    for (; *n; n++)
        if (*n == '=') return 0;
    return 1;
}

/* What a job is made of, from a SubmitJob or a JobAssign. */
struct job_spec {
    uint32_t nprocs; /* ranks on this node */
    uint32_t world;  /* ranks of the whole job */
    /* the single program (n_apps 0), or none (n_apps > 0) */
    ProtobufCBinaryData program_hash;
    uint64_t program_size;
    const char *program_name;
    size_t n_args;
    char **args;
    const char *cwd;
    size_t n_env;
    Tmpi__EnvVar **env;
    uint32_t timeout_sec;
    size_t n_apps;
    Tmpi__JobApp **apps;
    bool spare; /* a member with no ranks of its own: MPI_Comm_spawn's room only */
};

/* "NAME=VALUE" strings, NULL-terminated. */
static char **env_strings(size_t n, Tmpi__EnvVar *const *vars, int *oom)
{
    char **env = calloc(n + 1, sizeof *env);
    if (!env) {
        *oom = 1;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *v = vars[i]->value ? vars[i]->value : "";
        size_t len = strlen(vars[i]->name) + strlen(v) + 2;
        if ((env[i] = malloc(len)))
            snprintf(env[i], len, "%s=%s", vars[i]->name, v);
        else
            *oom = 1;
    }
    return env;
}

static void free_strings(char **v)
{
    if (!v) return;
    for (char **e = v; *e; e++)
        free(*e);
    free(v);
}

/* Fills app from one program's text (job_cwd when it has no directory of its own). */
static void app_fill(struct job_app *app, const char *name, size_t n_args, char *const *args,
                     const char *cwd, const char *job_cwd, size_t n_env, Tmpi__EnvVar *const *env,
                     int *oom)
{
    app->program_name = xstrdup(name, oom);
    app->cwd = xstrdup(cwd && *cwd ? cwd : job_cwd, oom);
    app->argc = (int)n_args + 1;
    app->argv = calloc((size_t)app->argc + 1, sizeof *app->argv);
    if (!app->argv) {
        *oom = 1;
    } else {
        app->argv[0] = xstrdup(name, oom);
        for (size_t i = 0; i < n_args; i++)
            app->argv[i + 1] = xstrdup(args[i], oom);
    }
    app->env = env_strings(n_env, env, oom);
}

/* The limits of this agent on one program. */
static int check_program(const struct agent_config *cfg, size_t k, const ProtobufCBinaryData *hash,
                         uint64_t size, const char *name, char *err, size_t errlen)
{
    if (hash->len != PROGRAM_HASH_SIZE) {
        snprintf(err, errlen, "malformed submission: program hash of %zu bytes", hash->len);
        return -EINVAL;
    }
    if (size == 0 || size > cfg->max_program_size) {
        snprintf(err, errlen, "program %zu (%s) of %llu bytes refused (max_program_size %zu)", k,
                 name ? name : "?", (unsigned long long)size, cfg->max_program_size);
        return -EINVAL;
    }
    if (!name || !*name) {
        snprintf(err, errlen, "malformed submission: program name required");
        return -EINVAL;
    }
    return 0;
}

static int job_build(struct agent *a, const struct job_spec *s, uid_t uid, struct bufferevent *bev,
                     struct job **ret, char *err, size_t errlen)
{
    const struct agent_config *cfg = &a->cfg;
    if ((s->nprocs < 1 && !s->spare) || s->nprocs > cfg->max_ranks) {
        snprintf(err, errlen, "a job needs 1 to %u ranks on this agent (asked for %u)",
                 cfg->max_ranks, s->nprocs);
        return -EINVAL;
    }
    if (!a->job_host) {
        int q = job_quota_admit(&a->cfg, a->jobs, a->njobs, uid, 0, 0, NULL, err, errlen);
        if (q < 0) return q;
    }
    if (!s->cwd || s->cwd[0] != '/') {
        snprintf(err, errlen, "malformed submission: absolute cwd required");
        return -EINVAL;
    }
    if (s->n_apps > MSG_MAX_APPS) {
        snprintf(err, errlen, "job refused: %zu programs (at most %u)", s->n_apps, MSG_MAX_APPS);
        return -EINVAL;
    }
    uint64_t total = 0;
    int r;
    if (s->n_apps == 0) {
        r = check_program(cfg, 0, &s->program_hash, s->program_size, s->program_name, err, errlen);
        if (r < 0) return r;
        total = s->world;
    }
    for (size_t k = 0; k < s->n_apps; k++) {
        const Tmpi__JobApp *ap = s->apps[k];
        r = check_program(cfg, k, &ap->program_hash, ap->program_size, ap->program_name, err,
                          errlen);
        if (r < 0) return r;
        if (ap->nprocs == 0 || (ap->cwd && *ap->cwd && ap->cwd[0] != '/')) {
            snprintf(err, errlen,
                     "malformed submission: program %zu needs ranks and an "
                     "absolute directory",
                     k);
            return -EINVAL;
        }
        for (size_t i = 0; i < ap->n_env; i++)
            if (!ap->env[i]->name || !valid_env_name(ap->env[i]->name)) {
                snprintf(err, errlen, "malformed submission: bad environment variable name");
                return -EINVAL;
            }
        total += ap->nprocs;
    }
    if (total != s->world) {
        snprintf(err, errlen, "malformed submission: the programs have %llu ranks, the job %u",
                 (unsigned long long)total, s->world);
        return -EINVAL;
    }
    for (size_t i = 0; i < s->n_env; i++)
        if (!s->env[i]->name || !valid_env_name(s->env[i]->name)) {
            snprintf(err, errlen, "malformed submission: bad environment variable name");
            return -EINVAL;
        }

    struct job *j = calloc(1, sizeof *j);
    if (!j) return -ENOMEM;
    int oom = 0;
    j->agent = a;
    j->cfg = &a->cfg;
    j->ncpus = a->ncpus;
    j->runnable_ranks = &a->runnable_ranks;
    j->uid = uid;
    j->nprocs = s->nprocs;
    j->world_size = s->world;
    j->nnodes = 1;
    j->timeout_sec = s->timeout_sec;
    j->fail_rank = -1;
    j->bev = bev;
    j->napps = s->n_apps ? (uint32_t)s->n_apps : 1;
    j->apps = calloc(j->napps, sizeof *j->apps);
    j->cwd = xstrdup(s->cwd, &oom);
    j->env = env_strings(s->n_env, s->env, &oom);
    /* the ranks' records are the job host's (host/rank.h): the agent's side has none */
    if (a->host_parts) j->ranks = calloc(s->nprocs ? s->nprocs : 1, a->host_parts->rank_size);
    j->node_of_rank = calloc(s->world, sizeof *j->node_of_rank);
    j->local_rank_of = calloc(s->world, sizeof *j->local_rank_of);
    if (!j->apps || (a->host_parts && !j->ranks) || !j->node_of_rank || !j->local_rank_of) oom = 1;
    if (j->apps && s->n_apps == 0) {
        app_fill(&j->apps[0], s->program_name, s->n_args, s->args, NULL, s->cwd, 0, NULL, &oom);
        j->apps[0].nprocs = s->world;
    }
    uint32_t first = 0;
    for (size_t k = 0; j->apps && k < s->n_apps; k++) {
        const Tmpi__JobApp *ap = s->apps[k];
        app_fill(&j->apps[k], ap->program_name, ap->n_args, ap->args, ap->cwd, s->cwd, ap->n_env,
                 ap->env, &oom);
        j->apps[k].first_rank = first;
        j->apps[k].nprocs = ap->nprocs;
        first += ap->nprocs;
    }
    if (j->apps) j->program_name = xstrdup(j->apps[0].program_name, &oom);
    if (oom) {
        job_free(j);
        return -ENOMEM;
    }

    pthread_mutex_init(&j->out_mu, NULL);
    pthread_mutex_init(&j->drain_mu, NULL);
    pthread_cond_init(&j->drain_cv, NULL);
    pthread_mutex_init(&j->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&j->client_mu, NULL);
    pthread_mutex_init(&j->children_mu, NULL);
    atomic_init(&j->state, JOB_LOADING);
    j->id = job_id_next(&a->next_job_id, a->node_number);
    j->created_at = agent_now();
    *ret = j;
    return 0;
}

int job_new(struct agent *a, const Tmpi__SubmitJob *s, uid_t uid, pid_t pid,
            struct bufferevent *bev, struct job **ret, char *err, size_t errlen)
{
    struct job_spec spec = {
        .nprocs = s->nprocs,
        .world = s->nprocs,
        .program_hash = s->program_hash,
        .program_size = s->program_size,
        .program_name = s->program_name,
        .n_args = s->n_args,
        .args = s->args,
        .cwd = s->cwd,
        .n_env = s->n_env,
        .env = s->env,
        .timeout_sec = s->timeout_sec,
        .n_apps = s->n_apps,
        .apps = s->apps,
    };
    struct job *j;
    int r = job_build(a, &spec, uid, bev, &j, err, errlen);
    if (r < 0) return r;
    j->on_deadlock = s->on_deadlock;
    j->submitter_pid = pid;
    j->umask = s->umask & 0777;
    j->umask_set = s->umask_set;
    j->stdin_open = s->stdin_open;
    j->bind_to = s->bind_to;
    j->report_bindings = s->report_bindings;
    j->bind_first = s->bind_first;
    struct passwd pw, *pwp = NULL;
    char pwbuf[1024];
    if (getpwuid_r(uid, &pw, pwbuf, sizeof pwbuf, &pwp) == 0 && pwp)
        snprintf(j->owner, sizeof j->owner, "%s", pw.pw_name);
    else
        snprintf(j->owner, sizeof j->owner, "%u", (unsigned)uid);
    /* One node: every rank is local. */
    for (uint32_t i = 0; i < j->nprocs; i++) {
        j->node_of_rank[i] = 0;
        j->local_rank_of[i] = (int32_t)i;
    }
    *ret = j;
    return 0;
}

/* The world-rank maps grown to n entries (a job across nodes with spawn slots). */
static int grow_rank_maps(struct job *j, uint32_t n)
{
    int32_t *nr = realloc(j->node_of_rank, sizeof *nr * n);
    if (!nr) return -ENOMEM;
    j->node_of_rank = nr;
    int32_t *lr = realloc(j->local_rank_of, sizeof *lr * n);
    if (!lr) return -ENOMEM;
    j->local_rank_of = lr;
    return 0;
}

int job_new_member(struct agent *a, const Tmpi__JobAssign *ja, struct bufferevent *bev,
                   struct job **ret, char *err, size_t errlen)
{
    size_t nnodes = ja->n_nodes;
    /* Every rank on exactly one node, every node with ranks: the loop below may then trust the
     * lists. */
    int r0 = msg_check_assign(ja, err, errlen);
    if (r0 < 0) return r0;
    const Tmpi__NodePlacement *me = ja->nodes[ja->node];
    struct job_spec spec = {
        .nprocs = (uint32_t)me->n_ranks,
        .world = ja->nprocs,
        .program_hash = ja->program_hash,
        .program_size = ja->program_size,
        .program_name = ja->program_name,
        .n_args = ja->n_args,
        .args = ja->args,
        .cwd = ja->cwd,
        .n_env = ja->n_env,
        .env = ja->env,
        .timeout_sec = ja->timeout_sec,
        .n_apps = ja->n_apps,
        .apps = ja->apps,
        .spare = me->n_ranks == 0, /* msg_check_assign: it has spawn slots */
    };
    if (me->n_ranks > ja->nprocs) {
        snprintf(err, errlen, "malformed job assignment: more ranks here than in the job");
        return -EINVAL;
    }
    struct job *j;
    int r = job_build(a, &spec, ja->owner_uid, bev, &j, err, errlen);
    if (r < 0) return r;
    snprintf(j->owner, sizeof j->owner, "%s", ja->owner ? ja->owner : "?");
    snprintf(j->coordinator, sizeof j->coordinator, "%s", ja->coordinator ? ja->coordinator : "");
    j->coord_job_id = ja->coordinator_job_id;
    /* one id on every node (job_id.h); 0: a coordinator that does not send it */
    if (ja->coordinator_job_id) j->id = ja->coordinator_job_id;
    j->gid = ja->owner_gid;
    j->umask = ja->umask & 0777;
    j->umask_set = ja->umask_set;
    j->bind_to = ja->bind_to;
    j->report_bindings = ja->report_bindings;
    j->bind_first = ja->bind_first;
    j->node = (int)ja->node;
    j->nnodes = (int)nnodes;
    j->global_rank = calloc(j->nprocs, sizeof *j->global_rank);
    if (!j->global_rank) {
        job_free(j);
        return -ENOMEM;
    }
    /* msg_check_assign proved every global rank is on exactly one node, and the spawn
     * slots bounded by JOB_SPAWN_MAX_UNIVERSE. */
    uint32_t universe = ja->nprocs;
    for (size_t n = 0; n < nnodes; n++)
        universe += ja->nodes[n]->spawn_slots;
    if (universe > ja->nprocs && grow_rank_maps(j, universe) < 0) {
        job_free(j);
        return -ENOMEM;
    }
    j->spawn_universe = universe;
    for (size_t n = 0, g = ja->nprocs; n < nnodes; n++) {
        const Tmpi__NodePlacement *np = ja->nodes[n];
        for (size_t l = 0; l < np->n_ranks; l++) {
            uint32_t w = np->ranks[l];
            j->node_of_rank[w] = (int32_t)n;
            j->local_rank_of[w] = (int32_t)l;
            if (n == ja->node) j->global_rank[l] = (int32_t)w;
        }
        /* the node's spawn slots: the next world ranks after the job's, local ranks after its
         * own */
        for (uint32_t k = 0; k < np->spawn_slots; k++, g++) {
            j->node_of_rank[g] = (int32_t)n;
            j->local_rank_of[g] = (int32_t)(np->n_ranks + k);
        }
    }
    /* the launcher's stdin comes only to rank 0's node */
    j->stdin_open = ja->stdin_open && j->node_of_rank[0] == (int32_t)ja->node;
    /* The agent opens the links and hands them to the host, whose netd reads them. */
    r = a->host_parts
            ? a->host_parts->net_new(j, ja->uid, (int)ja->node, nnodes, ja->nodes, &j->net)
            : job_link_new(j, ja->uid, (int)ja->node, nnodes, ja->nodes, &j->link);
    if (r < 0) {
        job_free(j);
        return r;
    }
    *ret = j;
    return 0;
}

void job_go(struct job *j)
{
    pthread_mutex_lock(&j->mu);
    j->go = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

void job_release(struct job *j)
{
    pthread_mutex_lock(&j->mu);
    j->released = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void app_free(struct agent *a, struct job_app *app)
{
    if (app->prog) progcache_release(&a->cache, app->prog);
    app->prog = NULL;
    if (app->argv)
        for (int i = 0; i < app->argc; i++)
            free(app->argv[i]);
    free(app->argv);
    free_strings(app->env);
    free(app->program_name);
    free(app->cwd);
}

void job_free(struct job *j)
{
    if (!j) return;
    /* the job host's parts first: they include the apps' argument sources */
    if (j->agent->host_parts) j->agent->host_parts->free(j);
    if (j->apps)
        for (uint32_t k = 0; k < j->napps; k++)
            app_free(j->agent, &j->apps[k]);
    free(j->apps);
    free_strings(j->env);
    free(j->program_name);
    free(j->cwd);
    if (j->member) job_member_forget(j->member);
    if (j->link) job_link_free(j->link);
    if (j->assign) tmpi__job_assign__free_unpacked(j->assign, NULL);
    free(j->ranks);
    free(j->global_rank);
    free(j->node_of_rank);
    free(j->local_rank_of);
    if (j->done_ev) event_free(j->done_ev);
    if (j->host) jobhost_free(j);
    jobhost_carriers_free(j);
    pthread_mutex_destroy(&j->out_mu);
    pthread_mutex_destroy(&j->drain_mu);
    pthread_cond_destroy(&j->drain_cv);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->client_mu);
    pthread_mutex_destroy(&j->children_mu);
    free(j);
}

int job_cancelled(struct job *j)
{
    return atomic_load_explicit(&j->cancelled, memory_order_acquire);
}

/* Wakes everything a rank of this job may be blocked on, so it notices the cancellation. */
static void wake_ranks(struct job *j)
{
    pthread_mutex_lock(&j->client_mu);
    if (j->client_created && j->client_ops.wake_all) j->client_ops.wake_all(j->client_state);
    pthread_mutex_unlock(&j->client_mu);
    pthread_mutex_lock(&j->drain_mu);
    atomic_fetch_add(&j->drain_gen, 1);
    pthread_cond_broadcast(&j->drain_cv);
    pthread_mutex_unlock(&j->drain_mu);
}

/* Records the first failure; mu held. Returns 1 if this call made the job fail. */
static int record_failure_locked(struct job *j, int rank, int status, const char *reason)
{
    if (j->failed) return 0;
    j->failed = 1;
    j->fail_rank = rank;
    j->exit_status = status;
    snprintf(j->reason, sizeof j->reason, "%s", reason);
    atomic_store_explicit(&j->cancelled, 1, memory_order_release);
    pthread_cond_broadcast(&j->cv);
    return 1;
}

/* Before any rank can see the job cancelled and unwind, stop deliveries from other nodes
 * into its buffers. */
static void stop_net_rx(struct job *j)
{
    if (j->net && !atomic_load_explicit(&j->ranks_ended, memory_order_acquire))
        j->agent->host_parts->net_stop_rx(j->net); /* j->net: a job host's */
}

void job_cancel(struct job *j, int status, const char *reason)
{
    if (j->host) {
        jobhost_cancel(j, status, reason);
        return;
    }
    stop_net_rx(j);
    pthread_mutex_lock(&j->mu);
    int first = record_failure_locked(j, -1, status, reason);
    pthread_cond_broadcast(&j->cv); /* spawned ranks waiting to run (job_spawn_wait_go) */
    pthread_mutex_unlock(&j->mu);
    if (first) log_notice("job %llu: %s", (unsigned long long)j->id, reason);
    wake_ranks(j);
}

/* Records the first failure (of global rank, -1: none) and tears the job down. */
void job_fail_rank(struct job *j, int rank, int status, const char *reason)
{
    stop_net_rx(j);
    pthread_mutex_lock(&j->mu);
    int first = record_failure_locked(j, rank, status, reason);
    pthread_mutex_unlock(&j->mu);
    if (first) log_info("job %llu: %s", (unsigned long long)j->id, reason);
    wake_ranks(j);
}

void job_detach(struct job *j, const char *reason)
{
    pthread_mutex_lock(&j->out_mu);
    j->bev = NULL;
    pthread_mutex_unlock(&j->out_mu);
    job_cancel(j, 1, reason);
}

int job_send(struct job *j, const Tmpi__Envelope *env)
{
    uint8_t *buf;
    size_t len;
    int r = frame_encode(env, FRAME_DEFAULT_MAX, &buf, &len);
    if (r < 0) return r;
    const struct job_host_parts *hp = j->agent->host_parts;
    int throttle = hp && hp->on_rank_thread();
    for (;;) {
        unsigned gen = atomic_load_explicit(&j->drain_gen, memory_order_acquire);
        pthread_mutex_lock(&j->out_mu);
        if (!j->bev) {
            pthread_mutex_unlock(&j->out_mu);
            free(buf);
            return -ENOTCONN;
        }
        if (!throttle || evbuffer_get_length(bufferevent_get_output(j->bev)) < JOB_OUTPUT_HIGH) {
            r = bufferevent_write(j->bev, buf, len) < 0 ? -ENOMEM : 0;
            pthread_mutex_unlock(&j->out_mu);
            free(buf);
            return r;
        }
        pthread_mutex_unlock(&j->out_mu);
        pthread_mutex_lock(&j->drain_mu);
        while (atomic_load_explicit(&j->drain_gen, memory_order_acquire) == gen &&
               !job_cancelled(j))
            pthread_cond_wait(&j->drain_cv, &j->drain_mu);
        pthread_mutex_unlock(&j->drain_mu);
        if (job_cancelled(j)) {
            free(buf);
            return -ECANCELED;
        }
    }
}

int job_wait_gate(struct job *j)
{
    pthread_mutex_lock(&j->mu);
    while (j->gate == 0)
        pthread_cond_wait(&j->cv, &j->mu);
    int open = j->gate > 0 && !job_cancelled(j);
    pthread_mutex_unlock(&j->mu);
    return open ? 0 : -ECANCELED;
}

static char *env_lookup(char **env, const char *name)
{
    size_t n = strlen(name);
    for (char **e = env; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

char *job_getenv(struct job *j, const char *name)
{
    return env_lookup(j->env, name);
}

char *job_app_getenv(struct job *j, const struct job_app *app, const char *name)
{
    char *v = app ? env_lookup(app->env, name) : NULL;
    return v ? v : env_lookup(j->env, name);
}

int job_start(struct job *j, struct program **progs)
{
    struct agent *a = j->agent;
    j->start_time = agent_now();
    /* the job holds the programs from now on; job_free releases what it still holds */
    for (uint32_t k = 0; k < j->napps; k++)
        j->apps[k].prog = progs[k];
    if (!a->host_parts) {
        /* The agent runs no user code: a process of the submitter's hosts the ranks. */
        int r = jobhost_start(j, j->assign); /* releases the programs */
        if (r < 0) return r;
        atomic_fetch_add(&a->jobs_started, 1);
        log_job(LOG_INFO, j->id, j->owner, "%u ranks of %s%s for %s (uid %u)", j->nprocs,
                j->program_name, j->napps > 1 ? " and other programs" : "", j->owner,
                (unsigned)j->uid);
        return 0;
    }
    return a->host_parts->start(j);
}

struct job *agent_job(struct agent *a, uint64_t id)
{
    for (struct job *j = a->jobs; j; j = j->next)
        if (j->id == id) return j;
    return NULL;
}
