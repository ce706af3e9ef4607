#include "control.h"

#include <errno.h>
#include <stdarg.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "allow.h"
#include "cgroup.h"
#include "cluster.h"
#include "frame.h"
#include "job.h"
#include "job_coord.h"
#include "job_ranks.h"
#include "job_history.h"
#include "job_info.h"
#include "job_link.h"
#include "job_signal.h"
#include "job_quota.h"
#include "jobhost.h"
#include "listen_socket.h"
#include "log.h"
#include "mesh.h"
#include "msg_check.h"
#include "progcache.h"
#include "progset.h"
#include "query_table.h"
#include "tmpi_config.h"

/* Connections root and the agent's user may open beyond max_connections: a flood of other
 * users' connections never locks the administrator out of tmpictl. */
#define CONTROL_ADMIN_RESERVE 32
/* Bytes of unfinished frames each connection may hold before they count against
 * max_buffered_input: every request but a job submission fits, so a flood of large partial
 * frames never stops a small request of someone else. */
#define CONTROL_FREE_INPUT (64u << 10)
/* A connection with a running job also carries the job's output (throttled at 4 MiB, one
 * frame over at most): that much more may wait for its launcher before max_unread_replies. */
#define CONTROL_JOB_OUTPUT_ALLOWANCE (12u << 20)
/* How often the deadlines are looked at: they are whole seconds. */
#define CONTROL_SWEEP_MS 250
/* Refusals of one kind are logged the first time and then once every this many. */
#define CONTROL_LOG_EVERY 100
/* Malformed frames are logged at most once in this many seconds. */
#define CONTROL_VIOLATION_LOG_SEC 1.0

/* The limits, in the order tmpictl status lists them. */
enum control_limit {
    LIM_CONNECTIONS,
    LIM_CONNECTIONS_PER_USER,
    LIM_IDLE_TIMEOUT,
    LIM_MESSAGE_TIMEOUT,
    LIM_BUFFERED_INPUT,
    LIM_UNREAD_REPLIES,
    LIM_FRAME_SIZE,
    LIM_ARGS_SIZE,
    LIM_ENV_SIZE,
    LIM_JOBS,
    LIM_JOBS_PER_USER,
    LIM_COUNT
};

static const char *const limit_names[LIM_COUNT] = {
    "max_connections",    "max_connections_per_user",
    "idle_timeout",       "message_timeout",
    "max_buffered_input", "max_unread_replies",
    "max_frame_size",     "max_args_size",
    "max_env_size",       "max_jobs",
    "max_jobs_per_user",
};

/* One tool connection; loop thread only. */
struct conn {
    struct agent *a;
    struct bufferevent *bev;
    uid_t uid;
    gid_t gid;
    pid_t pid;
    struct job *job;     /* submitted by this connection; started or awaiting its program */
    struct coord *coord; /* or a job across several nodes this agent coordinates */
    int job_started;
    /* a tmpictl nodes or jobs --all in progress (cluster.h) */
    struct cluster_query *query;
    struct progset progs;   /* the job's programs, pinned or being received */
    int uploading;          /* a program's bytes are being received (counted in nuploads) */
    int closing;            /* close once the output is flushed */
    int admin;              /* root or the agent's user */
    struct mesh_conn *ping; /* a tmpictl ping in progress */
    struct ranks_waiter *ranks_wait; /* a tmpictl ranks in progress (job_ranks.h) */
    uint64_t ranks_job;              /* its job id */
    double last_active;              /* monotonic s: a byte arrived or the output drained */
    double partial_since; /* monotonic s: the first byte of the frame being received; 0: none */
    size_t charged;       /* input bytes counted in control_state.buffered */
    struct conn *prev, *next;
};

/* Loop thread only. */
static struct {
    unsigned nconns;
    unsigned nuploads; /* submissions receiving their program: they count as jobs */
    struct conn *conns;
    int draining;         /* shutting down: the loop ends when the last connection is gone */
    int socket_inherited; /* the listener came from systemd (listen_socket.h) */
    size_t buffered;      /* input bytes beyond CONTROL_FREE_INPUT of all connections */
    int trim;             /* a connection that held large input was freed: give the memory back */
    struct event *sweep;  /* the deadlines (idle_timeout, message_timeout) */
    uint64_t refused[LIM_COUNT];
    double violation_logged;      /* when a malformed frame was last logged; 0: never */
    uint64_t violations_unlogged; /* malformed frames since, not logged */
} control_state;

/* Counts a refusal of limit lim; logs the first and one in CONTROL_LOG_EVERY. */
__attribute__((format(printf, 2, 3))) static void refusal(enum control_limit lim, const char *fmt,
                                                          ...)
{
    uint64_t n = ++control_state.refused[lim];
    if (n != 1 && n % CONTROL_LOG_EVERY != 0) return;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_warning("control: %s (%s; %llu refusal(s) of this limit so far)", msg, limit_names[lim],
                (unsigned long long)n);
}

/* Connections of uid, for max_connections_per_user. */
static unsigned conns_of(uid_t uid)
{
    unsigned n = 0;
    for (const struct conn *c = control_state.conns; c; c = c->next)
        n += c->uid == uid;
    return n;
}

/* Submissions of uid receiving their programs, for max_jobs_per_user. */
static unsigned uploads_of(uid_t uid)
{
    unsigned n = 0;
    for (const struct conn *c = control_state.conns; c; c = c->next)
        n += c->uid == uid && c->uploading;
    return n;
}

/* An Error frame straight on the socket, for a connection being dropped: best effort, never
 * waits (the client may read nothing at all). */
static void send_error_now(int fd, int code, const char *msg)
{
    Tmpi__Error e = TMPI__ERROR__INIT;
    e.code = code;
    e.message = (char *)msg;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_ERROR;
    env.error = &e;
    uint8_t *buf;
    size_t len;
    if (frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &len) < 0) return;
    (void)send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    free(buf);
}

static void upload_free(struct conn *c)
{
    if (c->uploading) control_state.nuploads--;
    c->uploading = 0;
    progset_free(&c->progs);
}

