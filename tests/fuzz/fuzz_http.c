/* fuzz_http.c — the metrics endpoint's HTTP request parsing (evhttp with the endpoint's
 * limits: header size, no body, GET and HEAD only) and its answer, on a real endpoint of a
 * bare agent: each input is one client connection's bytes, then its end.  The endpoint must
 * answer or close, never crash, and keep at most its connection budget. */
#include <errno.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "fuzz.h"
#include "metrics.h"
#include "metrics_http.h"

static struct agent fuzz_agent;

static int setup(void)
{
    struct agent *a = &fuzz_agent;
    a->base = event_base_new();
    if (!a->base) abort();
    a->cfg.name = "fuzz";
    a->cfg.metrics_listen = "127.0.0.1:0";
    a->cfg.metrics_max_connections = 4;
    a->cfg.metrics_timeout_sec = 1;
    a->cfg.metrics_max_request = 1024;
    if (metrics_http_start(&a->metrics_srv, &a->cfg, a->base, metrics_render_agent, a) < 0) abort();
    return (int)metrics_http_port(a->metrics_srv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int port;
    if (!port) port = setup();
    struct event_base *base = fuzz_agent.base;
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof sa) < 0) abort();
    size_t sent = 0;
    /* the endpoint reads as we write: run its loop between pieces */
    while (sent < size) {
        ssize_t n = send(c, data + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0)
            sent += (size_t)n;
        else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            break;
        event_base_loop(base, EVLOOP_NONBLOCK);
    }
    shutdown(c, SHUT_WR);
    char buf[65536];
    for (int round = 0; round < 5000; round++) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        struct pollfd p = {.fd = c, .events = POLLIN};
        if (poll(&p, 1, 0) > 0) {
            ssize_t n = recv(c, buf, sizeof buf, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN)) break; /* answered and closed */
        }
    }
    close(c);
    event_base_loop(base, EVLOOP_NONBLOCK);
    return 0;
}
