/* host_setup.h — the job host's set-up, before its channel opens (host_proc.h): the job read
 * from the channel, the host become the submitter, the process-wide runtime.  Each step
 * returns 0 or the process exit status. */
#ifndef TMPI_AGENT_HOST_SETUP_H
#define TMPI_AGENT_HOST_SETUP_H

#include <stddef.h>
#include <sys/types.h>

#include "control.pb-c.h"

struct agent;
struct host_proc;

/* The job the agent sent on the channel: a single-node job (SubmitJob) or one node's part of a
 * job across nodes (JobAssign), with what is the same either way: identity, directory and
 * environment.  s and ja point into env. */
struct host_order {
    Tmpi__Envelope *env;
    const Tmpi__SubmitJob *s;
    const Tmpi__JobAssign *ja;
    const char *cwd;
    unsigned mask;
    int mask_set;
    size_t n_env;
    Tmpi__EnvVar *const *vars;
};

/* The job cannot start: the reason goes to the launcher in a JobEnd of status 1, or to a
 * member's coordinator as the JobLoaded that says it cannot run here. */
int host_fail_early(const struct host_proc *h, unsigned long long job_id, const char *reason);

/* Set-up 1: reads the job from the channel.  0, or the exit status. */
int host_read_order(struct host_proc *h, unsigned long long job_id, struct host_order *o);

/* Set-up 2: the host becomes the submitter, in the job's directory, umask, stdin and
 * environment.  0, or the exit status (the launcher or coordinator was told why). */
int host_become_submitter(struct host_proc *h, unsigned long long job_id, uid_t uid, gid_t gid,
                          const struct host_order *o);

/* Set-up 3: the process-wide runtime the ranks and libtmpi use: threads for libevent, fault
 * handlers, limits, the program cache, the buffer pool, the service table.  0, or the exit
 * status. */
int host_runtime_init(struct agent *a);

#endif
