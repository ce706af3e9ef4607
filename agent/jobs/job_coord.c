/* job_coord.c — coordinating a job across several nodes (job_coord.h). */
#include "job_coord.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <pwd.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "frame.h"
#include "job.h"
#include "job_id.h"
#include "log.h"
#include "metrics_count.h"
#include "mesh.h"
#include "msg_check.h"
#include "progcache.h"
#include "progset.h"
#include "job_ranks.h"

/* Members stop being read while this much output waits for a slow launcher; their own rank
 * threads then throttle on their connection (job.h). */
#define COORD_OUTPUT_HIGH (4u << 20)

enum node_state {
    CN_CONNECTING, /* mesh connection and handshake */
    CN_ASSIGNED,   /* JobAssign sent */
    CN_LOADED,     /* JobLoaded ok */
    CN_LINKED,     /* JobLinked ok */
    CN_ENDED,      /* JobEnd: every rank there ended */
    CN_DONE,       /* JobUnloaded, or the connection is gone */
};

struct coord_node {
    struct coord *co;
    int index;
    char addr[300];
    struct mesh_conn *conn;
    enum node_state state;
    struct event *retry; /* the next connection attempt (CN_CONNECTING; COORD_RETRY_MS) */
    double dialled_at;   /* when the last attempt started (agent_now) */
    uint32_t spawned;    /* live ranks MPI_Comm_spawn started there (its RanksSpawned) */
};

/* A connection to a member that failed on the way (its handshake timed out under loss, it was
 * reset) is tried again, at most this often, until link_reconnect_timeout_ms after the job's
 * start; one nobody takes (no agent there) or that refuses our key fails the job at once. */
#define COORD_RETRY_MS 500

struct coord {
    struct agent *a;
    uint64_t id;                   /* what the launcher sees (JobStarted, CancelJob) */
    double created_at, start_time; /* submission arrived, programs all here (metrics) */
    uint64_t uid; /* the job on every node: netd headers, join records, mesh messages */
    uid_t owner_uid;
    gid_t owner_gid; /* the launcher's (SO_PEERCRED): the members' hosts run with it */
    char owner[64];
    struct bufferevent *launcher; /* loop thread writes only */
    void (*done)(void *arg);
    void *done_arg;
    Tmpi__SubmitJob *sub;   /* our own copy of the submission */
    struct program **progs; /* one per program of the job (sub->n_apps, or 1), pinned */
    size_t nprogs;
    int nnodes;
    struct coord_node *nodes;
    int go_sent;
    int failed;
    int weak; /* the failure so far is a member's lost link: a cause may still show up */
    int exit_status, fail_rank;
    char reason[512];
    int depth;    /* nesting of entry points: the coordinator is freed only at depth 0 */
    int finished; /* JobEnd went to the launcher */
    int paused;   /* members not read: the launcher is slow */
    /* tmpictl ranks and the deadlock watch (job_ranks.h): from JobGo until the job ends */
    struct ranks_gather *rq;
    /* The launcher's stdin, passed on to the node of rank 0 (stdin_node, -1: not forwarded)
     * within MSG_STDIN_WINDOW, as a single node's agent does for its job host. */
    int stdin_node;
    uint64_t stdin_inflight; /* passed on and not yet acknowledged by that node */
    int stdin_eof;           /* the end was passed on */
    int released;            /* JobRelease went to every member */
    double connect_deadline; /* agent_now() until which member connections are retried */
};

static void node_send(struct coord_node *n, const Tmpi__Envelope *env)
{
    if (n->conn && n->state != CN_CONNECTING && mesh_send(n->conn, env) < 0)
        log_warning("job %llu: cannot send '%s' to node %d (%s)", (unsigned long long)n->co->id,
                    frame_msg_name(env), n->index, n->addr);
}

static void launcher_send(struct coord *co, const Tmpi__Envelope *env)
{
    if (!co->launcher) return;
    uint8_t *buf;
    size_t len;
    if (frame_encode(env, FRAME_DEFAULT_MAX, &buf, &len) < 0) return;
    bufferevent_write(co->launcher, buf, len);
    free(buf);
}

