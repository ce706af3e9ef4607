/* allow.h — who may submit jobs to this agent ([agent] allow_users, allow_groups,
 * allow_users_dir).
 *
 * allow_users_dir is the Slurm answer (docs/ADMIN.md, "Only users with an allocation"): a
 * prolog creates DIR/JOBID.USER on every node of an allocation and the epilog removes it, so
 * a user may run ranks on a node exactly while one of their jobs holds it.  Entries are
 * looked at on every submission (no cache to go stale); the directory must belong to root or
 * the agent's user and be writable by nobody else, or it lets nobody in. */
#ifndef TMPI_AGENT_ALLOW_H
#define TMPI_AGENT_ALLOW_H

#include <stddef.h>
#include <sys/types.h>

struct agent_config;

/* 1 when uid (primary group gid, as SO_PEERCRED saw it) may submit: no list or directory is
 * configured, it is root or the agent's own user, its name is in allow_users, it belongs to a
 * group in allow_groups (primary or supplementary, as the group database says), or
 * allow_users_dir holds an entry JOBID.NAME for it.  0 otherwise, with the reason in err. */
int allow_submit(const struct agent_config *cfg, uid_t uid, gid_t gid, char *err, size_t errlen);

#endif