static void conn_free(struct conn *c)
{
    mesh_ping_forget(c->ping);
    c->ping = NULL;
    cluster_query_cancel(c->query);
    c->query = NULL;
    ranks_waiter_cancel(c->ranks_wait);
    c->ranks_wait = NULL;
    if (c->coord) {
        coord_free(c->coord);
        c->coord = NULL;
    }
    if (c->job) {
        if (c->job_started) {
            c->job->conn = NULL;
            job_detach(c->job, "the launcher disconnected");
        } else {
            job_free(c->job);
        }
        c->job = NULL;
    }
    upload_free(c);
    control_state.buffered -= c->charged;
    if (c->charged) control_state.trim = 1;
    bufferevent_free(c->bev);
    control_state.nconns--;
    if (c->prev)
        c->prev->next = c->next;
    else
        control_state.conns = c->next;
    if (c->next) c->next->prev = c->prev;
    struct agent *a = c->a;
    free(c);
    if (control_state.draining && !control_state.conns) event_base_loopbreak(a->base);
}

void control_forget_job(struct conn *c)
{
    c->job = NULL;
    c->job_started = 0;
}

static void conn_close_after_flush(struct conn *c)
{
    c->closing = 1;
    bufferevent_disable(c->bev, EV_READ);
    if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) conn_free(c);
}

static void conn_send(struct conn *c, const Tmpi__Envelope *env)
{
    uint8_t *buf;
    size_t len;
    int r = frame_encode(env, c->a->cfg.max_frame_size, &buf, &len);
    if (r < 0) {
        /* Never no answer at all: a client waiting for its reply would wait for ever. */
        char msg[200];
        snprintf(msg, sizeof msg, "the %s reply is %s", frame_msg_name(env),
                 r == -EMSGSIZE ? "larger than max_frame_size" : "too large: out of memory");
        log_warning("control: reply to pid %d: %s", (int)c->pid, msg);
        Tmpi__Error e = TMPI__ERROR__INIT;
        e.code = r;
        e.message = msg;
        Tmpi__Envelope err = TMPI__ENVELOPE__INIT;
        err.msg_case = TMPI__ENVELOPE__MSG_ERROR;
        err.error = &e;
        if (env->msg_case == TMPI__ENVELOPE__MSG_ERROR ||
            frame_encode(&err, c->a->cfg.max_frame_size, &buf, &len) < 0)
            return;
    }
    bufferevent_write(c->bev, buf, len);
    free(buf);
}

/* Closes c now, whatever it has queued, telling the client why if nothing else is queued
 * before the message (else the message would land inside another frame). */
static void conn_drop(struct conn *c, int code, const char *msg)
{
    if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
        send_error_now(bufferevent_getfd(c->bev), code, msg);
    conn_free(c);
}

static void conn_error(struct conn *c, int code, const char *msg)
{
    Tmpi__Error e = TMPI__ERROR__INIT;
    e.code = code;
    e.message = (char *)msg;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_ERROR;
    env.error = &e;
    conn_send(c, &env);
}

/* A protocol violation: tell the client, log, count, close. */
static void conn_violation(struct conn *c, const char *msg)
{
    atomic_fetch_add(&c->a->bad_frames, 1);
    /* A user can send malformed frames as fast as they connect: at most one line per
     * CONTROL_VIOLATION_LOG_SEC, saying how many went unlogged (all are counted). */
    double now = agent_now();
    if (control_state.violation_logged > 0 &&
        now - control_state.violation_logged < CONTROL_VIOLATION_LOG_SEC) {
        control_state.violations_unlogged++;
    } else {
        log_warning("control: closing connection of pid %d (uid %u): %s (%llu more malformed "
                    "frame(s) since the last such line)",
                    (int)c->pid, (unsigned)c->uid, msg,
                    (unsigned long long)control_state.violations_unlogged);
        control_state.violation_logged = now;
        control_state.violations_unlogged = 0;
    }
    conn_error(c, -EPROTO, msg);
    conn_close_after_flush(c);
}

static int is_admin(const struct conn *c)
{
    return c->admin;
}

/* The coordinated job sent its JobEnd; the connection stays for the launcher to close. */
static void coord_done(void *arg)
{
    struct conn *c = arg;
    c->coord = NULL;
    c->job_started = 0;
}

/* Every program of the job is pinned (progs: one per program, ours to hand over). */
static void start_job(struct conn *c, struct program **progs)
{
    if (c->coord) {
        c->job_started = 1;
        coord_start(c->coord, progs); /* may end (and call coord_done) at once */
        return;
    }
    struct job *j = c->job;
    j->gid = c->gid;
    int r = job_start(j, progs);
    free(progs);
    if (r < 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "cannot start the job: %s", strerror(-r));
        log_error("job %llu: %s", (unsigned long long)j->id, msg);
        conn_error(c, r, msg);
        c->job = NULL;
        job_free(j);
        conn_close_after_flush(c);
        return;
    }
    c->job_started = 1;
    j->conn = c;
    j->next = c->a->jobs;
    c->a->jobs = j;
    c->a->njobs++;
    agent_notify_status(c->a);
}

/* Asks for the next program the job lacks, or starts the job once it has them all. */
static void need_programs(struct conn *c)
{
    const uint8_t *hash;
    int r = progset_need(&c->progs, &hash);
    if (r < 0) {
        conn_error(c, -ENOMEM, "out of memory for the program");
        conn_close_after_flush(c);
        return;
    }
    if (r == 0) {
        if (c->uploading) control_state.nuploads--;
        c->uploading = 0;
        start_job(c, progset_take(&c->progs));
        return;
    }
    if (!c->uploading) control_state.nuploads++;
    c->uploading = 1;
    Tmpi__NeedProgram np = TMPI__NEED_PROGRAM__INIT;
    np.program_hash.data = (uint8_t *)hash;
    np.program_hash.len = PROGRAM_HASH_SIZE;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NEED_PROGRAM;
    env.need_program = &np;
    conn_send(c, &env);
}

