/* allow.h — who may submit jobs to this agent ([agent] allow_users, allow_groups). */
#ifndef TMPI_AGENT_ALLOW_H
#define TMPI_AGENT_ALLOW_H

#include <stddef.h>
#include <sys/types.h>

struct agent_config;

/* 1 when uid (primary group gid, as SO_PEERCRED saw it) may submit: no list is configured,
 * it is root or the agent's own user, its name is in allow_users, or it belongs to a group
 * in allow_groups (primary or supplementary, as the group database says).  0 otherwise, with
 * the reason in err. */
int allow_submit(const struct agent_config *cfg, uid_t uid, gid_t gid, char *err, size_t errlen);

#endif
