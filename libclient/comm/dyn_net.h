/* dyn_net.h — MPI_Comm_spawn in a job across nodes: the records of a spawn on each node and
 * the requests between the job's hosts (message type TM_MSG_DYN on the job's links).
 *
 * The universe of a job across nodes is its world plus the spawn slots of each node, world
 * ranks world_size on filling node 0's slots, then node 1's ... (agent/jobs/job_spawn.h), so
 * the node of every rank a spawn may start is known to every host from the start.  A spawn:
 *  1. the root reserves its world ranks, the next ones of the universe, from the counter of
 *     node 0's host (RESERVE, answered by node 0's receive daemon; node 0 takes its own): a
 *     row for the whole spawn, or one per run of commands that name one host (info key host
 *     of spawn_multiple), each on its host's node;
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
 * The same requests carry MPI_Publish/Unpublish/Lookup_name to node 0's table of names and a
 * connect to the node of its port (dyn_tab.h).
 *
 * Frames (msg_hdr.h TM_MSG_DYN): tag the kind below, cookie the asker's call id, msg_len the
 * value (RESERVE: ranks asked, payload the node asked for if any; RESERVE_ANS: the first, or -1
 * when fewer are left; SPAWN_ANS: 0 or a negative errno), payload SPAWN's request (at most
 * TM_SPAWN_MSG_MAX bytes) or SPAWN_ANS's reason text (at most TM_SPAWN_WHY_MAX - 1 bytes). */
#ifndef TMPI_LIBCLIENT_DYN_NET_H
#define TMPI_LIBCLIENT_DYN_NET_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"
#include "mpi.h"
#include "svc.h"

/* The largest SPAWN request (commands, arguments, directories, the parents' ranks). */
#define TM_SPAWN_MSG_MAX (1u << 20)
/* The longest reason a node gives back, with its NUL. */
#define TM_SPAWN_WHY_MAX 256

/* How long a spawn that finds no room waits for spawned ranks that hold slots to finalize
 * and give them back (tm_spawn_reserve), and how often a node other than node 0, which keeps
 * the reservations, asks again meanwhile. */
#define TM_SPAWN_SLOT_WAIT_MS 10000
#define TM_SPAWN_SLOT_RETRY_MS 20

/* The longest NAME request: a service name and a port name, each with its NUL. */
#define TM_DYN_NAME_MAX (MPI_MAX_INFO_VAL + MPI_MAX_PORT_NAME + 2)

enum tm_dyn_kind {
    TM_DYN_RESERVE = 1,
    TM_DYN_RESERVE_ANS = 2,
    TM_DYN_SPAWN = 3,
    TM_DYN_SPAWN_ANS = 4,
    TM_DYN_NAME = 5,           /* msg_len the operation (dyn_tab.h tm_name_op), payload
                                * "service\0port\0", to node 0 */
    TM_DYN_NAME_ANS = 6,       /* msg_len 0 or a negative errno; a lookup's port as payload */
    TM_DYN_CONNECT = 7,        /* payload "port\0" and the connecting group's world ranks, to the
                                * port's node, answered when an accept takes it */
    TM_DYN_CONNECT_ANS = 8,    /* msg_len 0, an MPI error class, or a negative errno (-ENOENT:
                                * no such port; -EBUSY: TM_CONNECT_PENDING_MAX connects wait
                                * there; -ETIMEDOUT: dropped at the asker's CANCEL); payload the
                                * inter-communicator's 3 ids and the accepting group's world
                                * ranks */
    TM_DYN_CONNECT_CANCEL = 9, /* no payload, cookie the CONNECT's call: its asker's deadline
                                * passed; a connect still queued is dropped and answered
                                * -ETIMEDOUT, one an acceptor took is answered by it */
    TM_DYN_SPAWN_GO = 10,      /* msg_len a spawn's first rank, cookie 1 its ranks here run, 0
                                * they end unrun (another node failed its share); no answer */
    TM_DYN_RELEASE = 11,       /* msg_len the first of cookie world ranks, to node 0: free for
                                * later spawns (spawned ranks that finalized, a failed spawn's);
                                * no answer */
    TM_DYN_HOST = 12,          /* payload a host name with its NUL: does the node answer to it
                                * (svc host_nodes there: its agent's name, its machine's) */
    TM_DYN_HOST_ANS = 13,      /* msg_len 1 it does, 0 it does not */
};

struct tm_conn_req;

