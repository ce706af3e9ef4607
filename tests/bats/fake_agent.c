/* fake_agent.c — a stand-in for tmpid that speaks the control protocol, for launcher tests.
 *
 * It takes tmpid's command line (--socket, --ready-fd, --private, ...), so it can also be the
 * private agent tmpi-launch starts (TMPI_TMPID=fake_agent).  It runs nothing: what a "job"
 * does is chosen by the job's first argument, so each launcher behaviour (exit statuses,
 * partial lines, cancellation, a dropped connection) can be produced on demand:
 *
 *   args            every rank prints its name, cwd, arguments and -x variables
 *   exit CODE RANK  rank RANK fails with CODE (JobEnd status CODE, reason naming the rank)
 *   output          interleaved stdout/stderr lines, with pieces lacking their newline
 *   wait            prints "started", then waits for CancelJob and ends the job with 143
 *   stuck           prints "started", then ignores CancelJob until the launcher goes away
 *   drop            closes the connection after JobStarted
 *   error           answers the submission with an Error
 *   timeout         prints the timeout it was given
 *   bind            prints the binding it was asked for (bind_to, report_bindings)
 *
 * Environment: FAKE_AGENT_PIDFILE (write our pid there), FAKE_AGENT_FAIL_START (exit before
 * saying READY).  Serves one connection at a time, which is all the tests need.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "frame.h"

struct fake {
    int conn;
    uint64_t next_job;
    uint8_t cached_hash[32]; /* the last program received: not asked for again */
    bool have_cached;
};

static int send_env(struct fake *f, Tmpi__Envelope *e)
{
    int r = frame_write_fd(f->conn, e, FRAME_DEFAULT_MAX);
    if (r < 0) fprintf(stderr, "fake agent: write: %s\n", strerror(-r));
    return r;
}

static void send_output(struct fake *f, uint32_t rank, uint32_t stream, const char *s)
{
    Tmpi__Output o = TMPI__OUTPUT__INIT;
    o.rank = rank;
    o.stream = stream;
    o.data.data = (uint8_t *)s;
    o.data.len = strlen(s);
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_OUTPUT;
    e.output = &o;
    send_env(f, &e);
}

static void send_rank_exit(struct fake *f, uint32_t rank, int code)
{
    Tmpi__RankExit x = TMPI__RANK_EXIT__INIT;
    x.rank = rank;
    x.code = code;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_RANK_EXIT;
    e.rank_exit = &x;
    send_env(f, &e);
}

static void send_job_end(struct fake *f, uint64_t id, int status, int failed, const char *why)
{
    Tmpi__JobEnd x = TMPI__JOB_END__INIT;
    x.job_id = id;
    x.exit_status = status;
    x.failed_rank = failed;
    x.reason = (char *)why;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_JOB_END;
    e.job_end = &x;
    send_env(f, &e);
}

static void send_error(struct fake *f, int code, const char *msg)
{
    Tmpi__Error x = TMPI__ERROR__INIT;
    x.code = code;
    x.message = (char *)msg;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_ERROR;
    e.error = &x;
    send_env(f, &e);
}

/* Ask for the program and check the chunks: contiguous, complete, matching the hash. */
static int receive_program(struct fake *f, const Tmpi__SubmitJob *s)
{
    Tmpi__NeedProgram np = TMPI__NEED_PROGRAM__INIT;
    np.program_hash = s->program_hash;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_NEED_PROGRAM;
    e.need_program = &np;
    if (send_env(f, &e) < 0) return -1;
    crypto_hash_sha256_state h;
    crypto_hash_sha256_init(&h);
    uint64_t off = 0;
    for (;;) {
        Tmpi__Envelope *c;
        if (frame_read_fd(f->conn, FRAME_DEFAULT_MAX, &c) < 0) return -1;
        if (c->msg_case != TMPI__ENVELOPE__MSG_PROGRAM_CHUNK || c->program_chunk->offset != off) {
            frame_free(c);
            send_error(f, -EPROTO, "fake agent: bad program chunk");
            return -1;
        }
        crypto_hash_sha256_update(&h, c->program_chunk->data.data, c->program_chunk->data.len);
        off += c->program_chunk->data.len;
        bool last = c->program_chunk->last;
        frame_free(c);
        if (last) break;
    }
    uint8_t got[32];
    crypto_hash_sha256_final(&h, got);
    if (off != s->program_size || s->program_hash.len != 32 ||
        memcmp(got, s->program_hash.data, 32) != 0) {
        send_error(f, -EBADMSG, "fake agent: program does not match its hash");
        return -1;
    }
    memcpy(f->cached_hash, got, 32);
    f->have_cached = true;
    return 0;
}

