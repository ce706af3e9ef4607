/* cluster.h — the cluster view: tmpictl nodes and tmpictl jobs --all, answered from any node.
 *
 * The asked agent opens one mesh control connection to each configured peer ([mesh] peers),
 * sends a NodeQuery and waits at most query_timeout_ms for the NodeReport (the agent's one
 * fan-out engine, fanout.h); a peer that cannot be reached is "down", one that does not
 * answer in time (stopped, overloaded) "timeout".  Nothing is kept between queries: what tmpictl
 * shows is what the agents said just now.  Loop thread only. */
#ifndef TMPI_AGENT_CLUSTER_H
#define TMPI_AGENT_CLUSTER_H

#include <sys/types.h>

#include "control.pb-c.h"

struct agent;
struct mesh_conn;
struct cluster_query;

/* The reply (NodesReply, or JobsReply for jobs), valid during the call; the query is freed
 * right after it returns. */
typedef void (*cluster_done_fn)(void *arg, const Tmpi__Envelope *reply);

/* Asks every configured peer; done runs once, from the loop (never from this call), unless
 * cluster_query_cancel comes first.  jobs: the jobs uid may see (every user's when
 * all_users), each once, instead of the nodes.  0 or -ENOMEM. */
int cluster_query_start(struct agent *a, int jobs, uid_t uid, int all_users, cluster_done_fn done,
                        void *arg, struct cluster_query **ret);
/* The asker went away: no callback; NULL is fine. */
void cluster_query_cancel(struct cluster_query *q);

/* The mesh upcall (mesh_accept_ops.node_query): answers another agent's NodeQuery on c. */
void cluster_answer(struct agent *a, struct mesh_conn *c, const Tmpi__NodeQuery *q);

#endif
