#include "job.h"
#include "job_pools.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "carrier.h"
#include "carrier_join.h"
#include "frame.h"
#include "job_bind.h"
#include "job_id.h"
#include "job_limits.h"
#include "job_link.h"
#include "job_member.h"
#include "job_net.h"
#include "job_quota.h"
#include "job_signal.h"
#include "job_spawn.h"
#include "jobhost.h"
#include "log.h"
#include "msg_check.h"
#include "progcache.h"
#include "output.h"
#include "rank.h"
#include "rank_argv.h"

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
    if (s->nprocs < 1 || s->nprocs > cfg->max_ranks) {
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
    j->ranks = calloc(s->nprocs, sizeof *j->ranks);
    j->node_of_rank = calloc(s->world, sizeof *j->node_of_rank);
    j->local_rank_of = calloc(s->world, sizeof *j->local_rank_of);
    if (!j->apps || !j->ranks || !j->node_of_rank || !j->local_rank_of) oom = 1;
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
    r = a->job_host ? job_net_new(j, ja->uid, (int)ja->node, nnodes, ja->nodes, &j->net)
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
    if (app->args_ready) rank_argv_src_free(&app->args);
    app->args_ready = 0;
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
    if (j->apps)
        for (uint32_t k = 0; k < j->napps; k++)
            app_free(j->agent, &j->apps[k]);
    free(j->apps);
    free_strings(j->env);
    free(j->program_name);
    free(j->cwd);
    if (j->member) job_member_forget(j->member);
    if (j->net) job_net_free(j->net);
    if (j->link) job_link_free(j->link);
    if (j->assign) tmpi__job_assign__free_unpacked(j->assign, NULL);
    /* the job thread frees them after unloading; what a failed start left is freed here */
    for (uint32_t i = 0; j->ranks && i < j->nprocs; i++) {
        rank_argv_free(&j->ranks[i].args);
        rank_libc_free(&j->ranks[i].libc);
        rank_proc_free(&j->ranks[i].proc);
    }
    job_spawn_free(j); /* after the job thread: rank queries read its ranks until then */
    free(j->ranks);
    free(j->global_rank);
    free(j->node_of_rank);
    free(j->local_rank_of);
    job_bind_free(j);
    if (j->done_ev) event_free(j->done_ev);
    if (j->host) jobhost_free(j);
    jobhost_carriers_free(j);
    pthread_mutex_destroy(&j->out_mu);
    pthread_mutex_destroy(&j->drain_mu);
    pthread_cond_destroy(&j->drain_cv);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->client_mu);
    if (j->children) carrier_children_free(j); /* threads nobody joined */
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
        job_net_stop_rx(j->net);
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

