/* launch.h — the pieces of tmpi-launch and what they share.
 *
 *   launch_main.c    overall flow and exit status
 *   launch_args.c    the command line: options, their checks, the usage text
 *   launch_appfile.c reading --app FILE (one program per line)
 *   launch_program.c open, check and hash the program; send its bytes
 *   launch_agent.c   connect to an agent, or start a private one for this job
 *   launch_alloc.c   the agents of a Slurm allocation, started through srun
 *   launch_job.c     the protocol session with the agent (submit, output, end, signals)
 *   launch_output.c  writing ranks' output, with --tag-output line prefixes
 *   launch_hosts.c   the placement's hosts: each resolves; is a lone host this machine
 *   launch_place.c   where the ranks go: --hostfile, -H, Slurm, --ppn, --map-by (the parsers
 *                    and the policy are in hostfile.c, hostlist.c, slurm.c, placement.c)
 *
 * Exit statuses: 0 and the job's status as the agent reports it; 1 for runtime failures
 * (agent missing, protocol errors); 2 for usage errors; 130 when interrupted.
 */
#ifndef TMPI_LAUNCHER_LAUNCH_H
#define TMPI_LAUNCHER_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "control.pb-c.h"
#include "placement.h"

#define LAUNCH_EXIT_FAILURE 1
#define LAUNCH_EXIT_USAGE 2
#define LAUNCH_EXIT_INTERRUPTED 130
#define LAUNCH_EXIT_TIMEOUT 124

/* How long we wait for the agent to report the end of a job after we cancelled it, or after
 * the job's --timeout ran out, before we leave anyway (a node, or our agent, may be stopped);
 * $TMPI_CANCEL_GRACE (whole seconds, 1 to 3600) overrides it.  Longer than the agents' default
 * kill_grace (5 s), so that normally the agent's report, with its reason, comes first. */
#define LAUNCH_CANCEL_GRACE_SEC 10
#define LAUNCH_CANCEL_GRACE_MAX 3600

/* One program of the job: "-n 2 ./a x : -n 3 ./b" has two (MPMD, MPI_APPNUM 0 and 1). */
struct launch_app {
    uint32_t nprocs;
    const char *program; /* as typed */
    char **args;         /* argv after PROGRAM, up to the next ':' */
    size_t n_args;
    const char *wdir;  /* this program's -wdir, or NULL (the job's) */
    Tmpi__EnvVar *env; /* -env, and -x after the first ':', for this program only */
    size_t n_env;
};

/* An application file (--app FILE, launch_appfile.c): its text, cut into words in place, and
 * the lines that hold a program. */
#define LAUNCH_APPFILE_MAX_BYTES (1u << 20)
struct launch_appfile_line {
    unsigned lineno; /* 1-based, for messages */
    size_t first, n; /* the line's words: words[first .. first + n - 1] */
};
struct launch_appfile {
    const char *path;
    char *text; /* the file, NUL-terminated; the words point into it */
    char **words;
    size_t n_words, cap_words;
    struct launch_appfile_line *lines; /* non-empty lines only, in file order */
    size_t n_lines;
};

/* Read and split path.  0, or an exit status after printing every problem ("FILE:LINE: what",
 * or "tmpi-launch: --app FILE: what").  *f is to be freed with launch_appfile_free either way. */
int launch_appfile_read(const char *path, struct launch_appfile *f);
void launch_appfile_free(struct launch_appfile *f);

/* What the command line asked for.  Strings point into argv or the environment, except the
 * env vectors, which own nothing but their arrays and the names they copied. */
struct launch_opts {
    uint32_t nprocs;            /* every program's ranks; 0 until placed with -N K and no -n */
    const char *agent;          /* --agent, or NULL */
    bool tag_output;            /* --tag-output, -l, -prepend-rank: "[RANK] " before each line */
    bool timestamp_output;      /* --timestamp-output: the time before each line */
    bool merge_stderr;          /* --merge-stderr-to-stdout: the ranks' stderr goes to stdout */
    uint32_t timeout_sec;       /* --timeout, else $MPIEXEC_TIMEOUT; 0: none */
    uint32_t cancel_grace_sec;  /* LAUNCH_CANCEL_GRACE_SEC, else $TMPI_CANCEL_GRACE */
    uint32_t alloc_timeout_sec; /* LAUNCH_ALLOC_TIMEOUT_SEC, else $TMPI_ALLOC_TIMEOUT */
    const char *wdir;           /* -wdir / --wdir: the ranks' working directory, or NULL (ours) */
    const char *output_dir;     /* --output-filename: per-rank files under it, or NULL */
    uint64_t mem_limit;         /* --mem-limit bytes, 0: the agent's */
    uint32_t cpu_limit_milli;   /* --cpu-limit in thousandths of a CPU, 0: the agent's */
    bool no_stdin;              /* --stdin none: rank 0 reads end of file */
    int bind_to;                /* --bind-to as tmpi.BindTo; 0: the agents' default */
    bool report_bindings;       /* --report-bindings */
    int on_deadlock;            /* --on-deadlock: Tmpi__DeadlockAction, report by default */
    Tmpi__EnvVar *env;          /* -x, in command-line order */
    size_t n_env;
    /* placement */
    const char *hostfile; /* --hostfile, or NULL */
    const char *hosts;    /* -H / --host value, or NULL */
    uint32_t ppn;         /* --ppn, 0: not given */
    enum placement_map map_by;
    bool oversubscribe;
    bool display_map;        /* print the placement and exit 0 */
    const char *program;     /* the first program as typed; NULL only with --display-map */
    struct launch_app *apps; /* n_apps >= 1 unless --display-map without a program */
    size_t n_apps;
    struct launch_appfile appfile; /* --app FILE: the programs' strings point into it */
};

