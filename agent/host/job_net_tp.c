/* job_net_tp.c — which transport carries a member job's links, and the hello that sets each
 * link up (job_net.h).
 *
 * The choice, once per job host: the job's TMPI_TRANSPORT (tmpi-launch --transport), else
 * [mesh] transport; "tcp" keeps every link on the mesh sockets; "ofi" opens a libfabric
 * endpoint (provider: the job's FI_PROVIDER, else [mesh] ofi_provider, else libfabric's
 * choice); "auto" does that only when a provider other than the socket ones is here, as the
 * agent found at start or reload (agent/daemon/fabric.h).  An endpoint that cannot be opened
 * leaves the job on TCP with a log line.
 *
 * The hello: the first bytes on every link's socket, both ways, before netd reads it.  The
 * socket is the agents' authenticated mesh connection for this job's link, so what travels
 * here reaches exactly the job's own host on the other node:
 *
 *   off size
 *     0    8 "TMPIHEL1"
 *     8    4 1: this side has an OFI endpoint (then the fields below), 0: TCP only
 *    12    4 name_len (<= TP_OFI_NAME_MAX)
 *    16    8 secret: what frames sent to this side's link must carry
 *    24   64 provider name, NUL padded
 *    88  256 endpoint name
 *
 * then an 8-byte verdict ("TMPIVRD" and 1 when this side made the OFI link, else 0).  The link
 * is on OFI when both verdicts are 1, else on TCP (both sides decide alike); a side that wanted
 * OFI logs why a link stays on TCP.  Both records are read to their exact size, so the frames
 * that follow stay in the socket for netd. */
#include <errno.h>
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "be_bytes.h"
#include "job.h"
#include "job_net.h"
#include "log.h"
#include "tp_ofi.h"
#include "transport.h"

#define HELLO_SIZE (88 + TP_OFI_NAME_MAX)
#define VERDICT_SIZE 8
/* A peer that has not said its hello by then is not coming: the job fails naming it. */
#define JOB_NET_HELLO_TIMEOUT_SEC 60

struct job_net_hello {
    struct job_net *n;
    struct job_net_link *l;
    int fd;
    struct event *ev;
    int phase; /* 0: reading the hello, 1: the verdict */
    uint8_t in[HELLO_SIZE];
    size_t got;
    uint64_t rx_secret;
    /* Our hello.  The connecting side (the node below) says it only after the peer's: the
     * accepting agent reads the connection's first bytes itself, and a hello that came with
     * the join record made it close the connection ("sent more than its join record"). */
    uint8_t out[HELLO_SIZE];
    int out_later;
    struct tp_link *ofi; /* the OFI link we made, until both verdicts are in */
    char why[256];       /* why this link is not on OFI (we wanted it) */
};

void job_net_choose(struct job_net *n, const char *cfg_transport, const char *cfg_provider,
                    const char *fabric)
{
    struct job *j = n->job;
    n->chosen = 1;
    const char *want = job_getenv(j, "TMPI_TRANSPORT");
    if (!want || !*want) want = cfg_transport && *cfg_transport ? cfg_transport : "auto";
    if (strcmp(want, "auto") && strcmp(want, "tcp") && strcmp(want, "ofi")) {
        char reason[120];
        snprintf(reason, sizeof reason, "TMPI_TRANSPORT=\"%.32s\": expected auto, tcp or ofi",
                 want);
        job_cancel(j, 1, reason);
        return;
    }
    snprintf(n->transport, sizeof n->transport, "%s", want);
    if (!strcmp(want, "tcp")) return;
    const char *prov = job_getenv(j, "FI_PROVIDER");
    if (!prov || !*prov) prov = cfg_provider;
    char found[64] = "";
    if (!strcmp(want, "auto")) {
        /* the agent's answer (fabric.h); a job that asked for auto where the agents do not
         * run it looks here */
        if (fabric)
            snprintf(found, sizeof found, "%s", fabric);
        else if (!tp_ofi_fabric_present(found, sizeof found))
            found[0] = '\0';
        if (!found[0]) return; /* sockets only: TCP */
        if (!prov || !*prov) prov = found;
    }
    char why[200] = "";
    int r = tp_ofi_open(prov, &n->ofi, why, sizeof why);
    if (r < 0) {
        n->ofi = NULL;
        snprintf(n->why_tcp, sizeof n->why_tcp, "%s", why[0] ? why : strerror(-r));
        log_warning("job %llu: transport %s: %s; the job's links use tcp",
                    (unsigned long long)j->id, want, n->why_tcp);
        return;
    }
    log_info("job %llu: transport ofi, provider %s", (unsigned long long)j->id,
             tp_ofi_provider(n->ofi));
}

