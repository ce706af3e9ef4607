/* coll.h — intra-node collectives through shared memory (not built on point-to-point).
 *
 * One engine runs every collective.  A collective is an algorithm (struct tm_calgo): it splits
 * the work into independent parts (a block of the result, a slice of the elements) that may
 * run in any order, on any member's thread, at the same time.  Each member fills a struct
 * tm_cargs with its arguments and publishes it; parts read every member's arguments and move
 * data straight between the members' buffers (ranks are threads of one process), through
 * tm_dt_copy() (typecore/type_copy.h) so that derived datatypes plug in without touching an
 * algorithm.
 *
 *  - Blocking (tm_coll_start with req == NULL): publish the arguments pointer in the member's
 *    slot, counting barrier, member k runs parts k, k+n, ... (its own block, or slice k),
 *    counting barrier so no buffer goes before every part is done.  No allocation, no lock.
 *  - Non-blocking (req != NULL): coll_nb.c.  Members register their arguments in a round; the
 *    last to arrive runs every part and completes every member's request.
 *
 * Two levels (seed 000 §3.3-3.4): these parts are the intra-node phase.  When communicators
 * span nodes, the leader of each node runs the inter-node phase between two intra-node phases
 * (coll_net.h says where and how). */
#ifndef TMPI_LIBCLIENT_COLL_H
#define TMPI_LIBCLIENT_COLL_H

#include <limits.h>
#include <stddef.h>

#include "comm.h"
#include "type.h"
#include "type_copy.h"
#include "userop.h"

struct tm_rank;
struct tm_cnet;

/* Block layouts of the v and w variants. */
enum tm_clayout {
    TM_CL_UNIFORM, /* block j: count elements at j * count */
    TM_CL_V,       /* block j: counts[j] elements at displs[j] elements */
    TM_CL_W,       /* block j: counts[j] elements of types[j] at displs[j] bytes */
};

/* One member's arguments, read by other members' threads while the operation runs (the
 * member publishes it before it arrives, and keeps it unchanged until every part is done). */
struct tm_cargs {
    const void *sbuf; /* input; the entry point resolves MPI_IN_PLACE (in_place says so) */
    void *rbuf;
    int scount, rcount;
    const struct tm_type *stype, *rtype;
    enum tm_clayout slay, rlay;
    const int *scounts, *sdispls, *rcounts, *rdispls; /* v and w variants */
    const struct tm_type **stypes, **rtypes;          /* w variant: one per peer */
    int in_place;
    int root;                /* rooted operations; -1: the result goes to every member */
    size_t count;            /* reductions: elements combined */
    size_t roff;             /* reduce-scatter: first element of this member's block */
    struct tm_opref op;      /* reductions: this member's op (its own function, userop.h) */
    MPI_Datatype dth;        /* this member's handle of the type (what a user function gets) */
    void *own;               /* memory this call allocated (in-place snapshot, type arrays) */
    struct tm_cstage *stage; /* staged copy of non-contiguous arguments (coll_stage.c) */
};

/* Who runs a part, and where the members' arguments are. */
struct tm_cwork {
    struct tm_rank *me;    /* the thread running the part */
    int wrank;             /* its rank in the communicator */
    int n;                 /* members */
    struct tm_slot *slot;  /* blocking: slot[k].args */
    struct tm_cargs *args; /* non-blocking: args[k] */
};

static inline const struct tm_cargs *tm_cw_arg(const struct tm_cwork *w, int k)
{
    return w->slot ? w->slot[k].args : &w->args[k];
}

/* Reductions and scans split the elements into slices, one part each: */
#define TM_SLICE_MIN_BYTES 4096u    /* smaller slices cost more in sharing than they save */
#define TM_CHUNK_BYTES (16u * 1024) /* one chunk of a slice stays in L1 while it is combined */

/* Slice length in elements for count elements of extent ext over n members. */
static inline size_t tm_slice_len(size_t count, size_t ext, int n)
{
    size_t per = (count + (size_t)n - 1) / (size_t)n;
    size_t min_per = (TM_SLICE_MIN_BYTES + ext - 1) / ext;
    if (per < min_per) per = min_per;
    return per ? per : 1;
}

