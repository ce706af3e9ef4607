/* reload.h — SIGHUP / `systemctl reload tmpid`: read the configuration again and apply what
 * can change while jobs run (tmpid(8), RELOADING). */
#ifndef TMPI_AGENT_RELOAD_H
#define TMPI_AGENT_RELOAD_H

struct agent;
struct agent_config;

/* How the agent builds its configuration: the same steps as at start (defaults, the file,
 * then the command line over it).  Registered by main; 0 or an exit code (already said on
 * stderr); cfg is freed by the caller either way. */
typedef int (*agent_configure_fn)(void *arg, struct agent_config *cfg);

/* Loop thread.  Builds a new configuration with the registered function; a bad one changes
 * nothing (logged with its reason).  Otherwise applies each setting the running agent can take
 * (see the table in reload.c), leaves job settings to the jobs started from now (each job host
 * reads the file when it starts), and logs each changed setting that needs a restart.
 * 0, or -EINVAL when the new configuration was refused. */
int agent_reload(struct agent *a);

#endif
