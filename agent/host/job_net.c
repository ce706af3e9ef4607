/* job_net.c — data links of a member job, in its job host (job_net.h). */
#include "job_net.h"

#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "job.h"
#include "job_spare.h"
#include "log.h"
#include "mesh_auth.h"
#include "tp_ofi.h"
#include "tp_tcp.h"
#include "transport.h"

static struct job_net_link *link_at(struct job_net *n, int node, int channel)
{
    return &n->links[node * 2 + channel - 1];
}

int job_net_new(struct job *j, uint64_t uid, int self, size_t nnodes,
                Tmpi__NodePlacement *const *nodes, struct job_net **ret)
{
    struct job_net *n = calloc(1, sizeof *n);
    if (!n) return -ENOMEM;
    n->addr = calloc(nnodes, sizeof *n->addr);
    n->links = calloc(nnodes * 2, sizeof *n->links);
    if (!n->addr || !n->links) {
        free(n->addr);
        free(n->links);
        free(n);
        return -ENOMEM;
    }
    n->job = j;
    n->uid = uid;
    n->self = self;
    n->nnodes = (int)nnodes;
    n->want = (unsigned)(nnodes - 1) * 2;
    pthread_mutex_init(&n->mu, NULL);
    pthread_cond_init(&n->drained, NULL);
    for (size_t i = 0; i < nnodes; i++) {
        const char *h = nodes[i]->host ? nodes[i]->host : "";
        snprintf(n->addr[i], sizeof n->addr[i], strchr(h, ':') ? "[%s]:%u" : "%s:%u", h,
                 nodes[i]->port);
        for (int ch = 1; ch <= 2; ch++) {
            struct job_net_link *l = link_at(n, (int)i, ch);
            l->net = n;
            l->node = (int)i;
            l->channel = ch;
        }
    }
    *ret = n;
    return 0;
}

/* ---- arriving frames ---- */

/* *ctx of a frame whose header was refused: on_frame drops it. */
static const char bad_frame;

static void *on_header(void *arg, struct tp_link *tl, const struct netd_hdr *h, void **ctx)
{
    struct job_net_link *l = arg;
    struct job_net *n = l->net;
    struct job *j = n->job;
    const char *bad = NULL;
    /* spawned ranks (job_spawn.h) are world ranks too, their nodes fixed by the slots */
    uint32_t nworld = j->spawn_universe > j->world_size ? j->spawn_universe : j->world_size;
    if (atomic_load_explicit(&n->rx_stopped, memory_order_acquire)) {
        /* The job is ending: its ranks' buffers may be gone. */
        *ctx = (void *)&bad_frame;
        return NULL;
    }
    if (h->job_id != n->uid)
        bad = "another job's id";
    else if (h->src_rank < 0 || (uint32_t)h->src_rank >= nworld ||
             j->node_of_rank[h->src_rank] != l->node)
        bad = "a source rank not on that node";
    else if (h->dst_rank < 0 || (uint32_t)h->dst_rank >= nworld ||
             j->node_of_rank[h->dst_rank] != n->self)
        bad = "a destination rank not on this node";
    else if (h->channel != l->channel)
        bad = "a frame of the other channel";
    if (bad) {
        char reason[200];
        snprintf(reason, sizeof reason, "protocol error from node %d (%s)", l->node,
                 n->addr[l->node]);
        log_warning("job %llu: %s: %s (frame %llu, ranks %d -> %d, channel %u on channel %d)",
                    (unsigned long long)j->id, reason, bad, (unsigned long long)h->seq, h->src_rank,
                    h->dst_rank, h->channel, l->channel);
        job_cancel(j, 1, reason);
        *ctx = (void *)&bad_frame;
        return NULL;
    }
    /* Links are resumed only after the client state exists (svc.c), and it is destroyed
     * only after the links are closed (job.c): no lock needed to read it here. */
    return j->client_ops.net_header(j->client_state, l->node, h, ctx);
}

