/* transport.h — the seam between a job host's data links and the network that carries them.
 *
 * A job's part on one node talks to each other node of the job over one link per data channel
 * (channel.h).  What a link carries is the same on every network: frames of the fixed 80-byte
 * header (netd_hdr.h) and an optional payload, in order per link, each delivered into a buffer
 * the receiver chooses when the header arrives (a posted user buffer or a pool buffer).  How it
 * is carried is the transport's: tcp/ (the authenticated sockets of the agents' mesh, read by
 * netd's receive daemons) or ofi/ (libfabric endpoints the job host opens itself).  The job's
 * link table (agent/host/job_net.c) and everything above it see only this header, never a file
 * descriptor or a fabric handle.
 *
 * A transport is one folder under agent/transport/ that fills a struct tp_ops and gives a
 * function that opens a struct tp (docs/ARCHITECTURE.md "Adding a transport").
 *
 *   open      tp_<name>_open(...) in the transport's own header: one per job host
 *   connect   tp_connect(t, addr, ...): a link to one peer; addr says how to reach it (an
 *             authenticated socket for tcp, an endpoint name the peer published for ofi)
 *   send      tp_send(l, h, flags, payload, done, arg): one frame, done when payload is free
 *   receive   the rx callbacks: on_header returns the buffer the payload goes to (or NULL to
 *             drop it), on_frame says it is there, on_error says the link failed
 *   progress  tp_poll (a waiting rank runs the receive machine itself), tp_hold/tp_release
 *             (it spins / stops), tp_resume (start reading a link made paused), tp_drain
 *   rma       tp_mr_reg/tp_put/tp_get where the transport has them (-ENOTSUP otherwise),
 *             tp_atomic (an accumulate carried out at the target by the transport) and
 *             tp_atomic_ok (which operations and types it carries)
 *   reattach  tp_reattach(l, addr): a new way to the same peer after on_break (tcp: a new
 *             authenticated socket; the link resends what the peer did not acknowledge).
 *             ofi: the provider makes the way anew itself; the link resends the same.
 *             -ENOTSUP where the transport has none
 *   close     tp_close(l) per link, t->ops->free(t) per transport
 *   stats     tp_stats(l): frames and bytes each way, and what carries the link
 *
 * Threading is netd's (netd.h): every call from any thread; the receive callbacks of one link
 * never run concurrently; tp_close waits for a running callback unless called from one. */
#ifndef TMPI_AGENT_TRANSPORT_H
#define TMPI_AGENT_TRANSPORT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "netd_hdr.h"

struct tp;
struct tp_link;
struct tp_mr;

/* Flag of tp_send: hand the whole payload to the network at once instead of in pieces (the
 * same meaning as NETD_SEND_WHOLE and svc.h TMPI_NET_WHOLE). */
#define TP_SEND_WHOLE 1u

/* Receive callbacks of a link (the same contract as netd_ops, netd.h). */
struct tp_rx_ops {
    void *(*on_header)(void *arg, struct tp_link *l, const struct netd_hdr *h, void **ctx);
    void (*on_frame)(void *arg, struct tp_link *l, const struct netd_hdr *h, void *ctx);
    void (*on_error)(void *arg, struct tp_link *l, int err);
    /* NULL, or the link survives a break of what carries it (netd_ops.on_break): 0 to bring
     * a new way with tp_reattach, anything else to fail it (on_error follows).  Only
     * transports with reattach call it. */
    int (*on_break)(void *arg, struct tp_link *l, int err);
    /* NULL, or the peer answered on the new way a tp_reattach gave (netd_ops.on_rejoin): the
     * break is over only then. */
    void (*on_rejoin)(void *arg, struct tp_link *l);
};

/* done of a send, put or get: 0 or a negative errno; may run before the call returns. */
typedef void (*tp_done_fn)(void *arg, int err);

