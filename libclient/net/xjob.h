/* xjob.h — the data path between two jobs of one user (MPI_Comm_connect / accept, join;
 * docs/PROTOCOL.md "Between jobs"): point-to-point messages between a rank of this job and a
 * rank of another, relayed by the agent (svc xjob_send; the agent carries a frame only between
 * jobs of one user and stamps the sender's job).
 *
 * Foreign ranks: a rank of another job appears in this job's communicators as the world rank
 * TM_XRANK(slot, r): slot is the other job's entry in this job's peer table (at most
 * TM_XJOB_PEERS_MAX jobs), r its world rank there.  tm_send sends to one with tm_xjob_send.
 * Either job may run across several nodes: each host of this job names the other job by a
 * slot of its own (slots are never sent), knows the node of each foreign rank a handshake
 * named (tm_xjob_set_nodes) and sends there; every frame says the sending host's node
 * (snode), by which the receiver assembles, credits and answers (per pair of hosts).
 *
 * A message goes whole as frames of at most TMPI_XJOB_PAYLOAD_MAX bytes, in order (one sender
 * lock per job host); the receiving host assembles it in an envelope of its own and matches it
 * like any arrival (TM_ENVL_XJOB, MPI order: one path per pair of hosts).  A standard or buffered
 * send completes once its frames are handed to the agent; a synchronous one when the receiver
 * matched it (SACK).  Flow control bounds what one job may have sent to another unmatched
 * (TMPI_XJOB_UNEXPECTED_MAX, below).
 *
 * The handshake of a connect (comm/xconn.h) rides on the same frames (kinds CONNECT...), its
 * handler registered with tm_xjob_set_ctl.
 *
 * When the agent says the other job is gone (XGone), its slot is dead: sends to it fail
 * (-EPIPE), synchronous sends waiting for it and receives posted on communicators with its
 * ranks (tm_xjob_note) complete with MPI_ERR_OTHER, and the ctl handler hears of it. */
#ifndef TMPI_LIBCLIENT_XJOB_H
#define TMPI_LIBCLIENT_XJOB_H

#include <stddef.h>
#include <stdint.h>

#include "send_mode.h"

struct tm_job;
struct tm_rank;
struct tm_request;
struct tm_envl;

/* Other jobs a job may be connected to at once (its peer table). */
#define TM_XJOB_PEERS_MAX 64
#define TM_XRANK_BASE (1 << 30)
#define TM_XRANK_SHIFT 22 /* a job's world ranks below 2^22 */
#define TM_XRANK(slot, r) (TM_XRANK_BASE + ((slot) << TM_XRANK_SHIFT) + (r))
#define TM_XRANK_SLOT(w) (((w)-TM_XRANK_BASE) >> TM_XRANK_SHIFT)
#define TM_XRANK_RANK(w) ((w) & ((1 << TM_XRANK_SHIFT) - 1))
/* Flow control: a job's ranks have at most TMPI_XJOB_UNEXPECTED_MAX bytes (default below; 0:
 * no bound) of eager messages (the bytes go with the envelope) out to one other job that its
 * receives have not matched yet.  A message past it sends its envelope alone (RTS, matched in
 * order like any); the receiver asks for its bytes once a receive matched it (CTS), and they
 * go straight to that receive (DATA): the send completes then (MPI_Isend returns at once).  So
 * the other job holds at most the bound plus envelopes of this job's unmatched messages.  The
 * receiver credits matched eager bytes (CREDIT) in batches of TM_XJOB_CREDIT_BATCH, or at once
 * when the sender is past its bound (CREDIT_REQ). */
#define TM_XJOB_UNEXPECTED_DEFAULT (64ull << 20)
#define TM_XJOB_UNEXPECTED_LIMIT (1ull << 40)
#define TM_XJOB_CREDIT_BATCH (64u << 10)
/* TMPI_XJOB_UNEXPECTED_MAX as bytes (unset: the default), or -1 when it is no number of bytes
 * from 0 to TM_XJOB_UNEXPECTED_LIMIT. */
long long tm_xjob_unexpected_max(void);

/* Nodes of another job one job host tells apart (its hosts' messages are assembled and
 * credited apart): a frame from a node past it is dropped, a handshake naming one fails. */
#define TM_XJOB_NODES_MAX 4096

/* Communicators with ranks of other jobs whose context ids are kept for the dead-peer rule. */
#define TM_XJOB_CTX_MAX 1024

