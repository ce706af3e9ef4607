/* intra_parts.h — what struct tm_rank (job.h) embeds of the intra-node engine: the fast boxes
 * into the rank, its hand-off stack and its shared-copy slot; types only.  intra/ owns them
 * (fbox.h, handoff.h, coop.h, where their protocols are); they sit here so that the rank's
 * record holds them by value on the fast path without core/ seeing intra/'s functions. */
#ifndef TMPI_LIBCLIENT_INTRA_PARTS_H
#define TMPI_LIBCLIENT_INTRA_PARTS_H

#include <stdatomic.h>
#include <stdint.h>

struct tm_fbox;
struct tm_envl;
struct tm_coop_job;

#define TM_FB_MAX_IN 16 /* rings into one receiver */

/* The rings into a rank.  A sender appends under the receiver's mailbox lock and publishes n
 * last; anyone may read box[0..n). */
struct tm_fb_in {
    _Atomic int n;
    struct tm_fbox *box[TM_FB_MAX_IN];
};

/* A rank's stack of handed-off messages; lives in struct tm_rank, zeroed with it. */
struct tm_handoff {
    struct tm_envl *_Atomic head;
};

/* A rank's helping slot (the protocol is in intra/coop.h); lives in struct tm_rank, zeroed
 * with it. */
struct tm_coop {
    _Atomic uint64_t claim; /* chunks << 32 | next unclaimed chunk */
    _Atomic uint32_t fin;   /* chunks copied */
    _Atomic int busy;       /* an initiator holds the slot */
    const struct tm_coop_job *_Atomic job;
    _Atomic uint64_t helped; /* chunks this rank's waits copied (tests, relaxed) */
} __attribute__((aligned(64)));

#endif
