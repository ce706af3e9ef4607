/* rma.h — one-sided communication (MPI 3.1 chapter 11): windows, the target-side state every
 * origin of a node shares, and each rank's epochs.
 *
 * Ranks of a job on one node are threads of one process, so a window is plain memory: an
 * origin on the target's node copies straight into (or out of) the target's memory and an
 * accumulate applies element by element with atomic instructions (rma_atomic.c).  For a
 * target on another node the operation travels as a TM_MSG_RMA frame and that node's receive
 * daemon applies it to the window memory in its upcall (rma_net.c), with no involvement of the
 * target rank: true passive-target progress (docs/ARCHITECTURE.md "One-sided communication").
 *
 * Objects:
 *  - struct tm_win: one per window and node, shared by the node's members of the window and
 *    by the node's receive daemons; found by the window's id (the context id of the window's
 *    private communicator, the same on every node) in the job's registry (job->wins).
 *  - struct tm_win_member: one per member rank, immutable after creation, plus (for members
 *    on this node) the target-side lock and dynamic-window state.
 *  - struct tm_winref: a rank's handle (MPI_Win indexes the rank's table), with the rank's
 *    epochs; owner-only. */
#ifndef TMPI_LIBCLIENT_RMA_H
#define TMPI_LIBCLIENT_RMA_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "mpi.h"
#include "op.h"

struct tm_rank;
struct tm_job;
struct tm_type;
struct tm_request;
struct tm_msg_hdr;
struct tm_attr;
struct tm_info;

/* Accumulates that cannot use one atomic instruction per element (long double, the pair
 * types, unaligned elements) take one of these spin locks, chosen by the element's address;
 * local origins and the receive daemon use the same ones, so they exclude each other. */
#define TM_WIN_STRIPES 64
/* Regions one rank may attach to a dynamic window at once (MPI_Win_attach). */
#define TM_WIN_MAX_ATTACH 1024

struct tm_win_region {
    uintptr_t base;
    size_t size;
};

/* A remote origin waiting for a lock on a target of this node (queued by a receive daemon). */
struct tm_win_lockreq {
    struct tm_win_lockreq *next;
    int origin_world, target_world, node, type;
    uint64_t cookie; /* the origin's answer cookie */
};

struct tm_win_member {
    /* immutable after creation */
    int world, node;
    char *base; /* meaningful for members on this node only */
    size_t size;
    MPI_Aint disp_unit; /* MPI_Win_create_c / allocate_c take any positive MPI_Aint */
    /* what the int outputs say (the MPI_WIN_DISP_UNIT attribute, an int in C as in Open MPI
     * and MPICH; MPI_Win_shared_query): the unit, or MPI_UNDEFINED past INT_MAX (MPI 4.1 §5.1
     * gives int outputs that cannot hold the value MPI_UNDEFINED) */
    int disp_unit_int;
    /* The member registered its memory for remote access (svc net_mr_reg): origins on other
     * nodes Put and Get straight into and out of it at raddr + offset under rkey (rma_net.c
     * "Remote memory access"). */
    int rma_ok;
    uint64_t rkey, raddr;
    /* Target side (members on this node).  lockw: 0 free, n > 0 shared holders, -1 exclusive;
     * changed by compare-and-swap by local origins and daemons.  lockq_len: remote requests
     * queued in lockq (under lockq_lock); a releaser reads it after its release and a daemon
     * re-tries after counting itself in, both seq_cst, so no request is left behind. */
    _Atomic int64_t lockw;
    _Atomic int lockq_len;
    pthread_mutex_t lockq_lock;
    struct tm_win_lockreq *lockq, *lockq_tail;
    /* Dynamic windows: what this member attached (regions_lock; origins of this node and
     * daemons look regions up, the member adds and removes them). */
    pthread_mutex_t regions_lock;
    struct tm_win_region *regions;
    int nregions;
    /* PSCW: posts this member received from each target ([target], any thread increments),
     * and completions received as a target (any thread increments). */
    _Atomic uint64_t *posts;
    _Atomic uint64_t completes;
};

