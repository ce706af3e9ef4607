/* comm_idup.h — the request layer's hooks for MPI_Comm_idup requests (kind TM_REQ_IDUP,
 * comm_idup.c): reqapi.c and persist.c call them for that kind. */
#ifndef TMPI_LIBCLIENT_COMM_IDUP_H
#define TMPI_LIBCLIENT_COMM_IDUP_H

#include "mpi.h"

struct tm_rank;
struct tm_request;

/* Whether the dup's broadcast is complete (wait.h: seq_cst). */
int tm_idup_done(struct tm_request *r);
/* Completes a done dup: makes the new handle, writes it to the program's newcomm, releases
 * the request (*rp = MPI_REQUEST_NULL) and fills an empty status; returns the error class. */
int tm_idup_finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status);
/* MPI_Request_free: waits for the broadcast and completes as tm_idup_finish. */
void tm_idup_free(struct tm_rank *me, struct tm_request *r);

#endif
