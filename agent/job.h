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
struct program;
struct rank;
struct bufferevent;
struct event;
struct conn;

enum job_state { JOB_LOADING, JOB_RUNNING, JOB_ENDING };

struct job {
    struct agent *agent;
    uint64_t id;
    uid_t uid;
    pid_t submitter_pid;
    char owner[64];
    uint32_t nprocs;
    struct program *prog;
    char *program_name;
    int argc;
    char **argv;   /* argv[0] = program_name; job-owned, ranks get copies */
    char *cwd;
    char **env;    /* "NAME=VALUE" strings, NULL-terminated */
    uint32_t timeout_sec;
    double start_time;
    struct rank *ranks;
    int32_t *node_of_rank;
    int32_t *local_rank_of;
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

    /* Lifecycle, guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int gate;          /* 0 closed, 1 open, -1 never opens (start failed) */
    uint32_t nfinished;
    int failed;        /* the first failure is kept */
    int fail_rank;
    int exit_status;
    char reason[512];
    int end_sent;

    /* libclient per-job state (svc job_state), guarded by client_mu */
    pthread_mutex_t client_mu;
    void *client_state;
    struct tmpi_client_ops client_ops;
    int client_created;

    struct event *done_ev; /* activated by the job thread when it is finished */
    struct conn *conn;     /* loop thread only */
    struct job *next;      /* agent's list, loop thread only */
};

/* Loop thread: builds a job from a submission (does not start it).  -EINVAL with a message
 * in err for bad requests, -ENOMEM. */
int job_new(struct agent *a, const Tmpi__SubmitJob *s, uid_t uid, pid_t pid,
            struct bufferevent *bev, struct job **ret, char *err, size_t errlen);

/* Loop thread: pins prog and starts the job thread.  On failure the job is freed. */
int job_start(struct job *j, struct program *prog);

/* Loop thread: frees a job whose thread has been joined (or never started). */
void job_free(struct job *j);

/* Any thread: tears the job down (status/reason recorded only if no failure is yet). */
void job_cancel(struct job *j, int status, const char *reason);

/* The launcher went away: drop the channel and tear the job down. */
void job_detach_launcher(struct job *j);

/* Records the first failure and tears the job down. */
void job_fail(struct job *j, struct rank *r, int kind, int code, const char *msg);

int job_cancelled(struct job *j);

/* Sends a frame to the launcher.  Rank threads wait while too much output is queued.
 * 0, -ENOTCONN (launcher gone), -ECANCELED (job torn down while waiting), -ENOMEM. */
int job_send(struct job *j, const Tmpi__Envelope *env);

/* For rank threads. */
int job_wait_gate(struct job *j);
int job_argc(struct job *j);
char **job_copy_argv(struct job *j);
char *job_getenv(struct job *j, const char *name);
void job_rank_finished(struct job *j, struct rank *r);

const char *job_state_name(int state);

#endif
