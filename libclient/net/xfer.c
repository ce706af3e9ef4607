/* xfer.c — transfer handle table (xfer.h). */
#include "xfer.h"

#include <errno.h>
#include <stdlib.h>

struct tm_xfer_slot {
    void *p;            /* NULL when free */
    uint32_t gen;       /* bumped when freed; never 0 */
    uint32_t next_free; /* index + 1 of the next free slot */
    int kind;
};

int tm_xfer_init(struct tm_xfer_tab *t)
{
    int r = pthread_mutex_init(&t->lock, NULL);
    if (r) return -r;
    t->v = NULL;
    t->cap = 0;
    t->free_head = 0;
    t->used = 0;
    return 0;
}

void tm_xfer_fini(struct tm_xfer_tab *t, void (*each)(void *p, int kind, void *arg), void *arg)
{
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->v[i].p && each) each(t->v[i].p, t->v[i].kind, arg);
    free(t->v);
    t->v = NULL;
    t->cap = 0;
    pthread_mutex_destroy(&t->lock);
}

/* Doubles the table (lock held); new slots join the free list. */
static int grow(struct tm_xfer_tab *t)
{
    uint32_t ncap = t->cap ? t->cap * 2 : 64;
    if (ncap > TM_XFER_MAX) ncap = TM_XFER_MAX;
    if (ncap <= t->cap) return -ENOSPC;
    struct tm_xfer_slot *v = realloc(t->v, sizeof *v * ncap);
    if (!v) return -ENOMEM;
    for (uint32_t i = ncap; i-- > t->cap;) {
        v[i] = (struct tm_xfer_slot){.p = NULL, .gen = 1, .next_free = t->free_head, .kind = 0};
        t->free_head = i + 1;
    }
    t->v = v;
    t->cap = ncap;
    return 0;
}

int tm_xfer_put(struct tm_xfer_tab *t, int kind, void *p, uint64_t *ret_cookie)
{
    pthread_mutex_lock(&t->lock);
    if (!t->free_head) {
        int r = grow(t);
        if (r < 0) {
            pthread_mutex_unlock(&t->lock);
            return r;
        }
    }
    uint32_t i = t->free_head - 1;
    struct tm_xfer_slot *s = &t->v[i];
    t->free_head = s->next_free;
    s->p = p;
    s->kind = kind;
    t->used++;
    *ret_cookie = (uint64_t)s->gen << 32 | (uint64_t)(i + 1);
    pthread_mutex_unlock(&t->lock);
    return 0;
}

/* The live slot cookie names, or NULL (lock held). */
static struct tm_xfer_slot *find(struct tm_xfer_tab *t, uint64_t cookie, int kind)
{
    uint32_t idx = (uint32_t)cookie, gen = (uint32_t)(cookie >> 32);
    if (idx == 0 || idx > t->cap) return NULL;
    struct tm_xfer_slot *s = &t->v[idx - 1];
    if (!s->p || s->gen != gen || s->kind != kind) return NULL;
    return s;
}

void *tm_xfer_get(struct tm_xfer_tab *t, uint64_t cookie, int kind)
{
    pthread_mutex_lock(&t->lock);
    struct tm_xfer_slot *s = find(t, cookie, kind);
    void *p = s ? s->p : NULL;
    pthread_mutex_unlock(&t->lock);
    return p;
}

void *tm_xfer_take(struct tm_xfer_tab *t, uint64_t cookie, int kind)
{
    pthread_mutex_lock(&t->lock);
    struct tm_xfer_slot *s = find(t, cookie, kind);
    void *p = NULL;
    if (s) {
        p = s->p;
        s->p = NULL;
        if (++s->gen == 0) s->gen = 1;
        s->next_free = t->free_head;
        t->free_head = (uint32_t)(s - t->v) + 1;
        t->used--;
    }
    pthread_mutex_unlock(&t->lock);
    return p;
}
