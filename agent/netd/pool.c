/* pool.c — bounded buffer pool (pool.h).  Accounting is a lock-free reservation on `used`;
 * the memory itself comes from malloc, whose per-thread arenas already recycle buffers of the
 * sizes we use without a lock of ours. */
#include "pool.h"

#include <stdlib.h>

void pool_init(struct pool *p, size_t capacity)
{
    p->capacity = capacity;
    atomic_init(&p->used, 0);
    atomic_init(&p->peak, 0);
    atomic_init(&p->refused, 0);
}

void *pool_get(struct pool *p, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    size_t used = atomic_load_explicit(&p->used, memory_order_relaxed);
    do {
        if (bytes > p->capacity || used > p->capacity - bytes) {
            atomic_fetch_add_explicit(&p->refused, 1, memory_order_relaxed);
            return NULL;
        }
    } while (!atomic_compare_exchange_weak_explicit(&p->used, &used, used + bytes,
                                                    memory_order_relaxed, memory_order_relaxed));
    size_t now = used + bytes, peak = atomic_load_explicit(&p->peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(
                             &p->peak, &peak, now, memory_order_relaxed, memory_order_relaxed))
        ;
    void *buf = malloc(bytes);
    if (!buf) atomic_fetch_sub_explicit(&p->used, bytes, memory_order_relaxed);
    return buf;
}

void pool_put(struct pool *p, void *buf, size_t bytes)
{
    if (!buf) return;
    if (bytes == 0) bytes = 1;
    free(buf);
    atomic_fetch_sub_explicit(&p->used, bytes, memory_order_relaxed);
}
