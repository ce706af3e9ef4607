/* request.h — MPI requests: what a pending send or receive needs while it waits, and a
 * per-rank free list so starting an operation never calls malloc in the steady state. */
#ifndef TMPI_LIBCLIENT_REQUEST_H
#define TMPI_LIBCLIENT_REQUEST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dlist.h"
#include "lib.h"
#include "mpi.h"

struct tm_rank;
struct tm_type;

/* SEND, RECV, COLL: an operation the engine completes (done).  The kinds after COLL are
 * handles over other requests or over the user's code, and Wait/Test go through
 * tm_req_complete() for them (reqapi.c):
 *  - PERSIST: a persistent request (MPI_*_init); each MPI_Start issues its operation as an
 *    inner request, NULL while the request is inactive (persist.c);
 *  - PAIR: MPI_Isendrecv(_replace): a receive and a send, complete when both are (persist.c);
 *  - GREQ: a generalized request, done when the program calls MPI_Grequest_complete (greq.c);
 *  - MULTI: a neighbourhood collective: its sends and receives, complete when all are
 *    (coll_nbr/nbr.h);
 *  - IDUP: MPI_Comm_idup(_with_info) of an intra-communicator: complete when its broadcast
 *    of the new context id is; Wait/Test then make the handle (comm/comm_idup.h);
 *  - PART: a partitioned send or receive (MPI_Psend_init / MPI_Precv_init: part/part.h). */
enum tm_req_kind {
    TM_REQ_SEND = 1,
    TM_REQ_RECV = 2,
    TM_REQ_COLL = 3,
    TM_REQ_PERSIST = 4,
    TM_REQ_PAIR = 5,
    TM_REQ_GREQ = 6,
    TM_REQ_MULTI = 7,
    TM_REQ_IDUP = 8,
    TM_REQ_PART = 9,
};

/* request.env_net: how a send to another node went (net/cancel.c) */
enum { TM_ENV_NET_EAGER = 1, TM_ENV_NET_RNDV = 2, TM_ENV_NET_RNDV_BUFFERED = 3 };

struct tm_preq; /* persist.c */
struct tm_greq; /* greq.c */
/* A MULTI request's parts: point-to-point requests of the rank, complete when all are (made by
 * coll_nbr/nbr.c and coll/coll_xjob.c, completed, read and freed by nbr.c's tm_nbr_*). */
struct tm_nbr {
    int n;   /* requests in q */
    int err; /* MPI class of a message that could not start; 0 */
    /* Optional (NULL: none): what the operation does once every part is complete, run once
     * by the owner when it takes the status (an MPI class, 0; coll_xjob.c's Iallreduce
     * reduces the members' blocks), and what frees arg with the request. */
    int (*fin)(struct tm_nbr *nb);
    void (*fin_free)(struct tm_nbr *nb);
    void *arg;
    int fin_ran;
    struct tm_request *q[];
};
struct tm_idup; /* comm/comm_idup.c */
struct tm_part; /* part/part.c */

/* One request.  Owner-only fields are touched only by the rank that started it.  While a
 * receive is posted (posted == 1) its link, key and buffer belong to the receiver's mailbox
 * and are touched only under the mailbox lock; the rank that matches it fills the st_* fields
 * and then publishes done = 1 with release order, after which it never touches the request
 * again (the owner may free it at once). */
struct tm_request {
    struct tm_dl link; /* mailbox: posted hash chain or wildcard list (mailbox lock) */
    uint64_t seq;      /* post order, compares exact and wildcard receives (mailbox lock) */
    int ctx, src, tag; /* match key; src/tag may be wildcards (receives) */
    int posted;        /* in a posted queue (mailbox lock) */
    int wild;          /* src or tag is a wildcard */
    _Atomic int done;

    void *buf;  /* receive buffer */
    size_t cap; /* its size in bytes (packed bytes of its type: type.h) */
    /* Layout of the data when not plain bytes (a non-contiguous type, type_copy.h), else
     * NULL: a receive's buf, or a send's buffer (read by tm_send).  Set by the starter before
     * the operation starts; a pooled request holds a reference, dropped by tm_req_free. */
    const struct tm_type *dt;

    /* result, written by the completer before done */
    int st_source, st_tag, st_error, st_cancelled;
    size_t st_bytes;