struct tm_win {
    int id;             /* context id of the private communicator: the window's name on the wire */
    int size;           /* members */
    int flavor;         /* MPI_WIN_FLAVOR_* */
    struct tm_net *net; /* the job's inter-node state, NULL on one node */
    _Atomic int refs;   /* members of this node that have not freed it (registry lock to 0) */
    struct tm_win_member *m; /* size entries */
    char *shared_seg;        /* Win_allocate_shared: the node's one segment */
    _Atomic uint32_t stripe[TM_WIN_STRIPES];
    /* GET/fetch answers whose payload the socket has not taken yet (the memory they send
     * from must live until then): daemons increment, send completions decrement. */
    _Atomic uint64_t replies_inflight;
    /* Operations the links applied to or answered from this window (release, rma_net.c
     * op_frame): tm_win_target_sync acquires it. */
    _Atomic uint64_t target_seq;
    /* Accumulates of the element types in acc_net (bit 1 << enum tm_basic) go as the
     * transport's atomics, from every origin (rma_acc_net.c), at most acc_max[type] elements
     * each; acc_ordered: the transport keeps one origin's atomics in order.  Immutable. */
    uint64_t acc_net;
    uint32_t acc_max[TM_T__COUNT];
    int acc_ordered;
    struct tm_win *next; /* job registry (job->wins_lock) */
};

/* Orders the calling rank's next accesses to w after every access of the links to it that
 * has completed (a fence's barrier, a Win_sync, a lock of this rank's own window): the
 * messages that make those accesses complete come over other links, which a thread sanitizer
 * cannot follow. */
static inline void tm_win_target_sync(struct tm_win *w)
{
    (void)atomic_load_explicit(&w->target_seq, memory_order_acquire);
    (void)atomic_load_explicit(&w->replies_inflight, memory_order_acquire);
}

/* Remote answers an origin waits for (rma_net.c): one per rank and window, registered in the
 * job's transfer table so a frame names it by cookie. */
struct tm_rma_origin {
    struct tm_rank *owner;
    struct tm_win *w;
    uint64_t cookie;
    _Atomic uint64_t answers; /* lock grants, flush/unlock answers, completed gets (daemons) */
    _Atomic uint64_t sent;    /* payloads the links released (send completions) */
    _Atomic int err;          /* first failure reported by a daemon or a link */
    uint64_t asked;           /* answers asked for (owner) */
    uint64_t sending;         /* payloads handed to the links (owner) */
    /* Remote memory accesses (tm_rma_direct): started (owner) and done (any thread). */
    uint64_t direct_posted;
    _Atomic uint64_t direct_done;
    /* The last PUT or ACC of up to RMA_HOLD_MAX bytes, not sent yet (owner; rma_net.c
     * "Holding back"): it leaves with this rank's next frame or wait on the window, and a
     * flush of its target goes as a bit of it rather than a FLUSH frame of its own.  sent is
     * NULL when nothing is held. */
    struct tm_rma_held {
        int t;
        int32_t tag;
        uint64_t off;
        size_t bytes;
        void *payload; /* what the frame carries: the rank's copy (struct rma_sent's own,
                        * released with the frame) or the caller's buffer */
        void *sent;    /* its struct rma_sent */
    } held;
};

/* A rank's window handle.  Owner-only. */
struct tm_winref {
    struct tm_win *w;
    int rank;      /* the owner's rank in the window */
    MPI_Comm comm; /* private duplicate of the creating communicator */
    MPI_Errhandler eh;
    char name[MPI_MAX_OBJECT_NAME]; /* MPI_Win_set_name is local to the calling rank */
    MPI_Win handle;                 /* this handle's value (error handlers, attribute callbacks) */
    struct tm_attr *attrs;          /* user attributes (comm/attr.h) */
    struct tm_info *info;           /* hints as set (Win_create's info, Win_set_info) */
    void *own_alloc;                /* Win_allocate: this rank's memory, freed with the window */
    void *mr;                       /* its registration for remote access (svc net_mr_reg) */
    /* epochs */
    int fence;     /* a fence epoch is open (the last fence had no NOSUCCEED) */
    int fence_ops; /* RMA calls since that fence */
    int lock_all;
    int nlocks;           /* targets locked with Win_lock */
    uint8_t *lock_of;     /* [target]: 0, or MPI_LOCK_SHARED / MPI_LOCK_EXCLUSIVE */
    int access, exposure; /* PSCW epochs open */
    int *acc_grp, nacc_grp;
    int *exp_grp, nexp_grp;
    uint64_t completes_wanted; /* Win_wait: completions that end the exposure epoch */
    uint64_t *posts_used;      /* [target]: posts earlier Win_starts consumed */
    int acc_nocheck;           /* the open start epoch was opened with MPI_MODE_NOCHECK */
    /* remote targets written since the last flush of them ([target], NULL if single-node) */
    uint8_t *dirty;
    struct tm_rma_origin *org; /* NULL while the window has no member on another node */
};

/* ---- win.c ---- */
/* The rank's handle h, or NULL. */
struct tm_winref *tm_win_ref(struct tm_rank *me, MPI_Win h);
/* The window named id in the job's registry (any thread; NULL if none). */
struct tm_win *tm_win_find(struct tm_job *j, int id);
/* The window rank of world rank `world`, or -1 if it is not a member. */
int tm_win_member_of(const struct tm_win *w, int world);
/* The memory of target member t (on this node) for bytes at disp: NULL if out of the window
 * (dynamic windows: disp is an address inside an attached region). */