static void on_frame(void *arg, struct tp_link *tl, const struct netd_hdr *h, void *ctx)
{
    struct job_net_link *l = arg;
    struct job *j = l->net->job;
    if (ctx != &bad_frame) {
        atomic_fetch_add_explicit(&l->net->rx_frames[l->channel - 1], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&l->net->rx_bytes[l->channel - 1], NETD_HDR_SIZE + h->payload_len,
                                  memory_order_relaxed);
        j->client_ops.net_frame(j->client_state, l->node, h, ctx);
    }
    /* after libtmpi took it (and woke whoever it completes) */
    atomic_fetch_add_explicit(&l->net->frames_handled, 1, memory_order_seq_cst);
}

static void on_error(void *arg, struct tp_link *tl, int err)
{
    struct job_net_link *l = arg;
    struct job_net *n = l->net;
    struct job *j = n->job;
    /* Once every local rank ended, a peer that closes its side is a peer that finished; so
     * it is at a member without ranks where none runs (the coordinator's connections tell
     * whether a node was lost, and it ends the job then). */
    if (atomic_load(&j->ranks_ended) || job_cancelled(j) || job_spare_idle(j)) return;
    char reason[300];
    /* which fault it was: the coordinator's own connections tell whether the node is alive */
    const char *how = err == -ETIMEDOUT ? "the data link timed out (bytes unacknowledged or "
                                          "keepalives unanswered)"
                      : err == -ECONNRESET || err == -EPIPE || err == 0
                          ? "the node closed the data link"
                          : NULL;
    snprintf(reason, sizeof reason, "lost connection to node %d (%s): %s", l->node,
             n->addr[l->node], how ? how : strerror(-err));
    log_warning("job %llu: %s (channel %d): %s", (unsigned long long)j->id, reason, l->channel,
                strerror(-err));
    job_cancel(j, 1, reason);
}

/* Starts l's link_reconnect_timeout_ms (loop thread or a receive daemon). */
static void budget_start(struct job_net_link *l)
{
    unsigned ms = l->net->job->agent->cfg.link_reconnect_timeout_ms;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    event_add(l->relink_ev, &tv);
}

/* Receive daemon (or the OFI progress thread): what carries the link broke (transport.h
 * on_break): its TCP socket, the mesh socket watched beside an OFI link, or the OFI link's
 * connection.  A link of a job that runs asks for a new socket and waits for it up to
 * link_reconnect_timeout_ms (relink gives it to the TCP link and reattaches the OFI one);
 * anything else fails as before (on_error). */
static int on_break(void *arg, struct tp_link *tl, int err)
{
    struct job_net_link *l = arg;
    struct job_net *n = l->net;
    struct job *j = n->job;
    if (atomic_load(&j->ranks_ended) || job_cancelled(j) || !n->relink || !l->relink_ev ||
        (__atomic_load_n(&l->l, __ATOMIC_ACQUIRE) != tl && l->tcp != tl))
        return -1;
    if (!atomic_exchange(&l->broken, 1)) {
        atomic_store(&l->broke_err, err);
        atomic_fetch_add(&n->breaks, 1);
        log_warning("job %llu: the data link to node %d (%s), channel %d, broke (%s): "
                    "reconnecting",
                    (unsigned long long)j->id, l->node, n->addr[l->node], l->channel,
                    err == -EPIPE ? "the peer closed it" : strerror(-err));
        budget_start(l);
    }
    return n->relink(j, l->node, l->channel) < 0 ? -1 : 0;
}

/* Loop thread: link_reconnect_timeout_ms after a break (or the first failed set-up) the link
 * is not carried on: no new socket came, or the peer never answered on the one that came. */
