/* tp_ofi.h — the libfabric (OFI) transport (transport.h): the job host opens one reliable
 * datagram endpoint (FI_EP_RDM) and every link to another node is an address in its address
 * vector.  The endpoint's name and the links' secrets travel over the agents' authenticated
 * mesh links (job_net.c "transport hello"), so only peers of this job can reach its links.
 *
 * Frames up to TP_OFI_EAGER payload bytes go as one message, copied into a posted receive
 * buffer; larger ones by rendezvous: the sender registers the payload and sends its key, the
 * receiver reads it (fi_read) straight into the buffer on_header chose and answers FIN, which
 * completes the send.  Frames of one link are delivered in the order they were sent (the
 * provider keeps send-after-send order; a frame that arrives while a read of an earlier one is
 * in flight waits for it).  Progress: a thread of the transport, asleep in the kernel on the
 * completion queue's wait object while nothing arrives (as a TCP receive daemon sleeps in
 * epoll), and tp_poll from waiting ranks.
 *
 * Limits: TP_OFI_EAGER (payload of one message), TP_OFI_RX_BUFS (receives posted),
 * TP_OFI_NAME_MAX (endpoint name), TP_OFI_WAIT_BUSY_NS / TP_OFI_WAIT_IDLE_NS (the longest
 * sleep of the progress thread with and without a transfer in flight), TP_OFI_MR_CACHE
 * (registrations shared by the transfers in flight over one buffer; one is dropped when its
 * last transfer is done, never reused for a later one: the buffer may be freed in between,
 * tp_ofi.c mr_put), TP_OFI_ACK_EVERY / TP_OFI_ACK_DELAY_NS (how soon frames are acknowledged,
 * and so how long their sender keeps them for a resend).
 *
 * Reconnecting: an error completion on a link is a break (tp_rx_ops.on_break): a link whose
 * owner carries it on keeps its frames until tp_reattach, which resends what the peer did not
 * acknowledge (tp_ofi.c "Resending"). */
#ifndef TMPI_AGENT_TP_OFI_H
#define TMPI_AGENT_TP_OFI_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define TP_OFI_EAGER 65536
#define TP_OFI_RX_BUFS 64
#define TP_OFI_NAME_MAX 256
#define TP_OFI_MR_CACHE 64
/* Resending (tp_ofi.c): the receiver acknowledges every TP_OFI_ACK_EVERY frames of a link, and
 * the frames it has not acknowledged within TP_OFI_ACK_DELAY_NS of their arrival when it has
 * nothing else to do; the sender keeps each frame until then. */
#define TP_OFI_ACK_EVERY 32
#define TP_OFI_ACK_DELAY_NS 1000000
/* How long the progress thread sleeps on the completion queue's wait object at most, while a
 * transfer is in flight and while none is (tp_ofi.c progress_wait). */
#define TP_OFI_WAIT_BUSY_NS 200000
#define TP_OFI_WAIT_IDLE_NS 10000000
/* A message the provider's queue has no room for (its peer reads nothing: stopped, or its
 * connection being made anew) is tried TP_OFI_POST_TRIES times, driving the provider between
 * tries, and then queued on its link instead of waiting with the link's send lock held: the
 * progress thread posts it when there is room (tp_ofi.c "Queueing").  A sender whose link has
 * TP_OFI_QUEUED_MAX frames queued waits, without the lock, until there are fewer (or the link
 * failed): what a peer does not read cannot grow the sender's memory without bound. */
#define TP_OFI_POST_TRIES 64
#define TP_OFI_QUEUED_MAX 1024

/* Opens an RDM endpoint of provider (e.g. "tcp", "verbs;ofi_rxm"; NULL or "" = the first
 * libfabric offers, which honours FI_PROVIDER) and starts its progress thread.  0, -ENOENT (no
 * such provider here: why is set), or another negative errno with why set. */
int tp_ofi_open(const char *provider, struct tp **ret, char *why, size_t why_len);
/* Starts a link both sides made (their verdicts said so): the side whose endpoint name is the
 * lower sends the first message, the other holds what it sends until that message is in.  Call
 * once per link, before its first tp_send is expected to go out.  0 or a negative errno. */
int tp_ofi_link_start(struct tp_link *l);
/* The endpoint's name for peers (up to TP_OFI_NAME_MAX bytes); its length or a negative errno. */
int tp_ofi_name(struct tp *t, void *buf, size_t len);
/* Atomics the endpoint applied to its own memory (tp_atomic with no link). */
uint64_t tp_ofi_self_atomics(struct tp *t);
/* The provider the endpoint runs on ("tcp;ofi_rxm"). */
const char *tp_ofi_provider(struct tp *t);
/* A fresh random secret for a link's receiving side. */
uint64_t tp_ofi_secret(void);
/* Messages that arrived with a secret no link has (dropped), since open. */
uint64_t tp_ofi_rejected(struct tp *t);
/* Times the progress thread slept on the completion queue's wait object, since open (0 where
 * the provider has none: the thread then polls). */
uint64_t tp_ofi_wait_sleeps(struct tp *t);
/* Whether a provider other than the plain socket ones (tcp, udp, sockets, shm) is here: the
 * `auto` choice of [mesh] transport.  Its name into name when one is. */
int tp_ofi_fabric_present(char *name, size_t len);

#endif