/* The job is ending: nobody is asked about its ranks any more (a part may never answer). */
static void stop_ranks(struct coord *co)
{
    ranks_gather_free(co->rq, "the job is ending");
    co->rq = NULL;
}

static void close_node(struct coord_node *n)
{
    if (n->retry) event_del(n->retry); /* freed with the coordinator: this may be its callback */
    mesh_conn_close(n->conn);
    n->conn = NULL;
    n->state = CN_DONE;
    stop_ranks(n->co);
}

/* The first failure decides the job's status, failed rank and reason; every member is told
 * to stop (members still connecting are simply dropped). */
static void fail(struct coord *co, int status, int rank, const char *reason)
{
    if (co->failed) {
        /* A member that lost its link to a node usually reports it before we see that node
         * die (our own connection to it ends a moment later), or sees a link end because a
         * cancelled peer closed it: the cause, when it comes, is the better reason. */
        if (co->weak && strncmp(reason, "lost connection to node", 23) != 0) {
            co->weak = 0;
            co->exit_status = status;
            co->fail_rank = rank;
            snprintf(co->reason, sizeof co->reason, "%s", reason);
            log_notice("job %llu: %s", (unsigned long long)co->id, reason);
        }
        return;
    }
    co->failed = 1;
    stop_ranks(co);
    co->weak = strncmp(reason, "lost connection to node", 23) == 0;
    co->exit_status = status;
    co->fail_rank = rank;
    snprintf(co->reason, sizeof co->reason, "%s", reason);
    log_notice("job %llu: %s", (unsigned long long)co->id, reason);
    Tmpi__JobCancel jc = TMPI__JOB_CANCEL__INIT;
    jc.uid = co->uid;
    jc.exit_status = status;
    jc.reason = co->reason;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_CANCEL;
    env.job_cancel = &jc;
    for (int i = 0; i < co->nnodes; i++) {
        struct coord_node *n = &co->nodes[i];
        if (n->state == CN_CONNECTING)
            close_node(n);
        else if (n->state < CN_DONE)
            node_send(n, &env);
    }
}

static void node_fail(struct coord_node *n, const char *fmt, const char *what)
{
    char reason[512];
    snprintf(reason, sizeof reason, "node %d (%s)", n->index, n->addr);
    size_t len = strlen(reason);
    snprintf(reason + len, sizeof reason - len, fmt, what);
    fail(n->co, 1, -1, reason);
}

static void free_coord(struct coord *co)
{
    stop_ranks(co);
    for (int i = 0; i < co->nnodes; i++) {
        mesh_conn_close(co->nodes[i].conn);
        if (co->nodes[i].retry) event_free(co->nodes[i].retry);
    }
    for (size_t k = 0; co->progs && k < co->nprogs; k++)
        if (co->progs[k]) progcache_release(&co->a->cache, co->progs[k]);
    free(co->progs);
    if (co->sub) tmpi__submit_job__free_unpacked(co->sub, NULL);
    free(co->nodes);
    free(co);
}

/* Ends an entry point: once every member is done, the launcher gets JobEnd and we go. */
static void leave(struct coord *co)
{
    if (--co->depth > 0 || co->finished) return;
    for (int i = 0; i < co->nnodes; i++) {
        enum node_state s = co->nodes[i].state;
        /* a failed job does not wait for unloading: its members were told to stop */
        if (s != CN_DONE && !(co->failed && s == CN_ENDED)) return;
    }
    co->finished = 1;
    Tmpi__JobEnd je = TMPI__JOB_END__INIT;
    je.job_id = co->id;
    je.exit_status = co->failed ? co->exit_status : 0;
    je.failed_rank = co->failed ? co->fail_rank : -1;
    je.reason = co->failed ? co->reason : "";
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_END;
    env.job_end = &je;
    launcher_send(co, &env);
    log_info("job %llu: ended across %d nodes%s%s", (unsigned long long)co->id, co->nnodes,
             co->failed ? ": " : "", co->failed ? co->reason : "");
    void (*done)(void *) = co->done;
    void *arg = co->done_arg;
    free_coord(co);
    if (done) done(arg);
}

