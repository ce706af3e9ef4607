/* netd_out.h — a frame on its way into a link's socket, and the piece of it the next sendmsg
 * writes.  netd.c queues and writes frames; the piece sizes are here, apart, so that they can
 * be tested without a socket (tests/unit/agent/test_netd_out.c). */
#ifndef TMPI_AGENT_NETD_OUT_H
#define TMPI_AGENT_NETD_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "netd.h"

/* Bytes of payload handed to one sendmsg at most, unless the frame was sent NETD_SEND_WHOLE.
 * A multi-megabyte write is copied into the socket buffer in one go before the peer reads much
 * of it; in smaller writes the receiver copies each piece out while it is still in cache and
 * the two copies overlap: 4 MiB ping-pong over loopback 6.2 GB/s in one write, 7.2-9.8 GB/s in
 * 256 KiB writes (measured on the 2-core development machine; 64 KiB is too small, the system
 * calls dominate).  256 KiB writes then held 0.5-4 MiB ping-pong across agents to 4.1-5.0 GB/s,
 * 512 KiB writes give 5.4-6.6 (alternating runs, load 2.3-2.5; docs/bench/ANALYSIS.md,
 * issue 20); 384 KiB gained less, 768 KiB no more within the noise. */
#define NETD_WRITE_MAX (512 * 1024)

/* A frame not (fully) written yet. */
struct netd_out {
    struct netd_out *next;
    uint8_t hdr[NETD_HDR_SIZE];
    const uint8_t *payload;
    size_t len;     /* payload bytes */
    size_t done;    /* bytes of hdr + payload written */
    unsigned flags; /* NETD_SEND_* */
    netd_done_fn cb;
    void *arg;
    /* resending links (netd.h): */
    uint64_t seq;  /* the frame's number; 0 for an acknowledgement */
    uint8_t *copy; /* the payload's copy (payload points at it), or NULL */
    int ctl;       /* an acknowledgement: freed once written, never resent */
};

/* Points iov at what the next sendmsg of o writes: the rest of the header, if any, and the
 * payload from where the last write stopped, at most NETD_WRITE_MAX bytes of it unless o is
 * NETD_SEND_WHOLE.  Returns the number of iovecs filled (0: o is written). */
int netd_out_iov(const struct netd_out *o, struct iovec iov[2]);

#endif
