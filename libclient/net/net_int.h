/* net_int.h — what the files of the inter-node point-to-point protocol share among
 * themselves (link.c, eager.c, rndv.c, ack.c, net.c); the rest of libclient uses net_p2p.h. */
#ifndef TMPI_LIBCLIENT_NET_INT_H
#define TMPI_LIBCLIENT_NET_INT_H

#include "net_p2p.h"

/* A retained eager copy.  Kept until the receiver has stored it (cumulative ACK) or, when it
 * was HOLD-ACKed, until the DATA that answers its CTS has gone out.  Freed by whoever sets the
 * second of two bits: COPY_SENT (the EAGER frame's done ran: the agent no longer reads buf) and
 * COPY_RELEASED (it left the retained list for good and no DATA still reads it). */
enum { COPY_SENT = 1, COPY_RELEASED = 2 };

struct tm_net_copy {
    struct tm_dl link; /* tx->retained (tx lock) */
    uint64_t seq;
    void *buf; /* pool buffer; NULL for an empty message */
    size_t bytes;
    int held; /* the receiver dropped the payload (HOLD ACK): wait for its CTS (tx lock) */
    struct tm_net *net;
    int32_t src_w, dst_w, tag, ctx;
    _Atomic unsigned state;
};

/* A pending three-phase send (xfer table, TM_XFER_SEND, from RTS until CTS).  After CTS its
 * DATA frames are in flight: left counts their done callbacks plus one for the loop sending
 * them; whoever brings it to 0 completes the request. */
struct net_send_op {
    struct tm_net *net;
    struct tm_request *req; /* NULL: a buffered send, complete since it started */
    const void *buf;
    void *own; /* private copy of a buffered send */
    size_t bytes;
    int node, chan;
    int32_t src_w, dst_w, tag, ctx;
    _Atomic size_t left;
    _Atomic int err;
};

/* A matched receive waiting for its DATA frames (xfer table, TM_XFER_RECV, named by the
 * rcookie of CTS and DATA).  Touched only by the daemon of its link once the CTS is out. */
struct net_recv_op {
    struct tm_request *rr;
    size_t msg_len, got;
    int node, chan;
    void *tmp; /* the current chunk, when it does not fit in the receive buffer */
    int err;
};

static inline struct tm_net_tx *tx_of(struct tm_net *n, int node, int chan)
{
    return &n->tx[node * TM_NET_NCHAN + chan];
}

static inline struct tm_net_rx *rx_of(struct tm_net *n, int node, int chan)
{
    return &n->rx[node * TM_NET_NCHAN + chan];
}

/* ---- used across the protocol's files ---- */

/* Notes on a point-to-point send's request what MPI_Cancel needs to name its message at the
 * receiver's node (cancel.c): how it went (TM_ENV_NET_*), the receiver, the message's handle
 * and its match key.  The collectives' sends (chan 1) are never cancelled.  Owner thread. */
static inline void tm_net_note_send(struct tm_request *req, int chan, int how, int world_dst,
                                    uint64_t cookie, int ctx, int src, int tag)
{
    if (chan != 0) return;
    req->env_net = (uint8_t)how;
    req->env_dst1 = world_dst + 1;
    req->env_serial = cookie;
    req->ctx = ctx;
    req->env_src = src;
    req->tag = tag;
}

/* The sender's side of CTS frames and of ACKs, standalone (TM_MSG_ACK: seq = cookie, hold =
 * its HOLD flag) or carried in another frame's ack field (daemon or polling rank). */
void tm_net_on_cts(struct tm_net *n, int node, int chan, const struct tm_msg_hdr *h);
void tm_net_acked(struct tm_net *n, int node, int chan, uint64_t seq, int hold);
/* The receiving side's cumulative ACK for (node, chan), if one is owed: taken as said (the
 * caller puts it in a frame's ack field), else 0. */
uint64_t tm_net_ack_claim(struct tm_net *n, int node, int chan);
/* Every point-to-point frame to another node goes out here: it carries the ACK owed to that
 * node on its channel, which in two-way traffic saves the ACK frame (a system call and a
 * segment per 32 messages, on the latency path of the rank that sends it). */
int tm_net_send_frame(struct tm_net *n, int node, int chan, struct tm_msg_hdr *h,
                      const void *payload, void (*done)(void *arg, int err), void *arg);
/* Frees a receive transfer left in the table at job end. */
void tm_net_rx_op_free(void *op);

/* Receive daemon upcalls (net.c decodes the header and dispatches). */
void *tm_net_p2p_header(struct tm_job *j, int node, const struct tm_msg_hdr *h, void **ctx);
void tm_net_p2p_frame(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx);

/* link.c */
/* Completes a receive another thread owns: nothing may touch it after done. */
void tm_net_complete(struct tm_request *rr, int src, int tag, size_t msg_len, int err);

/* eager.c */
void tm_net_copy_put(struct tm_net_copy *c, unsigned bit);
void tm_net_copy_data_sent(void *arg, int err);
int tm_net_send_eager(struct tm_net *n, struct tm_rank *me, int node, int chan, int world_dst,
                      int ctx, int src, int tag, const void *buf, size_t bytes,
                      struct tm_request *req);
void *tm_net_eager_header(struct tm_net *n, int node, const struct tm_msg_hdr *h, void **ctx);
void tm_net_eager_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h, struct tm_envl *e);
void tm_net_send_held(struct tm_net *n, int node, int chan, const struct tm_msg_hdr *h);
/* Takes the retained copy of eager message seq off its link's list if the receiver held it
 * (the caller then owes it COPY_RELEASED); NULL if it is not held or not retained. */
struct tm_net_copy *tm_net_take_held(struct tm_net *n, int node, int chan, uint64_t seq);

/* rndv.c */
int tm_net_send_rts(struct tm_net *n, struct tm_rank *me, int node, int chan, int world_dst,
                    int ctx, int src, int tag, const void *buf, size_t bytes,
                    enum tm_send_mode mode, struct tm_request *req);
void tm_net_answer_cts(struct tm_net *n, struct tm_request *rr, const struct tm_envl *e, int here);
void tm_net_rts_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h);
void *tm_net_data_header(struct tm_net *n, int node, const struct tm_msg_hdr *h, void **ctx);
void tm_net_data_frame(struct tm_net *n, const struct tm_msg_hdr *h, struct net_recv_op *op);

/* cancel.c: the receiver's side of CANCEL, the sender's of CANCEL_ANS */
void tm_net_cancel_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h);
void tm_net_cancel_ans_frame(struct tm_net *n, int node, const struct tm_msg_hdr *h);

/* ack.c */
void tm_net_send_ack(struct tm_net *n, int node, int chan, int32_t here, int32_t there,
                     uint8_t flags, uint64_t seq);
void tm_net_eager_seen(struct tm_net *n, int node, int chan, const struct tm_msg_hdr *h);
/* Sends the link's cumulative ACK if one is owed and forced or past a threshold. */
void tm_net_ack_link(struct tm_net *n, int node, int chan, int force);

/* net.c: receive helpers */
int tm_net_check_hdr(struct tm_net *n, int node, const struct tm_msg_hdr *h, int with_src);
struct tm_envl *tm_net_env(int node, const struct tm_msg_hdr *h, enum tm_envl_kind kind);
struct tm_request *tm_net_queue_or_match(struct tm_rank *r, struct tm_envl *e);

#endif
