/* jobhost_main.c — tmpid --job-host: the process whose threads are one job's ranks on this
 * node (jobhost.h).  It reads its job from the agent, becomes the submitter, runs the job
 * (job.c) and leaves when the job is over.  It never loads the cluster key and opens no
 * socket of its own: a member's data links come from the agent, authenticated, on
 * JOBHOST_LINKS_FD, and its own netd reads them (job_net.h). */
#include "jobhost.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "fault.h"
#include "host_names.h"
#include "host_xjob.h"
#include "host_stdio.h"
#include "frame.h"
#include "job.h"
#include "job_net.h"
#include "job_ranks.h"
#include "job_signal.h"
#include "job_thread.h"
#include "log.h"
#include "netd.h"
#include "oom_score.h"
#include "progcache.h"
#include "svc_init.h"

/* The host's one job and its channel; set up by jobhost_main, then loop thread only. */
static struct {
    struct agent *a;
    struct job *job;
    struct bufferevent *chan;
    struct event *orphan_timer; /* the agent went away: leave after the kill grace */
    struct event *links_ev;     /* member: JOBHOST_LINKS_FD readable */
    struct event *traffic_ev;   /* member: LinkTraffic every JOBHOST_TRAFFIC_MS */
    uint64_t member_uid;        /* member: the job's uid on every node, else 0 */
    int done;                   /* the job was freed: leave once the channel is flushed */
    struct event *abandon_ev;   /* jobhost_abandon: the job thread cannot finish the job */
    /* Rank 0's stdin: the write end of the pipe that is the process's fd 0 (-1: none or
     * closed), what came from the launcher and is not in the pipe yet (at most the window,
     * msg_check.h), and whether its end came. */
    int stdin_fd;
    struct evbuffer *stdin_buf;
    struct event *stdin_ev;
    int stdin_eof;
} host = {.stdin_fd = -1};

static int parse_user(const char *s, uid_t *uid, gid_t *gid, pid_t *pid)
{
    unsigned u, g;
    int p, n = 0;
    if (!s || sscanf(s, "%u:%u:%d%n", &u, &g, &p, &n) != 3 || s[n]) return -EINVAL;
    *uid = u;
    *gid = g;
    *pid = p;
    return 0;
}

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

/* netd's may_spin: a receive daemon polls on only while this host's runnable ranks and the
 * other spinning daemons leave a CPU free, so that it never takes a core from a rank that
 * computes or spins itself. */
static int cpu_free(void *arg, int spinning)
{
    struct agent *a = arg;
    return atomic_load_explicit(&a->runnable_ranks, memory_order_relaxed) + spinning < a->ncpus;
}

/* The job cannot start: the reason goes to the launcher in a JobEnd of status 1, or to a
 * member's coordinator as the JobLoaded that says it cannot run here. */
