/* bsend_buf.c — the buffers of buffered sends: attach, detach, flush (bsend_buf.h). */
#include "bsend_buf.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "errh.h"
#include "job.h"
#include "lib.h"
#include "wait.h"

/* an MPI_*iflush_buffer request waiting for its buffer's messages to leave */
struct flusher {
    MPI_Request req;
    struct flusher *next;
};

struct tm_bsbuf *tm_bsend_pick(struct tm_rank *me, struct tm_commref *cr)
{
    if (cr->bsb && cr->bsb->buf) return cr->bsb;
    if (cr->session_bsb && cr->session_bsb->buf) return cr->session_bsb;
    return me->bsend.buf ? &me->bsend : NULL;
}

/* Completes the iflush requests of a list taken from a buffer's flushers (any thread). */
static void complete_flushers(void *list)
{
    struct flusher *f = list;
    while (f) {
        struct flusher *next = f->next;
        PMPI_Grequest_complete(f->req); /* pending and ours: cannot fail */
        free(f);
        f = next;
    }
}

static void bsbuf_init(struct tm_rank *me, struct tm_bsbuf *b)
{
    b->waker = &me->waker;
    b->complete = complete_flushers;
    pthread_mutex_init(&b->lock, NULL);
}

struct tm_bsbuf *tm_bsbuf_new(struct tm_rank *me)
{
    struct tm_bsbuf *b = calloc(1, sizeof *b);
    if (b) bsbuf_init(me, b);
    return b;
}

int tm_bsbuf_attach(struct tm_rank *me, struct tm_bsbuf *b, tm_bsbuf_err_fn err, int obj,
                    const char *fn, void *buffer, MPI_Count size)
{
    if (buffer == MPI_BUFFER_AUTOMATIC)
        size = 0;
    else if (size < 0 || (!buffer && size > 0) || (unsigned long long)size > PTRDIFF_MAX)
        return err(me, obj, MPI_ERR_ARG, fn, "invalid buffer or size");
    if (b->buf) return err(me, obj, MPI_ERR_BUFFER, fn, "a buffer is already attached");
    if (!b->waker) bsbuf_init(me, b); /* the rank's own, made with the rank */
    /* a zero-sized buffer is still attached (a send on it then finds no room) */
    b->buf = buffer ? buffer : (void *)&b->size;
    b->size = (size_t)size;
    return MPI_SUCCESS;
}

int tm_bsbuf_detach(struct tm_rank *me, struct tm_bsbuf *b, tm_bsbuf_err_fn err, int obj,
                    const char *fn, void *buffer_addr, int *int_size, MPI_Count *count_size)
{
    if (!buffer_addr || (!int_size && !count_size))
        return err(me, obj, MPI_ERR_ARG, fn, "argument is NULL");
    if (!b || !b->buf) return err(me, obj, MPI_ERR_BUFFER, fn, "no buffer is attached");
    if (int_size && b->size > INT_MAX)
        return err(me, obj, MPI_ERR_COUNT, fn,
                   "the attached buffer's size does not fit an int (use the _c form)");
    /* MPI 4.1 §3.6.1: detach blocks until the messages in the buffer have been sent */
    tm_wait(me, tm_bsbuf_idle, b);
    *(void **)buffer_addr = b->buf == (void *)&b->size ? NULL : b->buf;
    if (int_size)
        *int_size = (int)b->size;
    else
        *count_size = (MPI_Count)b->size;
    b->buf = NULL;
    b->size = 0;
    return MPI_SUCCESS;
}

void tm_bsbuf_flush(struct tm_rank *me, struct tm_bsbuf *b)
{
    if (b) tm_wait(me, tm_bsbuf_idle, b);
}

static int flush_query(void *extra, MPI_Status *status)
{
    (void)extra;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    return PMPI_Status_set_elements_x(status, MPI_BYTE, 0);
}
static int flush_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}
static int flush_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int tm_bsbuf_iflush(struct tm_rank *me, struct tm_bsbuf *b, tm_bsbuf_err_fn err, int obj,
                    const char *fn, MPI_Request *request)
{
    if (!request) return err(me, obj, MPI_ERR_ARG, fn, "request is NULL");
    MPI_Request r;
    int e = PMPI_Grequest_start(flush_query, flush_free, flush_cancel, NULL, &r);
    if (e) return e;
    if (!b || tm_bsbuf_idle(b)) {
        PMPI_Grequest_complete(r);
        *request = r;
        return MPI_SUCCESS;
    }
    struct flusher *f = malloc(sizeof *f);
    if (!f) {
        PMPI_Grequest_complete(r);
        PMPI_Request_free(&r);
        return err(me, obj, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    f->req = r;
    /* under the lock, as releases are (bsbuf.h): if the last one came first, used is 0 here
     * and the request completes now; else that release finds it on the list */
    pthread_mutex_lock(&b->lock);
    struct flusher *done = NULL;
    if (atomic_load_explicit(&b->used, memory_order_seq_cst) == 0) {
        f->next = NULL;
        done = f;
    } else {
        f->next = b->flushers;
        b->flushers = f;
    }
    pthread_mutex_unlock(&b->lock);
    complete_flushers(done);
    *request = r;
    return MPI_SUCCESS;
}
