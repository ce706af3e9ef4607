/* fbox.h — fast boxes: a ring of one-cache-line cells per (sender, receiver) pair on one node,
 * for small eager messages between ranks that talk often (docs/bench/ANALYSIS.md section 1).
 *
 * Why: a message through the receiver's mailbox moves 5-7 cache lines between the two cores
 * (the mailbox lock, the posted-receive chain, the request, the buffer, done, the waker).  A
 * cell holds envelope and payload in one line: the sender writes it, the receiver reads it,
 * and everything else the receiver touches (its own lock, queues and request) stays in its
 * cache.
 *
 * Protocol.  The sender writes cells without a lock (one producer: the rank's thread; helpers
 * never use boxes) and the receiver matches nothing in them directly: whoever holds the
 * receiver's mailbox lock drains a ring into the mailbox, in ring order — a cell goes to the
 * earliest posted receive it matches, else to the unexpected queue.  Ordering (MPI 3.1 §3.5)
 * follows from two rules:
 *  - a sender that sends to a receiver through the mailbox drains its ring to that receiver
 *    first, under the receiver's lock, so earlier cells enter the queues first;
 *  - a receive looks at the unexpected queue first, then drains (an unexpected message from a
 *    sender is older than anything in that sender's ring), then posts.
 * A posted receive is satisfied when its owner drains: every wait and test of a rank drains
 * its rings when a cell is ready (tm_fb_poll), and the sender wakes the receiver after a cell.
 *
 * A message longer than a cell's payload takes consecutive cells: the first holds the envelope
 * and TM_FB_PAYLOAD bytes, each further one TM_FB_MORE bytes after its seq, which the producer
 * sets to the cell's own position (never "full": that is position + 1); the first cell is
 * published last, so the consumer that sees it sees the rest.  Up to TM_FB_MAX_BYTES: 64 cells,
 * so a sender is not held up waiting for a message's worth of room (64 B-512 B ping-pong went
 * through the mailbox at 2.2x Open MPI's latency; ANALYSIS.md section 0), up to 3,824 B: 1-2 KiB
 * through the mailbox cost 0.29-0.32 us a half round trip, through cells 0.20-0.28 (ANALYSIS.md
 * "Medium messages").  512 cells (32 KiB) a ring hold a window of back-to-back isends: with
 * 128, osu_bw's 64 messages of 1 KiB (18 cells each) filled the ring after 7 and the rest took
 * the mailbox; osu_mbw_mr 1 KiB went 712 -> 4,081 MB/s, osu_bw 512 B 363 -> 3,042 (medians,
 * ANALYSIS.md "Message rate and small Bcasts").
 *
 * A non-contiguous message travels packed (the sender packs from its own memory) and the
 * receiver's drain lays it out in the receive's layout: each core touches only its own lines
 * (handoff.h has the measurements).
 *
 * Boxes are made on demand: after TM_FB_AFTER small messages to the same receiver, at most
 * TM_FB_MAX_IN per receiver (a job of thousands of ranks must not get n^2 rings), freed with
 * the job. */
#ifndef TMPI_LIBCLIENT_FBOX_H
#define TMPI_LIBCLIENT_FBOX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "intra_parts.h"

#define TM_FB_CELLS 512    /* per ring, power of two */
#define TM_FB_PAYLOAD 44   /* bytes that fit in a cell beside its envelope */
#define TM_FB_MORE 60      /* bytes in each further cell of a message */
#define TM_FB_MAX_CELLS 64 /* half of the old 128-cell ring: the size limit stays 3,824 B */
#define TM_FB_MAX_BYTES (TM_FB_PAYLOAD + (TM_FB_MAX_CELLS - 1) * TM_FB_MORE)
#define TM_FB_OUT 64      /* sender's table of receivers, direct-mapped by world rank */
#define TM_FB_AFTER 8     /* small messages to a receiver before it gets a ring */
#define TM_FB_AHEAD 16    /* a sender takes the line of the cell this far ahead (fbox.c) */
#define TM_FB_AHEAD_MAX 9 /* ... for messages of up to this many cells (512 B) */

