/* coll_base.h — what every collective folder shares, below the network collectives (coll_net/)
 * and the engine and entry points (coll/): a member's arguments (struct tm_cargs) and their
 * block addressing, the algorithm record (struct tm_calgo), the rounds of non-blocking
 * collectives (nbround.c), the staging of non-contiguous arguments (coll_stage.c), the
 * counter waits and the error class of a collective's errno (inline, here).
 *
 * coll.h says how the engine runs an algorithm; coll_net.h how the leaders run its share
 * across nodes.  Both read these records, so they sit here, in the lower layer. */
#ifndef TMPI_LIBCLIENT_COLL_BASE_H
#define TMPI_LIBCLIENT_COLL_BASE_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "comm.h"
#include "wait.h"
#include "type.h"
#include "type_copy.h"
#include "userop.h"

struct tm_rank;
struct tm_cnet;
struct tm_request;

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
    MPI_Count scount, rcount; /* uniform layouts: elements per block */
    const struct tm_type *stype, *rtype;
    enum tm_clayout slay, rlay;
    /* v and w variants: MPI_Count counts, MPI_Aint displacements (v: elements, w: bytes), so
     * the _c calls pass theirs whole; the int calls widen theirs into wide */
    const MPI_Count *scounts, *rcounts;
    const MPI_Aint *sdispls, *rdispls;
    const struct tm_type **stypes, **rtypes; /* w variant: one per peer */
    int in_place;
    int root;                /* rooted operations; -1: the result goes to every member */
    size_t count;            /* reductions: elements combined */
    size_t roff;             /* reduce-scatter: first element of this member's block */
    struct tm_opref op;      /* reductions: this member's op (its own function, userop.h) */
    MPI_Datatype dth;        /* this member's handle of the type (what a user function gets) */
    void *own;               /* memory this call allocated (in-place snapshot, type arrays) */
    void *wide;              /* an int call's count and displacement arrays, widened */
    struct tm_cstage *stage; /* staged copy of non-contiguous arguments (coll_stage.c) */
    uint64_t sig;            /* the call: its kind, root and bytes (coll.c call_sig) */
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

/* Block j of a's input: its start, element count (*ret_n) and type (*ret_t). */
static inline const void *tm_cblk_in(const struct tm_cargs *a, int j, size_t *ret_n,
                                     const struct tm_type **ret_t)
{
    switch (a->slay) {
    case TM_CL_V:
        *ret_n = (size_t)a->scounts[j];
        *ret_t = a->stype;
        return tm_dt_at(a->sbuf, (size_t)a->sdispls[j], a->stype);
    case TM_CL_W:
        *ret_n = (size_t)a->scounts[j];
        *ret_t = a->stypes[j];
        return (const unsigned char *)a->sbuf + a->sdispls[j];
    default:
        *ret_n = (size_t)a->scount;
        *ret_t = a->stype;
        return tm_dt_at(a->sbuf, (size_t)j * (size_t)a->scount, a->stype);
    }
}

/* Block j of a's output. */
static inline void *tm_cblk_out(const struct tm_cargs *a, int j, size_t *ret_n,
                                const struct tm_type **ret_t)
{
    switch (a->rlay) {
    case TM_CL_V:
        *ret_n = (size_t)a->rcounts[j];
        *ret_t = a->rtype;
        return tm_dt_at(a->rbuf, (size_t)a->rdispls[j], a->rtype);
    case TM_CL_W:
        *ret_n = (size_t)a->rcounts[j];
        *ret_t = a->rtypes[j];
        return (unsigned char *)a->rbuf + a->rdispls[j];
    default:
        *ret_n = (size_t)a->rcount;
        *ret_t = a->rtype;
        return tm_dt_at(a->rbuf, (size_t)j * (size_t)a->rcount, a->rtype);
    }
}

/* ---- the counter waits and the error class ---- */

/* Waits until *ctr >= target.  Inline: the one-node barrier and Bcast wait here, and were
 * compiled with it inlined before it moved out of coll.c (docs/bench/ANALYSIS.md "Layers"). */
struct tm_coll_ctr_wait {
    _Atomic uint64_t *ctr;
    uint64_t target;
};
static inline int tm_coll_ctr_cond(void *arg)
{
    struct tm_coll_ctr_wait *w = arg;
    return atomic_load_explicit(w->ctr, memory_order_seq_cst) >= w->target;
}
static inline void tm_coll_wait_ctr(struct tm_rank *me, _Atomic uint64_t *ctr, uint64_t target)
{
    struct tm_coll_ctr_wait w = {ctr, target};
    tm_wait(me, tm_coll_ctr_cond, &w);
}

/* MPI error class of a collective's negative errno (0: MPI_SUCCESS).  Inline, as it was in
 * coll.c's entry points. */
static inline int tm_coll_errclass(int r)
{
    switch (r) {
    case 0:
        return MPI_SUCCESS;
    case -EMSGSIZE:
        return MPI_ERR_TRUNCATE;
    case -ENOMEM:
        return MPI_ERR_NO_MEM;
    case -EINVAL:
        return MPI_ERR_ARG;
    case -ENOSYS:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case -EPROTO: /* the members came with different calls (coll/coll.h tm_coll_in_step) */
        return MPI_ERR_OTHER;
    default:
        return MPI_ERR_INTERN;
    }
}

/* Frees what a member's arguments allocated (own, wide). */
static inline void tm_cargs_free_own(struct tm_cargs *a)
{
    free(a->own);
    free(a->wide);
    a->own = a->wide = NULL;
}

/* ---- nbround.c: non-blocking rounds ---- */

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
 * round numbered cr->pround (a persistent start), else cr->nnbc, on live, made if missing
 * (one entry per member of cr's communicator).  Returns 1 with the round unlinked into *ret
 * when need members have arrived, 0 while others are still to come, -ENOMEM (q is then
 * completed and freed). */
int tm_nbround_join(struct tm_nbround **live, struct tm_rank *me, struct tm_commref *cr,
                    const struct tm_calgo *al, const struct tm_cargs *a, struct tm_request *q,
                    int need, struct tm_nbround **ret);
/* Releases the arrived members' arguments, completes their requests with MPI error class cls
 * (waking their owners) and frees r. */
void tm_nbround_finish(struct tm_nbround *r, int cls);
/* Releases the arrived members' arguments and frees r; their requests never complete. */
void tm_nbround_abandon(struct tm_nbround *r);

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

#endif
