/* Program cache: lookup by hash, pinning, LRU trimming of unused programs, hash check. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "progcache.h"

static uint8_t *bytes_of(const char *s, size_t *len, uint8_t hash[32])
{
    *len = strlen(s);
    uint8_t *b = malloc(*len);
    memcpy(b, s, *len);
    crypto_hash_sha256(hash, b, *len);
    return b;
}

int main(void)
{
    CHECK(sodium_init() >= 0);
    struct progcache c;
    progcache_init(&c, 1);
    uint8_t h1[32], h2[32], h3[32];
    size_t l1, l2, l3;
    uint8_t *b1 = bytes_of("program one", &l1, h1);
    uint8_t *b2 = bytes_of("program two", &l2, h2);
    uint8_t *b3 = bytes_of("program three", &l3, h3);
    CHECK(progcache_verify(h1, b1, l1));
    CHECK(!progcache_verify(h1, b2, l2));

    CHECK(progcache_get(&c, h1) == NULL);
    struct program *p1, *p2, *p3;
    CHECK(progcache_add(&c, h1, b1, l1, &p1) == 0);
    CHECK(progcache_add(&c, h2, b2, l2, &p2) == 0);
    CHECK_EQ(progcache_count(&c), 2);
    /* a second add of the same hash returns the existing entry */
    uint8_t *dup = malloc(l1);
    memcpy(dup, "program one", l1);
    struct program *again;
    CHECK(progcache_add(&c, h1, dup, l1, &again) == 0 && again == p1);
    progcache_release(&c, again);

    /* pinned programs stay even beyond `keep` */
    CHECK(progcache_add(&c, h3, b3, l3, &p3) == 0);
    CHECK_EQ(progcache_count(&c), 3);
    progcache_release(&c, p1);
    progcache_release(&c, p2);
    /* two unused, keep 1: the least recently used leaves — p2, since the second add of h1
     * used p1 after p2 was added */
    CHECK_EQ(progcache_count(&c), 2);
    CHECK(progcache_get(&c, h2) == NULL);
    struct program *g1 = progcache_get(&c, h1);
    CHECK(g1 == p1 && g1->size == l1 && memcmp(g1->bytes, "program one", l1) == 0);
    progcache_release(&c, g1);
    progcache_release(&c, p3);
    CHECK_EQ(progcache_count(&c), 1);
    progcache_destroy(&c);
    puts("program cache: ok");
    return 0;
}
