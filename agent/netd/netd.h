/* netd.h — the network device of the data plane (seed 000 §3.2): authenticated TCP links to
 * other agents, frames of "fixed header + optional payload", receive daemons that run a handler
 * for each arriving frame, and ordered sends that never block the receive daemons.
 *
 * One struct netd per agent: nthreads receive daemons, each a libevent loop on its own thread;
 * every link is assigned to one daemon (round robin), so the frames of a link are handled in
 * order, by one thread.  A link is one connected, already authenticated socket (mesh.c does the
 * handshake); netd owns the fd from netd_link_new on.
 *
 * Receiving: the daemon reads the 80-byte header (netd_hdr.h), decodes its transport half
 * strictly (the frame number must be the link's next), and asks
 * ops->on_header where the payload goes: a buffer of payload_len bytes (a posted user buffer or
 * a pool buffer), or NULL to read and drop it.  The payload is read straight into that buffer,
 * across as many readiness callbacks as it takes, then ops->on_frame runs.  A bad header, EOF or
 * a socket error calls ops->on_error once; after that the link delivers nothing more.
 *
 * Sending: netd_send numbers and writes the frame under the link's lock, so frames of one link
 * never interleave and go out in call order (MPI non-overtaking holds per sender/receiver pair).
 * The caller writes what the socket takes at once; the rest is queued and written by the link's
 * daemon when the socket drains, with non-blocking writes: no thread ever blocks in netd_send
 * and the daemon never blocks on a send.  done(arg, err) tells when the payload buffer may be
 * reused.
 *
 * Resending (links whose ops have on_break): every frame is kept until the peer acknowledges
 * it, so that a socket that breaks while both ends live (reset, timed out) loses nothing.  The
 * receiver acknowledges (a NETD_F_ACK header) every NETD_ACK_EVERY frames or NETD_ACK_BYTES
 * bytes, and at once a frame that asks for it (NETD_F_ACKREQ).  A frame's payload of at most
 * NETD_RESEND_COPY_MAX bytes is copied while the copies of the link stay within the link's
 * resend limit (netd_set_resend_max), and its done runs at once; a larger one, or one beyond
 * the limit, is kept by reference, asks for its acknowledgement, and its done runs when that
 * comes.  When the socket breaks, ops->on_break says whether the owner brings a new socket
 * (netd_link_reattach); until then sends are queued.  On the new socket each end first
 * acknowledges what it received, then resends, in order, every frame not acknowledged; the
 * receiver drops the frames it already has (by number), so nothing is delivered twice and a
 * frame cut in the middle of its payload is read again into the same buffer without a second
 * on_header.
 *
 * Threading: every function may be called from any thread, except netd_free (not from a
 * daemon).  Receive callbacks of one link never run concurrently with each other; they run
 * on the daemon or on a thread in netd_link_poll. */
#ifndef TMPI_AGENT_NETD_H
#define TMPI_AGENT_NETD_H

#include <stddef.h>
#include <stdint.h>

#include "netd_hdr.h"

struct netd;
struct netd_link;

/* Largest payload of one frame the agent accepts (a DATA frame carries a whole message). */
#define NETD_MAX_PAYLOAD (1u << 31)

struct netd_ops {
    /* A header arrived (always called, also for payload_len 0: then the return value is
     * ignored).  Return a buffer for h->payload_len bytes, or NULL to drop the payload.  *ctx
     * (initially NULL) is handed to on_frame. */
    void *(*on_header)(void *arg, struct netd_link *l, const struct netd_hdr *h, void **ctx);
    /* The frame's payload is complete (in the buffer on_header returned, or dropped). */
    void (*on_frame)(void *arg, struct netd_link *l, const struct netd_hdr *h, void *ctx);
    /* The link failed: -EPIPE (peer closed), -EPROTO / -EMSGSIZE (bad header), or a socket
     * errno.  Called once, from the daemon; no more callbacks for this link afterwards. */
    void (*on_error)(void *arg, struct netd_link *l, int err);
    /* NULL, or the link resends (above): its socket broke with err (a socket errno, or
     * -EPIPE at an end of stream the peer did not announce; a bad header, and the end of
     * stream after the peer's netd_link_free said goodbye, go to on_error).  Return 0 to bring a
     * new socket with netd_link_reattach (sends are queued meanwhile), anything else to fail the
     * link (on_error follows).  Runs on the daemon or a polling thread, like on_frame. */
    int (*on_break)(void *arg, struct netd_link *l, int err);
    /* NULL, or told (once per netd_link_reattach) when the peer's first acknowledgement came on
     * the new socket: only then is the peer known to live and carry the link on (a peer whose
     * agent handed it the socket but which is itself stopped never says it).  Runs where
     * on_frame runs. */
    void (*on_rejoin)(void *arg, struct netd_link *l);
};

/* Acknowledgement pace of a resending link's receiver, and the largest payload it copies. */
#define NETD_ACK_EVERY 64
#define NETD_ACK_BYTES (256u * 1024)
#define NETD_RESEND_COPY_MAX (64u * 1024)
/* Default of netd_set_resend_max: payload bytes copied for resending per link. */
#define NETD_RESEND_MAX_DEFAULT (4u << 20)

/* done callback of a send: err is 0 when the whole frame was handed to the kernel, or a
 * negative errno when the link failed or was freed first.  Runs on the calling thread (before
 * netd_send returns) if the frame went out at once, else on the link's daemon thread. */
typedef void (*netd_done_fn)(void *arg, int err);

