/* control.c: the agent's control socket on a real event loop, driven by real Unix-socket
 * clients.  Frame dispatch and validation (malformed, oversized and unexpected frames close
 * the connection with an Error and count in bad_frames), the requests (status, jobs, cancel,
 * ping) and the submission path up to NeedProgram (checks, one job per connection, max_jobs
 * counting an upload, program chunks checked against the hash), and every limit the socket
 * enforces (connections, idle and message deadlines, buffered input, unread replies, frame,
 * argument and environment sizes), each refusal counted in StatusReply.  As root, a child
 * that became nobody checks what non-admins may not do (max_connections_per_user, ping of an
 * address that is no configured peer). */
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "agent.h"
#include "control.h"
#include "frame.h"
#include "job_history.h"
#include "job_quota.h"
#include "log.h"
#include "mesh.h"
#include "progcache.h"
#include "query_table.h"

/* Generous: the machine may be loaded and sanitizers slow everything down. */
#define WAIT_SEC 30

static struct agent agent;
static char dir[] = "/tmp/test_control.XXXXXX";
static char sock_path[64];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One turn of the agent's loop (at most 10 ms). */
static void pump(void)
{
    struct timeval tv = {.tv_usec = 10000};
    event_base_loopexit(agent.base, &tv);
    event_base_dispatch(agent.base);
}

/* ---- a tool's side of a connection ---- */

struct client {
    int fd;
    uint8_t *buf;
    size_t len, cap;
    int eof;
};

static void client_open(struct client *cl)
{
    memset(cl, 0, sizeof *cl);
    cl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(cl->fd >= 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock_path);
    CHECK(connect(cl->fd, (struct sockaddr *)&sun, sizeof sun) == 0, "connect: %s",
          strerror(errno));
}

static void client_close(struct client *cl)
{
    if (cl->fd >= 0) close(cl->fd);
    cl->fd = -1;
    free(cl->buf);
    cl->buf = NULL;
    cl->len = cl->cap = 0;
}

