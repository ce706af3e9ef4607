/* dyn_tab.h — a job's open ports and published names on one node (MPI 4.1 §11.9, §11.10): the
 * tables behind MPI_Open_port, MPI_Comm_accept/connect (dynproc/port.c) and
 * MPI_Publish/Unpublish/Lookup_name, in the layer that also serves them to the job's other
 * nodes (dyn_net.h).  All under tm_job.spawn_lock.
 *
 * A port lives on the node of the rank that opened it; its name says which node
 * ("tmpi-port:JOB:N:NODE").  The names of a job across nodes are node 0's table: every node
 * asks node 0 (dyn_net.h), so a name published anywhere is seen by every rank of the job,
 * spawned ones included. */
#ifndef TMPI_LIBCLIENT_DYN_TAB_H
#define TMPI_LIBCLIENT_DYN_TAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "job.h"

/* A connect request queued on a port: the connecting root's group, then the acceptor's
 * answer (done set last).  One from another node (remote) is on the heap with its own copy
 * of the group, answered by a frame (dyn_net.h tm_dyn_connect_answer), which frees it. */
struct tm_conn_req {
    struct tm_conn_req *next;
    struct tm_rank *waiter; /* local only */
    const int32_t *cmap;
    int cn;
    int32_t err, ctx[3];
    int32_t *amap; /* malloc'd by the acceptor, freed by the connector */
    int an;
    _Atomic int done;
    int remote;    /* from another node (1) or another job (2, comm/xconn.h): */
    int node;      /* the asker's node, */
    int32_t asker; /* world rank */
    uint64_t id;   /* and call */
    uint64_t xjob; /* another job's: its id */
    int32_t own[]; /* the group's copy (cmap) */
};

struct tm_port {
    struct tm_port *next;
    char name[64];
    struct tm_conn_req *_Atomic head; /* queued connects, oldest first */
    struct tm_conn_req *tail;
    struct tm_rank *acceptor; /* a root waiting in MPI_Comm_accept */
};

struct tm_pubname {
    struct tm_pubname *next;
    char *service, *port;
};

/* spawn_lock held: the open port of that name, or NULL. */
struct tm_port *tm_port_find(struct tm_job *j, const char *name);
/* spawn_lock held: queues r on p and wakes its acceptor. */
void tm_port_enqueue(struct tm_port *p, struct tm_conn_req *r);
/* spawn_lock held: takes r off p's queue (a connect that timed out); 1 if it was there, 0 if
 * an acceptor took it already. */
int tm_port_dequeue(struct tm_port *p, struct tm_conn_req *r);
/* spawn_lock held: the connects queued on every port of the job on this node (at most
 * TM_CONNECT_PENDING_MAX, so the walk is short). */
int tm_port_pending(const struct tm_job *j);
/* The connects that may wait on the job's ports of one node at once: a connect beyond them is
 * refused (MPI_ERR_PORT) at once; `TMPI_CONNECT_PENDING_MAX` changes it. */
#define TM_CONNECT_PENDING_MAX 64
/* The largest value TMPI_CONNECT_PENDING_MAX may have. */
#define TM_CONNECT_PENDING_LIMIT (1 << 20)
/* That limit (the asking rank's environment, else the default), or -1 when
 * TMPI_CONNECT_PENDING_MAX is no number from 0 to TM_CONNECT_PENDING_LIMIT. */
int tm_connect_pending_max(void);
/* The node a port name says it lives on (0 for a name without one), or -1 for a name that is
 * no port of this job. */
int tm_port_node(const struct tm_job *j, const char *name);

enum tm_name_op { TM_NAME_PUBLISH = 1, TM_NAME_UNPUBLISH = 2, TM_NAME_LOOKUP = 3 };
/* The operation on this node's table (lock taken inside): 0, -EEXIST (published already),
 * -ENOENT (no such service, or not with that port), -ENOMEM.  LOOKUP writes the port into
 * out (cap bytes). */
int tm_names_op_here(struct tm_job *j, int op, const char *service, const char *port, char *out,
                     size_t cap);

/* The job's ports and names, at its end. */
void tm_dyn_tabs_free(struct tm_job *j);

#endif
