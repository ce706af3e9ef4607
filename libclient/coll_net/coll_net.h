/* coll_net.h — collectives on communicators whose members span several nodes (seed 000
 * §3.3-3.4, issue 4).
 *
 * Members are grouped by node (struct tm_chier); each group's member of lowest rank is its
 * leader.  A collective on such a communicator is one *round* per node:
 *   1. every member publishes its arguments (its slot's args) and arrives at its group's
 *      counter (fan-in, never reset: the k-th round is complete at arrive == k * members);
 *   2. the leader runs the node's share of the algorithm (struct tm_calgo.net, coll_hier.c):
 *      it reads the local members' inputs straight from their buffers (ranks are threads),
 *      exchanges with the other groups' leaders over the collective channel along a tree
 *      chosen by node count and size (coll_tree.h), and writes every local member's output;
 *   3. the leader publishes release = k and wakes the members (fan-out), who return.
 * So Bcast and Reduce cross exactly (groups - 1) network edges, and a member never waits on
 * anything but its own leader.  Every leader-to-leader message is counted in
 * job->coll_stats.net[kind].
 *
 * Leader messages carry their own context (-2 ctx - 2 for blocking rounds, so no user message
 * can match them) and tag (round number, step), and are received by the leader's mailbox
 * (tm_recv).  Between agents they travel on the collective connection (TMPI_CH_COLL), never
 * on the point-to-point queues.  When info->net is NULL every rank of the job lives in this
 * process (the unit-test harness simulating nodes): the messages then go through the mailbox
 * directly, counted the same. */
#ifndef TMPI_LIBCLIENT_COLL_NET_H
#define TMPI_LIBCLIENT_COLL_NET_H

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#include "coll_base.h"
#include "coll_tree.h"
#include "job.h"
#include "request.h"

/* One node's members of a communicator.  arrive: any member (atomic); release, err: written by
 * the leader before it bumps release (seq_cst), read by members after they see it; seq: the
 * leader only. */
struct tm_cgroup {
    _Atomic uint64_t arrive __attribute__((aligned(64)));
    _Atomic uint64_t release;
    int err;
    int node;              /* job node index */
    int n;                 /* members on that node */
    int *members;          /* their comm ranks, ascending: members[0] leads */
    uint64_t seq;          /* rounds the leader has run (message tags) */
    struct tm_tplan *plan; /* the leader's walk of the tree file for its last root (leader only) */
    _Atomic(struct tm_cprog *) prog; /* non-blocking rounds' runner, made on first use */
};

/* A tree file as one communicator sees it, loaded by the first leader that needs it and
 * immutable once installed. */
struct tm_ctree {
    int err;  /* 0, or -EINVAL: the file is rejected (msg says why) */
    int fits; /* the file has as many ranks as the communicator: its tree is used */
    struct tm_tree_file t;
    char msg[320];
};

/* Algorithms chosen by configuration, read when the hierarchy is built: the job's environment
 * (TMPI_COLL_BCAST, _REDUCE, _ALLREDUCE, _TREE_FILE) first, then tmpid.conf [mpi] coll_* (the
 * agent's settings by key, svc_conf.h); both names come from coll_algo.h's table.
 * AUTO: the tree file if one is given and fits, else by size (coll_algo.h tm_coll_select).  A bad
 * value makes every Bcast, Reduce and Allreduce on the communicator fail with MPI_ERR_ARG and msg
 * (a typo must not silently run something else); Barrier and communicator creation still work. */
struct tm_cconf {
    int algo[TM_COLL_COUNT]; /* per collective (coll_algo.h): its value, 0: auto */
    int err;                 /* 0 or -EINVAL */
    char msg[200];
    int world;       /* the communicator is MPI_COMM_WORLD (a tree file must fit it) */
    char *tree_path; /* NULL: no tree file */
    _Atomic(struct tm_ctree *) tree;
};

/* Immutable once installed (groups' counters aside). */
struct tm_chier {
    int ngroups;         /* nodes the communicator spans */
    int contiguous;      /* each group is a run of consecutive comm ranks (rank order = group
                          * order), so partial results combine in rank order */
    int *group_of;       /* comm rank -> group */
    int nnodes;          /* of the job */
    int *group_of_node;  /* job node -> group, -1 if no member there */
    struct tm_cgroup *g; /* ngroups, ordered by leader rank */
    struct tm_cconf conf;
};

