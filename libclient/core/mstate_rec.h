/* mstate_rec.h — the record behind mstate.h (what a rank is doing in MPI), apart so that job.h
 * can embed it in struct tm_rank. */
#ifndef TMPI_LIBCLIENT_MSTATE_REC_H
#define TMPI_LIBCLIENT_MSTATE_REC_H

#include <pthread.h>
#include <stdint.h>

#include "mpi.h"
#include "svc.h"

struct tm_commref;

struct tm_mstate {
    /* owner half: the rank's own thread only (never a helper's, never under THREAD_MULTIPLE) */
    const char *call; /* the blocking call in progress, NULL: none */
    struct tm_commref *cr;
    MPI_Comm comm;
    int peer, tag; /* as the program gave them; TMPI_PEER_* / TMPI_TAG_NONE */
    int peer_dest; /* peer is the destination of a send (tm_mst_dest) */
    int published; /* the published half describes this call */

    /* published half: lock (any thread; held for a copy, never across a wait) */
    pthread_mutex_t lock;
    struct tmpi_rank_mpi pub;
    int asleep;          /* sleeping in its wait, having read wakes_seen before its last look */
    uint32_t wakes_seen; /* its waker's `wakes` then */
    int ended;           /* MPI_Finalize returned */
    int multiple;        /* MPI_THREAD_MULTIPLE: nothing is published (any thread may act) */
};

#endif