static void send_raw(struct client *cl, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = send(cl->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pump(); /* the agent reads meanwhile */
            continue;
        }
        CHECK(n > 0, "send: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

static void send_env(struct client *cl, const Tmpi__Envelope *env)
{
    uint8_t *buf;
    size_t len;
    CHECK_EQ(frame_encode(env, 64u << 20, &buf, &len), 0);
    send_raw(cl, buf, len);
    free(buf);
}

/* Reads what has arrived, without waiting. */
static void client_fill(struct client *cl)
{
    for (;;) {
        if (cl->cap - cl->len < 65536) {
            cl->cap = cl->cap ? cl->cap * 2 : 65536;
            cl->buf = realloc(cl->buf, cl->cap);
            CHECK(cl->buf);
        }
        ssize_t n = recv(cl->fd, cl->buf + cl->len, cl->cap - cl->len, MSG_DONTWAIT);
        if (n > 0) {
            cl->len += (size_t)n;
            continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) cl->eof = 1;
        return;
    }
}

/* The next whole frame already received, or NULL. */
static Tmpi__Envelope *take_frame(struct client *cl)
{
    size_t blen;
    if (cl->len < FRAME_HEADER_SIZE) return NULL;
    CHECK_EQ(frame_parse_header(cl->buf, 64u << 20, &blen), 0);
    if (cl->len < FRAME_HEADER_SIZE + blen) return NULL;
    Tmpi__Envelope *env = frame_decode(cl->buf + FRAME_HEADER_SIZE, blen);
    CHECK(env, "the agent sent a frame that does not decode");
    memmove(cl->buf, cl->buf + FRAME_HEADER_SIZE + blen, cl->len - FRAME_HEADER_SIZE - blen);
    cl->len -= FRAME_HEADER_SIZE + blen;
    return env;
}

/* The next frame from the agent; fails the test when none comes. */
static Tmpi__Envelope *recv_env(struct client *cl)
{
    double end = now() + WAIT_SEC;
    for (;;) {
        client_fill(cl);
        Tmpi__Envelope *env = take_frame(cl);
        if (env) return env;
        CHECK(!cl->eof, "a frame, got the end of the connection");
        CHECK(now() < end, "a frame within %d s", WAIT_SEC);
        pump();
    }
}

/* The next frame must be msg_case; returns it (frame_free it). */
static Tmpi__Envelope *expect(struct client *cl, Tmpi__Envelope__MsgCase msg_case)
{
    Tmpi__Envelope *env = recv_env(cl);
    CHECK(env->msg_case == msg_case, "message %d, got '%s' (%s)", (int)msg_case,
          frame_msg_name(env),
          env->msg_case == TMPI__ENVELOPE__MSG_ERROR ? env->error->message : "-");
    return env;
}

/* The next frame is an Error with code whose message contains text. */
static void expect_error(struct client *cl, int code, const char *text)
{
    Tmpi__Envelope *env = expect(cl, TMPI__ENVELOPE__MSG_ERROR);
    CHECK(env->error->code == code, "error code %d, got %d (%s)", code, env->error->code,
          env->error->message);
    CHECK(strstr(env->error->message, text), "an error saying \"%s\", got \"%s\"", text,
          env->error->message);
    frame_free(env);
}

/* The agent closes the connection (after whatever it still sends, which is dropped). */
static void expect_closed(struct client *cl)
{
    double end = now() + WAIT_SEC;
    for (;;) {
        client_fill(cl);
        cl->len = 0;
        if (cl->eof) return;
        CHECK(now() < end, "the agent to close the connection within %d s", WAIT_SEC);
        pump();
    }
}

/* ---- requests ---- */

static void send_simple(struct client *cl, Tmpi__Envelope__MsgCase msg_case)
{
    Tmpi__StatusRequest sr = TMPI__STATUS_REQUEST__INIT;
    Tmpi__JobsRequest jr = TMPI__JOBS_REQUEST__INIT;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = msg_case;
    if (msg_case == TMPI__ENVELOPE__MSG_STATUS_REQUEST)
        env.status_request = &sr;
    else
        env.jobs_request = &jr;
    send_env(cl, &env);
}

/* The agent's status on a fresh connection (frame_free it). */
static Tmpi__Envelope *status(void)
{
    struct client cl;
    client_open(&cl);
    send_simple(&cl, TMPI__ENVELOPE__MSG_STATUS_REQUEST);
    Tmpi__Envelope *env = expect(&cl, TMPI__ENVELOPE__MSG_STATUS_REPLY);
    client_close(&cl);
    return env;
}

static const Tmpi__LimitInfo *limit(const Tmpi__StatusReply *st, const char *name)
{
    for (size_t i = 0; i < st->n_limits; i++)
        if (strcmp(st->limits[i]->name, name) == 0) return st->limits[i];
    CHECK(!"the limit is listed", "%s missing from StatusReply", name);
    return NULL;
}

static uint64_t refused(const char *name)
{
    Tmpi__Envelope *env = status();
    uint64_t n = limit(env->status_reply, name)->refused;
    frame_free(env);
    return n;
}

/* Waits until limit name counts one more refusal than before. */
static void expect_refused(const char *name, uint64_t before)
{
    double end = now() + WAIT_SEC;
    uint64_t n;
    while ((n = refused(name)) == before) {
        CHECK(now() < end, "a refusal of %s counted within %d s", name, WAIT_SEC);
        pump();
    }
    CHECK_EQ(n, before + 1);
}

static uint64_t bad_frames(void)
{
    return atomic_load(&agent.bad_frames);
}

/* A submission of one program to this node (nothing in the cache): the agent asks for it. */
static uint8_t prog_hash[PROGRAM_HASH_SIZE];
static const char prog_bytes[] = "not really an ELF module: the test never lets it load";

struct submit {
    Tmpi__SubmitJob s;
    char *args[4];
    Tmpi__EnvVar var, *vars[1];
};

static void submit_init(struct submit *sb)
{
    memset(sb, 0, sizeof *sb);
    tmpi__submit_job__init(&sb->s);
    sb->s.nprocs = 2;
    sb->s.program_hash.data = prog_hash;
    sb->s.program_hash.len = sizeof prog_hash;
    sb->s.program_size = sizeof prog_bytes;
    sb->s.program_name = "./prog";
    sb->s.cwd = "/tmp";
    sb->args[0] = "one";
    sb->args[1] = "two";
    sb->s.args = sb->args;
    sb->s.n_args = 2;
    tmpi__env_var__init(&sb->var);
    sb->var.name = "TMPI_TEST";
    sb->var.value = "1";
    sb->vars[0] = &sb->var;
    sb->s.env = sb->vars;
    sb->s.n_env = 1;
}

static void send_submit(struct client *cl, const Tmpi__SubmitJob *s)
{
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_SUBMIT;
    env.submit = (Tmpi__SubmitJob *)s;
    send_env(cl, &env);
}

static void expect_need_program(struct client *cl)
{
    Tmpi__Envelope *env = expect(cl, TMPI__ENVELOPE__MSG_NEED_PROGRAM);
    CHECK_EQ(env->need_program->program_hash.len, PROGRAM_HASH_SIZE);
    CHECK(memcmp(env->need_program->program_hash.data, prog_hash, PROGRAM_HASH_SIZE) == 0);
    frame_free(env);
}

static void send_chunk(struct client *cl, const void *hash, uint64_t off, const void *data,
                       size_t len, int last)
{
    Tmpi__ProgramChunk ch = TMPI__PROGRAM_CHUNK__INIT;
    ch.program_hash.data = (uint8_t *)hash;
    ch.program_hash.len = PROGRAM_HASH_SIZE;
    ch.offset = off;
    ch.data.data = (uint8_t *)data;
    ch.data.len = len;
    ch.last = last;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_PROGRAM_CHUNK;
    env.program_chunk = &ch;
    send_env(cl, &env);
}

static void send_cancel(struct client *cl, uint64_t id)
{
    Tmpi__CancelJob cj = TMPI__CANCEL_JOB__INIT;
    cj.job_id = id;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_CANCEL;
    env.cancel = &cj;
    send_env(cl, &env);
}

static void send_ping(struct client *cl, const char *address)
{
    Tmpi__PingPeer pp = TMPI__PING_PEER__INIT;
    pp.address = (char *)address;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_PING_PEER;
    env.ping_peer = &pp;
    send_env(cl, &env);
}

/* ---- the cases ---- */

static void test_status(void)
{
    struct client a, b;
    client_open(&a);
    client_open(&b);
    /* b answered: both connections are in when a asks */
    send_simple(&b, TMPI__ENVELOPE__MSG_JOBS_REQUEST);
    frame_free(expect(&b, TMPI__ENVELOPE__MSG_JOBS_REPLY));
    send_simple(&a, TMPI__ENVELOPE__MSG_STATUS_REQUEST);
    Tmpi__Envelope *env = expect(&a, TMPI__ENVELOPE__MSG_STATUS_REPLY);
    const Tmpi__StatusReply *st = env->status_reply;
    CHECK(strcmp(st->name, "ctl-test") == 0, "the agent's name, got %s", st->name);
    CHECK_EQ(st->pid, getpid());
    /* every limit, in tmpictl status order, with its value and what is in use */
    static const char *const names[] = {"max_connections",    "max_connections_per_user",
                                        "idle_timeout",       "message_timeout",
                                        "max_buffered_input", "max_unread_replies",
                                        "max_frame_size",     "max_args_size",
                                        "max_env_size",       "max_jobs",
                                        "max_jobs_per_user"};
    CHECK_EQ(st->n_limits, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < st->n_limits; i++)
        CHECK(strcmp(st->limits[i]->name, names[i]) == 0, "limit %zu is %s, got %s", i, names[i],
              st->limits[i]->name);
    CHECK_EQ(limit(st, "max_connections")->value, agent.cfg.max_connections);
    CHECK_EQ(limit(st, "max_connections")->in_use, 2);
    CHECK_EQ(limit(st, "max_connections_per_user")->in_use, 2);
    /* a quarter of max_jobs when max_jobs_per_user is not set */
    CHECK_EQ(limit(st, "max_jobs")->value, agent.cfg.max_jobs);
    CHECK_EQ(limit(st, "max_jobs_per_user")->value,
             agent.cfg.max_jobs / 4 ? agent.cfg.max_jobs / 4 : 1);
    CHECK_EQ(limit(st, "max_frame_size")->value, agent.cfg.max_frame_size);
    CHECK_EQ(st->n_jobs, 0);
    frame_free(env);

    /* one connection, many requests: answered in order */
    send_simple(&b, TMPI__ENVELOPE__MSG_JOBS_REQUEST);
    send_simple(&b, TMPI__ENVELOPE__MSG_STATUS_REQUEST);
    send_simple(&b, TMPI__ENVELOPE__MSG_JOBS_REQUEST);
    frame_free(expect(&b, TMPI__ENVELOPE__MSG_JOBS_REPLY));
    frame_free(expect(&b, TMPI__ENVELOPE__MSG_STATUS_REPLY));
    frame_free(expect(&b, TMPI__ENVELOPE__MSG_JOBS_REPLY));
    client_close(&a);
    client_close(&b);
}

/* An ended job is listed and cannot be cancelled; an unknown one neither. */
static void test_jobs_and_cancel(void)
{
    struct job_record rec = {.id = 4242,
                             .uid = 0,
                             .nprocs = 3,
                             .runtime_sec = 1.5,
                             .ended_at = agent_now(),
                             .exit_status = 7,
                             .cgroup = "none"};
    snprintf(rec.owner, sizeof rec.owner, "root");
    snprintf(rec.program, sizeof rec.program, "./ended");
    CHECK_EQ(job_history_add(&agent.ended, &rec), 0);

    struct client cl;
    client_open(&cl);
    send_simple(&cl, TMPI__ENVELOPE__MSG_JOBS_REQUEST);
    Tmpi__Envelope *env = expect(&cl, TMPI__ENVELOPE__MSG_JOBS_REPLY);
    CHECK_EQ(env->jobs_reply->n_jobs, 1);
    const Tmpi__JobInfo *ji = env->jobs_reply->jobs[0];
    CHECK_EQ(ji->id, 4242);
    CHECK(strcmp(ji->state, "ended") == 0, "state ended, got %s", ji->state);
    CHECK(strcmp(ji->program, "./ended") == 0);
    CHECK_EQ(ji->exit_status, 7);
    CHECK_EQ(ji->nprocs, 3);
    frame_free(env);

    send_cancel(&cl, 4242);
    expect_error(&cl, -ESRCH, "job 4242 has already ended");
    send_cancel(&cl, 777);
    expect_error(&cl, -ESRCH, "no job 777 on this agent");
    /* errors of a request leave the connection usable */
    send_simple(&cl, TMPI__ENVELOPE__MSG_STATUS_REQUEST);
    env = expect(&cl, TMPI__ENVELOPE__MSG_STATUS_REPLY);
    CHECK_EQ(env->status_reply->n_jobs, 1);
    frame_free(env);
    client_close(&cl);

    /* expired records go */
    job_history_expire(&agent.ended, agent_now() + 1e6, 1);
    env = status();
    CHECK_EQ(env->status_reply->n_jobs, 0);
    frame_free(env);
}

/* What a tool may not send: each closes its connection with an Error and counts. */
static void test_violations(void)
{
    struct client cl;
    uint64_t bad = bad_frames();

    /* a message only agents send to tools */
    client_open(&cl);
    Tmpi__JobEnd je = TMPI__JOB_END__INIT;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_END;
    env.job_end = &je;
    send_env(&cl, &env);
    expect_error(&cl, -EPROTO, "unexpected message 'job_end' from a tool");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad + 1);

    /* a body that is no Envelope */
    client_open(&cl);
    uint8_t garbage[] = {0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0xff};
    send_raw(&cl, garbage, sizeof garbage);
    expect_error(&cl, -EPROTO, "malformed frame");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad + 2);

    /* an empty body */
    client_open(&cl);
    uint8_t empty[] = {0, 0, 0, 0};
    send_raw(&cl, empty, sizeof empty);
    expect_error(&cl, -EPROTO, "malformed frame header");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad + 3);

    /* more than max_frame_size announced: refused before any byte of the body is read */
    uint64_t before = refused("max_frame_size");
    client_open(&cl);
    size_t big = agent.cfg.max_frame_size + 1;
    uint8_t hdr[4] = {(uint8_t)(big >> 24), (uint8_t)(big >> 16), (uint8_t)(big >> 8),
                      (uint8_t)big};
    send_raw(&cl, hdr, sizeof hdr);
    expect_error(&cl, -EPROTO, "frame larger than max_frame_size");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad + 4);
    CHECK_EQ(refused("max_frame_size"), before + 1);

    /* program bytes nobody asked for */
    client_open(&cl);
    send_chunk(&cl, prog_hash, 0, prog_bytes, sizeof prog_bytes, 1);
    expect_error(&cl, -EPROTO, "program bytes that were not asked for");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad + 5);

    /* a signal number the launcher may not forward */
    client_open(&cl);
    Tmpi__SignalJob sj = TMPI__SIGNAL_JOB__INIT;
    sj.signo = SIGKILL;
    env = (Tmpi__Envelope)TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_SIGNAL_JOB;
    env.signal_job = &sj;
    send_env(&cl, &env);
    Tmpi__Envelope *got = expect(&cl, TMPI__ENVELOPE__MSG_ERROR);
    CHECK_EQ(got->error->code, -EPROTO);
    frame_free(got);
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad + 6);
}

