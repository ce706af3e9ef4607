/* job_coord.c: the coordinator of a job across nodes, on a real event loop over real mesh
 * connections.  The test plays the members (a second agent on loopback whose job_assign upcall
 * takes each connection over) and the launcher (a socket pair).  Cases: the whole life of a
 * good job (JobAssign to every node, the program served in chunks, JobConnect only once every
 * member loaded, JobGo and JobStarted only once every member linked, signals, Output and
 * RankExit relayed, JobRelease once every member ended, JobEnd to the launcher once every
 * member unloaded); all or nothing at load; the first failure deciding status and reason, and a
 * lost link's reason replaced by the cause; a member that cannot be reached; a user's cancel; a
 * member relaying output of a rank not in the job; a program not in the job asked for; the
 * launcher going away; the submission checks of coord_new. */
#include <errno.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "agent.h"
#include "frame.h"
#include "job_coord.h"
#include "log.h"
#include "mesh.h"
#include "progcache.h"

#define WAIT_SEC 30
#define NNODES 2
#define NPROCS 3
/* over two chunks (FRAME_PROGRAM_CHUNK), the last one partial */
#define PROG_SIZE (2 * FRAME_PROGRAM_CHUNK + 12345)

static struct event_base *base;
static char dir[] = "/tmp/test_job_coord.XXXXXX";
static struct agent coord_agent, member_agent;
static uint16_t member_port;
static uint8_t *prog_bytes;
static uint8_t prog_hash[PROGRAM_HASH_SIZE];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pump(void)
{
    struct timeval tv = {.tv_usec = 10000};
    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

/* A frame's own copy (valid after the callback that saw it). */
static Tmpi__Envelope *copy_env(const Tmpi__Envelope *env)
{
    uint8_t *buf;
    size_t len;
    CHECK_EQ(frame_encode(env, 64u << 20, &buf, &len), 0);
    Tmpi__Envelope *c = frame_decode(buf + FRAME_HEADER_SIZE, len - FRAME_HEADER_SIZE);
    free(buf);
    CHECK(c);
    return c;
}

/* ---- the members: one per node index, all served by member_agent ---- */

#define MAX_FRAMES 64

struct member {
    struct mesh_conn *c;
    int assigned, closed;
    Tmpi__JobAssign *ja; /* a copy */
    Tmpi__Envelope *got[MAX_FRAMES];
    int ngot, next;
};
static struct member members[NNODES];

static void m_frame(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    struct member *m = arg;
    CHECK(m->ngot < MAX_FRAMES);
    m->got[m->ngot++] = copy_env(env);
}

static void m_close(void *arg, struct mesh_conn *c, int err, const char *why)
{
    struct member *m = arg;
    m->closed = 1;
    m->c = NULL;
}

static const struct mesh_ctl_ops member_ops = {.on_frame = m_frame, .on_close = m_close};

static void m_assign(void *arg, struct mesh_conn *c, const Tmpi__JobAssign *ja)
{
    CHECK(ja->node < NNODES, "a node index of the job, got %u", ja->node);
    struct member *m = &members[ja->node];
    CHECK(!m->assigned, "one JobAssign per node");
    m->assigned = 1;
    m->c = c;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_ASSIGN;
    env.job_assign = (Tmpi__JobAssign *)ja;
    Tmpi__Envelope *copy = copy_env(&env);
    m->ja = copy->job_assign;
    copy->job_assign = NULL;
    copy->msg_case = TMPI__ENVELOPE__MSG__NOT_SET;
    frame_free(copy);
    mesh_conn_set_ops(c, &member_ops, m);
}

static const struct mesh_accept_ops accept_ops = {.job_assign = m_assign};

static void members_reset(void)
{
    for (int i = 0; i < NNODES; i++) {
        struct member *m = &members[i];
        if (m->c) mesh_conn_close(m->c);
        for (int k = 0; k < m->ngot; k++)
            frame_free(m->got[k]);
        if (m->ja) tmpi__job_assign__free_unpacked(m->ja, NULL);
        memset(m, 0, sizeof *m);
    }
}

static void wait_assigned(void)
{
    double end = now() + WAIT_SEC;
    while (!members[0].assigned || !members[1].assigned) {
        CHECK(now() < end, "a JobAssign on every node within %d s", WAIT_SEC);
        pump();
    }
}

/* The next frame the coordinator sent member m must be msg_case (owned by m). */
static const Tmpi__Envelope *m_expect(struct member *m, Tmpi__Envelope__MsgCase msg_case)
{
    double end = now() + WAIT_SEC;
    while (m->next >= m->ngot) {
        CHECK(!m->closed, "message %d, got the end of the connection", (int)msg_case);
        CHECK(now() < end, "message %d within %d s", (int)msg_case, WAIT_SEC);
        pump();
    }
    const Tmpi__Envelope *env = m->got[m->next++];
    CHECK(env->msg_case == msg_case, "message %d, got '%s'", (int)msg_case, frame_msg_name(env));
    return env;
}

/* Nothing more has come to m (after the frames already waited for). */
static void m_nothing(struct member *m)
{
    CHECK(m->next == m->ngot, "nothing more, got '%s'",
          m->next < m->ngot ? frame_msg_name(m->got[m->next]) : "");
}

static void m_send(struct member *m, const Tmpi__Envelope *env)
{
    CHECK(m->c);
    CHECK_EQ(mesh_send(m->c, env), 0);
}

static void m_loaded(struct member *m, int ok, const char *error)
{
    Tmpi__JobLoaded jl = TMPI__JOB_LOADED__INIT;
    jl.uid = m->ja->uid;
    jl.ok = ok;
    jl.error = (char *)error;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_LOADED;
    env.job_loaded = &jl;
    m_send(m, &env);
}

static void m_linked(struct member *m, int ok, const char *error)
{
    Tmpi__JobLinked jl = TMPI__JOB_LINKED__INIT;
    jl.uid = m->ja->uid;
    jl.ok = ok;
    jl.error = (char *)error;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_LINKED;
    env.job_linked = &jl;
    m_send(m, &env);
}

static void m_output(struct member *m, uint32_t rank, const char *text)
{
    Tmpi__Output o = TMPI__OUTPUT__INIT;
    o.rank = rank;
    o.stream = 1;
    o.data.data = (uint8_t *)text;
    o.data.len = strlen(text);
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_OUTPUT;
    env.output = &o;
    m_send(m, &env);
}

static void m_rank_exit(struct member *m, uint32_t rank, int code)
{
    Tmpi__RankExit re = TMPI__RANK_EXIT__INIT;
    re.rank = rank;
    re.code = code;
    re.message = "";
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_RANK_EXIT;
    env.rank_exit = &re;
    m_send(m, &env);
}

static void m_end(struct member *m, int status, int rank, const char *reason)
{
    Tmpi__JobEnd je = TMPI__JOB_END__INIT;
    je.exit_status = status;
    je.failed_rank = rank;
    je.reason = (char *)reason;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_END;
    env.job_end = &je;
    m_send(m, &env);
}

static void m_unloaded(struct member *m)
{
    Tmpi__JobUnloaded ju = TMPI__JOB_UNLOADED__INIT;
    ju.uid = m->ja->uid;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_UNLOADED;
    env.job_unloaded = &ju;
    m_send(m, &env);
}

static void m_need_program(struct member *m, const uint8_t *hash)
{
    Tmpi__NeedProgram np = TMPI__NEED_PROGRAM__INIT;
    np.program_hash.data = (uint8_t *)hash;
    np.program_hash.len = PROGRAM_HASH_SIZE;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_NEED_PROGRAM;
    env.need_program = &np;
    m_send(m, &env);
}

/* ---- the launcher: a socket pair, the coordinator writing on one end ---- */

struct launcher {
    int fd;
    struct bufferevent *bev;
    uint8_t *buf;
    size_t len, cap;
    int done_calls;
};

static void launcher_open(struct launcher *l)
{
    memset(l, 0, sizeof *l);
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    l->fd = sv[1];
    l->bev = bufferevent_socket_new(base, sv[0], BEV_OPT_CLOSE_ON_FREE);
    CHECK(l->bev);
    CHECK_EQ(bufferevent_enable(l->bev, EV_WRITE), 0);
}

static void launcher_close(struct launcher *l)
{
    bufferevent_free(l->bev);
    close(l->fd);
    free(l->buf);
}

static void launcher_done(void *arg)
{
    struct launcher *l = arg;
    l->done_calls++;
}

/* The next frame to the launcher must be msg_case (frame_free it). */
static Tmpi__Envelope *l_expect(struct launcher *l, Tmpi__Envelope__MsgCase msg_case)
{
    double end = now() + WAIT_SEC;
    for (;;) {
        size_t blen;
        if (l->len >= FRAME_HEADER_SIZE) {
            CHECK_EQ(frame_parse_header(l->buf, 64u << 20, &blen), 0);
            if (l->len >= FRAME_HEADER_SIZE + blen) {
                Tmpi__Envelope *env = frame_decode(l->buf + FRAME_HEADER_SIZE, blen);
                CHECK(env);
                l->len -= FRAME_HEADER_SIZE + blen;
                memmove(l->buf, l->buf + FRAME_HEADER_SIZE + blen, l->len);
                CHECK(env->msg_case == msg_case, "message %d to the launcher, got '%s' (%s)",
                      (int)msg_case, frame_msg_name(env),
                      env->msg_case == TMPI__ENVELOPE__MSG_JOB_END ? env->job_end->reason : "");
                return env;
            }
        }
        if (l->cap - l->len < 4096) {
            l->cap = l->cap ? 2 * l->cap : 65536;
            l->buf = realloc(l->buf, l->cap);
            CHECK(l->buf);
        }
        ssize_t n = recv(l->fd, l->buf + l->len, l->cap - l->len, MSG_DONTWAIT);
        if (n > 0) {
            l->len += (size_t)n;
            continue;
        }
        CHECK(now() < end, "message %d to the launcher within %d s", (int)msg_case, WAIT_SEC);
        pump();
    }
}

/* The launcher's JobEnd: status, failed rank and a reason containing text; the done callback
 * ran once. */
static void l_expect_end(struct launcher *l, uint64_t id, int status, int rank, const char *text)
{
    Tmpi__Envelope *env = l_expect(l, TMPI__ENVELOPE__MSG_JOB_END);
    const Tmpi__JobEnd *je = env->job_end;
    CHECK_EQ(je->job_id, id);
    CHECK_EQ(je->exit_status, status);
    CHECK_EQ(je->failed_rank, rank);
    if (*text)
        CHECK(strstr(je->reason, text), "a reason with \"%s\", got \"%s\"", text, je->reason);
    else
        CHECK(!*je->reason, "no reason, got \"%s\"", je->reason);
    frame_free(env);
    CHECK_EQ(l->done_calls, 1);
}

/* ---- the job ---- */

struct sub {
    Tmpi__SubmitJob s;
    Tmpi__NodePlacement np[NNODES], *nodes[NNODES];
    uint32_t r0[2], r1[1];
    char *args[1];
};

static void sub_init(struct sub *sb, uint16_t port1)
{
    memset(sb, 0, sizeof *sb);
    tmpi__submit_job__init(&sb->s);
    sb->s.nprocs = NPROCS;
    sb->s.program_hash.data = prog_hash;
    sb->s.program_hash.len = PROGRAM_HASH_SIZE;
    sb->s.program_size = PROG_SIZE;
    sb->s.program_name = "./coordinated";
    sb->args[0] = "arg";
    sb->s.args = sb->args;
    sb->s.n_args = 1;
    sb->s.cwd = "/tmp";
    sb->r0[0] = 0;
    sb->r0[1] = 1;
    sb->r1[0] = 2;
    for (int i = 0; i < NNODES; i++) {
        tmpi__node_placement__init(&sb->np[i]);
        sb->np[i].host = "127.0.0.1";
        sb->np[i].port = i == 0 ? member_port : port1;
        sb->nodes[i] = &sb->np[i];
    }
    sb->np[0].ranks = sb->r0;
    sb->np[0].n_ranks = 2;
    sb->np[1].ranks = sb->r1;
    sb->np[1].n_ranks = 1;
    sb->s.nodes = sb->nodes;
    sb->s.n_nodes = NNODES;
}

/* A coordinator for the submission, started with the (pinned) program.  Its id in *ret_id:
 * a job that fails at once is gone when coord_start returns. */
static struct coord *start(struct launcher *l, struct sub *sb, uint64_t *ret_id)
{
    struct coord *co;
    char err[256] = "";
    int r = coord_new(&coord_agent, &sb->s, getuid(), getgid(), l->bev, launcher_done, l, &co, err,
                      sizeof err);
    CHECK(r == 0, "coord_new: %d %s", r, err);
    struct program **progs = calloc(1, sizeof *progs);
    CHECK(progs);
    progs[0] = progcache_get(&coord_agent.cache, prog_hash);
    CHECK(progs[0]);
    *ret_id = coord_id(co);
    coord_start(co, progs);
    return co;
}

/* Every member connection of the last job is gone (the coordinator closed them). */
static void wait_members_closed(void)
{
    double end = now() + WAIT_SEC;
    for (int i = 0; i < NNODES; i++)
        while (members[i].assigned && !members[i].closed) {
            CHECK(now() < end, "node %d's connection closed within %d s", i, WAIT_SEC);
            pump();
        }
    members_reset();
}

/* Both members assigned, loaded and linked: the job runs. */
static uint64_t run_to_go(struct launcher *l, struct sub *sb, struct coord **ret)
{
    uint64_t id;
    *ret = start(l, sb, &id);
    wait_assigned();
    for (int i = 0; i < NNODES; i++)
        m_loaded(&members[i], 1, "");
    for (int i = 0; i < NNODES; i++)
        m_expect(&members[i], TMPI__ENVELOPE__MSG_JOB_CONNECT);
    for (int i = 0; i < NNODES; i++)
        m_linked(&members[i], 1, "");
    for (int i = 0; i < NNODES; i++)
        m_expect(&members[i], TMPI__ENVELOPE__MSG_JOB_GO);
    Tmpi__Envelope *env = l_expect(l, TMPI__ENVELOPE__MSG_JOB_STARTED);
    CHECK_EQ(env->job_started->job_id, id);
    frame_free(env);
    return id;
}

static void expect_cancel(struct member *m, int status, const char *text)
{
    const Tmpi__Envelope *env = m_expect(m, TMPI__ENVELOPE__MSG_JOB_CANCEL);
    CHECK_EQ(env->job_cancel->uid, m->ja->uid);
    CHECK_EQ(env->job_cancel->exit_status, status);
    CHECK(strstr(env->job_cancel->reason, text), "a cancel saying \"%s\", got \"%s\"", text,
          env->job_cancel->reason);
}

/* ---- the cases ---- */

static void test_good_job(void)
{
    struct launcher l;
    launcher_open(&l);
    struct sub sb;
    sub_init(&sb, member_port);
    uint64_t id;
    struct coord *co = start(&l, &sb, &id);
    CHECK(id > 0);
    wait_assigned();

    /* the assignment: the same job uid everywhere, the node's index, the submission */
    uint64_t uid = members[0].ja->uid;
    CHECK(uid == members[1].ja->uid, "one job uid on every node");
    for (int i = 0; i < NNODES; i++) {
        const Tmpi__JobAssign *ja = members[i].ja;
        CHECK_EQ(ja->node, i);
        CHECK_EQ(ja->n_nodes, NNODES);
        CHECK_EQ(ja->nprocs, NPROCS);
        CHECK_EQ(ja->coordinator_job_id, id);
        CHECK(strcmp(ja->coordinator, "coord") == 0);
        CHECK(strcmp(ja->program_name, "./coordinated") == 0);
        CHECK(ja->n_args == 1 && strcmp(ja->args[0], "arg") == 0);
        CHECK_EQ(ja->owner_uid, getuid());
        CHECK_EQ(ja->owner_gid, getgid());
        CHECK_EQ(ja->program_size, PROG_SIZE);
    }

    /* the program, in order, in chunks no larger than FRAME_PROGRAM_CHUNK */
    m_need_program(&members[0], prog_hash);
    size_t off = 0;
    int last = 0;
    while (!last) {
        const Tmpi__ProgramChunk *ch =
            m_expect(&members[0], TMPI__ENVELOPE__MSG_PROGRAM_CHUNK)->program_chunk;
        CHECK_EQ(ch->offset, off);
        CHECK(ch->data.len > 0 && ch->data.len <= FRAME_PROGRAM_CHUNK);
        CHECK(off + ch->data.len <= PROG_SIZE);
        CHECK(memcmp(ch->data.data, prog_bytes + off, ch->data.len) == 0, "chunk at %zu", off);
        CHECK(memcmp(ch->program_hash.data, prog_hash, PROGRAM_HASH_SIZE) == 0);
        off += ch->data.len;
        last = ch->last;
    }
    CHECK_EQ(off, PROG_SIZE);

    /* one member loaded: nobody connects yet.  (Its Output reaching the launcher shows the
     * coordinator has read the JobLoaded before it.) */
    m_loaded(&members[0], 1, "");
    m_output(&members[0], 0, "loaded\n");
    Tmpi__Envelope *env = l_expect(&l, TMPI__ENVELOPE__MSG_OUTPUT);
    CHECK(env->output->rank == 0 && env->output->data.len == 7);
    frame_free(env);
    m_nothing(&members[0]);
    m_nothing(&members[1]);
    m_loaded(&members[1], 1, "");
    for (int i = 0; i < NNODES; i++)
        CHECK_EQ(m_expect(&members[i], TMPI__ENVELOPE__MSG_JOB_CONNECT)->job_connect->uid, uid);

    /* a signal before the ranks run has nobody to go to */
    coord_signal(co, SIGUSR1);

    /* one member linked: no JobGo yet */
    m_linked(&members[1], 1, "");
    m_output(&members[1], 2, "linked\n");
    frame_free(l_expect(&l, TMPI__ENVELOPE__MSG_OUTPUT));
    m_nothing(&members[0]);
    m_nothing(&members[1]);
    m_linked(&members[0], 1, "");
    for (int i = 0; i < NNODES; i++)
        CHECK_EQ(m_expect(&members[i], TMPI__ENVELOPE__MSG_JOB_GO)->job_go->uid, uid);
    env = l_expect(&l, TMPI__ENVELOPE__MSG_JOB_STARTED);
    CHECK_EQ(env->job_started->job_id, id);
    CHECK_EQ(env->job_started->nprocs, NPROCS);
    frame_free(env);

    /* running: signals reach every member, by the job's uid */
    coord_signal(co, SIGUSR2);
    for (int i = 0; i < NNODES; i++) {
        const Tmpi__SignalJob *sj =
            m_expect(&members[i], TMPI__ENVELOPE__MSG_SIGNAL_JOB)->signal_job;
        CHECK_EQ(sj->job_id, uid);
        CHECK_EQ(sj->signo, SIGUSR2);
    }

    /* the ranks end: RankExit relayed; JobRelease only once every member ended */
    m_rank_exit(&members[0], 0, 0);
    m_rank_exit(&members[0], 1, 0);
    m_end(&members[0], 0, -1, "");
    m_output(&members[0], 1, "ended\n");
    for (int k = 0; k < 2; k++) {
        env = l_expect(&l, TMPI__ENVELOPE__MSG_RANK_EXIT);
        CHECK_EQ(env->rank_exit->rank, k);
        frame_free(env);
    }
    frame_free(l_expect(&l, TMPI__ENVELOPE__MSG_OUTPUT));
    m_nothing(&members[0]);
    m_rank_exit(&members[1], 2, 0);
    m_end(&members[1], 0, -1, "");
    frame_free(l_expect(&l, TMPI__ENVELOPE__MSG_RANK_EXIT));
    for (int i = 0; i < NNODES; i++)
        CHECK_EQ(m_expect(&members[i], TMPI__ENVELOPE__MSG_JOB_RELEASE)->job_release->uid, uid);

    /* JobEnd to the launcher once every member unloaded, then the coordinator is gone */
    m_unloaded(&members[1]);
    m_output(&members[0], 0, "unloading\n");
    frame_free(l_expect(&l, TMPI__ENVELOPE__MSG_OUTPUT));
    CHECK_EQ(l.done_calls, 0);
    m_unloaded(&members[0]);
    l_expect_end(&l, id, 0, -1, "");
    wait_members_closed();
    launcher_close(&l);
}

/* A member that cannot load fails the job before any rank runs; the first failure decides. */
static void test_load_fails(void)
{
    struct launcher l;
    launcher_open(&l);
    struct sub sb;
    sub_init(&sb, member_port);
    uint64_t id;
    (void)start(&l, &sb, &id);
    wait_assigned();
    m_loaded(&members[0], 1, "");
    m_loaded(&members[1], 0, "no room for the ranks");
    char want[128];
    snprintf(want, sizeof want, "node 1 (127.0.0.1:%u): cannot load: no room for the ranks",
             member_port);
    for (int i = 0; i < NNODES; i++)
        expect_cancel(&members[i], 1, want);
    /* the members' own reasons come later: the first failure stays */
    m_end(&members[0], 143, -1, "cancelled: node 1 cannot load");
    m_end(&members[1], 1, -1, "no room for the ranks");
    l_expect_end(&l, id, 1, -1, want);
    for (int i = 0; i < NNODES; i++)
        m_nothing(&members[i]); /* no JobConnect, no JobRelease */
    wait_members_closed();
    launcher_close(&l);
}

/* A member lost while running: a survivor's "lost connection" report is replaced by the
 * cause once the coordinator sees the node's own connection end. */
static void test_member_lost(void)
{
    struct launcher l;
    launcher_open(&l);
    struct sub sb;
    sub_init(&sb, member_port);
    struct coord *co;
    uint64_t id = run_to_go(&l, &sb, &co);
    m_end(&members[0], 1, -1, "lost connection to node 1 (member)");
    expect_cancel(&members[0], 1, "lost connection to node 1");
    expect_cancel(&members[1], 1, "lost connection to node 1");
    mesh_conn_close(members[1].c);
    members[1].c = NULL;
    members[1].closed = 1;
    char want[128];
    snprintf(want, sizeof want, "node 1 (127.0.0.1:%u): the node closed the connection",
             member_port);
    l_expect_end(&l, id, 1, -1, want);
    wait_members_closed();
    launcher_close(&l);
}

/* A member that cannot be reached: the job fails before any rank runs anywhere. */
static void test_unreachable(void)
{
    /* a port nobody listens on */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sin;
    CHECK(s >= 0 && bind(s, (struct sockaddr *)&sin, sizeof sin) == 0);
    CHECK_EQ(getsockname(s, (struct sockaddr *)&sin, &sl), 0);
    uint16_t dead = ntohs(sin.sin_port);
    close(s);

    struct launcher l;
    launcher_open(&l);
    struct sub sb;
    sub_init(&sb, dead);
    uint64_t id;
    (void)start(&l, &sb, &id);
    char want[128];
    snprintf(want, sizeof want, "node 1 (127.0.0.1:%u): cannot connect", dead);
    /* node 0 may have been assigned first: then it is told to stop and reports its end */
    double end = now() + WAIT_SEC;
    while (l.done_calls == 0) {
        CHECK(now() < end, "the job failed within %d s", WAIT_SEC);
        pump();
        struct member *m = &members[0];
        if (m->assigned && m->next < m->ngot) {
            expect_cancel(m, 1, want);
            m_end(m, 143, -1, "cancelled");
        }
    }
    l_expect_end(&l, id, 1, -1, want);
    CHECK(!members[1].assigned);
    wait_members_closed();
    launcher_close(&l);
}

static void test_cancel(void)
{
    struct launcher l;
    launcher_open(&l);
    struct sub sb;
    sub_init(&sb, member_port);
    struct coord *co;
    uint64_t id = run_to_go(&l, &sb, &co);
    coord_cancel(co, 143, "job cancelled by uid 0");
    for (int i = 0; i < NNODES; i++)
        expect_cancel(&members[i], 143, "job cancelled by uid 0");
    /* cancelled: signals are not passed on any more */
    coord_signal(co, SIGUSR1);
    m_end(&members[0], 143, -1, "job cancelled by uid 0");
    m_end(&members[1], 143, -1, "job cancelled by uid 0");
    l_expect_end(&l, id, 143, -1, "job cancelled by uid 0");
    for (int i = 0; i < NNODES; i++)
        m_nothing(&members[i]);
    wait_members_closed();
    launcher_close(&l);
}

/* A member may relay only its job's ranks; anything else fails the job and drops it. */
static void test_protocol_errors(void)
{
    struct launcher l;
    launcher_open(&l);
    struct sub sb;
    sub_init(&sb, member_port);
    struct coord *co;
    uint64_t id = run_to_go(&l, &sb, &co);
    m_output(&members[1], NPROCS + 4, "not a rank of the job\n");
    char want[160];
    snprintf(want, sizeof want,
             "node 1 (127.0.0.1:%u): protocol error: output of rank 7 in a job of 3 ranks",
             member_port);
    expect_cancel(&members[0], 1, want);
    double end = now() + WAIT_SEC;
    while (!members[1].closed) {
        CHECK(now() < end, "the offending member dropped within %d s", WAIT_SEC);
        pump();
    }
    m_end(&members[0], 143, -1, "cancelled");
    l_expect_end(&l, id, 1, -1, want);
    wait_members_closed();
    launcher_close(&l);

    /* asking for a program that is not the job's */
    launcher_open(&l);
    (void)start(&l, &sb, &id);
    wait_assigned();
    uint8_t other[PROGRAM_HASH_SIZE];
    memset(other, 0x33, sizeof other);
    m_need_program(&members[0], other);
    snprintf(want, sizeof want,
             "node 0 (127.0.0.1:%u): asked for a program that is not part of the job", member_port);
    for (int i = 0; i < NNODES; i++)
        expect_cancel(&members[i], 1, want);
    m_end(&members[0], 1, -1, "");
    m_end(&members[1], 143, -1, "cancelled");
    l_expect_end(&l, id, 1, -1, want);
    wait_members_closed();
    launcher_close(&l);

    /* a message a member never sends */
    launcher_open(&l);
    (void)start(&l, &sb, &id);
    wait_assigned();
    Tmpi__JobGo go = TMPI__JOB_GO__INIT;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_GO;
    env.job_go = &go;
    m_send(&members[1], &env);
    snprintf(want, sizeof want, "node 1 (127.0.0.1:%u): protocol error: unexpected 'job_go'",
             member_port);
    expect_cancel(&members[0], 1, want);
    m_end(&members[0], 143, -1, "cancelled");
    l_expect_end(&l, id, 1, -1, want);
    wait_members_closed();
    launcher_close(&l);
}

/* The launcher went away: every member is told to stop, the coordinator is freed at once. */
static void test_launcher_gone(void)
{
    struct launcher l;
    launcher_open(&l);
    struct sub sb;
    sub_init(&sb, member_port);
    struct coord *co;
    (void)run_to_go(&l, &sb, &co);
    coord_free(co);
    for (int i = 0; i < NNODES; i++)
        expect_cancel(&members[i], 1, "the launcher disconnected");
    CHECK_EQ(l.done_calls, 0); /* coord_free's caller knows */
    wait_members_closed();
    launcher_close(&l);
}

static void test_checks(void)
{
    struct sub sb;
    struct coord *co = NULL;
    char err[256];
    struct bufferevent *none = NULL;

    sub_init(&sb, member_port);
    sb.s.n_nodes = 0; /* one node is enough (a Slurm allocation's agents), none is not */
    CHECK_EQ(coord_new(&coord_agent, &sb.s, 0, 0, none, NULL, NULL, &co, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "a job across nodes needs 1"), "got \"%s\"", err);

    sub_init(&sb, member_port);
    sb.s.n_nodes = 1;
    sb.np[0].n_ranks = 0;
    CHECK_EQ(coord_new(&coord_agent, &sb.s, 0, 0, none, NULL, NULL, &co, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "node 0 needs a host, a port and ranks"), "got \"%s\"", err);

    sub_init(&sb, member_port);
    sb.r1[0] = 1; /* rank 1 placed twice, rank 2 nowhere */
    CHECK_EQ(coord_new(&coord_agent, &sb.s, 0, 0, none, NULL, NULL, &co, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "rank 1 placed twice"), "got \"%s\"", err);

    sub_init(&sb, member_port);
    size_t saved = coord_agent.cfg.max_program_size;
    coord_agent.cfg.max_program_size = PROG_SIZE - 1;
    CHECK_EQ(coord_new(&coord_agent, &sb.s, 0, 0, none, NULL, NULL, &co, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "(max_program_size"), "got \"%s\"", err);
    coord_agent.cfg.max_program_size = saved;

    /* an agent without a mesh key cannot coordinate */
    char *key = coord_agent.cfg.key_file;
    coord_agent.cfg.key_file = NULL;
    CHECK_EQ(coord_new(&coord_agent, &sb.s, 0, 0, none, NULL, NULL, &co, err, sizeof err), -ENOKEY);
    CHECK(strstr(err, "--key-file"), "got \"%s\"", err);
    coord_agent.cfg.key_file = key;
    CHECK(co == NULL);

    /* built but never started (its launcher left while the program was uploading) */
    CHECK_EQ(coord_new(&coord_agent, &sb.s, 0, 0, none, NULL, NULL, &co, err, sizeof err), 0);
    coord_free(co);
}

static void agent_new(struct agent *a, const char *name, const char *key, const char *listen)
{
    memset(a, 0, sizeof *a);
    CHECK_EQ(config_defaults(&a->cfg), 0);
    free(a->cfg.name);
    a->cfg.name = strdup(name);
    a->cfg.key_file = strdup(key);
    a->cfg.listen = listen ? strdup(listen) : NULL;
    a->base = base;
    a->start_time = agent_now();
    progcache_init(&a->cache, 4);
    CHECK_EQ(mesh_init(&a->mesh, &a->cfg, a->base), 0);
}

static void agent_free(struct agent *a)
{
    mesh_close(a->mesh);
    progcache_destroy(&a->cache);
    config_free(&a->cfg);
}

int main(void)
{
    log_set_level(LOG_CRIT);
    signal(SIGPIPE, SIG_IGN);
    CHECK_EQ(evthread_use_pthreads(), 0);
    CHECK(sodium_init() >= 0);
    base = event_base_new();
    CHECK(base);
    CHECK(mkdtemp(dir));
    char key[64];
    snprintf(key, sizeof key, "%s/cluster.key", dir);
    int fd = open(key, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const char *k = "the cluster key of the coordinator test, 32+ bytes";
    CHECK(fd >= 0 && write(fd, k, strlen(k)) == (ssize_t)strlen(k));
    close(fd);

    agent_new(&coord_agent, "coord", key, NULL);
    agent_new(&member_agent, "member", key, "127.0.0.1:0");
    mesh_set_accept_ops(member_agent.mesh, &accept_ops, NULL);
    const char *addr;
    uint64_t accepted, failures;
    mesh_stats(member_agent.mesh, &addr, &accepted, &failures);
    const char *colon = strrchr(addr, ':');
    CHECK(colon);
    member_port = (uint16_t)atoi(colon + 1);
    CHECK(member_port > 0);

    /* the program, pinned once in the coordinator's cache (each job pins it again) */
    prog_bytes = malloc(PROG_SIZE);
    CHECK(prog_bytes);
    for (size_t i = 0; i < PROG_SIZE; i++)
        prog_bytes[i] = (uint8_t)(i * 131 + (i >> 11));
    crypto_hash_sha256(prog_hash, prog_bytes, PROG_SIZE);
    uint8_t *owned = malloc(PROG_SIZE);
    CHECK(owned);
    memcpy(owned, prog_bytes, PROG_SIZE);
    struct program *pinned;
    CHECK_EQ(progcache_add(&coord_agent.cache, prog_hash, owned, PROG_SIZE, &pinned), 0);

    test_checks();
    test_good_job();
    test_load_fails();
    test_member_lost();
    test_unreachable();
    test_cancel();
    test_protocol_errors();
    test_launcher_gone();

    progcache_release(&coord_agent.cache, pinned);
    agent_free(&member_agent);
    agent_free(&coord_agent);
    /* let the closed connections go */
    for (int i = 0; i < 10; i++)
        pump();
    event_base_free(base);
    free(prog_bytes);
    unlink(key);
    rmdir(dir);
    return 0;
}
