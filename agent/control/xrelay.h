/* xrelay.h — the agent's part of the data path between two jobs of one user (MPI_Comm_connect /
 * accept, MPI_Comm_join; docs/PROTOCOL.md "Between jobs"): a job host's XFrame for another job
 * goes to that job's host on this agent, stamped with the sender's job id, and only when both
 * jobs are the same user's; a job's end tells the other jobs of its user (XGone), so that what
 * waits on it there fails instead of hanging.
 *
 * The path is relayed: host -> agent channel -> host, the agent copying each frame (at most
 * MSG_XFRAME_PAYLOAD_MAX bytes of payload).  Both jobs must run on this agent; a frame for a
 * job that is not here is answered with XGone.
 *
 * Loop thread only. */
#ifndef TMPI_AGENT_XRELAY_H
#define TMPI_AGENT_XRELAY_H

#include "control.pb-c.h"

struct agent;
struct job;

/* Job `from`'s host sent f (checked by jobhost_check.h): passed on, or refused (XGone to
 * from's host; another user's job is logged). */
void xrelay_frame(struct agent *a, struct job *from, const Tmpi__XFrame *f);
/* Job j ends here: every other job of its user on this agent hears XGone. */
void xrelay_job_gone(struct agent *a, const struct job *j);

#endif
