/* jobhost.c — the agent's side of a job host (jobhost.h): start it, relay its frames to the
 * launcher (or a member's coordinator), pass a member its links, tear it down, reap it.  Loop
 * thread only, except where a function says so. */
#include "jobhost.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "cgroup.h"
#include "frame.h"
#include "job.h"
#include "job_ranks.h"
#include "job_link.h"
#include "jobhost_check.h"
#include "log.h"
#include "memfd_bytes.h"
#include "metrics_count.h"
#include "msg_check.h"
#include "progcache.h"
#include "sanitizer_rt.h"

extern char **environ;

/* The relay stops reading a host while this much waits for its launcher (as job_send). */
#define JOBHOST_OUTPUT_HIGH (4u << 20)

/* A job host's log records (HostLog) the agent writes per second; the rest are counted and
 * the count logged with the next one written.  The host runs as the job's user, who could
 * otherwise flood the agent's log through it. */
#define JOBHOST_LOG_PER_SEC 20

/* How job hosts are started; set once by jobhost_setup before the loop runs, then read only. */
static struct {
    char exe[PATH_MAX];
} jobhost_conf;

/* One job host, owned by its job (j->host).  Loop thread only. */
struct jobhost {
    struct job *job;
    pid_t pid; /* valid until reaped: a zombie keeps its pid, so kill() cannot hit another */
    struct bufferevent *bev; /* the channel */
    struct event *sigchld;
    struct event *grace; /* SIGKILL when it fires */
    int reaped, wstatus;
    int links_fd;           /* member: our end of the links socket, else -1 */
    struct event *links_ev; /* member: the links socket can take more (job_link_flush) */
    int throttled;          /* not reading: the launcher's output is full */
    int killed;             /* SIGKILL sent */
    int was_stopped;        /* it was stopped (SIGSTOP, a tracer) when the grace ran out */
    int finished;           /* agent_job_done was called */
    enum cgroup_oom oom;    /* what the kernel's OOM killer did in its cgroup (once reaped) */
    struct jobhost_chan_state chan;   /* what it sent so far (member, JobEnd, stdin acks) */
    int stdin_eof;                    /* the launcher's StdinData with eof was passed on */
    struct cgroup_job *cg;            /* its cgroup (cgroup.h); NULL: none.  Removed once reaped. */
    struct metrics_link_seen traffic; /* member: its LinkTraffic counts so far */
    time_t log_sec;                   /* HostLog: the second counted, records in it, dropped */
    unsigned log_n, log_dropped;
    /* member: the host asks for a link anew (job_link_relink) */
    struct event *links_rev;
};

void jobhost_setup(const char *exe)
{
    snprintf(jobhost_conf.exe, sizeof jobhost_conf.exe, "%s", exe);
}

static const char *level_name(int level)
{
    switch (level) {
    case LOG_ERR:
        return "err";
    case LOG_WARNING:
        return "warning";
    case LOG_NOTICE:
        return "notice";
    case LOG_INFO:
        return "info";
    default:
        return "debug";
    }
}

/* The sanitizer runtime the job's programs need first in their process (sanitizer_rt.h),
 * NULL for none. */
static const char *job_sanitizer(const struct job *j)
{
    for (uint32_t k = 0; k < j->napps; k++) {
        const char *r = NULL;
        /* two runtimes cannot share a process: the first is preloaded, and the program that
         * needs the other fails its load with the runtime's own reason */
        if (j->apps[k].prog &&
            sanitizer_rt_of_program(j->apps[k].prog->bytes, j->apps[k].prog->size, &r) != 0)
            return r;
    }
    return NULL;
}

/* Whether this tmpid is built with runtime rt's sanitizer: then rt is first already. */
static int host_has(const char *rt)
{
#if defined(__SANITIZE_ADDRESS__)
    if (strncmp(rt, "libasan.so.", 11) == 0) return 1;
#endif
#if defined(__SANITIZE_THREAD__)
    if (strncmp(rt, "libtsan.so.", 11) == 0) return 1;
#endif
    (void)rt;
    return 0;
}

/* The sanitizer settings a job host starts with: the job's -x ones win over the agent's, as
 * they do in the ranks' environment (host_setup.c), since the runtime reads them at start. */
static const char *const san_vars[] = {
    "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "TSAN_OPTIONS=", "LSAN_OPTIONS=", NULL};

/* What a job host gets of the agent's environment: only what the runtime itself needs, the
 * dynamic linker's search path for the tmpid executable and the sanitizers' settings of a
 * test build, and the job's program's sanitizer runtime preloaded with the job's settings for
 * it.  The ranks' environment is the job's (host/host_setup.c); nothing else of the agent's
 * (its service manager's variables, its administrator's shell) reaches a job.  *own holds
 * the strings made here (freed with the array). */
static char **host_environ(struct job *j, char **own, size_t nown)
{
    enum { MAX = 16 };
    char **v = calloc(MAX, sizeof *v);
    if (!v) return NULL;
    size_t k = 0, o = 0;
    const char *rt = job_sanitizer(j);
    for (const char *const *d = san_vars; rt && *d && o + 1 < nown; d++) {
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)strlen(*d) - 1, *d);
        const char *val = job_getenv(j, name);
        if (val && asprintf(&own[o], "%s%s", *d, val) >= 0) v[k++] = own[o++];
    }
    if (rt && !host_has(rt) && o < nown && asprintf(&own[o], "LD_PRELOAD=%s", rt) >= 0)
        v[k++] = own[o++];
    for (char **e = environ; *e && k + 1 < MAX; e++) {
        int set = 0;
        for (size_t i = 0; i < k; i++)
            if (strncmp(*e, v[i], strcspn(v[i], "=") + 1) == 0) set = 1;
        if (strncmp(*e, "LD_LIBRARY_PATH=", 16) == 0) {
            if (!set) v[k++] = *e;
            continue;
        }
        for (const char *const *d = san_vars; *d && !set; d++)
            if (strncmp(*e, *d, strlen(*d)) == 0) {
                v[k++] = *e;
                break;
            }
    }
    return v;
}

