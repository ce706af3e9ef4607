/* agent.c — the agent's life: setup, the event loop, signals, systemd notification,
 * shutdown. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "agent_run.h"
#include "cgroup.h"
#include "cluster.h"
#include "control.h"
#include "fault.h"
#include "job.h"
#include "job_id.h"
#include "jobhost.h"
#include "job_member.h"
#include "job_link.h"
#include "log.h"
#include "mesh.h"
#include "metrics.h"
#include "metrics_http.h"
#include "names.h"
#include "xrelay.h"
#include "oom_score.h"
#include "privs.h"
#include "reload.h"
#include "svc_init.h"

/* notify_status (jobs/agent.h) in the agent. */
static void daemon_notify_status(struct agent *a)
{
    sd_notifyf(0, "STATUS=%u job(s) running", a->njobs);
}

/* Keeps what tmpictl jobs shows of an ended job (job_history.h). */
static void record_ended(struct agent *a, const struct job *j)
{
    if (a->cfg.ended_job_keep_sec == 0) return;
    double now = agent_now();
    struct job_record r = {
        .id = j->id,
        .uid = j->uid,
        .nprocs = j->nprocs,
        .runtime_sec = now - j->start_time,
        .ended_at = now,
        .exit_status = j->failed ? j->exit_status : 0,
        .mem_limit = j->mem_limit,
        .cpu_limit_milli = j->cpu_limit_milli,
        .cgroup = j->host ? cgroup_kind_name() : "",
    };
    snprintf(r.owner, sizeof r.owner, "%s", j->owner);
    snprintf(r.program, sizeof r.program, "%s", j->program_name ? j->program_name : "");
    job_history_expire(&a->ended, now, a->cfg.ended_job_keep_sec);
    if (job_history_add(&a->ended, &r) < 0)
        log_warning("job %llu: out of memory to keep it listed as ended",
                    (unsigned long long)j->id);
}

static void begin_shutdown(struct agent *a, const char *why);

/* job_done (jobs/agent.h) in the agent; a job host registers its own (jobhost_job_done). */
static void daemon_job_done(struct agent *a, struct job *j)
{
    for (struct job **pp = &a->jobs; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            a->njobs--;
            break;
        }
    if (j->conn) {
        /* the connection stays open: the launcher closes it after reading JobEnd */
        control_forget_job(j->conn);
        j->conn = NULL;
    }
    log_job(LOG_INFO, j->id, j->owner, "ended%s%s", j->failed ? ": " : "",
            j->failed ? j->reason : "");
    record_ended(a, j);
    if (a->names) names_job_gone(a->names, j->id);
    xrelay_job_gone(a, j);
    job_free(j);
    agent_notify_status(a);
    if (a->shutting_down && a->njobs == 0) control_drain(a);
    if (a->leave_when_idle && a->njobs == 0 && !a->shutting_down)
        begin_shutdown(a, "the key's pipe closed and the last job ended");
}

/* SIGTERM, SIGINT, or the end of the --key-fd lifeline: cancel the jobs, then leave. */
static void begin_shutdown(struct agent *a, const char *why)
{
    if (a->shutting_down) {
        log_notice("%s again: leaving now", why);
        event_base_loopbreak(a->base);
        return;
    }
    a->shutting_down = 1;
    log_notice("%s: shutting down (%u job(s) running)", why, a->njobs);
    sd_notify(0, "STOPPING=1");
    control_close(a);
    for (struct job *j = a->jobs; j; j = j->next)
        job_cancel(j, 143, "the agent is shutting down");
    /* the shutdown timer bounds both the jobs' ending and the launchers' reading */
    if (a->njobs == 0) control_drain(a);
    struct timeval tv = {.tv_sec = a->cfg.kill_grace_sec + 2};
    evtimer_add(a->shutdown_timer, &tv);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    begin_shutdown(arg, strsignal((int)sig));
}

/* The --key-fd pipe stays open while whoever handed us the key wants us (tmpi-launch, through
 * srun's stdin for the agents of a Slurm allocation): its end, however the writer went, is our
 * end.  Anything written after the key is read and ignored. */
