/* metrics_http.h — the Prometheus endpoint: GET /metrics over HTTP, served by libevent's evhttp
 * in the agent's loop (rendering is a few kilobytes of text and never waits).  Off unless
 * [metrics] listen is set.  Bounded like the control socket (docs/RELIABILITY.md): at most
 * [metrics] max_connections open at once (beyond, a new connection takes the slot of the
 * one idle longest, which is closed), header lines of at most max_request_size
 * bytes, no body, and [metrics] timeout seconds to send a request and read the answer.
 * Loop thread only. */
#ifndef TMPI_AGENT_METRICS_HTTP_H
#define TMPI_AGENT_METRICS_HTTP_H

struct agent_config;
struct event_base;
struct evbuffer;
struct metrics_server;

/* Appends every metric, in the Prometheus text format, to out: 0 or -ENOMEM.  Registered by
 * the daemon, which knows what there is to count (daemon/metrics.h). */
typedef int (*metrics_render_fn)(void *arg, struct evbuffer *out);

/* Listens on cfg->metrics_listen if set, in the loop of base; each GET /metrics is answered
 * with render(arg).  0 (also when off: *ret is then NULL) or a negative errno, logged. */
int metrics_http_start(struct metrics_server **ret, const struct agent_config *cfg,
                       struct event_base *base, metrics_render_fn render, void *arg);
/* Closes the endpoint and its connections; NULL: nothing. */
void metrics_http_stop(struct metrics_server *s);

/* The port the endpoint listens on (the configuration may say 0: any); 0 when off (NULL). */
unsigned metrics_http_port(const struct metrics_server *s);

#endif
