/* svc.h — the services tmpid offers to libtmpi running inside it.
 *
 * libtmpi (libclient/) is loaded into the tmpid process together with the job modules.  It must
 * not link against the agent (a module run outside an agent must still load), so it finds this
 * table at run time with dlsym(RTLD_DEFAULT, TMPI_SVC_SYMBOL).  The agent never calls libclient
 * directly: the only upcalls are the callbacks libclient hands over in tmpi_client_ops.
 *
 * Threading: every function here may be called from any rank thread at any time, concurrently.
 *
 * NULL: every function member is set by every agent, except those marked "Optional (may be
 * NULL)", which libclient tests before each call and does without (a test harness or an older
 * agent may leave them out).  The net_* and pool_* members are needed only by a job with links
 * (info->net != NULL); rank_park/rank_yield only by a carried rank (info->carried).
 */
#ifndef TMPI_PROTO_SVC_H
#define TMPI_PROTO_SVC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "netd_hdr.h"

#define TMPI_SVC_SYMBOL "tmpi_svc"
/* 21: netd_hdr.proto may carry CANCEL / CANCEL_ANS (NETD_VERSION 5), so a libtmpi that sends
 * them runs only on an agent that stamps version 5. */
#define TMPI_SVC_ABI 21

enum { TMPI_PHASE_INIT = 1, TMPI_PHASE_FINALIZED = 2 };

/* What a rank thread knows about itself.  Owned by the agent, valid from the start of the rank
 * thread until the job is unloaded, never modified after the rank starts. */
struct tmpi_rank_info {
    uint64_t job_id;
    int rank;       /* global rank in MPI_COMM_WORLD */
    int size;       /* number of ranks in the job */
    int node;       /* index of this node among the job's nodes */
    int nnodes;     /* number of nodes of the job */
    int local_rank; /* rank among the job's ranks on this node */
    int local_size; /* number of the job's ranks on this node */
    const char *hostname;
    /* global rank -> node index, size entries (4 bytes each: small even at 4096 ranks) */
    const int32_t *node_of_rank;
    /* global rank -> local rank on its node, size entries */
    const int32_t *local_rank_of;
    /* The job's links to its other nodes, for net_send; NULL when the job has one node. */
    void *net;
    /* The rank runs as a context on a carrier thread shared with other ranks of its job
     * (user-level switching, tmpid.conf rank_switching): its waits park (rank_park). */
    int carried;
    /* The program this rank runs, 0 for the first (MPI_APPNUM: tmpi-launch -n 2 ./a : -n 3 ./b
     * gives ranks 0-1 appnum 0 and ranks 2-4 appnum 1). */
    int appnum;
    /* World ranks the job may hold, its spawned ranks included (MPI_UNIVERSE_SIZE): size, or
     * more (agent/host/job_spawn.h).  Ranks size .. universe - 1 are those MPI_Comm_spawn
     * starts, in the order of the spawns; node_of_rank and local_rank_of have universe entries,
     * which fix the node of each. */
    int universe;
    /* A spawned rank (MPI_Comm_spawn): nonzero, the first world rank of the spawn's first
     * command (what names the spawn), the size of its MPI_COMM_WORLD (every command's ranks)
     * and its rank there; 0 for the job's own ranks.  The commands of one spawn may hold
     * world ranks apart from each other (spawn_multiple, each command on its host). */
    int spawned;
    int spawn_first, spawn_size, spawn_rank;
};

/* One command of an MPI_Comm_spawn[_multiple] (svc spawn). */
struct tmpi_spawn_app {
    const char *command; /* the program: a path, or a name looked up in path then PATH */
    char *const *argv;   /* its arguments after argv[0], NULL-terminated, or NULL */
    int maxprocs;        /* ranks to start, >= 1 */
    int first;           /* their world ranks: first .. first + maxprocs - 1 */
    int appnum;          /* MPI_APPNUM: the index of the spawn_multiple command it is (or a
                          * part of, when the command's ranks go to several hosts) */
    const char *wdir;    /* info "wdir": the ranks' working directory, or NULL: the job's */
    const char *path;    /* info "path": directories to look for command in, ':'-separated */
};

