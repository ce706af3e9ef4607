/* launch_job.c — one job's protocol session with the agent.
 *
 *   -> SubmitJob
 *   <- NeedProgram          -> ProgramChunk... (last = true)     (only if the agent lacks it)
 *   <- JobStarted
 *   <- Output / RankExit ...                                     (as the ranks produce them)
 *   -> StdinData ...        <- StdinAck ...                      (our stdin, for rank 0)
 *   <- JobEnd                                                    exit with its status
 *
 * We wait with poll() on the socket and the signalfd together, so Ctrl-C is handled between
 * frames: the first one cancels the job and we keep reading until JobEnd (so the user still
 * sees the ranks' last words and why the job ended); a second one leaves at once.  SIGUSR1
 * and SIGUSR2 are forwarded to the running job (SignalJob).
 *
 * Our stdin goes to rank 0 (on any node): read only while fewer than MSG_STDIN_WINDOW
 * bytes wait for the job host's acknowledgement, so however much is piped in, at most that
 * much is in flight, and a rank that does not read holds us back instead of filling memory.
 *
 * Whatever the agents do (a node stopped, our own agent stopped), we leave in bounded time:
 * LAUNCH_CANCEL_GRACE_SEC after a cancel, and that long after the job's --timeout, without
 * JobEnd.  Closing the connection then makes our agent tear down what is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "launch.h"
#include "msg_check.h"

struct launch_job {
    const struct launch_opts *opts;
    const struct launch_program *progs; /* [opts->n_apps] */
    const struct placement *place;      /* several nodes, or NULL */
    int fd;
    int sigfd;
    bool started; /* JobStarted arrived: job_id is valid */
    uint64_t job_id;
    unsigned signals; /* SIGINT/SIGTERM received so far */
    bool cancel_sent;
    unsigned grace_sec;  /* opts->cancel_grace_sec */
    double cancel_at;    /* when the cancel went out */
    int cancel_status;   /* our exit status if the agent never answers it */
    double timeout_from; /* submission, then JobStarted: the --timeout counts from there */
    struct launch_output out;
    bool stdin_fwd;         /* our stdin goes to rank 0 */
    bool stdin_done;        /* its end was sent */
    uint64_t stdin_unacked; /* sent, not yet acknowledged (<= MSG_STDIN_WINDOW) */
    char *deadlock;         /* the agent's last deadlock report (JobEnd repeats it on abort) */
};

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Spawn slots of each node of a placed job (NodePlacement.spawn_slots): the host file's
 * free slots (a spare host's all of them), or --universe-size's ranks beyond the world, filling the
 * free slots in node order and the rest on node 0 (the universe is then exactly what was asked). */
static void spawn_slots(const struct launch_opts *o, const struct placement *p, uint32_t *out)
{
    const char *u = NULL;
    for (size_t i = 0; i < o->n_env; i++)
        if (o->env[i].name && strcmp(o->env[i].name, "TMPI_UNIVERSE_SIZE") == 0)
            u = o->env[i].value;
    uint32_t nn = p->nnodes + p->nspare; /* the spare hosts' slots come after the job's */
    uint64_t total = 0;
    for (uint32_t i = 0; i < nn; i++)
        total += out[i] = p->nodes[i].free_slots;
    if (u) {
        uint64_t want = strtoull(u, NULL, 10), extra = want > p->nprocs ? want - p->nprocs : 0;
        for (uint32_t i = 0; i < nn; i++) {
            if (out[i] > extra) out[i] = (uint32_t)extra;
            extra -= out[i];
        }
        if (nn) out[0] += (uint32_t)extra;
        total = 0;
        for (uint32_t i = 0; i < nn; i++)
            total += out[i];
    }
    /* the agents' bound (msg_check.h): more slots than it are left out, last node first */
    for (uint32_t i = nn; i-- > 0 && total > MSG_MAX_SPAWN_SLOTS;) {
        uint64_t cut = total - MSG_MAX_SPAWN_SLOTS < out[i] ? total - MSG_MAX_SPAWN_SLOTS : out[i];
        out[i] -= (uint32_t)cut;
        total -= cut;
    }
}

static int send_submit(struct launch_job *j)
{
    char cwd[4096];
    const char *wdir = j->opts->wdir;
    if (wdir && wdir[0] == '/') {
        /* checked where the ranks run: the directory may exist only there */
        if (snprintf(cwd, sizeof cwd, "%s", wdir) >= (int)sizeof cwd) {
            fprintf(stderr, "tmpi-launch: --wdir %s: name too long\n", wdir);
            return -ENAMETOOLONG;
        }
    } else if (!getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "tmpi-launch: cannot get the current directory: %s\n", strerror(errno));
        return -errno;
    } else if (wdir) {
        size_t n = strlen(cwd);
        if (snprintf(cwd + n, sizeof cwd - n, "%s%s", n > 1 ? "/" : "", wdir) >=
            (int)(sizeof cwd - n)) {
            fprintf(stderr, "tmpi-launch: --wdir %s: name too long\n", wdir);
            return -ENAMETOOLONG;
        }
    }
    mode_t mask = umask(0);
    umask(mask);
    Tmpi__EnvVar **env = calloc(j->opts->n_env + 1, sizeof *env);
    if (!env) return -ENOMEM;
    /* The nodes point into the placement; only the message arrays are ours. */
    size_t nn = j->place ? j->place->nnodes + j->place->nspare : 0;
    Tmpi__NodePlacement *nodes = calloc(nn + 1, sizeof *nodes);
    Tmpi__NodePlacement **node_ptrs = calloc(nn + 1, sizeof *node_ptrs);
    uint32_t *slots = calloc(nn + 1, sizeof *slots);
    if (!nodes || !node_ptrs || !slots) {
        free(env);
        free(nodes);
        free(node_ptrs);
        free(slots);
        return -ENOMEM;
    }
    if (nn > 0) spawn_slots(j->opts, j->place, slots);
    for (size_t i = 0; i < nn; i++) {
        const struct placement_node *pn = &j->place->nodes[i];
        tmpi__node_placement__init(&nodes[i]);
        nodes[i].host = pn->host;
        nodes[i].port = pn->port;
        nodes[i].n_ranks = pn->nranks;
        nodes[i].ranks = pn->ranks;
        nodes[i].spawn_slots = slots[i];
        node_ptrs[i] = &nodes[i];
    }
    for (size_t i = 0; i < j->opts->n_env; i++)
        env[i] = &j->opts->env[i];

    /* Several programs (MPMD) travel as apps, and then only there: an agent that does not
     * know apps refuses the job (no program) rather than run the first everywhere. */
    size_t na = j->opts->n_apps > 1 ? j->opts->n_apps : 0;
    Tmpi__JobApp *apps = calloc(na + 1, sizeof *apps);
    Tmpi__JobApp **app_ptrs = calloc(na + 1, sizeof *app_ptrs);
    Tmpi__EnvVar ***app_env = calloc(na + 1, sizeof *app_env);
    int r = apps && app_ptrs && app_env ? 0 : -ENOMEM;
    for (size_t k = 0; k < na && r == 0; k++) {
        const struct launch_app *la = &j->opts->apps[k];
        tmpi__job_app__init(&apps[k]);
        apps[k].nprocs = la->nprocs;
        apps[k].program_hash.data = (uint8_t *)j->progs[k].hash;
        apps[k].program_hash.len = sizeof j->progs[k].hash;
        apps[k].program_size = j->progs[k].size;
        apps[k].program_name = (char *)la->program;
        apps[k].n_args = la->n_args;
        apps[k].args = la->args;
        apps[k].cwd = (char *)(la->wdir ? la->wdir : ""); /* made absolute by main */
        app_env[k] = calloc(la->n_env + 1, sizeof *app_env[k]);
        if (!app_env[k]) {
            r = -ENOMEM;
            break;
        }
        for (size_t v = 0; v < la->n_env; v++)
            app_env[k][v] = &la->env[v];
        apps[k].n_env = la->n_env;
        apps[k].env = app_env[k];
        app_ptrs[k] = &apps[k];
    }

    Tmpi__SubmitJob sub = TMPI__SUBMIT_JOB__INIT;
    sub.nprocs = j->opts->nprocs;
    if (na == 0) {
        const struct launch_app *la = &j->opts->apps[0];
        sub.program_hash.data = (uint8_t *)j->progs[0].hash;
        sub.program_hash.len = sizeof j->progs[0].hash;
        sub.program_size = j->progs[0].size;
        sub.program_name = (char *)la->program;
        sub.n_args = la->n_args;
        sub.args = la->args;
        /* -env of the one program: the same as the job's */
        if (la->n_env && r == 0) {
            Tmpi__EnvVar **both = realloc(env, (j->opts->n_env + la->n_env + 1) * sizeof *both);
            if (both) {
                env = both;
                for (size_t v = 0; v < la->n_env; v++)
                    env[j->opts->n_env + v] = &la->env[v];
            } else {
                r = -ENOMEM;
            }
        }
    }
    sub.n_apps = na;
    sub.apps = app_ptrs;
    sub.cwd = cwd; /* --wdir resolved above */
    sub.umask = (uint32_t)mask;
    sub.umask_set = 1;
    sub.n_env = j->opts->n_env + (na == 0 ? j->opts->apps[0].n_env : 0);
    sub.env = env;
    sub.timeout_sec = j->opts->timeout_sec;
    sub.mem_limit = j->opts->mem_limit;
    sub.cpu_limit_milli = j->opts->cpu_limit_milli;
    sub.stdin_open = j->stdin_fwd;
    sub.bind_to = (Tmpi__BindTo)j->opts->bind_to;
    sub.report_bindings = j->opts->report_bindings;
    sub.on_deadlock = (Tmpi__DeadlockAction)j->opts->on_deadlock;
    sub.n_nodes = nn;
    sub.nodes = node_ptrs;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_SUBMIT;
    e.submit = &sub;
    if (r == 0) r = frame_write_fd(j->fd, &e, FRAME_DEFAULT_MAX);
    free(env);
    free(nodes);
    free(node_ptrs);
    free(slots);
    for (size_t k = 0; app_env && k < na; k++)
        free(app_env[k]);
    free(app_env);
    free(apps);
    free(app_ptrs);
    if (r == -EMSGSIZE)
        fputs("tmpi-launch: the job's arguments and environment are too large\n", stderr);
    else if (r < 0)
        fprintf(stderr, "tmpi-launch: cannot submit the job: %s\n", strerror(-r));
    return r;
}

