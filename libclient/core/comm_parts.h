/* comm_parts.h — what struct tm_rank and struct tm_job (job.h) embed of the communicators: a
 * communicator's shared part with its collective state (MPI_COMM_WORLD's and MPI_COMM_SELF's
 * are the job's and the rank's own), the rank's handle table and the job's context ids; types
 * only.  comm/ owns them (comm.h, ctx.h, where their functions are); they sit here so that
 * the records hold them by value without core/ seeing comm/'s functions. */
#ifndef TMPI_LIBCLIENT_COMM_PARTS_H
#define TMPI_LIBCLIENT_COMM_PARTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct tm_cargs;
struct tm_coll_nb;
struct tm_chier;
struct tm_commref;
struct tm_ctx_wait;

/* Blocking Bcast on one node (coll.c bcast_direct) with this member as the root: a ring of
 * rounds.  A round of up to TM_BCAST_EAGER bytes travels in its entry (the root returns at
 * once); a larger one publishes the root's arguments and the root waits for the copies.  The
 * root reuses an entry once every member has read its last round (reads counts them over the
 * entry's life, uses the rounds the root put in it). */
#define TM_BCAST_RING 8
#define TM_BCAST_EAGER 256
struct tm_bcast_entry {
    _Atomic uint64_t gen;        /* the communicator's Bcast number of the round in it */
    _Atomic uint64_t reads;      /* members that took a round from it, over its life */
    uint64_t uses;               /* rounds the root put in it (the root only) */
    const struct tm_cargs *args; /* NULL: the round's data is in data */
    size_t bytes;                /* packed bytes in data */
    uint64_t sig;                /* the root's call (tm_cargs.sig) of the round in it */
    unsigned char data[TM_BCAST_EAGER] __attribute__((aligned(64)));
} __attribute__((aligned(64)));
struct tm_bcast_ring {
    struct tm_bcast_entry e[TM_BCAST_RING];
};

/* Small blocking Allgather on one node (coll_gather.c allgather_direct): two stages, the round
 * that ends barrier number k using stage k % 2.  A member packs its block into its place in the
 * stage before it arrives and copies every place out after the barrier; it writes stage k % 2
 * again in round k + 2 only after barrier k + 1, which every member reaches after copying
 * round k out.  A place is TM_AGATHER_PLACE(bytes) long: the packed length its member sent,
 * then the block, rounded to a cache line so that members pack into lines of their own. */
#define TM_AGATHER_DIRECT_MAX 8192u /* bytes of a stage: n places of the packed block */
struct tm_agather_stage {
    unsigned char data[2][TM_AGATHER_DIRECT_MAX] __attribute__((aligned(64)));
};
#define TM_AGATHER_PLACE(bytes) (((bytes) + sizeof(uint64_t) + 63u) & ~(size_t)63u)

/* Per-member slot of a collective: written by its member (or by the leader in Comm_split)
 * before it arrives at the collective's barrier, read by others after they pass it. */
struct tm_slot {
    const void *in;
    void *out;
    int a, b;              /* Comm_split: color, key in; new rank out in b */
    void *p;               /* Comm_dup/split: the new communicator */
    struct tm_cargs *args; /* coll_base.h: the member's arguments to a blocking collective */
    /* The call (tm_cargs.sig) the member arrived with at barrier number stamp_k[k & 1]
     * (coll.c tm_coll_stamp): by parity, since a member that left barrier k may stamp k + 1
     * while others still read k's, never k + 2.  Atomic: an out-of-step member's stamp may
     * race another's read of an older one. */
    _Atomic uint64_t stamp_k[2], stamp_sig[2];
    /* Blocking Bcast on one node with this member as the root: made by the first member
     * that needs it (a compare-and-swap), freed with the communicator. */
    struct tm_bcast_ring *_Atomic bring;
};

/* Collective state, shared by the members (seed 000 §"collectives through shared memory").
 * arrive counts barrier arrivals over the communicator's life (never reset), so the k-th
 * barrier is complete when arrive >= k * size and a fast rank entering the next barrier cannot
 * confuse a slow one still leaving this one. */