/* A submission: checks before anything is held, NeedProgram, one job per connection, chunks
 * checked against the announced size and hash. */
static void test_submit(void)
{
    struct client cl;
    struct submit sb;

    /* malformed: refused with the reason, the connection closed, nothing counted as bad */
    uint64_t bad = bad_frames();
    client_open(&cl);
    submit_init(&sb);
    sb.s.nprocs = 0;
    send_submit(&cl, &sb.s);
    expect_error(&cl, -EINVAL, "a job needs 1 to");
    expect_closed(&cl);
    client_close(&cl);
    client_open(&cl);
    submit_init(&sb);
    sb.s.cwd = "relative";
    send_submit(&cl, &sb.s);
    expect_error(&cl, -EINVAL, "working directory not absolute");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad);

    /* resource limits of one node asked for a job across nodes */
    client_open(&cl);
    submit_init(&sb);
    Tmpi__NodePlacement n0 = TMPI__NODE_PLACEMENT__INIT, n1 = TMPI__NODE_PLACEMENT__INIT;
    uint32_t r0 = 0, r1 = 1;
    n0.host = n1.host = "127.0.0.1";
    n0.port = n1.port = 1;
    n0.ranks = &r0;
    n1.ranks = &r1;
    n0.n_ranks = n1.n_ranks = 1;
    Tmpi__NodePlacement *nodes[] = {&n0, &n1};
    sb.s.nodes = nodes;
    sb.s.n_nodes = 2;
    sb.s.mem_limit = 1u << 30;
    send_submit(&cl, &sb.s);
    expect_error(&cl, -ENOTSUP, "--mem-limit and --cpu-limit apply to jobs on one node only");
    expect_closed(&cl);
    client_close(&cl);

    /* a job across nodes on an agent without a mesh key */
    client_open(&cl);
    sb.s.mem_limit = 0;
    send_submit(&cl, &sb.s);
    expect_error(&cl, -ENOKEY, "has no mesh");
    expect_closed(&cl);
    client_close(&cl);

    /* a good one: the agent lacks the program and asks for it */
    client_open(&cl);
    submit_init(&sb);
    send_submit(&cl, &sb.s);
    expect_need_program(&cl);
    /* a second job on the same connection */
    send_submit(&cl, &sb.s);
    expect_error(&cl, -EPROTO, "one job per connection");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad + 1);

    /* chunks: out of order, beyond the size, for another program, not matching the hash */
    struct {
        uint64_t off;
        size_t len;
        int other_hash, last;
        const char *why;
    } bad_chunks[] = {
        {1, 4, 0, 0, "program chunk out of order or beyond the announced size"},
        {0, sizeof prog_bytes + 1, 0, 1, "program chunk out of order or beyond the announced size"},
        {0, 4, 1, 0, "program chunk for another program"},
        {0, sizeof prog_bytes - 1, 0, 1, "program shorter than announced"},
    };
    char longer[sizeof prog_bytes + 1];
    memcpy(longer, prog_bytes, sizeof prog_bytes);
    longer[sizeof prog_bytes] = 'x';
    uint8_t other[PROGRAM_HASH_SIZE];
    memset(other, 0x5a, sizeof other);
    for (size_t i = 0; i < sizeof bad_chunks / sizeof bad_chunks[0]; i++) {
        client_open(&cl);
        send_submit(&cl, &sb.s);
        expect_need_program(&cl);
        send_chunk(&cl, bad_chunks[i].other_hash ? other : prog_hash, bad_chunks[i].off, longer,
                   bad_chunks[i].len, bad_chunks[i].last);
        expect_error(&cl, -EPROTO, bad_chunks[i].why);
        expect_closed(&cl);
        client_close(&cl);
    }
    /* the right size, other bytes: the hash decides */
    client_open(&cl);
    send_submit(&cl, &sb.s);
    expect_need_program(&cl);
    char wrong[sizeof prog_bytes];
    memset(wrong, 'w', sizeof wrong);
    send_chunk(&cl, prog_hash, 0, wrong, 10, 0);
    send_chunk(&cl, prog_hash, 10, wrong + 10, sizeof wrong - 10, 1);
    expect_error(&cl, -EPROTO, "program bytes do not match their SHA-256");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(bad_frames(), bad + 6);
    CHECK_EQ(progcache_count(&agent.cache), 0);
}

