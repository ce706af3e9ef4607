/* job_member.h — this agent's side of a job across several nodes: one member, driven by the
 * job's coordinator over one mesh ctl connection.  The member's ranks run in a job host of
 * their own (jobhost.h) as the job's owner; the agent keeps the connection, the job's state
 * and its links (job_link.h), and passes frames between the two.
 *
 *   coordinator                      member agent (here)                job host
 *   JobAssign ─────────────────────▶ owner known here? build the job,
 *                                    program cached?
 *              ◀──────────────────── NeedProgram            (only if not)
 *   ProgramChunk* ─────────────────▶ check, cache, start the host ───▶ become the owner,
 *                                                                      load the images
 *              ◀──────────────────── JobLoaded{ok|error} ◀───────────
 *   JobConnect ────────────────────▶ open the data links, pass each ──▶ its netd reads them
 *              ◀──────────────────── JobLinked{ok|error} ◀─────────── (the agent says why
 *                                                                      if one cannot open)
 *   JobGo ─────────────────────────▶ ─────────────────────────────────▶ open the gate
 *              ◀──────────────────── Output* RankExit* JobEnd ◀──────── (global ranks)
 *   JobRelease ────────────────────▶ ─────────────────────────────────▶ close the links, unload
 *              ◀──────────────────── JobUnloaded ◀──────────────────── and leave
 *   JobCancel (any time) ──────────▶ tear the job down (SIGKILL after the kill grace)
 *
 * A host that dies is reported as its JobEnd (128+signal) and JobUnloaded by the agent.  The
 * connection ending tears the member's part down.  Loop thread only. */
#ifndef TMPI_AGENT_JOB_MEMBER_H
#define TMPI_AGENT_JOB_MEMBER_H

#include "control.pb-c.h"

struct agent;
struct job;
struct job_member;
struct mesh_conn;

/* A JobAssign arrived on an authenticated incoming ctl connection; the connection is the
 * member's from now on. */
void job_member_assign(struct agent *a, struct mesh_conn *c, const Tmpi__JobAssign *ja);

/* job_net.c: every data link is up (err 0), or why not. */
void job_member_linked(struct job *j, int err, const char *why);

/* job.c: the job is being freed. */
void job_member_forget(struct job_member *m);

#endif
