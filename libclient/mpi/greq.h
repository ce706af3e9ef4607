/* greq.h — generalized requests (MPI 3.1 §12.2): operations the program completes itself.
 *
 * The request is of kind TM_REQ_GREQ, allocated on the heap (not from the rank's pool:
 * MPI_Grequest_complete may run on any thread, and the last of "complete" and "freed" releases
 * it).  done is published by MPI_Grequest_complete (seq_cst, then a wake of the owner, wait.h),
 * so Wait/Test treat it like any other request; at completion they call the query function for
 * the status and then the free function (§12.2: query_fn once per Wait/Test that completes,
 * free_fn once, after query_fn). */
#ifndef TMPI_LIBCLIENT_GREQ_H
#define TMPI_LIBCLIENT_GREQ_H

#include "mpi.h"

struct tm_rank;
struct tm_request;

/* Wait/Test of a complete generalized request: query_fn fills the status, free_fn runs, the
 * request is freed (*rp = MPI_REQUEST_NULL).  Returns the error query_fn or free_fn gave. */
int tm_greq_finish(struct tm_rank *me, MPI_Request *rp, MPI_Status *status);
/* MPI_Request_get_status of a complete one: query_fn only. */
int tm_greq_status(struct tm_rank *me, struct tm_request *r, MPI_Status *status);
/* MPI_Request_free: free_fn runs now if complete, else when MPI_Grequest_complete is called. */
void tm_greq_free(struct tm_rank *me, struct tm_request *r);
/* MPI_Cancel: cancel_fn(extra_state, complete?). */
int tm_greq_cancel(struct tm_rank *me, struct tm_request *r);

#endif