/* One spawn as a node records it (owned by the job's list, freed at its end). */
struct tm_spawn_rec {
    struct tm_spawn_rec *next;
    int first, n;          /* the spawn's name (its first child's world rank), its children */
    struct tm_comm *world; /* their MPI_COMM_WORLD (this node's copy): their world ranks */
    int32_t ctx[3];        /* the parent/child inter-communicator's ids (intercomm.h) */
    int32_t *pmap;         /* the parents' world ranks, pn of them */
    int pn;
};

/* What a node needs to start its ranks of a spawn. */
struct tm_spawn_req {
    const struct tmpi_spawn_app *apps; /* each command with its world ranks (first) */
    int napps;
    int first, n;   /* the spawn's name (apps[0].first) and its ranks over every command */
    int32_t wctx;   /* the children's MPI_COMM_WORLD id */
    int32_t ctx[3]; /* the inter-communicator's */
    const int32_t *pmap;
    int pn;
};

/* Records rq on this node (a copy of the parents' ranks, the children's world) and points the
 * node's children at it.  0 or -ENOMEM. */
int tm_spawn_rec_add(struct tm_job *j, const struct tm_spawn_req *rq, int wreuse);
/* The job's spawn records, ports and names (dyn_tab.h), at its end. */
void tm_spawn_recs_free(struct tm_job *j);

/* Reserves n world ranks in a row of the universe, all on node (>= 0, the info key host) or
 * anywhere (-1): the first, or -1 when there is no such row left (node 0 keeps the job's
 * reservations).  A rank thread; waits for node 0's answer, and while the row is held by
 * spawned ranks that may still finalize, for them, at most TM_SPAWN_SLOT_WAIT_MS. */
int tm_spawn_reserve(struct tm_rank *me, int n, int node);
/* Gives world ranks first .. first+n-1 back to the universe: a spawned rank whose last MPI
 * model closed (MPI_Finalize) its own, so that a program that spawns again and again does not
 * run out of slots; the root of a spawn that failed all of them.  Node 0 keeps the
 * reservations: another node tells it.  A rank thread; 0 or a negative errno (the slots then
 * stay taken). */
int tm_spawn_release(struct tm_rank *me, int first, int n);
/* Has node (not me's) start its ranks of rq; waits for the answer.  0, or a negative errno
 * with the node's reason in why. */
int tm_spawn_remote(struct tm_rank *me, int node, const struct tm_spawn_req *rq, char *why,
                    size_t len);
/* Tells node (not me's), whose share of the spawn from world rank first started, whether those
 * ranks run (go) or end unrun (svc spawn_gate there).  0 or a negative errno. */
int tm_spawn_remote_gate(struct tm_rank *me, int node, int first, int go);

/* The longest host name TM_DYN_HOST asks about, with its NUL. */
#define TM_DYN_HOST_MAX (MPI_MAX_INFO_VAL + 1)

/* The nodes other than me's that answer to host as their own name (MPI_Comm_spawn's info key
 * host: another node's agent name, which this node's host file does not know), ascending, the
 * first cap into out: how many, or a negative errno when a node cannot be asked.  A rank
 * thread; asks each node in turn and waits for its answer. */
int tm_dyn_host_nodes(struct tm_rank *me, const char *host, int *out, int cap);

/* A name operation (dyn_tab.h) on the job's table: node 0's, asked from the other nodes.
 * Results as tm_names_op_here, or -EPIPE and the like when node 0 cannot be reached. */
int tm_dyn_name(struct tm_rank *me, int op, const char *service, const char *port, char *out,
                size_t cap);
/* A connect of the group cmap[0..cn) to port, open on node (not me's); waits for the accept,
 * at most ms milliseconds (< 0: no deadline) before it asks node to drop it.  0 with the
 * inter-communicator's ids and the accepting group (*ret_amap, malloc'd), an MPI error class
 * the acceptor gave, or a negative errno (-ENOENT: no such port there; -EBUSY: too many
 * connects wait there; -ETIMEDOUT: nobody accepted in time). */
int tm_dyn_connect(struct tm_rank *me, int node, const char *port, const int32_t *cmap, int cn,
                   int64_t ms, int32_t ctx[3], int32_t **ret_amap, int *ret_an);
/* The acceptor's answer to a connect from another node (r->remote): sends it and frees r and
 * its amap. */
void tm_dyn_connect_answer(struct tm_job *j, struct tm_conn_req *r);

/* The job's end, before its links' state and ranks go: joins the threads serving SPAWNs
 * (their svc spawn returns once the agent's job thread stops serving, job_spawn.h). */
void tm_dyn_stop(struct tm_job *j);

/* The TM_MSG_DYN handlers of a job across nodes (mpi/job_life.c, before its links deliver).
 * 0 or a negative errno. */
int tm_spawn_net_register(struct tm_job *j);

#endif
