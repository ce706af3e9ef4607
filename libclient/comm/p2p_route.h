/* p2p_route.h — where a point-to-point message goes: to a rank of this node through the
 * intra-node engine (intra/p2p.h), or to another node through the network's protocol
 * (net/net_p2p.h).  The choice is made here, above both, so neither includes the other. */
#ifndef TMPI_LIBCLIENT_P2P_ROUTE_H
#define TMPI_LIBCLIENT_P2P_ROUTE_H

#include "comm.h"
#include "p2p.h"

/* Starts a send of bytes from buf to comm rank dest.  Returns 0 when the send is complete
 * (sreq done), 1 when it is pending in a rendezvous or three-phase exchange (sreq completes
 * later; st_error is set if the link failed meanwhile), -ENOMEM, or -EPIPE when the link to
 * the destination's node is gone.  MPI_PROC_NULL completes at once. */
int tm_send(struct tm_rank *me, struct tm_commref *cr, const void *buf, size_t bytes, int dest,
            int tag, enum tm_send_mode mode, struct tm_request *sreq);

#endif