static int count(const struct coord *co, enum node_state at_least)
{
    int k = 0;
    for (int i = 0; i < co->nnodes; i++)
        k += co->nodes[i].state >= at_least && co->nodes[i].state != CN_DONE;
    return k;
}

static void broadcast(struct coord *co, Tmpi__Envelope *env)
{
    for (int i = 0; i < co->nnodes; i++)
        if (co->nodes[i].state < CN_DONE) node_send(&co->nodes[i], env);
}

/* ---- member connection callbacks ---- */

static void on_ready(void *arg, struct mesh_conn *c)
{
    struct coord_node *n = arg;
    struct coord *co = n->co;
    co->depth++;
    const Tmpi__SubmitJob *s = co->sub;
    Tmpi__JobAssign ja = TMPI__JOB_ASSIGN__INIT;
    ja.uid = co->uid;
    ja.node = (uint32_t)n->index;
    ja.n_nodes = s->n_nodes;
    ja.nodes = s->nodes;
    ja.nprocs = s->nprocs;
    ja.program_hash = s->program_hash;
    ja.program_size = s->program_size;
    ja.program_name = s->program_name;
    ja.n_args = s->n_args;
    ja.args = s->args;
    ja.cwd = s->cwd;
    ja.n_env = s->n_env;
    ja.env = s->env;
    ja.timeout_sec = s->timeout_sec;
    ja.n_apps = s->n_apps;
    ja.apps = s->apps;
    ja.owner_uid = (uint32_t)co->owner_uid;
    ja.owner = co->owner;
    ja.owner_gid = (uint32_t)co->owner_gid;
    ja.umask = s->umask;
    ja.umask_set = s->umask_set;
    ja.bind_to = s->bind_to;
    ja.report_bindings = s->report_bindings;
    ja.coordinator = co->a->cfg.name;
    ja.coordinator_job_id = co->id;
    ja.stdin_open = n->index == co->stdin_node;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_ASSIGN;
    env.job_assign = &ja;
    n->state = CN_ASSIGNED;
    int r = mesh_send(c, &env);
    if (r < 0) node_fail(n, ": cannot send the job: %s", strerror(-r));
    leave(co);
}

static void send_program(struct coord_node *n, const Tmpi__NeedProgram *np)
{
    const struct program *p =
        progset_find(n->co->progs, n->co->nprogs, np->program_hash.data, np->program_hash.len);
    if (!p) {
        node_fail(n, ": %s", "asked for a program that is not part of the job");
        return;
    }
    size_t off = 0;
    do {
        size_t len = p->size - off < FRAME_PROGRAM_CHUNK ? p->size - off : FRAME_PROGRAM_CHUNK;
        Tmpi__ProgramChunk ch = TMPI__PROGRAM_CHUNK__INIT;
        ch.program_hash.data = (uint8_t *)p->hash;
        ch.program_hash.len = PROGRAM_HASH_SIZE;
        ch.offset = off;
        ch.data.data = p->bytes + off;
        ch.data.len = len;
        ch.last = off + len == p->size;
        Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
        env.msg_case = TMPI__ENVELOPE__MSG_PROGRAM_CHUNK;
        env.program_chunk = &ch;
        node_send(n, &env);
        off += len;
    } while (off < p->size);
}

static void set_paused(struct coord *co, int paused)
{
    if (co->paused == paused) return;
    co->paused = paused;
    for (int i = 0; i < co->nnodes; i++)
        if (co->nodes[i].conn) {
            struct bufferevent *bev = mesh_conn_bev(co->nodes[i].conn);
            if (paused)
                bufferevent_disable(bev, EV_READ);
            else
                bufferevent_enable(bev, EV_READ);
        }
}

static void on_loaded(struct coord_node *n, const Tmpi__JobLoaded *jl)
{
    struct coord *co = n->co;
    if (!jl->ok) {
        node_fail(n, ": cannot load: %s", jl->error && *jl->error ? jl->error : "unknown error");
        return;
    }
    n->state = CN_LOADED;
    if (co->failed || count(co, CN_LOADED) != co->nnodes) return;
    Tmpi__JobConnect jc = TMPI__JOB_CONNECT__INIT;
    jc.uid = co->uid;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_CONNECT;
    env.job_connect = &jc;
    broadcast(co, &env);
}

