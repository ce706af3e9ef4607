/* progset.h — the programs one job needs: one per program of the job (an MPMD job has
 * several, and several may be the same file).  Those in the program cache are pinned at once;
 * the others are fetched one after the other from whoever submitted the job (NeedProgram, then
 * ProgramChunk frames), checked against their SHA-256 and added to the cache.  The agent's
 * control connections (launcher -> agent) and member connections (coordinator -> member) both
 * use it.  Loop thread only. */
#ifndef TMPI_AGENT_PROGSET_H
#define TMPI_AGENT_PROGSET_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"
#include "progcache.h"

struct progset {
    struct progcache *cache;
    size_t n;
    struct program **progs;             /* [n]: pinned (one reference each), NULL: missing */
    uint8_t (*hash)[PROGRAM_HASH_SIZE]; /* [n] */
    uint64_t *size;                     /* [n] */
    size_t fetching;                    /* the program whose bytes arrive; n: none */
    uint8_t *buf; /* what arrived, grown as it arrives: an announced size costs nothing */
    size_t got, cap;
};

/* n programs, all missing until progset_set and progset_lookup.  0 or -ENOMEM. */
int progset_init(struct progset *ps, struct progcache *c, size_t n);
void progset_set(struct progset *ps, size_t i, const uint8_t hash[PROGRAM_HASH_SIZE],
                 uint64_t size);
/* Pins every program the cache holds. */
void progset_lookup(struct progset *ps);

/* The next program to fetch: 1 with *ret_hash set (send NeedProgram for it), 0 when every
 * program is there, -ENOMEM. */
int progset_need(struct progset *ps, const uint8_t **ret_hash);

/* One chunk of the program being fetched: 0 more to come, 1 that program is complete (call
 * progset_need again), -EPROTO with a reason in *ret_why (chunk not asked for, out of order,
 * wrong size or hash), -ENOMEM. */
int progset_chunk(struct progset *ps, const Tmpi__ProgramChunk *ch, const char **ret_why);

/* 1 while a program's bytes are awaited. */
int progset_fetching(const struct progset *ps);

/* Hands the pinned programs over (*ret_progs: n entries, the caller releases each and frees
 * the array); the set is empty afterwards. */
struct program **progset_take(struct progset *ps);

/* Releases what is pinned and frees everything. */
void progset_free(struct progset *ps);

/* The program with this hash among progs[0..n), or NULL. */
const struct program *progset_find(struct program *const *progs, size_t n, const uint8_t *hash,
                                   size_t hash_len);

#endif
