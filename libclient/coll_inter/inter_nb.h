/* inter_nb.h — non-blocking collectives on inter-communicators: each is a short schedule of
 * steps over the same two hidden handles as the blocking forms (coll_inter.h), every step a
 * set of non-blocking operations the existing engines complete on their own: point-to-point
 * on the hidden inter-communicator and non-blocking collectives of the hidden local
 * intra-communicator (coll_nb.c on one node, the group runners of coll_net_nb.c across nodes).
 *
 * The start call posts the first step and returns.  A later step waits for the one before it
 * (the group's first member forwards what it received, say); the rank takes it in its own MPI
 * calls that MPI says make progress: MPI_Wait/Test and their any/all/some forms,
 * MPI_Request_get_status, blocking point-to-point (the rank's progress hook, wait.h).  Steps
 * that only other ranks' operations complete (a receive, a local collective) need nothing from
 * the rank.
 *
 * Order.  The k-th non-blocking collective on an inter-communicator is the same operation on
 * every member of both groups (MPI 3.1 §5.12), so its messages carry a tag of its own: they
 * match whatever order the steps of several outstanding ones are taken in.  Local-group
 * collectives must be started in the same order on every member of the group: each schedule
 * reserves its slots when it starts and issues them in reservation order (a slot waits for the
 * slots before it), so a later operation whose step is ready first cannot overtake.
 *
 * The request is an ordinary collective request (TM_REQ_COLL): done when the last step is,
 * with the first failure as its error, so Wait/Test, Request_free and persistent requests treat
 * it like any other. */
#ifndef TMPI_LIBCLIENT_INTER_NB_H
#define TMPI_LIBCLIENT_INTER_NB_H

#include "mpi.h"

struct tm_rank;
struct tm_commref;
struct tm_request;
struct tm_isched;

/* What a step function returns. */
enum tm_is_state {
    TM_IS_MORE,  /* posted a step (maybe nothing): call again when it is complete */
    TM_IS_DONE,  /* every step is complete: finish */
    TM_IS_WAIT_L /* its next local collective waits for an earlier reservation */
};

/* One operation's steps: posts step s->step (and advances it), reading the operation's own
 * state (tm_isched_op). */
typedef enum tm_is_state (*tm_is_step_fn)(struct tm_isched *s);
/* Runs once when every step is complete, before the request is: err is the first failure
 * (an MPI class, 0); returns the class the request ends with.  Frees the operation's state.
 * err TM_IS_ABANDON: the job ends with the operation outstanding; free only (the program's
 * memory may be gone). */
#define TM_IS_ABANDON (-1)
typedef int (*tm_is_fin_fn)(struct tm_isched *s, int err);

/* The hidden handles and this member's place, for the step functions. */
struct tm_is_where {
    MPI_Comm I, L; /* hidden inter-communicator, hidden local intra-communicator */
    int r, n, rn;  /* rank in the local group, local and remote group sizes */
    int tag;       /* this operation's tag on I */
    struct tm_rank *me;
};

/* Starts a schedule of nl local collectives on inter-communicator cr (handle comm): op is the
 * operation's state (freed by fin), step posts its steps.  The first step is posted before it
 * returns.  *request: the request.  MPI_SUCCESS or MPI_ERR_NO_MEM (nothing started; fin has
 * run). */
int tm_isched_start(struct tm_rank *me, struct tm_commref *cr, MPI_Comm comm, int nl, void *op,
                    tm_is_step_fn step, tm_is_fin_fn fin, MPI_Request *request);

/* For step functions: */
const struct tm_is_where *tm_isched_where(const struct tm_isched *s);
void *tm_isched_op(const struct tm_isched *s);
int *tm_isched_stepno(struct tm_isched *s);
/* Adds a started operation (its PMPI_I* result e and request q) to the current step. */
void tm_isched_add(struct tm_isched *s, int e, MPI_Request q);
/* Records a failure (an MPI class) without an operation. */
void tm_isched_fail(struct tm_isched *s, int e);
/* Whether the schedule's next local collective may be issued now; then tm_isched_lbegin
 * right before issuing it, and after it (with tm_isched_add) tm_isched_lnext. */
int tm_isched_lturn(const struct tm_isched *s);
void tm_isched_lbegin(struct tm_isched *s);
void tm_isched_lnext(struct tm_isched *s);

#endif