struct tm_rank;
struct tm_request;
struct tm_type;

/* seq: written by the producer only: the producer position that filled the cell, plus one.
 * The consumer at position q finds its cell full when seq == q + 1 (older laps left smaller
 * values).  The consumer never writes a cell: it publishes its position q instead, which the
 * producer reads only when its last view of q says the ring is full, so a message costs the
 * cell's line and nothing else crosses between the two cores. */
struct tm_fb_cell {
    _Atomic uint32_t seq;
    union {
        struct { /* a message's first cell */
            uint32_t bytes;
            int ctx, src, tag;
            unsigned char data[TM_FB_PAYLOAD];
        };
        unsigned char more[TM_FB_MORE]; /* a further one */
    };
} __attribute__((aligned(64)));

struct tm_fbox {
    _Atomic uint32_t q; /* next cell to drain (receiver's mailbox lock; read without it to
                           peek, and by the producer to find room) */
    int from;           /* sender's world rank */
    struct tm_fb_cell cell[TM_FB_CELLS] __attribute__((aligned(64)));
};

/* Sender-side: one receiver (world rank + 1, 0: unused) per slot. */
struct tm_fb_slot {
    int dest1;
    uint32_t sent;  /* small messages counted towards a ring; UINT32_MAX: refused */
    uint32_t head;  /* producer position */
    uint32_t qseen; /* the consumer's position when last read */
    int light;      /* the job's asym_fence: cells are published with a release store (the
                       receiver's sleep pays the fence, asym_fence.h), else seq_cst */
    struct tm_fbox *box;
};

struct tm_fb_out {
    struct tm_fb_slot slot[TM_FB_OUT];
};

/* Sender: the ring from me to r, or NULL.  small: this message could use one (counts towards
 * making it).  Owner only. */
struct tm_fb_slot *tm_fb_out(struct tm_rank *me, struct tm_rank *r, int small);

/* Sender: writes a message into the ring; 0 when the ring is full (send through the mailbox,
 * which drains it).  bytes <= TM_FB_MAX_BYTES.  Wakes nobody: the caller does, after
 * tmpi_asym_light (asym_fence.h; the store that publishes the cell is seq_cst only when the
 * slot is not light). */
int tm_fb_push(struct tm_fb_slot *s, int ctx, int src, int tag, const void *buf, size_t bytes);

/* The same for data laid out as dt (non-contiguous; bytes packed): packs it into the cells,
 * and the receiver's drain lays it out in the receive's layout. */
int tm_fb_push_typed(struct tm_fb_slot *s, int ctx, int src, int tag, const void *buf,
                     const struct tm_type *dt, size_t bytes);

/* Caller holds box->mbox.lock.  Drains one ring (tm_fb_drain) or all rings into box: cells
 * go to matching posted receives, else to cand when it matches (a receive being started, not
 * posted: then done, the receive is complete), else to the unexpected queue with envelopes
 * from me's cache.  The drain stops after the cell that completes cand: the rest stays in the
 * rings, in order, for the next receive or wait (every one of them drains).  Returns 1 if cand
 * was completed, 0 if not, -ENOMEM when an envelope could not be had (the rest stays in the
 * ring for the next drain). */
int tm_fb_drain(struct tm_rank *me, struct tm_rank *box, struct tm_fbox *f,
                struct tm_request *cand);
int tm_fb_drain_all(struct tm_rank *me, struct tm_rank *box, struct tm_request *cand);

/* 1 if a ring into in has a cell ready (no lock). */
int tm_fb_ready(const struct tm_fb_in *in);
/* Drains me's rings if a cell is ready (waits and tests: a posted receive completes only
 * through a drain).  Any thread of the rank, takes the mailbox lock only when there is work. */
void tm_fb_poll(struct tm_rank *me);

/* Job teardown: frees the rings into r and r's sender table. */
void tm_fb_free(struct tm_rank *r);

#endif