/* max_jobs counts the submissions receiving their program; a connection that goes releases
 * its slot.  The test's clients are root or the agent's user: they have admin_reserve_jobs
 * slots beyond max_jobs and no per-user limit. */
static void test_max_jobs(void)
{
    uint32_t saved = agent.cfg.max_jobs;
    uint32_t saved_reserve = agent.cfg.admin_reserve_jobs;
    agent.cfg.max_jobs = 1;
    agent.cfg.admin_reserve_jobs = 2;
    struct client a[3], b;
    struct submit sb;
    submit_init(&sb);
    for (unsigned i = 0; i < 3; i++) {
        client_open(&a[i]);
        send_submit(&a[i], &sb.s);
        expect_need_program(&a[i]);
    }
    client_open(&b);
    send_submit(&b, &sb.s);
    expect_error(&b, -EBUSY,
                 "the agent already runs 3 jobs (max_jobs is 1, and admin_reserve_jobs 2 more "
                 "for root and the agent's user)");
    expect_closed(&b);
    client_close(&b);
    /* one goes away in the middle of its upload: the slot is free again */
    send_chunk(&a[0], prog_hash, 0, prog_bytes, 8, 0);
    client_close(&a[0]);
    double end = now() + WAIT_SEC;
    for (;;) {
        client_open(&b);
        send_submit(&b, &sb.s);
        Tmpi__Envelope *env = recv_env(&b);
        Tmpi__Envelope__MsgCase mc = env->msg_case;
        frame_free(env);
        client_close(&b);
        if (mc == TMPI__ENVELOPE__MSG_NEED_PROGRAM) break;
        /* the agent may not have seen the first connection end yet */
        CHECK(mc == TMPI__ENVELOPE__MSG_ERROR && now() < end,
              "the slot of a connection that went is free again");
        pump();
    }
    for (unsigned i = 1; i < 3; i++)
        client_close(&a[i]);
    agent.cfg.max_jobs = saved;
    agent.cfg.admin_reserve_jobs = saved_reserve;
}

