/* net.h — the receive daemon upcalls libclient registers for inter-node frames (proto/svc/svc.h
 * tmpi_client_ops net_header / net_frame).  They decode libtmpi's half of the header
 * (msg_hdr.h), refuse a malformed one as a protocol error, and hand the frame to the
 * point-to-point protocol (net_p2p.h); the collectives' inter-node messages ride on
 * point-to-point frames of the collective channel. */
#ifndef TMPI_LIBCLIENT_NET_H
#define TMPI_LIBCLIENT_NET_H

#include "netd_hdr.h"

void *tm_net_header(void *state, int node, const struct netd_hdr *h, void **ctx);
void tm_net_frame(void *state, int node, const struct netd_hdr *h, void *ctx);

#endif
