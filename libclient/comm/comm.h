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

#include <stdatomic.h>
#include <stdint.h>

#include "mpi.h"

struct tm_rank;
struct tm_job;
struct tm_cargs;
struct tm_coll_nb;
struct tm_chier;
struct tm_topo;

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
};

/* Immutable after creation except coll and refs. */
struct tm_comm {
    int ctx;
    int size;
    int32_t *world_of; /* comm rank -> world rank; NULL: identity (MPI_COMM_WORLD) */
    _Atomic int refs;  /* members that have not freed it; the last one frees */
    int builtin;       /* world and self: not freed by Comm_free */
    struct tm_coll coll;
    _Atomic(struct tm_topo *) topo; /* virtual topology or NULL (topo.h says who writes it) */
};

struct tm_commref {
    struct tm_comm *c; /* NULL: free handle */
    int rank;          /* the owner's rank in c */
    MPI_Errhandler eh;
    uint64_t nbarrier; /* barriers this rank has completed on c */
    uint64_t nnbc;     /* non-blocking collectives this rank has started on c */
    uint64_t nbcast;   /* blocking Bcasts on c run by bcast_direct (coll.c) */
};

struct tm_commtab {
    struct tm_commref *v; /* owner-only */
    int cap;
};

static inline int tm_comm_world_rank(const struct tm_comm *c, int r)
{
    return c->world_of ? c->world_of[r] : r;
}

int tm_comm_init_shared(struct tm_comm *c, int ctx, int size, int32_t *world_of);
void tm_comm_fini_shared(struct tm_comm *c);
/* Sets up the rank's table with world and self. */
int tm_commtab_init(struct tm_rank *me);
void tm_commtab_destroy(struct tm_rank *me);
/* The rank's entry for handle h, NULL if h is not a live communicator of this rank. */
static inline struct tm_commref *tm_comm_get(struct tm_commtab *t, MPI_Comm h)
{
    if (__builtin_expect(h <= 0 || h >= t->cap, 0)) return NULL;
    struct tm_commref *r = &t->v[h];
    return r->c ? r : NULL;
}

#endif
