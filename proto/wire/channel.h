/* channel.h — the one list of channels between nodes.  A mesh connection says in its handshake
 * which channel it is (agent/mesh/mesh_auth.h), a data frame says on which channel it travels
 * (netd_hdr.h), and libtmpi names the channel it sends on (proto/svc/svc.h net_send): all three
 * are this number, so nothing translates between them.
 *
 * Two data channels per pair of nodes so that collectives never queue behind point-to-point
 * (seed 000 §3.3); the control channel carries the agents' protobuf frames only. */
#ifndef TMPI_PROTO_CHANNEL_H
#define TMPI_PROTO_CHANNEL_H

enum tmpi_channel {
    TMPI_CH_P2P = 1,  /* point-to-point and one-sided data */
    TMPI_CH_COLL = 2, /* the collectives' leader traffic */
    TMPI_CH_CTL = 3,  /* agent to agent control (never a data link) */
};

/* Data channels per pair of nodes (TMPI_CH_P2P .. TMPI_CH_COLL). */
#define TMPI_NDATA_CH 2

#endif
