/* xrelay.h — the agent's part of the data path between two jobs of one user (MPI_Comm_connect /
 * accept, MPI_Comm_join; docs/PROTOCOL.md "Between jobs"): a job host's XFrame for another job
 * goes to that job's host, stamped with the sender's job id, and only when both jobs are the
 * same user's; a job's end tells the other jobs of its user (XGone), so that what waits on it
 * there fails instead of hanging.
 *
 * The path is relayed: host -> agent channel -> host, the agent copying each frame (at most
 * MSG_XFRAME_PAYLOAD_MAX bytes of payload).  When the other job runs on another agent, the
 * frame goes on over the authenticated mesh: one control connection per pair of agents (a
 * "link", opened by the agent that first needs it, used both ways), carrying XFrame with the
 * sender's job and uid as this agent vouches for them; the agent at the other end checks that
 * the receiving job is the same uid's before it passes a byte on.
 *
 * A job may run across several nodes (agents): a frame names the node of the receiving job
 * it is for (XFrame.to_node, from the connect's handshake), and the agent that carries it on
 * says which node of the sending job it came from (from_node).  Where a node of a job runs
 * (a route, per job and node) is learned, never configured:
 *   - the job has a part on this agent: its JobAssign names the address of each node;
 *   - the find of a port (names.h, NameRequest op 6) that a peer answered: the port's node of
 *     its job runs on that peer (xrelay_route);
 *   - a frame that came in on a link: its sending node runs at the link's other end;
 *   - else the peers are asked (names_find_job, NameRequest op 8, answered 0 only by the agent
 *     that runs the node for the same uid); the frames wait meanwhile, in order.
 * The first route found for a node stays (one path: frames keep their order).  Routes go with
 * their job's XGone or when their link closes (then every job of the route's user here hears
 * XGone: the other agent is unreachable).  Routes and links are bounded (XRELAY_ROUTES_MAX,
 * XRELAY_LINKS_MAX); frames for a link whose handshake is still under way, or for a route
 * being found, wait, at most XRELAY_PENDING_BYTES_MAX bytes each (past it the sender hears
 * XGone).
 *
 * Loop thread only. */
#ifndef TMPI_AGENT_XRELAY_H
#define TMPI_AGENT_XRELAY_H

#include <stdint.h>
#include <sys/types.h>

#include "control.pb-c.h"

struct agent;
struct job;
struct mesh;
struct mesh_conn;
struct xrelay;

/* Nodes of jobs of other agents whose place this agent knows at once. */
#define XRELAY_ROUTES_MAX 4096
/* Links to other agents at once. */
#define XRELAY_LINKS_MAX 256
/* Bytes of frames waiting for a link's handshake, or for a route's find. */
#define XRELAY_PENDING_BYTES_MAX (64u << 20)

/* The relay of agent a over mesh m (for a's jobs and its peers); 0 or -ENOMEM. */
int xrelay_new(struct agent *a, struct mesh *m, struct xrelay **ret);
/* Closes the links; NULL is fine. */
void xrelay_free(struct xrelay *x);

/* Job `from`'s host sent f (checked by jobhost_check.h): passed on, or refused (XGone to
 * from's host; another user's job is logged). */
void xrelay_frame(struct agent *a, struct job *from, const Tmpi__XFrame *f);
/* Job j ends here: every other job of its user on this agent hears XGone, and so does every
 * linked agent (for its jobs of that user). */
void xrelay_job_gone(struct agent *a, const struct job *j);
/* The name service found a port of job `job` (uid's) on the peer at address, held by the
 * job's node `node`: frames for that node go there. */
void xrelay_route(struct xrelay *x, uint64_t job, uint32_t node, uid_t uid, const char *address);
/* The mesh's xlink upcall (mesh.h): another agent opened a link. */
void xrelay_accept(struct xrelay *x, struct mesh_conn *c, const Tmpi__Envelope *env);

#endif
