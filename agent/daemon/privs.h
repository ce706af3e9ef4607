/* privs.h — what a root agent keeps of root's privileges once it is set up. */
#ifndef TMPI_AGENT_PRIVS_H
#define TMPI_AGENT_PRIVS_H

/* Before the agent starts any thread (capabilities are per thread), after it read its key and
 * config: an agent running as root keeps only CAP_KILL (ending job hosts of other users);
 * job hosts exec'd from it get the bounding set back as root and switch to their user at
 * once (host/host_setup.c).  Nothing to do for an agent that is not root.  0 or -errno. */
int privs_drop(void);

#endif