/* Fill o from the command line (launch_args.c).  Returns 0, -1 after --help or --version
 * (exit 0), or an exit status after printing why. */
int launch_args_parse(int argc, char **argv, struct launch_opts *o);
/* Free what launch_args_parse allocated (o's env vectors and programs). */
void launch_opts_free(struct launch_opts *o);

/* The program file, open for the whole run so that what we hash is what we send. */
struct launch_program {
    int fd;
    const char *path; /* the path we opened */
    char *path_alloc; /* path when it came from a PATH search, else NULL */
    uint64_t size;
    uint8_t hash[32]; /* SHA-256 of the contents */
};

/* Open path (searching PATH when it has no '/' and is not in the current directory), check
 * that it is a TMPI module and hash it.  Prints the reason and returns LAUNCH_EXIT_USAGE or
 * LAUNCH_EXIT_FAILURE on failure, 0 on success. */
int launch_program_open(const char *path, struct launch_program *ret);
void launch_program_close(struct launch_program *prog);
/* Send the program as ProgramChunk frames on fd: 0 or a negative errno (-ESTALE when the file
 * changed since it was hashed). */
int launch_program_send(const struct launch_program *prog, int fd);

/* libtool wrapper scripts (launch_libtool.c): whether the program name is one (a bare name
 * found in PATH as tmpi-launch finds programs: *ret_path the path, malloc'd, else NULL), and
 * what it runs: the
 * program (*ret_prog) and the LD_LIBRARY_PATH it sets (*ret_libpath), both malloc'd, as the
 * script finds them when libtool --mode=execute sources it (relinking first if it must).
 * 0, or a negative errno (-ECHILD: the script failed; -EBADMSG: it named no program). */
int launch_libtool_wrapper(const char *name, char **ret_path);
int launch_libtool_resolve(const char *script, char **ret_prog, char **ret_libpath);

/* A private agent started for one job; pid 0 when none. */
struct launch_agent {
    pid_t pid;
    char *dir;   /* mkdtemp directory holding the socket */
    char *sock;  /* DIR/tmpid.sock */
    int key_wfd; /* the coordinator's key pipe (its lifeline), -1: none; 0 in a zeroed struct
                  * also means none, as fd 0 is never ours to give */
};

/* tmpid next to us (installed: bin/../sbin; build tree: launcher/../agent), else
 * $TMPI_TMPID, else the configured sbindir.  NULL: out of memory. */
char *launch_find_tmpid(void);

/* The agents of a Slurm allocation (launch_alloc.c): one per node of the placement, started
 * with srun, holding a key made for this launch. */
#define LAUNCH_ALLOC_KEY_BYTES 32
#define LAUNCH_ALLOC_KEY_HEX (2 * LAUNCH_ALLOC_KEY_BYTES)
/* How long the agents get to report their ports (srun may wait for the step's resources);
 * $TMPI_ALLOC_TIMEOUT overrides it, 1 to LAUNCH_ALLOC_TIMEOUT_MAX seconds. */
#define LAUNCH_ALLOC_TIMEOUT_SEC 120
#define LAUNCH_ALLOC_TIMEOUT_MAX 3600

struct launch_alloc {
    pid_t srun;  /* 0: not started */
    int in_wfd;  /* srun's stdin: the key, then the agents' lifeline */
    int out_rfd; /* srun's stdout: the agents' READY/PORT lines */
};

/* A fresh key as hex digits.  0 or a negative errno. */
int launch_alloc_key(char ret_hex[LAUNCH_ALLOC_KEY_HEX + 1]);
/* Starts the agents for place's nodes and sets each node's port to its agent's, waiting at
 * most timeout_sec for them.  Returns 0,
 * or a negative errno after printing why (-EINTR: a signal on sigfd).  *al is filled as far
 * as it got, for launch_alloc_stop. */