static void on_key_fd(evutil_socket_t fd, short what, void *arg)
{
    struct agent *a = arg;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) return;
    event_del(a->key_watch);
    /* Already leaving (SIGTERM from srun came first): that shutdown goes on; a second one
     * would leave at once, jobs and socket behind. */
    if (a->shutting_down) return;
    if (a->njobs == 0) {
        begin_shutdown(a, "the key's pipe closed");
        return;
    }
    /* tmpi-launch leaves as soon as its job's end reaches it, which can be while the job's
     * host here is still unloading: cancelling it half-way would only cost a kill_grace
     * wait.  Let the jobs end on their own, within kill_grace, then leave. */
    a->leave_when_idle = 1;
    log_info("the key's pipe closed: leaving once %u job(s) end", a->njobs);
    struct timeval tv = {.tv_sec = a->cfg.kill_grace_sec};
    evtimer_add(a->leave_timer, &tv);
}

static void on_leave_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct agent *a = arg;
    if (!a->shutting_down) begin_shutdown(a, "the key's pipe closed and jobs still run");
}

/* After the key was read (mesh_init): watch its descriptor, which no job host may inherit.
 * Standard input (srun's agents) moves out of the way first, and fd 0 becomes /dev/null:
 * job hosts inherit the standard three, and a closed fd 0 would be taken by their next
 * open. */
static int watch_key_fd(struct agent *a)
{
    int fd = a->cfg.key_fd;
    if (fd < 0) return 0;
    if (fd <= STDERR_FILENO) {
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        int null = moved < 0 ? -1 : open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, fd) < 0) {
            int r = -errno;
            if (null >= 0) close(null);
            if (moved >= 0) close(moved);
            return log_errno(LOG_ERR, r, "--key-fd %d", fd);
        }
        close(null);
        fd = moved;
    } else if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        return log_errno(LOG_ERR, -errno, "--key-fd %d", fd);
    }
    a->key_watch = event_new(a->base, fd, EV_READ | EV_PERSIST, on_key_fd, a);
    a->leave_timer = evtimer_new(a->base, on_leave_timeout, a);
    if (!a->key_watch || !a->leave_timer || event_add(a->key_watch, NULL) < 0) return -ENOMEM;
    return 0;
}

/* SIGHUP (ExecReload in tmpid.service): read the configuration again (reload.c).  The agent
 * used to die of SIGHUP's default action, leaving its socket behind. */
static void on_hangup(evutil_socket_t sig, short what, void *arg)
{
    struct agent *a = arg;
    if (a->shutting_down) return;
    log_notice("SIGHUP: reloading the configuration");
    (void)agent_reload(a); /* a refused file is logged and changes nothing */
}

static void on_shutdown_timeout(evutil_socket_t fd, short what, void *arg)
{
    struct agent *a = arg;
    log_warning("%u job(s) did not stop in time; leaving anyway", a->njobs);
    event_base_loopbreak(a->base);
}

static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
    struct agent *a = arg;
    sd_notify(0, "WATCHDOG=1");
    struct timeval tv = {.tv_sec = (time_t)(a->watchdog_usec / 2000000),
                         .tv_usec = (suseconds_t)((a->watchdog_usec / 2) % 1000000)};
    evtimer_add(a->watchdog, &tv);
}

/* Every rank image keeps a memfd open (loader.h): thousands of ranks need thousands of fds. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            log_errno(LOG_WARNING, -errno, "cannot raise the open file limit");
    }
}

/* A ready fd that is one of the standard three (srun's agents report on stdout) is pointed at
 * /dev/null rather than closed: a later open must never land on fd 1 or 2. */
static void close_ready_fd(int fd)
{
    if (fd > STDERR_FILENO) {
        close(fd);
        return;
    }
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, fd) < 0) log_errno(LOG_WARNING, -errno, "--ready-fd %d", fd);
    if (null >= 0) close(null);
}

static void signal_ready(struct agent *a, int ready_fd)
{
    sd_notifyf(0, "READY=1\nSTATUS=ready, no jobs\nMAINPID=%d", (int)getpid());
    if (ready_fd >= 0) {
        /* One write: several agents' lines may share a pipe (srun's output), so each agent's
         * lines must not be split.  PORT= tells a launcher the port of a --listen :0. */
        char msg[64];
        uint16_t port = mesh_listen_port(a->mesh);
        int len = port ? snprintf(msg, sizeof msg, "READY=1\nPORT=%u\n", (unsigned)port)
                       : snprintf(msg, sizeof msg, "READY=1\n");
        if (write(ready_fd, msg, (size_t)len) < 0) log_errno(LOG_WARNING, -errno, "--ready-fd");
        close_ready_fd(ready_fd);
    }
    log_notice("tmpid %s ready (name %s, pid %d)", TMPI_VERSION_STRING, a->cfg.name, (int)getpid());
}

