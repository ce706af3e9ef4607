/* hostfile.h — reading a host file (tmpi-launch --hostfile).
 *
 * One host per line, in any of these forms (keys in any order, separated by blanks):
 *
 *   HOST [slots=N] [max_slots=M] [port=P]     TMPI and Open MPI style
 *   HOST:N [max_slots=M] [port=P]             MPICH style: N slots
 *
 * HOST is a name, an IPv4 address or an IPv6 address in brackets.  '#' starts a comment
 * that runs to the end of the line; blank lines are skipped.  A host without slots has one
 * slot.  max_slots (Open MPI) bounds the host even under --oversubscribe and must be at least
 * slots.  port is the agent's port (default 7470).  A host listed again (same name and port)
 * is merged: slots and max_slots add up.
 *
 * Every malformed line is reported, not only the first, as "FILE:LINE: what is wrong";
 * a file with any error yields no hosts.  Limits: lines of HOSTFILE_MAX_LINE characters,
 * HOSTLIST_MAX_HOSTS hosts, HOSTLIST_MAX_SLOTS slots per host.
 */
#ifndef TMPI_LAUNCHER_HOSTFILE_H
#define TMPI_LAUNCHER_HOSTFILE_H

#include <stdio.h>

#include "errlist.h"
#include "hostlist.h"

#define HOSTFILE_MAX_LINE 4096

/* Read the host file at path into l (which should be empty).  Returns 0; -EINVAL when the file
 * cannot be read, has no hosts or has errors (each in err); -ENOMEM.  On failure l may hold
 * some hosts: free it, do not use it. */
int hostfile_parse(const char *path, struct hostlist *l, struct errlist *err);
/* The same from an open stream; name is used in the messages. */
int hostfile_parse_stream(FILE *f, const char *name, struct hostlist *l, struct errlist *err);

#endif
