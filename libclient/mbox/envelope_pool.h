/* envelope_pool.h — envelopes for unexpected messages, from a per-rank cache (seed 003 §3.1:
 * private per-worker pools, no malloc per message).
 *
 * A sender takes envelopes from its own cache (owner-only lists, no lock).  The receiver that
 * consumes one pushes it onto the sender's return stack, a lock-free LIFO any thread may push
 * to; only the owner pops, and it takes the whole stack with one exchange, so there is no ABA.
 * Payload sizes come in power-of-two classes from 64 bytes to TM_ENVL_MAXCLASS; bigger payloads
 * (MPI_Bsend above the eager limit) use the heap class.
 *
 * Naming: tm_envl_* / TM_ENVL_* is the message envelope (match.h: struct tm_envl), never the
 * process environment (job_getenv, getenv). */
#ifndef TMPI_LIBCLIENT_ENVELOPE_POOL_H
#define TMPI_LIBCLIENT_ENVELOPE_POOL_H

#include <stdatomic.h>
#include <stddef.h>

#include "match.h"
#include "mbox_parts.h"

#define TM_ENVL_HEAP TM_ENVL_NCLASS
#define TM_ENVL_CACHE_BYTES (512u * 1024) /* per class and rank, beyond that free() */

/* An envelope with room for bytes of payload from me's cache; NULL when out of memory. */
struct tm_envl *tm_envl_alloc(struct tm_rank *me, size_t bytes);
/* An eager envelope from me's cache holding a copy of the message; NULL when out of memory.
 * Not queued anywhere yet. */
struct tm_envl *tm_envl_eager(struct tm_rank *me, int ctx, int src, int tag, const void *data,
                              size_t bytes);
/* The same from data laid out as dt (type_copy.h; NULL: bytes): packs bytes packed bytes. */
struct tm_envl *tm_envl_eager_typed(struct tm_rank *me, int ctx, int src, int tag, const void *data,
                                    const struct tm_type *dt, size_t bytes);
/* A buffered send's room in its buffer b is free again (any thread). */
struct tm_bsbuf;
void tm_bsend_release(struct tm_bsbuf *b, size_t bytes);
/* Gives an envelope back to its home cache; me is the calling rank.  A buffered send's
 * envelope also frees its room (tm_bsend_release). */
void tm_envl_release(struct tm_rank *me, struct tm_envl *e);
void tm_envl_pool_destroy(struct tm_envl_pool *p);

#endif