/* The mesh hands the connections that carry a job to the job code (mesh.h). */
static void on_job_assign(void *arg, struct mesh_conn *c, const Tmpi__JobAssign *ja)
{
    job_member_assign(arg, c, ja);
}

static void on_data_accept(void *arg, const uint8_t join[MESH_JOIN_SIZE], uint32_t channel, int fd,
                           const char *peer)
{
    job_link_accept(arg, join, channel, fd, peer);
}

static void on_node_query(void *arg, struct mesh_conn *c, const Tmpi__NodeQuery *q)
{
    cluster_answer(arg, c, q);
}

static void on_name_request(void *arg, struct mesh_conn *c, const Tmpi__NameRequest *rq)
{
    struct agent *a = arg;
    names_answer(a->names, c, rq);
}

/* The name service's way to a job's host (names.h), and the host's to it (jobhost.c). */
static struct job *job_of_id(void *arg, uint64_t id)
{
    return agent_job(arg, id);
}

static void host_name_request(struct agent *a, struct job *j, const Tmpi__NameRequest *rq)
{
    names_host_request(a->names, j, rq);
}

static void on_xlink(void *arg, struct mesh_conn *c, const Tmpi__Envelope *env)
{
    struct agent *a = arg;
    xrelay_accept(a->xrelay, c, env);
}

static void port_found(void *arg, uint64_t job_id, uint32_t node, uid_t uid, const char *address)
{
    struct agent *a = arg;
    xrelay_route(a->xrelay, job_id, node, uid, address);
}

static const struct mesh_accept_ops mesh_to_jobs = {
    .job_assign = on_job_assign,
    .data_accept = on_data_accept,
    .node_query = on_node_query,
    .name_request = on_name_request,
    .xlink = on_xlink,
};

/* The agent's own OOM score (oom_score.h), set before its capabilities go: lowering it needs
 * CAP_SYS_RESOURCE, which an agent started by hand as root has until privs_drop.  A service
 * user has it set by the unit (OOMScoreAdjust=) and finds it done.  A private agent is the
 * user's own process for one job: it leaves the score alone. */
static void set_own_oom_score(const struct agent_config *cfg)
{
    if (cfg->private_agent) return;
    int cur;
    int r = oom_score_get(&cur);
    if (r == 0 && cur == cfg->oom_score_adj) {
        log_info("OOM score adjustment %d (oom_score_adj): job hosts set %d", cur,
                 cfg->job_oom_score_adj);
        return;
    }
    if (r == 0) r = oom_score_set(cfg->oom_score_adj);
    if (r < 0) {
        log_errno(LOG_WARNING, r,
                  "cannot set the agent's OOM score adjustment to %d (oom_score_adj; lowering it "
                  "needs CAP_SYS_RESOURCE: OOMScoreAdjust= in tmpid.service); the kernel may "
                  "end the agent when the node runs out of memory",
                  cfg->oom_score_adj);
        return;
    }
    log_info("OOM score adjustment %d (oom_score_adj, was %d): job hosts set %d",
             cfg->oom_score_adj, cur, cfg->job_oom_score_adj);
}

/* Everything the loop needs: libraries, fault handlers, caches, the event base, the mesh,
 * the control socket, signals and timers.  No netd: the data links of jobs across nodes are
 * read by the jobs' hosts (job_link.h).
 * 0 or a negative errno (logged); teardown() undoes whatever part was done. */
