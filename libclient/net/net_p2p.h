/* net_p2p.h — inter-node point-to-point (seed 000 §3.5, Fig. 8): the eager push with a
 * retained copy, the three-phase RTS/CTS/DATA exchange, cumulative ACKs and HOLD, over the
 * agent's net_send (proto/svc/svc.h).  docs/PROTOCOL.md "Data plane" has the frames and the
 * state machines; this header is the contract for the rest of libclient (the protocol's files,
 * link.c, eager.c, rndv.c, ack.c and net.c, share net_int.h among themselves).
 *
 * Who calls what:
 *  - rank threads: tm_net_isend() from tm_send() when the destination sits on another node
 *    (TMPI_CH_P2P) and from the collectives' inter-node phase (TMPI_CH_COLL);
 *    tm_net_consume() from tm_recv() when the matched unexpected entry is one of ours;
 *    tm_net_check() on sends, receives and waits (protocol errors); tm_net_idle() before a wait
 *    blocks (lazy ACKs);
 *  - the agent's receive daemons, or a rank thread reading its links inside svc->net_poll (no
 *    libtmpi lock held then): tm_net_p2p_header() / tm_net_p2p_frame(), through the upcall
 *    dispatch in net.c (net.h).  They never block except on mailbox, link and table locks.
 *
 * Receiving needs nothing new: a message from another node lands in the receiver's mailbox in
 * arrival order (an eager one in a pool buffer, a three-phase or held one as a header-only
 * entry) and an ordinary tm_recv / tm_recv_ctx / tm_probe finds it. */
#ifndef TMPI_LIBCLIENT_NET_P2P_H
#define TMPI_LIBCLIENT_NET_P2P_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dlist.h"
#include "match.h"
#include "msg_hdr.h"
#include "request.h"
#include "send_mode.h"
#include "svc.h"
#include "xfer.h"

struct tm_job;
struct tm_rank;

/* Channels indexed 0 (TMPI_CH_P2P) and 1 (TMPI_CH_COLL). */
#define TM_NET_NCHAN 2
/* Largest DATA frame: longer messages go as several DATA frames, in order on one link. */
#define TM_NET_CHUNK ((size_t)8 << 20)
/* Cumulative ACK thresholds (per sending node and channel). */
#define TM_NET_ACK_MSGS 32
#define TM_NET_ACK_BYTES ((size_t)256 << 10)

struct tm_net_copy; /* a retained eager copy (net_int.h) */

/* Sender side of one link (destination node, channel).  order: held by a sending rank across
 * taking an eager sequence number and calling net_send, so sequence order is wire order.
 * lock: the sequence counter and the retained list, held briefly by senders and by whoever
 * handles the link's ACKs and HOLD CTSs; never across a system call, so a daemon applying an
 * ACK does not sleep behind a sendmsg (it did: a third of the context switches of an 8 B
 * stream across two agents). */
struct tm_net_tx {
    pthread_mutex_t order;
    pthread_mutex_t lock;
    uint64_t next_seq;     /* last eager sequence number handed out */
    struct tm_dl retained; /* struct tm_net_copy, ascending sequence */
    size_t retained_bytes;
};

/* Receiver side of one link (sending node, channel).  lock: a mutex; taken by the daemon of
 * that link and by rank threads flushing lazy ACKs. */
struct tm_net_rx {
    pthread_mutex_t lock;
    uint64_t hi;         /* highest eager sequence stored, delivered or held */
    uint64_t acked;      /* highest sequence a cumulative ACK went out for */
    unsigned n_since;    /* eager messages since that ACK */
    size_t bytes_since;  /* and their bytes */
    int32_t here, there; /* a rank on each end, for the ACK header (the agent checks them) */
};

/* Per-job inter-node state: present only when the job spans nodes (info->net != NULL). */
struct tm_net {
    struct tm_job *job;
    const struct tmpi_svc *svc;
    void *link;                  /* info->net, for net_send */
    int node, nnodes;            /* this node, all nodes */
    const int32_t *node_of_rank; /* world rank -> node (the agent's, lives as long as the job) */
    size_t eager_limit;          /* eager push below this many bytes */
    struct tm_xfer_tab xfers;    /* cookies of pending sends and matched receives */
    struct tm_net_tx *tx;        /* [node * TM_NET_NCHAN + chan] */
    struct tm_net_rx *rx;        /* [node * TM_NET_NCHAN + chan] */
    _Atomic int ack_dirty;       /* some rx has hi > acked: a rank thread flushes lazily */
    /* Protocol errors (unknown cookie, bad rank, ...), counted by daemons: the next rank of
     * this node to enter libtmpi's send, receive or wait paths aborts the job with first_err. */
    _Atomic uint64_t net_errors;
    pthread_mutex_t err_lock;
    char first_err[160];
    /* counters (tests, statistics): relaxed */
    _Atomic uint64_t n_eager, n_three_phase, n_held, n_acks_sent;
    char hb; /* ThreadSanitizer's name for the network (tm_net_hb_send), never read */
    /* the other protocols' handlers by message type (net_proto.h), set before frames arrive */
    const struct tm_net_proto *protos[TM_MSG_NTYPES];
};