struct tm_coll {
    _Atomic uint64_t arrive __attribute__((aligned(64)));
    struct tm_slot *slot; /* size entries */
    /* Small blocking Allreduce (coll_reduce.c allreduce_direct): the result of the round that
     * ended barrier number k (and its error) once res_gen >= k; written by that round's last
     * arriver only. */
    _Atomic uint64_t res_gen;
    void *res;
    size_t res_cap;
    _Atomic int res_err; /* also set by members that found the round out of step (coll.c) */
    /* Calls on the communicator that returned an error before they started, on any member
     * (a failed argument check under MPI_ERRORS_RETURN).  Such a call takes no part (MPI
     * programs call a collective on one member only to see it refused, MPICH's errors/coll
     * tests), so when the others did call it the members are out of step: the failing one's
     * next call meets theirs.  While 0 nothing is compared; from then on the members compare
     * their calls (kind, root, bytes) where they meet (coll.c tm_coll_in_step), and a round
     * of different calls fails on each member instead of reading another call's buffers. */
    _Atomic uint64_t failures;
    /* Small blocking Allgather (above): made by the first member that needs it (a
     * compare-and-swap), freed with the communicator. */
    struct tm_agather_stage *_Atomic agather;
    struct tm_coll_nb *nb; /* non-blocking collectives in flight (coll_nb.c) */
    /* Members grouped by node when they span several (coll_net.h); built by the first member
     * that needs it and installed with a compare-and-swap, freed with the communicator. */
    _Atomic(struct tm_chier *) hier;
    /* MPI_Finalize's rendezvous on this node (coll_fin.c): apart from arrive, so that it
     * never pairs with a peer's collective. */
    _Atomic uint64_t fin_arrive;
};

/* Immutable after creation except coll and refs.  One per node for the members on that node;
 * an inter-communicator has one per node and side (its two groups share the context id, and
 * each side's copy has its own group as size/world_of). */
struct tm_comm {
    int ctx;
    int size;
    int32_t *world_of; /* comm rank -> world rank; NULL: identity (MPI_COMM_WORLD) */
    _Atomic int refs;  /* members that have not freed it; the last one frees */
    int builtin;       /* world and self: not freed by Comm_free */
    int ctx_reuse;     /* ctx is a one-node id that goes back to ctx.c when this copy goes */
    /* Inter-communicators: the remote group (remote rank -> world rank); remote_size 0 and
     * remote_of NULL on intra-communicators. */
    int inter;
    int remote_size;
    int32_t *remote_of;
    /* Members of other jobs (net/xjob.h): its receives always go through the mailbox's posted
     * queue, where a peer's end finds them. */
    int xjob;
    /* Topology (Cart/Graph/Dist_graph), owned by the topology code: freed through topo_free
     * with the communicator; NULL when it has none. */
    void *topo;
    void (*topo_free)(void *topo);
    struct tm_coll coll;
};

/* The rank's handles: chunks that never move once made, so a lookup takes no lock; lock
 * serialises making and freeing handles (MPI_THREAD_MULTIPLE).  Chunk c holds
 * TM_COMMTAB_FIRST << c handles, so a rank that uses a few communicators pays for a few
 * entries and a small directory (at 16,384 ranks per node the table is part of every rank's
 * fixed cost), while the directory still reaches TM_COMMTAB_MAX handles.
 * dir[c]: written once under lock (release), read without it (acquire). */
#define TM_COMMTAB_FIRST_SHIFT 4
#define TM_COMMTAB_FIRST (1 << TM_COMMTAB_FIRST_SHIFT)
#define TM_COMMTAB_CHUNKS 16
#define TM_COMMTAB_MAX (((1 << TM_COMMTAB_CHUNKS) - 1) * TM_COMMTAB_FIRST) /* 1,048,560 */
struct tm_commtab {
    _Atomic(struct tm_commref *) dir[TM_COMMTAB_CHUNKS];
    pthread_mutex_t lock;
    int cap;      /* handles in made chunks (lock) */
    int low_free; /* no free handle below it (lock) */
    int inited;
};

struct tm_ctxs {
    pthread_mutex_t lock;
    int *free; /* reusable one-node ids */
    int nfree, cap;
    struct tm_ctx_wait *meet; /* communicators whose local members are still arriving */
};

#endif