static int fail_early(unsigned long long job_id, const char *reason)
{
    log_error("job %llu: %s", job_id, reason);
    if (host.member_uid) {
        Tmpi__JobLoaded jl = TMPI__JOB_LOADED__INIT;
        jl.uid = host.member_uid;
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

/* The programs of the job, one after the other in the memfd (jobhost.h), into the cache:
 * progs[k] pinned for program k (n_apps of them, or the one the top-level fields name).  The
 * agent checked every hash when the bytes arrived. */
static int read_programs(size_t n_apps, Tmpi__JobApp *const *apps,
                         const ProtobufCBinaryData *one_hash, uint64_t one_size,
                         struct progcache *c, struct program **progs)
{
    struct stat st;
    if (fstat(JOBHOST_PROGRAM_FD, &st) < 0) return -errno;
    size_t n = n_apps ? n_apps : 1;
    uint64_t off = 0;
    for (size_t k = 0; k < n; k++) {
        const ProtobufCBinaryData *hash = n_apps ? &apps[k]->program_hash : one_hash;
        uint64_t size64 = n_apps ? apps[k]->program_size : one_size;
        if (hash->len != PROGRAM_HASH_SIZE || size64 == 0 || size64 > (uint64_t)st.st_size - off)
            return -EINVAL;
        size_t size = (size_t)size64;
        uint8_t *bytes = malloc(size);
        if (!bytes) return -ENOMEM;
        size_t got = 0;
        while (got < size) {
            ssize_t r = pread(JOBHOST_PROGRAM_FD, bytes + got, size - got, (off_t)(off + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                free(bytes);
                return r < 0 ? -errno : -EIO;
            }
            got += (size_t)r;
        }
        off += size;
        int r = progcache_add(c, hash->data, bytes, size, &progs[k]);
        if (r < 0) return r;
    }
    close(JOBHOST_PROGRAM_FD);
    return off == (uint64_t)st.st_size ? 0 : -EINVAL;
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void maybe_leave(void)
{
    if (host.done && evbuffer_get_length(bufferevent_get_output(host.chan)) == 0)
        event_base_loopbreak(host.a->base);
}

static void on_abandon(evutil_socket_t fd, short what, void *arg)
{
    /* host.job stays: the process leaves with _exit once the channel is flushed, the
     * remaining images never unloaded (their destructors would need ld.so's lock, which the
     * job thread holds) */
    host.done = 1;
    maybe_leave();
}

void jobhost_abandon(void)
{
    if (host.abandon_ev) event_active(host.abandon_ev, 0, 0);
}

static void on_orphan_timeout(evutil_socket_t fd, short what, void *arg)
{
    log_warning("job host: the agent went away and the ranks did not stop: leaving");
    _exit(1);
}

/* fd 0 of the process: a pipe the launcher's stdin is fed into when the job has one
 * (rank 0 reads it; interpose_stdin.c gives the other ranks end of file), else /dev/null.
 * Never the agent's own stdin.  0 or a negative errno. */
static int setup_stdin(int open_it)
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
    host.stdin_fd = p[1];
    return 0;
}

static void send_stdin_ack(uint64_t bytes)
{
    Tmpi__StdinAck ack = TMPI__STDIN_ACK__INIT;
    ack.bytes = bytes;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_STDIN_ACK;
    env.stdin_ack = &ack;
    uint8_t *buf;
    size_t len;
    if (frame_encode(&env, FRAME_DEFAULT_MAX, &buf, &len) == 0) {
        bufferevent_write(host.chan, buf, len);
        free(buf);
    }
}

static void close_stdin(void)
{
    if (host.stdin_ev) event_del(host.stdin_ev);
    close(host.stdin_fd);
    host.stdin_fd = -1;
}

/* Moves what the launcher sent into the pipe as far as it takes it; each move is
 * acknowledged, so the launcher sends more only as rank 0 reads. */
static void stdin_pump(void)
{
    while (host.stdin_fd >= 0 && evbuffer_get_length(host.stdin_buf) > 0) {
        int n = evbuffer_write(host.stdin_buf, host.stdin_fd);
        if (n > 0) {
            send_stdin_ack((uint64_t)n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            event_add(host.stdin_ev, NULL);
            return;
        }
        /* nobody can read it any more (EPIPE): take the rest, so the launcher is not stuck */
        size_t rest = evbuffer_get_length(host.stdin_buf);
        evbuffer_drain(host.stdin_buf, rest);
        send_stdin_ack(rest);
        close_stdin();
    }
    if (host.stdin_fd >= 0 && host.stdin_eof && evbuffer_get_length(host.stdin_buf) == 0)
        close_stdin(); /* rank 0 reads end of file */
}

static void on_stdin_writable(evutil_socket_t fd, short what, void *arg)
{
    stdin_pump();
}

static void on_stdin_data(const Tmpi__StdinData *d)
{
    if (host.stdin_fd < 0) {
        send_stdin_ack(d->data.len); /* closed already: taken and dropped */
        return;
    }
    if (d->data.len) evbuffer_add(host.stdin_buf, d->data.data, d->data.len);
    if (d->eof) host.stdin_eof = 1;
    stdin_pump();
}

/* What the ranks do now (job_ranks.h); a query of another job's uid gets no answer. */
static void on_ranks_query(const Tmpi__RanksQuery *q)
{
    if (q->uid != host.member_uid) return;
    uint8_t *buf;
    size_t len;
    if (job_ranks_report(host.job, q, &buf, &len) < 0) {
        log_warning("job %llu: no memory to report its ranks", (unsigned long long)host.job->id);
        return;
    }
    bufferevent_write(host.chan, buf, len);
    free(buf);
}

static void chan_read(struct bufferevent *bev, void *arg)
{
    struct evbuffer *in = bufferevent_get_input(bev);
    while (evbuffer_get_length(in) >= FRAME_HEADER_SIZE) {
        uint8_t hdr[FRAME_HEADER_SIZE];
        size_t len;
        evbuffer_copyout(in, hdr, sizeof hdr);
        if (frame_parse_header(hdr, FRAME_DEFAULT_MAX, &len) < 0) break;
        if (evbuffer_get_length(in) < FRAME_HEADER_SIZE + len) return;
        evbuffer_drain(in, FRAME_HEADER_SIZE);
        Tmpi__Envelope *env = frame_decode(evbuffer_pullup(in, (ev_ssize_t)len), len);
        evbuffer_drain(in, len);
        if (!env) break;
        if (env->msg_case == TMPI__ENVELOPE__MSG_JOB_CANCEL && host.job)
            job_cancel(host.job, env->job_cancel->exit_status,
                       env->job_cancel->reason ? env->job_cancel->reason : "cancelled");
        else if (env->msg_case == TMPI__ENVELOPE__MSG_STDIN_DATA)
            on_stdin_data(env->stdin_data);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_JOB_GO && host.job && host.job->net)
            job_go(host.job);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_JOB_RELEASE && host.job && host.job->net)
            job_release(host.job);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_RANKS_QUERY && host.job)
            on_ranks_query(env->ranks_query);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_NAME_REPLY)
            host_names_reply(env->name_reply);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_XFRAME)
            host_xjob_frame(host.job, env->xframe);
        else if (env->msg_case == TMPI__ENVELOPE__MSG_XGONE)
            host_xjob_gone(host.job, env->xgone);
        frame_free(env);
    }
    if (evbuffer_get_length(in) >= FRAME_HEADER_SIZE) {
        log_error("job host: malformed frame from the agent");
        if (host.job) job_cancel(host.job, 1, "malformed frame from the agent");
        evbuffer_drain(in, evbuffer_get_length(in));
    }
}