static void job_args(struct fake *f, const Tmpi__SubmitJob *s)
{
    char line[4096];
    for (uint32_t r = 0; r < s->nprocs; r++) {
        snprintf(line, sizeof line, "rank %u/%u name=%s cwd=%s\n", r, s->nprocs, s->program_name,
                 s->cwd);
        send_output(f, r, 1, line);
        for (size_t i = 1; i < s->n_args; i++) {
            snprintf(line, sizeof line, "rank %u arg %zu: %s\n", r, i, s->args[i]);
            send_output(f, r, 1, line);
        }
        for (size_t i = 0; i < s->n_env; i++) {
            snprintf(line, sizeof line, "rank %u env %s=%s\n", r, s->env[i]->name,
                     s->env[i]->value);
            send_output(f, r, 1, line);
        }
        send_rank_exit(f, r, 0);
    }
}

static void job_output(struct fake *f)
{
    send_output(f, 0, 1, "out 0\n");
    send_output(f, 1, 2, "err 1\n");
    send_output(f, 0, 1, "a");
    send_output(f, 1, 1, "b\n");
    send_output(f, 0, 1, "c\n");
    send_output(f, 1, 1, "tail");
    send_rank_exit(f, 1, 0);
    send_rank_exit(f, 0, 0);
}

/* Wait for the launcher's CancelJob; true when it came. */
static bool wait_cancel(struct fake *f, uint64_t id)
{
    for (;;) {
        Tmpi__Envelope *e;
        if (frame_read_fd(f->conn, FRAME_DEFAULT_MAX, &e) < 0) return false;
        bool ok = e->msg_case == TMPI__ENVELOPE__MSG_CANCEL && e->cancel->job_id == id;
        frame_free(e);
        if (ok) return true;
    }
}

/* Returns false when the connection must be closed. */
static bool run_job(struct fake *f, const Tmpi__SubmitJob *s)
{
    const char *cmd = s->n_args > 0 ? s->args[0] : "";
    if (strcmp(cmd, "error") == 0) {
        send_error(f, -EPERM, "fake agent refuses this job");
        return true;
    }
    if ((!f->have_cached || s->program_hash.len != 32 ||
         memcmp(f->cached_hash, s->program_hash.data, 32) != 0) &&
        receive_program(f, s) < 0)
        return false;
    uint64_t id = ++f->next_job;
    Tmpi__JobStarted js = TMPI__JOB_STARTED__INIT;
    js.job_id = id;
    js.nprocs = s->nprocs;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_JOB_STARTED;
    e.job_started = &js;
    if (send_env(f, &e) < 0 || strcmp(cmd, "drop") == 0) return false;

    char why[256] = "";
    if (strcmp(cmd, "args") == 0) {
        job_args(f, s);
    } else if (strcmp(cmd, "output") == 0) {
        job_output(f);
    } else if (strcmp(cmd, "timeout") == 0) {
        snprintf(why, sizeof why, "timeout=%u\n", s->timeout_sec);
        send_output(f, 0, 1, why);
        why[0] = '\0';
    } else if (strcmp(cmd, "bind") == 0) {
        snprintf(why, sizeof why, "bind_to=%d report_bindings=%d\n", (int)s->bind_to,
                 (int)s->report_bindings);
        send_output(f, 0, 1, why);
        why[0] = '\0';
    } else if (strcmp(cmd, "cwd") == 0) {
        snprintf(why, sizeof why, "cwd=%s\n", s->cwd);
        send_output(f, 0, 1, why);
        why[0] = '\0';
    } else if (strcmp(cmd, "exit") == 0 && s->n_args >= 3) {
        int code = atoi(s->args[1]), rank = atoi(s->args[2]);
        snprintf(why, sizeof why, "rank %d exited with code %d", rank, code);
        send_job_end(f, id, code, rank, why);
        return true;
    } else if (strcmp(cmd, "stuck") == 0) {
        send_output(f, 0, 1, "started\n");
        while (wait_cancel(f, id))
            ;
        return false;
    } else if (strcmp(cmd, "wait") == 0) {
        send_output(f, 0, 1, "started\n");
        if (!wait_cancel(f, id)) return false;
        Tmpi__CancelReply cr = TMPI__CANCEL_REPLY__INIT;
        cr.job_id = id;
        Tmpi__Envelope ce = TMPI__ENVELOPE__INIT;
        ce.msg_case = TMPI__ENVELOPE__MSG_CANCEL_REPLY;
        ce.cancel_reply = &cr;
        send_env(f, &ce);
        snprintf(why, sizeof why, "job %" PRIu64 " was cancelled", id);
        send_job_end(f, id, 143, -1, why);
        return true;
    } else {
        send_job_end(f, id, 1, 0, "fake agent: unknown job command");
        return true;
    }
    send_job_end(f, id, 0, -1, "");
    return true;
}

