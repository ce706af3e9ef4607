/* job_net.h — the data links of one node's part of a job across several nodes, in the job's
 * host process (jobhost.h).
 *
 * Per pair of member nodes two links (channel 1 point-to-point, channel 2 collectives).  The
 * agent opens and authenticates them (job_link.h) and passes each socket to the host, which
 * makes it a link of the host's TCP transport over its own netd (job_net_add, transport.h): the
 * host's receive daemons read frames straight into the ranks' posted buffers.  Links are created
 * paused and start reading when the first rank here has created libtmpi's per-job state (svc.c), so
 * every arriving frame has a receiver.  net_send (svc.h) sends on them; arriving headers are
 * checked here before the client upcalls see them.
 *
 * Reconnecting: a TCP data link whose socket breaks while the job runs (reset, timed out, the
 * peer's end gone) resends (netd.h, "Resending"): the host asks its agent for the link anew
 * (relink, over the links socket; job_link.h), the agents make a new authenticated socket
 * between the same two job hosts and each host hands it to the link (job_net_add of a link
 * that is up), which resends what the peer did not acknowledge.  A link not carried on within
 * link_reconnect_timeout_ms of its break fails the job ("the data link timed out ..."); it is
 * carried on when the peer answers on the new socket (tp_rx_ops.on_rejoin), not when its agent
 * handed the socket over: a peer job process that is stopped never answers, and the job fails
 * naming it.  A link whose first socket fails during its hello (job_net_tp.c) is asked for
 * anew the same way, within the same time (job_net_setup_retry).  A
 * node that stopped answering is told by the agents' heartbeat first (mesh.h); a peer job
 * process that died by its agent.  A link carried by OFI is carried on the same way: a break
 * of its watched mesh socket or of its OFI connection asks for a new socket, and relink gives
 * it to the watched link and reattaches the OFI link, which resends what the peer did not
 * acknowledge (tp_ofi.h "Reconnecting").
 *
 * Threads: job_net_new/add/free run on the host's loop thread; job_net_send on rank threads;
 * job_net_resume once from a rank thread; job_net_close from the job thread; the link
 * callbacks on netd's receive daemons. */
#ifndef TMPI_AGENT_JOB_NET_H
#define TMPI_AGENT_JOB_NET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "control.pb-c.h"
#include "mesh.h"
#include "netd_hdr.h"
#include "svc.h"

struct agent;
struct job;
struct job_net;
struct event_base;
struct job_net_hello;
struct tp;
struct tp_link;

/* One link: to node `node` on channel `channel`. */
struct job_net_link {
    struct job_net *net;
    int node;
    int channel;
    struct tp_link *l; /* written under net->mu before the job starts, then read-only */
    /* The link's mesh socket as a TCP link: l itself, or (l on OFI) only watched, so that a
     * peer that goes away is noticed as on TCP (mu, like l). */
    struct tp_link *tcp;
    struct job_net_hello *hs; /* the transport hello in progress on the socket (mu) */
    /* Reconnecting: the socket broke and no new one came yet (set on a receive daemon, cleared
     * on the loop thread); why it broke; the link_reconnect_timeout_ms timer (loop thread). */
    atomic_int broken;
    atomic_int broke_err;
    struct event *relink_ev;
    /* A new socket was given (tp_reattach) and the peer has not answered on it yet: the
     * timer runs on until it does (a peer job process that is stopped never does). */
    atomic_int rejoining;
    /* Set-up: the link's first socket failed before the link was up (its hello, loop thread):
     * the agents make it anew within the same link_reconnect_timeout_ms; setup_why says why. */
    int setup;
    char setup_why[160];
};

struct job_net {
    struct job *job;
    uint64_t uid;
    int self, nnodes;
    char (*addr)[300];          /* "HOST:PORT" of every node */
    struct job_net_link *links; /* [nnodes * 2]: node * 2 + channel - 1 */
    struct tp *tcp;             /* the TCP transport (transport.h), opened with the first link */
    /* The job's OFI endpoint (tp_ofi.h) when its transport is ofi or auto found a fabric and
     * it opened; NULL: every link on TCP.  Chosen with the first link (job_net_tp.c). */
    struct tp *ofi;
    int chosen;                    /* the choice was made (loop thread) */
    char transport[8];             /* what the job asked for: "auto", "tcp", "ofi" */
    char why_tcp[200];             /* why the job is on TCP although it asked for ofi, or "" */
    void (*linked)(struct job *j); /* every link up (loop thread; host_channel.c) */
    /* Asks the agent for the link (node, channel) anew (any thread; host_channel.c): 0 or a
     * negative errno. */
    int (*relink)(struct job *j, int node, int channel);
    atomic_uint_fast64_t breaks, reconnects; /* links broken and carried on (log, tests) */
    /* mu guards l of every link, nlinks and closed: the loop thread adds links while the job
     * thread may be closing them (a job torn down while it links). */
    pthread_mutex_t mu;
    unsigned nlinks, want; /* links up, links this node needs */
    int closed;
    atomic_int resumed;
    atomic_int rx_stopped;  /* job ending: frames are dropped, not delivered */
    unsigned draining;      /* job_net_stop_rx threads using the links (mu) */
    pthread_cond_t drained; /* draining dropped to 0 (mu) */
    /* Per channel (index channel - 1): frames and bytes sent by ranks and delivered to them,
     * for the agent's metrics (LinkTraffic).  Any thread, relaxed. */
    atomic_uint_fast64_t tx_frames[2], tx_bytes[2], rx_frames[2], rx_bytes[2];
    /* Frames this host sent (counted before they go) and frames it received and handed to
     * libtmpi (counted after): what is in flight between nodes, for the deadlock check
     * (host_ranks.h).  Any thread, seq_cst. */
    _Atomic uint64_t frames_sent, frames_handled;
};

