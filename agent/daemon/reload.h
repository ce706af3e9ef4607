/* reload.h — SIGHUP / `systemctl reload tmpid`: read the configuration again and apply what
 * can change while jobs run (tmpid(8), RELOADING). */
#ifndef TMPI_AGENT_RELOAD_H
#define TMPI_AGENT_RELOAD_H

struct agent; /* jobs/agent.h, with agent_configure_fn */

/* Loop thread.  Builds a new configuration with the registered function; a bad one changes
 * nothing (logged with its reason).  Otherwise applies each setting the running agent can take
 * (see the table in reload.c), leaves job settings to the jobs started from now (each job host
 * reads the file when it starts), and logs each changed setting that needs a restart.
 * 0, or -EINVAL when the new configuration was refused. */
int agent_reload(struct agent *a);

#endif