/* Every link is up: say so, and what carries each (the agent keeps it for tmpictl status). */
static void send_linked(struct job *j)
{
    struct job_net *n = j->net;
    Tmpi__JobLinked jl = TMPI__JOB_LINKED__INIT;
    jl.uid = n->uid;
    jl.ok = 1;
    jl.error = "";
    size_t max = (size_t)n->nnodes * 2;
    Tmpi__LinkCarrier *lc = calloc(max ? max : 1, sizeof *lc);
    Tmpi__LinkCarrier **lp = calloc(max ? max : 1, sizeof *lp);
    char(*text)[80] = calloc(max ? max : 1, sizeof *text);
    if (lc && lp && text) { /* out of memory: linked all the same, status shows no links */
        for (int node = 0; node < n->nnodes; node++)
            for (int ch = TMPI_CH_P2P; ch <= TMPI_CH_COLL; ch++) {
                size_t k = jl.n_links;
                job_net_carrier(n, node, ch, text[k], sizeof text[k]);
                if (!text[k][0]) continue; /* no link to ourselves */
                tmpi__link_carrier__init(&lc[k]);
                lc[k].node = (uint32_t)node;
                lc[k].channel = (uint32_t)ch;
                lc[k].peer = n->addr[node];
                lc[k].carrier = text[k];
                lp[k] = &lc[k];
                jl.n_links++;
            }
        jl.links = lp;
    }
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_JOB_LINKED;
    env.job_linked = &jl;
    (void)job_send(j, &env);
    free(lc);
    free(lp);
    free(text);
}

/* A link's socket broke (job_net.h, "Reconnecting"): ask the agent for it anew, a bare
 * jobhost_link_msg on the links socket (one datagram: any thread may send it). */
static int ask_relink(struct job *j, int node, int channel)
{
    struct jobhost_link_msg m = {.node = (uint32_t)node, .channel = (uint32_t)channel};
    ssize_t n;
    do
        n = send(JOBHOST_LINKS_FD, &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof m ? 0 : n < 0 ? -errno : -EIO;
}

/* One link from the agent per message (jobhost_pass_link); once every link is here the
 * coordinator hears JobLinked from us, so no JobGo can come before the links. */
static void on_links(evutil_socket_t fd, short what, void *arg)
{
    for (;;) {
        struct jobhost_link_msg m;
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = ctl.buf,
                             .msg_controllen = sizeof ctl.buf};
        ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0) {
            event_del(host.links_ev); /* the agent closed it: no more links */
            return;
        }
        int link_fd = -1;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&link_fd, CMSG_DATA(c), sizeof link_fd);
        struct job *j = host.job;
        if (link_fd < 0 || n != (ssize_t)sizeof m || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
            !j || !j->net) {
            if (link_fd >= 0) close(link_fd);
            if (j) job_cancel(j, 1, "malformed link from the agent");
            continue;
        }
        j->net->linked = send_linked; /* when the hellos are done (job_net_tp.c) */
        /* once, before the first link exists: receive daemons read it from then on */
        if (!j->net->relink) j->net->relink = ask_relink;
        int r = job_net_add(j->net, (int)m.node, (int)m.channel, link_fd);
        if (r < 0 && r != -ECANCELED) {
            char why[160];
            snprintf(why, sizeof why, "cannot take the link to node %u: %s", m.node, strerror(-r));
            job_cancel(j, 1, why);
        }
    }
}