/* Channels of net_send: TMPI_CH_P2P, TMPI_CH_COLL (channel.h, through netd_hdr.h). */
/* Flag of net_send: the frame goes into the socket in one write rather than in pieces (a large
 * frame is otherwise written in pieces so that the receiver copies one out while the next goes
 * in, which a two-sided message gains from and a one-sided Put + flush loses by;
 * agent/netd/netd.h NETD_SEND_WHOLE). */
#define TMPI_NET_WHOLE 1u

/* What one rank is doing in MPI (tmpi_client_ops.rank_mpi): what `tmpictl ranks` shows and what
 * the deadlock check reads (docs/ARCHITECTURE.md "Deadlock detection"). */
enum tmpi_mpi_activity {
    TMPI_ACT_COMPUTING = 0, /* not inside a libtmpi wait (or not in MPI_Init yet) */
    TMPI_ACT_WAITING = 1,   /* inside a blocking MPI call that waits */
    TMPI_ACT_ENDED = 2,     /* MPI_Finalize returned: it sends nothing any more */
    TMPI_ACT_UNKNOWN = 3,   /* MPI_THREAD_MULTIPLE: other threads of the rank may act for it */
};
#define TMPI_PEER_ALL (-3)  /* a collective: every member of the communicator */
#define TMPI_PEER_NONE (-2) /* a call without a peer it names (MPI_Waitany, ...) */
#define TMPI_PEER_ANY (-1)  /* MPI_ANY_SOURCE */
#define TMPI_TAG_NONE (-2)
#define TMPI_TAG_ANY (-1)
struct tmpi_rank_mpi {
    int activity;      /* enum tmpi_mpi_activity */
    const char *call;  /* "MPI_Recv", ...; static storage; NULL unless waiting */
    int peer;          /* in the communicator, or TMPI_PEER_* */
    int peer_is_dest;  /* the peer is a destination (a send), else a source */
    int peer_world;    /* the peer's rank in MPI_COMM_WORLD, -1 when none or any */
    int tag;           /* or TMPI_TAG_* */
    int comm_size;     /* members of the communicator (0: unknown) */
    int comm_world;    /* the communicator is MPI_COMM_WORLD */
    char comm[64];     /* its name: MPI_COMM_WORLD, MPI_COMM_SELF, MPI_Comm_set_name's, or "" */
    uint64_t since_ns; /* CLOCK_MONOTONIC: when the call began to wait */
    /* Evidence for the deadlock check: the rank sleeps in its wait and nobody woke it since
     * it last found its condition false (blocked), and how many times it went to sleep so far
     * (sleeps: the same value twice means the same sleep). */
    int blocked;
    uint64_t sleeps;
};

/* Upcalls libclient registers once per job (the first rank of a job to call job_state()). */
struct tmpi_client_ops {
    /* The job is being torn down early (MPI_Abort, a failed rank, timeout, cancel): wake every
     * rank thread of this job that is blocked inside libtmpi so it can notice job_cancelled()
     * and end.  Called from an agent thread; must not block. */
    void (*wake_all)(void *state);
    /* The job's last rank thread has ended; free the per-job state. */
    void (*destroy)(void *state);

    /* Inter-node arrivals, called by a receive daemon thread of the agent, or by a rank
     * thread of this job inside svc->net_poll (then with no libtmpi lock held), frames of one
     * sending node in the order it sent them, never two of one node at once.  The agent has checked
     * the transport half of the header: job id, channel, frame number, h->src_rank is a rank of
     * `node`, h->dst_rank a rank of this node; h->proto (libtmpi's half) is as the sender wrote it
     * and libtmpi checks it.
     * Nothing of a job arrives before the first of its ranks here created the state.
     * net_header: return a buffer for h->payload_len bytes (the payload is read straight into
     * it) or NULL to drop the payload; *ctx is handed to net_frame.  net_frame: the payload is
     * in (or was dropped).  Both must not block (taking a mailbox lock is fine). */
    void *(*net_header)(void *state, int node, const struct netd_hdr *h, void **ctx);
    void (*net_frame)(void *state, int node, const struct netd_hdr *h, void *ctx);