static void relink_expired(evutil_socket_t fd, short what, void *arg)
{
    struct job_net_link *l = arg;
    struct job_net *n = l->net;
    struct job *j = n->job;
    if (!atomic_load(&l->broken) || atomic_load(&j->ranks_ended)) return;
    int err = atomic_load(&l->broke_err);
    double sec = j->agent->cfg.link_reconnect_timeout_ms / 1000.0;
    const char *why = err == -EPIPE ? "the peer closed it" : strerror(-err);
    char reason[500];
    if (l->setup)
        snprintf(reason, sizeof reason,
                 "cannot set up the link to node %d (%s): the data link timed out: %s, and it "
                 "was not set up within %.1f s (link_reconnect_timeout_ms)",
                 l->node, n->addr[l->node], l->setup_why, sec);
    else if (atomic_load(&l->rejoining))
        /* both agents made the new socket, so the node is up: its job process is not */
        snprintf(reason, sizeof reason,
                 "lost connection to node %d (%s): the job's process on node %d stopped "
                 "answering: the data link broke (%s) and was made anew, but the process did "
                 "not answer on it within %.1f s (link_reconnect_timeout_ms)",
                 l->node, n->addr[l->node], l->node, why, sec);
    else
        snprintf(reason, sizeof reason,
                 "lost connection to node %d (%s): the data link timed out: it broke (%s) and "
                 "was not reconnected within %.1f s (link_reconnect_timeout_ms)",
                 l->node, n->addr[l->node], why, sec);
    log_warning("job %llu: %s (channel %d)", (unsigned long long)j->id, reason, l->channel);
    job_cancel(j, 1, reason);
}

int job_net_setup_retry(struct job_net *n, struct job_net_link *l, const char *why)
{
    struct job *j = n->job;
    if (atomic_load(&j->ranks_ended) || job_cancelled(j) || !n->relink) return -1;
    if (!l->relink_ev) l->relink_ev = evtimer_new(j->agent->base, relink_expired, l);
    if (!l->relink_ev) return -1;
    snprintf(l->setup_why, sizeof l->setup_why, "%s", why);
    if (!atomic_exchange(&l->broken, 1)) {
        l->setup = 1;
        atomic_fetch_add(&n->breaks, 1);
        budget_start(l);
    }
    log_warning("job %llu: cannot set up the data link to node %d (%s), channel %d (%s): "
                "asking for it anew",
                (unsigned long long)j->id, l->node, n->addr[l->node], l->channel, why);
    return n->relink(j, l->node, l->channel) < 0 ? -1 : 0;
}

/* Receive daemon: the peer answered on the socket relink gave: the break is over. */
static void on_rejoin(void *arg, struct tp_link *tl)
{
    struct job_net_link *l = arg;
    struct job_net *n = l->net;
    if (!atomic_exchange(&l->rejoining, 0)) return;
    atomic_store(&l->broken, 0);
    event_del(l->relink_ev);
    atomic_fetch_add(&n->reconnects, 1);
    log_info("job %llu: the data link to node %d (%s), channel %d, is reconnected: the peer "
             "answered",
             (unsigned long long)n->job->id, l->node, n->addr[l->node], l->channel);
}

/* Loop thread: fd is the new socket of l, which is up (Reconnecting, job_net.h). */
static int relink(struct job_net *n, struct job_net_link *l, int fd)
{
    struct job *j = n->job;
    /* After a break of ours the budget runs on until the peer answers on the new socket
     * (on_rejoin): its agent handing it over says nothing of the job process itself.  Said
     * before the reattach: the peer's answer can reach on_rejoin (a receive daemon, the OFI
     * progress thread) before tp_reattach returns here, and an answer that found rejoining
     * still 0 was dropped, so the link stayed broken and the job failed when the budget ran
     * out, with the peer alive and answering. */
    int was = atomic_load(&l->broken);
    if (was) atomic_store(&l->rejoining, 1);
    /* Under mu: job_net_close takes the links out under it, so the link stays while we
     * reattach (the receive callbacks, which the reattach waits for, never take mu). */
    pthread_mutex_lock(&n->mu);
    struct tp_link *t = n->closed ? NULL : l->tcp;
    int closed = n->closed;
    /* the node below connected (job_link.h): it waits for the peer's first bytes */
    struct tp_addr a = {.fd = fd, .wait_peer = l->node > n->self};
    int r = t ? tp_reattach(t, &a) : -EEXIST;
    /* A link on OFI: the socket is the watched one's; the OFI link resends on its own way
     * (tp_ofi.h "Reconnecting"), at both ends, since both agents hand a socket over. */
    if (r == 0 && l->l != t) r = tp_reattach(l->l, &(struct tp_addr){.fd = -1});
    pthread_mutex_unlock(&n->mu);
    if (!t || r < 0) {
        /* no new way came: the budget's end says the link was not reconnected */
        if (was) atomic_store(&l->rejoining, 0);
        if (t) return r;
        close(fd);
        return closed ? -ECANCELED : -EEXIST;
    }
    log_info("job %llu: the data link to node %d (%s), channel %d, %s", (unsigned long long)j->id,
             l->node, n->addr[l->node], l->channel,
             was ? "has a new socket: resending what the peer did not acknowledge"
                 : "was made anew by the peer: resending what it did not acknowledge");
    if (!was) atomic_fetch_add(&n->reconnects, 1);
    return 0;
}

