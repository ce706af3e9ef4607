/* comm_coll.h — what communicators need of the collectives, which sit above comm/: the
 * collective state of a communicator's shared part (struct tm_coll, core/comm_parts.h), and
 * the rounds the members of a parent run to make a new communicator (MPI_Comm_dup,
 * MPI_Comm_split).
 *
 * Types only.  coll/coll_comm.c fills the table, mpi/init.c registers it in struct tm_lib
 * when libtmpi loads (core/lib.h), before any rank can make a communicator; comm/ calls
 * through tm_lib.comm_coll and so never includes coll/ or coll_net/ (issue 32).  Dup and
 * split are not on a fast path: the indirect call costs nothing there. */
#ifndef TMPI_LIBCLIENT_COMM_COLL_H
#define TMPI_LIBCLIENT_COMM_COLL_H

struct tm_coll;
struct tm_comm;
struct tm_commref;
struct tm_rank;

struct tm_comm_coll {
    /* Sets up co (zeroed, arrive and hier initialised by comm/) for a new shared part: 0 or
     * -ENOMEM.  Any thread. */
    int (*state_init)(struct tm_coll *co);
    /* Frees what the collectives made in co (non-blocking rounds, the node hierarchy, the
     * small Allreduce's result), once the last member released the communicator. */
    void (*state_fini)(struct tm_coll *co);
    /* MPI_Comm_dup of intra-communicator cr, run by every member: *ret is this node's copy of
     * the new communicator (one reference per local member), made once per node.  0, or
     * -ENOMEM on every member of the node. */
    int (*dup)(struct tm_rank *me, struct tm_commref *cr, struct tm_comm **ret);
    /* MPI_Comm_split of intra-communicator cr by (color, key), run by every member: *ret is
     * this node's copy of the member's new communicator (NULL for MPI_UNDEFINED) and
     * *ret_rank its rank there.  0, or -ENOMEM. */
    int (*split)(struct tm_rank *me, struct tm_commref *cr, int color, int key,
                 struct tm_comm **ret, int *ret_rank);
};

#endif
