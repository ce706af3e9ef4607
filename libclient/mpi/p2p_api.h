/* p2p_api.h — the point-to-point entry points' argument checks, for the other entry points
 * that take point-to-point arguments (persistent requests, Isendrecv: persist.c). */
#ifndef TMPI_LIBCLIENT_P2P_API_H
#define TMPI_LIBCLIENT_P2P_API_H

#include <stddef.h>

#include "mpi.h"

struct tm_type;

struct tm_rank;

/* The checks of MPI_Send (is_recv 0) or MPI_Recv (1): MPI_SUCCESS or the error handler's
 * answer with the class the standard names (fn in the message). */
int tm_p2p_check(struct tm_rank *me, const char *fn, MPI_Comm comm, const void *buf,
                 MPI_Count count, MPI_Datatype dt, int peer, int tag, int is_recv);

/* Bytes a buffer of count elements of dt spans (dt checked valid). */
size_t tm_p2p_bytes(MPI_Count count, MPI_Datatype dt);
/* The layout a request must carry for count elements of dt (request.h dt): NULL when dt moves
 * as plain bytes.  A pooled request that stores it takes a reference (tm_type_hold). */
const struct tm_type *tm_p2p_layout(MPI_Datatype dt);

/* Frees the rank's table of Fortran message handles (mprobe.c; job teardown). */
void tm_msg_tab_free(struct tm_rank *me);

#endif