/* Number of slices of the calling member's receive count (an nparts). */
static inline size_t tm_cw_slices(const struct tm_cwork *w)
{
    const struct tm_cargs *a = tm_cw_arg(w, w->wrank);
    if (!a->count || !a->rtype->extent) return 0; /* zero-size types hold no data */
    size_t per = tm_slice_len(a->count, a->rtype->extent, w->n);
    return (a->count + per - 1) / per;
}

struct tm_calgo {
    int kind; /* MPIX_COLL_* (counters) */
    /* Number of parts; the same whichever member computes it. */
    size_t (*nparts)(const struct tm_cwork *w);
    /* Runs part i: 0, or -EMSGSIZE (truncation) / -ENOMEM. */
    int (*part)(const struct tm_cwork *w, size_t i);
    /* Across nodes: a leader's share of the operation for its node (coll_net.h); NULL: not
     * available across nodes (-ENOSYS). */
    int (*net)(struct tm_cnet *x);
    /* Blocking, on one node, more than one member: a path with less synchronisation than the
     * barrier-and-parts engine, or NULL.  Returns 0 / a negative errno, or 1 when it does not
     * take this call (then the engine runs it; every member decides alike). */
    int (*direct)(struct tm_rank *me, struct tm_commref *cr, struct tm_cargs *a);
};

/* Wakes every member of c that announced sleep (a load per member, a syscall per sleeper). */
void tm_coll_wake_members(struct tm_rank *me, struct tm_comm *c);
/* Waits until *ctr >= target. */
void tm_coll_wait_ctr(struct tm_rank *me, _Atomic uint64_t *ctr, uint64_t target);
/* Arrives at cr's next counting barrier (tm_coll_barrier), numbered *ret_k; 1 if this member
 * was the last to arrive (every member's earlier stores are then visible to it). */
int tm_coll_arrive(struct tm_commref *cr, uint64_t *ret_k);

void tm_coll_barrier(struct tm_rank *me, struct tm_commref *cr);

/* Runs algorithm al with this member's arguments a: blocking if req is NULL, else starts it
 * and returns a request in *req.  Returns MPI_SUCCESS or the error class, already reported
 * through comm's error handler under the name fn. */
int tm_coll_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                  const struct tm_calgo *al, struct tm_cargs *a, MPI_Request *req);

/* Non-blocking engine (coll_nb.c). */
int tm_coll_nb_init(struct tm_coll *co);
void tm_coll_nb_fini(struct tm_coll *co);
int tm_coll_nb_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm,
                     const struct tm_calgo *al, const struct tm_cargs *a,
                     struct tm_request **ret_req);
/* Holds the derived types of a member's arguments for a non-blocking operation (n members). */
void tm_cargs_hold(const struct tm_cargs *a, int n);
/* Releases what a finished operation held for one member's arguments (types, own memory). */
void tm_cargs_release(struct tm_cargs *a, int held);

/* A round of a non-blocking collective: the k-th (seq) on a communicator, with a copy of the
 * arguments and the request of every member that has arrived (args/req indexed by comm rank;
 * req[k] NULL: not arrived, or not on this node).  Shared by coll_nb.c and coll_net_nb.c. */
struct tm_nbround {
    struct tm_nbround *next; /* the owner's lists (its lock) */
    uint64_t seq;
    int n, arrived;
    const struct tm_calgo *al;
    struct tm_cargs *args;   /* n */
    struct tm_request **req; /* n */
};
struct tm_nbround *tm_nbround_new(int n, uint64_t seq, const struct tm_calgo *al);
void tm_nbround_free(struct tm_nbround *r);
/* With the lock of the list live held: registers member cr (arguments a, request q) in the
 * round numbered cr->nnbc on live, made if missing (one entry per member of cr's
 * communicator).  Returns 1 with the round unlinked into *ret when need members have arrived,
 * 0 while others are still to come, -ENOMEM (q is then completed and freed). */
int tm_nbround_join(struct tm_nbround **live, struct tm_rank *me, struct tm_commref *cr,
                    const struct tm_calgo *al, const struct tm_cargs *a, struct tm_request *q,
                    int need, struct tm_nbround **ret);
/* Releases the arrived members' arguments, completes their requests with MPI error class cls
 * (waking their owners) and frees r. */