    /* libtmpi's per-thread record of the rank the calling thread runs (opaque, NULL: none).  A
     * carrier thread (user-level switching) reads it when a rank's context stops and puts it
     * back when the context runs again, on whichever carrier; a rank that starts gets NULL. */
    void *(*tls_get)(void);
    void (*tls_set)(void *rank);

    /* What rank world_rank (a rank of this node) is doing in MPI, for tmpictl ranks and the
     * deadlock check; any thread, never blocks for long (a per-rank lock held for a copy).  0,
     * or -EINVAL for a rank that is not on this node. */
    int (*rank_mpi)(void *state, int world_rank, struct tmpi_rank_mpi *out);
    /* Threads of libtmpi's own (non-blocking collectives across nodes) that are running a round
     * now: while one does, the job is not stuck whatever its ranks do. */
    int (*helpers_busy)(void *state);

    /* Optional (may be NULL: nothing comes from other jobs).  A frame job from_job's host sent
     * this job (svc xjob_send there; docs/PROTOCOL.md "Between jobs"), hdr[hlen] and
     * payload[len]; or, with hdr NULL, job from_job cannot be reached any more (it ended, or
     * the agent refused a frame for it) and reason says why.  The agent checked that both jobs
     * are the same user's.  On the job host's channel thread, frames of one job in the order it
     * sent them; must not block (taking a mailbox lock is fine). */
    void (*xjob_frame)(void *state, uint64_t from_job, const void *hdr, size_t hlen,
                       const void *payload, size_t len, const char *reason);
};

/* Carriers of a job that sleep (svc rank_park): how many, and the futex word they sleep on. */
struct tmpi_sleepers {
    _Atomic int sleepers;
    _Atomic uint32_t word;
};

struct tmpi_atomic;

struct tmpi_svc {
    int abi; /* TMPI_SVC_ABI */

    /* The calling thread's rank, or NULL if it is not a rank thread (or a thread a rank
     * started with pthread_create). */
    const struct tmpi_rank_info *(*rank_self)(void);

    /* Per-job libclient state, created exactly once per job: the first caller runs
     * create(info, arg) while the others of the same job wait; all get the same pointer in
     * *ret_state.  ops are kept for the job's life.  Returns 0 or a negative errno (then create's
     * own error, if it returned NULL: -ENOMEM). */
    int (*job_state)(void *(*create)(const struct tmpi_rank_info *info, void *arg), void *arg,
                     const struct tmpi_client_ops *ops, void **ret_state);

    /* End the calling rank as if its main had returned code.  Never returns. */
    void (*rank_exit)(int code) __attribute__((noreturn));

    /* End the calling rank's whole job: every rank stops, the launcher exits with code and
     * prints why (e.g. "MPI_Abort called").  Never returns. */
    void (*job_abort)(int code, const char *why) __attribute__((noreturn));

    /* libclient reports the rank's MPI life: TMPI_PHASE_INIT after MPI_Init succeeded,
     * TMPI_PHASE_FINALIZED after MPI_Finalize.  A rank that ends between the two has failed
     * (its peers may be waiting for it), so the agent tears the job down. */
    void (*rank_mpi_phase)(int phase);

    /* Nonzero once the calling rank's job is being torn down; a rank blocked in libtmpi that
     * sees it must call rank_exit() promptly. */
    int (*job_cancelled)(void);

    /* Number of rank threads of all jobs in this agent that are currently runnable (not
     * blocked in a wait).  Waiters spin only while this is at most ncpus: spinning on an
     * oversubscribed node only steals the core from the thread that would wake us. */
    int (*runnable_ranks)(void);
    /* The calling rank blocks (delta = -1) or becomes runnable again (delta = +1). */
    void (*rank_blocking)(int delta);
    int ncpus;

