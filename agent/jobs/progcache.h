/* progcache.h — programs the agent holds, by SHA-256 of their bytes.
 *
 * The launcher sends the hash first and the bytes only if the agent lacks them.  Programs in
 * use by a job are pinned; up to `keep` unused ones stay cached, least recently used leaving
 * first.  All functions are thread-safe (one mutex). */
#ifndef TMPI_AGENT_PROGCACHE_H
#define TMPI_AGENT_PROGCACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define PROGRAM_HASH_SIZE 32

struct program {
    uint8_t hash[PROGRAM_HASH_SIZE];
    uint8_t *bytes;
    size_t size;
    /* below: protected by progcache.mu */
    unsigned refs;
    uint64_t last_use;
    struct program *next;
};

struct progcache {
    pthread_mutex_t mu;
    struct program *list;
    unsigned count;
    unsigned keep;
    uint64_t tick;
};

void progcache_init(struct progcache *c, unsigned keep);
void progcache_destroy(struct progcache *c);

/* A pinned reference to the program with this hash, or NULL. */
struct program *progcache_get(struct progcache *c, const uint8_t hash[PROGRAM_HASH_SIZE]);

/* Adds a program (takes ownership of bytes) and returns it pinned.  If the hash is already
 * present, bytes are freed and the existing entry is returned.  -ENOMEM. */
int progcache_add(struct progcache *c, const uint8_t hash[PROGRAM_HASH_SIZE], uint8_t *bytes,
                  size_t size, struct program **ret);

/* Changes how many unused programs stay (a reload), dropping the oldest beyond it. */
void progcache_set_keep(struct progcache *c, unsigned keep);

void progcache_release(struct progcache *c, struct program *p);

unsigned progcache_count(struct progcache *c);

/* 1 if bytes hash to hash (SHA-256). */
int progcache_verify(const uint8_t hash[PROGRAM_HASH_SIZE], const uint8_t *bytes, size_t size);

#endif
