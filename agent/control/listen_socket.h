/* listen_socket.h — the control socket's listening descriptor: handed over by systemd
 * (tmpid.socket, sd_listen_fds) or bound here. */
#ifndef TMPI_AGENT_LISTEN_SOCKET_H
#define TMPI_AGENT_LISTEN_SOCKET_H

/* A non-blocking, close-on-exec Unix stream socket for path (bound; the caller's
 * evconnlistener listens on it; a socket systemd passed listens already).  When systemd passed
 * the agent a Unix stream listener (socket activation), that one is used and *inherited is
 * set: systemd owns its file, so the agent must not remove it.  Otherwise the agent binds path
 * itself (refusing when another agent answers there, removing a stale file first) and makes it
 * connectable by anyone (requests are checked per client with SO_PEERCRED).  Returns the fd
 * or a negative errno (logged). */
int listen_socket_open(const char *path, int *inherited);

#endif