struct netd_stats {
    uint64_t frames_sent, bytes_sent;
    uint64_t frames_received, bytes_received;
    uint64_t links, link_errors;
    uint64_t queued_now; /* bytes waiting in send queues */
    uint64_t sleeps;     /* loop rounds in which a daemon could sleep in epoll */
    uint64_t spin_polls; /* loop rounds in which it polled without sleeping (netd_set_spin) */
    uint64_t breaks;     /* sockets of resending links that broke (ops->on_break) */
    uint64_t reattached; /* new sockets taken by netd_link_reattach */
    uint64_t resent;     /* frames written again on a new socket */
    uint64_t duplicates; /* frames received again after a reattach and dropped */
};

/* Starts nthreads (1..64) receive daemons.  max_payload bounds payload_len of arriving frames.
 * 0 or a negative errno. */
int netd_new(unsigned nthreads, size_t max_payload, struct netd **ret);
/* Stops the daemons.  Every link must have been freed before (netd_link_free). */
void netd_free(struct netd *n);

/* Whether a daemon may keep polling now: a CPU is free for it, besides the spinning other
 * daemons of this netd already take.  Called on the daemons' threads. */
typedef int (*netd_may_spin_fn)(void *arg, int spinning);

/* After a readiness callback that read from a link, a daemon keeps polling its links without
 * sleeping (epoll with no timeout, the CPU yielded between polls) for up to spin_ns while
 * may_spin(arg) says yes, and only then sleeps in epoll: a frame that follows soon (the next
 * Put after a flush's answer) is then read at once instead of after a wake-up, which costs
 * 20-60 us on a virtual machine's idle CPU.  0 (the default) never spins. */
void netd_set_spin(struct netd *n, uint64_t spin_ns, netd_may_spin_fn may_spin, void *arg);

/* Takes fd (a connected, authenticated stream socket) and assigns it to a daemon.  With
 * paused, nothing is read until netd_link_resume.  0 or a negative errno (then fd is closed). */
int netd_link_new(struct netd *n, int fd, const struct netd_ops *ops, void *arg, int paused,
                  struct netd_link **ret);
/* Bytes of payload a resending link of n keeps copies of (the frames awaiting their
 * acknowledgement); beyond it frames are kept by reference and their done waits for the
 * acknowledgement.  NETD_RESEND_MAX_DEFAULT unless set; applies to links made afterwards. */
void netd_set_resend_max(struct netd *n, size_t bytes);
/* Gives a resending link a new connected socket to the same peer (after on_break said 0, or
 * at any time: the old socket is then dropped as if it broke).  The link acknowledges what it
 * received, resends what was not acknowledged and goes on; reading resumes if it was reading.
 * With wait_peer nothing is written until the peer's acknowledgement arrives (one end must
 * write first: the one whose first bytes nobody else reads).  Not from the link's callbacks.
 * 0 or a negative errno (-EINVAL: the link does not resend; fd is closed in every case). */
int netd_link_reattach(struct netd_link *l, int fd, int wait_peer);
/* Starts (or restarts) reading a paused link. */
void netd_link_resume(struct netd_link *l);
/* Runs the link's receive machine on the calling thread, unless another thread (its daemon
 * or another poller) is running it: what has arrived is handled now and the callbacks run on
 * this thread.  A rank waiting for a message calls this instead of waiting for the daemon to
 * be scheduled (on a busy node that wake-up is most of the latency).  Returns how much moved:
 * the frames handled, or 1 when only bytes did (part of a frame read, queued bytes written);
 * 0 when nothing did. */
int netd_link_poll(struct netd_link *l);
/* A rank starts (on = 1) or stops (on = 0) spinning in netd_link_poll on this link: while
 * anyone holds it the daemon is not woken for arrivals (the socket's receive low-water mark
 * is raised).  After the last one stops the link stays quiet for a short while (at least
 * 200 us, at most about 4 ms: the next wait usually follows at once), then the daemon reads it
 * again.  Calls must pair. */
void netd_link_hold(struct netd_link *l, int on);
/* Ends that quiet time now if nobody holds the link, and reads what came in meanwhile: a rank
 * about to wait without reading (yielding or asleep) calls it, since it then needs the daemon
 * to read for it. */
void netd_link_release(struct netd_link *l);
/* Waits until no receive callback of the link is running (on the daemon or a poller), unless
 * called from one of them.  With a flag the callbacks check, this makes "nothing is delivered
 * any more" true at once. */
void netd_link_drain(struct netd_link *l);
/* Closes the link.  When it returns no callback of this link runs any more, and none is
 * running (unless called from the link's own callback, which is allowed: the link goes when
 * that callback returns).  From another thread it waits for a running callback to return, so
 * the caller must not hold a lock the callbacks take.  Queued sends get done(-ECANCELED). */
void netd_link_free(struct netd_link *l);

/* A flag of netd_send: hand the whole payload to one sendmsg instead of pieces of
 * NETD_WRITE_MAX (netd_out.h).  A one-sided Put of 1 MiB followed by a flush across two agents
 * on loopback took 132-140 us in one write against 162-167 us in two (fast state, alternating
 * runs; docs/bench/ANALYSIS.md "One-sided frames in one write"), while a 1 MiB ping-pong is
 * faster in pieces. */
#define NETD_SEND_WHOLE 1u

/* Sends h (encoded here; h->seq is ignored: netd numbers the link's frames itself) followed by
 * h->payload_len bytes of payload (may be NULL when 0); flags: NETD_SEND_* or 0.
 * Returns 0 (done will be called exactly once, unless it is NULL) or a negative errno: -EPIPE
 * when the link has failed (done is not called). */
int netd_send(struct netd_link *l, const struct netd_hdr *h, unsigned flags, const void *payload,
              netd_done_fn done, void *arg);

void netd_get_stats(struct netd *n, struct netd_stats *ret);

#endif