/* ---- tmpictl ranks and the deadlock watch ---- */

static int send_ranks_query(void *arg, uint64_t query)
{
    struct coord *co = arg;
    Tmpi__RanksQuery q = TMPI__RANKS_QUERY__INIT;
    q.query = query;
    q.uid = co->uid;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_RANKS_QUERY;
    env.ranks_query = &q;
    broadcast(co, &env);
    return 0;
}

static const char *ranks_part_name(void *arg, uint32_t part)
{
    struct coord *co = arg;
    return part < (uint32_t)co->nnodes ? co->nodes[part].addr : "?";
}

static const struct ranks_gather_ops coord_rq_ops = {.send_query = send_ranks_query,
                                                     .part_name = ranks_part_name};

/* The watch found the job deadlocked: the launcher hears it; abort ends the job too. */
static void coord_deadlock(void *arg, const char *report)
{
    struct coord *co = arg;
    Tmpi__Deadlock d;
    Tmpi__Envelope env;
    int abort = ranks_deadlock_frame(co->id, co->sub->on_deadlock, report, &d, &env);
    co->depth++;
    launcher_send(co, &env);
    if (abort) fail(co, JOB_DEADLOCK_STATUS, -1, report);
    leave(co);
}

/* The whole job's ranks, its world and what every node spawned, on the coordinator's own
 * part of it (job.h job_ranks: tmpictl jobs here, jobs --all). */
static void show_job_ranks(struct coord *co)
{
    uint32_t all = co->sub->nprocs;
    for (int i = 0; i < co->nnodes; i++)
        all += co->nodes[i].spawned;
    for (struct job *j = co->a->jobs; j; j = j->next)
        if (j->link && j->coord_job_id == co->id && strcmp(j->coordinator, co->a->cfg.name) == 0)
            j->job_ranks = all;
}

/* The job's world and the ranks MPI_Comm_spawn may start in its nodes' slots. */
static uint32_t coord_universe(const struct coord *co)
{
    uint32_t universe = co->sub->nprocs;
    for (size_t i = 0; i < co->sub->n_nodes; i++)
        universe += co->sub->nodes[i]->spawn_slots;
    return universe;
}

static void start_ranks(struct coord *co)
{
    co->rq = ranks_gather_new(co->a, co->sub->nprocs, coord_universe(co), (uint32_t)co->nnodes,
                              &coord_rq_ops, co);
    if (!co->rq || ranks_watch_start(co->rq, co->a->cfg.deadlock_check_ms, coord_deadlock, co) < 0)
        log_warning("job %llu: no memory for its deadlock watch", (unsigned long long)co->id);
}

struct ranks_waiter *coord_ranks(struct coord *co, ranks_done_fn done, void *arg,
                                 const char **ret_err)
{
    if (!co->rq) {
        *ret_err = co->go_sent ? "the job is ending" : "the job is not running yet";
        return NULL;
    }
    struct ranks_waiter *w = ranks_gather_ask(co->rq, done, arg);
    if (!w) *ret_err = "cannot ask the job's nodes";
    return w;
}

static void on_linked(struct coord_node *n, const Tmpi__JobLinked *jl)
{
    struct coord *co = n->co;
    if (!jl->ok) {
        node_fail(n, ": cannot link: %s", jl->error && *jl->error ? jl->error : "unknown error");
        return;
    }
    n->state = CN_LINKED;
    if (co->failed || co->go_sent || count(co, CN_LINKED) != co->nnodes) return;
    co->go_sent = 1;
    Tmpi__JobGo go = TMPI__JOB_GO__INIT;
    go.uid = co->uid;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_GO;
    env.job_go = &go;
    broadcast(co, &env);
    start_ranks(co);
    show_job_ranks(co);
    Tmpi__JobStarted js = TMPI__JOB_STARTED__INIT;
    js.job_id = co->id;
    js.nprocs = co->sub->nprocs;
    Tmpi__Envelope st = TMPI__ENVELOPE__INIT;
    st.msg_case = TMPI__ENVELOPE__MSG_JOB_STARTED;
    st.job_started = &js;
    launcher_send(co, &st);
    metrics_job_started(&co->a->metrics, co->created_at, co->start_time);
}