static int send_cancel(struct launch_job *j)
{
    Tmpi__CancelJob c = TMPI__CANCEL_JOB__INIT;
    c.job_id = j->job_id;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_CANCEL;
    e.cancel = &c;
    j->cancel_sent = true;
    j->cancel_at = now_sec();
    return frame_write_fd(j->fd, &e, FRAME_DEFAULT_MAX);
}

/* Ask the agent to end the job, once.  Returns an exit status when we must leave now, else 0. */
static int cancel_job(struct launch_job *j)
{
    if (j->cancel_sent) return 0;
    if (!j->started)
        return LAUNCH_EXIT_INTERRUPTED; /* nothing runs yet: closing the connection suffices */
    int r = send_cancel(j);
    if (r < 0) {
        fprintf(stderr, "tmpi-launch: cannot cancel the job: %s\n", strerror(-r));
        return LAUNCH_EXIT_INTERRUPTED;
    }
    /* Tell the user the first signal was heard, and how to leave without waiting. */
    fputs("tmpi-launch: cancelling the job (signal again to leave now)\n", stderr);
    return 0;
}

/* SIGUSR1/SIGUSR2 go on to the job's ranks, as mpirun forwards them (the agent delivers them,
 * docs/PROTOCOL.md "Signals").  Before the job runs there is nobody to deliver to: dropped. */
