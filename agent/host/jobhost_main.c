/* jobhost_main.c — tmpid --job-host: the process whose threads are one job's ranks on this
 * node (host_proc.h, jobhost.h).  It reads its job from the agent, becomes the submitter
 * (host_setup.c), opens its channel to the agent (host_channel.c), runs the job (job.c) and
 * leaves when the job is over: here, its main and run loop.  It never loads the cluster key
 * and opens no socket of its own: a member's data links come from the agent, authenticated,
 * on JOBHOST_LINKS_FD, and its own netd reads them (job_net.h). */
#include "host_proc.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "host_channel.h"
#include "host_names.h"
#include "host_xjob.h"
#include "host_setup.h"
#include "host_signal.h"
#include "host_stdio.h"
#include "frame.h"
#include "job.h"
#include "job_thread.h"
#include "jobhost.h"
#include "log.h"
#include "netd.h"
#include "progcache.h"

/* The job host process's state (host_proc.h): the one instance, which jobhost_abandon and
 * the job-done upcall (registered without an argument) reach. */
static struct host_proc host = {.stdin_fd = -1};

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

/* netd's may_spin: a receive daemon polls on only while this host's runnable ranks and the
 * other spinning daemons leave a CPU free, so that it never takes a core from a rank that
 * computes or spins itself. */
static int cpu_free(void *arg, int spinning)
{
    struct agent *a = arg;
    return atomic_load_explicit(&a->runnable_ranks, memory_order_relaxed) + spinning < a->ncpus;
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

void jobhost_abandon(void)
{
    if (host.abandon_ev) event_active(host.abandon_ev, 0, 0);
}

/* agent_job_done in the job host (agent.h job_done): the job is over and unloaded; leave once
 * its frames left. */
static void jobhost_job_done(struct agent *a, struct job *j)
{
    a->jobs = NULL;
    a->njobs = 0;
    host.job = NULL;
    host_signal_forget();
    host_stdio_stop();
    job_free(j);
    host.done = 1;
    host_channel_maybe_leave(&host);
}

/* Run loop, part 1: the programs, a member's receive daemons, the job and its start; the job
 * holds progs[] once it is started (entries set to NULL).  0 when the job runs, else the exit
 * status (told to the launcher or coordinator where the job could not be built). */
static int start_job(struct host_proc *h, unsigned long long job_id, uid_t uid, gid_t gid,
                     pid_t pid, const struct host_order *o, struct program **progs, size_t nprogs)
{
    struct agent *a = h->a;
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
        h->links_ev =
            event_new(a->base, JOBHOST_LINKS_FD, EV_READ | EV_PERSIST, host_channel_on_links, h);
        if (r < 0 || !h->links_ev) {
            snprintf(err, sizeof err, "cannot start the receive daemons on %s: %s", a->cfg.name,
                     strerror(r < 0 ? -r : ENOMEM));
            return host_fail_early(h, job_id, err);
        }
    }
    struct job *j;
    r = ja ? job_new_member(a, ja, h->chan, &j, err, sizeof err)
           : job_new(a, s, uid, pid, h->chan, &j, err, sizeof err);
    if (r < 0) {
        if (r == -ENOMEM) snprintf(err, sizeof err, "out of memory");
        return host_fail_early(h, job_id, err);
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
    r = host_signal_install(j, a->base);
    if (r < 0) {
        log_errno(LOG_ERR, r, "job %llu: cannot set up signal forwarding", job_id);
        host_stdio_stop();
        job_free(j);
        return 1;
    }
    h->job = j;
    a->jobs = j;
    a->njobs = 1;
    r = job_start(j, progs); /* the job holds the programs now, also on failure */
    for (size_t k = 0; k < nprogs; k++)
        progs[k] = NULL;
    if (r < 0) {
        log_errno(LOG_ERR, r, "job %llu: cannot start", job_id);
        h->job = NULL;
        a->jobs = NULL;
        host_stdio_stop();
        job_free(j);
        return 1;
    }
    if (h->links_ev) event_add(h->links_ev, NULL);
    if (j->net) {
        struct timeval tv = {.tv_sec = JOBHOST_TRAFFIC_MS / 1000,
                             .tv_usec = JOBHOST_TRAFFIC_MS % 1000 * 1000};
        h->traffic_ev = event_new(a->base, -1, EV_PERSIST, host_channel_on_traffic, h);
        if (h->traffic_ev) event_add(h->traffic_ev, &tv); /* without it: counted at the end */
    }
    return 0;
}

/* After the run loop (or a failed start): frees what set-up and the channel made. */
static void host_teardown(struct host_proc *h)
{
    struct agent *a = h->a;
    if (h->job) {
        /* leaving with ranks still running (the agent went away), or a job thread stuck in
         * unloading (jobhost_abandon): do not unload under them */
        _exit(1);
    }
    host_stdio_stop();
    host_stdio_channel(NULL);
    host_names_channel(NULL);
    host_xjob_channel(NULL);
    if (h->chan) bufferevent_free(h->chan);
    if (h->orphan_timer) event_free(h->orphan_timer);
    if (h->abandon_ev) event_free(h->abandon_ev);
    if (h->stdin_ev) event_free(h->stdin_ev);
    if (h->stdin_buf) evbuffer_free(h->stdin_buf);
    if (h->stdin_fd >= 0) close(h->stdin_fd);
    if (h->links_ev) event_free(h->links_ev);
    if (h->traffic_ev) event_free(h->traffic_ev);
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
    int rc = host_read_order(&host, job_id, &o);
    if (rc == 0) rc = host_become_submitter(&host, job_id, uid, gid, &o);
    if (rc == 0) rc = host_runtime_init(a);
    if (rc != 0) {
        if (o.env) frame_free(o.env);
        return rc;
    }

    size_t n_apps = o.ja ? o.ja->n_apps : o.s->n_apps;
    size_t nprogs = n_apps ? n_apps : 1;
    struct program **progs = calloc(nprogs, sizeof *progs);
    rc = 1;
    if (host_channel_open(&host) == 0 && progs)
        rc = start_job(&host, job_id, uid, gid, pid, &o, progs, nprogs);
    frame_free(o.env); /* the job keeps copies of what it needs */
    if (rc == 0) event_base_dispatch(a->base);
    for (size_t k = 0; progs && k < nprogs; k++)
        if (progs[k]) progcache_release(&a->cache, progs[k]);
    free(progs);
    host_teardown(&host);
    return rc;
}