/* A leader's view while it runs the node's share of one round: on the leader's own thread
 * (blocking rounds), or on the node's runner of non-blocking rounds (struct tm_cprog, which
 * acts for the leader: its messages leave and arrive under the leader's rank). */
struct tm_cnet {
    struct tm_rank *me;  /* the thread running it (leader, or the runner's own rank state) */
    struct tm_rank *box; /* the leader: whose mailbox receives the other leaders' messages */
    struct tm_comm *c;
    struct tm_chier *h;
    int gi;            /* the leader's group */
    int kind;          /* MPIX_COLL_* (counters) */
    uint32_t seq;      /* this round's number (tags) */
    struct tm_comm xc; /* c with the round's context (what tm_send / tm_recv match on) */
    struct tm_commref xcr;
    const struct tm_cargs *nbargs; /* non-blocking: the arguments by comm rank; NULL: slots */
    struct tm_tplan **plan;        /* where the tree-file walk for the last root is kept */
};

/* Fills x for group gi's share of a round numbered seq of kind, on context ctx. */
void tm_cnet_setup(struct tm_cnet *x, struct tm_rank *me, struct tm_comm *c, struct tm_chier *h,
                   int gi, int kind, uint32_t seq, int ctx);

/* The hierarchy of c, built on first use; NULL when out of memory. */
struct tm_chier *tm_chier_get(struct tm_rank *me, struct tm_comm *c);
void tm_chier_free(struct tm_chier *h);

/* 1 if c's members sit on more than one node. */
static inline int tm_coll_net_spans(struct tm_rank *me, struct tm_comm *c)
{
    if (__builtin_expect(!me->info || me->info->nnodes <= 1, 1)) return 0;
    struct tm_chier *h = tm_chier_get(me, c);
    return !h || h->ngroups > 1; /* NULL: let the round report -ENOMEM */
}

/* One round (steps 1-3 above) for member cr of a spanning communicator: fn (NULL: a barrier)
 * runs on the leader with the local members' arguments in their slots.  Returns fn's result
 * on every member of the group (0, or a negative errno). */
int tm_chier_round(struct tm_rank *me, struct tm_commref *cr, int kind,
                   int (*fn)(struct tm_cnet *x));

/* The local members' arguments (valid inside fn). */
static inline const struct tm_cargs *tm_cnet_arg(const struct tm_cnet *x, int crank)
{
    return x->nbargs ? &x->nbargs[crank] : x->c->coll.slot[crank].args;
}

/* ---- non-blocking rounds across nodes (coll_net_nb.c) ----
 *
 * A member's MPI_I* call on a spanning communicator copies its arguments into its node's round
 * and returns.  When the node's last member has arrived, the round goes to the group's runner:
 * a thread of libtmpi's own (one per communicator and node, started on first use) that runs
 * the leader's share (tm_calgo.net) exactly as a blocking round would, on a context of its
 * own, and completes the members' requests.  So the operation progresses while every member
 * computes, waits on something else or sends point-to-point messages: nobody has to poll. */
struct tm_cprog;

/* Member cr of a spanning communicator starts algorithm al with arguments a; *ret_req
 * completes when its node's share is done.  0 or a negative errno. */
int tm_cnet_nb_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                     const struct tm_calgo *al, const struct tm_cargs *a,
                     struct tm_request **ret_req);
/* The next runner of the job's list (job teardown walks it). */
struct tm_cprog *tm_cprog_next(struct tm_cprog *p);
/* Stops the runner's thread once its queued rounds are done (communicator freed, job end). */
void tm_cprog_stop(struct tm_cprog *p);
/* A group's runner and the runners of its persistent collectives (communicator freed). */
void tm_cprog_stop_group(struct tm_cprog *p);
/* MPI_Request_free of persistent collective pid (comm.h npinit) by member cr: when every
 * member of its node's group has freed it, its runner's thread ends, so a job holds a thread
 * per live persistent collective across nodes, not one per *_init it ever made. */