static int send_envelope(struct jobhost *h, const Tmpi__Envelope *env)
{
    uint8_t *buf;
    size_t len;
    int r = frame_encode(env, h->job->agent->cfg.max_frame_size, &buf, &len);
    if (r < 0) return r;
    r = bufferevent_write(h->bev, buf, len) < 0 ? -ENOMEM : 0;
    free(buf);
    return r;
}

/* A member's job as the host reads it: the assignment the agent accepted. */
static int send_assign(struct jobhost *h, const Tmpi__JobAssign *ja)
{
    Tmpi__JobAssign mine = *ja; /* shallow: only bind_first is this agent's own */
    mine.bind_first = h->job->bind_first;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_ASSIGN;
    env.job_assign = &mine;
    return send_envelope(h, &env);
}

/* "NAME=VALUE" strings as EnvVar messages; names are copies in *ret_names. */
static int env_vars(char **strings, Tmpi__EnvVar **ret_vars, Tmpi__EnvVar ***ret_ptrs,
                    char ***ret_names, size_t *ret_n)
{
    size_t n = 0;
    while (strings && strings[n])
        n++;
    Tmpi__EnvVar *vars = calloc(n + 1, sizeof *vars);
    Tmpi__EnvVar **ptrs = calloc(n + 1, sizeof *ptrs);
    char **names = calloc(n + 1, sizeof *names);
    *ret_vars = vars;
    *ret_ptrs = ptrs;
    *ret_names = names;
    *ret_n = n;
    if (!vars || !ptrs || !names) return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(strings[i], '=');
        names[i] = strndup(strings[i], (size_t)(eq - strings[i]));
        if (!names[i]) return -ENOMEM;
        tmpi__env_var__init(&vars[i]);
        vars[i].name = names[i];
        vars[i].value = (char *)eq + 1;
        ptrs[i] = &vars[i];
    }
    return 0;
}

static void env_vars_free(Tmpi__EnvVar *vars, Tmpi__EnvVar **ptrs, char **names, size_t n)
{
    if (names)
        for (size_t i = 0; i < n; i++)
            free(names[i]);
    free(names);
    free(ptrs);
    free(vars);
}

/* The job as the host reads it: the submission the agent accepted, its programs as apps
 * (the host's job_new rebuilds the same apps, one or several). */
static int send_submit(struct jobhost *h)
{
    struct job *j = h->job;
    uint32_t na = j->napps;
    Tmpi__SubmitJob s = TMPI__SUBMIT_JOB__INIT;
    s.nprocs = j->nprocs;
    s.cwd = j->cwd;
    s.umask = j->umask;
    s.umask_set = j->umask_set;
    s.timeout_sec = j->timeout_sec;
    s.stdin_open = j->stdin_open;
    s.bind_to = j->bind_to;
    s.report_bindings = j->report_bindings;
    s.bind_first = j->bind_first;
    Tmpi__JobApp *apps = calloc(na, sizeof *apps);
    Tmpi__JobApp **app_ptrs = calloc(na, sizeof *app_ptrs);
    struct {
        Tmpi__EnvVar *vars, **ptrs;
        char **names;
        size_t n;
    } *aenv = calloc(na + 1, sizeof *aenv);
    int r = apps && app_ptrs && aenv ? 0 : -ENOMEM;
    if (r == 0) r = env_vars(j->env, &aenv[na].vars, &aenv[na].ptrs, &aenv[na].names, &aenv[na].n);
    for (uint32_t k = 0; k < na && r == 0; k++) {
        const struct job_app *ap = &j->apps[k];
        tmpi__job_app__init(&apps[k]);
        apps[k].nprocs = ap->nprocs;
        apps[k].program_hash.data = (uint8_t *)ap->prog->hash;
        apps[k].program_hash.len = PROGRAM_HASH_SIZE;
        apps[k].program_size = ap->prog->size;
        apps[k].program_name = ap->program_name;
        apps[k].n_args = (size_t)ap->argc - 1;
        apps[k].args = ap->argv + 1;
        apps[k].cwd = ap->cwd;
        r = env_vars(ap->env, &aenv[k].vars, &aenv[k].ptrs, &aenv[k].names, &aenv[k].n);
        apps[k].n_env = aenv[k].n;
        apps[k].env = aenv[k].ptrs;
        app_ptrs[k] = &apps[k];
    }
    if (r == 0) {
        s.n_env = aenv[na].n;
        s.env = aenv[na].ptrs;
        s.n_apps = na;
        s.apps = app_ptrs;
        Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
        env.msg_case = TMPI__ENVELOPE__MSG_SUBMIT;
        env.submit = &s;
        r = send_envelope(h, &env);
    }
    for (uint32_t k = 0; aenv && k <= na; k++)
        env_vars_free(aenv[k].vars, aenv[k].ptrs, aenv[k].names, aenv[k].n);
    free(aenv);
    free(apps);
    free(app_ptrs);
    return r;
}