/* ThreadSanitizer sees the order a frame gives only between the threads of this process that
 * touch the same socket; order that travels through another node (a daemon applies an RMA
 * operation and answers the origin's flush, the origin enters a barrier whose message reaches
 * this node on another link, the target rank reads its window) is invisible to it, and it
 * reports the daemon's write and the rank's read as a race.  So, in TSan builds only, every
 * frame sent releases and every frame received acquires one sync object per job: the network
 * as one ordered channel, which is what a frame's causality is (a frame received here can
 * only have been caused by frames sent from here before it).  Free in other builds. */
#if defined(__SANITIZE_THREAD__)
#define TM_NET_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TM_NET_TSAN 1
#endif
#endif
#ifdef TM_NET_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#endif
static inline void tm_net_hb_send(struct tm_net *n)
{
#ifdef TM_NET_TSAN
    __tsan_release(&n->hb);
#else
    (void)n;
#endif
}
static inline void tm_net_hb_recv(struct tm_net *n)
{
#ifdef TM_NET_TSAN
    __tsan_acquire(&n->hb);
#else
    (void)n;
#endif
}

/* Creates j->net when the job spans nodes (info->net != NULL); 0 or -ENOMEM. */
int tm_net_job_init(struct tm_job *j, const struct tmpi_rank_info *info);
/* Job end (no rank thread and no daemon uses the job any more): frees retained copies, pool
 * buffers of unexpected entries and pending transfers. */
void tm_net_job_fini(struct tm_job *j);

/* 1 if world rank w lives on another node. */
static inline int tm_net_remote(const struct tm_net *n, int w)
{
    return n && n->node_of_rank[w] != n->node;
}

/* Sends bytes from buf to world rank world_dst on another node, over channel (TMPI_CH_P2P or
 * TMPI_CH_COLL), matched there as (ctx, src, tag): src is the sender's rank in the
 * communicator of ctx.  mode as tm_send (STANDARD: eager below the limit, else three-phase;
 * SYNC: three-phase; BUFFERED: eager, or three-phase from a private copy).  req is the send
 * request (stack or pool).  Returns 0 when req is complete, 1 when it completes later (from a
 * daemon: done, then tm_wake of req->owner), -ENOMEM, -EPIPE (link down), -EINVAL (world_dst on
 * this node or bad channel).  The collectives' inter-node phase calls this with
 * TMPI_CH_COLL and receives with tm_recv_ctx() on the same ctx. */
int tm_net_isend(struct tm_rank *me, int world_dst, int ctx, int src, int tag, const void *buf,
                 size_t bytes, int channel, enum tm_send_mode mode, struct tm_request *req);

/* MPI_Cancel of a point-to-point send to another node (cancel.c): asks the receiver's node to
 * take the message out of its unexpected queue.  Returns 1 when the question went out (req is
 * pending until the answer: then complete with st_cancelled 1, or as the send completes
 * anyway), 0 when there is nothing to ask (not such a send, asked before, or a three-phase
 * send already matched: the cancel fails), or a negative errno (not asked: the send goes on
 * as if not cancelled).  The owner's thread. */
int tm_net_cancel_send(struct tm_rank *me, struct tm_request *req);

/* tm_recv took e (a TM_ENVL_NET* entry) for rreq: copy a stored message, or answer a
 * three-phase / held one with CTS (rreq then completes when DATA arrives). */
void tm_net_consume(struct tm_rank *me, struct tm_request *rreq, struct tm_envl *e);

/* Counts a protocol error found in a frame from node (first message kept) and wakes this
 * node's ranks so the next of them aborts the job (tm_net_check).  Any thread; also used by
 * the other protocol on the links, one-sided communication (rma/rma_net.c). */
void tm_net_proto_error(struct tm_net *n, int node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A rank thread of a multi-node job passes here on every send, receive and wait: if a daemon
 * saw a protocol error, the job is aborted with its message (daemons cannot fail a job). */
void tm_net_check_slow(struct tm_rank *me);
static inline void tm_net_check(struct tm_rank *me, struct tm_net *n)
{
    if (__builtin_expect(atomic_load_explicit(&n->net_errors, memory_order_relaxed) != 0, 0))
        tm_net_check_slow(me);
}
/* ... and here before it blocks: cumulative ACKs owed below the thresholds go out now, so a
 * sender that stopped sending does not keep its copies while this node sleeps. */
void tm_net_flush_acks(struct tm_net *n);
static inline void tm_net_idle(struct tm_rank *me, struct tm_net *n)
{
    tm_net_check(me, n);
    if (atomic_load_explicit(&n->ack_dirty, memory_order_relaxed)) tm_net_flush_acks(n);
}

/* Encodes h and hands it, with its payload, to the agent's link to `node` on svc channel
 * `channel` (TMPI_CH_P2P or TMPI_CH_COLL); flags, done and the result as svc.h net_send.
 * Every frame libtmpi sends leaves here (the TSan order of the network, tm_net_hb_send); the
 * point-to-point protocol's frames come through tm_net_send_frame, which adds the ACK owed,
 * one-sided ones (rma/rma_net.c) directly. */
int tm_net_xmit(struct tm_net *n, int node, int channel, unsigned flags, const struct tm_msg_hdr *h,
                const void *payload, void (*done)(void *arg, int err), void *arg);

/* Bytes of eager copies this node retains for its peers (tests, statistics). */
size_t tm_net_retained_bytes(struct tm_net *n);

#endif
