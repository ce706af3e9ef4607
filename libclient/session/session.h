/* session.h — MPI sessions (MPI 4.0 §11.3): a rank's session handles and their process sets.
 *
 * A session is a handle in the rank's objs table (objs.h `sessions`, handles from
 * TM_SESSION_BASE) holding what MPI_Session_init gave it: the thread level it provides and its
 * error handler.  Opening one opens the rank's MPI state as MPI_Init does
 * (mpi/rank_open.h); communicators made from a session's groups are ordinary communicators of
 * the rank (MPI_Comm_create_from_group), so freeing them is the program's business, as the
 * standard says, and MPI_Session_finalize synchronises with nobody.
 *
 * Process sets are named by the job's layout, nothing is stored: mpi://WORLD (every rank
 * of the job), mpi://SELF, tmpi://node (the ranks on the caller's node) and tmpi://node/<i>
 * (the ranks on the job's node i, 0 <= i < nodes), in that order. */
#ifndef TMPI_LIBCLIENT_SESSION_H
#define TMPI_LIBCLIENT_SESSION_H

#include <stdint.h>

#include "mpi.h"

struct tm_rank;

#define TM_SESSION_BASE 1 /* 0 is MPI_SESSION_NULL */

struct tm_bsbuf;
struct tm_session {
    int thread_level;  /* what MPI_Session_init provided */
    MPI_Errhandler eh; /* the session's handler (objs lock; a reference held) */
    /* the buffer of buffered sends on the communicators made from the session's groups
     * (MPI_Session_attach_buffer, core/bsbuf.h): made with the session, freed with it */
    struct tm_bsbuf *bsb;
};

/* The session of handle h, NULL if h is not one of me's open sessions. */
struct tm_session *tm_session_get(struct tm_rank *me, MPI_Session h);

/* Process sets (pset.c).  Their number for me; the name of the n-th (0-based, NULL when n is
 * out of range) into buf[len]; the world ranks of the set called name (case-insensitive) into
 * *ret (malloc'ed, *ret_n entries): 0, -ENOENT for no such set, -ENOMEM. */
int tm_pset_count(struct tm_rank *me);
int tm_pset_name(struct tm_rank *me, int n, char *buf, int len);
int tm_pset_members(struct tm_rank *me, const char *name, int32_t **ret, int *ret_n);

#endif
