/* netd_hdr.h — the fixed binary header of the inter-node data plane (seed 000 §3.2: "header +
 * optional payload + handler").  Control messages between agents travel as protobuf frames;
 * MPI data does not: every data frame is this 64-byte header, in network byte order, followed
 * by payload_len bytes.
 *
 *   off size field
 *     0    1 version   NETD_VERSION
 *     1    1 type      enum netd_type
 *     2    2 flags     NETD_F_* (SSEND: the sender waits for the match)
 *     4    4 payload_len  bytes that follow this header in this frame
 *     8    8 job_id
 *    16    4 src_rank  global rank of the sender
 *    20    4 dst_rank  global rank of the receiver
 *    24    4 tag
 *    28    4 context   communicator context id
 *    32    8 msg_len   whole message length (equals payload_len for EAGER)
 *    40    8 cookie    sender's handle: the eager message (EAGER, ACK) or the send (RTS, CTS, DATA)
 *    48    8 rcookie   CTS, DATA: the receiver's handle for the receive;
 *          (comm_src)  EAGER, RTS: the sender's rank in the communicator (a match key: the
 *                      receiver cannot turn src_rank into a rank of a communicator it may not
 *                      know yet); 0 otherwise
 *    56    8 ack       cumulative ACK carried by a frame going the other way: the sender of
 *                      this frame has stored or delivered every eager message of the reverse
 *                      link (same channel) up to this sequence number; 0: says nothing
 */
#ifndef TMPI_AGENT_NETD_HDR_H
#define TMPI_AGENT_NETD_HDR_H

#include <stddef.h>
#include <stdint.h>

#define NETD_VERSION 2
#define NETD_HDR_SIZE 64

enum netd_type {
    NETD_EAGER = 1, /* header + the whole message (below eager_limit) */
    NETD_RTS = 2,   /* three-phase step 1: header only, "I have msg_len bytes for you" */
    NETD_CTS = 3,   /* step 2, receiver -> sender: "the receive is posted, send" */
    NETD_DATA = 4,  /* step 3: the message, matched by cookie */
    NETD_ACK = 5,   /* receiver -> sender: eager messages up to cookie are stored (HOLD: only
                     * this one was not; it will be fetched with a CTS) */
    NETD_COLL = 6,  /* collective traffic, on the collective channel */
    NETD_RMA = 7,   /* one-sided communication (libclient/rma/rma_net.c): an operation on a
                     * window, or its answer; tag says which, context names the window */
};

/* COLL: the frame travels on the collective channel (the collectives reuse the point-to-point
 * machinery between node leaders, on their own connection; replies go back on the same one). */
enum { NETD_F_SSEND = 1, NETD_F_HOLD = 2, NETD_F_COLL = 4 };

struct netd_hdr {
    uint8_t type;
    uint16_t flags;
    uint32_t payload_len;
    uint64_t job_id;
    int32_t src_rank, dst_rank, tag, context;
    uint64_t msg_len;
    uint64_t cookie;
    union {                /* one slot on the wire (offset 48), meaning set by type */
        uint64_t rcookie;  /* CTS, DATA: the receiver's handle for the receive */
        uint64_t comm_src; /* EAGER, RTS: the sender's rank in the communicator */
    };
    uint64_t ack;
};

void netd_hdr_encode(const struct netd_hdr *h, uint8_t out[NETD_HDR_SIZE]);

/* Decodes and checks a header: 0, -EPROTO (version, type, or inconsistent lengths) or
 * -EMSGSIZE (payload larger than max_payload). */
int netd_hdr_decode(const uint8_t in[NETD_HDR_SIZE], size_t max_payload, struct netd_hdr *ret);

#endif
