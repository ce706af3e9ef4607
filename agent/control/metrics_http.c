/* metrics_http.c — the Prometheus endpoint (metrics_http.h).
 *
 * evhttp in libevent 2.1 neither limits connections nor says when one opens.  It does let us
 * make each connection's bufferevent (evhttp_set_bevcb), so a connection is counted there, in
 * a slot that holds a reference to its bufferevent (bufferevent_incref): the bufferevent stays
 * valid until the slot lets it go, even after evhttp freed the connection.  evhttp's free
 * clears the bufferevent's callbacks, which a live connection always has set: that is how a
 * slot sees its connection is gone (looked at on every new connection and every sweep).  A
 * connection's first request also hooks its close, which frees the slot at once.
 *
 * When every slot is taken, a new connection takes the slot of the connection that has been
 * idle longest (opened, or its last request begun, longest ago), which is shut down (evhttp
 * then sees its end and frees it).  The listener never stops accepting: a flood of idle or
 * slow connections (5,000 held open, or dripping their requests) keeps at most
 * [metrics] max_connections of them, each for a moment, and a scraper's connection, the
 * newest, is answered (before, the listener paused and the scrape waited in the kernel's
 * backlog behind the flood until [metrics] timeout closed the idle ones: 30 s). */
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
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "log.h"
#include "mesh.h"

#define METRICS_SWEEP_MS 500

struct metrics_slot {
    struct bufferevent *bev; /* NULL: free; else one reference of ours */
    double active;           /* made, or its last request begun: the idlest goes first */
    int claimed;             /* a request came: its close frees the slot */
};

struct metrics_server {
    metrics_render_fn render;
    void *render_arg;
    struct evhttp *http;
    struct evhttp_bound_socket *sock;
    struct metrics_slot *slots;
    unsigned nslots, used;
    struct event *sweep;
    uint64_t requests, not_found, over_limit, evictions;
};

static void slot_free(struct metrics_server *s, struct metrics_slot *sl)
{
    if (!sl->bev) return;
    bufferevent_decref(sl->bev); /* evhttp's own reference, if it still has it, keeps it */
    sl->bev = NULL;
    sl->claimed = 0;
    s->used--;
}

/* evhttp freed the slot's connection (bufferevent_free cleared its callbacks). */
static int slot_gone(struct metrics_slot *sl)
{
    bufferevent_data_cb rd, wr;
    bufferevent_event_cb ev;
    void *arg;
    bufferevent_getcb(sl->bev, &rd, &wr, &ev, &arg);
    return !rd && !wr && !ev && !arg;
}

/* Every slot is taken: the one idle longest is shut down and given up.  NULL when none can be
 * (a connection without its socket yet). */
static struct metrics_slot *evict_idlest(struct metrics_server *s)
{
    struct metrics_slot *v = NULL;
    for (unsigned i = 0; i < s->nslots; i++) {
        struct metrics_slot *sl = &s->slots[i];
        if (sl->bev && bufferevent_getfd(sl->bev) >= 0 && (!v || sl->active < v->active)) v = sl;
    }
    if (!v) return NULL;
    /* evhttp reads its end and frees the connection (and calls its close callback, which
     * finds no slot any more) */
    shutdown(bufferevent_getfd(v->bev), SHUT_RDWR);
    slot_free(s, v);
    s->evictions++;
    return v;
}

static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
    struct metrics_server *s = arg;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!bev) return NULL; /* evhttp makes its own; that connection goes uncounted */
    struct metrics_slot *free_slot = NULL;
    for (unsigned i = 0; i < s->nslots; i++) {
        if (s->slots[i].bev && slot_gone(&s->slots[i])) slot_free(s, &s->slots[i]);
        if (!s->slots[i].bev && !free_slot) free_slot = &s->slots[i];
    }
    if (!free_slot) free_slot = evict_idlest(s);
    if (!free_slot) {
        /* no slot could be given up: its request gets a 503 (request_cb) */
        s->over_limit++;
        return bev;
    }
    bufferevent_incref(bev);
    free_slot->bev = bev;
    free_slot->active = agent_now();
    s->used++;
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
    sl->active = agent_now();
    s->requests++;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    if (!path || strcmp(path, "/metrics") != 0) {
        s->not_found++;
        reply_text(req, 404, "Not Found", "not found: the metrics are at /metrics");
        return;
    }
    struct evbuffer *b = evbuffer_new();
    if (!b || s->render(s->render_arg, b) < 0) {
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
                        "# HELP tmpi_metrics_evictions_total Connections closed because every "
                        "slot was taken ([metrics] max_connections) and a new one came: the one "
                        "idle longest goes\n"
                        "# TYPE tmpi_metrics_evictions_total counter\n"
                        "tmpi_metrics_evictions_total %llu\n",
                        (unsigned long long)(s->requests - s->not_found),
                        (unsigned long long)s->not_found, (unsigned long long)s->over_limit,
                        s->used, (unsigned long long)s->evictions);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; version=0.0.4; charset=utf-8");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

static void sweep_cb(evutil_socket_t fd, short what, void *arg)
{
    struct metrics_server *s = arg;
    for (unsigned i = 0; i < s->nslots; i++) {
        struct metrics_slot *sl = &s->slots[i];
        if (sl->bev && slot_gone(sl)) slot_free(s, sl);
    }
}

static void server_free(struct metrics_server *s)
{
    if (!s) return;
    if (s->sweep) event_free(s->sweep);
    if (s->http) evhttp_free(s->http);
    for (unsigned i = 0; s->slots && i < s->nslots; i++)
        slot_free(s, &s->slots[i]);
    free(s->slots);
    free(s);
}

int metrics_http_start(struct metrics_server **ret, const struct agent_config *cfg,
                       struct event_base *base, metrics_render_fn render, void *arg)
{
    *ret = NULL;
    if (!cfg->metrics_listen) return 0;
    char host[256], port[16];
    char *end;
    if (mesh_parse_address(cfg->metrics_listen, host, sizeof host, port, sizeof port) < 0 ||
        strtoul(port, &end, 10) > 65535 || *end)
        return log_errno(LOG_ERR, -EINVAL, "[metrics] listen: \"%s\" is not HOST:PORT",
                         cfg->metrics_listen);
    struct metrics_server *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    s->render = render;
    s->render_arg = arg;
    s->nslots = cfg->metrics_max_connections;
    s->slots = calloc(s->nslots, sizeof *s->slots);
    s->http = evhttp_new(base);
    s->sweep = event_new(base, -1, EV_PERSIST, sweep_cb, s);
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
    *ret = s;
    unsigned p = metrics_http_port(s);
    log_info("metrics: serving http://%s:%u/metrics (at most %u connections)",
             *host ? host : "0.0.0.0", p, s->nslots);
    return 0;
}

unsigned metrics_http_port(const struct metrics_server *s)
{
    if (!s) return 0;
    /* the port really taken (the configuration may say 0) */
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(evhttp_bound_socket_get_fd(s->sock), (struct sockaddr *)&ss, &sl) != 0)
        return 0;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

void metrics_http_stop(struct metrics_server *s)
{
    server_free(s);
}
