/* coop.c — cooperative copies between the two ranks of a match (coop.h has the protocol). */
#include "coop.h"

#include <sched.h>
#include <string.h>

#include "job.h"
#include "relax.h"
#include "request.h"
#include "type.h"
#include "type_copy.h"
#include "wait.h"

/* What one piece of a strided copy costs in bytes of a plain copy: each block is a load and a
 * store at a new address, and a column of a matrix (the halo exchange) touches a new page
 * with every element.  Measured on the development machine with hot caches, against 4 MiB
 * contiguous in 85 us: a column of 512 doubles in 0.6 us (60 B an element), of 1024 in
 * 1.2-1.8 us (70 B), of 2048 at a 16 KiB stride in 12 us (290 B: beyond the TLB); and two
 * threads copied the 2048 column in 2.3-2.5 us (docs/bench/ANALYSIS.md "Halo exchange"). */
#define COOP_PIECE_BYTES 128
/* The weight (bytes, pieces counted as above) of one chunk, and the most chunks of a copy.
 * A claim is one atomic on a line both cores write.  Measured (two threads, one copying and
 * one polling, 4 MiB in cache): 32 KiB chunks gave no gain at all (85 us alone, 89 shared),
 * 128 KiB chunks 46-60 us, 256 KiB 54 us; 64 MiB 6.4 ms alone, 3.8 ms in 128 KiB chunks. */
#define COOP_CHUNK_WEIGHT (128 * 1024)
#define COOP_MAX_CHUNKS 256
/* A helper asleep in a futex takes tens of us to run again on this machine (a vCPU woken by
 * an interrupt; wait.c); the wake costs the initiator a system call.  Only a copy that lasts
 * longer than that wakes it; a smaller one is shared with a helper that still spins. */
#define COOP_WAKE_WEIGHT (1024 * 1024)

/* The mean block length of a side (plain bytes: the whole). */
static size_t mean_block(const struct tm_type *t, size_t len)
{
    return t ? tm_type_mean_block(t) : len;
}

/* Chunk bounds: a regular type's block (so a chunk starts on one, type_copy.h), else a page
 * of plain bytes (whole pages to each core), else a cache line (a pair: the pair). */
static size_t chunk_unit(const struct tm_coop_job *j)
{
    const struct tm_type *t = j->st ? j->st : j->dt;
    if (!t) return 4096;
    /* whole pairs, which a pair array copies to itself as one memcpy (type_copy.h) */
    if (j->st == j->dt && tm_type_pair_array(t)) return t->psize;
    if (j->st && j->dt) return j->st->vn && j->dt->vn && j->st->vlen == j->dt->vlen ? t->vlen : 64;
    return t->vn ? t->vlen : 64;
}

static void copy_piece(const struct tm_coop_job *j, size_t pos, size_t len)
{
    const unsigned char *s = j->src;
    unsigned char *d = j->dst;
    if (!j->st && !j->dt)
        memcpy(d + pos, s + pos, len);
    else if (!j->st)
        tm_type_unpack(d, j->dcount, j->dt, pos, s + pos, len);
    else if (!j->dt)
        tm_type_pack(d + pos, s, j->scount, j->st, pos, len);
    else
        tm_type_copy_at(d, j->dcount, j->dt, s, j->scount, j->st, pos, len);
}

static void copy_chunk(const struct tm_coop_job *j, uint32_t k)
{
    size_t pos = (size_t)k * j->chunk;
    size_t len = j->len - pos < j->chunk ? j->len - pos : j->chunk;
    copy_piece(j, pos, len);
}

/* The next unclaimed chunk, or -1.  A claim past the end is harmless: the low half only
 * grows past the high half, which means "none" (a rank has few threads). */
static int64_t claim(struct tm_coop *c)
{
    uint64_t w = atomic_load_explicit(&c->claim, memory_order_acquire);
    if ((uint32_t)w >= (uint32_t)(w >> 32)) return -1;
    w = atomic_fetch_add_explicit(&c->claim, 1, memory_order_acquire);
    return (uint32_t)w < (uint32_t)(w >> 32) ? (int64_t)(uint32_t)w : -1;
}

