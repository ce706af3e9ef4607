/* objtab.h — a rank's table of user-created objects behind integer handles (derived datatypes,
 * user reduction ops, groups, infos...): handle = base + index.  Only the rank that created an
 * object looks its handle up (MPI handles are local to a process, here to a rank), but under
 * MPI_THREAD_MULTIPLE that rank is several threads, which may create, free and use objects at
 * once (issue 17: datatypes created concurrently).  So:
 *  - lookups take no lock: slots live in chunks that never move once made (a chunk pointer
 *    and a slot are each published with a release store, read with an acquire load), so a
 *    lookup racing with an add or a delete of another handle sees its own slot intact;
 *  - adds and deletes take the table's mutex (they pick the lowest free slot, make chunks).
 * The table itself is created on first use by tm_objtab_add (single-threaded ranks) or made
 * up front by tm_objtab_make (MPI_Init_thread with MULTIPLE: no thread ever sees the rank's
 * table pointer change), and freed with the rank (job.c). */
#ifndef TMPI_LIBCLIENT_OBJTAB_H
#define TMPI_LIBCLIENT_OBJTAB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define TM_OBJTAB_MAX (1 << 20) /* a limit on what a program can make us allocate */
#define TM_OBJTAB_CHUNK 1024    /* slots per chunk */
#define TM_OBJTAB_NCHUNK (TM_OBJTAB_MAX / TM_OBJTAB_CHUNK)

struct tm_objtab {
    pthread_mutex_t lock; /* adders and deleters */
    int cap;              /* slots in the chunks made so far (lock) */
    int used;             /* occupied slots (lock) */
    /* chunk[c][i]: the object of slot c * TM_OBJTAB_CHUNK + i, NULL if free (atomics) */
    void *_Atomic *_Atomic chunk[TM_OBJTAB_NCHUNK];
};

static inline void *tm_objtab_get(const struct tm_objtab *t, int base, int h)
{
    if (!t || h < base || h - base >= TM_OBJTAB_MAX) return NULL;
    const unsigned i = (unsigned)(h - base);
    void *_Atomic *c = atomic_load_explicit(&((struct tm_objtab *)t)->chunk[i / TM_OBJTAB_CHUNK],
                                            memory_order_acquire);
    return c ? atomic_load_explicit(&c[i % TM_OBJTAB_CHUNK], memory_order_acquire) : NULL;
}

/* Makes *tp if it is NULL: 0 or -1 (out of memory). */
static inline int tm_objtab_make(struct tm_objtab **tp)
{
    if (*tp) return 0;
    struct tm_objtab *t = calloc(1, sizeof *t);
    if (!t) return -1;
    pthread_mutex_init(&t->lock, NULL);
    *tp = t;
    return 0;
}

/* Stores p in the lowest free slot of *tp (created if NULL); returns its handle, or -1. */
static inline int tm_objtab_add(struct tm_objtab **tp, int base, void *p)
{
    if (tm_objtab_make(tp) < 0) return -1;
    struct tm_objtab *t = *tp;
    int h = -1;
    pthread_mutex_lock(&t->lock);
    int i = t->cap;
    if (t->used < t->cap) /* a free slot exists: the lowest one */
        for (i = 0; i < t->cap; i++) {
            void *_Atomic *c =
                atomic_load_explicit(&t->chunk[i / TM_OBJTAB_CHUNK], memory_order_relaxed);
            if (!atomic_load_explicit(&c[i % TM_OBJTAB_CHUNK], memory_order_relaxed)) break;
        }
    if (i == t->cap) {
        if (t->cap >= TM_OBJTAB_MAX) goto out;
        void *_Atomic *c = calloc(TM_OBJTAB_CHUNK, sizeof *c);
        if (!c) goto out;
        atomic_store_explicit(&t->chunk[t->cap / TM_OBJTAB_CHUNK], c, memory_order_release);
        t->cap += TM_OBJTAB_CHUNK;
    }
    void *_Atomic *c = atomic_load_explicit(&t->chunk[i / TM_OBJTAB_CHUNK], memory_order_relaxed);
    atomic_store_explicit(&c[i % TM_OBJTAB_CHUNK], p, memory_order_release);
    t->used++;
    h = base + i;
out:
    pthread_mutex_unlock(&t->lock);
    return h;
}

static inline void tm_objtab_del(struct tm_objtab *t, int base, int h)
{
    if (!t || h < base || h - base >= TM_OBJTAB_MAX) return;
    const unsigned i = (unsigned)(h - base);
    pthread_mutex_lock(&t->lock);
    void *_Atomic *c = atomic_load_explicit(&t->chunk[i / TM_OBJTAB_CHUNK], memory_order_relaxed);
    if (c && atomic_load_explicit(&c[i % TM_OBJTAB_CHUNK], memory_order_relaxed)) {
        atomic_store_explicit(&c[i % TM_OBJTAB_CHUNK], NULL, memory_order_release);
        t->used--;
    }
    pthread_mutex_unlock(&t->lock);
}

/* Frees the table and, through fr, every object still in it (no other thread left). */
static inline void tm_objtab_free(struct tm_objtab *t, void (*fr)(void *))
{
    if (!t) return;
    for (int k = 0; k < TM_OBJTAB_NCHUNK; k++) {
        void *_Atomic *c = atomic_load_explicit(&t->chunk[k], memory_order_relaxed);
        if (!c) continue;
        for (int i = 0; i < TM_OBJTAB_CHUNK; i++) {
            void *p = atomic_load_explicit(&c[i], memory_order_relaxed);
            if (p) fr(p);
        }
        free((void *)c);
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}

#endif