/* Frame kinds (struct tm_xhdr.kind). */
enum tm_xkind {
    TM_XK_MSG = 1,     /* a message's next bytes (flags FIRST on its first frame, SYNC) */
    TM_XK_SACK = 2,    /* a synchronous send (cookie) was matched */
    TM_XK_CONNECT = 3, /* comm/xconn.h from here */
    TM_XK_CONNECT_ANS = 4,
    TM_XK_CANCEL = 5,
    TM_XK_CREDIT = 6, /* the receiver matched val more bytes of the sender's messages */
    TM_XK_CREDIT_REQ =
        7,          /* the sender is past its bound: send what is owed, or at the next match */
    TM_XK_CTS = 8,  /* the receiver matched the RTS envelope cookie: send its bytes */
    TM_XK_DATA = 9, /* the next bytes of the RTS message cookie */
};
#define TM_XF_FIRST 1u
#define TM_XF_SYNC 2u
#define TM_XF_RTS 4u /* the envelope alone: the bytes come after a CTS (flow control) */

/* libtmpi's header of a frame between jobs (both ends are one machine's build: host order). */
struct tm_xhdr {
    uint32_t kind, flags;
    int32_t dst, src;       /* the receiver's world rank in its job, the sender's in its */
    int32_t ctx, csrc, tag; /* the message's match key (csrc: the sender's communicator rank) */
    int32_t snode;          /* the sending host's node in its job (set by every send) */
    uint64_t total;         /* MSG: the message's bytes */
    uint64_t cookie;        /* SYNC / SACK: the send; ctl: the call */
    int64_t val;            /* ctl: a value */
};

static inline int tm_xrank(int w)
{
    return w >= TM_XRANK_BASE;
}

/* The job's table (j->xjob), made with the job; 0 or -ENOMEM. */
int tm_xjob_init(struct tm_job *j);
void tm_xjob_fini(struct tm_job *j);
/* The slot of job id (added when add and there is room): >= 0, -ENOSPC, -ENOENT. */
int tm_xjob_slot(struct tm_job *j, uint64_t id, int add);
/* The job of a foreign rank's slot (0: none). */
uint64_t tm_xjob_job(struct tm_job *j, int slot);
/* Whether world rank a (this job's or foreign) comes before b in the one order both jobs see:
 * by job id, then world rank. */
int tm_xjob_before(struct tm_job *j, int a, int b);
/* Context ids ctx[0..n) belong to a communicator with ranks of the jobs of slot mask. */
void tm_xjob_note(struct tm_job *j, const int *ctx, int n, uint64_t mask);
/* The nodes of slot's job's world ranks ranks[0..n) are nodes[0..n) (what a handshake said;
 * frames to each go to its node's host): 0, -EPROTO (a rank or node out of range), -ENOMEM. */
int tm_xjob_set_nodes(struct tm_job *j, int slot, const int32_t *ranks, const int32_t *nodes,
                      int n);
/* The node of foreign rank w in its job (0 when no handshake named it), -1 for no foreign rank. */
int tm_xjob_node(struct tm_job *j, int w);
/* The slots of the foreign ranks in v[0..n) as a mask (0: none). */
uint64_t tm_xjob_mask(const int32_t *v, int n);

/* tm_send to foreign rank w: as tm_send (0 done, 1 later, negative errno). */
int tm_xjob_send(struct tm_rank *me, int w, int ctx, int src, int dest, int tag, const void *buf,
                 size_t bytes, enum tm_send_mode mode, struct tm_request *sreq);
/* j->net_consume for every network kind: TM_ENVL_XJOB here, the others to tm_net_consume. */
void tm_xjob_consume(struct tm_rank *me, struct tm_request *rreq, struct tm_envl *e);
/* The client upcall xjob_frame (svc.h). */
void tm_xjob_upcall(void *state, uint64_t from_job, const void *hdr, size_t hlen,
                    const void *payload, size_t len, const char *reason);

/* A control frame to node `node` of job `to` (kinds CONNECT..; h->snode is set to this host's
 * node): 0 or a negative errno. */
int tm_xjob_ctl_send(struct tm_job *j, uint64_t to, int node, const struct tm_xhdr *h,
                     const void *payload, size_t len);
/* The handler of control frames (on the channel thread), and of a peer's end (h NULL, payload
 * the agent's reason, len bytes, not terminated). */
typedef void (*tm_xjob_ctl_fn)(struct tm_job *j, uint64_t from, int slot, const struct tm_xhdr *h,
                               const void *payload, size_t len);
void tm_xjob_set_ctl(struct tm_job *j, tm_xjob_ctl_fn fn);

#endif
