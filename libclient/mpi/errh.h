/* errh.h — MPI error classes, their strings, and error handlers.
 *
 * Every entry point reports a failure through tm_err(): with MPI_ERRORS_RETURN it just returns
 * the class; with MPI_ERRORS_ARE_FATAL (the default) it prints one line to stderr
 * ("rank R: MPI_Send: invalid rank 7 (MPI_ERR_RANK)") and aborts the job through the agent. */
#ifndef TMPI_LIBCLIENT_ERRH_H
#define TMPI_LIBCLIENT_ERRH_H

#include "mpi.h"

struct tm_rank;

/* Reports error class code raised by fn on comm (the rank's handler for comm, or for
 * MPI_COMM_WORLD if comm is not valid).  Returns code unless the handler is fatal. */
int tm_err(struct tm_rank *me, MPI_Comm comm, int code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The same for calls without a communicator: MPI_COMM_WORLD's handler of the calling rank. */
int tm_err_noco(int code, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

const char *tm_err_name(int code);

/* Why a call found no rank: MPI_Init not called, or a thread other than the one that did. */
#define TM_ERR_NOINIT                                                                              \
    "MPI is not initialized on this thread (MPI_Init not called, or called by another thread)"

#endif
