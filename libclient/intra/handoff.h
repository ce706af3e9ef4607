/* handoff.h — a message the sender packs and the receiver's own thread lays out.
 *
 * Between two ranks of one node a send that finds its receive posted copies straight into the
 * receive buffer.  When the receive's layout is sparse (blocks shorter than a cache line: a
 * column of doubles in a matrix) that single copy is the slow one: every block is its own line
 * of the receiver's memory, which moves to the sender's core for one 8-byte store and back when
 * the receiver touches the data beside it (the interior cells that share a line with a ghost
 * cell).  Measured with two threads exchanging two columns each (docs/bench/ANALYSIS.md,
 * "Halo exchange", "Who lays out a column"): 512 doubles 6.1 us a round written across, 2.2 us
 * packed by the sender and unpacked by the receiver; 2,048 doubles 37 against 10 us.
 *
 * So such a send packs the message into an eager envelope from its own cache (it reads its own
 * lines, writes dense ones), pushes the envelope onto the receiver's hand-off stack and is then
 * complete; the receiver unpacks in its next wait or test (tm_inbox_poll in inbox.h, which every
 * wait and test of a rank runs: hand-offs, then fast boxes) and only then is its receive complete.
 * Up to the eager limit: what a message holds in an envelope anyway when its receive is late.
 *
 * Protocol: a lock-free LIFO of envelopes (struct tm_envl.next), pushed with compare-and-swap
 * by any sender, taken whole with one exchange by any thread of the receiving rank, so there is
 * no ABA; the envelope names its receive in e->sreq (the field a rendezvous uses for its send).
 * The push is seq_cst before the sender's tm_wake and the poll loads seq_cst: the Dekker
 * handshake of wait.h, so a receiver about to sleep sees it. */
#ifndef TMPI_LIBCLIENT_HANDOFF_H
#define TMPI_LIBCLIENT_HANDOFF_H

#include <stdatomic.h>
#include <stddef.h>

#include "intra_parts.h"
#include "lib.h"

struct tm_rank;
struct tm_request;
struct tm_type;
struct tm_envl;

/* Whether a message of bytes into the posted receive rr is better handed off: rr's layout is
 * sparse, the message fits an eager envelope, and rr's owner is a rank whose waits run
 * tm_inbox_poll (not the sender itself, not a libtmpi helper thread). */
int tm_handoff_wanted(const struct tm_rank *me, const struct tm_request *rr, size_t bytes);

/* Sender: packs (buf, st: NULL for bytes) into an envelope for the matched receive rr and hands
 * it to rr's owner, waking it.  0, or -ENOMEM (nothing was handed: copy directly). */
int tm_handoff_send(struct tm_rank *me, struct tm_request *rr, int ctx, int src, int tag,
                    const void *buf, const struct tm_type *st, size_t bytes);

/* Whether anything waits on h (wait.h: seq_cst, the other half of the sender's push). */
static inline int tm_handoff_ready(struct tm_handoff *h)
{
    return atomic_load_explicit(&h->head, memory_order_seq_cst) != NULL;
}
/* Receiver: lays out every message handed to me and completes its receive.  Any thread of the
 * rank, or a carrier running the rank's wait. */
void tm_handoff_take(struct tm_rank *me);

/* Job teardown: gives back what nobody took (the receives are gone with the job). */
void tm_handoff_drop(struct tm_rank *r);

#endif
