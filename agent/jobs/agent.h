/* agent.h — the state of one tmpid process: the agent's, or a job host's (job_host).  It sits
 * with the jobs it lists, under the daemon that runs it (daemon/agent.c) and the job host
 * (host/jobhost_main.c): what each process does when a job ends is a callback it registers
 * (job_done), so the job code below calls up without naming either. */
#ifndef TMPI_AGENT_AGENT_H
#define TMPI_AGENT_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"
#include "config.h"
#include "job_history.h"
#include "metrics_count.h"
#include "pool.h"
#include "progcache.h"

struct event_base;
struct evconnlistener;
struct event;
struct job;
struct job_host_parts;
struct mesh;
struct netd;
struct metrics_server;
struct names;
struct xrelay;
struct Tmpi__NameRequest;
struct Tmpi__XFrame;
struct agent;

/* How the agent builds its configuration (daemon/reload.h): the same steps as at start
 * (defaults, the file, then the command line over it).  Registered by main; 0 or an exit code
 * (already said on stderr); cfg is freed by the caller either way. */
typedef int (*agent_configure_fn)(void *arg, struct agent_config *cfg);

struct agent {
    struct agent_config cfg;
    struct event_base *base;
    struct evconnlistener *listener;
    struct progcache cache;
    struct mesh *mesh;
    struct netd *netd; /* a member job host's receive daemons (job_net.h); NULL in the agent */
    struct pool pool;  /* shared buffer pool (pool_size) */
    double start_time; /* monotonic seconds */
    int ncpus;
    int job_host; /* this process is a job host (jobhost.h), not the agent */
    /* A job host's parts of its job, made and freed by the job code (job.h); NULL in the
     * agent.  Set by jobhost_main with job_host. */
    const struct job_host_parts *host_parts;
    /* [mesh] transport = auto, decided once by the agent (fabric.h) at start and on every
     * reload and handed to each job host (--fabric): the fabric provider found, "" for none.
     * fabric_probed is 0 when nobody looked (the transport was not auto): a job that asks for
     * auto itself then has its job host look.  fabric is written by the probe thread before
     * it sets fabric_done (release), read by the loop thread after it saw fabric_done
     * (acquire): a job host started before the answer looks itself.  Read-only in a host. */
    char fabric[64];
    int fabric_probed;
    atomic_int fabric_done;
    pthread_t fabric_thread;
    int fabric_running;           /* loop thread: fabric_thread is to be joined */
    const char *fabric_transport; /* loop thread: the word it was decided for (a literal) */
    /* How a reload rebuilds the configuration (reload.h); NULL for a private agent. */
    agent_configure_fn configure;
    void *configure_arg;

    /* Loop thread only. */
    /* A job has ended and its thread is done: the agent unlinks, records and frees it
     * (daemon/agent.c), a job host leaves (host/jobhost_main.c).  Registered by the process's
     * main before its loop runs; never NULL once a job can end. */
    void (*job_done)(struct agent *a, struct job *j);
    /* The count of jobs changed: the agent tells systemd (STATUS=); NULL: nobody to tell. */
    void (*notify_status)(struct agent *a);
    struct job *jobs;
    uint32_t njobs;
    uint64_t next_job_id; /* the sequence part of job ids (job_id.h) */
    uint32_t node_number; /* their node part, fixed at start */
    int shutting_down;
    struct job_history ended;           /* listed as "ended" for ended_job_keep_sec */
    struct metrics_counts metrics;      /* metrics.h */
    struct metrics_server *metrics_srv; /* the Prometheus endpoint; NULL: off */
    struct event *sig_term, *sig_int, *sig_hup, *watchdog, *shutdown_timer;
    struct event *key_watch;   /* the --key-fd lifeline, NULL without one */
    struct event *leave_timer; /* bounds leave_when_idle: then the jobs are cancelled */
    int leave_when_idle;       /* the lifeline closed while jobs were finishing */
    uint64_t watchdog_usec;
    /* The name service (control/names.h), NULL in a job host; and the way a job host's
     * NameRequest reaches it from jobs/jobhost.c (set with it, a call down the daemon's own
     * layers would go up). */
    struct names *names;
    void (*name_request)(struct agent *a, struct job *j, const struct Tmpi__NameRequest *rq);
    /* The same way for a job host's XFrame to another job (control/xrelay.h). */
    void (*xframe)(struct agent *a, struct job *j, const struct Tmpi__XFrame *f);
    struct xrelay *xrelay; /* control/xrelay.h: the links to other agents; NULL in a job host */

    /* Any thread. */
    atomic_uint_fast64_t jobs_started;
    atomic_uint_fast64_t jobs_failed;
    atomic_uint_fast64_t bad_frames;
    atomic_int runnable_ranks; /* rank threads not blocked in a wait, all jobs */
};

/* Loop thread: a job has ended and its thread is done (job_done).  In the agent it is
 * unlinked and freed, and if the agent is shutting down and this was the last job, the loop
 * ends. */
static inline void agent_job_done(struct agent *a, struct job *j)
{
    a->job_done(a, j);
}

/* Loop thread: tells systemd how many jobs run (notify_status). */
static inline void agent_notify_status(struct agent *a)
{
    if (a->notify_status) a->notify_status(a);
}

#endif