const struct tp_rx_ops job_net_link_ops = {
    .on_header = on_header,
    .on_frame = on_frame,
    .on_error = on_error,
    .on_break = on_break,
    .on_rejoin = on_rejoin,
};

int job_net_add(struct job_net *n, int node, int channel, int fd)
{
    struct agent *a = n->job->agent;
    if (node < 0 || node >= n->nnodes || node == n->self ||
        (channel != TMPI_CH_P2P && channel != TMPI_CH_COLL)) {
        close(fd);
        return -EINVAL;
    }
    if (!a->netd) {
        close(fd);
        return -ENOTSUP;
    }
    struct job_net_link *l = link_at(n, node, channel);
    pthread_mutex_lock(&n->mu);
    int up = !n->closed && l->l && !l->hs;
    pthread_mutex_unlock(&n->mu);
    if (up) return relink(n, l, fd);
    /* The connecting side made the link anew while its hello ran here (its first socket
     * failed on its side): the newer socket is the one both ends use. */
    if (l->hs) {
        log_info("job %llu: the data link to node %d (%s), channel %d, was made anew during "
                 "its set-up: taking the new socket",
                 (unsigned long long)n->job->id, node, n->addr[node], channel);
        job_net_hello_cancel(l);
    }
    pthread_mutex_lock(&n->mu);
    if (n->closed || l->l || l->hs) {
        pthread_mutex_unlock(&n->mu);
        close(fd);
        return n->closed ? -ECANCELED : -EEXIST;
    }
    int r = n->tcp ? 0 : tp_tcp_open(a->netd, &n->tcp);
    pthread_mutex_unlock(&n->mu);
    if (r < 0) {
        close(fd);
        return r;
    }
    /* loop thread only, and not under mu: a bad choice cancels the job */
    if (!n->chosen)
        job_net_choose(n, a->cfg.transport, a->cfg.ofi_provider,
                       a->fabric_probed ? a->fabric : NULL);
    /* the hello swaps what OFI needs; job_net_link_up takes it from there */
    return job_net_hello_start(n, a->base, l, fd);
}

void job_net_link_up(struct job_net *n, struct job_net_link *l, int fd, struct tp_link *ofi)
{
    pthread_mutex_lock(&n->mu);
    if (n->closed) {
        pthread_mutex_unlock(&n->mu);
        close(fd);
        if (ofi) tp_close(ofi);
        return;
    }
    if (!l->relink_ev) l->relink_ev = evtimer_new(n->job->agent->base, relink_expired, l);
    int r = tp_connect(n->tcp, &(struct tp_addr){.fd = fd}, &job_net_link_ops, l, 1, &l->tcp);
    if (r == 0) {
        l->l = ofi ? ofi : l->tcp;
        n->nlinks++;
    } else if (ofi) {
        tp_close(ofi);
    }
    int all = n->nlinks == n->want;
    pthread_mutex_unlock(&n->mu);
    if (r < 0) {
        char why[160];
        snprintf(why, sizeof why, "cannot take the link to node %d: %s", l->node, strerror(-r));
        job_cancel(n->job, 1, why);
        return;
    }
    /* a job that already runs (a rank created the state) reads at once */
    if (atomic_load(&n->resumed)) {
        tp_resume(l->tcp);
        if (ofi) tp_resume(ofi);
    }
    if (l->setup && atomic_exchange(&l->broken, 0)) {
        l->setup = 0;
        event_del(l->relink_ev);
        atomic_fetch_add(&n->reconnects, 1);
        log_info("job %llu: the data link to node %d (%s), channel %d, is set up",
                 (unsigned long long)n->job->id, l->node, n->addr[l->node], l->channel);
    }
    if (all && n->linked) n->linked(n->job);
}

