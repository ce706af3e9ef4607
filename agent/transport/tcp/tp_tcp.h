/* tp_tcp.h — the TCP transport (transport.h): a link is one of the agents' authenticated mesh
 * sockets, passed to the job host and read by the host's netd receive daemons (netd.h).  The
 * agent dials and authenticates (job_link.h); connect only takes the socket (tp_addr.fd).
 * No one-sided operations: a Put travels as frames (libclient/rma). */
#ifndef TMPI_AGENT_TP_TCP_H
#define TMPI_AGENT_TP_TCP_H

#include "transport.h"

struct netd;

/* A TCP transport over the host's netd (which must outlive it).  0 or -ENOMEM. */
int tp_tcp_open(struct netd *n, struct tp **ret);

#endif