static void send_to_launcher(struct job *j, const void *buf, size_t len)
{
    pthread_mutex_lock(&j->out_mu);
    if (j->bev) bufferevent_write(j->bev, buf, len);
    pthread_mutex_unlock(&j->out_mu);
}

static size_t launcher_queued(struct job *j)
{
    pthread_mutex_lock(&j->out_mu);
    size_t n = j->bev ? evbuffer_get_length(bufferevent_get_output(j->bev)) : 0;
    pthread_mutex_unlock(&j->out_mu);
    return n;
}

static void arm_grace(struct jobhost *h)
{
    if (h->reaped || evtimer_pending(h->grace, NULL)) return;
    struct timeval tv = {.tv_sec = h->job->agent->cfg.kill_grace_sec};
    evtimer_add(h->grace, &tv);
}

static void kill_host(struct jobhost *h, const char *why)
{
    if (h->reaped) return;
    log_warning("job %llu: killing its job host (pid %d): %s", (unsigned long long)h->job->id,
                (int)h->pid, why);
    kill(h->pid, SIGKILL);
}

/* One record of the host's log, written as the agent's record about the job: the job's id and
 * user, the level no more urgent than err, the text escaped (log.c); at most
 * JOBHOST_LOG_PER_SEC a second. */
static void host_log(struct jobhost *h, const Tmpi__HostLog *hl)
{
    struct job *j = h->job;
    time_t now = time(NULL);
    if (now != h->log_sec) {
        h->log_sec = now;
        h->log_n = 0;
    }
    if (h->log_n >= JOBHOST_LOG_PER_SEC) {
        h->log_dropped++;
        return;
    }
    h->log_n++;
    int level = hl->level < LOG_ERR ? LOG_ERR : hl->level > LOG_DEBUG ? LOG_DEBUG : hl->level;
    const char *msg = hl->message ? hl->message : "";
    /* the host names its job itself ("job N: ..."): said once */
    char own[32];
    int k = snprintf(own, sizeof own, "job %llu: ", (unsigned long long)j->id);
    if (k > 0 && strncmp(msg, own, (size_t)k) == 0) msg += k;
    if (h->log_dropped) {
        log_job(level, j->id, j->owner, "%s (job host of %s; %u records of it dropped before)", msg,
                j->owner, h->log_dropped);
        h->log_dropped = 0;
    } else {
        log_job(level, j->id, j->owner, "%s (job host of %s)", msg, j->owner);
    }
}

void jobhost_carriers_free(struct job *j)
{
    for (size_t i = 0; i < j->ncarriers; i++) {
        free(j->carriers[i].peer);
        free(j->carriers[i].carrier);
    }
    free(j->carriers);
    free(j->carrier_ptrs);
    j->carriers = NULL;
    j->carrier_ptrs = NULL;
    j->ncarriers = 0;
}

/* What carries each of the job's links (tmpictl status), copied from the host's JobLinked.
 * Out of memory: the job runs on, status shows no links. */
static void carriers_set(struct job *j, const Tmpi__JobLinked *jl)
{
    jobhost_carriers_free(j);
    if (!jl->n_links) return;
    j->carriers = calloc(jl->n_links, sizeof *j->carriers);
    j->carrier_ptrs = calloc(jl->n_links, sizeof *j->carrier_ptrs);
    if (!j->carriers || !j->carrier_ptrs) {
        jobhost_carriers_free(j);
        return;
    }
    for (size_t i = 0; i < jl->n_links; i++) {
        const Tmpi__LinkCarrier *in = jl->links[i];
        Tmpi__LinkCarrier *c = &j->carriers[i];
        tmpi__link_carrier__init(c);
        c->node = in->node;
        c->channel = in->channel;
        c->peer = strdup(in->peer ? in->peer : "");
        c->carrier = strdup(in->carrier ? in->carrier : "");
        j->carrier_ptrs[i] = c;
        j->ncarriers = i + 1;
        if (!c->peer || !c->carrier) {
            jobhost_carriers_free(j);
            return;
        }
    }
}

/* A frame from the host: note what it tells, pass it on whole.  0, or -1 when the host broke
 * the protocol (it is killed). */