void tm_cnet_nb_pfree(struct tm_commref *cr, uint64_t pid);
/* Job end, after every mailbox is gone: frees the job's runners (their envelopes may have
 * been in those mailboxes until then). */
void tm_cprog_free_all(struct tm_job *j);
/* Wakes every runner of the job (job cancelled). */
void tm_cprog_wake_all(struct tm_job *j);
static inline const struct tm_cgroup *tm_cnet_mine(const struct tm_cnet *x)
{
    return &x->h->g[x->gi];
}

/* ---- leader-to-leader messages (the collective channel) ---- */

/* Starts sending bytes to group dst's leader as step `step` of this round.  req lives until
 * tm_cnet_wait(req) returns.  0 or a negative errno. */
int tm_cnet_isend(struct tm_cnet *x, int dst, int step, const void *buf, size_t bytes,
                  struct tm_request *req);
/* Receives step `step` of this round from group src's leader into buf (cap bytes); the bytes
 * that came in *ret_bytes (may be NULL).  Blocking.  -EMSGSIZE if more came than cap. */
int tm_cnet_recv(struct tm_cnet *x, int src, int step, void *buf, size_t cap, size_t *ret_bytes);
/* Waits for a send of tm_cnet_isend; 0 or its error. */
int tm_cnet_wait(struct tm_cnet *x, struct tm_request *req);

/* ---- the leaders' algorithms (coll_hier.c), one per kind; tm_calgo.net ---- */
int tm_hier_barrier(struct tm_cnet *x);
int tm_hier_bcast(struct tm_cnet *x);
int tm_hier_reduce(struct tm_cnet *x);
int tm_hier_allreduce(struct tm_cnet *x);
/* For communicator creation: bytes from group root's leader to every leader; and every
 * leader's block to every leader (all: ngroups blocks of cap bytes, lens: their lengths). */
int tm_hier_bcast_bytes(struct tm_cnet *x, int root, void *buf, size_t bytes);
int tm_hier_allgather_bytes(struct tm_cnet *x, const void *mine, size_t bytes, void *all,
                            size_t cap, size_t *lens);

/* ---- tree files (coll_net.c loads, coll_treerun.c runs) ---- */

/* The tree file for a collective whose algorithm is AUTO (explicit 0) or FILE (explicit 1):
 * *ret is NULL when there is none or it does not fit this communicator (then the usual
 * algorithm runs).  -EINVAL when the file is rejected, or (explicit, MPI_COMM_WORLD) does not
 * fit; tm_chier_error() says why. */
int tm_chier_tree(struct tm_cnet *x, int explicit_, const struct tm_tree_file **ret);
/* Reads the job's collective settings as a communicator across nodes will (TMPI_COLL_*, then
 * tmpid.conf [mpi] coll_*): 0, or -EINVAL with what is wrong in msg.  MPI_Init, MPI_Init_thread
 * and MPI_Session_init call it, so that a bad setting is reported by the call that starts MPI
 * for the rank, not by whichever collective happens to run first across nodes.  A tree file is
 * only named here; its contents are checked where it is used (it must fit the communicator). */
int tm_coll_conf_check(const struct tmpi_svc *svc, char *msg, size_t len);
/* Why a collective on c failed with -EINVAL because of its configuration; NULL if it did not. */
const char *tm_chier_error(struct tm_rank *me, struct tm_comm *c);

/* Bcast along exactly the edges of tree t (re-rooted at the root): edges between two ranks of
 * this node are copies between their buffers, edges to or from another node are leader
 * messages.  0 or a negative errno. */
int tm_treerun_bcast(struct tm_cnet *x, const struct tm_tree_file *t);
/* Reduce along t to the root (Reduce) or to t's root and back down (Allreduce).  Returns 1,
 * having done nothing, if the op does not commute and some subtree does not hold consecutive
 * ranks (rank order cannot be kept: the caller runs its usual algorithm); else 0 or a
 * negative errno. */
int tm_treerun_reduce(struct tm_cnet *x, const struct tm_tree_file *t, int all);
void tm_tplan_free(struct tm_tplan *p);

#endif
