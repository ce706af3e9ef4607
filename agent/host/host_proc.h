/* host_proc.h — the job host process (tmpid --job-host, jobs/jobhost.h): its state and its
 * entry points.  The process runs one job's ranks on this node; jobhost_main sets it up
 * (identity, environment, runtime), opens its channel to the agent and runs its loop until
 * the job is over.  The agent's side of a job host is jobs/jobhost.h. */
#ifndef TMPI_AGENT_HOST_PROC_H
#define TMPI_AGENT_HOST_PROC_H

#include <stdint.h>

struct agent;
struct bufferevent;
struct event;
struct evbuffer;
struct job;

/* The job host's one job and its channel; set up by jobhost_main, then loop thread only. */
struct host_proc {
    struct agent *a;
    struct job *job;
    struct bufferevent *chan;
    struct event *orphan_timer; /* the agent went away: leave after the kill grace */
    struct event *links_ev;     /* member: JOBHOST_LINKS_FD readable */
    struct event *traffic_ev;   /* member: LinkTraffic every JOBHOST_TRAFFIC_MS */
    uint64_t member_uid;        /* member: the job's uid on every node, else 0 */
    int done;                   /* the job was freed: leave once the channel is flushed */
    struct event *abandon_ev;   /* jobhost_abandon: the job thread cannot finish the job */
    /* Rank 0's stdin: the write end of the pipe that is the process's fd 0 (-1: none or
     * closed), what came from the launcher and is not in the pipe yet (at most the window,
     * msg_check.h), and whether its end came. */
    int stdin_fd;
    struct evbuffer *stdin_buf;
    struct event *stdin_ev;
    int stdin_eof;
};

/* main() of tmpid --job-host ID --job-user UID:GID:PID: a is configured as the agent's
 * config says.  Returns the process exit status. */
int jobhost_main(struct agent *a, const char *id_arg, const char *user_arg);

/* Any thread of a job host: its job sent JobEnd (and JobUnloaded) but cannot be unloaded
 * (job_end_in_unload); the host leaves once its frames left, without unloading. */
void jobhost_abandon(void);

#endif
