/* metrics_http.h — the Prometheus endpoint: GET /metrics over HTTP, served by libevent's evhttp
 * in the agent's loop (rendering is a few kilobytes of text and never waits).  Off unless
 * [metrics] listen is set.  Bounded like the control socket (docs/RELIABILITY.md): at most
 * [metrics] max_connections open at once (beyond, a new connection takes the slot of the
 * one idle longest, which is closed), header lines of at most max_request_size
 * bytes, no body, and [metrics] timeout seconds to send a request and read the answer.
 * Loop thread only. */
#ifndef TMPI_AGENT_METRICS_HTTP_H
#define TMPI_AGENT_METRICS_HTTP_H

struct agent;

/* Listens on cfg.metrics_listen if set.  0 (also when off) or a negative errno, logged. */
int metrics_http_start(struct agent *a);
void metrics_http_stop(struct agent *a);

/* The port the endpoint listens on (the configuration may say 0: any); 0 when off. */
unsigned metrics_http_port(const struct agent *a);

#endif
