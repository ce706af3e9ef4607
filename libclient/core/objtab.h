/* objtab.h — a rank's table of user-created objects behind integer handles (derived datatypes,
 * user reduction ops): handle = base + index.  Owner-only: only the rank that created an object
 * looks its handle up (MPI handles are local to a process, here to a rank), so no lock.  The
 * table is created on first use and freed with the rank (job.c). */
#ifndef TMPI_LIBCLIENT_OBJTAB_H
#define TMPI_LIBCLIENT_OBJTAB_H

#include <stdlib.h>
#include <string.h>

#define TM_OBJTAB_MAX (1 << 20) /* a limit on what a program can make us allocate */

struct tm_objtab {
    void **v; /* NULL: free slot */
    int cap;
};

static inline void *tm_objtab_get(const struct tm_objtab *t, int base, int h)
{
    if (!t || h < base || h - base >= t->cap) return NULL;
    return t->v[h - base];
}

/* Stores p in a free slot of *tp (created if NULL); returns its handle, or -1. */
static inline int tm_objtab_add(struct tm_objtab **tp, int base, void *p)
{
    struct tm_objtab *t = *tp;
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t) return -1;
        *tp = t;
    }
    int i;
    for (i = 0; i < t->cap; i++)
        if (!t->v[i]) break;
    if (i == t->cap) {
        int ncap = t->cap ? t->cap * 2 : 16;
        if (ncap > TM_OBJTAB_MAX) return -1;
        void **nv = realloc(t->v, sizeof *nv * (size_t)ncap);
        if (!nv) return -1;
        memset(nv + t->cap, 0, sizeof *nv * (size_t)(ncap - t->cap));
        t->v = nv;
        t->cap = ncap;
    }
    t->v[i] = p;
    return base + i;
}

static inline void tm_objtab_del(struct tm_objtab *t, int base, int h)
{
    if (t && h >= base && h - base < t->cap) t->v[h - base] = NULL;
}

/* Frees the table and, through fr, every object still in it. */
static inline void tm_objtab_free(struct tm_objtab *t, void (*fr)(void *))
{
    if (!t) return;
    for (int i = 0; i < t->cap; i++)
        if (t->v[i]) fr(t->v[i]);
    free(t->v);
    free(t);
}

#endif