void tm_coop_help(struct tm_rank *me)
{
    struct tm_coop *c = &me->coop;
    uint64_t n = 0;
    for (int64_t k; (k = claim(c)) >= 0; n++) {
        /* the job of our claim: it cannot end before this chunk is counted (coop.h) */
        copy_chunk(atomic_load_explicit(&c->job, memory_order_acquire), (uint32_t)k);
        atomic_fetch_add_explicit(&c->fin, 1, memory_order_release);
    }
    if (n) atomic_fetch_add_explicit(&c->helped, n, memory_order_relaxed);
}

/* Waits for the chunks the helper claimed; each is a few microseconds of copying.  A helper
 * that lost its core mid-chunk (other load on the node, which runnable_ranks does not count)
 * needs a core to finish: after a short spin, every look gives ours away. */
#define COOP_AWAIT_SPINS 1024

static void await_chunks(struct tm_coop *c, uint32_t chunks)
{
    for (unsigned i = 0; atomic_load_explicit(&c->fin, memory_order_acquire) < chunks; i++) {
        if (i < COOP_AWAIT_SPINS)
            tm_cpu_relax();
        else
            sched_yield();
    }
}

void tm_coop_copy_in(struct tm_rank *me, struct tm_rank *helper, struct tm_request *rr,
                     const void *data, const struct tm_type *st, size_t n)
{
    if (!n) return;
    const struct tm_type *dt = rr->dt;
    struct tm_coop_job j = {.dst = rr->buf,
                            .dcount = dt ? rr->cap / dt->psize : 0,
                            .dt = dt,
                            .src = data,
                            .scount = st ? (n + st->psize - 1) / st->psize : 0,
                            .st = st,
                            .len = n,
                            .chunk = n};
    size_t min = me->job->coop_min;
    if (!min || !helper || helper == me) {
        copy_piece(&j, 0, n);
        return;
    }
    size_t mb = mean_block(st, n), md = mean_block(dt, n);
    size_t pieces = n / (mb < md ? mb : md);
    size_t weight = n + pieces * COOP_PIECE_BYTES;
    if (weight < min) {
        copy_piece(&j, 0, n);
        return;
    }
    /* A sparse side is moved by its owner's core only (handoff.h): the helper neither writes
     * the receiver's sparse layout unless it is the receiver, nor reads the sender's unless it
     * is the sender. */
    int helper_receives = helper == rr->owner;
    if ((tm_type_sparse(dt) && !helper_receives) || (tm_type_sparse(st) && helper_receives)) {
        copy_piece(&j, 0, n);
        return;
    }
    size_t chunks = weight / COOP_CHUNK_WEIGHT;
    if (chunks < 2) chunks = 2;
    if (chunks > COOP_MAX_CHUNKS) chunks = COOP_MAX_CHUNKS;
    size_t unit = chunk_unit(&j);
    j.chunk = (n + chunks - 1) / chunks;
    j.chunk = (j.chunk + unit - 1) / unit * unit;
    uint32_t nch = (uint32_t)((n + j.chunk - 1) / j.chunk);
    struct tm_coop *c = &helper->coop;
    int idle = 0;
    if (nch < 2 || !atomic_compare_exchange_strong_explicit(
                       &c->busy, &idle, 1, memory_order_acquire, memory_order_relaxed)) {
        copy_piece(&j, 0, n); /* another rank shares a copy with this helper */
        return;
    }
    atomic_store_explicit(&c->fin, 0, memory_order_relaxed);
    atomic_store_explicit(&c->job, &j, memory_order_relaxed);
    atomic_store_explicit(&c->claim, (uint64_t)nch << 32, memory_order_seq_cst); /* wait.h */
    if (weight >= COOP_WAKE_WEIGHT) tm_wake(&helper->waker);
    uint32_t mine = 0;
    for (int64_t k; (k = claim(c)) >= 0; mine++)
        copy_chunk(&j, (uint32_t)k);
    if (atomic_fetch_add_explicit(&c->fin, mine, memory_order_acq_rel) + mine < nch)
        await_chunks(c, nch);
    atomic_store_explicit(&c->busy, 0, memory_order_release);
}
