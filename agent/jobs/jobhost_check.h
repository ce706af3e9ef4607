/* jobhost_check.h — what a job host may send the agent on its channel, given what it sent so
 * far: the agent's rules for a process that runs as the job's user and may write anything.
 * Pure (the agent's relay in jobhost.c, and tests/fuzz/fuzz_chan.c). */
#ifndef TMPI_AGENT_JOBHOST_CHECK_H
#define TMPI_AGENT_JOBHOST_CHECK_H

#include <stdint.h>

#include "control.pb-c.h"

/* The most links a JobLinked may name: two channels to every other node of the largest job. */
#define JOBHOST_LINKS_MAX (2u * 65536u)

/* What the agent knows of one host's channel. */
struct jobhost_chan_state {
    int member;              /* one node's part of a job across nodes */
    uint64_t uid;            /* member: the job's id on every node */
    uint64_t stdin_inflight; /* stdin bytes passed to the host and not yet acknowledged */
    int got_end;             /* its JobEnd came */
    int got_unloaded;        /* member: its JobUnloaded came */
    uint32_t spawned;        /* live ranks MPI_Comm_spawn started in the host (RanksSpawned) */
};

/* 1 when the host may send env now, 0 when it breaks the protocol (it is then killed).
 * Message types a host never sends (a submission, a status request, ...) are 0. */
int jobhost_chan_ok(const struct jobhost_chan_state *st, const Tmpi__Envelope *env);

/* What the agent does with a frame the host may send, once jobhost_chan_ok said so: updates
 * st.  1 when the frame goes on to the launcher (or the coordinator), 0 when it is the
 * agent's own (link traffic, a single-node job's ranks reply, the host's log). */
int jobhost_chan_take(struct jobhost_chan_state *st, const Tmpi__Envelope *env);

#endif
