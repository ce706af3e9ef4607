/* job_coord.h — the coordinator of a job across several nodes: the local agent a launcher
 * submitted it to.  Every node of the placement is a member, this agent's own address
 * included (it connects to itself), so all members are handled alike (job_member.h).
 *
 *   connect to every member, JobAssign (serve NeedProgram from the program cache)
 *   every JobLoaded ok   -> JobConnect to all
 *   every JobLinked ok   -> JobGo to all, JobStarted to the launcher
 *   Output / RankExit    -> forwarded to the launcher
 *   StdinData            -> the node of rank 0; its StdinAck back to the launcher
 *   JobEnd of a member   -> the first failure (by arrival) decides status, rank and reason,
 *                           and the others get JobCancel
 *   every JobEnd         -> JobRelease to all
 *   every JobUnloaded    -> JobEnd to the launcher (a failed job: every JobEnd is enough)
 * All or nothing: a member that cannot be reached, cannot load or cannot link fails the job
 * before any rank runs anywhere; a member lost later fails it ("node N (ADDR) lost").
 * Loop thread only. */
#ifndef TMPI_AGENT_JOB_COORD_H
#define TMPI_AGENT_JOB_COORD_H

#include <stdint.h>
#include <sys/types.h>

#include "control.pb-c.h"
#include "job_ranks.h"

struct agent;
struct bufferevent;
struct coord;
struct program;

/* Checks a multi-node submission and builds its coordinator (nothing is contacted yet).
 * uid, gid: the launcher's (SO_PEERCRED), which every member's job host runs as.
 * launcher: the launcher connection's bufferevent.  done(arg) runs once the launcher got its
 * JobEnd; the coordinator is freed right after.  -EINVAL / -ENOKEY with a message, -ENOMEM. */
int coord_new(struct agent *a, const Tmpi__SubmitJob *s, uid_t uid, gid_t gid,
              struct bufferevent *launcher, void (*done)(void *arg), void *arg, struct coord **ret,
              char *err, size_t errlen);
/* Starts the job with progs (one per program of the job, pinned: the coordinator takes the
 * array and releases them). */
void coord_start(struct coord *co, struct program **progs);
/* A user cancelled: tear every member down. */
void coord_cancel(struct coord *co, int status, const char *reason);
/* The launcher forwarded a signal (SIGUSR1/SIGUSR2): every member delivers it to its ranks. */
void coord_signal(struct coord *co, int sig);
/* The launcher's stdin (StdinData after JobStarted), for the node of rank 0.  -EPROTO when the
 * job was not submitted with stdin_open or the data break MSG_STDIN_WINDOW / MSG_STDIN_CHUNK
 * or come after their end; 0 otherwise (dropped once the job ends). */
int coord_stdin(struct coord *co, const Tmpi__StdinData *d);
/* The launcher went away (or the agent drops it): cancel every member and free. */
void coord_free(struct coord *co);
uint64_t coord_id(const struct coord *co);
/* The submitter (who may see and cancel the job), and its name. */
uid_t coord_owner_uid(const struct coord *co);
const char *coord_owner(const struct coord *co);
/* tmpictl ranks: every rank of the job, gathered from every member (job_ranks.h); NULL with
 * *ret_err when the job is not running. */
struct ranks_waiter *coord_ranks(struct coord *co, ranks_done_fn done, void *arg,
                                 const char **ret_err);
/* The launcher's output drained (its connection's write callback). */
void coord_launcher_drained(struct coord *co);

#endif