static void on_submit(struct conn *c, const Tmpi__SubmitJob *s)
{
    struct agent *a = c->a;
    if (c->job || c->coord) {
        conn_violation(c, "one job per connection");
        return;
    }
    if (a->shutting_down) {
        conn_error(c, -ESHUTDOWN, "the agent is shutting down");
        conn_close_after_flush(c);
        return;
    }
    char err[256];
    struct job *j;
    if (msg_check_submit(s, err, sizeof err) < 0) {
        conn_error(c, -EINVAL, err);
        conn_close_after_flush(c);
        return;
    }
    if (!allow_submit(&a->cfg, c->uid, c->gid, err, sizeof err)) {
        log_notice("control: %s", err);
        conn_error(c, -EPERM, err);
        conn_close_after_flush(c);
        return;
    }
    struct cgroup_limits lim = {0};
    if (s->n_nodes > 0 && (s->mem_limit || s->cpu_limit_milli)) {
        snprintf(err, sizeof err, "--mem-limit and --cpu-limit apply to jobs on one node only");
        conn_error(c, -ENOTSUP, err);
        conn_close_after_flush(c);
        return;
    }
    if (s->n_nodes == 0 && cgroup_limits_resolve(&a->cfg, s->mem_limit, s->cpu_limit_milli, &lim,
                                                 err, sizeof err) < 0) {
        conn_error(c, -EINVAL, err);
        conn_close_after_flush(c);
        return;
    }
    size_t args = 0, envb = 0;
    for (size_t i = 0; i < s->n_args; i++)
        args += strlen(s->args[i]) + 1;
    for (size_t i = 0; i < s->n_env; i++)
        envb += strlen(s->env[i]->name) + (s->env[i]->value ? strlen(s->env[i]->value) : 0) + 2;
    /* every program's arguments and variables count (one copy each, held by the job) */
    for (size_t k = 0; k < s->n_apps; k++) {
        const Tmpi__JobApp *ap = s->apps[k];
        for (size_t i = 0; i < ap->n_args; i++)
            args += strlen(ap->args[i]) + 1;
        for (size_t i = 0; i < ap->n_env; i++)
            envb +=
                strlen(ap->env[i]->name) + (ap->env[i]->value ? strlen(ap->env[i]->value) : 0) + 2;
    }
    if (args > a->cfg.max_args_size || envb > a->cfg.max_env_size) {
        int is_args = args > a->cfg.max_args_size;
        snprintf(err, sizeof err, "job refused: %s of %zu bytes (%s is %zu)",
                 is_args ? "arguments" : "environment", is_args ? args : envb,
                 is_args ? "max_args_size" : "max_env_size",
                 is_args ? a->cfg.max_args_size : a->cfg.max_env_size);
        refusal(is_args ? LIM_ARGS_SIZE : LIM_ENV_SIZE, "uid %u: %s", (unsigned)c->uid, err);
        conn_error(c, -E2BIG, err);
        conn_close_after_flush(c);
        return;
    }
    int per_user;
    if (job_quota_admit(&a->cfg, a->jobs, a->njobs, c->uid, control_state.nuploads,
                        uploads_of(c->uid), &per_user, err, sizeof err) < 0) {
        refusal(per_user ? LIM_JOBS_PER_USER : LIM_JOBS, "uid %u: %s", (unsigned)c->uid, err);
        conn_error(c, -EBUSY, err);
        conn_close_after_flush(c);
        return;
    }
    int r;
    if (s->n_nodes > 0)
        r = coord_new(a, s, c->uid, c->gid, c->bev, coord_done, c, &c->coord, err, sizeof err);
    else
        r = job_new(a, s, c->uid, c->pid, c->bev, &j, err, sizeof err);
    if (r < 0) {
        if (r == -ENOMEM) snprintf(err, sizeof err, "out of memory");
        conn_error(c, r, err);
        conn_close_after_flush(c);
        return;
    }
    if (!c->coord) {
        c->job = j;
        j->mem_limit = lim.mem_max;
        j->cpu_limit_milli = lim.cpu_milli;
    }
    /* The programs: from the cache, else asked for one by one (each bounded by
     * max_program_size, checked by job_new / coord_new). */
    size_t n = s->n_apps ? s->n_apps : 1;
    if (progset_init(&c->progs, &a->cache, n) < 0) {
        conn_error(c, -ENOMEM, "out of memory");
        conn_close_after_flush(c);
        return;
    }
    for (size_t k = 0; k < s->n_apps; k++)
        progset_set(&c->progs, k, s->apps[k]->program_hash.data, s->apps[k]->program_size);
    if (s->n_apps == 0) progset_set(&c->progs, 0, s->program_hash.data, s->program_size);
    need_programs(c);
}

static void on_chunk(struct conn *c, const Tmpi__ProgramChunk *ch)
{
    if (!(c->job || c->coord) || c->job_started || !progset_fetching(&c->progs)) {
        conn_violation(c, "program bytes that were not asked for");
        return;
    }
    const char *why = NULL;
    int r = progset_chunk(&c->progs, ch, &why);
    if (r == -EPROTO) {
        conn_violation(c, why);
    } else if (r < 0) {
        conn_error(c, -ENOMEM, "out of memory for the program");
        conn_close_after_flush(c);
    } else if (r == 1) {
        need_programs(c);
    }
}