/* Every member ended, or is a spare node (no ranks of its own) where no spawned rank runs
 * (none started, or all ended, its RanksSpawned say): no rank is left to spawn there, so every
 * member is released (a spare one then ends). */
static void release_if_done(struct coord *co)
{
    if (co->failed || co->released) return;
    for (int i = 0; i < co->nnodes; i++) {
        const struct coord_node *m = &co->nodes[i];
        int spare_idle = co->sub->nodes[i]->n_ranks == 0 && m->spawned == 0;
        if (m->state < CN_ENDED && !(spare_idle && m->state >= CN_LINKED)) return;
    }
    co->released = 1;
    Tmpi__JobRelease jr = TMPI__JOB_RELEASE__INIT;
    jr.uid = co->uid;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_RELEASE;
    env.job_release = &jr;
    broadcast(co, &env);
}

static void on_member_end(struct coord_node *n, const Tmpi__JobEnd *je)
{
    struct coord *co = n->co;
    if (je->exit_status != 0 || je->failed_rank >= 0 || (je->reason && *je->reason))
        fail(co, je->exit_status ? je->exit_status : 1, je->failed_rank,
             je->reason && *je->reason ? je->reason : "a rank failed");
    if (n->state < CN_ENDED) n->state = CN_ENDED;
    release_if_done(co);
}

static void on_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    struct coord_node *n = arg;
    struct coord *co = n->co;
    co->depth++;
    switch (env->msg_case) {
    case TMPI__ENVELOPE__MSG_NEED_PROGRAM:
        if (n->state == CN_ASSIGNED) send_program(n, env->need_program);
        break;
    case TMPI__ENVELOPE__MSG_JOB_LOADED:
        if (n->state == CN_ASSIGNED) on_loaded(n, env->job_loaded);
        break;
    case TMPI__ENVELOPE__MSG_JOB_LINKED:
        if (n->state == CN_LOADED) on_linked(n, env->job_linked);
        break;
    case TMPI__ENVELOPE__MSG_OUTPUT:
    case TMPI__ENVELOPE__MSG_RANK_EXIT: {
        /* A member speaks only for ranks of the job: relay nothing else to the launcher. */
        char why[160];
        /* ranks MPI_Comm_spawn started are the job's too: the universe bounds them */
        uint32_t universe = coord_universe(co);
        int bad = env->msg_case == TMPI__ENVELOPE__MSG_OUTPUT
                      ? msg_check_output(env->output, universe, FRAME_DEFAULT_MAX, why, sizeof why)
                      : msg_check_rank_exit(env->rank_exit, universe, why, sizeof why);
        if (bad < 0) {
            node_fail(n, ": protocol error: %s", why);
            close_node(n);
            break;
        }
        launcher_send(co, env);
        if (co->launcher &&
            evbuffer_get_length(bufferevent_get_output(co->launcher)) >= COORD_OUTPUT_HIGH)
            set_paused(co, 1);
        break;
    }
    case TMPI__ENVELOPE__MSG_STDIN_ACK:
        /* only rank 0's node acknowledges, and only what it was given */
        if (n->index != co->stdin_node || env->stdin_ack->bytes > co->stdin_inflight) {
            node_fail(n, ": protocol error: %s", "stdin acknowledged that it was not sent");
            close_node(n);
            break;
        }
        co->stdin_inflight -= env->stdin_ack->bytes;
        launcher_send(co, env);
        break;
    case TMPI__ENVELOPE__MSG_JOB_END:
        on_member_end(n, env->job_end);
        break;
    case TMPI__ENVELOPE__MSG_RANKS_SPAWNED: {
        /* a member's share of a spawn: the job's ranks (tmpictl jobs) and a spare node's
         * life; never more than the universe's slots */
        uint32_t ended = env->ranks_spawned->ended;
        uint64_t all = env->ranks_spawned->ranks;
        for (int i = 0; i < co->nnodes; i++)
            all += co->nodes[i].spawned;
        if (ended > n->spawned || all - ended > coord_universe(co) - co->sub->nprocs) {
            node_fail(n, ": protocol error: %s", "more ranks spawned than the universe holds");
            close_node(n);
            break;
        }
        n->spawned = n->spawned - ended + env->ranks_spawned->ranks;
        show_job_ranks(co);
        /* a spare node whose spawned ranks all ended is idle: the job may be done */
        release_if_done(co);
        break;
    }
    case TMPI__ENVELOPE__MSG_RANKS_REPLY: {
        /* a member answers for its own node */
        Tmpi__RanksReply part = *env->ranks_reply;
        part.node = (uint32_t)n->index;
        if (co->rq) ranks_gather_part(co->rq, &part);
        break;
    }
    case TMPI__ENVELOPE__MSG_JOB_UNLOADED: {
        const Tmpi__JobUnloaded *ju = env->job_unloaded;
        if (n->state < CN_ENDED) /* it never ran: it must have said why on its JobEnd */
            node_fail(n, ": %s", "ended without reporting its ranks' end");
        else if (ju->exit_status != 0 &&
                 (ju->failed_rank < 0 || (uint32_t)ju->failed_rank < co->sub->nprocs))
            /* a rank's atexit handler or destructor failed after its JobEnd */
            fail(co, ju->exit_status, ju->failed_rank,
                 ju->reason && *ju->reason ? ju->reason : "a rank failed while unloading");
        close_node(n);
        break;
    }
    default: {
        char what[96];
        snprintf(what, sizeof what, "unexpected '%s'", frame_msg_name(env));
        log_warning("job %llu: node %d (%s): %s", (unsigned long long)co->id, n->index, n->addr,
                    what);
        node_fail(n, ": protocol error: %s", what);
        close_node(n);
        break;
    }
    }
    leave(co);
}