    /* Agent configuration libclient honours (read-only). */
    uint32_t spin_ns;     /* spin budget before blocking in a wait */
    uint32_t eager_limit; /* intra-node: larger messages wait for the receive (rendezvous) */
    uint32_t coop_min;    /* intra-node: copies this large are split between both ranks; 0 never */

    /* Inter-node (info->net != NULL).  Sends one frame to node `node` of the job on channel
     * TMPI_CH_P2P or TMPI_CH_COLL; the agent sets h->job_id, h->channel and h->seq, the caller
     * the ranks, payload_len and h->proto.  flags: TMPI_NET_WHOLE or 0.  Frames to one node on
     * one channel leave in call order.  Never blocks: what the socket does not take at once is
     * queued.  done(arg, err) (may be NULL) runs once the payload buffer may be reused — on
     * this thread before the call returns if it went out at once, else on a daemon thread;
     * err < 0 if the link failed first.  Returns 0, or a negative errno (then done is not
     * called): -EPIPE the link to that node is gone, -EINVAL bad node/channel. */
    int (*net_send)(void *net, int node, int channel, unsigned flags, const struct netd_hdr *h,
                    const void *payload, void (*done)(void *arg, int err), void *arg);
    /* The agent's shared buffer pool (tmpid.conf pool_size): NULL when it cannot take `bytes`
     * more.  pool_free takes the same size back.  Any thread. */
    void *(*pool_alloc)(size_t bytes);
    void (*pool_free)(void *p, size_t bytes);
    uint32_t net_eager_limit; /* inter-node: eager push below this, three-phase from it */

    /* Optional (may be NULL: the rank then leaves its links to the receive daemons).
     * A rank waiting for something from another node handles what has arrived on the job's
     * links itself (net_header/net_frame then run on the calling rank thread) instead of
     * waiting for a receive daemon to be scheduled.  Links a daemon is reading are skipped.
     * Returns > 0 if anything moved on them (frames handled, bytes read or written), else 0. */
    int (*net_poll)(void *net);
    /* Optional (may be NULL).  Brackets a spin of net_poll calls (on = 1 before, 0 after):
     * meanwhile the receive daemons are not woken for this job's arrivals, the spinning rank reads
     * them. */
    void (*net_hold)(void *net, int on);
    /* Optional (may be NULL).  A thread of this job is about to wait without reading the links
     * (yielding or asleep): the daemons must read them now (after a spin stops they stay quiet for
     * up to a few milliseconds, in case another spin follows).  Links some rank still spins on
     * stay with it. */
    void (*net_release)(void *net);

    /* User-level switching (info->carried).  Optional (may be NULL: no rank is ever carried);
     * rank_yield must be set whenever rank_park is.  rank_park: the calling rank's context stops
     * until ready(arg) is nonzero, while the job's carriers run its other ranks (any carrier may
     * resume it); ready() runs on a carrier, often, never twice at once for one rank, and
     * must be cheap and not block.  Before the first switch the agent stores its carriers'
     * sleep record in *target: whoever later makes ready() true must, if target->sleepers is
     * nonzero (seq_cst, after its seq_cst store), bump target->word and FUTEX_WAKE it (all
     * waiters).  Returns 0 once ready (errno as it was), or -ENOTSUP when the calling thread
     * is not a carried rank's context.  rank_yield: lets the job's other runnable ranks run
     * first (a poll that found nothing, e.g. MPI_Test). */
    int (*rank_park)(int (*ready)(void *arg), void *arg, struct tmpi_sleepers *_Atomic *target);
    void (*rank_yield)(void);