char *tm_win_addr(struct tm_win *w, int t, MPI_Aint disp, size_t bytes);
/* The same for a byte offset (dynamic: an address), as operations from other nodes name it. */
char *tm_win_at(struct tm_win *w, int t, uint64_t off, size_t bytes);
/* Frees the rank's table at job end. */
void tm_win_tab_free(struct tm_rank *me);
/* Reports error code on window h (its error handler; fatal ones abort the job). */
int tm_win_err(struct tm_rank *me, struct tm_winref *wr, int code, const char *fn, const char *fmt,
               ...) __attribute__((format(printf, 5, 6)));
/* Looks h up for entry point fn; on failure *ret_err is the reported error. */
struct tm_winref *tm_win_enter(MPI_Win h, const char *fn, int *ret_err);

/* ---- rma_atomic.c: element-wise application, atomic per basic element ---- */
/* target[i] = in[i] op target[i] for n elements of type; if fetch, the old values go there
 * first.  NO_OP only fetches.  in and fetch hold packed elements (tm_basic_psize apart), the
 * target elements in memory (tm_basic_size apart: a padded pair's C struct).  Returns 0 or
 * -EINVAL (op not defined on type). */
int tm_rma_acc_apply(struct tm_win *w, enum tm_opkind op, enum tm_basic type, const void *in,
                     void *target, size_t n, void *fetch);
/* An accumulate over a target datatype's pieces, fed in packed order (the blocks of the type,
 * or the pieces a frame names), with packed operands in and fetch (either may be NULL).  A
 * piece of a padded pair type may hold part of a pair: every pair is applied whole at its
 * struct, found where it starts.  Pieces must not end in the middle of the data's last pair. */
struct tm_rma_acc_walk {
    struct tm_win *w;
    enum tm_opkind op;
    enum tm_basic type;
    size_t es, ps; /* an element's bytes in memory and packed */
    const char *in;
    char *fetch;
    size_t pos;   /* packed bytes fed so far */
    char *run;    /* pairs found and not yet applied: run_n structs from run, */
    size_t run_n; /* their operands from packed byte run_pos */
    size_t run_pos;
    int err;
};
void tm_rma_acc_walk_init(struct tm_rma_acc_walk *k, struct tm_win *w, enum tm_opkind op,
                          enum tm_basic type, const void *in, void *fetch);
void tm_rma_acc_walk_piece(struct tm_rma_acc_walk *k, char *addr, size_t len);
/* Applies what is pending; 0 or the first error of the walk (-EINVAL). */
int tm_rma_acc_walk_end(struct tm_rma_acc_walk *k);
/* *target == *cmp ? *target = *in; the old value to *fetch (one element). */
void tm_rma_cas_apply(struct tm_win *w, enum tm_basic type, const void *in, const void *cmp,
                      void *target, void *fetch);

/* ---- rma_sync_lock.c ---- */
/* The target-side lock of member t (on this node): non-blocking try; release and hand the
 * lock on to queued remote requests. */
int tm_win_lock_try(struct tm_win_member *m, int type);
void tm_win_lock_release(struct tm_win *w, struct tm_win_member *m, int type);
/* 1 if the rank may access target t now (a passive epoch on t or a fence/PSCW epoch). */
int tm_win_epoch_ok(const struct tm_winref *wr, int t);
int tm_win_passive(const struct tm_winref *wr, int t);

/* ---- rma_net.c ---- */
/* Sets up wr->org when the window has members on other nodes; 0 or -ENOMEM. */
int tm_rma_origin_init(struct tm_rank *me, struct tm_winref *wr);
void tm_rma_origin_fini(struct tm_rank *me, struct tm_winref *wr);
enum tm_rma_kind {
    TM_RMA_PUT = 1,
    TM_RMA_GET,
    TM_RMA_ACC,
    TM_RMA_GACC,
    TM_RMA_CAS,
    TM_RMA_LOCK,
    TM_RMA_UNLOCK,
    TM_RMA_FLUSH,
    TM_RMA_ANSWER, /* target -> origin: a grant, a flush/unlock done, or fetched data */
    TM_RMA_POST,   /* PSCW: target -> origin */
    TM_RMA_COMPLETE,
};
/* One side of an operation (origin data or result): count elements of t at buf. */
struct tm_rma_typed {
    void *buf;
    size_t count;
    const struct tm_type *t;
};
/* Starts an operation on remote target t at byte offset off of its window (dynamic windows:
 * the address), on tcount elements of tt there: data (PUT/ACC/GACC; NULL for GET and MPI_NO_OP)
 * goes out packed, result (GET/GACC) is filled by the answers (unpacked into a non-contiguous
 * result type as they arrive).  A non-contiguous tt travels as the list of target pieces
 * (docs/PROTOCOL.md).  req (may be NULL) completes when the operation completes locally
 * (answers for fetching ones).  0 or an MPI error class. */