static void answer_status(struct conn *c, const struct query_row *row, const Tmpi__Envelope *req,
                          const struct query_job *job)
{
    struct agent *a = c->a;
    Tmpi__StatusReply st = TMPI__STATUS_REPLY__INIT;
    Tmpi__PoolInfo pool = TMPI__POOL_INFO__INIT;
    st.version = TMPI_VERSION;
    st.name = a->cfg.name;
    st.uptime_sec = agent_now() - a->start_time;
    st.pid = (uint32_t)getpid();
    pool.capacity_bytes = a->cfg.pool_size;
    pool.used_bytes = atomic_load_explicit(&a->pool.used, memory_order_relaxed);
    st.pool = &pool;
    st.jobs_started = atomic_load(&a->jobs_started);
    st.jobs_failed = atomic_load(&a->jobs_failed);
    st.bad_frames = atomic_load(&a->bad_frames);
    st.cached_programs = progcache_count(&a->cache);
    const char *listen_addr;
    mesh_stats(a->mesh, &listen_addr, &st.mesh_accepted, &st.mesh_auth_failures);
    st.mesh_listen = (char *)listen_addr;
    /* [mesh] transport as the agent applies it (the word of its last reload, agent.h) */
    char transport[120];
    const char *word = a->fabric_transport ? a->fabric_transport : a->cfg.transport;
    if (!a->fabric_probed)
        snprintf(transport, sizeof transport, "%s", word ? word : "auto");
    else if (!atomic_load_explicit(&a->fabric_done, memory_order_acquire))
        snprintf(transport, sizeof transport, "auto: looking for a fabric provider");
    else if (a->fabric[0])
        snprintf(transport, sizeof transport, "auto: ofi, provider %s", a->fabric);
    else
        snprintf(transport, sizeof transport, "auto: tcp (no fabric provider)");
    st.transport = transport;
    size_t np = mesh_npeers(a->mesh);
    struct mesh_peer_info *pi = np ? calloc(np, sizeof *pi) : NULL;
    Tmpi__PeerInfo *pmsg = np ? calloc(np, sizeof *pmsg) : NULL;
    Tmpi__PeerInfo **pptr = np ? calloc(np, sizeof *pptr) : NULL;
    if (np && pi && pmsg && pptr) {
        np = mesh_peers(a->mesh, pi, np);
        for (size_t i = 0; i < np; i++) {
            tmpi__peer_info__init(&pmsg[i]);
            pmsg[i].address = (char *)pi[i].address;
            pmsg[i].name = (char *)pi[i].name;
            pmsg[i].state = (char *)pi[i].state;
            pmsg[i].rtt_usec = pi[i].rtt_usec;
            pmsg[i].since_seen_sec = pi[i].since_seen_sec;
            pmsg[i].ups = pi[i].ups;
            pmsg[i].last_error = (char *)pi[i].last_error;
            pptr[i] = &pmsg[i];
        }
        st.n_peers = np;
        st.peers = pptr;
    }
    const struct agent_config *cfg = &a->cfg;
    const uint64_t value[LIM_COUNT] = {
        [LIM_CONNECTIONS] = cfg->max_connections,
        [LIM_CONNECTIONS_PER_USER] = cfg->max_connections_per_user,
        [LIM_IDLE_TIMEOUT] = cfg->idle_timeout_sec,
        [LIM_MESSAGE_TIMEOUT] = cfg->message_timeout_sec,
        [LIM_BUFFERED_INPUT] = cfg->max_buffered_input,
        [LIM_UNREAD_REPLIES] = cfg->max_unread_replies,
        [LIM_FRAME_SIZE] = cfg->max_frame_size,
        [LIM_ARGS_SIZE] = cfg->max_args_size,
        [LIM_ENV_SIZE] = cfg->max_env_size,
        [LIM_JOBS] = cfg->max_jobs,
        [LIM_JOBS_PER_USER] = job_quota_per_user(cfg),
    };
    Tmpi__LimitInfo lim[LIM_COUNT], *limp[LIM_COUNT];
    for (int i = 0; i < LIM_COUNT; i++) {
        tmpi__limit_info__init(&lim[i]);
        lim[i].name = (char *)limit_names[i];
        lim[i].value = value[i];
        lim[i].refused = control_state.refused[i];
        limp[i] = &lim[i];
    }
    lim[LIM_CONNECTIONS].in_use = control_state.nconns;
    lim[LIM_CONNECTIONS_PER_USER].in_use = conns_of(c->uid);
    lim[LIM_BUFFERED_INPUT].in_use = control_state.buffered;
    lim[LIM_JOBS].in_use = c->a->njobs + control_state.nuploads;
    lim[LIM_JOBS_PER_USER].in_use = job_quota_jobs_of(c->a->jobs, c->uid) + uploads_of(c->uid);
    st.n_limits = LIM_COUNT;
    st.limits = limp;
    if (!is_admin(c)) {
        /* what every user submits and fails is root's business (the limits' values are not) */
        st.counters_hidden = 1;
        st.jobs_started = st.jobs_failed = st.bad_frames = 0;
        st.mesh_accepted = st.mesh_auth_failures = 0;
        for (int i = 0; i < LIM_COUNT; i++)
            lim[i].refused = 0;
    }
    Tmpi__JobInfo *infos;
    st.n_jobs = job_info_visible(c->a->jobs, &c->a->ended, c->a->cfg.ended_job_keep_sec, c->uid,
                                 is_admin(c), &infos, &st.jobs);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_STATUS_REPLY;
    env.status_reply = &st;
    conn_send(c, &env);
    free(infos);
    free(st.jobs);
    free(pi);
    free(pmsg);
    free(pptr);
}

static void answer_jobs(struct conn *c, const struct query_row *row, const Tmpi__Envelope *req,
                        const struct query_job *job)
{
    Tmpi__JobsReply jr = TMPI__JOBS_REPLY__INIT;
    Tmpi__JobInfo *infos;
    jr.n_jobs = job_info_visible(c->a->jobs, &c->a->ended, c->a->cfg.ended_job_keep_sec, c->uid,
                                 is_admin(c), &infos, &jr.jobs);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOBS_REPLY;
    env.jobs_reply = &jr;
    conn_send(c, &env);
    free(infos);
    free(jr.jobs);
}

static void cluster_done(void *arg, const Tmpi__Envelope *reply)
{
    struct conn *c = arg;
    c->query = NULL;
    conn_send(c, reply);
}

/* tmpictl nodes (QUERY_NODES) and jobs --all (QUERY_JOBS): every agent of the mesh is asked. */
static void answer_cluster(struct conn *c, const struct query_row *row, const Tmpi__Envelope *req,
                           const struct query_job *job)
{
    if (c->query) {
        conn_error(c, -EBUSY, "a cluster query is already in progress on this connection");
        return;
    }
    int jobs = row->merge == QUERY_JOBS;
    if (cluster_query_start(c->a, jobs, c->uid, is_admin(c), cluster_done, c, &c->query) < 0)
        conn_error(c, -ENOMEM, "out of memory for the cluster view");
}

