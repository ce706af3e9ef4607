/* host_setup.c — the job host's set-up (host_setup.h): the job from the channel, the
 * submitter's identity, directory, umask, stdin and environment, the process-wide runtime. */
#include "host_setup.h"

#include <errno.h>
#include <event2/thread.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "fault.h"
#include "frame.h"
#include "host_proc.h"
#include "jobhost.h"
#include "log.h"
#include "oom_score.h"
#include "progcache.h"
#include "svc_init.h"

/* An agent running as its own user (the unit's User=tmpi with AmbientCapabilities) passes
 * its capabilities on to the host, and a switch between two non-root users keeps them: the
 * ranks must run with none. */
static int drop_capabilities(char *err, size_t errlen)
{
    if (geteuid() == 0) return 0; /* root's own job: root's rights, as anything root runs */
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {{0}};
    (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (syscall(SYS_capset, &hdr, data) < 0) {
        snprintf(err, errlen, "cannot drop the agent's capabilities: %s", strerror(errno));
        return -errno;
    }
    return 0;
}

/* Becomes the submitter: supplementary groups, gid, uid.  Nothing to do when the agent
 * already runs as that user (a private agent, or a user's own agent). */
static int become(const struct passwd *pw, uid_t uid, gid_t gid, char *err, size_t errlen)
{
    if (geteuid() == uid && getegid() == gid) {
        /* An exec by an agent with fewer capabilities than its user's (root's job under an
         * agent keeping CAP_KILL only) made the process undumpable too: see below. */
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        return drop_capabilities(err, errlen);
    }
    if (!pw) {
        snprintf(err, errlen, "uid %u has no user entry on this node", (unsigned)uid);
        return -ESRCH;
    }
    if (initgroups(pw->pw_name, gid) < 0 || setresgid(gid, gid, gid) < 0 ||
        setresuid(uid, uid, uid) < 0) {
        int e = errno;
        snprintf(err, errlen, "the agent (uid %u) cannot run jobs as %s (uid %u): %s",
                 (unsigned)getuid(), pw->pw_name, (unsigned)uid, strerror(e));
        return -e;
    }
    /* The switch made the process undumpable; it holds nothing secret, so core dumps follow
     * the system's policy for the user's processes again. */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    return drop_capabilities(err, errlen);
}

/* The process environment of the ranks, the same whatever agent starts the host (tmpi-launch(1),
 * ENVIRONMENT): the user's HOME, USER, LOGNAME and SHELL, a fixed PATH, the sanitizer
 * settings of the agent (test builds), then the job's -x variables, which win.  Nothing else
 * of the agent's environment or the launcher's reaches the ranks. */
#define JOBHOST_PATH "/usr/local/bin:/usr/bin:/bin"

static int set_environment(const struct passwd *pw, size_t n_env, Tmpi__EnvVar *const *env)
{
    static const char *const keep[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS",
                                       "LSAN_OPTIONS", NULL};
    const char *kept[sizeof keep / sizeof keep[0]] = {0};
    char *copies[sizeof keep / sizeof keep[0]] = {0};
    for (size_t i = 0; keep[i]; i++)
        if ((kept[i] = getenv(keep[i])) && !(copies[i] = strdup(kept[i]))) return -ENOMEM;
    int r = clearenv() == 0 ? 0 : -ENOMEM;
    for (size_t i = 0; keep[i]; i++) {
        if (copies[i] && setenv(keep[i], copies[i], 1) < 0) r = -errno;
        free(copies[i]);
    }
    if (pw) {
        if (setenv("HOME", pw->pw_dir, 1) < 0 || setenv("USER", pw->pw_name, 1) < 0 ||
            setenv("LOGNAME", pw->pw_name, 1) < 0 || setenv("SHELL", pw->pw_shell, 1) < 0)
            r = -errno;
    }
    if (setenv("PATH", JOBHOST_PATH, 1) < 0) r = -errno;
    for (size_t i = 0; i < n_env; i++)
        if (env[i]->name && setenv(env[i]->name, env[i]->value ? env[i]->value : "", 1) < 0)
            r = -errno;
    return r;
}

/* The job cannot start: the reason goes to the launcher in a JobEnd of status 1, or to a
 * member's coordinator as the JobLoaded that says it cannot run here. */
int host_fail_early(const struct host_proc *h, unsigned long long job_id, const char *reason)
{
    log_error("job %llu: %s", job_id, reason);
    if (h->member_uid) {
        Tmpi__JobLoaded jl = TMPI__JOB_LOADED__INIT;
        jl.uid = h->member_uid;
        jl.ok = 0;
        jl.error = (char *)reason;
        Tmpi__Envelope out = TMPI__ENVELOPE__INIT;
        out.msg_case = TMPI__ENVELOPE__MSG_JOB_LOADED;
        out.job_loaded = &jl;
        (void)frame_write_fd(JOBHOST_CHANNEL_FD, &out, FRAME_DEFAULT_MAX);
        return 1;
    }
    Tmpi__JobEnd je = TMPI__JOB_END__INIT;
    je.job_id = job_id;
    je.exit_status = 1;
    je.failed_rank = -1;
    je.reason = (char *)reason;
    Tmpi__Envelope out = TMPI__ENVELOPE__INIT;
    out.msg_case = TMPI__ENVELOPE__MSG_JOB_END;
    out.job_end = &je;
    (void)frame_write_fd(JOBHOST_CHANNEL_FD, &out, FRAME_DEFAULT_MAX);
    return 1;
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* fd 0 of the process: a pipe the launcher's stdin is fed into when the job has one
 * (rank 0 reads it; interpose_stdin.c gives the other ranks end of file), else /dev/null.
 * Never the agent's own stdin.  0 or a negative errno. */
static int setup_stdin(struct host_proc *h, int open_it)
{
    int p[2];
    if (!open_it) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -errno;
        int r = dup2(fd, 0) < 0 ? -errno : 0;
        if (fd != 0) close(fd);
        return r;
    }
    if (pipe2(p, O_CLOEXEC) < 0) return -errno;
    if (p[0] != 0) {
        if (dup2(p[0], 0) < 0) {
            int e = errno;
            close(p[0]);
            close(p[1]);
            return -e;
        }
        close(p[0]);
    } else {
        fcntl(0, F_SETFD, 0);
    }
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    h->stdin_fd = p[1];
    return 0;
}

/* Set-up 1: reads the job from the channel.  0, or the exit status. */
int host_read_order(struct host_proc *h, unsigned long long job_id, struct host_order *o)
{
    struct agent *a = h->a;
    int r = frame_read_fd(JOBHOST_CHANNEL_FD, a->cfg.max_frame_size, &o->env);
    if (r < 0 || (o->env->msg_case != TMPI__ENVELOPE__MSG_SUBMIT &&
                  o->env->msg_case != TMPI__ENVELOPE__MSG_JOB_ASSIGN)) {
        log_error("job host %llu: no job from the agent", job_id);
        return 1;
    }
    if (o->env->msg_case == TMPI__ENVELOPE__MSG_JOB_ASSIGN) {
        const Tmpi__JobAssign *ja = o->env->job_assign;
        o->ja = ja;
        h->member_uid = ja->uid;
        o->cwd = ja->cwd;
        o->mask = ja->umask;
        o->mask_set = ja->umask_set;
        o->n_env = ja->n_env;
        o->vars = ja->env;
        struct stat st;
        if (fstat(JOBHOST_LINKS_FD, &st) < 0 || !S_ISSOCK(st.st_mode)) {
            log_error("job host %llu: no links socket from the agent", job_id);
            return 1;
        }
        fcntl(JOBHOST_LINKS_FD, F_SETFD, FD_CLOEXEC);
    } else {
        const Tmpi__SubmitJob *s = o->env->submit;
        o->s = s;
        o->cwd = s->cwd;
        o->mask = s->umask;
        o->mask_set = s->umask_set;
        o->n_env = s->n_env;
        o->vars = s->env;
    }
    return 0;
}

/* Set-up 2: the host becomes the submitter, in the job's directory, umask, stdin and
 * environment.  0, or the exit status (the launcher or coordinator was told why). */
int host_become_submitter(struct host_proc *h, unsigned long long job_id, uid_t uid, gid_t gid,
                          const struct host_order *o)
{
    struct agent *a = h->a;
    char err[600];
    struct passwd pw, *pwp = NULL;
    char pwbuf[4096];
    if (getpwuid_r(uid, &pw, pwbuf, sizeof pwbuf, &pwp) != 0) pwp = NULL;
    /* The host inherited the agent's lowered OOM score: raise it (oom_score.h) before any user
     * code runs, and while the host still has the capabilities a lower value would need.  A
     * failure leaves the job to run with the agent's score; the agent stays protected. */
    int r = oom_score_set(a->cfg.job_oom_score_adj);
    if (r < 0)
        log_errno(LOG_WARNING, r, "job %llu: cannot set its OOM score adjustment to %d", job_id,
                  a->cfg.job_oom_score_adj);
    r = become(pwp, uid, gid, err, sizeof err);
    if (r == 0 && o->mask_set) umask((mode_t)(o->mask & 0777));
    if (r == 0 && (!o->cwd || chdir(o->cwd) < 0)) {
        snprintf(err, sizeof err, "cannot use %s as the ranks' working directory on %s: %s",
                 o->cwd ? o->cwd : "(none)", a->cfg.name, strerror(errno));
        r = -1;
    }
    /* a member's stdin: the launcher's when rank 0 is here (job_new_member checks that) */
    if (r == 0 && setup_stdin(h, o->s ? o->s->stdin_open : o->ja->stdin_open) < 0) {
        snprintf(err, sizeof err, "cannot set up the ranks' standard input: %s", strerror(errno));
        r = -1;
    }
    if (r == 0 && set_environment(pwp, o->n_env, o->vars) < 0) {
        snprintf(err, sizeof err, "cannot set the ranks' environment: out of memory");
        r = -1;
    }
    return r < 0 ? host_fail_early(h, job_id, err) : 0;
}

/* Set-up 3: the process-wide runtime the ranks and libtmpi use: threads for libevent, fault
 * handlers, limits, the program cache, the buffer pool, the service table.  0, or the exit
 * status. */
int host_runtime_init(struct agent *a)
{
    if (evthread_use_pthreads() < 0) {
        log_error("libevent has no pthreads support");
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    if (fault_init() < 0) {
        log_error("cannot install the fault handlers");
        return 1;
    }
    raise_fd_limit();
    a->start_time = agent_now();
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    a->ncpus = n > 0 ? (int)n : 1;
    progcache_init(&a->cache, 1);
    pool_init(&a->pool, a->cfg.pool_size);
    svc_init(a);
    return 0;
}