void job_net_resume(struct job_net *n)
{
    if (atomic_exchange(&n->resumed, 1)) return;
    pthread_mutex_lock(&n->mu);
    for (int i = 0; i < n->nnodes * 2; i++) {
        if (n->links[i].tcp) tp_resume(n->links[i].tcp);
        if (n->links[i].l && n->links[i].l != n->links[i].tcp) tp_resume(n->links[i].l);
    }
    pthread_mutex_unlock(&n->mu);
}

/* The one-sided transfers each link moved without a frame (job_net_put/get/atomic), for the
 * log (mu held, links still there): what shows that Put and Get went as fi_write / fi_read
 * and accumulates as fi_atomic. */
static void log_rma(struct job_net *n)
{
    for (int node = 0; node < n->nnodes; node++) {
        struct tp_link *l = node == n->self ? NULL : link_at(n, node, TMPI_CH_P2P)->l;
        if (!l) continue;
        struct tp_link_stats st;
        tp_stats(l, &st);
        if (st.rma_ops)
            log_info("job %llu: %llu one-sided transfers (%llu bytes) to node %d (%s) went as "
                     "remote memory access on %s (fi_write, fi_read)",
                     (unsigned long long)n->job->id, (unsigned long long)st.rma_ops,
                     (unsigned long long)st.rma_bytes, node, n->addr[node], st.carrier);
        if (st.atomic_ops)
            log_info("job %llu: %llu accumulates to node %d (%s) went as atomics of %s "
                     "(fi_atomic)",
                     (unsigned long long)n->job->id, (unsigned long long)st.atomic_ops, node,
                     n->addr[node], st.carrier);
    }
    uint64_t own = n->ofi ? tp_ofi_self_atomics(n->ofi) : 0;
    if (own)
        log_info("job %llu: %llu accumulates to this node's own windows went as atomics of "
                 "ofi:%s (fi_atomic)",
                 (unsigned long long)n->job->id, (unsigned long long)own, tp_ofi_provider(n->ofi));
}

void job_net_close(struct job_net *n)
{
    /* Take the links out under mu, free them outside it: netd_link_free waits for a running
     * callback, and on_error takes the job's locks, never mu. */
    /* [i]: the data link, [nnodes * 2 + i]: the watched socket when the data is on OFI */
    size_t nl = (size_t)n->nnodes * 2;
    struct tp_link **gone = calloc(nl * 2, sizeof *gone);
    pthread_mutex_lock(&n->mu);
    n->closed = 1;
    while (n->draining) /* job_net_stop_rx is using the links */
        pthread_cond_wait(&n->drained, &n->mu);
    log_rma(n);
    for (int i = 0; i < n->nnodes * 2; i++) {
        struct tp_link *watched = n->links[i].tcp != n->links[i].l ? n->links[i].tcp : NULL;
        n->links[i].tcp = NULL;
        if (gone) {
            gone[i] = n->links[i].l;
            gone[nl + (size_t)i] = watched;
            /* Receive callbacks still answer on their own link (ACK, CTS) until it is freed
             * below: they read the pointer atomically (job_net_send). */
            __atomic_store_n(&n->links[i].l, NULL, __ATOMIC_RELEASE);
        } else {
            /* out of memory: free under mu (no callback takes it) */
            if (n->links[i].l) tp_close(n->links[i].l);
            if (watched) tp_close(watched);
            n->links[i].l = NULL;
        }
    }
    pthread_mutex_unlock(&n->mu);
    if (gone) {
        for (size_t i = 0; i < nl * 2; i++)
            if (gone[i]) tp_close(gone[i]);
        free(gone);
    }
}