int tm_rma_remote_op(struct tm_rank *me, struct tm_winref *wr, int kind, int t, size_t off,
                     size_t tcount, const struct tm_type *tt, const struct tm_rma_typed *data,
                     const struct tm_rma_typed *result, enum tm_opkind op, enum tm_basic type,
                     struct tm_request *req);
/* Compare_and_swap on remote target t: two holds the new value then the compare value (es
 * bytes each); the old value lands in result. */
int tm_rma_remote_cas(struct tm_rank *me, struct tm_winref *wr, int t, size_t off, const void *two,
                      size_t es, void *result, enum tm_basic type);
/* Sends a control frame (LOCK/UNLOCK/FLUSH/POST/COMPLETE) to target t; answered kinds count
 * in org->asked.  0 or an MPI error class. */
int tm_rma_remote_ctl(struct tm_rank *me, struct tm_winref *wr, int kind, int t, int arg);
/* A Put (write) or Get of len contiguous bytes at buf to or from byte offset off of remote
 * target t's window by remote memory access, when t registered its memory and the link to its
 * node has it: *taken = 1, and the operation completes (req too, may be NULL) once the bytes
 * are in the target's memory (in buf).  *taken = 0: the caller sends it as frames.  0 or an
 * MPI error class. */
int tm_rma_direct(struct tm_rank *me, struct tm_winref *wr, int write, int t, size_t off, void *buf,
                  size_t len, struct tm_request *req, int *taken);

/* rma_acc_net.c: the element types whose accumulates the job's transport carries (svc
 * net_atomic_ok; the window keeps what every member found), the most elements of each in one
 * atomic into max, and whether it keeps their order; 0 when it carries none. */
struct tmpi_svc;
uint64_t tm_rma_acc_net_types(const struct tmpi_svc *svc, void *link, uint32_t *max, int *ordered);
/* Waits until the calling origin's atomics on the window are applied (an epoch's end on a
 * target of this node, which no frame orders behind them). */
void tm_rma_acc_net_wait(struct tm_rank *me, struct tm_winref *wr);
static inline int tm_rma_acc_net_on(const struct tm_win *w, enum tm_basic b)
{
    return (unsigned)b < TM_T__COUNT && (w->acc_net >> b & 1);
}
/* An accumulate (op; cmp not NULL: a compare-and-swap of new value oaddr) of tcount x tt at
 * byte offset off of member t's memory, with the operand (oaddr, ocount, ot; NULL for NO_OP)
 * and the old values into (raddr, rcount, rt) when raddr is not NULL, as the transport's
 * atomics; complete like tm_rma_direct's accesses (req, if not NULL, completes then).  An MPI
 * error class. */
int tm_rma_acc_net(struct tm_rank *me, struct tm_winref *wr, int t, size_t off,
                   const struct tm_type *tt, size_t tcount, enum tm_opkind op, enum tm_basic basic,
                   const void *oaddr, size_t ocount, const struct tm_type *ot, void *raddr,
                   size_t rcount, const struct tm_type *rt, const void *cmp, size_t bytes,
                   struct tm_request *req);
/* Frees the record (sent or not: a held operation is dropped; the job ends). */
void tm_rma_origin_free(struct tm_rma_origin *org);
/* Waits for every answer asked for and every payload handed to the links: 0 or the error. */
int tm_rma_remote_wait(struct tm_rank *me, struct tm_winref *wr, int local_only);
/* Flushes every dirty remote target (FLUSH, then waits). */
int tm_rma_remote_flush_all(struct tm_rank *me, struct tm_winref *wr);

/* Grants queued remote lock requests of m that can be granted now (after a release). */
void tm_rma_grant_queued(struct tm_win *w, struct tm_win_member *m);
/* Receive daemon upcalls for TM_MSG_RMA frames (net/net_proto.h: net.c dispatches to them
 * after decoding the protocol half). */
void *tm_rma_net_header(struct tm_job *j, int node, const struct tm_msg_hdr *h, void **ctx);
void tm_rma_net_frame(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx);
/* Registers them with the job's links (rma_proto.c), once the job has links; 0 or -EINVAL. */
int tm_rma_net_register(struct tm_job *j);

#endif
