/* job.h — one MPI job in this agent: its ranks, their images, its launcher connection.
 *
 * Life of a job: created by the control connection that submitted it (loop thread); a job
 * thread loads one image per rank, starts the rank threads behind a start gate (all or
 * nothing), waits for them, reports to the launcher, unloads, and hands the job back to the
 * loop thread (agent_job_done) to be freed. */
#ifndef TMPI_AGENT_JOB_H
#define TMPI_AGENT_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "control.pb-c.h"
#include "svc.h"

struct agent;
struct agent_config;
struct program;
struct rank;
struct bufferevent;
struct event;
struct conn;
struct job_net;
struct job_link;
struct job_member;
struct jobhost;
struct ranks_gather;
struct job_spawn;
struct host_app;
struct job_spare;

enum job_state { JOB_LOADING, JOB_RUNNING, JOB_ENDING, JOB_ENDED };

/* The largest universe a job may ask for (TMPI_UNIVERSE_SIZE, MPI_Comm_spawn: job_spawn.h in
 * the job host); the agent bounds a member's spawn slots and its ranks queries by it. */
#define JOB_SPAWN_MAX_UNIVERSE 4096

/* What the job code here asks of the job host's parts of a job (host/job_thread.c), which it
 * makes and frees without seeing them: registered by the job host in its struct agent
 * (host_parts, jobs/agent.h); NULL in the agent, whose jobs have none (its jobs' ranks run in
 * their job host). */
struct job;
struct job_host_parts {
    size_t rank_size; /* one struct rank (host/rank.h): job_build makes nprocs of them */
    /* job_new_member: this node's data links of a job across nodes (host/job_net.h) */
    int (*net_new)(struct job *j, uint64_t uid, int self, size_t nnodes,
                   Tmpi__NodePlacement *const *nodes, struct job_net **ret);
    /* job_cancel, job_fail_rank: no more deliveries from other nodes into the ranks' buffers */
    void (*net_stop_rx)(struct job_net *n);
    /* job_free: the links, what the job thread has not freed of the ranks (a failed start),
     * the programs' argument sources, the binding, the threads nobody joined */
    void (*free)(struct job *j);
    /* job_start: starts the job thread (the job host has its programs) */
    int (*start)(struct job *j);
    /* job_send: the caller is a rank thread (those wait while too much output is queued) */
    int (*on_rank_thread)(void);
};

/* One program of the job: a plain job has one, an MPMD job ("-n 2 ./a : -n 3 ./b") several,
 * each running a contiguous block of global ranks.  Set up by job_new*, read-only after. */
struct job_app {
    struct program *prog; /* pinned from job_start until the job thread has unloaded */
    char *program_name;
    int argc;
    char **argv; /* argv[0] = program_name; job-owned, ranks get their own (host/rank_argv.h) */
    char *cwd;   /* absolute: the program's own directory, else the job's */
    char **env;  /* "NAME=VALUE" set for this program's ranks only (over job->env) */
    uint32_t first_rank, nprocs; /* global ranks first_rank .. first_rank + nprocs - 1 */
    /* The job host's part: its ranks' argument source and the image their copies are loaded
     * from (host/host_app.h), made and freed by the job host's parts (job_host_parts); NULL
     * in the agent. */
    struct host_app *host;
};

