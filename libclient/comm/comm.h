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

#include "comm_parts.h"
#include "mpi.h"

struct tm_rank;
struct tm_job;
struct tm_cargs;
struct tm_coll_nb;
struct tm_chier;

struct tm_attr;

struct tm_commref {
    struct tm_comm *c; /* NULL: free handle */
    int rank;          /* the owner's rank in c (in the local group of an inter-communicator) */
    MPI_Errhandler eh;
    uint64_t nbarrier; /* barriers this rank has completed on c */
    uint64_t nnbc;     /* non-blocking collectives this rank has started on c */
    /* Persistent collectives (MPI 4.0 §6.13) are matched in the order of their *_init calls,
     * not of MPI_Start: npinit numbers this rank's inits on c (the same on every member), and
     * pround is the round key (tm_pround_key) of the start under way while MPI_Start issues
     * one through its non-blocking call, 0 otherwise (that call then takes nnbc). */
    uint64_t npinit, pround;
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
    /* collective calls this rank made on c, failed ones too, and the number of the last one
     * that started (coll/coll.h TM_COLL_ENTRY: the others returned before they started) */
    uint64_t ncoll, nstarted;
    /* cede: when the rank ends an MPI_Barrier on c it lets the members it released run first
     * (coll.c PMPI_Barrier), set by an eager Bcast round (the root did not wait) it entered as
     * a member before the root put it in, cleared by one it was the root of, by a round whose
     * root waited, or by one it found in place by itself; ceded: its latest MPI_Barrier on c
     * ended so (a round then found in place is the cede's doing); cede_call: the number
     * (ncoll) of the Bcast that set cede: it holds for the barrier that comes next only */
    int cede, ceded;
    uint64_t cede_call;
};

/* The round key of the k-th start of the persistent collective numbered pid: bit 63 (above
 * every nnbc), then pid, then k modulo 2^24 (a request restarts only once complete, so far
 * fewer of its rounds are ever live at once). */
#define TM_PROUND_BIT (1ull << 63)
static inline uint64_t tm_pround_key(uint64_t pid, uint64_t k)
{
    return TM_PROUND_BIT | (pid << 24 & ~TM_PROUND_BIT) | (k & 0xffffffu);
}
static inline uint64_t tm_pround_pid(uint64_t key)
{
    return (key & ~TM_PROUND_BIT) >> 24;
}
static inline uint32_t tm_pround_start(uint64_t key)
{
    return (uint32_t)(key & 0xffffffu);
}

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
/* c's members (world_of, filled) include ranks of another job (MPI_Comm_create / create_group /
 * idup of a merge of two jobs): its collectives take the path between jobs (coll/coll_xjob.h)
 * and its receives fail when that job ends (net/xjob.h). */
void tm_comm_mark_xjob(struct tm_rank *me, struct tm_comm *c);

#endif