void job_net_free(struct job_net *n)
{
    if (!n) return;
    for (int i = 0; i < n->nnodes * 2; i++) {
        struct job_net_link *l = &n->links[i];
        job_net_hello_cancel(l);
        if (l->relink_ev) event_free(l->relink_ev);
        if (l->tcp && l->tcp != l->l) tp_close(l->tcp);
        if (l->l) /* a job that never ran its thread */
            tp_close(l->l);
    }
    if (n->tcp) n->tcp->ops->free(n->tcp);
    if (n->ofi) n->ofi->ops->free(n->ofi);
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->drained);
    free(n->addr);
    free(n->links);
    free(n);
}

int job_net_send(void *net, int node, int channel, unsigned flags, const struct netd_hdr *h,
                 const void *payload, void (*done)(void *arg, int err), void *arg)
{
    struct job_net *n = net;
    if (!n || node < 0 || node >= n->nnodes || node == n->self ||
        (channel != TMPI_CH_P2P && channel != TMPI_CH_COLL) || (flags & ~TMPI_NET_WHOLE))
        return -EINVAL;
    /* Links are set before the gate opens and closed after the last rank thread ended. */
    struct tp_link *l = __atomic_load_n(&link_at(n, node, channel)->l, __ATOMIC_ACQUIRE);
    if (!l) return -EPIPE;
    struct netd_hdr copy = *h;
    copy.flags = 0;
    copy.job_id = n->uid;
    copy.channel = (uint8_t)channel;
    /* before it can arrive anywhere: "in flight" never reads negative */
    atomic_fetch_add_explicit(&n->frames_sent, 1, memory_order_seq_cst);
    int r = tp_send(l, &copy, (flags & TMPI_NET_WHOLE) ? TP_SEND_WHOLE : 0, payload, done, arg);
    if (r < 0) atomic_fetch_sub_explicit(&n->frames_sent, 1, memory_order_seq_cst);
    if (r == 0) {
        atomic_fetch_add_explicit(&n->tx_frames[channel - 1], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&n->tx_bytes[channel - 1], NETD_HDR_SIZE + h->payload_len,
                                  memory_order_relaxed);
    }
    return r;
}

int job_net_mr_reg(void *net, void *buf, size_t len, void **ret_mr, uint64_t *key, uint64_t *addr)
{
    struct job_net *n = net;
    if (!n || !buf || !len || !ret_mr || !key || !addr) return -EINVAL;
    /* the endpoint is chosen with the first link, before the gate opens to the ranks */
    if (!n->ofi) return -ENOTSUP;
    struct tp_mr *mr;
    int r = tp_mr_reg(n->ofi, buf, len, &mr, key, addr);
    if (r == 0) *ret_mr = mr;
    return r;
}

void job_net_mr_dereg(void *net, void *mr)
{
    struct job_net *n = net;
    if (n && n->ofi && mr && n->ofi->ops->mr_dereg) n->ofi->ops->mr_dereg(mr);
}

/* What a one-sided transfer's completion does for the job before the caller's done. */
struct rma_done {
    struct job_net *n;
    void (*done)(void *arg, int err);
    void *arg;
};

static void rma_finished(void *p, int err)
{
    struct rma_done d = *(struct rma_done *)p;
    free(p);
    /* handled as it is done: the deadlock check's "in flight" falls back */
    atomic_fetch_add_explicit(&d.n->frames_handled, 1, memory_order_seq_cst);
    if (d.done) d.done(d.arg, err);
}