struct job {
    struct agent *agent;
    /* the agent's settings (a reload changes them in place): what the job code reads of the
     * agent without seeing the whole of it (jobs/agent.h) */
    const struct agent_config *cfg;
    /* The node's CPUs as the agent counted them when it started (fixed after), and the
     * process's count of rank threads not blocked in a wait (any thread, relaxed: a hint for
     * spinning and switching): the agent's, set by job_new beside cfg. */
    int ncpus;
    atomic_int *runnable_ranks;
    uint64_t id;
    uid_t uid;
    gid_t gid; /* the submitter's primary group (SO_PEERCRED) */
    pid_t submitter_pid;
    char owner[64];
    uint32_t nprocs;
    struct job_app *apps; /* napps >= 1, in MPI_APPNUM order */
    uint32_t napps;
    char *program_name; /* what tmpictl shows: the first program's name */
    char *cwd;
    unsigned umask; /* the launcher's, if umask_set */
    int umask_set;
    unsigned host_umask; /* the job host's umask, read before the ranks start (rank_proc.h) */
    char **env;          /* "NAME=VALUE" strings, NULL-terminated */
    uint32_t timeout_sec;
    int on_deadlock;          /* Tmpi__DeadlockAction of the submission (single-node jobs) */
    uint64_t mem_limit;       /* bytes; 0: none (cgroup.h, the agent's side only) */
    uint32_t cpu_limit_milli; /* thousandths of a CPU; 0: none */
    int stdin_open;           /* the launcher sends its stdin for rank 0 (StdinData) */
    /* Binding (job_bind.h): the kind asked for (tmpi.BindTo), --report-bindings, and the
     * agent's offset for the first thread (set before the host starts, read-only after);
     * in the job host the kind in force and the topology (job thread only). */
    int bind_to;
    int report_bindings;
    uint32_t bind_first;
    int bind_kind;
    struct bind_topo *topo;
    double start_time;      /* job_start: every program is here (agent_now) */
    double created_at;      /* the submission or assignment arrived (agent_now) */
    struct rank *ranks;     /* nprocs: the ranks on this node */
    uint32_t world_size;    /* ranks of the whole job (nprocs on one node) */
    int32_t *node_of_rank;  /* [world_size], [spawn_universe] across nodes */
    int32_t *local_rank_of; /* [world_size], [spawn_universe] across nodes */
    int32_t *global_rank;   /* [nprocs] global rank of each local rank; NULL: the identity */
    /* A job across nodes: world_size plus its nodes' spawn slots (JobAssign, job_spawn.h);
     * world ranks from world_size on are the spawned ones, their nodes fixed by the slots. */
    uint32_t spawn_universe;
    /* Ranks started while the job runs (job_spawn.h), and the universe they fill; job host
     * only, set by the job thread before the ranks start. */
    struct job_spawn *spawn;
    /* A member without ranks here (host/job_spare.h): what its job thread keeps to make
     * libtmpi's state; job host only, NULL on a node with ranks. */
    struct job_spare *spare;
    pthread_t thread;
    atomic_int state;
    atomic_int cancelled;

    /* Launcher channel.  out_mu guards the bev pointer (NULL once the launcher is gone); rank
     * threads write under it.  Lock order: out_mu, then the bufferevent's own lock; the loop
     * thread's callbacks run without the bufferevent lock (BEV_OPT_UNLOCK_CALLBACKS). */
    pthread_mutex_t out_mu;
    struct bufferevent *bev;
    pthread_mutex_t drain_mu;
    pthread_cond_t drain_cv;
    atomic_uint drain_gen;
    /* Job host: called on the job thread before JobEnd is sent, so that what the process's
     * own fds 1 and 2 hold reaches the launcher first (host_stdio.h); NULL: nothing. */
    void (*before_end)(struct job *j);

    /* Lifecycle, guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int gate; /* 0 closed, 1 open, -1 never opens (start failed) */
    uint32_t nfinished;
    int failed; /* the first failure is kept */
    int fail_rank;
    int failed_in_unload; /* the failure came while unloading (job_end_in_unload) */
    int exit_status;
    char reason[512];
    int end_sent;

    /* libclient per-job state (svc job_state), guarded by client_mu */
    pthread_mutex_t client_mu;
    void *client_state;
    struct tmpi_client_ops client_ops;
    int client_created;

    /* One node's part of a job across several nodes (job_member.c); net and link are NULL
     * otherwise.  The launcher channel (bev) is then the ctl connection to the coordinator,
     * which sees the same frames a launcher would, with global ranks.  In the agent, link
     * opens the data links and assign is what the host is started with; in the job host, net
     * holds the links. */
    struct job_net *net;
    struct job_link *link;
    Tmpi__JobAssign *assign;
    int node, nnodes;
    char coordinator[64]; /* the coordinator's agent name */
    /* Loop thread: on the coordinator's own part of a job across nodes, the whole job's
     * ranks from JobGo on (its world and every node's spawned ranks, job_coord.c); 0
     * elsewhere, where tmpictl shows this node's part. */
    uint32_t job_ranks;
    uint64_t coord_job_id;  /* the job's id at the coordinator */
    int go;                 /* mu: JobGo arrived, the gate may open */
    int released;           /* mu: JobRelease arrived, the links may close */
    atomic_int ranks_ended; /* every local rank ended: a link that closes now is no failure */
    /* threads the ranks started that have not ended (interpose_thread.c): the images are not
     * unloaded under them */
    atomic_int child_threads;
    struct job_member *member; /* loop thread: the coordinator connection's state */
    /* Loop thread: what carries each data link, as the member's job host said in JobLinked
     * (tmpictl status); the strings are owned here (job_carriers_set). */
    Tmpi__LinkCarrier *carriers;
    Tmpi__LinkCarrier **carrier_ptrs;
    size_t ncarriers;

