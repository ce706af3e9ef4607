/* coop.h — cooperative copies: one large intra-node copy that both ranks of a match share.
 *
 * Between two ranks of one node a message is copied once, by the side that matches (the
 * sender finding a posted receive, or the receiver finding a queued message).  Meanwhile the
 * other side often sits in MPI_Wait for the same message, on a core of its own.  A copy of at
 * least the job's coop_min (tmpid.conf intra_coop_min) is therefore split into chunks that the
 * matching rank (the initiator) and the other rank (the helper) claim from one counter: whoever
 * runs copies, so a helper that does not wait (or sleeps, or is parked on a carrier) costs
 * nothing but a wake.  docs/bench/ANALYSIS.md "Halo exchange" has the measurements.
 *
 * A sparse side (type_copy.h tm_type_sparse: blocks shorter than a cache line) is moved only
 * by the core of the rank that owns it: a helper shares a copy into a sparse receive layout
 * only when the receive is its own, and out of a sparse send layout only when it is the sender
 * (handoff.h has the measurements); otherwise the initiator copies alone.
 *
 * Protocol (struct tm_coop, one per helper rank; every field an atomic):
 *   initiator: takes `busy` (0 -> 1; if another initiator has it, copies alone); sets job and
 *              fin = 0; publishes claim = chunks << 32 (seq_cst); tm_wake(helper) if the copy
 *              outlasts a wake-up (coop.c COOP_WAKE_WEIGHT).  Claims
 *              chunks (compare-and-swap on claim's low half) and copies them until none is
 *              left; waits until fin == chunks; busy = 0; only then completes the requests.
 *   helper:    in every wait (wait.c fb_cond), when claim's low half is below its high half:
 *              claims a chunk, reads job (valid: the initiator cannot return while a claimed
 *              chunk is unfinished), copies it, fin += 1 (release).
 * A helper that read claim before the job ended fails its compare-and-swap (the word moved
 * on), or wins a chunk of the job published since, which it then reads: either way it copies
 * only a chunk that it claimed from the job current at its claim.  The job (on the
 * initiator's stack) and the buffers it names outlive every claimed chunk; the requests are
 * completed after the last one, so no rank sees its operation done before its data is.
 * The Dekker handshake of wait.h makes the publish visible to a helper about to sleep: claim
 * is stored seq_cst before tm_wake reads `sleeping`, and the helper's condition loads it
 * seq_cst after counting itself asleep. */
#ifndef TMPI_LIBCLIENT_COOP_H
#define TMPI_LIBCLIENT_COOP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "intra_parts.h"
#include "lib.h"

struct tm_rank;
struct tm_type;
struct tm_request;

/* One copy: len packed bytes from (src, scount, st) into (dst, dcount, dt); a NULL type means
 * plain bytes.  Chunk k is packed bytes [k * chunk, min((k + 1) * chunk, len)). */
struct tm_coop_job {
    void *dst;
    size_t dcount;
    const struct tm_type *dt;
    const void *src;
    size_t scount;
    const struct tm_type *st;
    size_t len, chunk;
};

/* Copies n packed bytes from data (layout st; NULL: plain bytes) into the buffer of rr
 * (rr->buf, rr->cap, rr->dt), sharing the copy with helper's waits when it is large enough
 * (helper: the other rank of the match, NULL or me for none).  Completes nothing. */
void tm_coop_copy_in(struct tm_rank *me, struct tm_rank *helper, struct tm_request *rr,
                     const void *data, const struct tm_type *st, size_t n);

/* Copies chunks of the job published to me, if any (wait.c, from a wait on me's thread). */
void tm_coop_help(struct tm_rank *me);

static inline void tm_coop_poll(struct tm_coop *c, struct tm_rank *me)
{
    uint64_t w = atomic_load_explicit(&c->claim, memory_order_seq_cst); /* coop.h protocol */
    if (TM_UNLIKELY((uint32_t)w < (uint32_t)(w >> 32))) tm_coop_help(me);
}

#endif
