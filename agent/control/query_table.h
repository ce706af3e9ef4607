/* query_table.h — tmpictl's control queries, one row each (the table is in control.c).
 *
 * A row says which message asks (and, where one message asks two things, which of its
 * spellings), who may ask, where the answer comes from and how the answers of several nodes
 * become one.  control.c's dispatcher reads the row: it checks the permission (and, for a
 * query about one job, finds the job and its owner, or says why not) before the row's answer
 * function runs, so that function only gathers and replies.  Queries answered by more than
 * this agent go through the one fan-out engine (fanout.h, [mesh] query_timeout_ms): the
 * peers through cluster.h, a job's nodes through job_ranks.h.  docs/ARCHITECTURE.md "Adding
 * a tmpictl query" has a worked example.  Loop thread only. */
#ifndef TMPI_AGENT_QUERY_TABLE_H
#define TMPI_AGENT_QUERY_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"

struct conn;
struct coord;
struct job;

/* Who may ask. */
enum query_perm {
    /* anyone who may open the socket; what the answer shows is the caller's (other users'
     * jobs and the agent's counters only for an administrator: root or the agent's user) */
    QUERY_ANYONE,
    /* the owner of the job the query names, or an administrator (as who may cancel it) */
    QUERY_JOB_OWNER,
    /* anyone about a configured peer ([mesh] peers), an administrator about any address: the
     * agent connecting where it is told would otherwise be a port scanner */
    QUERY_PEER_OR_ADMIN,
};

/* Where the answer comes from. */
enum query_where {
    QUERY_HERE,      /* this agent, at once */
    QUERY_MESH,      /* every configured peer and this agent (cluster.h) */
    QUERY_JOB_PARTS, /* every node of the job: its host, or the members through the coordinator */
    QUERY_PEER,      /* the one peer named */
};

/* How the answers of several nodes become one reply. */
enum query_merge {
    QUERY_ONE,     /* one answer: nothing to merge */
    QUERY_NODES,   /* one entry per node, this agent first (NodesReply) */
    QUERY_JOBS,    /* one entry per job id, its parts' ranks added, its nodes listed */
    QUERY_BY_RANK, /* one entry per rank, from the node that runs it (RanksReply) */
};

/* The job a QUERY_JOB_OWNER row asks about, found and checked by the dispatcher. */
struct query_job {
    uint64_t id;         /* the whole job's id (what its launcher shows) */
    struct job *job;     /* a job of this agent alone, or NULL */
    struct coord *coord; /* or the job across nodes this agent coordinates */
};

struct query_row {
    Tmpi__Envelope__MsgCase msg;
    /* when one message asks two queries (JobsRequest.all): this row's spelling; NULL: all */
    int (*matches)(const Tmpi__Envelope *env);
    const char *command; /* tmpictl's */
    enum query_perm perm;
    enum query_where where;
    enum query_merge merge;
    /* QUERY_JOB_OWNER: the job the request names */
    uint64_t (*job_of)(const Tmpi__Envelope *env);
    /* QUERY_PEER_OR_ADMIN: the address the request names, and how a refusal is told (NULL:
     * an Error frame) */
    const char *(*peer_of)(const Tmpi__Envelope *env);
    void (*refuse)(struct conn *c, const char *msg);
    /* Gathers and replies (now, or when the fan-out is done).  job: for QUERY_JOB_OWNER rows,
     * else NULL. */
    void (*answer)(struct conn *c, const struct query_row *row, const Tmpi__Envelope *env,
                   const struct query_job *job);
};

/* The row of env, NULL when env is no query (a job's own stream, or unknown). */
const struct query_row *query_row_of(const Tmpi__Envelope *env);
/* Every row, in tmpictl's order (*ret_n of them). */
const struct query_row *query_table_rows(size_t *ret_n);

#endif
