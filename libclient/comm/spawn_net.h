/* spawn_net.h — MPI_Comm_spawn in a job across nodes: the records of a spawn on each node and
 * the requests between the job's hosts (message type TM_MSG_DYN on the job's links).
 *
 * The universe of a job across nodes is its world plus the spawn slots of each node, world
 * ranks world_size on filling node 0's slots, then node 1's ... (agent/jobs/job_spawn.h), so
 * the node of every rank a spawn may start is known to every host from the start.  A spawn:
 *  1. the root reserves its world ranks, the next ones of the universe, from the counter of
 *     node 0's host (RESERVE, answered by node 0's receive daemon; node 0 takes its own);
 *  2. it allocates the ids of the children's MPI_COMM_WORLD and of the parent/child
 *     inter-communicator (spanning ids need no agreement, ctx.h) and records the spawn;
 *  3. it asks every other node that holds children to start them (SPAWN: the commands, the
 *     ranks, the ids and the parents' world ranks), then starts its own.  A node serves a
 *     SPAWN on a thread of libtmpi's own (loading programs takes time a receive daemon must
 *     not spend): it records the spawn the same way, points its children at it and has its
 *     agent start them (svc spawn), then answers with the outcome and a reason.
 * A request waits for its answer without a deadline of its own: a node that dies fails the
 * job (its links end), which ends the wait.
 *
 * Frames (msg_hdr.h TM_MSG_DYN): tag the kind below, cookie the asker's call id, msg_len the
 * value (RESERVE: ranks asked; RESERVE_ANS: the first, or -1 when fewer are left; SPAWN_ANS:
 * 0 or a negative errno), payload SPAWN's request (at most TM_SPAWN_MSG_MAX bytes) or
 * SPAWN_ANS's reason text (at most TM_SPAWN_WHY_MAX - 1 bytes). */
#ifndef TMPI_LIBCLIENT_SPAWN_NET_H
#define TMPI_LIBCLIENT_SPAWN_NET_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "svc.h"

/* The largest SPAWN request (commands, arguments, directories, the parents' ranks). */
#define TM_SPAWN_MSG_MAX (1u << 20)
/* The longest reason a node gives back, with its NUL. */
#define TM_SPAWN_WHY_MAX 256

enum tm_dyn_kind {
    TM_DYN_RESERVE = 1,
    TM_DYN_RESERVE_ANS = 2,
    TM_DYN_SPAWN = 3,
    TM_DYN_SPAWN_ANS = 4,
};

/* One spawn as a node records it (owned by the job's list, freed at its end). */
struct tm_spawn_rec {
    struct tm_spawn_rec *next;
    int first, n;          /* the children's world ranks */
    struct tm_comm *world; /* their MPI_COMM_WORLD (this node's copy) */
    int32_t ctx[3];        /* the parent/child inter-communicator's ids (intercomm.h) */
    int32_t *pmap;         /* the parents' world ranks, pn of them */
    int pn;
};

/* What a node needs to start its ranks of a spawn. */
struct tm_spawn_req {
    const struct tmpi_spawn_app *apps;
    int napps;
    int first, n;   /* the whole spawn's world ranks */
    int32_t wctx;   /* the children's MPI_COMM_WORLD id */
    int32_t ctx[3]; /* the inter-communicator's */
    const int32_t *pmap;
    int pn;
};

/* Records rq on this node (a copy of the parents' ranks, the children's world) and points the
 * node's children at it.  0 or -ENOMEM. */
int tm_spawn_rec_add(struct tm_job *j, const struct tm_spawn_req *rq, int wreuse);
/* The job's spawn records, at its end. */
void tm_spawn_recs_free(struct tm_job *j);

/* Reserves n world ranks of the universe: the first, or -1 when fewer are left (node 0's
 * counter for a job across nodes).  A rank thread; waits for node 0's answer. */
int tm_spawn_reserve(struct tm_rank *me, int n);
/* Has node (not me's) start its ranks of rq; waits for the answer.  0, or a negative errno
 * with the node's reason in why. */
int tm_spawn_remote(struct tm_rank *me, int node, const struct tm_spawn_req *rq, char *why,
                    size_t len);

/* The TM_MSG_DYN handlers of a job across nodes (mpi/job_life.c, before its links deliver).
 * 0 or a negative errno. */
int tm_spawn_net_register(struct tm_job *j);

#endif