static int connect_retry_later(struct coord_node *n);

static void on_close(void *arg, struct mesh_conn *c, int err, const char *why)
{
    struct coord_node *n = arg;
    struct coord *co = n->co;
    co->depth++;
    n->conn = NULL;
    int transient =
        err == -ETIMEDOUT || err == -ECONNRESET || err == -ECONNABORTED || err == -EPIPE;
    if (n->state == CN_CONNECTING && transient && !co->failed) {
        if (agent_now() < co->connect_deadline && connect_retry_later(n) == 0) {
            log_info("job %llu: node %d (%s): cannot connect: %s; trying again",
                     (unsigned long long)co->id, n->index, n->addr, why);
            leave(co);
            return;
        }
        char what[300];
        snprintf(what, sizeof what,
                 "%s, and no connection was made within %.1f s (link_reconnect_timeout_ms)", why,
                 co->a->cfg.link_reconnect_timeout_ms / 1000.0);
        node_fail(n, ": cannot connect: %s", what);
    } else if (n->state == CN_CONNECTING)
        node_fail(n, ": cannot connect: %s", why);
    else if (err == -ETIMEDOUT && n->state < CN_ENDED) {
        /* the mesh's heartbeats (mesh.h): stopped, swapped out or cut off; its name first */
        char reason[512];
        snprintf(reason, sizeof reason, "node %s %s (node %d of the job)", n->addr, why, n->index);
        fail(co, 1, -1, reason);
    } else if (!co->go_sent && n->state < CN_ENDED)
        node_fail(n, ": the connection ended while starting the job: %s", why);
    else if (n->state < CN_ENDED)
        node_fail(n, ": the node closed the connection (%s)", why);
    n->state = CN_DONE;
    leave(co);
}

static const struct mesh_ctl_ops coord_ops = {
    .on_ready = on_ready,
    .on_frame = on_frame,
    .on_close = on_close,
};

