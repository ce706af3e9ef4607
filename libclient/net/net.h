/* net.h — the receive daemon upcalls libclient registers for inter-node frames (agent/svc.h
 * tmpi_client_ops net_header / net_frame).  They only dispatch: NETD_COLL frames to the
 * collectives' inter-node phase (coll_net.h), every other type to point-to-point
 * (net_p2p.h). */
#ifndef TMPI_LIBCLIENT_NET_H
#define TMPI_LIBCLIENT_NET_H

#include "netd_hdr.h"

void *tm_net_header(void *state, int node, const struct netd_hdr *h, void **ctx);
void tm_net_frame(void *state, int node, const struct netd_hdr *h, void *ctx);

#endif
