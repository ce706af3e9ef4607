/* comm.h — communicators.
 *
 * A communicator has a shared part (struct tm_comm: context id, size, member map, collective
 * state), one for all its members, and a per-rank part (struct tm_commref: the caller's rank in
 * it and its error handler) in the rank's handle table.  MPI_Comm handles index that table:
 * 0 null, 1 world, 2 self, then comms the rank created.  The context id is part of every
 * message's match key, so communicators never see each other's traffic; each has its own
 * collective state, so their collectives never mix. */
#ifndef TMPI_LIBCLIENT_COMM_H
#define TMPI_LIBCLIENT_COMM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "mpi.h"

struct tm_rank;
struct tm_job;
struct tm_cargs;
struct tm_coll_nb;
struct tm_chier;

/* Per-member slot of a collective: written by its member (or by the leader in Comm_split)
 * before it arrives at the collective's barrier, read by others after they pass it. */
struct tm_slot {
    const void *in;
    void *out;
    int a, b;              /* Comm_split: color, key in; new rank out in b */
    void *p;               /* Comm_dup/split: the new communicator */
    struct tm_cargs *args; /* coll.h: the member's arguments to a blocking collective */
    /* Blocking Bcast on one node (coll.c bcast_direct), this member as the root: its
     * arguments (bargs) published as its bgen-th Bcast on c; bdone counts the copies the
     * others made from it; bwant is what bdone must reach (the root only). */
    const struct tm_cargs *bargs;
    _Atomic uint64_t bgen, bdone;
    uint64_t bwant;
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
    int res_err;
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
    /* Topology (Cart/Graph/Dist_graph), owned by the topology code: freed through topo_free
     * with the communicator; NULL when it has none. */
    void *topo;
    void (*topo_free)(void *topo);
    struct tm_coll coll;
};

struct tm_attr;

struct tm_commref {
    struct tm_comm *c; /* NULL: free handle */
    int rank;          /* the owner's rank in c (in the local group of an inter-communicator) */
    MPI_Errhandler eh;
    uint64_t nbarrier;     /* barriers this rank has completed on c */
    uint64_t nnbc;         /* non-blocking collectives this rank has started on c */
    uint64_t nbcast;       /* blocking Bcasts on c run by bcast_direct (coll.c) */
    struct tm_attr *attrs; /* attr.h: this rank's attributes on the handle */
    char *name;            /* MPI_Comm_set_name; NULL: none set */
    struct tm_info *hints; /* MPI_Comm_set_info: the hints this rank gave (info.h), or NULL */
    /* Inter-communicators: hidden handles of the same rank for the collectives' traffic
     * between the groups (an inter-communicator on another context) and inside the local
     * group (an intra-communicator); MPI_COMM_NULL on intra-communicators. */
    MPI_Comm coll_inter, coll_local;
    /* Non-blocking collectives on an inter-communicator (coll_inter/inter_nb.c): how many this
     * rank started (their tags), and the local-group collectives they reserved and issued
     * (each is issued in reservation order: the local group's members then start them in the
     * same order, as MPI requires, whatever order the steps before them finish in). */
    uint64_t inb_started, inb_lres, inb_lissued;
    int hidden; /* one of those: not a handle the program was given */
    /* buffered sends (core/bsbuf.h): the handle's own buffer (MPI_Comm_attach_buffer, heap,
     * made on first attach, freed with the handle), and the buffer of the session the
     * communicator was made from (MPI_Comm_create_from_group on a session's group), or NULL */
    struct tm_bsbuf *bsb;
    struct tm_bsbuf *session_bsb;
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

static inline int tm_comm_world_rank(const struct tm_comm *c, int r)
{
    return c->world_of ? c->world_of[r] : r;
}

/* Point-to-point names the remote group on an inter-communicator, the group otherwise. */
static inline int tm_comm_peer_size(const struct tm_comm *c)
{
    return c->inter ? c->remote_size : c->size;
}
static inline int tm_comm_peer_world(const struct tm_comm *c, int r)
{
    return c->inter ? c->remote_of[r] : tm_comm_world_rank(c, r);
}

int tm_comm_init_shared(struct tm_comm *c, int ctx, int size, int32_t *world_of);
void tm_comm_fini_shared(struct tm_comm *c);
/* Sets up the rank's table with world and self. */
int tm_commtab_init(struct tm_rank *me);
void tm_commtab_destroy(struct tm_rank *me);
/* The rank's entry for handle h, NULL if h is not a live communicator of this rank. */
/* The chunk of handle h (0 <= h < TM_COMMTAB_MAX) and h's place in it. */
static inline int tm_commtab_chunk(int h)
{
    return 31 - __builtin_clz((unsigned)h + TM_COMMTAB_FIRST) - TM_COMMTAB_FIRST_SHIFT;
}
static inline int tm_commtab_index(int h, int chunk)
{
    return h + TM_COMMTAB_FIRST - (TM_COMMTAB_FIRST << chunk);
}
static inline struct tm_commref *tm_comm_get(struct tm_commtab *t, MPI_Comm h)
{
    if (__builtin_expect(h <= 0 || h >= TM_COMMTAB_MAX, 0)) return NULL;
    int c = tm_commtab_chunk(h);
    struct tm_commref *v = atomic_load_explicit(&t->dir[c], memory_order_acquire);
    if (__builtin_expect(!v, 0)) return NULL;
    struct tm_commref *r = &v[tm_commtab_index(h, c)];
    return r->c ? r : NULL;
}
/* A user-visible live handle (not one of an inter-communicator's hidden ones). */
static inline struct tm_commref *tm_comm_get_user(struct tm_commtab *t, MPI_Comm h)
{
    struct tm_commref *r = tm_comm_get(t, h);
    return r && !r->hidden ? r : NULL;
}

/* A new handle of the calling rank for c (taking over one reference), rank its rank in c,
 * eh its error handler (a reference is taken on a user handler); MPI_COMM_NULL when out of
 * memory or handles.  Any thread of the rank. */
MPI_Comm tm_commtab_add(struct tm_rank *me, struct tm_comm *c, int rank, MPI_Errhandler eh);
/* Drops handle h: its attributes' delete callbacks run first (a callback's error is
 * returned, as an MPI error class, and the handle stays); then the reference on the shared
 * part, hidden handles of an inter-communicator, name and hints go. */
int tm_commtab_free(struct tm_rank *me, MPI_Comm h);
/* Drops one member's reference; the last one frees c (and gives back its context id). */
void tm_comm_release(struct tm_comm *c);

/* Collective creation over comm (a live handle of me), reporting errors as fn through comm's
 * handler.  Dup copies attributes and hints (hints: these instead of comm's, or NULL). */
struct tm_info;
int tm_comm_dup(struct tm_rank *me, const char *fn, MPI_Comm comm, struct tm_info *hints,
                MPI_Comm *newcomm);
int tm_comm_split(struct tm_rank *me, const char *fn, MPI_Comm comm, int color, int key,
                  MPI_Comm *newcomm);

/* A shared part with a context id from ctx.h; refs: this node's members. */
struct tm_comm *tm_comm_new(int ctx, int ctx_reuse, int size, int32_t *world_of, int refs);

#endif
