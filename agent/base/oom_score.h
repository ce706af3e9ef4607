/* oom_score.h — which process the kernel's OOM killer ends when the node runs out of memory.
 *
 * The kernel picks the process with the highest badness: its memory plus oom_score_adj
 * thousandths of the memory it could use.  The agent carries every job on its node, so it
 * lowers its own score (OOM_SCORE_AGENT_DEFAULT, [agent] oom_score_adj; the unit sets the
 * same value with OOMScoreAdjust=) and each job host raises its own
 * (OOM_SCORE_JOB_DEFAULT, [agent] job_oom_score_adj) before it runs user code: a node out of
 * memory then loses the job that holds the memory, never the agent.  Lowering a score needs
 * CAP_SYS_RESOURCE; any process may raise its own, so the host need not inherit the agent's
 * lowered value. */
#ifndef TMPI_AGENT_OOM_SCORE_H
#define TMPI_AGENT_OOM_SCORE_H

/* The kernel's range of oom_score_adj (-1000: never chosen, 1000: chosen first). */
#define OOM_SCORE_ADJ_MIN (-1000)
#define OOM_SCORE_ADJ_MAX 1000

/* -900, not -1000: an agent that itself ran away with the memory may still be ended. */
#define OOM_SCORE_AGENT_DEFAULT (-900)
/* +500: every job host counts as holding half of the memory more than it does, so the kernel
 * ends a job before other processes of the node, and among jobs the largest. */
#define OOM_SCORE_JOB_DEFAULT 500

/* The calling process's oom_score_adj into *ret.  0 or a negative errno. */
int oom_score_get(int *ret);

/* Sets the calling process's oom_score_adj.  0, -EACCES (lowering it without
 * CAP_SYS_RESOURCE) or another negative errno. */
int oom_score_set(int value);

#endif
