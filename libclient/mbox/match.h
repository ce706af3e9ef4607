/* match.h — a rank's receive side: posted receives and unexpected messages, matched in MPI
 * order (MPI 3.1 §3.5 non-overtaking) with O(1) lookups for the common no-wildcard case.
 *
 * Structure (seed 003 §3.2: a hash keyed by (source, tag) when there are no wildcards; we add
 * the context id and keep ordered lists behind it for wildcards):
 *  - unexpected messages: one arrival-order list (for wildcard receives) and a hash of chains
 *    keyed by (ctx, src, tag), each chain also in arrival order (for exact receives);
 *  - posted receives: exact ones in a hash of chains keyed the same way, wildcard ones in one
 *    list; every posted receive has a sequence number, and an arriving message takes the
 *    earlier of the first exact match and the first wildcard match.
 * All of it is protected by the mailbox lock (a pthread mutex: uncontended it is one atomic
 * instruction each way, and unlike a spinlock it behaves when ranks outnumber cores and the
 * holder is descheduled).  Senders to this rank and the rank itself take it. */
#ifndef TMPI_LIBCLIENT_MATCH_H
#define TMPI_LIBCLIENT_MATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "dlist.h"
#include "mbox_parts.h"
#include "request.h"

struct tm_rank;

/* NET*: from another node (net_p2p.h).  NET: an eager message stored in an agent pool buffer
 * (pbuf); NET_RTS: a three-phase announcement; NET_HELD: an eager message whose payload the
 * pool could not take.  The last two carry the sender's cookie; a receive answers them with
 * CTS. */
enum tm_envl_kind {
    TM_ENVL_EAGER = 1,
    TM_ENVL_RNDV = 2,
    TM_ENVL_NET = 3,
    TM_ENVL_NET_RTS = 4,
    TM_ENVL_NET_HELD = 5,
    TM_ENVL_XJOB = 6, /* from another job (net/xjob.h): the whole message in data[] */
};

/* An unexpected message.  Eager: the payload follows in data[].  Rendezvous: the receiver
 * copies from the sender's buffer (sbuf) and then completes the sender's request (sreq).
 * NET*: heap envelopes (made by a receive daemon, which has no envelope cache). */
struct tm_envl {
    struct tm_dl order; /* mailbox arrival list (mailbox lock) */
    struct tm_dl chain; /* mailbox hash chain (mailbox lock) */
    int ctx, src, tag;
    enum tm_envl_kind kind;
    size_t bytes;
    const void *sbuf;
    const struct tm_type *stype; /* sbuf's layout when not bytes (type_copy.h), else NULL */
    struct tm_request *sreq;
    struct tm_rank *home; /* whose envelope cache it returns to */
    unsigned cls;         /* size class (envelope_pool.h) */
    struct tm_envl *next; /* free lists */
    /* NET*: sending node and world rank, channel index (net_p2p.h), sender's cookie, pool
     * buffer (NET) */
    int node, chan, wsrc;
    uint16_t flags; /* netd_hdr flags of the frame, for the reply */
    uint64_t cookie;
    void *pbuf;
    /* eager and rendezvous envelopes of nonblocking sends: the sender's serial, which
     * MPI_Cancel looks for (p2p.c); 0: none (an envelope is reused with another serial) */
    uint64_t serial;
    size_t bsend;         /* a buffered send's room in its sender's attached buffer (request.h) */
    struct tm_bsbuf *bsb; /* that buffer (core/bsbuf.h) */
    _Alignas(16) unsigned char data[];
};

int tm_mbox_init(struct tm_mbox *mb);
void tm_mbox_destroy(struct tm_mbox *mb); /* frees queued envelopes */

/* Whether receive r (src, tag may be wildcards) takes a message with this envelope. */
static inline int tm_req_matches(const struct tm_request *r, int ctx, int src, int tag)
{
    return r->ctx == ctx && (r->src == MPI_ANY_SOURCE || r->src == src) &&
           (r->tag == MPI_ANY_TAG || r->tag == tag);
}

/* All below: caller holds mb->lock. */

/* Takes the earliest posted receive that matches an incoming (ctx, src, tag); NULL if none. */
struct tm_request *tm_match_posted(struct tm_mbox *mb, int ctx, int src, int tag);
/* Queues a receive that found no message. */
void tm_post_recv(struct tm_mbox *mb, struct tm_request *r);
/* Takes off at most max posted receives whose context pick(arg, ctx) chooses (their peer
 * cannot send any more: net/xjob.h) into out; how many. */
int tm_unpost_ctx(struct tm_mbox *mb, int (*pick)(void *arg, int ctx), void *arg,
                  struct tm_request **out, int max);
/* Removes a posted receive (cancel); returns 1 if it was still posted. */
int tm_unpost_recv(struct tm_request *r);
/* Earliest unexpected message a receive (src, tag may be wildcards) matches; if take, it is
 * removed from the queues. */
struct tm_envl *tm_match_unexp(struct tm_mbox *mb, int ctx, int src, int tag, int take);
/* Removes an unexpected message found by a walk of unexp_order (a cancelled send). */
void tm_unexp_remove(struct tm_mbox *mb, struct tm_envl *e);
/* Takes out the unexpected message of exactly this key (no wildcards) that is(e, arg) picks,
 * the earliest if several: a cancelled send of another node (net/cancel.c), found by its key's
 * hash chain; NULL if none is queued. */
struct tm_envl *tm_unexp_take_if(struct tm_mbox *mb, int ctx, int src, int tag,
                                 int (*is)(const struct tm_envl *e, const void *arg),
                                 const void *arg);
/* Appends an unexpected message. */
void tm_add_unexp(struct tm_mbox *mb, struct tm_envl *e);

/* Copies a message into a matched receive and completes it (truncating to its buffer).  The
 * request belongs to another rank unless both are the same, so nothing may touch it after
 * done is published.  No lock needed. */
void tm_deliver(struct tm_request *rr, const void *data, size_t bytes, int src, int tag);
/* Completes rr whose buffer the caller filled with the first min(bytes, rr->cap) bytes of a
 * message of bytes (a fast box copies its cells straight in: fbox.c). */
void tm_deliver_done(struct tm_request *rr, size_t bytes, int src, int tag);
/* The same from data laid out as st (NULL: bytes), bytes packed bytes: one copy from the
 * source layout into the receive's layout. */
void tm_deliver_typed(struct tm_request *rr, const void *data, const struct tm_type *st,
                      size_t bytes, int src, int tag);
/* Copies the first n packed bytes of (data, st) into rr's buffer and layout (n <= rr->cap;
 * st NULL: bytes).  The one place intra-node data lands in a receive buffer. */
void tm_copy_in(struct tm_request *rr, const void *data, const struct tm_type *st, size_t n);

#endif