static void test_arg_limits(void)
{
    struct client cl;
    struct submit sb;
    size_t saved_args = agent.cfg.max_args_size, saved_env = agent.cfg.max_env_size;
    /* "one", "two": 8 bytes with their NULs; TMPI_TEST=1: 12 bytes counted */
    agent.cfg.max_args_size = 7;
    uint64_t before = refused("max_args_size");
    client_open(&cl);
    submit_init(&sb);
    send_submit(&cl, &sb.s);
    expect_error(&cl, -E2BIG, "arguments of 8 bytes (max_args_size is 7)");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(refused("max_args_size"), before + 1);
    agent.cfg.max_args_size = 8;
    agent.cfg.max_env_size = 11;
    before = refused("max_env_size");
    client_open(&cl);
    send_submit(&cl, &sb.s);
    expect_error(&cl, -E2BIG, "environment of 12 bytes (max_env_size is 11)");
    expect_closed(&cl);
    client_close(&cl);
    CHECK_EQ(refused("max_env_size"), before + 1);
    /* exactly at both limits: taken */
    agent.cfg.max_env_size = 12;
    client_open(&cl);
    send_submit(&cl, &sb.s);
    expect_need_program(&cl);
    client_close(&cl);
    agent.cfg.max_args_size = saved_args;
    agent.cfg.max_env_size = saved_env;
}

static void test_ping_without_key(void)
{
    struct client cl;
    client_open(&cl);
    send_ping(&cl, "127.0.0.1:1");
    Tmpi__Envelope *env = expect(&cl, TMPI__ENVELOPE__MSG_PING_REPLY);
    CHECK(!env->ping_reply->ok);
    CHECK(strstr(env->ping_reply->error, "no cluster key"), "got \"%s\"", env->ping_reply->error);
    frame_free(env);
    client_close(&cl);
}