static void chan_write(struct bufferevent *bev, void *arg)
{
    struct job *j = host.job;
    if (j) {
        pthread_mutex_lock(&j->drain_mu);
        atomic_fetch_add(&j->drain_gen, 1);
        pthread_cond_broadcast(&j->drain_cv);
        pthread_mutex_unlock(&j->drain_mu);
    }
    maybe_leave();
}

static void chan_event(struct bufferevent *bev, short what, void *arg)
{
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))) return;
    if (host.done) {
        event_base_loopbreak(host.a->base);
        return;
    }
    host_names_channel(NULL); /* no answer will come */
    host_xjob_channel(NULL);
    if (host.job) job_detach(host.job, "the agent went away");
    struct timeval tv = {.tv_sec = host.a->cfg.kill_grace_sec};
    evtimer_add(host.orphan_timer, &tv);
}

/* A member's data-link counters to the agent now and then, so that its metrics move while
 * the job runs (the last count goes with JobUnloaded). */
static void on_traffic_timer(evutil_socket_t fd, short what, void *arg)
{
    if (host.job && host.job->net) job_send_link_traffic(host.job);
}

/* Called by agent_job_done in a job host: the job is over and unloaded. */
void jobhost_job_done(struct agent *a, struct job *j)
{
    a->jobs = NULL;
    a->njobs = 0;
    host.job = NULL;
    job_signal_host_forget();
    host_stdio_stop();
    job_free(j);
    host.done = 1;
    maybe_leave();
}

/* The job the agent sent on the channel: a single-node job (SubmitJob) or one node's part of a
 * job across nodes (JobAssign), with what is the same either way: identity, directory and
 * environment.  s and ja point into env. */
struct host_order {
    Tmpi__Envelope *env;
    const Tmpi__SubmitJob *s;
    const Tmpi__JobAssign *ja;
    const char *cwd;
    unsigned mask;
    int mask_set;
    size_t n_env;
    Tmpi__EnvVar *const *vars;
};