static void hello_free(struct job_net_hello *hs)
{
    if (hs->ev) event_free(hs->ev);
    if (hs->ofi) tp_close(hs->ofi);
    hs->l->hs = NULL;
    free(hs);
}

static void hello_fail(struct job_net_hello *hs, const char *what)
{
    struct job_net *n = hs->n;
    char reason[300];
    snprintf(reason, sizeof reason, "cannot set up the link to node %d (%s): %s", hs->l->node,
             n->addr[hs->l->node], what);
    log_warning("job %llu: %s (channel %d)", (unsigned long long)n->job->id, reason,
                hs->l->channel);
    close(hs->fd);
    hello_free(hs);
    job_cancel(n->job, 1, reason);
}

/* The hello's socket failed (timed out, reset, closed): a fault of the way, not of what the
 * peer says, so the link is made anew within the reconnect budget (job_net_setup_retry). */
static void hello_broke(struct job_net_hello *hs, const char *what)
{
    struct job_net *n = hs->n;
    struct job_net_link *l = hs->l;
    int fd = hs->fd;
    hs->fd = -1;
    if (job_net_setup_retry(n, l, what) == 0) {
        close(fd);
        hello_free(hs);
        return;
    }
    hs->fd = fd;
    hello_fail(hs, what);
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
    /* a fresh socket takes a few hundred bytes at once */
    ssize_t w = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    return w == (ssize_t)len ? 0 : w < 0 ? -errno : -EAGAIN;
}

