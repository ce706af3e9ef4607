/* netd_hdr.h — the fixed binary header of the inter-node data plane (seed 000 §3.2: "header +
 * optional payload + handler").  Control messages between agents travel as protobuf frames;
 * data does not: every data frame is this 80-byte header, in network byte order, followed by
 * payload_len bytes.
 *
 * The header has two halves.  The first is the transport's: netd (agent/netd/) and the job's
 * links (agent/host/job_net.c) read, check and fill it.  The second is opaque to the agent: the
 * protocol of whoever sends on the link (libtmpi's network layer, libclient/net/msg_hdr.h,
 * defines and checks it); netd carries its bytes unchanged.
 *
 *   off size field
 *     0    1 version      NETD_VERSION
 *     1    1 channel      TMPI_CH_P2P or TMPI_CH_COLL (the link it travels on)
 *     2    1 flags        NETD_F_*: 0 on a data frame unless it asks for an acknowledgement
 *     3    1 reserved     0
 *     4    4 payload_len  bytes that follow this header in this frame
 *     8    8 job_id
 *    16    4 src_rank     global rank of the sender
 *    20    4 dst_rank     global rank of the receiver
 *    24    8 seq          frame number on its link, 1, 2, 3...: netd stamps it when the frame
 *                         is queued and refuses a frame out of sequence; in an acknowledgement
 *                         (NETD_F_ACK) the last frame number the sender of the ack received
 *    32   48 proto        the protocol half (opaque here)
 *
 * Why 80 bytes and not 64: the transport half with its sequence number takes 32 bytes, and
 * libtmpi's protocol half needs 44 (docs/PROTOCOL.md); both are rounded to 8-byte fields. */
#ifndef TMPI_PROTO_NETD_HDR_H
#define TMPI_PROTO_NETD_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h" /* the channel field */

/* 5: libtmpi's protocol half gained CANCEL and CANCEL_ANS (MPI_Cancel of a send to another
 * node, libclient/net/cancel.c), which a peer of version 4 refuses as malformed mid-job; a
 * mixed pair now fails at its first frame, naming the node. */
#define NETD_VERSION 5
#define NETD_HDR_SIZE 80
#define NETD_PROTO_OFF 32
#define NETD_PROTO_SIZE (NETD_HDR_SIZE - NETD_PROTO_OFF)

/* flags: an acknowledgement, a header-only frame outside the numbering that tells the peer
 * every frame up to seq arrived (netd.h, "Resending"); a data frame whose sender waits for its
 * acknowledgement (the receiver acknowledges it as soon as it is complete). */
#define NETD_F_ACK 0x01u
#define NETD_F_ACKREQ 0x02u
/* with NETD_F_ACK: the sender closes the link on purpose (its job's part ended); what follows
 * is the end of the stream, not a break to reconnect */
#define NETD_F_BYE 0x04u

struct netd_hdr {
    uint8_t channel;
    uint8_t flags; /* NETD_F_* */
    uint32_t payload_len;
    uint64_t job_id;
    int32_t src_rank, dst_rank;
    uint64_t seq;
    uint8_t proto[NETD_PROTO_SIZE];
};

void netd_hdr_encode(const struct netd_hdr *h, uint8_t out[NETD_HDR_SIZE]);
/* Writes seq into an encoded header (netd stamps it under the link's send lock). */
void netd_hdr_set_seq(uint8_t out[NETD_HDR_SIZE], uint64_t seq);

/* Decodes and checks the transport half: 0, -EPROTO (version, channel, reserved bytes,
 * negative ranks) or -EMSGSIZE (payload larger than max_payload).  The protocol half is copied
 * unchecked. */
int netd_hdr_decode(const uint8_t in[NETD_HDR_SIZE], size_t max_payload, struct netd_hdr *ret);

#endif