static void on_cancel(struct conn *c, const Tmpi__CancelJob *cj)
{
    struct job *j = agent_job(c->a, cj->job_id);
    char msg[160];
    const struct job_record *ended = j ? NULL : job_history_find(&c->a->ended, cj->job_id);
    if (ended && (is_admin(c) || ended->uid == c->uid)) {
        snprintf(msg, sizeof msg, "job %llu has already ended", (unsigned long long)cj->job_id);
        conn_error(c, -ESRCH, msg);
        return;
    }
    if (!j) {
        snprintf(msg, sizeof msg, "no job %llu on this agent", (unsigned long long)cj->job_id);
        conn_error(c, -ESRCH, msg);
        return;
    }
    if (!is_admin(c) && j->uid != c->uid) {
        snprintf(msg, sizeof msg, "job %llu belongs to %s: permission denied",
                 (unsigned long long)j->id, j->owner);
        log_notice("control: uid %u may not cancel job %llu", (unsigned)c->uid,
                   (unsigned long long)j->id);
        conn_error(c, -EPERM, msg);
        return;
    }
    snprintf(msg, sizeof msg, "job cancelled by uid %u", (unsigned)c->uid);
    job_cancel(j, 143, msg);
    Tmpi__CancelReply cr = TMPI__CANCEL_REPLY__INIT;
    cr.job_id = j->id;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_CANCEL_REPLY;
    env.cancel_reply = &cr;
    conn_send(c, &env);
}

/* ---- tmpictl ranks (job_ranks.h) ---- */

static void ranks_done(void *arg, struct ranks_snap *snap, const char *err)
{
    struct conn *c = arg;
    c->ranks_wait = NULL;
    Tmpi__RanksReply rr;
    if (!snap || ranks_snap_reply(snap, c->ranks_job, &rr) < 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "job %llu: %s", (unsigned long long)c->ranks_job,
                 err ? err : "out of memory");
        conn_error(c, -ESRCH, msg);
        ranks_snap_free(snap);
        return;
    }
    char note[300];
    if (!snap->complete) {
        snprintf(note, sizeof note, "some ranks did not answer%s%s", snap->missing[0] ? ": " : "",
                 snap->missing);
        rr.note = note;
    }
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_RANKS_REPLY;
    env.ranks_reply = &rr;
    conn_send(c, &env);
    free(rr.ranks);
    ranks_snap_free(snap);
}

/* The coordinator of job id (what its launcher shows), if this agent is it. */
static struct coord *coord_by_id(uint64_t id)
{
    for (struct conn *o = control_state.conns; o; o = o->next)
        if (o->coord && coord_id(o->coord) == id) return o->coord;
    return NULL;
}

/* The job a QUERY_JOB_OWNER row names, for the whole job: 0 with *t filled, or -1 when c was
 * told why not (no such job, ended, only a part here, not the caller's). */
static int find_job(struct conn *c, uint64_t id, struct query_job *t)
{
    struct agent *a = c->a;
    char msg[300];
    struct job *j = agent_job(a, id);
    struct coord *co = NULL;
    uid_t owner;
    const char *owner_name;
    if (j) {
        owner = j->uid;
        owner_name = j->owner;
        /* one node's part of a job across nodes: the whole job, if we coordinate it */
        if (j->link) {
            co = strcmp(j->coordinator, a->cfg.name) == 0 ? coord_by_id(j->coord_job_id) : NULL;
            if (!co) {
                snprintf(msg, sizeof msg,
                         "job %llu is this node's part of job %llu, coordinated by %s: ask "
                         "the agent there",
                         (unsigned long long)j->id, (unsigned long long)j->coord_job_id,
                         j->coordinator);
                conn_error(c, -ESRCH, msg);
                return -1;
            }
            j = NULL;
        }
    } else if ((co = coord_by_id(id))) {
        owner = coord_owner_uid(co);
        owner_name = coord_owner(co);
    } else {
        const struct job_record *ended = job_history_find(&a->ended, id);
        if (ended && (is_admin(c) || ended->uid == c->uid))
            snprintf(msg, sizeof msg, "job %llu has already ended", (unsigned long long)id);
        else
            snprintf(msg, sizeof msg, "no job %llu on this agent", (unsigned long long)id);
        conn_error(c, -ESRCH, msg);
        return -1;
    }
    /* who may see inside a job: as who may cancel it */
    if (!is_admin(c) && owner != c->uid) {
        snprintf(msg, sizeof msg, "job %llu belongs to %s: permission denied",
                 (unsigned long long)id, owner_name);
        conn_error(c, -EPERM, msg);
        return -1;
    }
    t->job = j;
    t->coord = co;
    t->id = co ? coord_id(co) : j->id;
    return 0;
}

static uint64_t ranks_job_of(const Tmpi__Envelope *env)
{
    return env->ranks_request->job_id;
}

static void answer_ranks(struct conn *c, const struct query_row *row, const Tmpi__Envelope *req,
                         const struct query_job *t)
{
    char msg[300];
    if (c->ranks_wait) {
        conn_error(c, -EBUSY, "a ranks request is already in progress on this connection");
        return;
    }
    const char *err = "the job is not running";
    c->ranks_job = t->id;
    if (t->coord)
        c->ranks_wait = coord_ranks(t->coord, ranks_done, c, &err);
    else if (t->job->rq)
        c->ranks_wait = ranks_gather_ask(t->job->rq, ranks_done, c);
    if (!c->ranks_wait) {
        snprintf(msg, sizeof msg, "job %llu: %s", (unsigned long long)c->ranks_job, err);
        conn_error(c, -ESRCH, msg);
    }
}

static void send_ping_reply(struct conn *c, int ok, const char *peer, double rtt, const char *err)
{
    Tmpi__PingReply pr = TMPI__PING_REPLY__INIT;
    pr.ok = ok;
    pr.peer = (char *)(peer ? peer : "");
    pr.rtt_usec = rtt;
    pr.error = (char *)(err ? err : "");
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_PING_REPLY;
    env.ping_reply = &pr;
    conn_send(c, &env);
}

static void ping_done(void *arg, int rc, const char *peer, double rtt_usec, const char *err)
{
    struct conn *c = arg;
    c->ping = NULL;
    send_ping_reply(c, rc == 0, peer, rtt_usec, err);
}

/* Is address one of the peers this agent keeps ([mesh] peers, --peer), as configured? */
static int configured_peer(const struct agent *a, const char *address)
{
    for (size_t i = 0; i < a->cfg.npeers; i++)
        if (strcmp(a->cfg.peers[i], address) == 0) return 1;
    return 0;
}

static const char *ping_peer_of(const Tmpi__Envelope *env)
{
    return env->ping_peer->address ? env->ping_peer->address : "";
}

