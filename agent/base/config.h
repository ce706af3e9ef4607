/* config.h — tmpid's settings: defaults, then the config file (tmpid.conf(5), INI format),
 * then command-line options. */
#ifndef TMPI_AGENT_CONFIG_H
#define TMPI_AGENT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* A configuration file larger than this is refused (it is read whole, and a copy goes to
 * every job host). */
#define CONFIG_MAX_BYTES (1u << 20)
#define CONFIG_MAX_BYTES_TEXT "1 MiB"
#define CONFIG_NODE_UNSET UINT32_MAX
#define CONFIG_NODE_NUMBER_MAX 999999u
/* [io] threads: libtmpi's TM_IOP_THREADS_MAX (libclient/io/io_pool.h) */
#define CONFIG_IO_THREADS_MAX 64u

/* query_timeout_ms's default: a job host on a badly overloaded node (load 150 on 2 cores,
 * under ThreadSanitizer) took over 5 s to answer a RanksQuery; an agent's loop answers a
 * NodeQuery in milliseconds, so only a stopped or swamped peer waits this long. */
#define CONFIG_QUERY_TIMEOUT_MS_DEFAULT 10000

/* [mpi] kernel_ranks_per_cpu: under rank_switching auto a job keeps one thread per rank while
 * its ranks on this node are at most this many per CPU (beyond, carriers).  4 from OSU 7.4 on
 * 2 cores (docs/bench/ANALYSIS.md "Ranks per CPU"): with 4 and 8 ranks kernel threads were
 * 3-15x faster in osu_bcast, osu_allgather and osu_mbw_mr; at 16 carriers won the ring. */
#define CONFIG_KERNEL_RANKS_PER_CPU_DEFAULT 4u
#define CONFIG_KERNEL_RANKS_PER_CPU_MAX 1024u

struct agent_config {
    char *name;        /* node name shown to users; default: hostname */
    char *socket_path; /* local control socket */
    char *listen;      /* mesh listener HOST:PORT, NULL: none */
    char *key_file;    /* cluster key, NULL: no mesh unless key_fd */
    int key_fd;        /* --key-fd: the key arrives on this pipe (and its end stops the agent),
                        * -1: not given; command line only */
    char **peers;      /* agents to keep connected ([mesh] peers, --peer) */
    size_t npeers;
    uint32_t heartbeat_ms;         /* peer heartbeat interval */
    uint32_t heartbeat_timeout_ms; /* a job's agent silent this long fails the job (mesh.h) */
    uint32_t recv_threads;         /* netd receive daemons (links are spread over them) */
    uint32_t recv_spin_ns; /* a receive daemon polls this long after a read before it sleeps */