static int relay_frame(struct jobhost *h, const uint8_t *frame, size_t len)
{
    struct job *j = h->job;
    Tmpi__Envelope *env = frame_decode(frame + FRAME_HEADER_SIZE, len - FRAME_HEADER_SIZE);
    if (!env) return -1;
    /* A member host speaks for its own job only (the coordinator checks the ranks). */
    h->chan.uid = j->link ? j->link->uid : 0;
    if (!jobhost_chan_ok(&h->chan, env)) {
        frame_free(env);
        return -1;
    }
    int pass = jobhost_chan_take(&h->chan, env);
    switch (env->msg_case) {
    case TMPI__ENVELOPE__MSG_JOB_STARTED:
        atomic_store(&j->state, JOB_RUNNING);
        metrics_job_started(&j->agent->metrics, j->created_at, j->start_time);
        break;
    case TMPI__ENVELOPE__MSG_JOB_LINKED:
        carriers_set(j, env->job_linked);
        break;
    case TMPI__ENVELOPE__MSG_LINK_TRAFFIC:
        /* for this agent's metrics only, never passed on */
        metrics_add_link_traffic(&j->agent->metrics, &h->traffic, env->link_traffic);
        break;
    case TMPI__ENVELOPE__MSG_JOB_UNLOADED:
        /* the host leaves right after; one that does not is killed */
        arm_grace(h);
        break;
    case TMPI__ENVELOPE__MSG_HOST_LOG:
        /* the host's own diagnostics: this agent's log only */
        host_log(h, env->host_log);
        break;
    case TMPI__ENVELOPE__MSG_NAME_REQUEST:
        /* a rank's MPI_Publish/Unpublish/Lookup_name: this agent's name service answers */
        if (j->agent->name_request) j->agent->name_request(j->agent, j, env->name_request);
        break;
    case TMPI__ENVELOPE__MSG_XFRAME:
        /* a frame for another job of the same user (control/xrelay.h) */
        if (j->agent->xframe) j->agent->xframe(j->agent, j, env->xframe);
        break;
    case TMPI__ENVELOPE__MSG_RANKS_REPLY:
        /* a member's goes to its coordinator like the rest; a single-node job's is ours */
        if (!h->chan.member && j->rq) ranks_gather_part(j->rq, env->ranks_reply);
        break;
    case TMPI__ENVELOPE__MSG_JOB_END:
        atomic_store(&j->state, JOB_ENDING);
        if (env->job_end->exit_status != 0) {
            /* counted before the launcher hears of it: tmpictl status right after agrees */
            atomic_fetch_add(&j->agent->jobs_failed, 1);
            pthread_mutex_lock(&j->mu);
            if (!j->failed) {
                j->failed = 1;
                j->exit_status = env->job_end->exit_status;
                j->fail_rank = env->job_end->failed_rank;
                snprintf(j->reason, sizeof j->reason, "%s",
                         env->job_end->reason ? env->job_end->reason : "");
            }
            pthread_mutex_unlock(&j->mu);
        }
        /* nothing to ask the ranks any more */
        ranks_gather_free(j->rq, "the job ended");
        j->rq = NULL;
        /* Normally the host leaves right after; one whose ranks do not stop is killed.  A
         * member's host waits for the other members (JobRelease, or JobCancel). */
        if (!h->chan.member) arm_grace(h);
        break;
    default:
        break;
    }
    frame_free(env);
    if (pass) send_to_launcher(j, frame, len);
    return 0;
}

static void relay(struct jobhost *h, int final)
{
    struct evbuffer *in = bufferevent_get_input(h->bev);
    while (evbuffer_get_length(in) >= FRAME_HEADER_SIZE) {
        if (!final && launcher_queued(h->job) >= JOBHOST_OUTPUT_HIGH) {
            h->throttled = 1;
            bufferevent_disable(h->bev, EV_READ);
            return;
        }
        uint8_t hdr[FRAME_HEADER_SIZE];
        size_t len;
        evbuffer_copyout(in, hdr, sizeof hdr);
        if (frame_parse_header(hdr, FRAME_DEFAULT_MAX, &len) < 0) {
            kill_host(h, "malformed frame on its channel");
            evbuffer_drain(in, evbuffer_get_length(in));
            return;
        }
        if (evbuffer_get_length(in) < FRAME_HEADER_SIZE + len) return;
        const uint8_t *f = evbuffer_pullup(in, (ev_ssize_t)(FRAME_HEADER_SIZE + len));
        int r = f ? relay_frame(h, f, FRAME_HEADER_SIZE + len) : -1;
        evbuffer_drain(in, FRAME_HEADER_SIZE + len);
        if (r < 0) {
            kill_host(h, "unexpected frame on its channel");
            evbuffer_drain(in, evbuffer_get_length(in));
            return;
        }
    }
}

static void send_frame(struct job *j, const Tmpi__Envelope *env)
{
    uint8_t *buf;
    size_t len;
    if (frame_encode(env, FRAME_DEFAULT_MAX, &buf, &len) == 0) {
        send_to_launcher(j, buf, len);
        free(buf);
    }
}

static void send_job_end(struct jobhost *h)
{
    struct job *j = h->job;
    char reason[sizeof j->reason + 160];
    int status, st = h->wstatus;
    pthread_mutex_lock(&j->mu);
    int cancelled = j->failed;
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        if (h->oom == CGROUP_OOM_LIMIT && sig == SIGKILL) {
            status = 128 + sig;
            snprintf(reason, sizeof reason,
                     "the job was killed on %s for exceeding its memory limit of %llu bytes "
                     "(--mem-limit, job_memory_max)",
                     j->agent->cfg.name, (unsigned long long)j->mem_limit);
            cancelled = 0;
        } else if (h->oom == CGROUP_OOM_NODE && sig == SIGKILL) {
            /* no limit of its own was reached: the memory of the node (or of a cgroup the
             * agent runs in) ran out, and the job held the most of it */
            status = 128 + sig;
            snprintf(reason, sizeof reason,
                     "the job's process on %s was killed by signal %d (KILL): out of memory (the "
                     "node ran out and the kernel's OOM killer chose this job)",
                     j->agent->cfg.name, sig);
            cancelled = 0;
        } else if (cancelled && h->killed && h->was_stopped) {
            /* the likely cause of a link that was not carried on (job_net.h): name it, so
             * the coordinator reports this rather than the other node's lost link */
            status = j->exit_status;
            snprintf(reason, sizeof reason,
                     "the job's process on %s stopped answering: it was stopped (SIGSTOP or a "
                     "debugger) and was killed %u s after the job was cancelled (%s)",
                     j->agent->cfg.name, j->agent->cfg.kill_grace_sec, j->reason);
        } else if (cancelled && h->killed) {
            status = j->exit_status;
            snprintf(reason, sizeof reason, "%s (its ranks did not stop within %u s: killed)",
                     j->reason, j->agent->cfg.kill_grace_sec);
        } else {
            status = 128 + sig;
            cancelled = 0;
            snprintf(reason, sizeof reason,
                     "the job's process on %s was killed by signal %d (%s)%s", j->agent->cfg.name,
                     sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
                     WCOREDUMP(st) ? ", core dumped" : "");
        }
    } else {
        int code = WEXITSTATUS(st);
        status = cancelled ? j->exit_status : code ? code : 1;
        snprintf(reason, sizeof reason, "%s%sthe job's process on %s exited with code %d",
                 cancelled ? j->reason : "", cancelled ? "; " : "", j->agent->cfg.name, code);
    }
    if (!cancelled) {
        j->failed = 1;
        j->exit_status = status;
        j->fail_rank = -1;
    }
    size_t rl = strlen(reason);
    if (rl >= sizeof j->reason) rl = sizeof j->reason - 1;
    memcpy(j->reason, reason, rl);
    j->reason[rl] = 0;
    pthread_mutex_unlock(&j->mu);
    atomic_fetch_add(&j->agent->jobs_failed, 1);
    Tmpi__JobEnd je = TMPI__JOB_END__INIT;
    je.job_id = j->id;
    je.exit_status = status;
    je.failed_rank = -1;
    je.reason = reason;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_END;
    env.job_end = &je;
    send_frame(j, &env);
}