/* A refused ping is answered as a failed one: tmpictl ping prints its error. */
static void ping_refuse(struct conn *c, const char *msg)
{
    send_ping_reply(c, 0, "", 0, msg);
}

static void answer_ping(struct conn *c, const struct query_row *row, const Tmpi__Envelope *req,
                        const struct query_job *job)
{
    const Tmpi__PingPeer *pp = req->ping_peer;
    if (c->ping) {
        conn_error(c, -EBUSY, "a ping is already in progress on this connection");
        return;
    }
    int r = mesh_ping(c->a->mesh, pp->address, ping_done, c, &c->ping);
    if (r == 0) return;
    char msg[160];
    if (r == -ENOKEY)
        snprintf(msg, sizeof msg, "this agent has no cluster key (--key-file)");
    else if (r == -EINVAL)
        snprintf(msg, sizeof msg, "bad address \"%s\" (HOST:PORT expected)", pp->address);
    else
        snprintf(msg, sizeof msg, "cannot reach %s: %s", pp->address, strerror(-r));
    send_ping_reply(c, 0, "", 0, msg);
}

/* A launcher forwarding a signal to the job it submitted (job_signal.h).  A signal for no job
 * of this connection, or one that ended, is dropped: the launcher may forward one at any
 * moment of the job's life. */
static void on_signal_job(struct conn *c, const Tmpi__SignalJob *sj)
{
    char msg[96];
    if (msg_check_signal(sj, msg, sizeof msg) < 0) {
        conn_violation(c, msg);
        return;
    }
    if (!c->job_started) return;
    if (c->coord && (sj->job_id == 0 || sj->job_id == coord_id(c->coord)))
        coord_signal(c->coord, sj->signo);
    else if (c->job && (sj->job_id == 0 || sj->job_id == c->job->id))
        (void)job_signal(c->job, sj->signo);
}

/* ---- the query table (query_table.h) ---- */

static int jobs_here(const Tmpi__Envelope *env)
{
    return !env->jobs_request->all;
}

static int jobs_all(const Tmpi__Envelope *env)
{
    return env->jobs_request->all;
}

static const struct query_row query_table[] = {
    {.msg = TMPI__ENVELOPE__MSG_STATUS_REQUEST,
     .command = "status",
     .perm = QUERY_ANYONE,
     .where = QUERY_HERE,
     .merge = QUERY_ONE,
     .answer = answer_status},
    {.msg = TMPI__ENVELOPE__MSG_JOBS_REQUEST,
     .matches = jobs_here,
     .command = "jobs",
     .perm = QUERY_ANYONE,
     .where = QUERY_HERE,
     .merge = QUERY_ONE,
     .answer = answer_jobs},
    {.msg = TMPI__ENVELOPE__MSG_JOBS_REQUEST,
     .matches = jobs_all,
     .command = "jobs --all",
     .perm = QUERY_ANYONE,
     .where = QUERY_MESH,
     .merge = QUERY_JOBS,
     .answer = answer_cluster},
    {.msg = TMPI__ENVELOPE__MSG_NODES_REQUEST,
     .command = "nodes",
     .perm = QUERY_ANYONE,
     .where = QUERY_MESH,
     .merge = QUERY_NODES,
     .answer = answer_cluster},
    {.msg = TMPI__ENVELOPE__MSG_RANKS_REQUEST,
     .command = "ranks",
     .perm = QUERY_JOB_OWNER,
     .where = QUERY_JOB_PARTS,
     .merge = QUERY_BY_RANK,
     .job_of = ranks_job_of,
     .answer = answer_ranks},
    {.msg = TMPI__ENVELOPE__MSG_PING_PEER,
     .command = "ping",
     .perm = QUERY_PEER_OR_ADMIN,
     .where = QUERY_PEER,
     .merge = QUERY_ONE,
     .peer_of = ping_peer_of,
     .refuse = ping_refuse,
     .answer = answer_ping},
};

const struct query_row *query_row_of(const Tmpi__Envelope *env)
{
    for (size_t i = 0; i < sizeof query_table / sizeof *query_table; i++) {
        const struct query_row *row = &query_table[i];
        if (row->msg == env->msg_case && (!row->matches || row->matches(env))) return row;
    }
    return NULL;
}

const struct query_row *query_table_rows(size_t *ret_n)
{
    *ret_n = sizeof query_table / sizeof *query_table;
    return query_table;
}

/* The row's permission, then its answer. */
static void run_query(struct conn *c, const struct query_row *row, const Tmpi__Envelope *env)
{
    struct query_job job, *jp = NULL;
    switch (row->perm) {
    case QUERY_ANYONE:
        break;
    case QUERY_JOB_OWNER:
        if (find_job(c, row->job_of(env), &job) < 0) return;
        jp = &job;
        break;
    case QUERY_PEER_OR_ADMIN: {
        const char *peer = row->peer_of(env);
        if (is_admin(c) || configured_peer(c->a, peer)) break;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "only root or the agent's user may %s an address that is not a configured "
                 "peer ([mesh] peers)",
                 row->command);
        log_warning("control: uid %u may not %s %.64s: not a configured peer", (unsigned)c->uid,
                    row->command, peer);
        if (row->refuse)
            row->refuse(c, msg);
        else
            conn_error(c, -EPERM, msg);
        return;
    }
    }
    row->answer(c, row, env, jp);
}

