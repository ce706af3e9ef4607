/* host_names.h — a rank's name operations (MPI_Publish/Unpublish/Lookup_name, svc name_op) as
 * the job host asks its agent's name service (agent/control/names.h): a NameRequest on the
 * host's channel, the rank thread waiting for the NameReply with its query number. */
#ifndef TMPI_AGENT_HOST_NAMES_H
#define TMPI_AGENT_HOST_NAMES_H

#include <stddef.h>

#include "control.pb-c.h"

struct bufferevent;

/* How long a rank waits for its agent's answer: the agent answers within its [mesh]
 * query_timeout_ms, so only a stuck agent reaches this. */
#define HOST_NAMES_TIMEOUT_MS 60000

/* The channel to the agent (NULL: it is gone; waiting ranks get -EPIPE).  Loop thread. */
void host_names_channel(struct bufferevent *chan);
/* svc name_op (proto/svc/svc.h).  Any rank thread; blocks until the agent answered. */
int host_name_op(int op, const char *service, const char *port, char *out, size_t cap);
/* The agent's answer (loop thread): wakes the rank that asked; an unknown query is dropped. */
void host_names_reply(const Tmpi__NameReply *r);

#endif