/* Set-up 1: reads the job from the channel.  0, or the exit status. */
static int read_order(struct agent *a, unsigned long long job_id, struct host_order *o)
{
    int r = frame_read_fd(JOBHOST_CHANNEL_FD, a->cfg.max_frame_size, &o->env);
    if (r < 0 || (o->env->msg_case != TMPI__ENVELOPE__MSG_SUBMIT &&
                  o->env->msg_case != TMPI__ENVELOPE__MSG_JOB_ASSIGN)) {
        log_error("job host %llu: no job from the agent", job_id);
        return 1;
    }
    if (o->env->msg_case == TMPI__ENVELOPE__MSG_JOB_ASSIGN) {
        const Tmpi__JobAssign *ja = o->env->job_assign;
        o->ja = ja;
        host.member_uid = ja->uid;
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
static int become_submitter(struct agent *a, unsigned long long job_id, uid_t uid, gid_t gid,
                            const struct host_order *o)
{
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
    if (r == 0 && setup_stdin(o->s ? o->s->stdin_open : o->ja->stdin_open) < 0) {
        snprintf(err, sizeof err, "cannot set up the ranks' standard input: %s", strerror(errno));
        r = -1;
    }
    if (r == 0 && set_environment(pwp, o->n_env, o->vars) < 0) {
        snprintf(err, sizeof err, "cannot set the ranks' environment: out of memory");
        r = -1;
    }
    return r < 0 ? fail_early(job_id, err) : 0;
}

/* Set-up 3: the process-wide runtime the ranks and libtmpi use: threads for libevent, fault
 * handlers, limits, the program cache, the buffer pool, the service table.  0, or the exit
 * status. */
static int runtime_init(struct agent *a)
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

/* Channel: the event base, the agent's channel as a bufferevent, the orphan and abandon
 * events and rank 0's stdin pump.  0 or -1 (what was made is freed by host_teardown). */
static int open_channel(struct agent *a)
{
    a->base = event_base_new();
    if (!a->base) return -1;
    host.orphan_timer = evtimer_new(a->base, on_orphan_timeout, NULL);
    host.abandon_ev = event_new(a->base, -1, 0, on_abandon, NULL);
    host.chan = bufferevent_socket_new(a->base, JOBHOST_CHANNEL_FD,
                                       BEV_OPT_CLOSE_ON_FREE | BEV_OPT_THREADSAFE |
                                           BEV_OPT_DEFER_CALLBACKS | BEV_OPT_UNLOCK_CALLBACKS);
    if (!host.chan || !host.orphan_timer || !host.abandon_ev) return -1;
    host.stdin_buf = evbuffer_new();
    if (!host.stdin_buf) return -1;
    if (host.stdin_fd >= 0) {
        host.stdin_ev = event_new(a->base, host.stdin_fd, EV_WRITE, on_stdin_writable, NULL);
        if (!host.stdin_ev) return -1;
    }
    evutil_make_socket_nonblocking(JOBHOST_CHANNEL_FD);
    bufferevent_setcb(host.chan, chan_read, chan_write, chan_event, NULL);
    bufferevent_enable(host.chan, EV_READ | EV_WRITE);
    host_stdio_channel(host.chan);
    host_names_channel(host.chan);
    host_xjob_channel(host.chan);
    return 0;
}

/* Run loop, part 1: the programs, a member's receive daemons, the job and its start; the job
 * holds progs[] once it is started (entries set to NULL).  0 when the job runs, else the exit
 * status (told to the launcher or coordinator where the job could not be built). */
static int start_job(struct agent *a, unsigned long long job_id, uid_t uid, gid_t gid, pid_t pid,
                     const struct host_order *o, struct program **progs, size_t nprogs)
{
    const Tmpi__SubmitJob *s = o->s;
    const Tmpi__JobAssign *ja = o->ja;
    size_t n_apps = ja ? ja->n_apps : s->n_apps;
    char err[600];
    int r =
        read_programs(n_apps, ja ? ja->apps : s->apps, ja ? &ja->program_hash : &s->program_hash,
                      ja ? ja->program_size : s->program_size, &a->cache, progs);
    if (r < 0) {
        log_errno(LOG_ERR, r, "job %llu: cannot read the programs", job_id);
        return 1;
    }
    if (ja) {
        /* The links the agent passes are read by receive daemons of our own. */
        r = netd_new(a->cfg.recv_threads, NETD_MAX_PAYLOAD, &a->netd);
        if (r == 0) netd_set_spin(a->netd, a->cfg.recv_spin_ns, cpu_free, a);
        if (r == 0) netd_set_resend_max(a->netd, a->cfg.link_resend_max);
        host.links_ev = event_new(a->base, JOBHOST_LINKS_FD, EV_READ | EV_PERSIST, on_links, NULL);
        if (r < 0 || !host.links_ev) {
            snprintf(err, sizeof err, "cannot start the receive daemons on %s: %s", a->cfg.name,
                     strerror(r < 0 ? -r : ENOMEM));
            return fail_early(job_id, err);
        }
    }
    struct job *j;
    r = ja ? job_new_member(a, ja, host.chan, &j, err, sizeof err)
           : job_new(a, s, uid, pid, host.chan, &j, err, sizeof err);
    if (r < 0) {
        if (r == -ENOMEM) snprintf(err, sizeof err, "out of memory");
        return fail_early(job_id, err);
    }
    j->id = job_id; /* the agent's id for it (job_id.h), in every log record of the host */
    j->gid = gid;
    j->before_end = host_stdio_drain;
    r = host_stdio_start(j);
    if (r < 0) {
        log_errno(LOG_ERR, r, "job %llu: cannot start its output reader", job_id);
        job_free(j);
        return 1;
    }
    r = job_signal_host_install(j, a->base);
    if (r < 0) {
        log_errno(LOG_ERR, r, "job %llu: cannot set up signal forwarding", job_id);
        host_stdio_stop();
        job_free(j);
        return 1;
    }
    host.job = j;
    a->jobs = j;
    a->njobs = 1;
    r = job_start(j, progs); /* the job holds the programs now, also on failure */
    for (size_t k = 0; k < nprogs; k++)
        progs[k] = NULL;
    if (r < 0) {
        log_errno(LOG_ERR, r, "job %llu: cannot start", job_id);
        host.job = NULL;
        a->jobs = NULL;
        host_stdio_stop();
        job_free(j);
        return 1;
    }
    if (host.links_ev) event_add(host.links_ev, NULL);
    if (j->net) {
        struct timeval tv = {.tv_sec = JOBHOST_TRAFFIC_MS / 1000,
                             .tv_usec = JOBHOST_TRAFFIC_MS % 1000 * 1000};
        host.traffic_ev = event_new(a->base, -1, EV_PERSIST, on_traffic_timer, NULL);
        if (host.traffic_ev) event_add(host.traffic_ev, &tv); /* without it: counted at the end */
    }
    return 0;
}

/* After the run loop (or a failed start): frees what set-up and the channel made. */
static void host_teardown(struct agent *a)
{
    if (host.job) {
        /* leaving with ranks still running (the agent went away), or a job thread stuck in
         * unloading (jobhost_abandon): do not unload under them */
        _exit(1);
    }
    host_stdio_stop();
    host_stdio_channel(NULL);
    host_names_channel(NULL);
    host_xjob_channel(NULL);
    if (host.chan) bufferevent_free(host.chan);
    if (host.orphan_timer) event_free(host.orphan_timer);
    if (host.abandon_ev) event_free(host.abandon_ev);
    if (host.stdin_ev) event_free(host.stdin_ev);
    if (host.stdin_buf) evbuffer_free(host.stdin_buf);
    if (host.stdin_fd >= 0) close(host.stdin_fd);
    if (host.links_ev) event_free(host.links_ev);
    if (host.traffic_ev) event_free(host.traffic_ev);
    netd_free(a->netd); /* every link was freed with the job */
    a->netd = NULL;
    if (a->base) {
        event_base_loop(a->base, EVLOOP_NONBLOCK);
        event_base_free(a->base);
    }
    progcache_destroy(&a->cache);
}

int jobhost_main(struct agent *a, const char *id_arg, const char *user_arg)
{
    uid_t uid;
    gid_t gid;
    pid_t pid;
    char *end;
    unsigned long long job_id = strtoull(id_arg, &end, 10);
    if (*end || !job_id || parse_user(user_arg, &uid, &gid, &pid) < 0) {
        fprintf(stderr, "tmpid: --job-host ID --job-user UID:GID:PID expected\n");
        return 2;
    }
    struct stat st;
    if (fstat(JOBHOST_CHANNEL_FD, &st) < 0 || !S_ISSOCK(st.st_mode) ||
        fstat(JOBHOST_PROGRAM_FD, &st) < 0) {
        fprintf(stderr, "tmpid: --job-host is started by the agent, not by hand\n");
        return 2;
    }
    /* nothing the ranks start may inherit the channel or the program */
    fcntl(JOBHOST_CHANNEL_FD, F_SETFD, FD_CLOEXEC);
    fcntl(JOBHOST_PROGRAM_FD, F_SETFD, FD_CLOEXEC);
    /* fds 1 and 2 of our own (the agent gave /dev/null), the log to the agent as frames */
    int sr = host_stdio_setup();
    if (sr < 0) {
        log_errno(LOG_ERR, sr, "job host %llu: cannot set up its standard output", job_id);
        return 1;
    }
    host.a = a;
    a->job_host = 1;
    a->job_done = jobhost_job_done; /* nothing to tell systemd: notify_status stays NULL */
    a->host_parts = &job_thread_parts;

    struct host_order o = {0};
    int rc = read_order(a, job_id, &o);
    if (rc == 0) rc = become_submitter(a, job_id, uid, gid, &o);
    if (rc == 0) rc = runtime_init(a);
    if (rc != 0) {
        if (o.env) frame_free(o.env);
        return rc;
    }

    size_t n_apps = o.ja ? o.ja->n_apps : o.s->n_apps;
    size_t nprogs = n_apps ? n_apps : 1;
    struct program **progs = calloc(nprogs, sizeof *progs);
    rc = 1;
    if (open_channel(a) == 0 && progs) rc = start_job(a, job_id, uid, gid, pid, &o, progs, nprogs);
    frame_free(o.env); /* the job keeps copies of what it needs */
    if (rc == 0) event_base_dispatch(a->base);
    for (size_t k = 0; progs && k < nprogs; k++)
        if (progs[k]) progcache_release(&a->cache, progs[k]);
    free(progs);
    host_teardown(a);
    return rc;
}
