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

/* Error handler objects (errh_obj.c): MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN and
 * MPI_ERRORS_ABORT are predefined for every kind; user handlers (Comm_/Win_/File_
 * create_errhandler) are of one kind, handles from TM_ERRH_BASE in the rank's objs table.
 * An object holding a handler takes a reference (tm_errh_ref) and drops it when it goes;
 * Errhandler_free drops the program's, the handler goes with the last. */
enum tm_eh_kind { TM_EH_COMM = 1, TM_EH_WIN = 2, TM_EH_FILE = 3, TM_EH_SESSION = 4 };
#define TM_ERRH_BASE 16
int tm_errh_check(struct tm_rank *me, MPI_Errhandler eh, int kind); /* 0 or MPI_ERR_ARG */
void tm_errh_ref(struct tm_rank *me, MPI_Errhandler eh);
void tm_errh_unref(struct tm_rank *me, MPI_Errhandler eh);

/* Raises error code on the object of kind whose handle is handle, with handler eh: a user
 * handler is called with (&handle, &code), then code is returned; fatal ends the job naming
 * the rank, fn and the error.  For windows, files and sessions (tm_err does communicators). */
int tm_err_obj(struct tm_rank *me, int kind, int handle, MPI_Errhandler eh, int code,
               const char *fn, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* The class of an error code (user codes included), -1 if not a code. */
int tm_err_class_of(struct tm_rank *me, int code);

/* Why a call found no rank: MPI_Init not called, or a thread other than the one that did. */
/* The first code MPI_Add_error_class/_code gives: above MPI_ERR_LASTCODE, the last predefined
 * value (MPI 4.1 §9.5: MPI_LASTUSEDCODE >= MPI_ERR_LASTCODE). */
#define TM_ERR_FIRST_USER (MPI_ERR_LASTCODE + 1)

/* How many returned errors keep their reason for MPI_Error_string, and its longest text
 * (objs.h): a program asks about the error it just got, rarely about older ones. */
#define TM_ERR_DETAILS 8
#define TM_ERR_DETAIL_LEN 256

#define TM_ERR_NOINIT                                                                              \
    "MPI is not initialized on this thread (MPI_Init not called, or called by another thread)"

#endif
