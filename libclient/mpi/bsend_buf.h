/* bsend_buf.h — attaching, detaching and flushing the buffers of buffered sends (MPI 4.1
 * §3.6.1-3.6.2; the buffer itself: core/bsbuf.h), and which one a send uses: the
 * communicator's, else its session's, else the rank's (MPI_Buffer_attach: a rank is a
 * process, so one rank's buffer is never another's). */
#ifndef TMPI_LIBCLIENT_BSEND_BUF_H
#define TMPI_LIBCLIENT_BSEND_BUF_H

#include "bsbuf.h"
#include "comm.h"
#include "mpi.h"

struct tm_rank;

/* How a caller reports an error of fn (with the handler of object obj, a communicator or a
 * session handle); returns the error code to return. */
typedef int (*tm_bsbuf_err_fn)(struct tm_rank *me, int obj, int code, const char *fn,
                               const char *msg);

/* The buffer a buffered send on cr uses; NULL when none is attached. */
struct tm_bsbuf *tm_bsend_pick(struct tm_rank *me, struct tm_commref *cr);

/* MPI_*attach_buffer: buffer (or MPI_BUFFER_AUTOMATIC) of size bytes becomes b's. */
int tm_bsbuf_attach(struct tm_rank *me, struct tm_bsbuf *b, tm_bsbuf_err_fn err, int obj,
                    const char *fn, void *buffer, MPI_Count size);
/* MPI_*detach_buffer: waits until b's messages have left, then gives back what was attached
 * (int_size or count_size; the int form refuses a buffer larger than it can say). */
int tm_bsbuf_detach(struct tm_rank *me, struct tm_bsbuf *b, tm_bsbuf_err_fn err, int obj,
                    const char *fn, void *buffer_addr, int *int_size, MPI_Count *count_size);
/* MPI_*flush_buffer: waits until b's messages have left; b stays attached. */
void tm_bsbuf_flush(struct tm_rank *me, struct tm_bsbuf *b);
/* MPI_*iflush_buffer: a request that completes when they have. */
int tm_bsbuf_iflush(struct tm_rank *me, struct tm_bsbuf *b, tm_bsbuf_err_fn err, int obj,
                    const char *fn, MPI_Request *request);
/* A heap buffer record (a communicator's or a session's), none attached; NULL out of memory. */
struct tm_bsbuf *tm_bsbuf_new(struct tm_rank *me);

#endif