/* A member's host is gone: the coordinator may forget this node. */
static void send_job_unloaded(struct jobhost *h)
{
    Tmpi__JobUnloaded ju = TMPI__JOB_UNLOADED__INIT;
    ju.uid = h->job->link->uid;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_UNLOADED;
    env.job_unloaded = &ju;
    send_frame(h->job, &env);
}

/* The host is reaped: everything it wrote is in the socket.  Relay it, end the launcher's
 * stream if the host did not, and hand the job back. */
static void finish(struct jobhost *h)
{
    struct job *j = h->job;
    struct evbuffer *in = bufferevent_get_input(h->bev);
    int fd = bufferevent_getfd(h->bev);
    /* What is still in the socket.  Outside its read callback a socket bufferevent keeps
     * the end of its input buffer frozen (adds fail): the bufferevent reads no more (the
     * host is gone), so thaw it for these last bytes.  A host that left with frames of ours
     * unread (stdin it never took, a JobCancel) makes the kernel report ECONNRESET once
     * before the frames it did write: read past it. */
    bufferevent_disable(h->bev, EV_READ);
    evbuffer_unfreeze(in, 0);
    uint8_t buf[1 << 14];
    ssize_t n;
    int resets = 0;
    while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0 ||
           (n < 0 && (errno == EINTR || (errno == ECONNRESET && resets++ < 1))))
        if (n > 0 && evbuffer_add(in, buf, (size_t)n) < 0) break;
    relay(h, 1);
    /* A host that died after its JobEnd (in a destructor, say) still fails the job. */
    int died = !WIFEXITED(h->wstatus) || WEXITSTATUS(h->wstatus) != 0;
    if (!h->chan.got_end || (h->chan.member && died && !h->chan.got_unloaded)) send_job_end(h);
    if (h->chan.member && !h->chan.got_unloaded) send_job_unloaded(h);
    h->finished = 1;
    agent_job_done(j->agent, j); /* frees j and h */
}

static void on_sigchld(evutil_socket_t sig, short what, void *arg)
{
    struct jobhost *h = arg;
    if (h->reaped) return;
    int st;
    pid_t r = waitpid(h->pid, &st, WNOHANG);
    if (r != h->pid) return;
    h->reaped = 1;
    h->wstatus = st;
    h->oom = cgroup_job_oom(h->cg);
    if (h->oom == CGROUP_OOM_LIMIT)
        log_notice("job %llu: its memory limit (%llu bytes) was exceeded: the kernel killed it",
                   (unsigned long long)h->job->id, (unsigned long long)h->job->mem_limit);
    else if (h->oom == CGROUP_OOM_NODE)
        log_notice("job %llu: the node ran out of memory and the kernel's OOM killer ended the "
                   "job's process (pid %d)",
                   (unsigned long long)h->job->id, (int)h->pid);
    if (WIFSIGNALED(st))
        log_info("job %llu: job host (pid %d) ended by signal %d", (unsigned long long)h->job->id,
                 (int)h->pid, WTERMSIG(st));
    finish(h);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    relay(arg, 0);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct jobhost *h = arg;
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))) return;
    bufferevent_disable(bev, EV_READ | EV_WRITE);
    /* Usually the host is exiting (its SIGCHLD follows).  One that closed its channel and
     * goes on can reach nobody any more: it gets the kill grace, then SIGKILL. */
    arm_grace(h);
}

/* Whether process pid is stopped (state T or t in /proc/PID/stat): a job process that
 * does not answer because someone stopped it, not because it computes. */
static int proc_stopped(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold anything */
    return p && (p[1] == ' ') && (p[2] == 'T' || p[2] == 't');
}

static void on_grace(evutil_socket_t fd, short what, void *arg)
{
    struct jobhost *h = arg;
    if (!h->killed) {
        h->was_stopped = proc_stopped(h->pid);
        char why[96];
        snprintf(why, sizeof why, "still running %u s after the job ended or was torn down",
                 h->job->agent->cfg.kill_grace_sec);
        kill_host(h, why);
        h->killed = 1;
    }
    /* Reaping does not depend on SIGCHLD alone: look again every second until it is gone. */
    struct timeval tv = {.tv_sec = 1};
    evtimer_add(h->grace, &tv);
    on_sigchld(SIGCHLD, 0, h);
}