    /* User-level switching (carrier.h): NULL when every rank has a thread of its own.  Job
     * thread only (set before the gate opens, freed after the carriers are joined). */
    struct carrier_pool *cpool;
    /* Threads the ranks started that a carried rank may join parked (carrier_join.h); the
     * mutex also guards cpool's end (carriers_free), which a thread that ends may outlive. */
    pthread_mutex_t children_mu;
    struct carrier_child *children;

    /* Every job runs in a job host process (jobhost.h); this is the agent's handle on it, loop
     * thread only.  NULL in the job host itself, and before a member's program arrived. */
    struct jobhost *host;
    /* The agent's tmpictl ranks queries and deadlock watch of a single-node job (job_ranks.h);
     * loop thread only, NULL in the job host and for member jobs. */
    struct ranks_gather *rq;

    struct event *done_ev; /* activated by the job thread when it is finished */
    struct conn *conn;     /* loop thread only */
    struct job *next;      /* agent's list, loop thread only */
};

/* The global rank of local rank i, from the table job_build fills before the job's thread
 * starts (so the agent's loop may read it while that thread initialises the ranks). */
static inline int job_world_rank(const struct job *j, uint32_t i)
{
    return j->global_rank ? j->global_rank[i] : (int)i;
}

/* The job of this id in the agent's list (a->jobs), or NULL. */
struct job *agent_job(struct agent *a, uint64_t id);

/* Loop thread: builds a job from a submission (does not start it).  -EINVAL with a message
 * in err for bad requests, -ENOMEM. */
int job_new(struct agent *a, const Tmpi__SubmitJob *s, uid_t uid, pid_t pid,
            struct bufferevent *bev, struct job **ret, char *err, size_t errlen);

/* Loop thread: builds this node's part of a job across several nodes from a JobAssign
 * (job_member.c in the agent, jobhost_main.c in the job host).  The owner's uid, gid and umask
 * are the assignment's.  -EINVAL / -EBUSY with a message in err, -ENOMEM. */
int job_new_member(struct agent *a, const Tmpi__JobAssign *ja, struct bufferevent *bev,
                   struct job **ret, char *err, size_t errlen);

/* Member jobs, any thread: JobGo (open the gate once loaded) and JobRelease (the links may
 * close) arrived. */
void job_go(struct job *j);
void job_release(struct job *j);

/* Loop thread: in the agent, starts the job's host with progs (jobhost_start); in the host,
 * starts the job thread.  progs[k] (pinned, one per app) are the job's from now on (job_free
 * releases what it still holds, also on failure); the array stays the caller's.  A negative
 * errno on failure (the caller frees the job). */
int job_start(struct job *j, struct program **progs);

/* Loop thread: frees a job whose thread has been joined (or never started). */
void job_free(struct job *j);

/* Any thread: tears the job down (status/reason recorded only if no failure is yet). */
void job_cancel(struct job *j, int status, const char *reason);

/* The launcher (or a member's coordinator) went away: drop the channel and tear the job
 * down with reason. */
void job_detach(struct job *j, const char *reason);

/* Records the first failure (of global rank, -1: none) and tears the job down.  A rank's end
 * comes through job_fail (host/job_thread.h), which says what happened to it. */
void job_fail_rank(struct job *j, int rank, int status, const char *reason);

int job_cancelled(struct job *j);

/* Sends a frame to the launcher.  Rank threads wait while too much output is queued.
 * 0, -ENOTCONN (launcher gone), -ECANCELED (job torn down while waiting), -ENOMEM. */
int job_send(struct job *j, const Tmpi__Envelope *env);

/* For rank threads. */
int job_wait_gate(struct job *j);
/* The job's forwarded variable name (tmpi-launch -x), or NULL. */
char *job_getenv(struct job *j, const char *name);
/* What a rank of app sees: the app's own variables, then the job's. */
char *job_app_getenv(struct job *j, const struct job_app *app, const char *name);

const char *job_state_name(int state);

#endif