/* Loop thread: the link table of member job j, node self of the job's nodes.  0, -ENOMEM. */
int job_net_new(struct job *j, uint64_t uid, int self, size_t nnodes,
                Tmpi__NodePlacement *const *nodes, struct job_net **ret);
/* Loop thread: fd is the agent's authenticated socket to node `node` on channel `channel`; it
 * becomes that link (ours from now on, closed on failure) once the transport hello on it is
 * done (job_net_tp.c): then n->linked runs when every link of this node is up.  For a link
 * that is up the socket is its new one (Reconnecting, above; no hello); for a link whose hello
 * still runs it replaces that socket (the connecting side made it anew: job_net_setup_retry).
 * 0, or -EINVAL (no such link), -EEXIST (no such link up), -ECANCELED (links closed),
 * -ENOTSUP (no netd), -ENOMEM. */
int job_net_add(struct job_net *n, int node, int channel, int fd);
/* job_net_tp.c -> job_net.c: the hello on l's socket fd is done; ofi is the link's OFI link
 * when both sides chose it, else NULL (data on TCP).  Loop thread. */
void job_net_link_up(struct job_net *n, struct job_net_link *l, int fd, struct tp_link *ofi);
/* job_net_tp.c -> job_net.c: l's hello failed with a fault of its socket (why): the link is
 * asked for anew, as a broken one is (job_link.h), and the job fails only when it is not up
 * within link_reconnect_timeout_ms of the first such failure.  0, or -1 when it cannot be
 * asked for (the job is failed then by the caller).  Loop thread. */
int job_net_setup_retry(struct job_net *n, struct job_net_link *l, const char *why);
/* job_net_tp.c: picks the job's transport and opens its OFI endpoint if it is used (once,
 * not under mu; fabric: the agent's answer for auto, fabric.h, "" none, NULL: look here); starts
 * the hello on a link's socket (fd ours: handed to job_net_link_up, or closed and the job
 * cancelled); stops a hello in progress (loop thread). */
void job_net_choose(struct job_net *n, const char *cfg_transport, const char *cfg_provider,
                    const char *fabric);
int job_net_hello_start(struct job_net *n, struct event_base *base, struct job_net_link *l, int fd);
void job_net_hello_cancel(struct job_net_link *l);
/* job_net_tp.c: the link's receive callbacks, for the OFI link too. */
extern const struct tp_rx_ops job_net_link_ops;
/* What carries the link to node on channel: "tcp", "ofi:PROVIDER", or "" (not up). */
void job_net_carrier(struct job_net *n, int node, int channel, char *buf, size_t len);

/* The traffic counted so far, as the LinkTraffic frame's two channels (ret[0]: point-to-point,
 * ret[1]: collectives; each initialised here). */
void job_net_traffic(struct job_net *n, Tmpi__ChannelTraffic ret[2]);
/* Any thread, idempotent: start reading every link. */
void job_net_resume(struct job_net *n);
/* Job thread, before libtmpi's state is destroyed: close every link.  No callback runs after
 * it returns. */
void job_net_close(struct job_net *n);
/* Loop thread: frees the table (links closed before). */
void job_net_free(struct job_net *n);

/* svc.h net_send. */
int job_net_send(void *net, int node, int channel, unsigned flags, const struct netd_hdr *h,
                 const void *payload, void (*done)(void *arg, int err), void *arg);

/* svc.h net_mr_reg / net_mr_dereg / net_put / net_get: remote memory access on the job's OFI
 * endpoint and on the point-to-point link to node (transport.h tp_mr_reg/tp_put/tp_get).  An
 * operation in flight counts as a frame sent and handled (frames_sent, frames_handled), so the
 * deadlock check sees the job move while it is. */
int job_net_mr_reg(void *net, void *buf, size_t len, void **ret_mr, uint64_t *key, uint64_t *addr);
void job_net_mr_dereg(void *net, void *mr);
int job_net_put(void *net, int node, const void *buf, size_t len, uint64_t raddr, uint64_t key,
                void (*done)(void *arg, int err), void *arg);
int job_net_get(void *net, int node, void *buf, size_t len, uint64_t raddr, uint64_t key,
                void (*done)(void *arg, int err), void *arg);
/* svc net_atomic_ok / net_atomic (svc.h): accumulates carried out by the transport (OFI
 * fi_atomic), on every node of the job or on none: -ENOTSUP unless each of its links is on
 * the OFI endpoint, whose atomics reach this node's own memory too. */
int job_net_atomic_ok(void *net, int op, int type, int fetch, unsigned *ret_flags);
int job_net_atomic(void *net, int node, const struct tmpi_atomic *a,
                   void (*done)(void *arg, int err), void *arg);

/* Any thread, once the job is failing: no frame is delivered to libtmpi after this returns
 * (ranks are about to unwind: their posted buffers and stack requests go away). */
void job_net_stop_rx(struct job_net *n);
/* svc net_hold: a rank starts or stops spinning on the job's links. */
void job_net_hold(void *net, int on);
/* svc net_release: a rank is about to wait without reading (yielding or asleep); the daemons
 * read the links not held by others. */
void job_net_release(void *net);
/* svc net_poll: runs the receive machine of every link of the job on the calling rank thread
 * (those no daemon is reading right now). */
int job_net_poll(void *net);

#endif
