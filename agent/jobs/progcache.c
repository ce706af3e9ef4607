#include "progcache.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

void progcache_init(struct progcache *c, unsigned keep)
{
    *c = (struct progcache){.keep = keep};
    pthread_mutex_init(&c->mu, NULL);
}

void progcache_destroy(struct progcache *c)
{
    struct program *p = c->list;
    while (p) {
        struct program *n = p->next;
        free(p->bytes);
        free(p);
        p = n;
    }
    pthread_mutex_destroy(&c->mu);
}

struct program *progcache_get(struct progcache *c, const uint8_t hash[PROGRAM_HASH_SIZE])
{
    pthread_mutex_lock(&c->mu);
    struct program *p;
    for (p = c->list; p; p = p->next)
        if (memcmp(p->hash, hash, PROGRAM_HASH_SIZE) == 0) {
            p->refs++;
            p->last_use = ++c->tick;
            break;
        }
    pthread_mutex_unlock(&c->mu);
    return p;
}

/* Drops unpinned programs beyond `keep`, oldest first.  Caller holds mu. */
static void trim_locked(struct progcache *c)
{
    for (;;) {
        unsigned unused = 0;
        struct program **oldest = NULL;
        for (struct program **pp = &c->list; *pp; pp = &(*pp)->next)
            if ((*pp)->refs == 0) {
                unused++;
                if (!oldest || (*pp)->last_use < (*oldest)->last_use) oldest = pp;
            }
        if (unused <= c->keep || !oldest) return;
        struct program *p = *oldest;
        *oldest = p->next;
        c->count--;
        free(p->bytes);
        free(p);
    }
}

void progcache_set_keep(struct progcache *c, unsigned keep)
{
    pthread_mutex_lock(&c->mu);
    c->keep = keep;
    trim_locked(c);
    pthread_mutex_unlock(&c->mu);
}

int progcache_add(struct progcache *c, const uint8_t hash[PROGRAM_HASH_SIZE], uint8_t *bytes,
                  size_t size, struct program **ret)
{
    struct program *p = progcache_get(c, hash);
    if (p) {
        free(bytes);
        *ret = p;
        return 0;
    }
    p = calloc(1, sizeof *p);
    if (!p) {
        free(bytes);
        return -ENOMEM;
    }
    memcpy(p->hash, hash, PROGRAM_HASH_SIZE);
    p->bytes = bytes;
    p->size = size;
    p->refs = 1;
    pthread_mutex_lock(&c->mu);
    p->last_use = ++c->tick;
    p->next = c->list;
    c->list = p;
    c->count++;
    pthread_mutex_unlock(&c->mu);
    *ret = p;
    return 0;
}

void progcache_release(struct progcache *c, struct program *p)
{
    if (!p) return;
    pthread_mutex_lock(&c->mu);
    p->refs--;
    trim_locked(c);
    pthread_mutex_unlock(&c->mu);
}

unsigned progcache_count(struct progcache *c)
{
    pthread_mutex_lock(&c->mu);
    unsigned n = c->count;
    pthread_mutex_unlock(&c->mu);
    return n;
}

int progcache_verify(const uint8_t hash[PROGRAM_HASH_SIZE], const uint8_t *bytes, size_t size)
{
    uint8_t h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, bytes, size);
    return sodium_memcmp(h, hash, PROGRAM_HASH_SIZE) == 0;
}