    /* owner-only */
    enum tm_req_kind kind;
    struct tm_rank *owner;
    MPI_Comm comm;           /* for the error handler */
    int freed;               /* MPI_Request_free'd while pending: reap when done */
    int pooled;              /* came from the pool (blocking calls use stack requests) */
    struct tm_request *next; /* free list / orphan list */
    union {
        struct tm_preq *pr;   /* PERSIST, PAIR (owner-only) */
        struct tm_greq *gr;   /* GREQ */
        struct tm_nbr *nb;    /* MULTI (owner-only) */
        struct tm_idup *idup; /* IDUP (owner-only) */
        struct tm_part *part; /* PART */
    };
    /* a standard or buffered send that queued an eager envelope in an intra-node receiver's
     * mailbox: the receiver's world rank + 1 and the envelope's serial there, so MPI_Cancel
     * can take it back while it is unmatched (p2p.c tm_cancel_send); 0: none.  A send to a
     * rank on another node (env_net, below): the receiver's world rank + 1 and the message's
     * handle on the link (an eager sequence number or the three-phase send's cookie). */
    int env_dst1;
    uint64_t env_serial;
    /* a point-to-point send to another node that MPI_Cancel may still ask that node to take
     * back (net/cancel.c): TM_ENV_NET_*, 0 none; its match key is then ctx, env_src (the
     * sender's rank in the communicator; src stays the destination, mstate.h) and tag */
    uint8_t env_net;
    int env_src;
    /* a buffered send: the bytes it holds of the attached buffer (MPI_Buffer_attach) until its
     * message leaves; tm_send hands them to the envelope it queues (envelope_pool.c releases
     * them), else the caller releases them (p2p_api.c) */
    size_t bsend;
    struct tm_bsbuf *bsb; /* the buffer they are of (core/bsbuf.h) */
    /* its Fortran handle (MPI_Request_c2f, request.c), 0 until the program asks for one */
    int fidx;
    /* what the operation uses until the request goes (the folded types of a _c collective,
     * mpi/count_narrow.h); freed with the request once it is done */
    void *keep;
    /* how keep goes when it is not plain memory (it holds handles of its own); NULL: free().
     * Called by the owner, under its tm_mt_lock: it may take no lock but its own tables'. */
    void (*keep_free)(struct tm_rank *me, void *keep);
};

/* A request from the rank's pool, zeroed except for owner/kind; NULL when out of memory. */
struct tm_request *tm_req_alloc(struct tm_rank *me, enum tm_req_kind kind);
/* Sets up a request that lives on the caller's stack for a blocking call. */
void tm_req_init_stack(struct tm_request *r, struct tm_rank *me, enum tm_req_kind kind,
                       MPI_Comm comm);
/* Back to the pool; requests that are not done go to the orphan list until they are. */
void tm_req_free(struct tm_rank *me, struct tm_request *r);
/* Frees the rank's whole pool (job teardown, no thread uses it any more). */
void tm_req_pool_destroy(struct tm_rank *me);

/* Fills a status from a completed request (status may be MPI_STATUS_IGNORE), all but its
 * MPI_ERROR: calls that return one status leave that field alone (MPI 3.1 §3.2.5), the
 * multiple-completion calls set it themselves (reqapi.c). */
void tm_req_status(const struct tm_request *r, MPI_Status *status);
/* Marks a request that completes immediately (PROC_NULL, eager send). */
void tm_req_set_done(struct tm_request *r, int source, int tag, size_t bytes, int err);
/* The same for a request of the calling thread's own rank that no other thread waits for
 * (no wake-up handshake, so no full barrier: wait.h). */
void tm_req_set_done_own(struct tm_request *r, int source, int tag, size_t bytes, int err);
/* A compound request (kind > TM_REQ_COLL) is complete: persist.c / greq.c / nbr.c.  An inactive
 * persistent request counts as complete. */
int tm_req_compound_done(struct tm_request *r);
/* Whether r's operation is complete (wait.h: seq_cst). */
static inline int tm_req_complete(struct tm_request *r)
{
    if (TM_LIKELY(r->kind <= TM_REQ_COLL))
        return atomic_load_explicit(&r->done, memory_order_seq_cst);
    return tm_req_compound_done(r);
}

/* The Fortran handle of r, made on first use (stable until r is freed); 0 (MPI_REQUEST_NULL)
 * for NULL, -1 when out of memory or out of handles. */
int tm_req_to_fint(struct tm_rank *me, struct tm_request *r);
/* The request of a Fortran handle, NULL for 0 and for handles no live request has. */
struct tm_request *tm_req_from_fint(struct tm_rank *me, int f);

/* Empty status as MPI defines it for null/inactive requests and PROC_NULL. */
void tm_status_empty(MPI_Status *status);
/* The same but MPI_ERROR untouched: a completed operation with no source or tag of its own
 * (a collective) returning one status. */
void tm_status_blank(MPI_Status *status);

#endif
