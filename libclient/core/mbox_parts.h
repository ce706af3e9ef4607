/* mbox_parts.h — the rank's mailbox and envelope cache as struct tm_rank (job.h) embeds them:
 * types only.  mbox/ owns them (match.h: matching over the mailbox; envelope_pool.h: the
 * cache); they sit here so that the rank's record holds them by value, one cache-line walk
 * from the rank, without core/ seeing mbox/'s functions. */
#ifndef TMPI_LIBCLIENT_MBOX_PARTS_H
#define TMPI_LIBCLIENT_MBOX_PARTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "dlist.h"

struct tm_envl;

#define TM_MATCH_BUCKETS 32 /* power of two; per rank, so 4096 ranks cost ~4 MiB */

struct tm_mbox {
    pthread_mutex_t lock;
    struct tm_dl unexp_order;
    struct tm_dl unexp_hash[TM_MATCH_BUCKETS];
    struct tm_dl posted_wild;
    struct tm_dl posted_hash[TM_MATCH_BUCKETS];
    uint64_t post_seq;
    /* bumped (under the lock) on every unexpected arrival; Probe waits for it to change */
    _Atomic uint32_t arrivals;
    /* unexpected messages queued (changed under the lock, read without it: p2p.c's small
     * blocking receive skips the lock when there are none) */
    _Atomic uint32_t nunexp;
};

#define TM_ENVL_NCLASS 16 /* 64 B .. 2 MiB */

struct tm_envl_pool {
    _Atomic(struct tm_envl *) returned;   /* pushed by any thread, drained by the owner */
    struct tm_envl *free[TM_ENVL_NCLASS]; /* owner-only */
    unsigned nfree[TM_ENVL_NCLASS];       /* owner-only */
};

#endif
