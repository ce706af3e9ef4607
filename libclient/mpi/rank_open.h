/* rank_open.h — a rank's MPI life, shared by the world model (MPI_Init/MPI_Finalize, init.c)
 * and the sessions model (MPI_Session_init/_finalize, session/session.c).
 *
 * The rank's libtmpi state (its communicator table with the hidden MPI_COMM_WORLD, its object
 * tables, its thread level) is made by the first open and lives until the job ends, so a
 * program may call MPI_Init after a session, open several sessions at once, and open a session
 * after MPI_Finalize (MPI 4.0 §11.2, §11.3), and may use info objects and MPI_T before any
 * (MPI 4.0 §11.4.1). */
#ifndef TMPI_LIBCLIENT_RANK_OPEN_H
#define TMPI_LIBCLIENT_RANK_OPEN_H

struct tm_rank;

enum tm_open {
    TM_OPEN_SESSION = 0, /* one more session */
    TM_OPEN_WORLD = 1,   /* MPI_Init: refused with MPI_ERR_OTHER when it already ran */
    TM_OPEN_NONE = 2,    /* the rank's state only (a call MPI allows before initialization) */
};

/* Opens what for the calling rank; *ret_me is the rank.  required: the thread level asked
 * for; the rank's level only grows (a level above the first open's is given while the rank has
 * no fast boxes, else the rank's stays the provided one).  Any thread of the rank (the job's
 * open_lock).  MPI_SUCCESS or an MPI error class. */
int tm_rank_open(const char *fn, int required, enum tm_open what, struct tm_rank **ret_me);
/* tm_rank_pre (core/lib.h): the calling thread's rank, its state made (TM_OPEN_NONE) if no
 * model opened it yet; NULL when the thread is no rank's.  Registered in tm_lib by init.c. */
/* Closes what tm_rank_open opened; the last close tells the agent the rank is finalized. */
void tm_rank_close(struct tm_rank *me, enum tm_open what);

#endif
