/* host_ranks.h — the job host's answer to the agent's RanksQuery (tmpictl ranks, the deadlock
 * watch): every local rank's record from libtmpi (svc.h tmpi_client_ops.rank_mpi) and the
 * links' frame counters (job_net.h).  The agent's side, which asks and merges the answers,
 * is jobs/job_ranks.h. */
#ifndef TMPI_AGENT_HOST_RANKS_H
#define TMPI_AGENT_HOST_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "control.pb-c.h"

struct job;

/* Loop thread of the job host: the answer to q, a RanksReply frame in *ret_buf (malloc'd).
 * 0 or -ENOMEM. */
int host_ranks_report(struct job *j, const Tmpi__RanksQuery *q, uint8_t **ret_buf, size_t *ret_len);

#endif
