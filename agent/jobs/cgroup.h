/* cgroup.h — a cgroup of its own for every job host: accounting, limits, OOM reporting.
 *
 * Which kind the agent uses is decided once at start (cgroup_setup) and logged with why:
 *   systemd  systemd is PID 1 and the agent is root: each host goes into a transient scope,
 *            StartTransientUnit over the system bus (sd-bus); systemd removes the scope when
 *            it empties.  A service user (User=tmpi) gets no transient units from the system
 *            manager: with Delegate=yes its own cgroup is its to manage, as v2 below;
 *   v2       the unified hierarchy offers the memory or cpu controller: the agent manages
 *            OWN/tmpid/PID/job.ID under its own cgroup OWN (PID: the agent's);
 *   v1       the v1 memory / cpu / pids hierarchies are mounted: the same subtree in each
 *            (cpu only for a job with a CPU limit: there a cgroup would only change its weight);
 *   none     none of these can be used (e.g. a private agent, which is not root): jobs run
 *            without a cgroup of their own and limits are refused at submission.
 * The agent writes the host's pid into its cgroup right after posix_spawn, before it sends
 * the host its job: the host reads nothing and runs no user code until then, so no rank ever
 * runs outside the cgroup.  After the host is reaped its cgroup is removed.
 *
 * Loop thread only (the agent's); nothing here runs in a job host. */
#ifndef TMPI_AGENT_CGROUP_H
#define TMPI_AGENT_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct agent_config;

/* Limits of one job; 0: none. */
struct cgroup_limits {
    uint64_t mem_max;   /* bytes of memory (swap not allowed beyond it) */
    uint32_t cpu_milli; /* thousandths of a CPU of run time per wall-clock second */
};

struct cgroup_job;

/* Decides the kind (see above), prepares the agent's subtree and logs the choice.  Always
 * succeeds: at worst the kind is none. */
void cgroup_setup(void);

/* Removes the agent's subtree (every job's cgroup is gone by then). */
void cgroup_teardown(void);

/* "systemd", "v2", "v1" or "none". */
const char *cgroup_kind_name(void);

/* The limits a submission gets: the user's where given (they may only lower the agent's
 * job_memory_max / job_cpu_max), else the agent's.  0, or -EINVAL / -ENOTSUP with the reason
 * in err (above the agent's limit; limits asked but no cgroup to enforce them). */
int cgroup_limits_resolve(const struct agent_config *cfg, uint64_t mem_asked, uint32_t cpu_asked,
                          struct cgroup_limits *ret, char *err, size_t errlen);

/* Puts pid (a job host not yet running user code) into a new cgroup for job job_id with lim.
 * *ret is NULL when the kind is none.  0 or a negative errno with the reason in err. */
int cgroup_job_new(uint64_t job_id, pid_t pid, const struct cgroup_limits *lim,
                   struct cgroup_job **ret, char *err, size_t errlen);

/* What the kernel's OOM killer did to the processes of a job (its cgroup's oom_kill count:
 * v1 memory.oom_control, v2 memory.events).  The count is kept in the cgroup of the process
 * killed, whichever cgroup ran out: the job's own limit (v2: the cgroup's "oom" event; v1: its
 * usage's high-water mark reached the limit) or memory around it, the node or a cgroup the
 * agent runs in. */
enum cgroup_oom {
    CGROUP_OOM_NONE,  /* none, or nothing to tell (no cgroup, no counters) */
    CGROUP_OOM_LIMIT, /* it killed one for exceeding the job's memory limit */
    CGROUP_OOM_NODE,  /* it killed one when the memory around the job ran out */
};
enum cgroup_oom cgroup_job_oom(const struct cgroup_job *cg);

/* Bytes of memory the job's cgroup uses now (0 when unknown). */
uint64_t cgroup_job_mem_used(const struct cgroup_job *cg);

/* Removes the job's cgroup (its processes are reaped) and frees cg.  NULL: nothing. */
void cgroup_job_free(struct cgroup_job *cg);

#endif
