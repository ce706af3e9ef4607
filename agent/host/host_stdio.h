/* host_stdio.h — a job host's own standard output and error, and its log.
 *
 * The host's fds 1 and 2 are what a rank's raw write(1, ...) or a program it starts
 * (system("echo X >&2")) writes to.  They are pipes of the host's own, never the agent's
 * stdout, stderr or journal stream: a thread of the host reads them and sends their whole
 * lines to the job's launcher as Output of the node's first rank (the process's bytes cannot
 * be told apart by rank), like a rank's own output.  The host's own log records leave on the
 * channel as HostLog frames, which the agent logs attributed to the job and its user
 * (jobhost.c); nothing the host or its ranks write becomes a raw line of the agent's log. */
#ifndef TMPI_AGENT_HOST_STDIO_H
#define TMPI_AGENT_HOST_STDIO_H

struct bufferevent;
struct job;

/* Once, before the job is read: the pipes on fds 1 and 2 (close-on-exec read ends), and the
 * log sink, which writes HostLog frames straight to the channel fd until host_stdio_channel.
 * 0 or a negative errno. */
int host_stdio_setup(void);

/* The channel's bufferevent once it exists (the sink writes through it from any thread);
 * NULL before it is freed (records are dropped from then on). */
void host_stdio_channel(struct bufferevent *chan);

/* The reader thread, once the job exists.  0 or a negative errno. */
int host_stdio_start(struct job *j);

/* Job thread, before the job's end is sent: what the pipes hold now goes first, unfinished
 * last lines completed with a newline. */
void host_stdio_drain(struct job *j);

/* Before the job is freed: the reader lets go of it and ends. */
void host_stdio_stop(void);

#endif
