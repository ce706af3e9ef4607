/* metrics.h — every metric of the agent for its Prometheus endpoint (metrics_http.h): the
 * counts (base/metrics_count.h) and what the agent, the pool and the mesh keep anyway.  Loop
 * thread only. */
#ifndef TMPI_AGENT_METRICS_H
#define TMPI_AGENT_METRICS_H

#include "metrics_count.h"

struct agent;
struct evbuffer;

/* Every metric of the agent in the Prometheus text exposition format (version 0.0.4).
 * 0 or -ENOMEM. */
int metrics_render(struct agent *a, struct evbuffer *out);
/* The same as the endpoint's callback (metrics_http.h metrics_render_fn): arg is the agent. */
int metrics_render_agent(void *arg, struct evbuffer *out);

#endif
