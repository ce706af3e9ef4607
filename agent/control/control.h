/* control.h — the local control socket: tools (tmpi-launch, tmpictl) talk to the agent here.
 *
 * A Unix stream socket; each client is identified by SO_PEERCRED.  Frames are decoded on the
 * loop thread; a malformed or oversized frame closes that connection with a logged reason and
 * is counted, never more.  What one client may hold is bounded (connections per user and in
 * total, idle and whole-frame deadlines, unfinished input, unread replies, submission size:
 * docs/RELIABILITY.md); each refusal is counted in tmpictl status and logged. */
#ifndef TMPI_AGENT_CONTROL_H
#define TMPI_AGENT_CONTROL_H

struct agent;

/* Binds and listens on cfg.socket_path (refuses if another agent answers there; removes a
 * stale socket).  0 or a negative errno, logged. */
int control_listen(struct agent *a);

struct conn;
/* Loop thread: the job of this connection is over and about to be freed; the connection
 * (still open until the launcher reads JobEnd and closes it) forgets it. */
void control_forget_job(struct conn *c);

/* Shutting down with no job left: every connection closes once its output (JobEnd frames)
 * is flushed; then the event loop ends. */
void control_drain(struct agent *a);

/* Stops accepting and removes the socket file. */
void control_close(struct agent *a);

/* At exit, with no job left: closes every connection too. */
void control_free_all(struct agent *a);

#endif