/* The peer's hello is in: make the OFI link if both sides can, and say so. */
static int on_hello(struct job_net_hello *hs)
{
    struct job_net *n = hs->n;
    const uint8_t *in = hs->in;
    if (memcmp(in, "TMPIHEL1", 8)) return -EPROTO;
    uint32_t peer_ofi = be_get32(in + 8), name_len = be_get32(in + 12);
    char prov[65];
    memcpy(prov, in + 24, 64);
    prov[64] = '\0';
    if (!n->ofi) {
        /* nothing to say: this side is on TCP for the whole job */
    } else if (peer_ofi != 1) {
        snprintf(hs->why, sizeof hs->why, "the node has no OFI endpoint for the job");
    } else if (name_len == 0 || name_len > TP_OFI_NAME_MAX) {
        return -EPROTO;
    } else if (strcmp(prov, tp_ofi_provider(n->ofi))) {
        snprintf(hs->why, sizeof hs->why, "the node runs provider %.64s, this one %.64s", prov,
                 tp_ofi_provider(n->ofi));
    } else {
        struct tp_addr a = {.fd = -1,
                            .name = in + 88,
                            .name_len = name_len,
                            .tx_secret = be_get64(in + 16),
                            .rx_secret = hs->rx_secret};
        int r = tp_connect(n->ofi, &a, &job_net_link_ops, hs->l, 1, &hs->ofi);
        if (r < 0) {
            hs->ofi = NULL;
            snprintf(hs->why, sizeof hs->why, "provider %s cannot reach it: %s",
                     tp_ofi_provider(n->ofi), strerror(-r));
        }
    }
    uint8_t v[VERDICT_SIZE] = {'T', 'M', 'P', 'I', 'V', 'R', 'D', hs->ofi ? 1 : 0};
    return write_all(hs->fd, v, sizeof v);
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
    struct job_net_hello *hs = arg;
    if (what & EV_TIMEOUT) {
        hello_broke(hs, "no transport hello from it in time");
        return;
    }
    size_t need = hs->phase == 0 ? HELLO_SIZE : VERDICT_SIZE;
    ssize_t r = recv(fd, hs->in + hs->got, need - hs->got, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (r <= 0) {
        hello_broke(hs, r == 0 ? "it closed the link" : strerror(errno));
        return;
    }
    hs->got += (size_t)r;
    if (hs->got < need) return;
    hs->got = 0;
    if (hs->phase == 0) {
        int e = hs->out_later ? write_all(fd, hs->out, sizeof hs->out) : 0;
        if (e == 0) e = on_hello(hs);
        if (e < 0) {
            if (e == -EPROTO)
                hello_fail(hs, "a malformed transport hello");
            else
                hello_broke(hs, strerror(-e));
            return;
        }
        hs->phase = 1;
        return;
    }
    if (memcmp(hs->in, "TMPIVRD", 7) || hs->in[7] > 1) {
        hello_fail(hs, "a malformed transport verdict");
        return;
    }
    struct job_net *n = hs->n;
    struct job_net_link *l = hs->l;
    struct tp_link *ofi = hs->in[7] == 1 ? hs->ofi : NULL;
    if (ofi) {
        hs->ofi = NULL; /* the link's now */
        int e = tp_ofi_link_start(ofi);
        if (e < 0) {
            tp_close(ofi);
            hello_fail(hs, strerror(-e));
            return;
        }
    } else if (n->ofi) {
        log_warning("job %llu: link to node %d (%s) channel %d stays on tcp: %s",
                    (unsigned long long)n->job->id, l->node, n->addr[l->node], l->channel,
                    hs->why[0] ? hs->why : "the node could not make the OFI link");
    }
    int sock = hs->fd;
    hello_free(hs);
    job_net_link_up(n, l, sock, ofi);
}

int job_net_hello_start(struct job_net *n, struct event_base *base, struct job_net_link *l, int fd)
{
    struct job_net_hello *hs = calloc(1, sizeof *hs);
    if (!hs) {
        close(fd);
        return -ENOMEM;
    }
    hs->n = n;
    hs->l = l;
    hs->fd = fd;
    l->hs = hs;
    uint8_t *out = hs->out;
    memset(out, 0, HELLO_SIZE);
    memcpy(out, "TMPIHEL1", 8);
    if (n->ofi) {
        int len = tp_ofi_name(n->ofi, out + 88, TP_OFI_NAME_MAX);
        if (len > 0) {
            hs->rx_secret = tp_ofi_secret();
            be_put32(out + 8, 1);
            be_put32(out + 12, (uint32_t)len);
            be_put64(out + 16, hs->rx_secret);
            snprintf((char *)out + 24, 64, "%s", tp_ofi_provider(n->ofi));
        } else {
            snprintf(hs->why, sizeof hs->why, "no endpoint name: %s", strerror(-len));
        }
    }
    hs->out_later = l->node > n->self; /* we connected (job_link.h) */
    int r = hs->out_later ? 0 : write_all(fd, out, HELLO_SIZE);
    hs->ev = r == 0 ? event_new(base, fd, EV_READ | EV_PERSIST, on_readable, hs) : NULL;
    struct timeval tv = {.tv_sec = JOB_NET_HELLO_TIMEOUT_SEC};
    if (!hs->ev || event_add(hs->ev, &tv) < 0) {
        hello_fail(hs, r < 0 ? strerror(-r) : "out of memory");
        return 0; /* the job is cancelled and says why */
    }
    return 0;
}

void job_net_hello_cancel(struct job_net_link *l)
{
    struct job_net_hello *hs = l->hs;
    if (!hs) return;
    close(hs->fd);
    hello_free(hs);
}