void jobhost_free(struct job *j)
{
    ranks_gather_free(j->rq, "the job ended");
    j->rq = NULL;
    struct jobhost *h = j->host;
    if (!h) return;
    if (!h->reaped && h->pid > 0) {
        /* the agent is leaving with the job still running: the host must not outlive it */
        kill(h->pid, SIGKILL);
        waitpid(h->pid, NULL, 0);
    }
    cgroup_job_free(h->cg); /* empty now: its only process is reaped */
    if (h->bev) bufferevent_free(h->bev);
    if (h->links_ev) event_free(h->links_ev);
    if (h->links_rev) event_free(h->links_rev);
    if (h->links_fd >= 0) close(h->links_fd);
    if (h->sigchld) event_free(h->sigchld);
    if (h->grace) event_free(h->grace);
    free(h);
    j->host = NULL;
}

/* ---- tmpictl ranks and the deadlock watch of a single-node job (job_ranks.h) ---- */

static int host_send_query(void *arg, uint64_t query)
{
    struct job *j = arg;
    struct jobhost *h = j->host;
    if (!h || h->reaped || h->chan.got_end) return -ESRCH;
    Tmpi__RanksQuery q = TMPI__RANKS_QUERY__INIT;
    q.query = query;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_RANKS_QUERY;
    env.ranks_query = &q;
    return send_envelope(h, &env);
}

static const struct ranks_gather_ops host_rq_ops = {.send_query = host_send_query};

/* The watch found the job deadlocked: the launcher hears it; abort ends the job too. */
static void host_deadlock(void *arg, const char *report)
{
    struct job *j = arg;
    Tmpi__Deadlock d;
    Tmpi__Envelope env;
    int abort = ranks_deadlock_frame(j->id, j->on_deadlock, report, &d, &env);
    send_frame(j, &env);
    if (abort) jobhost_cancel(j, JOB_DEADLOCK_STATUS, report);
}

/* A single-node job's gather and watch; without them tmpictl ranks says it cannot. */
static void start_ranks(struct job *j)
{
    struct agent *a = j->agent;
    /* the host chooses the universe (host/job_spawn.h): room for the largest it may */
    j->rq = ranks_gather_new(a, j->nprocs, JOB_SPAWN_MAX_UNIVERSE, 1, &host_rq_ops, j);
    if (!j->rq || ranks_watch_start(j->rq, a->cfg.deadlock_check_ms, host_deadlock, j) < 0)
        log_warning("job %llu: no memory for its deadlock watch", (unsigned long long)j->id);
}

/* Every program of the job, one after the other in app order (the host splits them by the
 * sizes in its SubmitJob or JobAssign). */
static int programs_memfd(const struct job *j)
{
    int fd = memfd_create("tmpi-program", MFD_CLOEXEC);
    if (fd < 0) return -errno;
    for (uint32_t k = 0; k < j->napps; k++) {
        int r = fd_write_all(fd, j->apps[k].prog->bytes, j->apps[k].prog->size);
        if (r < 0) {
            close(fd);
            return r;
        }
    }
    return fd;
}

/* An fd number above the ones the file actions write to, close-on-exec. */
static int high_fd(int fd)
{
    if (fd < 0) return fd;
    int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    int r = h < 0 ? -errno : h;
    close(fd);
    return r;
}

static int spawn(struct jobhost *h, int chan, int prog, int links)
{
    struct job *j = h->job;
    struct agent *a = j->agent;
    /* The configuration the agent accepted (at start or its last reload), not the file: an
     * edit nobody reloaded, or a bad one, never reaches a job. */
    int conf = -1;
    if (a->cfg.text) {
        conf = high_fd(memfd_from_bytes("tmpid.conf", a->cfg.text, a->cfg.text_len));
        if (conf < 0) return conf;
    }
    char id[32], user[64];
    snprintf(id, sizeof id, "%llu", (unsigned long long)j->id);
    snprintf(user, sizeof user, "%u:%u:%d", (unsigned)j->uid, (unsigned)j->gid,
             (int)j->submitter_pid);
    const char *argv[18];
    int n = 0;
    argv[n++] = "tmpid";
    argv[n++] = "--job-host";
    argv[n++] = id;
    argv[n++] = "--job-user";
    argv[n++] = user;
    if (a->cfg.private_agent) argv[n++] = "--private";
    if (conf >= 0) {
        argv[n++] = "--config";
        argv[n++] = JOBHOST_CONFIG_PATH;
    }
    argv[n++] = "--name";
    argv[n++] = a->cfg.name;
    argv[n++] = "--log-level";
    argv[n++] = level_name(log_get_level());
    /* transport auto as the agent decided it (fabric.h); not decided yet: the host looks */
    if (a->fabric_probed && atomic_load_explicit(&a->fabric_done, memory_order_acquire)) {
        argv[n++] = "--fabric";
        argv[n++] = a->fabric[0] ? a->fabric : "-";
    }
    argv[n] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    /* Never the agent's stdin, stdout or stderr (its journal stream under systemd): the host
     * makes fds 0-2 its own (host_stdio.h), and until then they are /dev/null. */
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, chan, JOBHOST_CHANNEL_FD);
    posix_spawn_file_actions_adddup2(&fa, prog, JOBHOST_PROGRAM_FD);
    if (conf >= 0) posix_spawn_file_actions_adddup2(&fa, conf, JOBHOST_CONFIG_FD);
    if (links >= 0) posix_spawn_file_actions_adddup2(&fa, links, JOBHOST_LINKS_FD);
    /* and nothing else: a descriptor the agent inherited without close-on-exec (a pipe of
     * whoever started it) stays with the agent */
    posix_spawn_file_actions_addclosefrom_np(&fa, links >= 0  ? JOBHOST_LINKS_FD + 1
                                                  : conf >= 0 ? JOBHOST_CONFIG_FD + 1
                                                              : JOBHOST_CONFIG_FD);
    sigset_t none, dflt;
    sigemptyset(&none);
    sigfillset(&dflt);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dflt);
    /* Its own process group: a terminal's Ctrl-C meant for an agent started by hand does not
     * reach the jobs' processes; the agent ends them itself. */
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_USEVFORK);
    char *own[8] = {0};
    char **envp = host_environ(j, own, sizeof own / sizeof own[0]);
    int rc =
        envp ? posix_spawn(&h->pid, jobhost_conf.exe, &fa, &at, (char *const *)argv, envp) : ENOMEM;
    free(envp);
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        free(own[i]);
    if (conf >= 0) close(conf);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return -rc;
}

