/* host_channel.h — the job host's channel to the agent (host_proc.h): opened after set-up,
 * read and written by the loop thread until the job is over and its frames left. */
#ifndef TMPI_AGENT_HOST_CHANNEL_H
#define TMPI_AGENT_HOST_CHANNEL_H

#include <event2/util.h>

struct host_proc;

/* The job is over (h->done): once the channel is flushed the loop ends and the host leaves. */
void host_channel_maybe_leave(struct host_proc *h);

/* One link from the agent per message (jobhost_pass_link); once every link is here the
 * coordinator hears JobLinked from us, so no JobGo can come before the links. */
void host_channel_on_links(evutil_socket_t fd, short what, void *arg);

/* A member's data-link counters to the agent now and then, so that its metrics move while
 * the job runs (the last count goes with JobUnloaded). */
void host_channel_on_traffic(evutil_socket_t fd, short what, void *arg);

/* Channel: the event base, the agent's channel as a bufferevent, the orphan and abandon
 * events and rank 0's stdin pump.  0 or -1 (what was made is freed by host_teardown). */
int host_channel_open(struct host_proc *h);

#endif
