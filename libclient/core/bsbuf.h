/* bsbuf.h — a buffer for buffered sends (MPI 4.1 §3.6): the rank's (MPI_Buffer_attach), a
 * communicator's (MPI_Comm_attach_buffer) or a session's (MPI_Session_attach_buffer).
 *
 * A buffered send reserves its bytes + MPI_BSEND_OVERHEAD of the buffer the send chooses
 * (mpi/bsend_buf.h) and holds them until its message has left; the data itself lives in the
 * message's envelope, so the buffer is accounting only, and MPI_BUFFER_AUTOMATIC is one with
 * no limit.  buf and size: the attaching rank's threads, apart from buffered sends (MPI makes
 * attach, detach and sends on the buffer exclusive); used: atomics, any thread (the thread
 * that receives a message releases its room, tm_bsend_release, under the lock); flushers:
 * lock.
 *
 * Lifetime: the owner may free a communicator's or session's record once used reads 0, while
 * the thread whose release brought it to 0 may still be inside tm_bsend_release.  That release
 * holds the lock from its decrement to its last touch of the record, so the owner takes the
 * lock once before freeing (tm_bsbuf_free) and the release never reads freed memory. */
#ifndef TMPI_LIBCLIENT_BSBUF_H
#define TMPI_LIBCLIENT_BSBUF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#include "wait.h"

struct tm_bsbuf {
    void *buf;   /* the attached memory, MPI_BUFFER_AUTOMATIC, or NULL: none attached */
    size_t size; /* its size in bytes (0 for MPI_BUFFER_AUTOMATIC) */
    _Atomic size_t used;
    pthread_mutex_t lock;
    /* MPI_*_iflush_buffer requests waiting for used to reach 0 (mpi/bsend_buf.c), a list */
    void *flushers;
    /* the owner's waker: a detach or flush waiting for used to reach 0 sleeps on it */
    struct tm_waker *waker;
    /* completes a list taken from flushers (any thread, outside the lock; b is not used, as
     * it may be gone by then) */
    void (*complete)(void *flushers);
};

static inline int tm_bsbuf_idle(void *b)
{
    return atomic_load_explicit(&((struct tm_bsbuf *)b)->used, memory_order_seq_cst) == 0;
}

/* A communicator's or session's record goes (b: heap, NULL: none): waits until its messages
 * have left (MPI 4.1 §3.6.2: freeing the object detaches its buffer), completes the iflush
 * requests still waiting, frees it. */
static inline void tm_bsbuf_free(struct tm_rank *me, struct tm_bsbuf *b)
{
    if (!b) return;
    tm_wait(me, tm_bsbuf_idle, b);
    /* the release that emptied b may still hold the lock: wait for it to let go */
    pthread_mutex_lock(&b->lock);
    void *done = b->flushers;
    b->flushers = NULL;
    pthread_mutex_unlock(&b->lock);
    if (done) b->complete(done);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

#endif