static int rma_start(struct job_net *n, int node, int write, void *buf, size_t len, uint64_t raddr,
                     uint64_t key, void (*done)(void *arg, int err), void *arg)
{
    if (!n || node < 0 || node >= n->nnodes || node == n->self || (!buf && len)) return -EINVAL;
    struct tp_link *l = __atomic_load_n(&link_at(n, node, TMPI_CH_P2P)->l, __ATOMIC_ACQUIRE);
    if (!l) return -EPIPE;
    if (!l->ops->put || !l->ops->get) return -ENOTSUP; /* this link is on TCP */
    struct rma_done *d = malloc(sizeof *d);
    if (!d) return -ENOMEM;
    *d = (struct rma_done){n, done, arg};
    atomic_fetch_add_explicit(&n->frames_sent, 1, memory_order_seq_cst);
    int r = write ? tp_put(l, buf, len, raddr, key, rma_finished, d)
                  : tp_get(l, buf, len, raddr, key, rma_finished, d);
    if (r < 0) {
        atomic_fetch_sub_explicit(&n->frames_sent, 1, memory_order_seq_cst);
        free(d);
    }
    return r;
}

int job_net_put(void *net, int node, const void *buf, size_t len, uint64_t raddr, uint64_t key,
                void (*done)(void *arg, int err), void *arg)
{
    return rma_start(net, node, 1, (void *)buf, len, raddr, key, done, arg);
}

int job_net_get(void *net, int node, void *buf, size_t len, uint64_t raddr, uint64_t key,
                void (*done)(void *arg, int err), void *arg)
{
    return rma_start(net, node, 0, buf, len, raddr, key, done, arg);
}

/* svc.h's atomic names are the transport's (transport.h), value for value. */
_Static_assert((int)TMPI_AOP_CSWAP == (int)TP_AOP_CSWAP &&
                   (int)TMPI_AOP__COUNT == (int)TP_AOP__COUNT &&
                   (int)TMPI_AOP_READ == (int)TP_AOP_READ &&
                   (int)TMPI_AOP_WRITE == (int)TP_AOP_WRITE,
               "atomic operations of svc.h and transport.h differ");
_Static_assert((int)TMPI_AT_DOUBLE_COMPLEX == (int)TP_AT_DOUBLE_COMPLEX &&
                   (int)TMPI_AT__COUNT == (int)TP_AT__COUNT &&
                   (int)TMPI_AT_FLOAT == (int)TP_AT_FLOAT &&
                   (int)TMPI_AT_UINT64 == (int)TP_AT_UINT64,
               "atomic types of svc.h and transport.h differ");
_Static_assert(TMPI_ATOMIC_ORDERED == TP_ATOMIC_ORDERED, "atomic flags of svc.h and transport.h");

/* Every link of the job is on the OFI endpoint (links are set before the gate opens). */
static int all_on_ofi(struct job_net *n)
{
    if (!n->ofi) return 0;
    for (int node = 0; node < n->nnodes; node++) {
        if (node == n->self) continue;
        struct tp_link *l = __atomic_load_n(&link_at(n, node, TMPI_CH_P2P)->l, __ATOMIC_ACQUIRE);
        if (!l || !l->ops->put) return 0;
    }
    return 1;
}

int job_net_atomic_ok(void *net, int op, int type, int fetch, unsigned *ret_flags)
{
    struct job_net *n = net;
    if (ret_flags) *ret_flags = 0;
    if (!n || !all_on_ofi(n)) return -ENOTSUP;
    return tp_atomic_ok(n->ofi, op, type, fetch, ret_flags);
}

int job_net_atomic(void *net, int node, const struct tmpi_atomic *a,
                   void (*done)(void *arg, int err), void *arg)
{
    struct job_net *n = net;
    if (!n || !a || node < 0 || node >= n->nnodes) return -EINVAL;
    if (!n->ofi) return -ENOTSUP;
    struct tp_link *l = NULL;
    if (node != n->self) {
        l = __atomic_load_n(&link_at(n, node, TMPI_CH_P2P)->l, __ATOMIC_ACQUIRE);
        if (!l) return -EPIPE;
        if (!l->ops->put) return -ENOTSUP; /* this link is on TCP */
    }
    struct rma_done *d = malloc(sizeof *d);
    if (!d) return -ENOMEM;
    *d = (struct rma_done){n, done, arg};
    const struct tp_atomic ta = {a->op,     a->type,  a->buf,   a->cmp,
                                 a->result, a->count, a->raddr, a->key};
    atomic_fetch_add_explicit(&n->frames_sent, 1, memory_order_seq_cst);
    int r = tp_atomic(n->ofi, l, &ta, rma_finished, d);
    if (r < 0) {
        atomic_fetch_sub_explicit(&n->frames_sent, 1, memory_order_seq_cst);
        free(d);
    }
    return r;
}

