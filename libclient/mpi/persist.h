/* persist.h — requests over other requests: persistent requests (MPI_*_init, started by
 * MPI_Start/Startall) and MPI_Isendrecv(_replace)'s pair of a receive and a send.
 *
 * A persistent request keeps the arguments of its operation and a start function that issues
 * it through the matching non-blocking call (PMPI_Isend, PMPI_Irecv, PMPI_Iallreduce...): each
 * MPI_Start makes one inner request, which Wait/Test complete and free, leaving the persistent
 * request inactive (MPI 3.1 §3.9; MPI 4.0 §6.13 for collectives).  So every operation that has
 * a non-blocking form gets a persistent one with the same matching and progress rules, and the
 * engine needs nothing new.  All of it is owner-only: the thread that started the request
 * completes it (MPI forbids two threads waiting on one request). */
#ifndef TMPI_LIBCLIENT_PERSIST_H
#define TMPI_LIBCLIENT_PERSIST_H

#include <stddef.h>

#include "mpi.h"
#include "request.h"

struct tm_rank;

/* Issues the operation with the arguments a *_init call stored (the request's own copy, which
 * it may update: a persistent collective counts its starts there); an MPI error code. */
typedef int (*tm_pstart_fn)(void *args, MPI_Request *inner);

/* A new inactive persistent request whose MPI_Start calls start with a copy of args (size
 * bytes; pointers in it must stay valid for the request's life, as MPI requires of buffers).
 * fn names the MPI call for errors.  MPI_SUCCESS or the error handler's answer. */
int tm_preq_new(struct tm_rank *me, const char *fn, MPI_Comm comm, tm_pstart_fn start,
                const void *args, size_t size, MPI_Request *request);

/* Called with the request's args when a PERSIST request is freed (MPI_Request_free). */
typedef void (*tm_pfree_fn)(void *args);
/* Sets the free callback of PERSIST request r (from tm_preq_new). */
void tm_preq_on_free(struct tm_request *r, tm_pfree_fn fn);

/* A PERSIST request that is not started. */
int tm_preq_inactive(const struct tm_request *r);

/* Wait/Test of a complete compound request of kind PERSIST or PAIR: fills status, releases
 * what the operation used; a PERSIST request becomes inactive (stays *rp), a PAIR is freed
 * (*rp = MPI_REQUEST_NULL).  Returns the operation's error code (0: success). */
int tm_preq_finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status);
/* Status of a complete compound request without releasing it (MPI_Request_get_status). */
void tm_preq_status(struct tm_request *r, MPI_Status *status);
/* MPI_Request_free of a PERSIST or PAIR request, active or not. */
void tm_preq_free(struct tm_rank *me, struct tm_request *r);
/* MPI_Cancel of a PERSIST or PAIR request (its active operations). */
void tm_preq_cancel(struct tm_rank *me, struct tm_request *r);

/* The engine's cancels (reqapi.c), for inner requests too. */
void tm_req_cancel_op(struct tm_rank *me, struct tm_request *r);

#endif
