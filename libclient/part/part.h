/* part.h — partitioned point-to-point (MPI 4.0 ch. 4): MPI_Psend_init / MPI_Precv_init,
 * MPI_Pready(_range/_list), MPI_Parrived, and the hooks MPI_Start/Wait/Test/Request_free use.
 *
 * Protocol, over the engine's own messages on a context of its own (TM_CTX_PART), so it
 * reaches ranks on this node (one copy into a posted receive: p2p.h) and on other nodes alike:
 *  - MPI_Precv_init sends the sender a setup message tagged with the program's tag: its
 *    partition count, its size in packed bytes and a channel, a run of receiver-chosen tags
 *    (one per receive partition, above TM_TAG_UB).  MPI_Psend_init posts the receive of that
 *    message.  Messages of one sender with one tag arrive in order and receives match in
 *    posting order, so the k-th Psend_init to (dest, tag) meets the k-th Precv_init from
 *    (source, tag) on the communicator: matching in init order, as the standard says.
 *  - Data moves in the receiver's partitions: message j carries the receiver's partition j,
 *    and the sender sends it as soon as every one of its own partitions that overlaps it is
 *    ready.  So the two sides may partition the buffer differently (MPI 4.1 §4.2).  The
 *    receiver posts all its receives at MPI_Start; a message that comes before is unexpected
 *    and waits in the engine's queues like any other.
 *  - The sender needs the setup before its first message: the first MPI_Pready of the first
 *    round waits for it (the receiver has called, or will call, MPI_Precv_init).
 * Requests are of kind TM_REQ_PART (request.h); an inactive one counts as complete. */
#ifndef TMPI_LIBCLIENT_PART_H
#define TMPI_LIBCLIENT_PART_H

#include "mpi.h"
#include "request.h"

struct tm_rank;

/* The context partitioned traffic of a communicator of context ctx travels on: clear of the
 * ids (below TM_CTX_LIMIT, ctx.h), of the neighbourhood ones (ctx + TM_CTX_LIMIT) and of the
 * negative derived ones. */
#define TM_CTX_PART(ctx) ((ctx) + (1 << 30))
/* Data tags sit above the program's (TM_TAG_UB) and wrap within this many: the partitions of
 * the partitioned receives a rank has open at once must stay below it. */
#define TM_PART_TAGS (1 << 30)

/* Whether r's current round is complete (inactive: yes).  Pure: any thread (wait.h conds). */
int tm_part_done(struct tm_request *r);
/* Whether r is not started. */
int tm_part_inactive(const struct tm_request *r);
/* MPI_Start of a partitioned request (r is of kind TM_REQ_PART): an MPI error code. */
int tm_part_start(struct tm_rank *me, const char *fn, struct tm_request *r);
/* Wait/Test of a complete active or inactive request: fills status, ends the round (the
 * request stays, inactive).  Returns the round's error code (0: success). */
int tm_part_finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status);
/* Status of a complete request without ending its round (MPI_Request_get_status). */
void tm_part_status(struct tm_request *r, MPI_Status *status);
/* MPI_Request_free: MPI_SUCCESS, or MPI_ERR_REQUEST (through the error handler) when the
 * request is active: its round must complete first. */
int tm_part_free(struct tm_rank *me, struct tm_request *r);

#endif