/* idle_timeout and message_timeout: the sweep drops the connection with an Error. */
static void test_deadlines(void)
{
    uint32_t saved_idle = agent.cfg.idle_timeout_sec, saved_msg = agent.cfg.message_timeout_sec;
    struct client cl;

    agent.cfg.idle_timeout_sec = 1;
    uint64_t before = refused("idle_timeout");
    client_open(&cl);
    expect_error(&cl, -ETIMEDOUT, "nothing sent for 1 s (idle_timeout)");
    expect_closed(&cl);
    client_close(&cl);
    agent.cfg.idle_timeout_sec = saved_idle;
    CHECK_EQ(refused("idle_timeout"), before + 1);

    /* a frame that drips: its deadline runs from its first byte, whatever arrives later */
    agent.cfg.message_timeout_sec = 1;
    before = refused("message_timeout");
    client_open(&cl);
    /* 60000 bytes announced, one sent per turn of the loop: never complete in time */
    uint8_t hdr[] = {0, 0, 0xea, 0x60, 0x0a};
    send_raw(&cl, hdr, sizeof hdr);
    double end = now() + WAIT_SEC;
    for (;;) {
        client_fill(&cl);
        if (cl.len || cl.eof) break;
        CHECK(now() < end, "the dripping frame refused within %d s", WAIT_SEC);
        pump();
        (void)send(cl.fd, "\x01", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    expect_error(&cl, -ETIMEDOUT, "a frame not complete 1 s after its first byte");
    expect_closed(&cl);
    client_close(&cl);
    agent.cfg.message_timeout_sec = saved_msg;
    CHECK_EQ(refused("message_timeout"), before + 1);
}

/* max_buffered_input: unfinished frames beyond what each connection holds freely. */
static void test_buffered_input(void)
{
    size_t saved = agent.cfg.max_buffered_input;
    agent.cfg.max_buffered_input = 16u << 10;
    uint64_t before = refused("max_buffered_input");
    struct client cl;
    client_open(&cl);
    size_t body = 1u << 20;
    CHECK(body <= agent.cfg.max_frame_size);
    size_t part = 200u << 10; /* 64 KiB held freely, the rest over 16 KiB */
    uint8_t *frame = calloc(1, FRAME_HEADER_SIZE + part);
    CHECK(frame);
    frame[0] = (uint8_t)(body >> 24);
    frame[1] = (uint8_t)(body >> 16);
    frame[2] = (uint8_t)(body >> 8);
    frame[3] = (uint8_t)body;
    /* written in pieces: the agent may close before it has read everything */
    size_t off = 0;
    while (off < FRAME_HEADER_SIZE + part && !cl.eof) {
        ssize_t n =
            send(cl.fd, frame + off, FRAME_HEADER_SIZE + part - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) off += (size_t)n;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break;
        pump();
        client_fill(&cl);
    }
    free(frame);
    expect_error(&cl, -ENOBUFS, "unfinished frames (max_buffered_input)");
    expect_closed(&cl);
    client_close(&cl);
    agent.cfg.max_buffered_input = saved;
    CHECK_EQ(refused("max_buffered_input"), before + 1);
    Tmpi__Envelope *env = status();
    CHECK_EQ(limit(env->status_reply, "max_buffered_input")->in_use, 0);
    frame_free(env);
}

/* max_unread_replies: a client that asks and never reads is closed. */
static void test_unread_replies(void)
{
    size_t saved = agent.cfg.max_unread_replies;
    agent.cfg.max_unread_replies = 4096;
    uint64_t before = refused("max_unread_replies");
    struct client cl;
    client_open(&cl);
    /* status replies are hundreds of bytes: this many cannot all sit in the socket */
    size_t one = 0;
    uint8_t *req;
    Tmpi__StatusRequest sr = TMPI__STATUS_REQUEST__INIT;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_STATUS_REQUEST;
    env.status_request = &sr;
    CHECK_EQ(frame_encode(&env, FRAME_DEFAULT_MAX, &req, &one), 0);
    enum { NREQ = 4000 };
    uint8_t *many = malloc(one * NREQ);
    CHECK(many);
    for (int i = 0; i < NREQ; i++)
        memcpy(many + (size_t)i * one, req, one);
    free(req);
    size_t off = 0;
    double end = now() + WAIT_SEC;
    while (off < one * NREQ) {
        ssize_t n = send(cl.fd, many + off, one * NREQ - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) off += (size_t)n;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break; /* closed already */
        CHECK(now() < end);
        pump();
    }
    free(many);
    /* not a byte read until the agent has decided */
    end = now() + WAIT_SEC;
    while (refused("max_unread_replies") == before) {
        CHECK(now() < end, "a refusal of max_unread_replies within %d s", WAIT_SEC);
        pump();
    }
    expect_closed(&cl);
    client_close(&cl);
    agent.cfg.max_unread_replies = saved;
    CHECK_EQ(refused("max_unread_replies"), before + 1);
}

/* max_connections: admins (root, the agent's user) get a reserve beyond it, then are
 * refused too. */
/* Waits until the agent holds only the connection that asks (closed ones seen as closed). */
static void settle(void)
{
    double end = now() + WAIT_SEC;
    for (;;) {
        Tmpi__Envelope *env = status();
        uint64_t n = limit(env->status_reply, "max_connections")->in_use;
        frame_free(env);
        if (n == 1) return;
        CHECK(now() < end, "the closed connections gone within %d s (%llu held)", WAIT_SEC,
              (unsigned long long)n);
        pump();
    }
}

static void test_max_connections(void)
{
    settle();
    uint32_t saved = agent.cfg.max_connections;
    agent.cfg.max_connections = 3;
    uint64_t before = refused("max_connections");
    enum { MAXC = 3 + 32 + 1 };
    struct client cl[MAXC];
    /* one after the other, each answered before the next (so the agent has also seen the
     * end of every earlier connection of the test) */
    for (int i = 0; i < MAXC - 1; i++) {
        client_open(&cl[i]);
        send_simple(&cl[i], TMPI__ENVELOPE__MSG_JOBS_REQUEST);
        frame_free(expect(&cl[i], TMPI__ENVELOPE__MSG_JOBS_REPLY));
    }
    client_open(&cl[MAXC - 1]);
    expect_error(&cl[MAXC - 1], -EUSERS, "connections open (max_connections and the admin");
    expect_closed(&cl[MAXC - 1]);
    for (int i = 0; i < MAXC; i++)
        client_close(&cl[i]);
    agent.cfg.max_connections = saved;
    expect_refused("max_connections", before);
}

/* ---- what a non-admin may not do (a child that became nobody, talking to this agent) ---- */

static int child_expect_error(int fd, int code, const char *text)
{
    Tmpi__Envelope *env;
    if (frame_read_fd(fd, FRAME_DEFAULT_MAX, &env) < 0) return 0;
    int ok = env->msg_case == TMPI__ENVELOPE__MSG_ERROR && env->error->code == code &&
             strstr(env->error->message, text);
    if (!ok)
        fprintf(stderr, "child: expected an error \"%s\", got '%s' %s\n", text, frame_msg_name(env),
                env->msg_case == TMPI__ENVELOPE__MSG_ERROR ? env->error->message : "");
    frame_free(env);
    return ok;
}

static int child_connect(void)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock_path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof sun) < 0) return -1;
    return fd;
}

