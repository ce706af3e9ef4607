/* pool.h — the agent's shared buffer pool (seed 000 §3.5): memory for inter-node messages that
 * arrive before their receive is posted, and for eager messages a sender keeps until the
 * receiver has stored them.  It is bounded (tmpid.conf pool_size): when it cannot take a
 * buffer the protocol degrades to three-phase instead of growing.  Any thread. */
#ifndef TMPI_AGENT_POOL_H
#define TMPI_AGENT_POOL_H

#include <stdatomic.h>
#include <stddef.h>

struct pool {
    size_t capacity;
    atomic_size_t used;
    atomic_size_t peak;
    atomic_size_t refused; /* requests turned away because the pool was full */
};

void pool_init(struct pool *p, size_t capacity);
/* A buffer of bytes (> 0), or NULL when the pool is full or memory ran out. */
void *pool_get(struct pool *p, size_t bytes);
/* Gives back a buffer of pool_get with the same size. */
void pool_put(struct pool *p, void *buf, size_t bytes);

#endif