static int forward_signal(struct launch_job *j, int sig)
{
    if (!j->started || j->cancel_sent) return 0;
    Tmpi__SignalJob s = TMPI__SIGNAL_JOB__INIT;
    s.job_id = j->job_id;
    s.signo = sig;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_SIGNAL_JOB;
    e.signal_job = &s;
    int r = frame_write_fd(j->fd, &e, FRAME_DEFAULT_MAX);
    if (r < 0)
        fprintf(stderr, "tmpi-launch: cannot forward %s to the job: %s\n", strsignal(sig),
                strerror(-r));
    return 0;
}

/* Drain the signalfd.  Returns an exit status when we must leave now, else 0. */
static int on_signal(struct launch_job *j)
{
    struct signalfd_siginfo si;
    int status = 0;
    while (read(j->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGUSR1 || si.ssi_signo == SIGUSR2) {
            forward_signal(j, (int)si.ssi_signo);
            continue;
        }
        if (++j->signals >= 2) return LAUNCH_EXIT_INTERRUPTED;
        j->cancel_status = LAUNCH_EXIT_INTERRUPTED;
        status = cancel_job(j);
        if (status) return status;
    }
    return status;
}

static int send_stdin(struct launch_job *j, const uint8_t *data, size_t len, bool eof)
{
    Tmpi__StdinData d = TMPI__STDIN_DATA__INIT;
    d.data.data = (uint8_t *)data;
    d.data.len = len;
    d.eof = eof;
    Tmpi__Envelope e = TMPI__ENVELOPE__INIT;
    e.msg_case = TMPI__ENVELOPE__MSG_STDIN_DATA;
    e.stdin_data = &d;
    int r = frame_write_fd(j->fd, &e, FRAME_DEFAULT_MAX);
    if (r == 0) j->stdin_unacked += len;
    return r;
}