static Tmpi__JobInfo fake_job(void)
{
    Tmpi__JobInfo j = TMPI__JOB_INFO__INIT;
    j.id = 7;
    j.owner_uid = 1000;
    j.owner = "tester";
    j.nprocs = 4;
    j.state = "running";
    j.runtime_sec = 12.5;
    j.program = "./app";
    return j;
}

static void answer_status(struct fake *f, bool status)
{
    Tmpi__JobInfo j = fake_job(), *jobs[] = {&j};
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    Tmpi__StatusReply s = TMPI__STATUS_REPLY__INIT;
    Tmpi__PoolInfo pool = TMPI__POOL_INFO__INIT;
    Tmpi__JobsReply jr = TMPI__JOBS_REPLY__INIT;
    if (status) {
        pool.capacity_bytes = 64u << 20;
        pool.used_bytes = 1u << 20;
        s.version = "0.1.0-fake";
        s.name = "fake";
        s.uptime_sec = 3725;
        s.pid = (uint32_t)getpid();
        s.pool = &pool;
        s.n_jobs = 1;
        s.jobs = jobs;
        s.jobs_started = f->next_job;
        s.cached_programs = f->have_cached;
        e.msg_case = TMPI__ENVELOPE__MSG_STATUS_REPLY;
        e.status_reply = &s;
    } else {
        jr.n_jobs = 1;
        jr.jobs = jobs;
        e.msg_case = TMPI__ENVELOPE__MSG_JOBS_REPLY;
        e.jobs_reply = &jr;
    }
    send_env(f, &e);
}

static void serve(struct fake *f)
{
    Tmpi__Envelope *e;
    while (frame_read_fd(f->conn, FRAME_DEFAULT_MAX, &e) == 0) {
        char msg[64];
        switch (e->msg_case) {
        case TMPI__ENVELOPE__MSG_SUBMIT:
            if (!run_job(f, e->submit)) {
                frame_free(e);
                return;
            }
            break;
        case TMPI__ENVELOPE__MSG_STATUS_REQUEST:
        case TMPI__ENVELOPE__MSG_JOBS_REQUEST:
            answer_status(f, e->msg_case == TMPI__ENVELOPE__MSG_STATUS_REQUEST);
            break;
        case TMPI__ENVELOPE__MSG_CANCEL:
            if (e->cancel->job_id == 7) {
                Tmpi__CancelReply cr = TMPI__CANCEL_REPLY__INIT;
                cr.job_id = 7;
                Tmpi__Envelope r = TMPI__ENVELOPE__INIT;
                r.msg_case = TMPI__ENVELOPE__MSG_CANCEL_REPLY;
                r.cancel_reply = &cr;
                send_env(f, &r);
            } else {
                snprintf(msg, sizeof msg, "no job %" PRIu64, e->cancel->job_id);
                send_error(f, -ESRCH, msg);
            }
            break;
        default:
            send_error(f, -EPROTO, "fake agent: unexpected message");
        }
        frame_free(e);
    }
}

int main(int argc, char **argv)
{
    const char *sock = NULL;
    int ready_fd = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
            sock = argv[++i];
        else if (strcmp(argv[i], "--ready-fd") == 0 && i + 1 < argc)
            ready_fd = atoi(argv[++i]);
        else if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc)
            i++;
    }
    const char *pidfile = getenv("FAKE_AGENT_PIDFILE");
    if (pidfile) {
        FILE *p = fopen(pidfile, "w");
        if (p) {
            fprintf(p, "%d\n", (int)getpid());
            fclose(p);
        }
    }
    if (getenv("FAKE_AGENT_FAIL_START")) {
        fputs("fake agent: failing to start, as asked\n", stderr);
        return 1;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!sock || strlen(sock) >= sizeof sa.sun_path || sodium_init() < 0) {
        fputs("usage: fake_agent --socket PATH [--ready-fd N]\n", stderr);
        return 2;
    }
    strcpy(sa.sun_path, sock);
    unlink(sock);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(l, 8) < 0) {
        fprintf(stderr, "fake agent: %s: %s\n", sock, strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    if (ready_fd >= 0) {
        if (write(ready_fd, "READY=1\n", 8) != 8) return 1;
        close(ready_fd);
    }
    struct fake f = {.conn = -1};
    for (;;) {
        f.conn = accept(l, NULL, NULL);
        if (f.conn < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        serve(&f);
        close(f.conn);
    }
}