void job_net_traffic(struct job_net *n, Tmpi__ChannelTraffic ret[2])
{
    for (int i = 0; i < 2; i++) {
        tmpi__channel_traffic__init(&ret[i]);
        ret[i].channel = (uint32_t)(i + 1);
        ret[i].frames_sent = atomic_load_explicit(&n->tx_frames[i], memory_order_relaxed);
        ret[i].bytes_sent = atomic_load_explicit(&n->tx_bytes[i], memory_order_relaxed);
        ret[i].frames_received = atomic_load_explicit(&n->rx_frames[i], memory_order_relaxed);
        ret[i].bytes_received = atomic_load_explicit(&n->rx_bytes[i], memory_order_relaxed);
    }
}

void job_net_stop_rx(struct job_net *n)
{
    if (atomic_exchange_explicit(&n->rx_stopped, 1, memory_order_acq_rel)) return;
    /* This may run after the ranks ended, while the job thread closes the links: take them
     * under mu and keep job_net_close waiting (draining) until we are done with them.  Not
     * draining under mu: a callback we wait for may itself be on its way to mu. */
    pthread_mutex_lock(&n->mu);
    if (n->closed) {
        pthread_mutex_unlock(&n->mu);
        return;
    }
    n->draining++;
    pthread_mutex_unlock(&n->mu);
    for (int i = 0; i < n->nnodes * 2; i++) {
        /* Links only go away in job_net_close, which waits for draining to drop to 0. */
        pthread_mutex_lock(&n->mu);
        struct tp_link *l = n->links[i].l, *t = n->links[i].tcp;
        pthread_mutex_unlock(&n->mu);
        if (l) tp_drain(l);
        if (t && t != l) tp_drain(t);
    }
    pthread_mutex_lock(&n->mu);
    if (--n->draining == 0) pthread_cond_broadcast(&n->drained);
    pthread_mutex_unlock(&n->mu);
}

/* Runs fn on each link of the job to another node and sums what it returns.  The links are
 * set before the gate opened and cleared only after the last rank thread ended. */
static int each_link(void *net, int (*fn)(struct tp_link *l, int arg), int arg)
{
    struct job_net *n = net;
    int sum = 0;
    if (!n) return 0;
    for (int node = 0; node < n->nnodes; node++) {
        if (node == n->self) continue;
        for (int ch = TMPI_CH_P2P; ch <= TMPI_CH_COLL; ch++) {
            struct tp_link *l = link_at(n, node, ch)->l;
            if (l) sum += fn(l, arg);
        }
    }
    return sum;
}

static int hold_one(struct tp_link *l, int on)
{
    tp_hold(l, on);
    return 0;
}

static int release_one(struct tp_link *l, int unused)
{
    tp_release(l);
    return 0;
}

static int poll_one(struct tp_link *l, int unused)
{
    return tp_poll(l);
}

void job_net_hold(void *net, int on)
{
    each_link(net, hold_one, on);
}

void job_net_release(void *net)
{
    each_link(net, release_one, 0);
}

int job_net_poll(void *net)
{
    return each_link(net, poll_one, 0);
}

void job_net_carrier(struct job_net *n, int node, int channel, char *buf, size_t len)
{
    if (len) buf[0] = '\0';
    if (!n || node < 0 || node >= n->nnodes || node == n->self ||
        (channel != TMPI_CH_P2P && channel != TMPI_CH_COLL))
        return;
    pthread_mutex_lock(&n->mu);
    struct tp_link *l = link_at(n, node, channel)->l;
    if (l) {
        struct tp_link_stats st;
        tp_stats(l, &st);
        snprintf(buf, len, "%s", st.carrier);
    }
    pthread_mutex_unlock(&n->mu);
}
