/* progset.c — the programs one job needs (progset.h). */
#include "progset.h"

#include "frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int progset_init(struct progset *ps, struct progcache *c, size_t n)
{
    memset(ps, 0, sizeof *ps);
    ps->cache = c;
    ps->n = n;
    ps->fetching = n;
    ps->progs = calloc(n ? n : 1, sizeof *ps->progs);
    ps->hash = calloc(n ? n : 1, sizeof *ps->hash);
    ps->size = calloc(n ? n : 1, sizeof *ps->size);
    if (!ps->progs || !ps->hash || !ps->size) {
        progset_free(ps);
        return -ENOMEM;
    }
    return 0;
}

void progset_set(struct progset *ps, size_t i, const uint8_t hash[PROGRAM_HASH_SIZE], uint64_t size)
{
    memcpy(ps->hash[i], hash, PROGRAM_HASH_SIZE);
    ps->size[i] = size;
}

void progset_lookup(struct progset *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        if (!ps->progs[i]) ps->progs[i] = progcache_get(ps->cache, ps->hash[i]);
}

int progset_need(struct progset *ps, const uint8_t **ret_hash)
{
    progset_lookup(ps); /* a program fetched for another app may serve this one */
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->progs[i]) continue;
        ps->fetching = i;
        ps->got = 0;
        ps->cap = 0;
        *ret_hash = ps->hash[i];
        return 1;
    }
    return 0;
}

int progset_fetching(const struct progset *ps)
{
    return ps->fetching < ps->n;
}

int progset_chunk(struct progset *ps, const Tmpi__ProgramChunk *ch, const char **ret_why)
{
    size_t i = ps->fetching;
    if (i >= ps->n) {
        *ret_why = "program bytes that were not asked for";
        return -EPROTO;
    }
    if (ch->program_hash.len != PROGRAM_HASH_SIZE ||
        memcmp(ch->program_hash.data, ps->hash[i], PROGRAM_HASH_SIZE) != 0) {
        *ret_why = "program chunk for another program";
        return -EPROTO;
    }
    if (ch->offset != ps->got || ch->data.len > ps->size[i] - ps->got) {
        *ret_why = "program chunk out of order or beyond the announced size";
        return -EPROTO;
    }
    if (ps->got + ch->data.len > ps->cap) {
        size_t cap = ps->cap ? ps->cap : FRAME_PROGRAM_CHUNK;
        while (cap < ps->got + ch->data.len)
            cap *= 2;
        if (cap > ps->size[i]) cap = ps->size[i];
        uint8_t *nb = realloc(ps->buf, cap);
        if (!nb) return -ENOMEM;
        ps->buf = nb;
        ps->cap = cap;
    }
    if (ch->data.len) memcpy(ps->buf + ps->got, ch->data.data, ch->data.len);
    ps->got += ch->data.len;
    if (!ch->last) return 0;
    if (ps->got != ps->size[i]) {
        *ret_why = "program shorter than announced";
        return -EPROTO;
    }
    /* The hash the job named must be the hash of what arrived. */
    if (!progcache_verify(ps->hash[i], ps->buf, ps->got)) {
        *ret_why = "program bytes do not match their SHA-256";
        return -EPROTO;
    }
    uint8_t *bytes = ps->buf;
    ps->buf = NULL;
    ps->cap = 0;
    ps->fetching = ps->n;
    if (progcache_add(ps->cache, ps->hash[i], bytes, ps->got, &ps->progs[i]) < 0) {
        ps->progs[i] = NULL;
        return -ENOMEM;
    }
    return 1;
}

struct program **progset_take(struct progset *ps)
{
    struct program **p = ps->progs;
    ps->progs = NULL;
    progset_free(ps);
    return p;
}

void progset_free(struct progset *ps)
{
    if (ps->progs)
        for (size_t i = 0; i < ps->n; i++)
            if (ps->progs[i]) progcache_release(ps->cache, ps->progs[i]);
    free(ps->progs);
    free(ps->hash);
    free(ps->size);
    free(ps->buf);
    ps->progs = NULL;
    ps->hash = NULL;
    ps->size = NULL;
    ps->buf = NULL;
    ps->n = 0;
    ps->fetching = 0;
}

const struct program *progset_find(struct program *const *progs, size_t n, const uint8_t *hash,
                                   size_t hash_len)
{
    if (hash_len != PROGRAM_HASH_SIZE) return NULL;
    for (size_t i = 0; i < n; i++)
        if (progs[i] && memcmp(progs[i]->hash, hash, PROGRAM_HASH_SIZE) == 0) return progs[i];
    return NULL;
}
