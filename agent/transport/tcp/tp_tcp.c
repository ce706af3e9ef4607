/* tp_tcp.c — the TCP transport over netd (tp_tcp.h).  Each call is one netd call behind the
 * link's ops pointer: the frame path is netd's, unchanged. */
#include "tp_tcp.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netd.h"

struct tcp_tp {
    struct tp base;
    struct netd *netd;
};

struct tcp_link {
    struct tp_link base;
    struct netd_link *nl;
    const struct tp_rx_ops *rx;
    void *arg;
    /* counted here so that every transport's stats mean the same (relaxed: a statistic) */
    atomic_uint_fast64_t frames_sent, bytes_sent, frames_received, bytes_received;
};

static void *on_header(void *arg, struct netd_link *nl, const struct netd_hdr *h, void **ctx)
{
    struct tcp_link *l = arg;
    return l->rx->on_header(l->arg, &l->base, h, ctx);
}

static void on_frame(void *arg, struct netd_link *nl, const struct netd_hdr *h, void *ctx)
{
    struct tcp_link *l = arg;
    atomic_fetch_add_explicit(&l->frames_received, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&l->bytes_received, NETD_HDR_SIZE + h->payload_len,
                              memory_order_relaxed);
    l->rx->on_frame(l->arg, &l->base, h, ctx);
}

static void on_error(void *arg, struct netd_link *nl, int err)
{
    struct tcp_link *l = arg;
    l->rx->on_error(l->arg, &l->base, err);
}

static int on_break(void *arg, struct netd_link *nl, int err)
{
    struct tcp_link *l = arg;
    return l->rx->on_break ? l->rx->on_break(l->arg, &l->base, err) : -1;
}

static void on_rejoin(void *arg, struct netd_link *nl)
{
    struct tcp_link *l = arg;
    if (l->rx->on_rejoin) l->rx->on_rejoin(l->arg, &l->base);
}

/* Links whose owner can bring a new socket resend; the others fail at a break, as before. */
static const struct netd_ops tcp_netd_ops = {
    .on_header = on_header,
    .on_frame = on_frame,
    .on_error = on_error,
};
static const struct netd_ops tcp_netd_resend_ops = {
    .on_header = on_header,
    .on_frame = on_frame,
    .on_error = on_error,
    .on_break = on_break,
    .on_rejoin = on_rejoin,
};

static const struct tp_ops tcp_ops;

static int tcp_connect(struct tp *t, const struct tp_addr *a, const struct tp_rx_ops *rx, void *arg,
                       int paused, struct tp_link **ret)
{
    struct tcp_tp *tt = (struct tcp_tp *)t;
    if (a->fd < 0) return -EINVAL;
    struct tcp_link *l = calloc(1, sizeof *l);
    if (!l) {
        close(a->fd);
        return -ENOMEM;
    }
    l->base.ops = &tcp_ops;
    l->rx = rx;
    l->arg = arg;
    int r = netd_link_new(tt->netd, a->fd, rx->on_break ? &tcp_netd_resend_ops : &tcp_netd_ops, l,
                          paused, &l->nl);
    if (r < 0) {
        free(l);
        return r;
    }
    *ret = &l->base;
    return 0;
}

static int tcp_send(struct tp_link *tl, const struct netd_hdr *h, unsigned flags,
                    const void *payload, tp_done_fn done, void *arg)
{
    struct tcp_link *l = (struct tcp_link *)tl;
    int r = netd_send(l->nl, h, (flags & TP_SEND_WHOLE) ? NETD_SEND_WHOLE : 0, payload, done, arg);
    if (r == 0) {
        atomic_fetch_add_explicit(&l->frames_sent, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->bytes_sent, NETD_HDR_SIZE + h->payload_len,
                                  memory_order_relaxed);
    }
    return r;
}

static int tcp_poll(struct tp_link *tl)
{
    return netd_link_poll(((struct tcp_link *)tl)->nl);
}

static void tcp_hold(struct tp_link *tl, int on)
{
    netd_link_hold(((struct tcp_link *)tl)->nl, on);
}

static void tcp_release(struct tp_link *tl)
{
    netd_link_release(((struct tcp_link *)tl)->nl);
}

static void tcp_resume(struct tp_link *tl)
{
    netd_link_resume(((struct tcp_link *)tl)->nl);
}

static void tcp_drain(struct tp_link *tl)
{
    netd_link_drain(((struct tcp_link *)tl)->nl);
}

static void tcp_close(struct tp_link *tl)
{
    struct tcp_link *l = (struct tcp_link *)tl;
    /* From the link's own callback netd frees the link when the callback returns, and the
     * callback still holds our struct as its arg: that case cannot free it here.  job_net
     * closes links only from the job thread, never from a callback. */
    netd_link_free(l->nl);
    free(l);
}

static void tcp_stats(struct tp_link *tl, struct tp_link_stats *ret)
{
    struct tcp_link *l = (struct tcp_link *)tl;
    memset(ret, 0, sizeof *ret);
    ret->frames_sent = atomic_load_explicit(&l->frames_sent, memory_order_relaxed);
    ret->bytes_sent = atomic_load_explicit(&l->bytes_sent, memory_order_relaxed);
    ret->frames_received = atomic_load_explicit(&l->frames_received, memory_order_relaxed);
    ret->bytes_received = atomic_load_explicit(&l->bytes_received, memory_order_relaxed);
    strcpy(ret->carrier, "tcp");
}

static int tcp_reattach(struct tp_link *tl, const struct tp_addr *a)
{
    if (a->fd < 0) return -EINVAL;
    return netd_link_reattach(((struct tcp_link *)tl)->nl, a->fd, a->wait_peer);
}

static void tcp_free(struct tp *t)
{
    free(t);
}

static const struct tp_ops tcp_ops = {
    .name = "tcp",
    .connect = tcp_connect,
    .send = tcp_send,
    .poll = tcp_poll,
    .hold = tcp_hold,
    .release = tcp_release,
    .resume = tcp_resume,
    .drain = tcp_drain,
    .close = tcp_close,
    .stats = tcp_stats,
    .reattach = tcp_reattach,
    .free = tcp_free,
};

int tp_tcp_open(struct netd *n, struct tp **ret)
{
    struct tcp_tp *t = calloc(1, sizeof *t);
    if (!t) return -ENOMEM;
    t->base.ops = &tcp_ops;
    t->netd = n;
    *ret = &t->base;
    return 0;
}