/* Our stdin is readable (or at its end): one chunk within the window, or its end. */
static void on_stdin(struct launch_job *j)
{
    static uint8_t buf[MSG_STDIN_CHUNK];
    size_t room = MSG_STDIN_WINDOW - j->stdin_unacked;
    ssize_t n = read(0, buf, room < sizeof buf ? room : sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n > 0) {
        if (send_stdin(j, buf, (size_t)n, false) < 0) j->stdin_done = true;
        return;
    }
    /* end of file, or an error reading it: rank 0 reads end of file */
    j->stdin_done = true;
    (void)send_stdin(j, NULL, 0, true);
}

/* Whether to offer our stdin to rank 0 (on whichever node: the coordinator passes it on):
 * not with --stdin none, not when there is none, and not from a terminal we do not own (a
 * background job would be stopped by SIGTTIN). */
static bool want_stdin(const struct launch_opts *opts)
{
    if (opts->no_stdin) return false;
    if (fcntl(0, F_GETFL) < 0) return false;
    if (isatty(0) && tcgetpgrp(0) != getpgrp()) return false;
    return true;
}

/* The exit status JobEnd asks for, made safe: a failed rank never turns into success, and a
 * status that is not a valid exit code (0 after truncation) becomes 1. */
static int end_status(const Tmpi__JobEnd *end)
{
    int st = end->exit_status;
    if ((st & 255) == 0 && (st != 0 || end->failed_rank >= 0)) return LAUNCH_EXIT_FAILURE;
    return st & 255;
}

