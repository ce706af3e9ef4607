/* rank_proc.h — the state the kernel keeps per process, kept per rank: environment, working
 * directory, umask, process id and the CPUs the rank may run on.
 *
 * The ranks of a node are threads of one job host process, which has one of each.  A rank
 * gets its own, set up by rank_proc_start on its own thread (or context) before main runs,
 * and the interposed libc calls (interpose_env.c, interpose_fs.c, interpose_proc.c,
 * interpose_spawn.c) answer from it; threads the rank starts share it, as a process's threads
 * share the process's.  It lives until the rank's image is unloaded (its destructors still
 * see it).
 *
 * - Environment: rank_env.h, reached through the rank's `environ` (rank_vars.h).  It starts
 *   as the job host's process environment with the job's and the program's -x variables
 *   over it (what job_app_getenv answered), then the variables other MPIs' scripts and
 *   libraries find their place by (rank_proc.c proc_vars) and PWD.
 * - Working directory: an absolute path, every relative path of the rank is joined to it.
 *   Readers take no lock: chdir publishes a new string and frees the old one only once no
 *   reader is between loading and copying it (cwd_readers), else keeps it until the next
 *   chdir or the end (a signal handler may open a file while its thread is in the middle of
 *   a path).  Writers (chdir, fchdir) are serialised by cwd_mu.
 * - umask: the job host's process umask stays host_umask (the launcher's); a rank's own is a
 *   number the creating calls apply themselves (interpose_fs.c), so a rank that never calls
 *   umask() creates files exactly as before.
 * - pid: what getpid() answers (interpose_proc.c says why).
 * - cpus: where the rank may run, for sched_getaffinity and the CPU count. */
#ifndef TMPI_AGENT_RANK_PROC_H
#define TMPI_AGENT_RANK_PROC_H

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include "rank_env.h"

struct rank;

/* A stream popen() returned, until pclose() (interpose_spawn.c). */
struct rank_popen {
    void *stream; /* FILE * */
    pid_t pid;
    struct rank_popen *next;
};

struct rank_proc {
    int ready; /* set up (rank_proc_start succeeded): before that the calls answer as a process */
    struct rank_env env;

    char *_Atomic cwd; /* absolute, no "." or ".." */
    atomic_int cwd_readers;
    pthread_mutex_t cwd_mu; /* chdir, fchdir; guards retired */
    char **retired;         /* old cwd strings a reader may still copy */
    size_t nretired, retired_cap;

    atomic_uint umask;      /* the rank's umask() */
    unsigned host_umask;    /* the process's, what the kernel applies to every creation */
    pid_t pid;              /* getpid() */
    int bound;              /* the job pinned the threads that run ranks (job_bind.h) */
    cpu_set_t carrier_cpus; /* a carried rank: the union of its job's carriers' masks */

    pthread_mutex_t popen_mu;
    struct rank_popen *popens;
};

/* Sets up r's state on r's own thread or context (pid and CPUs are read there), before main.
 * 0 or -ENOMEM; on failure what was made is freed. */
int rank_proc_start(struct rank *r);

/* Frees it (after the image is unloaded; also for a rank that never started). */
void rank_proc_free(struct rank_proc *p);

/* The rank's `environ` variable: where the program's own reads and writes go. */
char ***rank_proc_environ(struct rank *r);

/* Joins a relative path to the rank's working directory in buf ("." alone gives the
 * directory).  0, or -ENAMETOOLONG when the result does not fit PATH_MAX. */
int rank_proc_join(struct rank_proc *p, const char *path, char buf[PATH_MAX]);

/* getcwd: the directory into buf of size bytes.  0 or -ERANGE. */
int rank_proc_getcwd(struct rank_proc *p, char *buf, size_t size);

/* The directory's length (without the NUL). */
size_t rank_proc_cwd_len(struct rank_proc *p);

/* chdir: path (relative to the rank's directory, or absolute) must name a directory the rank
 * may search; the rank's directory becomes its canonical absolute name.  0, or the negative
 * errno chdir(2) gives (-ENOENT, -ENOTDIR, -EACCES, -ELOOP, -ENAMETOOLONG), or -ENOMEM. */
int rank_proc_chdir(struct rank_proc *p, const char *path);

/* fchdir: the directory open as fd.  0, -EBADF, -ENOTDIR, -EACCES, -ENOENT (removed). */
int rank_proc_fchdir(struct rank_proc *p, int fd);

/* The calling process's umask (job thread, before the ranks start: the job's host_umask). */
unsigned rank_proc_host_umask(void);

/* mode with the rank's umask applied, and what to ask the kernel for so that its own umask
 * (host_umask) leaves exactly that: *fix is set when the kernel would take away bits the rank
 * keeps (the caller sets the mode afterwards, fchmod or chmod). */
mode_t rank_proc_mode(struct rank_proc *p, mode_t mode, int *fix);

#endif
