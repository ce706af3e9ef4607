/* rank.h — one MPI rank: a thread running its private copy of the program's main. */
#ifndef TMPI_AGENT_RANK_H
#define TMPI_AGENT_RANK_H

#include <pthread.h>
#include <setjmp.h>

#include "host_signal.h"
#include "loader.h"
#include "output.h"
#include "rank_argv.h"
#include "rank_libc.h"
#include "rank_proc.h"
#include "rank_vars.h"
#include "svc.h"

struct job;
struct job_app;
struct spawn_batch;

/* How a rank ended; mirrors tmpi.ExitKind of the control protocol. */
enum rank_end_kind {
    RANK_END_CODE = 0,      /* main returned, exit() */
    RANK_END_ABORT = 1,     /* abort(), failed assert */
    RANK_END_MPI_ABORT = 2, /* MPI_Abort */
    RANK_END_KILLED = 3,    /* stopped because the job was torn down */
    RANK_END_FAULT = 4,
};

struct rank {
    struct tmpi_rank_info info; /* read-only once the thread starts */
    struct job *job;
    struct job_app *app; /* the program this rank runs */
    struct image image;
    pthread_t thread;
    int thread_started;

    /* Written by the rank's own thread only, read by the job thread after it finished. */
    sigjmp_buf exit_jmp; /* sigsetjmp(.., 1): a fault handler jumps here too */
    int end_kind;
    int end_code;
    char end_msg[256];
    /* the rank's MPI phase (svc rank_mpi_phase): atomic, as the job thread reads it while the
     * rank runs too (a spawned rank that finalized gave its slot back, job_spawn.c) */
    int mpi_phase;
    atomic_int finished; /* its end was counted (job_rank_finished); any thread */
    int runnable;        /* counted in agent.runnable_ranks; rank thread only */
    int unloading;       /* the job thread runs the image's destructors in this rank's name */
    pthread_t unloader;  /* that thread (set by itself before unloading) */
    /* main's argv: kept until the image is unloaded, as a process keeps its argv until it
     * exits (atexit handlers often use a saved argv[0]) */
    struct rank_argv args;
    /* libc's variables the program reads by name (optind, environ ...): this rank's own
     * (rank_vars.h), set up before its image is loaded */
    struct rank_vars vars;
    /* libc's hidden process state (getopt's position, strtok, rand, the locale, exit
     * handlers ...): this rank's own (rank_libc.h) */
    struct rank_libc libc;
    /* what the kernel keeps per process (environment, cwd, umask, pid, CPUs): the rank's own
     * (rank_proc.h), from rank_proc_start before main until its image is unloaded */
    struct rank_proc proc;
    struct carried *carried; /* carrier.h: the rank runs as a context on a carrier; else NULL */
    struct spawn_batch *spawn_batch; /* job_spawn.c: the spawn that started it; else NULL */

    struct output_stream out[2]; /* stdout, stderr: rank thread only */

    /* SIGUSR1/SIGUSR2 as this rank set them (host_signal.h: written by the rank, read by the
     * handler on any thread); sig_live while its main runs (handlers only run then). */
    struct rank_sigslot sig[2];
    atomic_int sig_live;
};

/* The rank the calling thread runs, or NULL for agent threads. */
struct rank *rank_current(void);

/* Whether the calling thread (or carrier context) runs r's main, as opposed to a thread r
 * started or an agent thread. */
int rank_on_own_thread(const struct rank *r);

/* Ends the calling rank thread (never returns).  Only for the rank's own thread. */
void rank_end(int kind, int code, const char *msg) __attribute__((noreturn));

/* The life of a rank on the calling thread or context (current rank already set): runs main if
 * run (else ends the rank as killed: its job never started), flushes its output and reports
 * the end to the job. */
void rank_life(struct rank *r, int run);

/* Thread entry of a rank (arg: struct rank *).  Waits at the job's start gate, runs main,
 * flushes output and reports to the job. */
void *rank_thread_main(void *arg);

/* Counts the rank as runnable or not in the agent-wide figure waiters use to decide
 * whether spinning can pay off.  Rank thread only. */
void rank_set_runnable(struct rank *r, int runnable);

/* Sets the calling thread's rank context (the job thread borrows it to run a rank's
 * destructors with its output routed). */
void rank_set_current(struct rank *r);

#endif