/* One frame from the agent.  Returns -1 to keep reading, else our exit status. */
static int on_frame(struct launch_job *j, const Tmpi__Envelope *e)
{
    int r;
    switch (e->msg_case) {
    case TMPI__ENVELOPE__MSG_NEED_PROGRAM: {
        /* the agent asks for the programs it lacks one by one, by hash */
        const ProtobufCBinaryData *h = &e->need_program->program_hash;
        size_t k = 0;
        while (k < j->opts->n_apps &&
               (h->len != sizeof j->progs[k].hash || memcmp(h->data, j->progs[k].hash, h->len)))
            k++;
        if (k == j->opts->n_apps) {
            fputs("tmpi-launch: the agent asked for a program that is not part of the job\n",
                  stderr);
            return LAUNCH_EXIT_FAILURE;
        }
        r = launch_program_send(&j->progs[k], j->fd);
        if (r < 0) {
            fprintf(stderr, "tmpi-launch: cannot send %s to the agent: %s\n",
                    j->opts->apps[k].program,
                    r == -ESTALE ? "the file changed during the launch" : strerror(-r));
            return LAUNCH_EXIT_FAILURE;
        }
        return -1;
    }
    case TMPI__ENVELOPE__MSG_JOB_STARTED:
        j->started = true;
        j->job_id = e->job_started->job_id;
        j->timeout_from = now_sec();
        return -1;
    case TMPI__ENVELOPE__MSG_OUTPUT: {
        const Tmpi__Output *o = e->output;
        if (launch_output_write(&j->out, o->rank, o->stream, o->data.data, o->data.len) < 0) {
            /* Nobody reads our output any more (e.g. "| head"): stop the job rather than run
             * it to completion for nothing. */
            if (!j->cancel_sent) j->cancel_status = LAUNCH_EXIT_FAILURE;
            r = cancel_job(j);
            if (r) return r;
        }
        return -1;
    }
    case TMPI__ENVELOPE__MSG_RANK_EXIT:
        launch_output_flush(&j->out, e->rank_exit->rank);
        return -1;
    case TMPI__ENVELOPE__MSG_JOB_END:
        launch_output_flush(&j->out, -1);
        /* an abort for a deadlock ends with the report we printed already (the agent may
         * have cut it to the length of a reason) */
        if (e->job_end->reason && *e->job_end->reason &&
            !(j->deadlock &&
              strncmp(j->deadlock, e->job_end->reason, strlen(e->job_end->reason)) == 0))
            fprintf(stderr, "tmpi-launch: %s\n", e->job_end->reason);
        free(j->deadlock);
        j->deadlock = NULL;
        return end_status(e->job_end);
    case TMPI__ENVELOPE__MSG_DEADLOCK: {
        const char *rep = e->deadlock->report ? e->deadlock->report : "deadlock";
        fprintf(stderr, "tmpi-launch: %s%s\n", rep,
                e->deadlock->abort ? " (ending the job: --on-deadlock=abort)" : "");
        free(j->deadlock);
        j->deadlock = strdup(rep);
        return -1;
    }
    case TMPI__ENVELOPE__MSG_ERROR:
        launch_output_flush(&j->out, -1);
        fprintf(stderr, "tmpi-launch: %s\n",
                e->error->message && *e->error->message ? e->error->message
                                                        : strerror(-e->error->code));
        return LAUNCH_EXIT_FAILURE;
    case TMPI__ENVELOPE__MSG_CANCEL_REPLY:
        return -1; /* the answer to our CancelJob; JobEnd follows */
    case TMPI__ENVELOPE__MSG_STDIN_ACK:
        if (e->stdin_ack->bytes > j->stdin_unacked) {
            fputs("tmpi-launch: the agent acknowledged stdin it was not sent\n", stderr);
            return LAUNCH_EXIT_FAILURE;
        }
        j->stdin_unacked -= e->stdin_ack->bytes;
        return -1;
    default:
        fprintf(stderr, "tmpi-launch: unexpected %s message from the agent\n", frame_msg_name(e));
        return LAUNCH_EXIT_FAILURE;
    }
}