/* The child's script; its exit status says which step failed. */
static int child_main(void)
{
    if (setgid(65534) < 0 || setuid(65534) < 0) return 10;
    int a = child_connect(), b = child_connect(), c = child_connect();
    if (a < 0 || b < 0 || c < 0) return 11;
    /* the third of one user's connections is refused (max_connections_per_user = 2) */
    if (!child_expect_error(c, -EUSERS, "(max_connections_per_user)")) return 12;
    close(c);
    /* a ping to an address that is no configured peer: refused, the connection stays */
    Tmpi__PingPeer pp = TMPI__PING_PEER__INIT;
    pp.address = "192.0.2.1:7470";
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_PING_PEER;
    env.ping_peer = &pp;
    if (frame_write_fd(a, &env, FRAME_DEFAULT_MAX) < 0) return 13;
    Tmpi__Envelope *got;
    if (frame_read_fd(a, FRAME_DEFAULT_MAX, &got) < 0) return 14;
    int ok = got->msg_case == TMPI__ENVELOPE__MSG_PING_REPLY && !got->ping_reply->ok &&
             strstr(got->ping_reply->error, "only root or the agent's user may ping");
    frame_free(got);
    if (!ok) return 15;
    /* its status shows its own connections only in the per-user figure */
    Tmpi__StatusRequest sr = TMPI__STATUS_REQUEST__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_STATUS_REQUEST;
    env.status_request = &sr;
    if (frame_write_fd(b, &env, FRAME_DEFAULT_MAX) < 0) return 16;
    if (frame_read_fd(b, FRAME_DEFAULT_MAX, &got) < 0) return 17;
    ok = got->msg_case == TMPI__ENVELOPE__MSG_STATUS_REPLY;
    for (size_t i = 0; ok && i < got->status_reply->n_limits; i++)
        if (strcmp(got->status_reply->limits[i]->name, "max_connections_per_user") == 0)
            ok = got->status_reply->limits[i]->in_use == 2;
    frame_free(got);
    if (!ok) return 18;
    /* cancelling a job it does not own: an ended job of root's is not even revealed */
    Tmpi__CancelJob cj = TMPI__CANCEL_JOB__INIT;
    cj.job_id = 5151;
    env.msg_case = TMPI__ENVELOPE__MSG_CANCEL;
    env.cancel = &cj;
    if (frame_write_fd(b, &env, FRAME_DEFAULT_MAX) < 0) return 19;
    if (!child_expect_error(b, -ESRCH, "no job 5151 on this agent")) return 20;
    close(a);
    close(b);
    return 0;
}

static void test_non_admin(void)
{
    if (geteuid() != 0) {
        printf("# not root: the non-admin cases need a second user, skipped\n");
        return;
    }
    uint32_t saved = agent.cfg.max_connections_per_user;
    agent.cfg.max_connections_per_user = 2;
    struct job_record rec = {.id = 5151, .uid = 0, .nprocs = 1, .ended_at = agent_now()};
    CHECK_EQ(job_history_add(&agent.ended, &rec), 0);
    uint64_t before = refused("max_connections_per_user");
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(child_main());
    int st = 0;
    double end = now() + WAIT_SEC;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (now() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            CHECK(!"the non-admin child finished in time");
        }
        pump();
    }
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the non-admin child's steps pass (exit %d)",
          WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    agent.cfg.max_connections_per_user = saved;
    CHECK_EQ(refused("max_connections_per_user"), before + 1);
    job_history_expire(&agent.ended, agent_now() + 1e6, 1);
}