int launch_alloc_start(struct placement *place, const char *keyhex, uint32_t timeout_sec, int sigfd,
                       struct launch_alloc *al);
/* Closes the agents' lifeline and waits for srun to end (then SIGTERM, then SIGKILL). */
void launch_alloc_stop(struct launch_alloc *al);
/* Starts the coordinator for the allocation's agents: a private agent of ours with the same
 * key and no listener, and connects to it.  The fd, or a negative errno after printing why. */
int launch_agent_start_coordinator(const char *keyhex, int sigfd, struct launch_agent *agent);
/* Whether an agent answers where the options point (the system one, $TMPI_AGENT, --agent). */
bool launch_agent_answers(const struct launch_opts *opts);

/* Connect to the agent the options name, or start a private one when no agent answers and no
 * --agent was given.  sigfd is watched while waiting for a private agent to come up.  Returns
 * the connected fd, or a negative value after printing why: -EINTR when a signal interrupted
 * the start.  *agent is filled when a private agent was started, even on failure, so that
 * launch_agent_stop() can clean up. */
int launch_agent_connect(const struct launch_opts *opts, int sigfd, struct launch_agent *agent);
/* Connect to the agent the options name, which must be running (a job across several nodes,
 * or on another node than this one, needs an agent with a mesh).  place names the nodes in
 * the message when none answers.  Returns the fd, or a negative errno after printing why. */
int launch_agent_connect_mesh(const struct launch_opts *opts, const struct placement *place);
/* Stop and reap a private agent and remove its directory; nothing when none was started. */
void launch_agent_stop(struct launch_agent *agent);

/* Work out where the ranks go, from --hostfile, -H or a Slurm allocation (SLURM_JOB_NODELIST,
 * only when neither option is given) and --ppn / --map-by / --oversubscribe.  Returns 0 with
 * *ret filled, or LAUNCH_EXIT_USAGE / LAUNCH_EXIT_FAILURE after printing every problem.
 * Without hosts, --ppn or --display-map, nothing is computed and ret->nnodes is 0: the local
 * agent runs every rank, as it did before placement existed.  *ret_slurm: the hosts came from
 * a Slurm allocation. */
int launch_place(const struct launch_opts *opts, struct placement *ret, bool *ret_slurm);

/* Check the hosts of a placement that came from --hostfile or -H (opt, and file or NULL, name
 * where they came from in messages): every node's host must resolve.  *ret_lone_here: the placement
 * is one node the local agent runs by itself (this machine at the default agent port, or no host);
 * otherwise the job goes through the local agent's mesh.  0, or LAUNCH_EXIT_FAILURE after
 * naming every host that does not resolve.  A host that got no rank (placement nspare: only
 * MPI_Comm_spawn's room) and does not resolve is left out of p, without a word: the job does
 * not need it. */
int launch_hosts_check(struct placement *p, const char *opt, const char *file, bool *ret_lone_here);

/* Run the job over the connection fd; returns the launcher's exit status.  progs: one per
 * program of opts->apps.  place: the nodes of a job across several nodes (sent along for the
 * agent to coordinate), else NULL. */
int launch_job_run(const struct launch_opts *opts, const struct launch_program *progs,
                   const struct placement *place, int fd, int sigfd);

/* Output of the ranks.  Output without a line prefix is passed through byte for byte;
 * tagged or timestamped output keeps a partial line per (rank, stream) until its newline
 * arrives, so a prefix is only ever written at the start of a line. */
struct launch_partial;
struct launch_output {
    bool tag;         /* "[RANK] " before each line */
    bool timestamp;   /* the time before each line */
    bool merge;       /* stderr is written as stdout */
    const char *dir;  /* --output-filename DIR: DIR/1/rank.N/stdout|stderr, else NULL */
    uint8_t *started; /* per rank: bit s set once stream s's file was created this run */
    size_t n_started;
    bool broken; /* writing to our stdout/stderr failed (e.g. EPIPE): discard */
    struct launch_partial *partial;
    size_t n_partial, cap_partial;
};

/* Output as the options ask: --tag-output, --timestamp-output, --merge-stderr-to-stdout,
 * --output-filename. */
void launch_output_init(struct launch_output *out, const struct launch_opts *o);
/* Write one Output frame's data: 0, or a negative errno when our own stdout/stderr failed
 * (the caller cancels the job; later output is discarded). */
int launch_output_write(struct launch_output *out, uint32_t rank, uint32_t stream,
                        const uint8_t *data, size_t len);
/* Flush the partial lines of one rank (at RankExit) or of all ranks (rank < 0). */
void launch_output_flush(struct launch_output *out, int64_t rank);
void launch_output_free(struct launch_output *out);

#endif
