/* metrics_http.c — the Prometheus endpoint (metrics_http.h).
 *
 * evhttp in libevent 2.1 neither limits connections nor says when one opens.  It does let us
 * make each connection's bufferevent (evhttp_set_bevcb), so a connection is counted there, in
 * a slot keyed by its bufferevent.  Its first request finds the slot again
 * (evhttp_connection_get_bufferevent) and hooks the connection's close, which frees it.  A
 * connection that never completes a request is closed by evhttp after [metrics] timeout; its
 * slot is freed by the sweep a second later, or at once when a new connection's bufferevent
 * gets its address (the old one is then certainly gone). */
#include "metrics_http.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "agent.h"
#include "log.h"
#include "mesh.h"
#include "metrics.h"

#define METRICS_SWEEP_MS 500

struct metrics_slot {
    struct bufferevent *bev; /* NULL: free; never dereferenced, only compared */
    double since;            /* made (agent_now) */
    int claimed;             /* a request came: its close frees the slot */
};

struct metrics_server {
    struct agent *a;
    struct evhttp *http;
    struct evhttp_bound_socket *sock;
    struct metrics_slot *slots;
    unsigned nslots, used;
    int paused; /* the listener stopped accepting: every slot is taken */
    struct event *sweep;
    uint64_t requests, not_found, over_limit, pauses;
};

static void slot_free(struct metrics_server *s, struct metrics_slot *sl)
{
    if (!sl->bev) return;
    sl->bev = NULL;
    sl->claimed = 0;
    s->used--;
    if (s->paused && s->used < s->nslots) {
        s->paused = 0;
        evconnlistener_enable(evhttp_bound_socket_get_listener(s->sock));
    }
}

static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
    struct metrics_server *s = arg;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) return NULL; /* evhttp makes its own; that connection goes uncounted */
    struct metrics_slot *free_slot = NULL;
    for (unsigned i = 0; i < s->nslots; i++) {
        if (s->slots[i].bev == bev) slot_free(s, &s->slots[i]); /* its old owner is gone */
        if (!s->slots[i].bev && !free_slot) free_slot = &s->slots[i];
    }
    if (!free_slot) {
        /* accepted in the same batch as the one that took the last slot: its request gets a
         * 503 (request_cb) */
        s->over_limit++;
        return bev;
    }
    free_slot->bev = bev;
    free_slot->since = agent_now();
    s->used++;
    if (s->used == s->nslots && !s->paused) {
        s->paused = 1;
        s->pauses++;
        evconnlistener_disable(evhttp_bound_socket_get_listener(s->sock));
    }
    return bev;
}

static struct metrics_slot *slot_of(struct metrics_server *s, struct bufferevent *bev)
{
    for (unsigned i = 0; i < s->nslots; i++)
        if (s->slots[i].bev == bev) return &s->slots[i];
    return NULL;
}

static void on_conn_close(struct evhttp_connection *evcon, void *arg)
{
    struct metrics_server *s = arg;
    struct metrics_slot *sl = slot_of(s, evhttp_connection_get_bufferevent(evcon));
    if (sl) slot_free(s, sl);
}

static void reply_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
    struct evbuffer *b = evbuffer_new();
    if (b) evbuffer_add_printf(b, "%s\n", text);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; charset=utf-8");
    evhttp_send_reply(req, code, reason, b);
    if (b) evbuffer_free(b);
}

