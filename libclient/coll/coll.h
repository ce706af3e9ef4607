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
 * (coll_net.h says where and how).
 *
 * The records both levels read (a member's arguments, the algorithm, the non-blocking rounds)
 * are coll_base.h's, the layer below both. */
#ifndef TMPI_LIBCLIENT_COLL_H
#define TMPI_LIBCLIENT_COLL_H

#include <limits.h>
#include <stddef.h>

#include "coll_base.h"
#include "comm.h"

struct tm_rank;
struct tm_cnet;
struct tm_comm_coll;

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

/* Wakes every member of c that announced sleep (a load per member, a syscall per sleeper). */
void tm_coll_wake_members(struct tm_rank *me, struct tm_comm *c);
/* Arrives at cr's next counting barrier (tm_coll_barrier), numbered *ret_k; 1 if this member
 * was the last to arrive (every member's earlier stores are then visible to it). */
int tm_coll_arrive(struct tm_commref *cr, uint64_t *ret_k);

/* Every member's barrier on cr (on one node the counting barrier); 1 if this member ended it
 * (arrived last and woke the others), 0 if it waited or the barrier ran across nodes. */
int tm_coll_barrier(struct tm_rank *me, struct tm_commref *cr);

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

/* ---- coll_comm.c: the rounds that make communicators, for comm/ (comm/comm_coll.h;
 * registered in tm_lib by mpi/init.c) ---- */
extern const struct tm_comm_coll tm_coll_comm;

/* ---- coll_fin.c: MPI_Finalize's rendezvous ---- */
/* Waits until every member of cr (MPI_COMM_WORLD on one node) is in MPI_Finalize: 0; or
 * -EPROTO, with why filled, when a member waits in a collective this one never joins. */
int tm_coll_finalize_sync(struct tm_rank *me, struct tm_commref *cr, char *why, size_t len);

/* A per-rank scratch buffer of at least bytes (owner-only, kept for the next call). */
void *tm_coll_scratch(struct tm_rank *me, size_t bytes);

/* ---- argument checks shared by the entry points (report through tm_err, return class) ---- */

/* count >= 0, a valid committed type, a buffer when count > 0 (MPI_IN_PLACE never counts as
 * a buffer here: the caller decides where it is allowed). */
int tm_coll_check_buf(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                      const void *buf, MPI_Count count, MPI_Datatype dt,
                      const struct tm_type **ret_t);
int tm_coll_check_root(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, const char *fn,
                       int root);
/* Resolves op for type t: MPI_ERR_OP if invalid, not defined on t, or REPLACE/NO_OP (which
 * MPI allows in RMA only). */
int tm_coll_check_op(struct tm_rank *me, MPI_Comm comm, const char *fn, MPI_Op op,
                     const struct tm_type *t, struct tm_opref *ret);
/* counts[k] >= 0 for k < n (and displs non-NULL); the arrays are read up front so a bad one
 * fails before any member moves data. */
int tm_coll_check_counts(struct tm_rank *me, MPI_Comm comm, const char *fn, const char *what,
                         const MPI_Count *counts, const MPI_Aint *displs, int n);

/* The engine's v and w arrays are MPI_Count / MPI_Aint (tm_cargs): an int call widens its
 * nside pairs of n counts (cin[i]) and displacements (din[i]; NULL stays NULL) into one
 * allocation, *ret_mem, which the arguments own (tm_cargs.wide).  0 or -ENOMEM. */
int tm_coll_widen(int n, int nside, const int *const *cin, const int *const *din,
                  const MPI_Count **cout, const MPI_Aint **dout, void **ret_mem);

/* The _c v and w collectives (nb: non-blocking, request set): MPI_Count / MPI_Aint arrays whole,
 * to the engine on an intra-communicator, to coll_inter/ on an inter-communicator. */
int tm_gatherv_c(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                 void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *displs,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request, int nb);
int tm_scatterv_c(const char *fn, const void *sendbuf, const MPI_Count *sendcounts,
                  const MPI_Aint *displs, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request, int nb);
int tm_allgatherv_c(const char *fn, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *displs,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request, int nb);
/* w: Alltoallw_c (sendtypes / recvtypes, byte displacements), else Alltoallv_c. */
int tm_alltoallvw_c(const char *fn, int w, const void *sendbuf, const MPI_Count *sendcounts,
                    const MPI_Aint *sdispls, MPI_Datatype sendtype, const MPI_Datatype *sendtypes,
                    void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *rdispls,
                    MPI_Datatype recvtype, const MPI_Datatype *recvtypes, MPI_Comm comm,
                    MPI_Request *request, int nb);
/* MPI_Scan (ex 0) and MPI_Exscan (ex 1) and their I forms, any communicator. */
int tm_scan_c(const char *fn, int ex, const void *sendbuf, void *recvbuf, MPI_Count count,
              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request, int nb);
/* MPI_Reduce_scatter_block_c and MPI_Reduce_scatter_c and their I forms, any communicator. */
int tm_reduce_scatter_block_c(const char *fn, const void *sendbuf, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request, int nb);
int tm_reduce_scatter_c(const char *fn, const void *sendbuf, void *recvbuf,
                        const MPI_Count *recvcounts, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request *request, int nb);

/* A collective call, from its entry to its return: one that returns before it started (a
 * failed argument check, under MPI_ERRORS_RETURN) counts in its communicator's failures
 * (core/comm_parts.h struct tm_coll), so that the members compare their call numbers from
 * then on (tm_coll_in_step).  tm_coll_start and MPI_Barrier mark the start. */
/* The signature of a barrier's call (tm_cargs.sig, tm_coll_stamp). */
#define TM_COLL_SIG_BARRIER ((uint64_t)MPIX_COLL_BARRIER + 1)
struct tm_coll_guard {
    struct tm_commref *cr;
    uint64_t seq;
};
void tm_coll_guard_end(struct tm_coll_guard *g);

/* Before a round's (first) barrier: this member arrives there with call sig (tm_cargs.sig). */
void tm_coll_stamp(struct tm_commref *cr, uint64_t sig);
/* After it: whether every member of cr's communicator on this node arrived at the barrier
 * just passed with call sig; 1 while no call on it ever failed. */
int tm_coll_in_step(const struct tm_commref *cr, uint64_t sig);
/* A round whose members came with different calls (!tm_coll_in_step) ends on each of them
 * here: the small Allreduce's waiters are told (co->res_err -EPROTO), then a second barrier,
 * so that every member of such a round arrives twice whatever it called and nobody reads
 * another's buffers; -EPROTO (MPI_ERR_OTHER, "out of step"). */
int tm_coll_out_of_step(struct tm_rank *me, struct tm_commref *cr);

/* Every entry point starts here: the calling rank and the communicator. */
#define TM_COLL_ENTRY(fn, comm)                                                                    \
    struct tm_rank *me = tm_self();                                                                \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);                    \
    struct tm_commref *cr = tm_comm_get(&me->comms, comm);                                         \
    if (TM_UNLIKELY(!cr))                                                                          \
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_COMM, fn, "invalid communicator %d", comm);      \
    struct tm_coll_guard tm_cguard_ __attribute__((cleanup(tm_coll_guard_end))) = {cr, ++cr->ncoll};

#define TM_COLL_CHECK(expr)                                                                        \
    do {                                                                                           \
        int e_ = (expr);                                                                           \
        if (TM_UNLIKELY(e_ != MPI_SUCCESS)) return e_;                                             \
    } while (0)

#endif
