/* msg_hdr.h — libtmpi's half of the inter-node frame header: the MPI protocols (message type,
 * match key, lengths, transfer handles, piggy-backed ACK; one-sided operations reuse the same
 * fields, TM_MSG_RMA below).  The agent carries
 * these 48 bytes opaquely in netd_hdr.proto (proto/wire/netd_hdr.h); only libclient/net/
 * defines and parses them.  docs/PROTOCOL.md describes both halves and the protocol.
 *
 *   off size field     (offsets within netd_hdr.proto, network byte order)
 *     0    1 type      enum tm_msg_type
 *     1    1 flags     TM_MSG_F_*
 *     2    2 reserved  0
 *     4    4 tag
 *     8    4 context   communicator context id
 *    12    4 comm_src  EAGER, RTS: the sender's rank in the communicator (a match key: the
 *                      receiver cannot turn src_rank into a rank of a communicator it may not
 *                      know yet); 0 otherwise
 *    16    8 msg_len   whole message length (equals payload_len for EAGER)
 *    24    8 cookie    sender's handle: the eager message's sequence number (EAGER, ACK) or
 *                      the send (RTS, CTS, DATA); CANCEL, CANCEL_ANS: the message's, either
 *                      (flag RNDV says which)
 *    32    8 rcookie   receiver's handle for the receive (CTS, DATA); CANCEL, CANCEL_ANS: the
 *                      sender's record of the cancel; 0 otherwise
 *    40    8 ack       cumulative ACK carried by a frame going the other way: the sender of
 *                      this frame has stored or delivered every eager message of the reverse
 *                      link (same channel) up to this sequence number; 0: says nothing
 */
#ifndef TMPI_LIBCLIENT_MSG_HDR_H
#define TMPI_LIBCLIENT_MSG_HDR_H

#include <stdint.h>

#include "netd_hdr.h"

#define TM_MSG_HDR_SIZE 48
_Static_assert(TM_MSG_HDR_SIZE <= NETD_PROTO_SIZE, "the protocol half fits the frame header");

enum tm_msg_type {
    TM_MSG_EAGER = 1, /* header + the whole message (below net_eager_limit) */
    TM_MSG_RTS = 2,   /* three-phase step 1: header only, "I have msg_len bytes for you" */
    TM_MSG_CTS = 3,   /* step 2, receiver -> sender: "the receive is posted, send" */
    TM_MSG_DATA = 4,  /* step 3: the message, matched by rcookie */
    TM_MSG_ACK = 5,   /* receiver -> sender: eager messages up to cookie are stored (HOLD: only
                       * this one was not; it will be fetched with a CTS) */
    TM_MSG_RMA = 6,   /* one-sided communication (libclient/rma/rma_net.c): an operation on a
                       * window, or its answer; tag says which (kind, op or lock type, basic
                       * type), context names the window, msg_len is the offset in it, cookie
                       * and rcookie the origin's records; never carries flags or an ACK */
    TM_MSG_DYN = 7,   /* MPI_Comm_spawn between the job's hosts (libclient/comm/dyn_net.h):
                       * tag the kind, cookie the asker's call, msg_len the value; never
                       * carries flags or an ACK */
    /* MPI_Cancel of a send to another node (cancel.c), sender -> receiver: take the message
     * (match key tag, context, comm_src; handle cookie) out of the unexpected queue if no
     * receive has matched it yet; rcookie names the sender's record of the cancel */
    TM_MSG_CANCEL = 8,
    /* receiver -> sender: whether it did (flag CANCELLED) */
    TM_MSG_CANCEL_ANS = 9,
};
#define TM_MSG_NTYPES 10 /* types are 1 .. TM_MSG_NTYPES - 1 */

/* SSEND: the sender waits for the match.  HOLD: an eager message the receiver dropped.
 * RNDV (CANCEL, CANCEL_ANS): the message went three-phase, cookie is its RTS's; else it is an
 * eager message's sequence number.  CANCELLED (CANCEL_ANS): the message was taken out and
 * will never be received; else a receive had matched it already. */
enum { TM_MSG_F_SSEND = 1, TM_MSG_F_HOLD = 2, TM_MSG_F_RNDV = 4, TM_MSG_F_CANCELLED = 8 };

/* Whether a frame type is point-to-point's (net.c dispatches it; its frames carry ACKs), or
 * another protocol's that registered a handler (net_proto.h). */
static inline int tm_msg_is_p2p(unsigned type)
{
    return type <= TM_MSG_ACK || type == TM_MSG_CANCEL || type == TM_MSG_CANCEL_ANS;
}

/* One frame's header as libtmpi's network layer sees it: the transport fields it uses and the
 * decoded protocol half. */
struct tm_msg_hdr {
    /* transport half (netd_hdr): set by the agent on arrival; chan is 0 (point-to-point link)
     * or 1 (collective link) */
    int chan;
    uint32_t payload_len;
    int32_t src_rank, dst_rank;
    /* protocol half */
    uint8_t type;
    uint8_t flags;
    int32_t tag, context, comm_src;
    uint64_t msg_len;
    uint64_t cookie;
    uint64_t rcookie;
    uint64_t ack;
};

/* The frame header for svc net_send: payload_len, the ranks and the encoded protocol half (the
 * agent fills in job id, channel and frame number). */
void tm_msg_hdr_encode(const struct tm_msg_hdr *m, struct netd_hdr *out);

/* Decodes and checks the protocol half of an arrived frame: 0 or -EPROTO (unknown type or
 * flag, reserved bytes set, lengths that do not fit the type). */
int tm_msg_hdr_decode(const struct netd_hdr *h, struct tm_msg_hdr *ret);

#endif