/* Returns 0 to go on reading, -1 if the connection is closing or gone. */
static int dispatch(struct conn *c, const Tmpi__Envelope *env)
{
    const struct query_row *row = query_row_of(env);
    if (row) {
        run_query(c, row, env);
        return c->closing ? -1 : 0;
    }
    /* the rest is a job's own stream: its submission, input, signals and end */
    switch (env->msg_case) {
    case TMPI__ENVELOPE__MSG_SUBMIT:
        on_submit(c, env->submit);
        break;
    case TMPI__ENVELOPE__MSG_PROGRAM_CHUNK:
        on_chunk(c, env->program_chunk);
        break;
    case TMPI__ENVELOPE__MSG_STDIN_DATA:
        /* after the job ended (c->job gone) a late chunk has nobody to go to: dropped */
        if (c->coord && c->job_started && coord_stdin(c->coord, env->stdin_data) == -EPROTO) {
            conn_violation(c, "stdin data beyond the window, after its end, or not announced");
            return -1;
        }
        if (c->job && c->job_started && c->job->host &&
            jobhost_stdin(c->job, env->stdin_data) == -EPROTO) {
            conn_violation(c, "stdin data beyond the window, after its end, or not announced");
            return -1;
        }
        break;
    case TMPI__ENVELOPE__MSG_CANCEL:
        if (c->coord && c->job_started &&
            (env->cancel->job_id == 0 || env->cancel->job_id == coord_id(c->coord))) {
            /* the launcher of a job across nodes: every member stops */
            char msg[64];
            snprintf(msg, sizeof msg, "job cancelled by uid %u", (unsigned)c->uid);
            Tmpi__CancelReply cr = TMPI__CANCEL_REPLY__INIT;
            cr.job_id = coord_id(c->coord);
            Tmpi__Envelope out = TMPI__ENVELOPE__INIT;
            out.msg_case = TMPI__ENVELOPE__MSG_CANCEL_REPLY;
            out.cancel_reply = &cr;
            conn_send(c, &out);
            coord_cancel(c->coord, 143, msg);
        } else if (c->job && c->job_started && env->cancel->job_id == 0) {
            /* the launcher cancelling its own job before knowing its id */
            Tmpi__CancelJob own = *env->cancel;
            own.job_id = c->job->id;
            on_cancel(c, &own);
        } else {
            on_cancel(c, env->cancel);
        }
        break;
    case TMPI__ENVELOPE__MSG_SIGNAL_JOB:
        on_signal_job(c, env->signal_job);
        break;
    default: {
        char msg[96];
        snprintf(msg, sizeof msg, "unexpected message '%s' from a tool", frame_msg_name(env));
        conn_violation(c, msg);
        return -1;
    }
    }
    return c->closing ? -1 : 0;
}

/* Counts the bytes c holds beyond CONTROL_FREE_INPUT against max_buffered_input.  0, or -1
 * when the agent holds too much already (c is then closed: it is the one that asked for more). */
static int charge_input(struct conn *c, size_t held)
{
    size_t want = held > CONTROL_FREE_INPUT ? held - CONTROL_FREE_INPUT : 0;
    control_state.buffered = control_state.buffered - c->charged + want;
    c->charged = want;
    size_t max = c->a->cfg.max_buffered_input;
    if (control_state.buffered <= max) return 0;
    char msg[200];
    snprintf(msg, sizeof msg,
             "the agent already holds %zu bytes of unfinished frames (max_buffered_input): try "
             "again",
             max);
    refusal(LIM_BUFFERED_INPUT, "closing the connection of pid %d (uid %u) with %zu bytes held",
            (int)c->pid, (unsigned)c->uid, held);
    conn_drop(c, -ENOBUFS, msg);
    return -1;
}

/* Replies the client has not read, beyond max_unread_replies (plus its job's output, which
 * is throttled on its own): the client is closed.  0, or -1 when c is gone. */
static int check_unread(struct conn *c)
{
    size_t queued = evbuffer_get_length(bufferevent_get_output(c->bev));
    size_t max = c->a->cfg.max_unread_replies;
    if (c->job_started || c->coord) max += CONTROL_JOB_OUTPUT_ALLOWANCE;
    if (queued <= max) return 0;
    refusal(LIM_UNREAD_REPLIES,
            "closing the connection of pid %d (uid %u): %zu bytes of replies it does not read",
            (int)c->pid, (unsigned)c->uid, queued);
    conn_free(c);
    return -1;
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    double now = agent_now();
    int consumed = 0;
    c->last_active = now;
    while (!c->closing && evbuffer_get_length(in) >= FRAME_HEADER_SIZE) {
        uint8_t hdr[FRAME_HEADER_SIZE];
        size_t len;
        evbuffer_copyout(in, hdr, sizeof hdr);
        int r = frame_parse_header(hdr, c->a->cfg.max_frame_size, &len);
        if (r < 0) {
            char msg[128];
            if (r == -EMSGSIZE) {
                snprintf(msg, sizeof msg, "frame larger than max_frame_size (%zu bytes)",
                         c->a->cfg.max_frame_size);
                control_state.refused[LIM_FRAME_SIZE]++;
            } else {
                snprintf(msg, sizeof msg, "malformed frame header");
            }
            conn_violation(c, msg);
            return;
        }
        if (evbuffer_get_length(in) < FRAME_HEADER_SIZE + len) break;
        /* a request while the last replies are still unread: a client that never reads them
         * must not make the agent hold them without end */
        if (check_unread(c) < 0) return;
        evbuffer_drain(in, FRAME_HEADER_SIZE);
        Tmpi__Envelope *env = frame_decode(evbuffer_pullup(in, (ev_ssize_t)len), len);
        evbuffer_drain(in, len);
        consumed = 1;
        if (!env) {
            conn_violation(c, "malformed frame");
            return;
        }
        r = dispatch(c, env);
        frame_free(env);
        if (r < 0) return;
    }
    if (c->closing) return;
    size_t held = evbuffer_get_length(in);
    /* the message deadline runs from the first byte of each frame */
    if (held == 0)
        c->partial_since = 0;
    else if (consumed || c->partial_since == 0)
        c->partial_since = now;
    (void)charge_input(c, held);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    c->last_active = agent_now();
    if (c->coord) coord_launcher_drained(c->coord);
    /* Output drained: rank threads throttled on this launcher may go on. */
    if (c->job && c->job_started) {
        struct job *j = c->job;
        pthread_mutex_lock(&j->drain_mu);
        atomic_fetch_add(&j->drain_gen, 1);
        pthread_cond_broadcast(&j->drain_cv);
        pthread_mutex_unlock(&j->drain_mu);
        jobhost_launcher_drained(j);
    }
    /* a deferred write callback may run before the last reply was written: check */
    if (c->closing && evbuffer_get_length(bufferevent_get_output(bev)) == 0) conn_free(c);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    struct conn *c = arg;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
        if (c->job && c->job_started && atomic_load(&c->job->state) != JOB_ENDING)
            log_info("job %llu: launcher (pid %d) went away", (unsigned long long)c->job->id,
                     (int)c->pid);
        conn_free(c);
    }
}