/* Starts the connection to member n.  0 or a negative errno (no callback runs then). */
static int node_connect(struct coord_node *n)
{
    n->dialled_at = agent_now();
    int r = mesh_ctl_connect(n->co->a->mesh, n->addr, &coord_ops, n, &n->conn);
    if (r < 0) n->conn = NULL;
    return r;
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
    struct coord_node *n = arg;
    struct coord *co = n->co;
    co->depth++;
    if (n->state == CN_CONNECTING && !co->failed && !n->conn) {
        int r = node_connect(n);
        if (r < 0) node_fail(n, ": cannot connect: %s", strerror(-r));
    }
    leave(co);
}

/* The next attempt to connect to n, COORD_RETRY_MS after the last one started.  0, -ENOMEM. */
static int connect_retry_later(struct coord_node *n)
{
    if (!n->retry) n->retry = evtimer_new(n->co->a->base, on_retry, n);
    if (!n->retry) return -ENOMEM;
    double wait = n->dialled_at + COORD_RETRY_MS / 1000.0 - agent_now();
    if (wait < 0) wait = 0;
    struct timeval tv = {(time_t)wait, (suseconds_t)((wait - (time_t)wait) * 1e6)};
    return evtimer_add(n->retry, &tv) < 0 ? -ENOMEM : 0;
}

/* ---- the launcher's side ---- */

static int check_submission(const struct agent *a, const Tmpi__SubmitJob *s, char *err,
                            size_t errlen)
{
    int r = msg_check_submit(s, err, errlen);
    if (r < 0) return r;
    /* One node is enough: the agents of a Slurm allocation are coordinated by one that runs
     * no rank (tmpi-launch's own, off the allocation's nodes). */
    if (s->n_nodes < 1) {
        snprintf(err, errlen, "a job across nodes needs 1 or more nodes");
        return -EINVAL;
    }
    if (s->program_size > a->cfg.max_program_size) {
        snprintf(err, errlen, "program of %llu bytes refused (max_program_size %zu)",
                 (unsigned long long)s->program_size, a->cfg.max_program_size);
        return -EINVAL;
    }
    for (size_t k = 0; k < s->n_apps; k++)
        if (s->apps[k]->program_size > a->cfg.max_program_size) {
            snprintf(err, errlen, "program %zu (%s) of %llu bytes refused (max_program_size %zu)",
                     k, s->apps[k]->program_name, (unsigned long long)s->apps[k]->program_size,
                     a->cfg.max_program_size);
            return -EINVAL;
        }
    return 0;
}

static Tmpi__SubmitJob *copy_submission(const Tmpi__SubmitJob *s)
{
    size_t len = tmpi__submit_job__get_packed_size(s);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) return NULL;
    tmpi__submit_job__pack(s, buf);
    Tmpi__SubmitJob *copy = tmpi__submit_job__unpack(NULL, len, buf);
    free(buf);
    return copy;
}

int coord_new(struct agent *a, const Tmpi__SubmitJob *s, uid_t uid, gid_t gid,
              struct bufferevent *launcher, void (*done)(void *arg), void *arg, struct coord **ret,
              char *err, size_t errlen)
{
    if (!config_has_key(&a->cfg)) {
        snprintf(err, errlen,
                 "this agent has no mesh: a job across several nodes needs tmpid "
                 "with --listen and --key-file");
        return -ENOKEY;
    }
    int r = check_submission(a, s, err, errlen);
    if (r < 0) return r;
    struct coord *co = calloc(1, sizeof *co);
    if (!co) return -ENOMEM;
    co->nodes = calloc(s->n_nodes, sizeof *co->nodes);
    co->sub = copy_submission(s);
    if (!co->nodes || !co->sub) {
        free_coord(co);
        return -ENOMEM;
    }
    co->a = a;
    co->launcher = launcher;
    co->done = done;
    co->done_arg = arg;
    co->owner_uid = uid;
    co->owner_gid = gid;
    co->fail_rank = -1;
    co->stdin_node = -1;
    struct passwd pw, *pwp = NULL;
    char pwbuf[1024];
    if (getpwuid_r(uid, &pw, pwbuf, sizeof pwbuf, &pwp) == 0 && pwp)
        snprintf(co->owner, sizeof co->owner, "%s", pw.pw_name);
    else
        snprintf(co->owner, sizeof co->owner, "%u", (unsigned)uid);
    randombytes_buf(&co->uid, sizeof co->uid);
    co->id = job_id_next(&a->next_job_id, a->node_number);
    co->created_at = agent_now();
    co->nnodes = (int)s->n_nodes;
    for (int i = 0; i < co->nnodes; i++) {
        struct coord_node *n = &co->nodes[i];
        const char *h = s->nodes[i]->host;
        /* check_submission made sure rank 0 is on exactly one node */
        for (size_t k = 0; s->stdin_open && k < s->nodes[i]->n_ranks; k++)
            if (s->nodes[i]->ranks[k] == 0) co->stdin_node = i;
        n->co = co;
        n->index = i;
        snprintf(n->addr, sizeof n->addr, strchr(h, ':') ? "[%s]:%u" : "%s:%u", h,
                 s->nodes[i]->port);
    }
    *ret = co;
    return 0;
}