/* How to reach a peer.  tcp takes fd (connected and authenticated by the mesh; the link owns
 * it from tp_connect on, also on failure).  ofi takes the endpoint name the peer published
 * (name, name_len) and two secrets swapped over the authenticated mesh link: tx_secret the
 * peer chose (every frame we send it carries it), rx_secret we chose (a frame that arrives
 * without it belongs to no link and is dropped: nobody outside the exchange can inject). */
struct tp_addr {
    int fd;
    /* tcp: this side connected, so it writes nothing on fd until the peer's first bytes came
     * (the accepting agent reads the connection's first bytes itself: tp_reattach) */
    int wait_peer;
    const void *name;
    size_t name_len;
    uint64_t tx_secret, rx_secret;
};

struct tp_link_stats {
    uint64_t frames_sent, bytes_sent, frames_received, bytes_received;
    uint64_t rma_ops, rma_bytes;
    uint64_t atomic_ops; /* tp_atomic operations on the link (the rma_ops do not count them) */
    char carrier[80];    /* "tcp", or "ofi:PROVIDER" */
};

/* An atomic operation on count elements of one type at raddr under key in the peer's
 * registered memory (tp_atomic): target = target op buf (WRITE: buf; READ: unchanged), the
 * old values into result when it is not NULL (READ and CSWAP need it); CSWAP: target = buf
 * where it equals cmp.  The values are those of proto/svc/svc.h TMPI_AOP_* / TMPI_AT_*. */
enum tp_aop {
    TP_AOP_SUM,
    TP_AOP_PROD,
    TP_AOP_MIN,
    TP_AOP_MAX,
    TP_AOP_LAND,
    TP_AOP_LOR,
    TP_AOP_LXOR,
    TP_AOP_BAND,
    TP_AOP_BOR,
    TP_AOP_BXOR,
    TP_AOP_WRITE,
    TP_AOP_READ,
    TP_AOP_CSWAP,
    TP_AOP__COUNT
};
enum tp_atype {
    TP_AT_INT8,
    TP_AT_INT16,
    TP_AT_INT32,
    TP_AT_INT64,
    TP_AT_UINT8,
    TP_AT_UINT16,
    TP_AT_UINT32,
    TP_AT_UINT64,
    TP_AT_FLOAT,
    TP_AT_DOUBLE,
    TP_AT_FLOAT_COMPLEX,
    TP_AT_DOUBLE_COMPLEX,
    TP_AT__COUNT
};
struct tp_atomic {
    int op, type; /* enum tp_aop, enum tp_atype */
    const void *buf, *cmp;
    void *result;
    size_t count;
    uint64_t raddr, key;
};
/* tp_atomic_ok's flag: the transport applies one origin's atomics to one target in the order
 * they were posted, reads and writes alike (libfabric FI_ORDER_ATOMIC_RAR/RAW/WAR/WAW). */
#define TP_ATOMIC_ORDERED 1u

struct tp_ops {
    const char *name; /* "tcp", "ofi" */
    int (*connect)(struct tp *t, const struct tp_addr *addr, const struct tp_rx_ops *rx, void *arg,
                   int paused, struct tp_link **ret);
    int (*send)(struct tp_link *l, const struct netd_hdr *h, unsigned flags, const void *payload,
                tp_done_fn done, void *arg);
    int (*poll)(struct tp_link *l);
    void (*hold)(struct tp_link *l, int on);
    void (*release)(struct tp_link *l);
    void (*resume)(struct tp_link *l);
    void (*drain)(struct tp_link *l);
    void (*close)(struct tp_link *l);
    void (*stats)(struct tp_link *l, struct tp_link_stats *ret);
    /* NULL where links cannot be carried on anew (tp_reattach says -ENOTSUP). */
    int (*reattach)(struct tp_link *l, const struct tp_addr *addr);
    /* One-sided, NULL where the transport has none.  mr_reg registers [buf, buf + len) for
     * remote access and says the key and address a peer names it by. */
    int (*mr_reg)(struct tp *t, void *buf, size_t len, struct tp_mr **ret, uint64_t *key,
                  uint64_t *addr);
    void (*mr_dereg)(struct tp_mr *mr);
    int (*put)(struct tp_link *l, const void *buf, size_t len, uint64_t raddr, uint64_t key,
               tp_done_fn done, void *arg);
    int (*get)(struct tp_link *l, void *buf, size_t len, uint64_t raddr, uint64_t key,
               tp_done_fn done, void *arg);
    /* Atomics, NULL where the transport has none.  atomic_ok: the most elements one atomic of
     * op on type carries (fetch: with the old values back), or -ENOTSUP; *ret_flags gets
     * TP_ATOMIC_ORDERED or 0.  atomic: l is the link to the peer, or NULL for this endpoint's
     * own memory (so that the accumulates of the target's own node take the same path as
     * those of other nodes and stay atomic against them); done as for put. */
    int (*atomic_ok)(struct tp *t, int op, int type, int fetch, unsigned *ret_flags);
    int (*atomic)(struct tp *t, struct tp_link *l, const struct tp_atomic *a, tp_done_fn done,
                  void *arg);
    void (*free)(struct tp *t); /* every link closed before */
};

