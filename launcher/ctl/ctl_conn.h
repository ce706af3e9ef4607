/* ctl_conn.h — connecting a tool to an agent's control socket.
 *
 * Shared by tmpi-launch and tmpictl: which socket to use (option, TMPI_AGENT, the system
 * default) and opening a stream connection to it.
 */
#ifndef TMPI_LAUNCHER_CTL_CONN_H
#define TMPI_LAUNCHER_CTL_CONN_H

#include <stddef.h>

/* The socket a tool talks to: the --agent value if given, else $TMPI_AGENT if set and
 * non-empty, else TMPI_SYSTEM_SOCKET.  Never NULL. */
const char *ctl_socket_path(const char *option);

/* Connect a blocking, close-on-exec Unix stream socket to path.  Returns the fd, or a negative
 * errno: -ENAMETOOLONG when path does not fit sun_path, -ENOENT / -ECONNREFUSED when no agent
 * listens there. */
int ctl_connect(const char *path);

/* Why connecting to path failed with the negative errno err, for the line after "no agent at
 * PATH: " — or, for a socket the user may not use, a whole sentence saying whose socket it is
 * and what to do.  Writes into buf (size bytes) and returns it. */
const char *ctl_connect_explain(const char *path, int err, char *buf, size_t size);

#endif
