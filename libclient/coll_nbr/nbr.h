/* nbr.h — neighbourhood collectives (MPI 3.1 §7.6, MPI 4.0 §8.6-8.8) over point-to-point.
 *
 * Each member posts one receive per source and one send per destination of its topology
 * (tm_topo_neighbors) when the operation starts, all on the communicator's neighbourhood
 * context TM_CTX_NBR(ctx), which no program message and no other libtmpi protocol uses.  The
 * request (kind TM_REQ_MULTI) is complete when all of them are.  So the blocking form is the
 * non-blocking one plus a wait, and the non-blocking form needs no progress from its caller:
 * the point-to-point engine completes the messages (a send that finds its receive posted
 * copies into it; a receive posted later copies from the waiting rendezvous; across nodes the
 * receive daemon does it).
 *
 * Matching: messages between two members of one operation are told apart by tag.  Cartesian:
 * block s of the sender (s = 2d for the -1 neighbour of dimension d, 2d + 1 for the +1 one) is
 * sent with tag s and lands in block s ^ 1 of the receiver, so a periodic dimension of size 1
 * or 2, where both neighbours are the same process, still pairs the right blocks (MPI 4.0
 * §8.6, the errata of MPI 3.1).  Graph and distributed graph: one tag; the k-th edge from a
 * process matches the k-th edge to it (posting order).  Successive operations on a
 * communicator match in order because every member starts them in the same order and
 * point-to-point does not overtake.  MPI_PROC_NULL neighbours (Cartesian edges) get nothing
 * sent and leave their receive block untouched. */
#ifndef TMPI_LIBCLIENT_NBR_H
#define TMPI_LIBCLIENT_NBR_H

#include "ctx.h"
#include "mpi.h"
#include "request.h"

struct tm_rank;

/* The context of a communicator's neighbourhood traffic: above every communicator id (ctx.h
 * keeps those below TM_CTX_LIMIT) and apart from the negative derived ones (coll_net, cp2p). */
#define TM_CTX_NBR(ctx) ((ctx) + TM_CTX_LIMIT)

/* The block layouts of the operations. */
enum tm_nbr_op {
    TM_NBR_ALLGATHER,  /* one send block to every destination; receive block i at i * rcount */
    TM_NBR_ALLGATHERV, /* receive block i: rcounts[i] at rdispls[i] elements */
    TM_NBR_ALLTOALL,   /* send block j at j * scount, receive block i at i * rcount */
    TM_NBR_ALLTOALLV,  /* scounts/sdispls, rcounts/rdispls in elements */
    TM_NBR_ALLTOALLW,  /* counts, byte displacements and a type per block */
};

/* One call's arguments (the fields its op does not use are ignored).  Counts are MPI_Count and
 * displacements MPI_Aint end to end (a _c call passes its own); an int call passes its arrays
 * in the i* fields instead, which the start widens for the call's length: so a persistent
 * int call still reads the program's arrays at each start. */
struct tm_nbr_args {
    enum tm_nbr_op op;
    const void *sbuf;
    MPI_Count scount;
    const MPI_Count *scounts;
    const MPI_Aint *sdispls; /* elements (v) or bytes (w) */
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    void *rbuf;
    MPI_Count rcount;
    const MPI_Count *rcounts;
    const MPI_Aint *rdispls;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
    MPI_Comm comm;
    /* an int call's arrays (NULL: the wide ones above are the arguments) */
    const int *iscounts, *isdispls, *ircounts, *irdispls;
};

/* Checks the arguments and starts the operation: non-blocking, *request is its request (kind
 * TM_REQ_MULTI); else it completes before returning.  fn names the MPI call in errors.
 * MPI_SUCCESS or the error handler's answer. */
int tm_nbr_run(struct tm_rank *me, const char *fn, const struct tm_nbr_args *a, int nonblocking,
               MPI_Request *request);

/* The request layer's hooks for TM_REQ_MULTI (reqapi.c, persist.c).  done: whether every
 * message is complete (then the request's st_error holds the first failure);
 * finish: status and the operation's error (an MPI class), then the request is freed; free:
 * frees it, active or not (messages still pending complete on their own, request.c orphans). */
int tm_nbr_done(struct tm_request *r);
int tm_nbr_finish(struct tm_rank *me, struct tm_request *r, MPI_Status *status);
/* The status of a complete operation, the request kept (MPI_Request_get_status). */
void tm_nbr_status(struct tm_request *r, MPI_Status *status);
void tm_nbr_free(struct tm_rank *me, struct tm_request *r);

#endif