/* Shutting down: every connection is closed once its output is flushed, then the loop ends. */
static void test_drain(void)
{
    struct client a, b;
    client_open(&a);
    client_open(&b);
    send_simple(&a, TMPI__ENVELOPE__MSG_STATUS_REQUEST);
    frame_free(expect(&a, TMPI__ENVELOPE__MSG_STATUS_REPLY));
    /* b's connection is accepted before the drain starts */
    send_simple(&b, TMPI__ENVELOPE__MSG_JOBS_REQUEST);
    frame_free(expect(&b, TMPI__ENVELOPE__MSG_JOBS_REPLY));
    control_drain(&agent);
    expect_closed(&a);
    expect_closed(&b);
    client_close(&a);
    client_close(&b);
}

/* Every row of the query table says what its permission and its place need, and every query
 * message finds its one row (JobsRequest by its spelling); a job's own messages are no query. */
static void test_query_table(void)
{
    size_t n;
    const struct query_row *rows = query_table_rows(&n);
    CHECK(n >= 6, "%zu rows", n);
    for (size_t i = 0; i < n; i++) {
        const struct query_row *r = &rows[i];
        CHECK(r->command && *r->command && r->answer, "row %zu", i);
        CHECK(r->perm != QUERY_JOB_OWNER || r->job_of, "%s: which job?", r->command);
        CHECK(r->perm != QUERY_PEER_OR_ADMIN || r->peer_of, "%s: which peer?", r->command);
        CHECK((r->where == QUERY_HERE || r->where == QUERY_PEER) == (r->merge == QUERY_ONE),
              "%s: one answer exactly when one node answers", r->command);
        CHECK(r->where != QUERY_JOB_PARTS || r->perm == QUERY_JOB_OWNER,
              "%s: a job's insides are its owner's", r->command);
        for (size_t k = 0; k < i; k++)
            CHECK(strcmp(rows[k].command, r->command) != 0 &&
                      (rows[k].msg != r->msg || (rows[k].matches && r->matches)),
                  "%s: two rows for one query", r->command);
    }
    Tmpi__JobsRequest jr = TMPI__JOBS_REQUEST__INIT;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOBS_REQUEST;
    env.jobs_request = &jr;
    CHECK(strcmp(query_row_of(&env)->command, "jobs") == 0);
    jr.all = 1;
    const struct query_row *all = query_row_of(&env);
    CHECK(strcmp(all->command, "jobs --all") == 0 && all->where == QUERY_MESH &&
          all->merge == QUERY_JOBS);
    Tmpi__RanksRequest rq = TMPI__RANKS_REQUEST__INIT;
    rq.job_id = 42;
    env.msg_case = TMPI__ENVELOPE__MSG_RANKS_REQUEST;
    env.ranks_request = &rq;
    const struct query_row *ranks = query_row_of(&env);
    CHECK(ranks && ranks->perm == QUERY_JOB_OWNER && ranks->job_of(&env) == 42);
    env.msg_case = TMPI__ENVELOPE__MSG_SUBMIT;
    CHECK(query_row_of(&env) == NULL, "a submission is no query");
    env.msg_case = TMPI__ENVELOPE__MSG_CANCEL;
    CHECK(query_row_of(&env) == NULL, "a cancel is a command of the job's, no query");
}

int main(void)
{
    log_set_level(LOG_CRIT);
    signal(SIGPIPE, SIG_IGN);
    CHECK_EQ(evthread_use_pthreads(), 0);
    CHECK(sodium_init() >= 0);
    CHECK(mkdtemp(dir));
    CHECK_EQ(chmod(dir, 0711), 0); /* the non-admin child reaches the socket too */
    snprintf(sock_path, sizeof sock_path, "%s/ctl.sock", dir);
    CHECK(crypto_hash_sha256_bytes() == PROGRAM_HASH_SIZE);
    crypto_hash_sha256(prog_hash, (const uint8_t *)prog_bytes, sizeof prog_bytes);

    CHECK_EQ(config_defaults(&agent.cfg), 0);
    free(agent.cfg.name);
    free(agent.cfg.socket_path);
    agent.cfg.name = strdup("ctl-test");
    agent.cfg.socket_path = strdup(sock_path);
    CHECK(agent.cfg.name && agent.cfg.socket_path);
    agent.base = event_base_new();
    CHECK(agent.base);
    agent.start_time = agent_now();
    agent.ncpus = 2;
    progcache_init(&agent.cache, 4);
    CHECK_EQ(mesh_init(&agent.mesh, &agent.cfg, agent.base), 0);
    CHECK_EQ(control_listen(&agent), 0);
    /* a second agent on the same socket is refused */
    struct agent other = agent;
    other.listener = NULL;
    CHECK_EQ(control_listen(&other), -EADDRINUSE);

    test_query_table();
    test_status();
    test_jobs_and_cancel();
    test_violations();
    test_submit();
    test_max_jobs();
    test_arg_limits();
    test_ping_without_key();
    test_deadlines();
    test_buffered_input();
    test_unread_replies();
    test_max_connections();
    test_non_admin();
    test_drain();

    control_free_all(&agent);
    CHECK(access(sock_path, F_OK) < 0, "the socket file is removed");
    mesh_close(agent.mesh);
    progcache_destroy(&agent.cache);
    job_history_free(&agent.ended);
    config_free(&agent.cfg);
    event_base_free(agent.base);
    rmdir(dir);
    return 0;
}