static void on_links_writable(evutil_socket_t fd, short what, void *arg)
{
    struct jobhost *h = arg;
    if (h->job->link) job_link_flush(h->job->link);
}

/* The host's link of a (node, channel) broke and it asks for a new one (jobhost.h): a bare
 * jobhost_link_msg, no descriptor.  Anything else on the socket is a host breaking the rules. */
static void on_links_readable(evutil_socket_t fd, short what, void *arg)
{
    struct jobhost *h = arg;
    for (;;) {
        struct jobhost_link_msg m;
        char ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) { /* the host is gone: its channel says how */
            event_del(h->links_rev);
            return;
        }
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int bad;
            memcpy(&bad, CMSG_DATA(c), sizeof bad);
            close(bad);
            n = -1;
        }
        if (n != (ssize_t)sizeof m || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || !h->job->link ||
            job_link_relink(h->job->link, (int)m.node, (int)m.channel) < 0) {
            kill_host(h, "a malformed request for a data link");
            return;
        }
    }
}

/* A member's links socket: ours non-blocking in h->links_fd, the host's end in *child. */
static int links_socket(struct jobhost *h, int *child)
{
    int lv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, lv) < 0) return -errno;
    fcntl(lv[0], F_SETFL, fcntl(lv[0], F_GETFL) | O_NONBLOCK);
    h->links_fd = lv[0];
    *child = high_fd(lv[1]);
    if (*child < 0) return *child;
    h->links_ev = event_new(h->job->agent->base, h->links_fd, EV_WRITE, on_links_writable, h);
    h->links_rev =
        event_new(h->job->agent->base, h->links_fd, EV_READ | EV_PERSIST, on_links_readable, h);
    if (!h->links_ev || !h->links_rev) return -ENOMEM;
    event_add(h->links_rev, NULL);
    return 0;
}

/* The ranks of the agent's other jobs that have a host: where a new job's binding starts
 * (job_bind.h). */
static uint32_t busy_ranks(const struct agent *a, const struct job *self)
{
    uint32_t n = 0;
    for (const struct job *o = a->jobs; o; o = o->next)
        if (o != self && o->host) n += o->nprocs;
    return n;
}

int jobhost_start(struct job *j, const Tmpi__JobAssign *ja)
{
    struct agent *a = j->agent;
    struct jobhost *h = calloc(1, sizeof *h);
    int sv[2] = {-1, -1}, prog = -1, links = -1, r = -ENOMEM;
    if (!h) goto fail;
    h->job = j;
    h->pid = -1;
    h->links_fd = -1;
    h->chan.member = ja != NULL;
    j->bind_first = busy_ranks(a, j);
    if (ja) {
        r = links_socket(h, &links);
        if (r < 0) goto fail;
    }
    prog = high_fd(programs_memfd(j));
    if (prog < 0) {
        r = prog;
        goto fail;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) {
        r = -errno;
        goto fail;
    }
    sv[1] = high_fd(sv[1]);
    if (sv[1] < 0) {
        r = sv[1];
        goto fail;
    }
    /* the child's end blocks: the host reads its job with plain read() */
    fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) & ~O_NONBLOCK);
    h->bev = bufferevent_socket_new(a->base, sv[0], BEV_OPT_CLOSE_ON_FREE);
    h->sigchld = evsignal_new(a->base, SIGCHLD, on_sigchld, h);
    h->grace = evtimer_new(a->base, on_grace, h);
    if (!h->bev || !h->sigchld || !h->grace) goto fail;
    sv[0] = -1;
    bufferevent_setcb(h->bev, on_read, NULL, on_event, h);
    /* before the child exists, so its SIGCHLD cannot be missed */
    evsignal_add(h->sigchld, NULL);
    r = spawn(h, sv[1], prog, links);
    if (r < 0) {
        log_errno(LOG_ERR, r, "job %llu: cannot start its job host %s", (unsigned long long)j->id,
                  jobhost_conf.exe);
        goto fail;
    }
    /* The host waits for its job on the channel: it runs no user code before the frame is
     * queued below, so it is in its cgroup before any rank exists. */
    char err[PATH_MAX + 200];
    struct cgroup_limits lim = {.mem_max = j->mem_limit, .cpu_milli = j->cpu_limit_milli};
    r = cgroup_job_new(j->id, h->pid, &lim, &h->cg, err, sizeof err);
    if (r < 0) log_error("job %llu: %s", (unsigned long long)j->id, err);
    if (r == 0) r = ja ? send_assign(h, ja) : send_submit(h);
    if (r < 0) goto fail_spawned;
    close(sv[1]);
    close(prog);
    if (links >= 0) close(links);
    /* the host has its copy */
    for (uint32_t k = 0; k < j->napps; k++) {
        progcache_release(&a->cache, j->apps[k].prog);
        j->apps[k].prog = NULL;
    }
    bufferevent_enable(h->bev, EV_READ | EV_WRITE);
    j->host = h;
    if (!ja) start_ranks(j);
    log_debug("job %llu: job host pid %d", (unsigned long long)j->id, (int)h->pid);
    return 0;
