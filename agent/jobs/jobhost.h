/* jobhost.h — one job host process per job and node: the agent's side and the host's.
 *
 * The agent never runs user code.  For each job it starts a job host: the tmpid binary
 * exec'd with --job-host (posix_spawn: the multi-threaded agent is never forked), which
 * reads the job (a SubmitJob, or for one node's part of a job across several nodes the
 * JobAssign, on fd JOBHOST_CHANNEL_FD; the program bytes in a memfd on JOBHOST_PROGRAM_FD; the
 * agent's accepted configuration on JOBHOST_CONFIG_FD), switches to the submitter's identity
 * and runs the ranks as its threads (job.c, rank.c, carrier.c, loader.c, interpose).
 *
 * A single-node job's host sends the frames a launcher reads (JobStarted, Output, RankExit,
 * JobEnd) on the channel; the agent relays them to the launcher whole.  A member host sends
 * what a member sends its coordinator (JobLoaded, JobLinked, Output, RankExit, JobEnd,
 * JobUnloaded), relayed whole on the member's mesh connection; the agent passes the
 * coordinator's JobGo, JobRelease and JobCancel down.  The member's data links are opened by
 * the agent (job_link.h) and passed to the host on JOBHOST_LINKS_FD (a SOCK_SEQPACKET socket:
 * one struct jobhost_link_msg per link with the socket as SCM_RIGHTS); the host's own netd
 * reads them (job_net.h).  The other way a bare jobhost_link_msg asks for a link anew (its
 * socket broke: job_link_relink).  The agent checks what a host sends (it runs user code) and keeps
 * the job's state: when a host dies mid-job the agent ends the stream itself with a JobEnd of
 * its own (128+signal).  The agent sends JobCancel on the channel; a host that has not ended
 * kill_grace_sec later is killed (SIGKILL). */
#ifndef TMPI_AGENT_JOBHOST_H
#define TMPI_AGENT_JOBHOST_H

#include <stdint.h>
#include <sys/types.h>

#include "control.pb-c.h"

struct agent;
struct job;
struct program;

/* Fixed descriptors of a job host (set up by posix_spawn file actions). */
#define JOBHOST_CHANNEL_FD 3
#define JOBHOST_PROGRAM_FD 4
/* The agent's configuration text (a memfd), when it read a file: the host reads it as its
 * --config, before it becomes the user. */
#define JOBHOST_CONFIG_FD 5
#define JOBHOST_CONFIG_PATH "/proc/self/fd/5"
#define JOBHOST_LINKS_FD 6 /* member hosts only */
/* How often a member host reports its data links' traffic (LinkTraffic) while it runs. */
#define JOBHOST_TRAFFIC_MS 2000

/* One data link passed to a member host: the message on JOBHOST_LINKS_FD, the socket its
 * SCM_RIGHTS. */
struct jobhost_link_msg {
    uint32_t node;    /* the node at the other end */
    uint32_t channel; /* TMPI_CH_P2P or TMPI_CH_COLL */
};

/* ---- agent side, loop thread ---- */

/* Remembers the binary hosts are started from: call once before the first job. */
void jobhost_setup(const char *exe);

/* Starts the host of j with its programs (pinned in j->apps; released here once the host has
 * its copy, all of them one after the other in app order in the program memfd): a
 * single-node job built by job_new (ja NULL; the host gets a SubmitJob whose programs are
 * always apps), or a member job built by job_new_member from ja.  0 or a negative errno (j
 * keeps its programs). */
int jobhost_start(struct job *j, const Tmpi__JobAssign *ja);

/* Passes a frame to the host: a member's JobGo or JobRelease from the coordinator, the
 * agent's NameReply (control/names.h).  A host that cannot take it is killed. */
void jobhost_forward(struct job *j, const Tmpi__Envelope *env);

/* Ranks MPI_Comm_spawn started in the job's host so far (its RanksSpawned frames); 0 without
 * a host.  Loop thread. */
uint32_t jobhost_spawned(const struct job *j);

/* Member jobs: passes the data link fd to node `node` on `channel` to the host.  0 (fd is the
 * host's, closed here), -EAGAIN (the host's socket is full: fd stays the caller's, and
 * job_link_flush runs once it drains), or a negative errno (fd closed). */
int jobhost_pass_link(struct job *j, int node, int channel, int fd);

/* Member jobs: the host's JobEnd was relayed (its ranks ended). */
int jobhost_ended(const struct job *j);

/* Tears the host's job down: JobCancel now, SIGKILL after kill_grace_sec. */
void jobhost_cancel(struct job *j, int status, const char *reason);

/* The launcher's stdin for rank 0 (StdinData): passed on to the host within the window
 * (msg_check.h); the host's StdinAck frames go back to the launcher.  0, -EPROTO when the
 * launcher broke the protocol (the caller closes its connection), -ENOMEM. */
struct Tmpi__StdinData;
int jobhost_stdin(struct job *j, const struct Tmpi__StdinData *d);

/* Delivers sig to the host process (kill), unless it is over.  0. */
int jobhost_signal(struct job *j, int sig);

/* The launcher's output buffer drained: relay the host's frames again. */
void jobhost_launcher_drained(struct job *j);

/* The host's cgroup (cgroup.h), NULL when it has none. */
struct cgroup_job;
const struct cgroup_job *jobhost_cgroup(const struct job *j);

/* Frees what job_free must for a host job (the process is reaped or killed first). */
void jobhost_free(struct job *j);
/* Loop thread: frees what the host said carries each link (job.h carriers). */
void jobhost_carriers_free(struct job *j);

/* The job host's own side (its main, its state) is host/host_proc.h. */

#endif