void coord_start(struct coord *co, struct program **progs)
{
    co->start_time = agent_now();
    co->progs = progs;
    co->nprogs = co->sub->n_apps ? co->sub->n_apps : 1;
    co->depth++;
    const char *name = co->sub->n_apps ? co->sub->apps[0]->program_name : co->sub->program_name;
    log_info("job %llu: %u ranks of %s%s for %s across %d nodes (job %016llx)",
             (unsigned long long)co->id, co->sub->nprocs, name,
             co->sub->n_apps > 1 ? " and other programs" : "", co->owner, co->nnodes,
             (unsigned long long)co->uid);
    co->connect_deadline = co->start_time + co->a->cfg.link_reconnect_timeout_ms / 1000.0;
    for (int i = 0; i < co->nnodes && !co->failed; i++) {
        struct coord_node *n = &co->nodes[i];
        int r = node_connect(n);
        if (r < 0)
            node_fail(n, ": cannot connect: %s", strerror(-r)); /* drops every node still
                                                                 * connecting, this one too */
    }
    leave(co);
}

void coord_cancel(struct coord *co, int status, const char *reason)
{
    co->depth++;
    fail(co, status, -1, reason);
    leave(co);
}

void coord_signal(struct coord *co, int sig)
{
    /* only once every member runs its ranks; before, there is nobody to deliver to */
    if (!co->go_sent || co->failed) return;
    Tmpi__SignalJob sj = TMPI__SIGNAL_JOB__INIT;
    sj.job_id = co->uid;
    sj.signo = sig;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_SIGNAL_JOB;
    env.signal_job = &sj;
    co->depth++;
    broadcast(co, &env);
    leave(co);
}

int coord_stdin(struct coord *co, const Tmpi__StdinData *d)
{
    if (co->stdin_node < 0 || !co->go_sent || co->stdin_eof || d->data.len > MSG_STDIN_CHUNK ||
        co->stdin_inflight + d->data.len > MSG_STDIN_WINDOW)
        return -EPROTO;
    struct coord_node *n = &co->nodes[co->stdin_node];
    /* a job that ends, or rank 0's node gone: nobody reads it any more */
    if (co->failed || n->state >= CN_ENDED || !n->conn) return 0;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_STDIN_DATA;
    env.stdin_data = (Tmpi__StdinData *)d;
    /* node_send changes no state: no leave() needed */
    node_send(n, &env);
    co->stdin_inflight += d->data.len;
    co->stdin_eof = d->eof;
    return 0;
}

void coord_free(struct coord *co)
{
    co->launcher = NULL;
    co->done = NULL;
    if (!co->finished) {
        co->depth++;
        fail(co, 1, -1, "the launcher disconnected");
        co->depth--;
    }
    free_coord(co);
}

uid_t coord_owner_uid(const struct coord *co)
{
    return co->owner_uid;
}

const char *coord_owner(const struct coord *co)
{
    return co->owner;
}

uint64_t coord_id(const struct coord *co)
{
    return co->id;
}

void coord_launcher_drained(struct coord *co)
{
    set_paused(co, 0);
}