void job_fail(struct job *j, struct rank *r, int kind, int code, const char *msg)
{
    char reason[400];
    int status;
    switch (kind) {
    case RANK_END_ABORT:
        status = 128 + SIGABRT;
        snprintf(reason, sizeof reason, "rank %d %s", r->info.rank, msg ? msg : "aborted");
        break;
    case RANK_END_MPI_ABORT:
        status = code;
        snprintf(reason, sizeof reason, "rank %d: %s", r->info.rank,
                 msg ? msg : "MPI_Abort called");
        break;
    case RANK_END_FAULT:
        status = code ? code : 1;
        snprintf(reason, sizeof reason, "rank %d failed: %s", r->info.rank, msg ? msg : "fault");
        break;
    default:
        status = code;
        if (msg)
            snprintf(reason, sizeof reason, "rank %d %s", r->info.rank, msg);
        else
            snprintf(reason, sizeof reason, "rank %d exited with code %d", r->info.rank, code);
        break;
    }
    if (j->nnodes > 1) {
        /* across nodes, the launcher also learns where the rank ran */
        size_t len = strlen(reason);
        snprintf(reason + len, sizeof reason - len, " (on %s)", j->agent->cfg.name);
    }
    stop_net_rx(j);
    pthread_mutex_lock(&j->mu);
    int first = record_failure_locked(j, r->info.rank, status, reason);
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
    int throttle = rank_current() != NULL;
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

static void send_rank_exit(struct job *j, struct rank *r)
{
    Tmpi__RankExit re = TMPI__RANK_EXIT__INIT;
    re.rank = (uint32_t)r->info.rank;
    re.kind = (Tmpi__ExitKind)r->end_kind;
    re.code = r->end_code;
    re.message = r->end_msg;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_RANK_EXIT;
    env.rank_exit = &re;
    (void)job_send(j, &env);
}

void job_rank_finished(struct job *j, struct rank *r)
{
    int kind = r->end_kind;
    if (kind == RANK_END_CODE && r->end_code != 0)
        job_fail(j, r, kind, r->end_code, r->end_msg[0] ? r->end_msg : NULL);
    else if (kind == RANK_END_CODE && r->mpi_phase == TMPI_PHASE_INIT && !job_cancelled(j))
        job_fail(
            j, r, kind, 1,
            "exited without calling MPI_Finalize (or MPI_Session_finalize of an open session)");
    else if (kind == RANK_END_ABORT || kind == RANK_END_FAULT || kind == RANK_END_MPI_ABORT)
        job_fail(j, r, kind, r->end_code, r->end_msg[0] ? r->end_msg : NULL);
    send_rank_exit(j, r);
    atomic_store(&r->finished, 1);
    pthread_mutex_lock(&j->mu);
    j->nfinished++;
    /* the job thread waits for spawned ranks too (job_spawn.h) */
    if (j->nfinished >= j->nprocs) pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void send_job_end(struct job *j)
{
    pthread_mutex_lock(&j->mu);
    int already = j->end_sent;
    j->end_sent = 1;
    Tmpi__JobEnd je = TMPI__JOB_END__INIT;
    je.job_id = j->id;
    je.exit_status = j->failed ? j->exit_status : 0;
    je.failed_rank = j->failed ? j->fail_rank : -1;
    je.reason = j->failed ? j->reason : "";
    pthread_mutex_unlock(&j->mu);
    if (already) return;
    if (j->before_end) j->before_end(j);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_END;
    env.job_end = &je;
    (void)job_send(j, &env);
}

static void send_job_started(struct job *j)
{
    Tmpi__JobStarted js = TMPI__JOB_STARTED__INIT;
    js.job_id = j->id;
    js.nprocs = j->nprocs;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_STARTED;
    env.job_started = &js;
    (void)job_send(j, &env);
}

/* Each program's arguments, shared by its ranks (rank_argv.h). */
static int prepare_args(struct job *j)
{
    for (uint32_t k = 0; k < j->napps; k++) {
        struct job_app *app = &j->apps[k];
        int rc = rank_argv_src_init(&app->args, app->argc, app->argv);
        if (rc < 0) {
            char reason[160];
            snprintf(reason, sizeof reason, "cannot prepare the arguments of the ranks on %s: %s",
                     j->agent->cfg.name, strerror(-rc));
            job_cancel(j, 1, reason);
            return rc;
        }
        app->args_ready = 1;
    }
    return 0;
}

/* Loads every rank's copy from its program (loader.h): copies of one program share its
 * read-only pages through one template memfd, closed once all are loaded (their mappings keep
 * it). */
static int load_images(struct job *j)
{
    char err[400], reason[480], label[64];
    long maps_first = -1;
    int rc0 = prepare_args(j);
    if (rc0 == 0) rc0 = job_pools_size(j);
    if (rc0 < 0) return rc0;
    for (uint32_t i = 0; i < j->nprocs; i++) {
        struct rank *r = &j->ranks[i];
        int g = r->info.rank;
        struct job_app *app = r->app;
        int rc = 0;
        if (!app->image_open) {
            snprintf(label, sizeof label, "tmpi-job%llu-program%d", (unsigned long long)j->id,
                     r->info.appnum);
            /* libraries the admin (tmpid.conf) and the job (-x TMPI_SHARED_LIBS) keep shared */
            const char *mine = job_app_getenv(j, app, "TMPI_SHARED_LIBS");
            char *shared = NULL;
            if (asprintf(&shared, "%s %s",
                         j->agent->cfg.shared_libraries ? j->agent->cfg.shared_libraries : "",
                         mine ? mine : "") < 0) {
                shared = NULL;
                rc = -ENOMEM;
                snprintf(err, sizeof err, "out of memory");
            }
            /* the programs opened before lend their libraries' masters (image_private.h) */
            struct image_private_lenders lend = {0};
            const struct image_private **earlier = calloc(j->napps, sizeof *earlier);
            if (!earlier && rc == 0) {
                rc = -ENOMEM;
                snprintf(err, sizeof err, "out of memory");
            }
            for (uint32_t k = 0; earlier && k < j->napps; k++)
                if (j->apps[k].image_open) earlier[lend.n++] = &j->apps[k].image.priv;
            lend.sets = earlier;
            if (rc == 0)
                rc = image_program_open_after(&app->image, app->prog->bytes, app->prog->size, label,
                                              shared, j->agent->cfg.private_libraries, &lend, err,
                                              sizeof err);
            free(earlier);
            free(shared);
            if (rc == 0 && app->image.priv.n)
                log_job(LOG_INFO, j->id, j->owner, "%s: %zu libraries copied per rank",
                        app->program_name, app->image.priv.n);
            if (rc == 0 && app->image.priv_note[0])
                log_job(LOG_NOTICE, j->id, j->owner, "%s: %s", app->program_name,
                        app->image.priv_note);
            app->image_open = rc == 0;
            if (rc == 0 && app->image.why_dlopen[0])
                log_job(LOG_INFO, j->id, j->owner, "each copy of %s is dlopen'ed: %s",
                        app->program_name, app->image.why_dlopen);
        }
        if (rc == 0) {
            snprintf(label, sizeof label, "tmpi-job%llu-rank%d", (unsigned long long)j->id, g);
            rank_vars_init(&r->vars);
            rc = image_program_load(&app->image, label, &r->vars, &r->image, err, sizeof err);
        }
        if (rc < 0) {
            snprintf(reason, sizeof reason, "cannot load the program for rank %d on %s: %s", g,
                     j->agent->cfg.name, err);
            job_cancel(j, 1, reason);
            return rc;
        }
        if (job_cancelled(j)) return -ECANCELED;
        /* The maps one image takes, measured between the first and second (the first also
         * maps the libraries the program needs): checked once, before the limit is hit deep
         * into a big job's loading. */
        if (i == 0) maps_first = job_limits_maps_now();
        if (i == 1 && maps_first >= 0) {
            long now = job_limits_maps_now();
            char why[96];
            long stack_maps = job_limits_stack_maps(carrier_wanted(j, why, sizeof why) > 0);
            if (now >= 0 &&
                (rc = job_limits_check(j->nprocs, 2, now,
                                       now - maps_first + rank_argv_maps(&r->app->args), stack_maps,
                                       r->image.fd >= 0, err, sizeof err))) {
                snprintf(reason, sizeof reason, "cannot load %u ranks on %s: %s", j->nprocs,
                         j->agent->cfg.name, err);
                job_cancel(j, 1, reason);
                return rc;
            }
        }
    }
    for (uint32_t k = 0; k < j->napps; k++)
        if (j->apps[k].image_open) image_program_loaded(&j->apps[k].image);
    return 0;
}

/* The program a global rank runs (apps hold ascending blocks of ranks). */
static uint32_t app_of_rank(const struct job *j, int g)
{
    uint32_t k = 0;
    while (k + 1 < j->napps && (uint32_t)g >= j->apps[k + 1].first_rank)
        k++;
    return k;
}

static void init_rank_info(struct job *j, uint32_t i)
{
    struct rank *r = &j->ranks[i];
    int g = job_world_rank(j, i);
    uint32_t app = app_of_rank(j, g);
    r->job = j;
    r->app = &j->apps[app];
    r->image.fd = -1;
    r->info = (struct tmpi_rank_info){
        .appnum = (int)app,
        .job_id = j->id,
        .rank = g,
        .size = (int)j->world_size,
        .node = j->node,
        .nnodes = j->nnodes,
        .local_rank = (int)i,
        .local_size = (int)j->nprocs,
        .hostname = j->agent->cfg.name,
        .node_of_rank = j->node_of_rank,
        .local_rank_of = j->local_rank_of,
        /* A member that is the job's only node (a one-node Slurm allocation coordinated from
         * elsewhere) has no link: to the ranks it is a job on one node. */
        .net = j->nnodes > 1 ? j->net : NULL,
        .universe = (int)job_spawn_universe(j),
    };
}

static uint32_t start_ranks(struct job *j)
{
    char why[96], reason[480];
    j->host_umask = rank_proc_host_umask();
    int carried = carrier_wanted(j, why, sizeof why);
    if (carried < 0 ||
        job_bind_prepare(j, carried ? carrier_count(j) : j->nprocs, reason, sizeof reason) < 0) {
        job_cancel(j, 1, carried < 0 ? why : reason);
        job_open_gate(j, 0);
        return 0;
    }
    if (carried) return carriers_start(j);
    log_debug("job %llu: one thread per rank (%s)", (unsigned long long)j->id, why);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, j->agent->cfg.rank_stack_size);
    uint32_t started = 0;
    for (; started < j->nprocs; started++) {
        struct rank *r = &j->ranks[started];
        int rc = pthread_create(&r->thread, &attr, rank_thread_main, r);
        if (rc != 0) {
            snprintf(reason, sizeof reason, "cannot start rank %u on %s: %s%s", started,
                     j->agent->cfg.name, strerror(rc), job_limits_thread_hint(rc));
            job_cancel(j, 1, reason);
            break;
        }
        r->thread_started = 1;
        /* pinned before the gate opens: no user code runs unpinned */
        if (job_bind_thread(j, started, r->thread, reason, sizeof reason) < 0) {
            job_cancel(j, 1, reason);
            started++;
            break;
        }
    }
    pthread_attr_destroy(&attr);
    if (started == j->nprocs && !job_cancelled(j)) job_bind_report(j);
    /* All or nothing: the gate opens only if every rank thread exists. */
    job_open_gate(j, started == j->nprocs);
    return started;
}

void job_open_gate(struct job *j, int all_started)
{
    pthread_mutex_lock(&j->mu);
    j->gate = (all_started && !job_cancelled(j)) ? 1 : -1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void deadline_in(struct timespec *ts, unsigned sec)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += sec;
}

/* Waits for the started ranks, enforcing the timeout and the kill grace. */
static void wait_ranks(struct job *j, uint32_t started)
{
    struct timespec deadline;
    int have_deadline = j->timeout_sec > 0;
    if (have_deadline) deadline_in(&deadline, j->timeout_sec);
    int grace_armed = 0;

    pthread_mutex_lock(&j->mu);
    while (j->nfinished < started + job_spawn_started_locked(j)) {
        if (job_spawn_serve_locked(j)) continue;
        if (job_cancelled(j) && !grace_armed) {
            /* Ranks outside libtmpi cannot be interrupted; after the grace the launcher is
             * told anyway and the job stays "ending" until they stop. */
            deadline_in(&deadline, j->agent->cfg.kill_grace_sec);
            have_deadline = grace_armed = 1;
        }
        int rc = have_deadline ? pthread_cond_timedwait(&j->cv, &j->mu, &deadline)
                               : pthread_cond_wait(&j->cv, &j->mu);
        if (rc != ETIMEDOUT) continue;
        if (!grace_armed) {
            char reason[128];
            snprintf(reason, sizeof reason, "job timed out after %u s", j->timeout_sec);
            pthread_mutex_unlock(&j->mu);
            job_cancel(j, 124, reason);
            pthread_mutex_lock(&j->mu);
        } else {
            uint32_t left = started + job_spawn_started_locked(j) - j->nfinished;
            pthread_mutex_unlock(&j->mu);
            log_warning("job %llu: %u rank(s) still running %u s after the job was torn down",
                        (unsigned long long)j->id, left, j->agent->cfg.kill_grace_sec);
            send_job_end(j);
            pthread_mutex_lock(&j->mu);
            have_deadline = 0;
        }
    }
    pthread_mutex_unlock(&j->mu);
}

/* A member job, loaded or not: tells the coordinator, then waits for JobGo (every member
 * loaded and linked) or the end.  1 when the ranks may start. */
static int member_loaded(struct job *j, int ok)
{
    Tmpi__JobLoaded jl = TMPI__JOB_LOADED__INIT;
    char error[sizeof j->reason];
    pthread_mutex_lock(&j->mu);
    snprintf(error, sizeof error, "%s", ok ? "" : j->reason);
    pthread_mutex_unlock(&j->mu);
    jl.uid = j->net->uid;
    jl.ok = ok;
    jl.error = error;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_LOADED;
    env.job_loaded = &jl;
    (void)job_send(j, &env);
    if (!ok) return 0;
    pthread_mutex_lock(&j->mu);
    while (!j->go && !job_cancelled(j))
        pthread_cond_wait(&j->cv, &j->mu);
    int go = j->go && !job_cancelled(j);
    pthread_mutex_unlock(&j->mu);
    return go;
}

/* A member job whose ranks have ended reports it (JobEnd), then, if it succeeded, keeps its
 * links open until every member ended (JobRelease): another node may still be reading. */
static void member_ranks_ended(struct job *j)
{
    send_job_end(j);
    atomic_store(&j->ranks_ended, 1);
    pthread_mutex_lock(&j->mu);
    while (!j->released && !j->failed)
        pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
}

void job_send_link_traffic(struct job *j)
{
    Tmpi__ChannelTraffic ch[2];
    Tmpi__ChannelTraffic *chp[2] = {&ch[0], &ch[1]};
    job_net_traffic(j->net, ch);
    Tmpi__LinkTraffic lt = TMPI__LINK_TRAFFIC__INIT;
    lt.n_channels = 2;
    lt.channels = chp;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_LINK_TRAFFIC;
    env.link_traffic = &lt;
    (void)job_send(j, &env);
}
/* The job's end when its images cannot be unloaded: JobEnd (and JobUnloaded), then the job
 * host leaves without unloading (jobhost_abandon).  Job thread only; never returns. */
static void end_without_unload(struct job *j) __attribute__((noreturn));

static void send_job_unloaded(struct job *j)
{
    Tmpi__JobUnloaded ju = TMPI__JOB_UNLOADED__INIT;
    ju.uid = j->net->uid;
    ju.failed_rank = -1;
    ju.reason = "";
    pthread_mutex_lock(&j->mu);
    if (j->failed_in_unload) {
        ju.exit_status = j->exit_status;
        ju.failed_rank = j->fail_rank;
        ju.reason = j->reason;
    }
    pthread_mutex_unlock(&j->mu);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_UNLOADED;
    env.job_unloaded = &ju;
    (void)job_send(j, &env);
}

/* The job thread only loads, waits and unloads, but glibc's dlclose keeps arrays the size of
 * the whole link map on the stack (_dl_close_worker's maps[] of every loaded object and
 * _dl_sort_maps' work arrays: tens of bytes per object, one object per rank).  A fixed
 * 256 KiB ran out between 8,192 and 16,384 ranks and the last unload overflowed the stack
 * (SIGSEGV after the job's output); only the pages a job's size needs are ever touched. */
#define JOB_THREAD_STACK_BASE (256 * 1024)
#define JOB_THREAD_STACK_PER_RANK 64

static size_t job_thread_stack_size(uint32_t nprocs)
{
    return JOB_THREAD_STACK_BASE + (size_t)nprocs * JOB_THREAD_STACK_PER_RANK;
}

static double clock_s(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void job_rank_unload(struct rank *r)
{
    /* The copy's destructors (atexit handlers, static destructors) run now: whatever they
     * print goes to the launcher as the rank's output. */
    r->unloader = pthread_self();
    r->unloading = 1;
    rank_set_current(r);
    image_finish(&r->image);
    rank_set_current(NULL);
    rank_argv_free(&r->args);
    rank_proc_free(&r->proc);
    output_flush(r);
}

static void *job_thread(void *arg)
{
    struct job *j = arg;
    struct agent *a = j->agent;

    int spawn_ok = job_spawn_prepare(j, &a->cfg, a->ncpus) == 0;
    for (uint32_t i = 0; i < j->nprocs; i++)
        init_rank_info(j, i);
    uint32_t started = 0;
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    int run = spawn_ok && load_images(j) == 0;
    double t_load = clock_s(CLOCK_MONOTONIC), c_load = clock_s(CLOCK_THREAD_CPUTIME_ID);
    double t_start = t_load;
    if (j->net) run = member_loaded(j, run);
    if (run) {
        atomic_store(&j->state, JOB_RUNNING);
        if (!j->net) send_job_started(j);
        started = start_ranks(j);
        t_start = clock_s(CLOCK_MONOTONIC);
        wait_ranks(j, started);
    }
    job_spawn_close(j);
    double t_run = clock_s(CLOCK_MONOTONIC);
    if (j->net) member_ranks_ended(j);
    atomic_store(&j->state, JOB_ENDING);
    if (j->cpool)
        carriers_join(j);
    else
        for (uint32_t i = 0; i < started; i++)
            pthread_join(j->ranks[i].thread, NULL);
    job_spawn_join(j);
    /* No frame may reach libtmpi once its state is gone. */
    if (j->net) job_net_close(j->net);

    /* libclient's per-job state goes before the images: the last dlclose unloads libtmpi. */
    pthread_mutex_lock(&j->client_mu);
    if (j->client_created && j->client_ops.destroy) j->client_ops.destroy(j->client_state);
    j->client_created = 0;
    pthread_mutex_unlock(&j->client_mu);
    carriers_free(j);
    job_signal_close(j);
    int left = atomic_load_explicit(&j->child_threads, memory_order_acquire);
    if (left > 0) {
        /* Unloading would pull the code from under them: the process ends instead, and they
         * with it; the images' destructors and atexit handlers do not run. */
        log_job(LOG_NOTICE, j->id, j->owner,
                "%d thread(s) the ranks started still run: the job ends without unloading", left);
        end_without_unload(j);
    }
    for (uint32_t i = 0; i < j->nprocs; i++)
        job_rank_unload(&j->ranks[i]);
    job_spawn_unload(j);

    /* what the rank count costs, phase by phase (docs/ARCHITECTURE.md "How many ranks") */
    log_job(LOG_DEBUG, j->id, j->owner,
            "%u ranks: loaded in %.3f s (%.3f s CPU), started in %.3f s, ran %.3f s, ended in "
            "%.3f s",
            j->nprocs, t_load - t0, c_load - c0, t_start - t_load, t_run - t_start,
            clock_s(CLOCK_MONOTONIC) - t_run);
    /* under mu: a cancel from the loop thread (the launcher's, a timeout) may still record
     * the first failure now */
    pthread_mutex_lock(&j->mu);
    int failed = j->failed;
    pthread_mutex_unlock(&j->mu);
    if (failed) atomic_fetch_add(&a->jobs_failed, 1);
    send_job_end(j);
    if (j->net) {
        job_send_link_traffic(j); /* the last count: the host leaves after JobUnloaded */
        send_job_unloaded(j);
    }
    for (uint32_t k = 0; k < j->napps; k++) {
        if (j->apps[k].image_open) image_program_close(&j->apps[k].image);
        j->apps[k].image_open = 0;
        progcache_release(&a->cache, j->apps[k].prog);
        j->apps[k].prog = NULL;
    }
    event_active(j->done_ev, 0, 0);
    return NULL;
}

static void end_without_unload(struct job *j)
{
    if (j->failed) atomic_fetch_add(&j->agent->jobs_failed, 1);
    send_job_end(j);
    if (j->net) send_job_unloaded(j);
    jobhost_abandon();
    for (;;)
        pause();
}

void job_end_in_unload(struct job *j, struct rank *r, int kind, int code, const char *msg)
{
    char why[160];
    if (kind == RANK_END_CODE) {
        snprintf(why, sizeof why, "exited with code %d in an atexit handler or destructor", code);
        msg = why;
    }
    if (!(kind == RANK_END_CODE && code == 0)) {
        job_fail(j, r, kind, code, msg);
        /* a member's JobEnd went before the unload: its JobUnloaded carries the failure */
        pthread_mutex_lock(&j->mu);
        j->failed_in_unload = j->failed;
        pthread_mutex_unlock(&j->mu);
    }
    output_flush(r);
    end_without_unload(j);
}

static void job_done_cb(evutil_socket_t fd, short what, void *arg)
{
    struct job *j = arg;
    pthread_join(j->thread, NULL);
    agent_job_done(j->agent, j);
}

int job_start(struct job *j, struct program **progs)
{
    struct agent *a = j->agent;
    j->start_time = agent_now();
    /* the job holds the programs from now on; job_free releases what it still holds */
    for (uint32_t k = 0; k < j->napps; k++)
        j->apps[k].prog = progs[k];
    if (!a->job_host) {
        /* The agent runs no user code: a process of the submitter's hosts the ranks. */
        int r = jobhost_start(j, j->assign); /* releases the programs */
        if (r < 0) return r;
        atomic_fetch_add(&a->jobs_started, 1);
        log_job(LOG_INFO, j->id, j->owner, "%u ranks of %s%s for %s (uid %u)", j->nprocs,
                j->program_name, j->napps > 1 ? " and other programs" : "", j->owner,
                (unsigned)j->uid);
        return 0;
    }
    j->done_ev = event_new(a->base, -1, 0, job_done_cb, j);
    if (!j->done_ev) return -ENOMEM;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, job_thread_stack_size(j->nprocs));
    int rc = pthread_create(&j->thread, &attr, job_thread, j);
    pthread_attr_destroy(&attr);
    if (rc != 0) return -rc;
    atomic_fetch_add(&a->jobs_started, 1);
    log_job(LOG_INFO, j->id, j->owner, "%u ranks of %s%s for %s (uid %u)", j->nprocs,
            j->program_name, j->napps > 1 ? " and other programs" : "", j->owner, (unsigned)j->uid);
    return 0;
}