static int setup(struct agent *a)
{
    int r;
    if (sodium_init() < 0) {
        log_error("libsodium failed to initialise");
        return -EIO;
    }
    if (evthread_use_pthreads() < 0) {
        log_error("libevent has no pthreads support");
        return -EIO;
    }
    signal(SIGPIPE, SIG_IGN);
    r = fault_init();
    if (r < 0) return log_errno(LOG_ERR, r, "cannot install the fault handlers");
    raise_fd_limit();
    a->start_time = agent_now();
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    a->ncpus = n > 0 ? (int)n : 1;
    progcache_init(&a->cache, a->cfg.program_cache);
    pool_init(&a->pool, a->cfg.pool_size);
    svc_init(a);
    a->node_number = job_id_node_number(a->cfg.node_number, a->cfg.name, a->cfg.key_file != NULL);

    a->base = event_base_new();
    if (!a->base) {
        log_error("cannot create the event loop");
        return -ENOMEM;
    }
    r = mesh_init(&a->mesh, &a->cfg, a->base);
    if (r < 0) return r;
    mesh_set_accept_ops(a->mesh, &mesh_to_jobs, a);
    r = names_new(a->mesh, a->base, &a->cfg, job_of_id, a, &a->names);
    if (r < 0) return log_errno(LOG_ERR, r, "cannot set up the name service");
    a->name_request = host_name_request;
    a->xframe = xrelay_frame;
    r = xrelay_new(a, a->mesh, &a->xrelay);
    if (r < 0) return log_errno(LOG_ERR, r, "cannot set up the path between jobs");
    names_set_xjob(a->names, a->node_number, port_found, a);
    r = watch_key_fd(a);
    if (r < 0) return r;
    /* before the capabilities go: a cgroup tree may need them to be set up, and lowering the
     * OOM score needs CAP_SYS_RESOURCE */
    cgroup_setup();
    set_own_oom_score(&a->cfg);
    /* the key and the config are read; no thread exists yet (capabilities are per thread) */
    (void)privs_drop();
    r = control_listen(a);
    if (r < 0) return r;
    r = metrics_http_start(&a->metrics_srv, &a->cfg, a->base, metrics_render_agent, a);
    if (r < 0) return r;
    a->sig_term = evsignal_new(a->base, SIGTERM, on_signal, a);
    a->sig_int = evsignal_new(a->base, SIGINT, on_signal, a);
    a->sig_hup = evsignal_new(a->base, SIGHUP, on_hangup, a);
    a->shutdown_timer = evtimer_new(a->base, on_shutdown_timeout, a);
    a->watchdog = evtimer_new(a->base, on_watchdog, a);
    if (!a->sig_term || !a->sig_int || !a->sig_hup || !a->shutdown_timer || !a->watchdog)
        return -ENOMEM;
    evsignal_add(a->sig_term, NULL);
    evsignal_add(a->sig_int, NULL);
    evsignal_add(a->sig_hup, NULL);
    if (sd_watchdog_enabled(0, &a->watchdog_usec) > 0) on_watchdog(-1, 0, a);
    return 0;
}

/* Undoes setup(), however far it got. */
static void teardown(struct agent *a)
{
    control_free_all(a);
    metrics_http_stop(a->metrics_srv);
    a->metrics_srv = NULL;
    names_free(a->names); /* its questions hold mesh connections */
    a->names = NULL;
    xrelay_free(a->xrelay); /* its links too */
    a->xrelay = NULL;
    mesh_close(a->mesh);
    a->mesh = NULL;
    if (a->sig_term) event_free(a->sig_term);
    if (a->sig_int) event_free(a->sig_int);
    if (a->sig_hup) event_free(a->sig_hup);
    if (a->key_watch) event_free(a->key_watch);
    if (a->leave_timer) event_free(a->leave_timer);
    if (a->shutdown_timer) event_free(a->shutdown_timer);
    if (a->watchdog) event_free(a->watchdog);
    if (a->base) {
        /* libevent finishes a freed bufferevent from its loop when a deferred callback of it
         * was still queued (the callback holds a reference): one pass without blocking runs
         * those before the base goes.  LeakSanitizer saw a control connection's bufferevent
         * left over when SIGTERM caught it mid-shutdown.  No event of ours is left to fire. */
        event_base_loop(a->base, EVLOOP_NONBLOCK);
        event_base_free(a->base);
    }
    progcache_destroy(&a->cache);
    job_history_free(&a->ended);
    cgroup_teardown();
}

int agent_run(struct agent *a, int ready_fd)
{
    a->job_done = daemon_job_done;
    a->notify_status = daemon_notify_status;
    int r = setup(a);
    if (r == 0) {
        signal_ready(a, ready_fd);
        event_base_dispatch(a->base);
        if (a->njobs > 0) {
            /* Rank threads still run inside us; unloading their code would crash them. */
            log_warning("exiting with %u job(s) still running", a->njobs);
            control_close(a);
            _exit(1);
        }
    }
    teardown(a);
    return r;
}