/* The deadlines: a frame must be whole message_timeout after its first byte, however slowly
 * it drips; a connection that neither runs a job nor waits for a ping may stay silent for
 * idle_timeout (also one uploading its program, which holds a max_jobs slot). */
static void sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    struct agent *a = arg;
    double now = agent_now();
    struct conn *next;
    if (control_state.trim) {
        /* megabytes of frames a client never finished: back to the system, not kept in the
         * heap for the next flood */
        control_state.trim = 0;
        malloc_trim(0);
    }
    for (struct conn *c = control_state.conns; c; c = next) {
        next = c->next;
        if (c->closing) {
            /* closing once its output is flushed, but the client does not read it */
            if (now - c->last_active > a->cfg.idle_timeout_sec) conn_free(c);
            continue;
        }
        char msg[160];
        if (c->partial_since > 0 && now - c->partial_since > a->cfg.message_timeout_sec) {
            snprintf(msg, sizeof msg,
                     "a frame not complete %u s after its first byte "
                     "(message_timeout)",
                     a->cfg.message_timeout_sec);
            refusal(LIM_MESSAGE_TIMEOUT, "closing the connection of pid %d (uid %u): %s",
                    (int)c->pid, (unsigned)c->uid, msg);
            conn_drop(c, -ETIMEDOUT, msg);
        } else if (!c->job_started && !c->ping && !c->query &&
                   now - c->last_active > a->cfg.idle_timeout_sec) {
            snprintf(msg, sizeof msg, "nothing sent for %u s (idle_timeout)",
                     a->cfg.idle_timeout_sec);
            refusal(LIM_IDLE_TIMEOUT, "closing the connection of pid %d (uid %u): %s", (int)c->pid,
                    (unsigned)c->uid, msg);
            conn_drop(c, -ETIMEDOUT, msg);
        }
    }
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen,
                      void *arg)
{
    struct agent *a = arg;
    struct ucred cred;
    socklen_t cl = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
        log_errno(LOG_WARNING, -errno, "control: SO_PEERCRED");
        close(fd);
        return;
    }
    int admin = cred.uid == 0 || cred.uid == getuid();
    char msg[200];
    enum control_limit lim = LIM_COUNT;
    if (!admin && control_state.nconns >= a->cfg.max_connections) {
        lim = LIM_CONNECTIONS;
        snprintf(msg, sizeof msg, "the agent has %u connections open (max_connections): try again",
                 control_state.nconns);
    } else if (admin && control_state.nconns >= a->cfg.max_connections + CONTROL_ADMIN_RESERVE) {
        lim = LIM_CONNECTIONS;
        snprintf(msg, sizeof msg,
                 "the agent has %u connections open (max_connections and the administrators' "
                 "reserve): try again",
                 control_state.nconns);
    } else if (!admin && conns_of(cred.uid) >= a->cfg.max_connections_per_user) {
        lim = LIM_CONNECTIONS_PER_USER;
        snprintf(msg, sizeof msg,
                 "uid %u already has %u connections open (max_connections_per_user)",
                 (unsigned)cred.uid, a->cfg.max_connections_per_user);
    }
    if (lim != LIM_COUNT) {
        refusal(lim, "refusing pid %d (uid %u): %s", (int)cred.pid, (unsigned)cred.uid, msg);
        send_error_now(fd, -EUSERS, msg);
        close(fd);
        return;
    }
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return;
    }
    c->a = a;
    c->uid = cred.uid;
    c->gid = cred.gid;
    c->pid = cred.pid;
    c->admin = admin;
    c->last_active = agent_now();
    /* Threadsafe: rank threads write their output here.  Callbacks run deferred and unlocked,
     * so the loop thread never holds the bufferevent lock when it takes a job's out_mu
     * (job.h: rank threads take out_mu, then the bufferevent lock). */
    c->bev = bufferevent_socket_new(a->base, fd,
                                    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_THREADSAFE |
                                        BEV_OPT_DEFER_CALLBACKS | BEV_OPT_UNLOCK_CALLBACKS);
    if (!c->bev) {
        close(fd);
        free(c);
        return;
    }
    control_state.nconns++;
    c->next = control_state.conns;
    if (c->next) c->next->prev = c;
    control_state.conns = c;
    bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

int control_listen(struct agent *a)
{
    const char *path = a->cfg.socket_path;
    int inherited;
    int fd = listen_socket_open(path, &inherited);
    if (fd < 0) return fd;
    a->listener = evconnlistener_new(a->base, accept_cb, a, LEV_OPT_CLOSE_ON_FREE, 128, fd);
    if (!a->listener) {
        close(fd);
        if (!inherited) unlink(path);
        return log_errno(LOG_ERR, -EIO, "cannot listen on %s", path);
    }
    control_state.socket_inherited = inherited;
    control_state.sweep = event_new(a->base, -1, EV_PERSIST, sweep_cb, a);
    struct timeval tv = {.tv_sec = 0, .tv_usec = CONTROL_SWEEP_MS * 1000};
    if (!control_state.sweep || event_add(control_state.sweep, &tv) < 0) {
        evconnlistener_free(a->listener);
        a->listener = NULL;
        if (!inherited) unlink(path);
        return log_errno(LOG_ERR, -ENOMEM, "cannot arm the control socket's deadlines");
    }
    return 0;
}

void control_drain(struct agent *a)
{
    control_state.draining = 1;
    if (!control_state.conns) {
        event_base_loopbreak(a->base);
        return;
    }
    struct conn *next;
    for (struct conn *c = control_state.conns; c; c = next) {
        next = c->next;
        if (!c->closing) conn_close_after_flush(c);
    }
}

void control_close(struct agent *a)
{
    if (control_state.sweep) {
        event_free(control_state.sweep);
        control_state.sweep = NULL;
    }
    if (a->listener) {
        evconnlistener_free(a->listener);
        a->listener = NULL;
        /* systemd's socket file stays: it keeps listening for the next start */
        if (!control_state.socket_inherited) unlink(a->cfg.socket_path);
    }
}

void control_free_all(struct agent *a)
{
    control_close(a);
    control_state.draining = 0;
    while (control_state.conns)
        conn_free(control_state.conns);
}