    /* Optional (may be NULL: libtmpi sees no tmpid.conf settings; the collectives then take
     * only TMPI_COLL_*).  The agent's settings reach libtmpi by key through this, never as
     * members of this table (libclient/core/svc_conf.h; e.g. [mpi] coll_bcast, checked by the
     * agent).  Setting i of the agent's tmpid.conf (0-based, a fixed order for the agent's life):
     * its section and key (static strings) and its value as text into buf[len] (truncated, NUL
     * ended; "" when unset).  Returns the full text's length, or -1 when i is past the last.
     * Any thread; never blocks. */
    int (*config_item)(int i, const char **section, const char **key, char *buf, size_t len);

    /* Optional (NULL: the tools interface shows no link traffic).  The calling rank's job's
     * data-link traffic on this node, what the host reports to the agent for the metrics'
     * tmpi_messages_total / tmpi_bytes_total: channel 1 (p2p) or 2 (coll) into out[4] =
     * frames sent, bytes sent, frames received, bytes received (headers included).  Returns 0
     * (zeros for a job without links), -1 when the thread is no rank or channel is not 1 or 2.
     * Any rank thread; never blocks. */
    int (*link_traffic)(int channel, uint64_t out[4]);

    /* Optional (NULL: no pool variables).  The node agent's shared buffer pool: bytes in use
     * now into *used and its size ([pool] size) into *capacity, the metrics endpoint's
     * tmpi_pool_used_bytes and tmpi_pool_capacity_bytes.  Any thread; never blocks. */
    void (*pool_usage)(uint64_t *used, uint64_t *capacity);

    /* Optional (may be NULL: MPI_Comm_spawn then fails with MPI_ERR_SPAWN).  Starts the ranks
     * of one spawn on this node: napps commands, command k's ranks world ranks apps[k].first
     * .. + maxprocs - 1, ranks of the spawn's MPI_COMM_WORLD in command order (libtmpi chose
     * them below info->universe and set up their state first; first is apps[0].first, the
     * spawn's name), appnum apps[k].appnum; of those, the ranks whose node (node_of_rank) is
     * this one (a job across nodes: each node is asked for its own, -EINVAL when it has
     * none).  All or nothing: 0 once every rank runs, else a negative errno (-ENOENT no such
     * program, -ENOEXEC not a TMPI program, -ECANCELED the job is ending) with a one-line
     * reason in err and no rank started.  Called by a rank thread, or by a thread of libtmpi's
     * own serving another node's request; blocks while the ranks are loaded.  The ranks wait
     * before their main until spawn_gate says whether every node started its share. */
    int (*spawn)(const struct tmpi_spawn_app *apps, int napps, int first, char *err, size_t errlen);
    /* With spawn: the ranks of the spawn from world rank first that spawn started on this node
     * run their main (go nonzero), or end without running it and without failing the job (the
     * spawn failed on another node: MPI_ERR_SPAWN, nothing of it stays).  0, or -ENOENT: no
     * such spawn waits here.  Any thread; never blocks. */
    int (*spawn_gate)(int first, int go);

    /* Optional (may be NULL: libtmpi keeps a job's names in the job).  MPI_Publish_name (op
     * TMPI_NAME_PUBLISH), MPI_Unpublish_name (TMPI_NAME_UNPUBLISH) and MPI_Lookup_name
     * (TMPI_NAME_LOOKUP, the port into out[cap]) on the names of the job's owner that the
     * agents hold for every job of that user, on this node and the agent's peers
     * (docs/PROTOCOL.md "Names").  0, -EEXIST published already, -ENOENT no such service (or
     * not with that port), -ENOSPC the user's table is full, -ENAMETOOLONG, -EPIPE the agent
     * is gone, -ETIMEDOUT.  Any rank thread; blocks until the agent answered. */
    int (*name_op)(int op, const char *service, const char *port, char *out, size_t cap);