fail_spawned:
    /* jobhost_free kills and reaps the host and removes its cgroup */
    j->host = h;
    close(sv[1]);
    close(prog);
    if (links >= 0) close(links);
    jobhost_free(j);
    return r;
fail:
    if (sv[0] >= 0) close(sv[0]);
    if (sv[1] >= 0) close(sv[1]);
    if (prog >= 0) close(prog);
    if (links >= 0) close(links);
    if (h) {
        h->pid = -1;
        h->reaped = 1;
        j->host = h;
        jobhost_free(j);
    }
    return r;
}

void jobhost_cancel(struct job *j, int status, const char *reason)
{
    struct jobhost *h = j->host;
    /* Over already (the launcher leaving after JobEnd): nothing to tear down, no failure.  A
     * member's host waits after its JobEnd for the others: a cancel must still reach it. */
    if (h->reaped || (h->chan.got_end && !h->chan.member) || h->chan.got_unloaded) return;
    pthread_mutex_lock(&j->mu);
    int first = !j->failed;
    if (first) {
        j->failed = 1;
        j->exit_status = status;
        j->fail_rank = -1;
        snprintf(j->reason, sizeof j->reason, "%s", reason);
    }
    pthread_mutex_unlock(&j->mu);
    atomic_store(&j->cancelled, 1);
    if (first) log_notice("job %llu: %s", (unsigned long long)j->id, reason);
    atomic_store(&j->state, JOB_ENDING);
    Tmpi__JobCancel jc = TMPI__JOB_CANCEL__INIT;
    jc.exit_status = status;
    jc.reason = (char *)reason;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_CANCEL;
    env.job_cancel = &jc;
    uint8_t *buf;
    size_t len;
    if (frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &len) == 0) {
        bufferevent_write(h->bev, buf, len);
        free(buf);
    }
    arm_grace(h);
}

const struct cgroup_job *jobhost_cgroup(const struct job *j)
{
    return j->host ? j->host->cg : NULL;
}

int jobhost_stdin(struct job *j, const Tmpi__StdinData *d)
{
    struct jobhost *h = j->host;
    if (!j->stdin_open || h->stdin_eof || d->data.len > MSG_STDIN_CHUNK ||
        h->chan.stdin_inflight + d->data.len > MSG_STDIN_WINDOW)
        return -EPROTO;
    if (h->reaped || h->chan.got_end) return 0; /* nobody reads it any more */
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_STDIN_DATA;
    env.stdin_data = (Tmpi__StdinData *)d;
    uint8_t *buf;
    size_t len;
    int r = frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &len);
    if (r < 0) return r;
    r = bufferevent_write(h->bev, buf, len) < 0 ? -ENOMEM : 0;
    free(buf);
    if (r == 0) {
        h->chan.stdin_inflight += d->data.len;
        h->stdin_eof = d->eof;
    }
    return r;
}

int jobhost_signal(struct job *j, int sig)
{
    struct jobhost *h = j->host;
    /* the pid stays ours until reaped; after its JobEnd the ranks are gone */
    if (h->reaped || h->chan.got_end) return 0;
    if (kill(h->pid, sig) < 0)
        log_warning("job %llu: cannot send signal %d to its job host (pid %d): %s",
                    (unsigned long long)j->id, sig, (int)h->pid, strerror(errno));
    return 0;
}

void jobhost_launcher_drained(struct job *j)
{
    struct jobhost *h = j->host;
    if (!h || !h->throttled || h->finished) return;
    h->throttled = 0;
    bufferevent_enable(h->bev, EV_READ);
    relay(h, 0);
}

void jobhost_forward(struct job *j, const Tmpi__Envelope *env)
{
    struct jobhost *h = j->host;
    if (!h || h->reaped) return;
    if (env->msg_case == TMPI__ENVELOPE__MSG_JOB_GO) atomic_store(&j->state, JOB_RUNNING);
    if (send_envelope(h, env) < 0) kill_host(h, "cannot pass it the coordinator's frame");
}

int jobhost_pass_link(struct job *j, int node, int channel, int fd)
{
    struct jobhost *h = j->host;
    if (!h || h->reaped || h->links_fd < 0) {
        close(fd);
        return -ESRCH;
    }
    struct jobhost_link_msg m = {.node = (uint32_t)node, .channel = (uint32_t)channel};
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    do
        n = sendmsg(h->links_fd, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        event_add(h->links_ev, NULL);
        return -EAGAIN;
    }
    int r = n == (ssize_t)sizeof m ? 0 : n < 0 ? -errno : -EIO;
    /* The host has its own copy now (or never will): the agent keeps none. */
    close(fd);
    return r;
}

int jobhost_ended(const struct job *j)
{
    return j->host && j->host->chan.got_end;
}

uint32_t jobhost_spawned(const struct job *j)
{
    return j->host ? j->host->chan.spawned : 0;
}
