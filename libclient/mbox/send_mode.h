/* send_mode.h — the MPI send modes as both transports take them (intra/p2p.h tm_intra_send,
 * net/net_p2p.h tm_net_send), a type of its own so that neither transport includes the
 * other's header: the choice between them is made above both (comm/p2p_route.h). */
#ifndef TMPI_LIBCLIENT_SEND_MODE_H
#define TMPI_LIBCLIENT_SEND_MODE_H

/* Standard (eager below the transport's limit, rendezvous above), synchronous (completes
 * once the receive matched) and buffered (complete at once: the data is copied first). */
enum tm_send_mode { TM_SEND_STANDARD, TM_SEND_SYNC, TM_SEND_BUFFERED };

#endif