    /* Optional (may be NULL: one-sided operations to other nodes all go as frames).  Remote
     * memory access over the job's links where their transport has it (the OFI transport:
     * fi_mr_reg, fi_write, fi_read; agent/transport/transport.h tp_mr_reg/tp_put/tp_get), so
     * that a Put or Get to a window on another node moves without anyone there handling a
     * frame.  net_mr_reg registers [buf, buf + len) of this node for access from the job's
     * other nodes and says the key and address they name it by (an address of the region is
     * addr + its offset in it); 0, or -ENOTSUP when the job's links have no remote access
     * (TCP), another negative errno.  net_mr_dereg undoes it (no transfer to it in flight).
     * net_put / net_get write len bytes from buf to (get: read into buf from) the registered
     * memory at raddr of node `node` under key; done(arg, err) runs once the bytes are in
     * the target's memory (put) or in buf (get), on any thread, maybe before the call
     * returns.  0, or -ENOTSUP (that node's link has no remote access: it fell back to TCP),
     * -EMSGSIZE (len above what the link moves at once), -EPIPE, -EINVAL; done is not called
     * then.  Any rank thread; never blocks for long. */
    int (*net_mr_reg)(void *net, void *buf, size_t len, void **ret_mr, uint64_t *key,
                      uint64_t *addr);
    void (*net_mr_dereg)(void *net, void *mr);
    int (*net_put)(void *net, int node, const void *buf, size_t len, uint64_t raddr, uint64_t key,
                   void (*done)(void *arg, int err), void *arg);
    int (*net_get)(void *net, int node, void *buf, size_t len, uint64_t raddr, uint64_t key,
                   void (*done)(void *arg, int err), void *arg);

    /* Optional (may be NULL: MPI_Comm_connect to another job fails with MPI_ERR_PORT).  One
     * frame of libtmpi's path between jobs to the host of node to_node of job to_job (0 for a
     * job on one node), on this agent or another, through the agents (which carry it only
     * between jobs of one user): hdr (at most
     * TMPI_XJOB_HDR_MAX bytes) and payload (at most TMPI_XJOB_PAYLOAD_MAX) are copied before
     * it returns; frames of one sender arrive in the order of its calls.  0, -EMSGSIZE, -EPIPE
     * (the agent is gone), -ENOMEM.  Any thread; never blocks. */
    int (*xjob_send)(uint64_t to_job, uint32_t to_node, const void *hdr, size_t hlen,
                     const void *payload, size_t len);
    /* Optional (may be NULL: the info key host then names this node only, by "localhost" or
     * info->hostname).  The nodes of the calling rank's job that MPI_Comm_spawn's info key
     * host names, ascending, the first cap of them into out: a node's name in the job's host
     * file (its NodePlacement host, case aside) or that name with ":PORT"; this node also by
     * its agent's name (info->hostname, MPI_Get_processor_name), the machine's host name,
     * "localhost" and a numeric address of its interfaces (libtmpi asks the other nodes for
     * theirs, comm/dyn_net.h TM_DYN_HOST).  How many nodes it names (0: none of the job's).  Any
     * rank thread; never blocks. */
    int (*host_nodes)(const char *host, int *out, int cap);

    /* Optional (may be NULL: accumulates to other nodes go as frames).  Atomic operations
     * carried out by the job's transport in registered window memory (net_mr_reg) where it
     * has them (the OFI transport: fi_atomic, fi_fetch_atomic, fi_compare_atomic, applied by
     * the provider at the target, on a real fabric by its network card).  net_atomic_ok: the
     * most elements one net_atomic of op (TMPI_AOP_*) on type (TMPI_AT_*) carries (fetch: with
     * the old values back), or -ENOTSUP; *ret_flags gets TMPI_ATOMIC_ORDERED when the atomics
     * of one origin to one target are applied in the order posted.  net_atomic: a->count
     * elements at a->raddr under a->key in the memory node `node` registered (this node too:
     * its own memory, so that every accumulate to a window can take this path and they stay
     * atomic against each other); done(arg, err) once applied (and the old values in
     * a->result), any thread, maybe before the call returns; not resent after a break of the
     * link (done gets the error).  0, -ENOTSUP (the link to node fell back to TCP), -EINVAL,
     * -EPIPE, -ENOMEM; done is not called then.  Any rank thread; never blocks for long. */
    int (*net_atomic_ok)(void *net, int op, int type, int fetch, unsigned *ret_flags);
    int (*net_atomic)(void *net, int node, const struct tmpi_atomic *a,
                      void (*done)(void *arg, int err), void *arg);
};