/* The first member of every transport's own structs. */
struct tp {
    const struct tp_ops *ops;
};
struct tp_link {
    const struct tp_ops *ops;
};

static inline int tp_connect(struct tp *t, const struct tp_addr *a, const struct tp_rx_ops *rx,
                             void *arg, int paused, struct tp_link **ret)
{
    return t->ops->connect(t, a, rx, arg, paused, ret);
}
static inline int tp_send(struct tp_link *l, const struct netd_hdr *h, unsigned flags,
                          const void *payload, tp_done_fn done, void *arg)
{
    return l->ops->send(l, h, flags, payload, done, arg);
}
static inline int tp_poll(struct tp_link *l)
{
    return l->ops->poll(l);
}
static inline void tp_hold(struct tp_link *l, int on)
{
    if (l->ops->hold) l->ops->hold(l, on);
}
static inline void tp_release(struct tp_link *l)
{
    if (l->ops->release) l->ops->release(l);
}
static inline void tp_resume(struct tp_link *l)
{
    l->ops->resume(l);
}
static inline void tp_drain(struct tp_link *l)
{
    l->ops->drain(l);
}
static inline void tp_close(struct tp_link *l)
{
    l->ops->close(l);
}
static inline void tp_stats(struct tp_link *l, struct tp_link_stats *ret)
{
    l->ops->stats(l, ret);
}
static inline int tp_reattach(struct tp_link *l, const struct tp_addr *a)
{
    return l->ops->reattach ? l->ops->reattach(l, a) : -ENOTSUP;
}
static inline int tp_mr_reg(struct tp *t, void *buf, size_t len, struct tp_mr **ret, uint64_t *key,
                            uint64_t *addr)
{
    return t->ops->mr_reg ? t->ops->mr_reg(t, buf, len, ret, key, addr) : -ENOTSUP;
}
static inline int tp_put(struct tp_link *l, const void *buf, size_t len, uint64_t raddr,
                         uint64_t key, tp_done_fn done, void *arg)
{
    return l->ops->put ? l->ops->put(l, buf, len, raddr, key, done, arg) : -ENOTSUP;
}
static inline int tp_get(struct tp_link *l, void *buf, size_t len, uint64_t raddr, uint64_t key,
                         tp_done_fn done, void *arg)
{
    return l->ops->get ? l->ops->get(l, buf, len, raddr, key, done, arg) : -ENOTSUP;
}

static inline int tp_atomic_ok(struct tp *t, int op, int type, int fetch, unsigned *ret_flags)
{
    return t->ops->atomic_ok ? t->ops->atomic_ok(t, op, type, fetch, ret_flags) : -ENOTSUP;
}
static inline int tp_atomic(struct tp *t, struct tp_link *l, const struct tp_atomic *a,
                            tp_done_fn done, void *arg)
{
    return t->ops->atomic ? t->ops->atomic(t, l, a, done, arg) : -ENOTSUP;
}

#endif