    /* A broken data link not reconnected within this fails the job (job_net.h, "Reconnecting");
     * the payload bytes a data link keeps copies of to resend (netd.h, "Resending"). */
    uint32_t link_reconnect_timeout_ms;
    size_t link_resend_max;
    /* What carries a job's data between nodes (agent/transport/, docs/ADMIN.md "Fabrics"):
     * "auto", "tcp" or "ofi" (a literal, not owned); a job's TMPI_TRANSPORT overrides it. */
    const char *transport;
    char *ofi_provider; /* libfabric provider for ofi (e.g. "verbs;ofi_rxm"); NULL: its choice */
    /* The high part of the ids of the jobs this agent starts (job_id.h); CONFIG_NODE_UNSET:
     * derived from the name when the agent has a cluster key, else 0. */
    uint32_t node_number;
    /* Every fan-out query (fanout.h: tmpictl nodes, jobs --all, ranks and the deadlock watch):
     * how long a part (a peer agent, a job's node) gets to answer. */
    uint32_t query_timeout_ms;
    /* [metrics] (metrics.c, docs/ADMIN.md): the Prometheus endpoint, off while listen is NULL */
    char *metrics_listen;
    uint32_t metrics_max_connections; /* HTTP connections open at once */
    uint32_t metrics_timeout_sec;     /* a request must be read and answered within this */
    size_t metrics_max_request;       /* bytes of a request's header lines */
    int log_level;
    int private_agent; /* started by tmpi-launch for one job: no network, no config */
    uint32_t max_jobs; /* jobs running at once */
    /* jobs of one user other than root and the agent's user; 0: max_jobs / 4 (job_quota.h) */
    uint32_t max_jobs_per_user;
    uint32_t admin_reserve_jobs; /* jobs root and the agent's user may run beyond max_jobs */
    uint32_t max_ranks;          /* ranks per job */
    size_t rank_stack_size;      /* bytes of stack per rank thread */
    /* libraries of programs kept shared by all ranks of a node besides the system runtime
     * (name prefixes, image_private.h); NULL: none */
    char *shared_libraries;
    char *private_libraries; /* copied per rank beyond the built-in list (lib_list.h) */
    size_t max_program_size; /* largest program accepted */
    size_t max_frame_size;   /* largest control frame accepted */
    /* The control socket (control.c, docs/RELIABILITY.md): what one client may make the agent
     * hold, and for how long. */
    uint32_t max_connections;          /* tool connections of non-admins, all users together */
    uint32_t max_connections_per_user; /* tool connections of one non-admin user */
    uint32_t idle_timeout_sec;         /* a connection without a running job that sends nothing */
    uint32_t message_timeout_sec;      /* a frame, from its first byte to its last */
    size_t max_buffered_input;         /* unfinished frames of all connections together */
    size_t max_unread_replies;         /* replies queued for a client that does not read them */
    size_t max_args_size;              /* a job's arguments, bytes in total */
    size_t max_env_size;               /* a job's forwarded environment, bytes in total */
    uint32_t program_cache;            /* programs kept after their jobs end */
    uint32_t spin_ns;                  /* spin budget of a waiting rank before it blocks */
    const char *rank_switching; /* "auto", "kernel" or "user" (carrier.h); a literal, not owned */
    uint32_t kernel_ranks_per_cpu; /* auto keeps a thread per rank up to this many ranks a CPU */
    const char *carrier_placement; /* "block" or "cyclic": which carrier starts a rank
                                      (carrier.h); a literal, not owned */
    const char *bind_to; /* "auto" or a --bind-to kind (job_bind.h): a launch without --bind-to
                            gets it; a literal, not owned */
    uint32_t intra_eager_limit;  /* intra-node: larger messages use rendezvous */
    uint32_t intra_coop_min;     /* intra-node: copies this large are shared by both ranks */
    uint32_t eager_limit;        /* inter-node eager-push threshold (seed 000: 100 KB) */
    size_t pool_size;            /* shared buffer pool capacity */
    uint32_t kill_grace_sec;     /* how long ranks of a torn-down job get to stop */
    uint32_t deadlock_check_ms;  /* deadlock watch interval (job_ranks.h); 0: none */
    uint64_t job_memory_max;     /* bytes of memory per job host's cgroup, 0: no limit */
    uint32_t job_cpu_max;        /* thousandths of a CPU per job host's cgroup, 0: no limit */
    uint32_t ended_job_keep_sec; /* how long tmpictl jobs still lists an ended job */
    /* The OOM killer's preference (oom_score.h): the agent's own oom_score_adj, and the one
     * every job host sets for itself; the job's must be the higher. */
    int oom_score_adj, job_oom_score_adj;
    /* Who may submit jobs ([agent] allow_users, allow_groups): NULL-terminated name lists;
     * both NULL: any local user. */
    char **allow_users, **allow_groups;
    /* [agent] allow_users_dir: a directory whose entries JOBID.USER let USER submit (a Slurm
     * prolog writes them, the epilog removes them; allow.h).  NULL: not used. */
    char *allow_users_dir;
    /* [mpi] collective algorithms between nodes (docs/COLLECTIVES.md), checked when read;
     * NULL: not set (auto).  Handed to libtmpi through tmpi_svc; TMPI_COLL_* of a job win. */
    char *coll_bcast, *coll_reduce, *coll_allreduce;
    /* The file's text as accepted (config_load), NULL when none was read.  Job hosts get this
     * copy, never the file: what runs is what the agent checked (at start or at a reload). */
    char *text;
    size_t text_len;
    char *coll_tree_file; /* absolute path of a tree file, parsed once here to reject it early */
    /* [io] the MPI-IO file system threads of a job host (libclient/io/io_pool.h): how many,
     * and the reads and writes that stay on the rank (fewer bytes); TMPI_IO_THREADS and
     * TMPI_IO_OFFLOAD_MIN of a job win.  Handed to libtmpi by key (config_items.c). */
    uint32_t io_threads;
    size_t io_offload_min;
};

/* Whether the agent has a cluster key (a key file, or one handed over --key-fd): it may then
 * join a mesh and coordinate jobs across nodes. */
static inline int config_has_key(const struct agent_config *c)
{
    return c->key_file || c->key_fd >= 0;
}

/* Fills defaults.  0 or -ENOMEM. */
int config_defaults(struct agent_config *c);

/* Reads an INI file over the current values.  Unknown sections/keys and bad values are
 * errors reported as "FILE:LINE: ..." on stderr.  Returns 0, -ENOENT (file missing),
 * -EINVAL (bad content) or another negative errno. */
int config_load(struct agent_config *c, const char *path);

/* "123", "64K", "4M", "1G" (powers of 1024) -> bytes.  0 or -EINVAL/-ERANGE. */
int config_parse_size(const char *s, size_t *ret);

/* [mpi] carrier_placement's words (carrier.h): the literal for v, or NULL when v is none of
 * them (the setting and a job's TMPI_CARRIER_PLACEMENT are checked against the same list). */
const char *config_carrier_placement_word(const char *v);

/* Appends one peer address.  0 or -ENOMEM. */
int config_add_peer(struct agent_config *c, const char *address);

void config_free(struct agent_config *c);

/* Frees a NULL-terminated list of strings (allow_users); NULL: nothing. */
void config_free_list(char **v);

#endif