/* net_atomic's operations and element types (the transport's, agent/transport/transport.h). */
enum {
    TMPI_AOP_SUM,
    TMPI_AOP_PROD,
    TMPI_AOP_MIN,
    TMPI_AOP_MAX,
    TMPI_AOP_LAND,
    TMPI_AOP_LOR,
    TMPI_AOP_LXOR,
    TMPI_AOP_BAND,
    TMPI_AOP_BOR,
    TMPI_AOP_BXOR,
    TMPI_AOP_WRITE,
    TMPI_AOP_READ,
    TMPI_AOP_CSWAP,
    TMPI_AOP__COUNT
};
enum {
    TMPI_AT_INT8,
    TMPI_AT_INT16,
    TMPI_AT_INT32,
    TMPI_AT_INT64,
    TMPI_AT_UINT8,
    TMPI_AT_UINT16,
    TMPI_AT_UINT32,
    TMPI_AT_UINT64,
    TMPI_AT_FLOAT,
    TMPI_AT_DOUBLE,
    TMPI_AT_FLOAT_COMPLEX,
    TMPI_AT_DOUBLE_COMPLEX,
    TMPI_AT__COUNT
};
#define TMPI_ATOMIC_ORDERED 1u
/* One net_atomic: target = target op buf (WRITE: buf; READ: unchanged) for count elements,
 * the old values into result when not NULL (READ and CSWAP need it); CSWAP: target = buf
 * where it equals cmp. */
struct tmpi_atomic {
    int op, type;
    const void *buf, *cmp;
    void *result;
    size_t count;
    uint64_t raddr, key;
};

/* xjob_send's bounds (proto/control/msg_check.h MSG_XFRAME_*). */
#define TMPI_XJOB_HDR_MAX 64
#define TMPI_XJOB_PAYLOAD_MAX (1u << 20)

/* Exported by libtmpi beside tmpi_svc's users: a job host with no ranks of its own (a node of
 * the host file where only MPI_Comm_spawn may start ranks, agent/host/job_spare.h) finds it
 * with dlsym on the job's program, which loaded libtmpi, and calls it on its job thread once
 * the job's links are up.  It makes the job's libtmpi state through job_state, whose create
 * then sees the info the job host gives that thread (rank -1: no rank of the job; local_size
 * 0), so that the other nodes' SPAWN requests find a state to take them.  0 or a negative
 * errno.  Optional: an older libtmpi has none, and the job host then says so. */
#define TMPI_HOST_JOB_SYMBOL "tmpi_host_job_state"
typedef int (*tmpi_host_job_fn)(void);

/* name_op's operations (the NameRequest's op, proto/control/msg_check.h). */
#define TMPI_NAME_PUBLISH 1
#define TMPI_NAME_UNPUBLISH 2
#define TMPI_NAME_LOOKUP 3
/* and a port's (service = the port name; port unused): registered with the agent at
 * MPI_Open_port, dropped at MPI_Close_port, found by a connect from another job (0 same user,
 * -EACCES another user's, -ENOENT none open) */
#define TMPI_NAME_PORT_OPEN 4
#define TMPI_NAME_PORT_CLOSE 5
#define TMPI_NAME_PORT_FIND 6
/* three context ids for a communicator between jobs (service "ctx"): the agent's, the first in
 * out as a decimal number, from [TMPI_XCTX_BASE, TMPI_XCTX_BASE + TMPI_XCTX_COUNT), never
 * handed out twice by one agent; -ENOSPC once they are used up */
#define TMPI_NAME_XCTX 7
#define TMPI_XCTX_BASE (1 << 28)
#define TMPI_XCTX_COUNT (1 << 28)

#endif