static void request_cb(struct evhttp_request *req, void *arg)
{
    struct metrics_server *s = arg;
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    struct metrics_slot *sl = slot_of(s, evhttp_connection_get_bufferevent(evcon));
    if (!sl) {
        evhttp_connection_set_closecb(evcon, NULL, NULL);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
        reply_text(req, 503, "Service Unavailable",
                   "too many connections to the metrics endpoint ([metrics] max_connections)");
        return;
    }
    if (!sl->claimed) {
        sl->claimed = 1;
        evhttp_connection_set_closecb(evcon, on_conn_close, s);
    }
    s->requests++;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    if (!path || strcmp(path, "/metrics") != 0) {
        s->not_found++;
        reply_text(req, 404, "Not Found", "not found: the metrics are at /metrics");
        return;
    }
    struct evbuffer *b = evbuffer_new();
    if (!b || metrics_render(s->a, b) < 0) {
        if (b) evbuffer_free(b);
        reply_text(req, 500, "Internal Server Error", "out of memory");
        return;
    }
    evbuffer_add_printf(b,
                        "# HELP tmpi_metrics_requests_total Requests to this endpoint\n"
                        "# TYPE tmpi_metrics_requests_total counter\n"
                        "tmpi_metrics_requests_total{code=\"200\"} %llu\n"
                        "tmpi_metrics_requests_total{code=\"404\"} %llu\n"
                        "tmpi_metrics_requests_total{code=\"503\"} %llu\n"
                        "# HELP tmpi_metrics_connections Connections open to this endpoint\n"
                        "# TYPE tmpi_metrics_connections gauge\n"
                        "tmpi_metrics_connections %u\n"
                        "# HELP tmpi_metrics_accept_pauses_total Times every connection slot "
                        "was taken ([metrics] max_connections) and accepting stopped\n"
                        "# TYPE tmpi_metrics_accept_pauses_total counter\n"
                        "tmpi_metrics_accept_pauses_total %llu\n",
                        (unsigned long long)(s->requests - s->not_found),
                        (unsigned long long)s->not_found, (unsigned long long)s->over_limit,
                        s->used, (unsigned long long)s->pauses);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; version=0.0.4; charset=utf-8");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

static void sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    struct metrics_server *s = arg;
    double now = agent_now();
    for (unsigned i = 0; i < s->nslots; i++) {
        struct metrics_slot *sl = &s->slots[i];
        if (sl->bev && !sl->claimed && now - sl->since > s->a->cfg.metrics_timeout_sec + 1)
            slot_free(s, sl);
    }
}

static void server_free(struct metrics_server *s)
{
    if (!s) return;
    if (s->sweep) event_free(s->sweep);
    if (s->http) evhttp_free(s->http);
    free(s->slots);
    free(s);
}

int metrics_http_start(struct agent *a)
{
    const struct agent_config *cfg = &a->cfg;
    if (!cfg->metrics_listen) return 0;
    char host[256], port[16];
    char *end;
    if (mesh_parse_address(cfg->metrics_listen, host, sizeof host, port, sizeof port) < 0 ||
        strtoul(port, &end, 10) > 65535 || *end)
        return log_errno(LOG_ERR, -EINVAL, "[metrics] listen: \"%s\" is not HOST:PORT",
                         cfg->metrics_listen);
    struct metrics_server *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    s->a = a;
    s->nslots = cfg->metrics_max_connections;
    s->slots = calloc(s->nslots, sizeof *s->slots);
    s->http = evhttp_new(a->base);
    s->sweep = event_new(a->base, -1, EV_PERSIST, sweep_cb, s);
    if (!s->slots || !s->http || !s->sweep) {
        server_free(s);
        return log_errno(LOG_ERR, -ENOMEM, "cannot start the metrics endpoint");
    }
    evhttp_set_timeout(s->http, (int)cfg->metrics_timeout_sec);
    evhttp_set_max_headers_size(s->http, (ev_ssize_t)cfg->metrics_max_request);
    evhttp_set_max_body_size(s->http, 0);
    evhttp_set_allowed_methods(s->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
    evhttp_set_bevcb(s->http, make_bev, s);
    evhttp_set_gencb(s->http, request_cb, s);
    s->sock = evhttp_bind_socket_with_handle(s->http, *host ? host : "0.0.0.0",
                                             (ev_uint16_t)strtoul(port, NULL, 10));
    if (!s->sock) {
        server_free(s);
        return log_errno(LOG_ERR, -EADDRNOTAVAIL, "metrics: cannot listen on %s",
                         cfg->metrics_listen);
    }
    struct timeval tv = {.tv_sec = 0, .tv_usec = METRICS_SWEEP_MS * 1000};
    event_add(s->sweep, &tv);
    /* the port really taken (the configuration may say 0) */
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    unsigned p = 0;
    if (getsockname(evhttp_bound_socket_get_fd(s->sock), (struct sockaddr *)&ss, &sl) == 0)
        p = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                           : ((struct sockaddr_in *)&ss)->sin_port);
    log_info("metrics: serving http://%s:%u/metrics (at most %u connections)",
             *host ? host : "0.0.0.0", p, s->nslots);
    a->metrics_srv = s;
    return 0;
}

void metrics_http_stop(struct agent *a)
{
    server_free(a->metrics_srv);
    a->metrics_srv = NULL;
}
