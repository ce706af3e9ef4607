/* job_id.h — job ids that name a job the same way on every node and stay unique in the
 * cluster without a round of agreement.
 *
 * An id is NODE * JOB_ID_NODE_FACTOR + SEQ: NODE is the node number of the agent that starts
 * (coordinates) the job ([mesh] node_number, 0 .. CONFIG_NODE_NUMBER_MAX), SEQ that agent's
 * own count of jobs (1 .. JOB_ID_NODE_FACTOR - 1, then from 1 again).  The members of a job
 * across nodes take the coordinator's id (JobAssign.coordinator_job_id), so `tmpictl jobs`
 * shows, and `tmpictl cancel` takes, the same id on every node.  Two agents with the same
 * node number could hand out one id twice: a member that already runs a job of that id
 * refuses the second (job_member.c) and the error names node_number.  Every id stays below
 * 10^15 < 2^53, so even a JSON reader that holds numbers as doubles would keep it; tmpictl
 * --json writes ids as strings all the same. */
#ifndef TMPI_AGENT_JOB_ID_H
#define TMPI_AGENT_JOB_ID_H

#include <stdint.h>

#define JOB_ID_NODE_FACTOR 1000000000ull

/* The node number the agent uses: the configured one, else (CONFIG_NODE_UNSET) one derived
 * from its name when it has a mesh (has_mesh), else 0 (ids 1, 2, 3 ...). */
uint32_t job_id_node_number(uint32_t configured, const char *name, int has_mesh);

/* The next id for a job this agent starts, from its sequence *seq (advanced) and its node
 * number.  Loop thread. */
uint64_t job_id_next(uint64_t *seq, uint32_t node_number);

#endif