void tm_nbround_finish(struct tm_nbround *r, int cls);
/* Releases the arrived members' arguments and frees r; their requests never complete. */
void tm_nbround_abandon(struct tm_nbround *r);

/* ---- coll_fin.c: MPI_Finalize's rendezvous ---- */
/* Waits until every member of cr (MPI_COMM_WORLD on one node) is in MPI_Finalize: 0; or
 * -EPROTO, with why filled, when a member waits in a collective this one never joins. */
int tm_coll_finalize_sync(struct tm_rank *me, struct tm_commref *cr, char *why, size_t len);

/* ---- coll_stage.c: non-contiguous datatypes on communicators that span nodes ---- */
struct tm_cstage;
/* 1 if a names a type that is not moved as plain bytes (n: the communicator's size). */
int tm_cargs_noncontig(const struct tm_cargs *a, int n);
/* 1 if a names a type whose data lies outside [0, extent) of its element: a negative extent
 * (ub < lb), absolute addresses (MPI_BOTTOM), data below lb.  Staged on every communicator:
 * the engine's scratch buffers and slices hold count * extent bytes from the buffer up. */
int tm_cargs_outside(const struct tm_cargs *a, int n);
/* Fills *ret with a copy of a whose non-contiguous types are packed twins and whose buffers
 * are staging buffers holding the blocks collective kind uses at member rank (of n), packed;
 * ret->stage owns them (and holds a's types).  0, -ENOMEM or -EINVAL. */
int tm_cstage_new(int kind, int rank, int n, const struct tm_cargs *a, struct tm_cargs *ret);
/* When the collective is done (ok: successfully), unpacks the blocks it wrote into the
 * program's buffers and frees the stage.  No-op if staged->stage is NULL. */
void tm_cstage_finish(struct tm_cargs *staged, int ok);

/* MPI error class of a collective's negative errno (0: MPI_SUCCESS). */
int tm_coll_errclass(int err);

/* A per-rank scratch buffer of at least bytes (owner-only, kept for the next call). */
void *tm_coll_scratch(struct tm_rank *me, size_t bytes);

/* ---- argument checks shared by the entry points (report through tm_err, return class) ---- */

/* count >= 0, a valid committed type, a buffer when count > 0 (MPI_IN_PLACE never counts as
 * a buffer here: the caller decides where it is allowed). */
int tm_coll_check_buf(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                      const void *buf, MPI_Count count, MPI_Datatype dt,
                      const struct tm_type **ret_t);
/* Inter-communicator collectives run over int-count point-to-point calls: a large-count (_c)
 * call on one takes at most this many elements. */
#define TM_INTER_COUNT_MAX INT_MAX
int tm_coll_check_root(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                       int root);
/* Resolves op for type t: MPI_ERR_OP if invalid, not defined on t, or REPLACE/NO_OP (which
 * MPI allows in RMA only). */
int tm_coll_check_op(struct tm_rank *me, MPI_Comm comm, const char *fn, MPI_Op op,
                     const struct tm_type *t, struct tm_opref *ret);
/* counts[k] >= 0 for k < n (and displs non-NULL); the arrays are read up front so a bad one
 * fails before any member moves data. */
int tm_coll_check_counts(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                         const int *counts, const int *displs, int n);

/* Every entry point starts here: the calling rank and the communicator. */
#define TM_COLL_ENTRY(fn, comm)                                                                    \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);                                         \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);      \
    /* the intra-communicator of two jobs (MPI_Intercomm_merge, net/xjob.h): the engine's          \
     * algorithms reach every member through this node's memory, so none run on it yet */          \
    if (TM_UNLIKELY(cr->c->xjob && !cr->c->inter))                                                 \
        return tm_err(me, comm, MPI_ERR_COMM, fn,                                                  \
                      "no collectives yet on a communicator with ranks of two jobs "               \
                      "(MPI_Intercomm_merge of a connect)");

#define TM_COLL_CHECK(expr)                                                                        \
    do {                                                                                           \
        int e_ = (expr);                                                                           \
        if (TM_UNLIKELY(e_ != MPI_SUCCESS)) return e_;                                             \
    } while (0)

#endif