/* How long poll may wait (-1: for ever), or 0 with *status set when we must leave now: the
 * agent did not end the job within the grace after our cancel or after the job's timeout. */
static int wait_ms(struct launch_job *j, int *status)
{
    double now = now_sec(), left = -1;
    if (j->cancel_sent) {
        left = j->cancel_at + j->grace_sec - now;
        if (left <= 0) {
            launch_output_flush(&j->out, -1);
            fprintf(stderr,
                    "tmpi-launch: the agent did not report the job's end within %u s of the "
                    "cancel; leaving (the agent tears down what is left)\n",
                    j->grace_sec);
            *status = j->cancel_status;
            return 0;
        }
    }
    if (j->opts->timeout_sec > 0) {
        double t = j->timeout_from + (double)j->opts->timeout_sec + j->grace_sec - now;
        if (t <= 0) {
            launch_output_flush(&j->out, -1);
            fprintf(stderr,
                    "tmpi-launch: the agent did not report the job's end within %u s of its "
                    "%u s timeout; leaving (the agent tears down what is left)\n",
                    j->grace_sec, j->opts->timeout_sec);
            *status = LAUNCH_EXIT_TIMEOUT;
            return 0;
        }
        if (left < 0 || t < left) left = t;
    }
    if (left < 0) return -1;
    return left > 3600 ? 3600 * 1000 : (int)(left * 1000) + 1;
}

static int session(struct launch_job *j)
{
    if (send_submit(j) < 0) return LAUNCH_EXIT_FAILURE;
    j->timeout_from = now_sec();
    for (;;) {
        bool in =
            j->stdin_fwd && j->started && !j->stdin_done && j->stdin_unacked < MSG_STDIN_WINDOW;
        struct pollfd p[3] = {{.fd = j->fd, .events = POLLIN},
                              {.fd = j->sigfd, .events = POLLIN},
                              {.fd = 0, .events = POLLIN}};
        int leave = 0, ms = wait_ms(j, &leave);
        if (ms == 0) return leave;
        int n = poll(p, in ? 3 : 2, ms);
        if (n == 0) continue; /* a deadline: wait_ms decides */
        if (n < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "tmpi-launch: poll: %s\n", strerror(errno));
            return LAUNCH_EXIT_FAILURE;
        }
        if (p[1].revents & POLLIN) {
            int st = on_signal(j);
            if (st) return st;
        }
        if (in && (p[2].revents & (POLLIN | POLLHUP | POLLERR))) on_stdin(j);
        if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        /* The agent writes whole frames, so once a frame has begun a blocking read of the
         * rest completes promptly. */
        Tmpi__Envelope *e = NULL;
        int r = frame_read_fd(j->fd, FRAME_DEFAULT_MAX, &e);
        if (r == -ECONNRESET) {
            launch_output_flush(&j->out, -1);
            fputs("tmpi-launch: lost the connection to the agent\n", stderr);
            return LAUNCH_EXIT_FAILURE;
        }
        if (r < 0) {
            fprintf(stderr, "tmpi-launch: bad frame from the agent: %s\n", strerror(-r));
            return LAUNCH_EXIT_FAILURE;
        }
        int st = on_frame(j, e);
        frame_free(e);
        if (st >= 0) return st;
    }
}

int launch_job_run(const struct launch_opts *opts, const struct launch_program *progs,
                   const struct placement *place, int fd, int sigfd)
{
    struct launch_job j = {.opts = opts,
                           .progs = progs,
                           .place = place,
                           .fd = fd,
                           .sigfd = sigfd,
                           .grace_sec = opts->cancel_grace_sec};
    j.stdin_fwd = want_stdin(opts);
    launch_output_init(&j.out, opts);
    int status = session(&j);
    launch_output_free(&j.out);
    free(j.deadlock);
    return status;
}
