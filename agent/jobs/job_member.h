/* job_member.h — this agent's side of a job across several nodes: one member, driven by the
 * job's coordinator over one mesh ctl connection.
 *
 *   coordinator                      member (here)
 *   JobAssign ─────────────────────▶ build the job (job_new_member), program cached?
 *              ◀──────────────────── NeedProgram            (only if not)
 *   ProgramChunk* ─────────────────▶ check, cache, start the job thread: it loads the images
 *              ◀──────────────────── JobLoaded{ok|error}     (job thread)
 *   JobConnect ────────────────────▶ open the data links (job_net.c)
 *              ◀──────────────────── JobLinked{ok|error}
 *   JobGo ─────────────────────────▶ open the gate
 *              ◀──────────────────── Output* RankExit* JobEnd   (global ranks)
 *   JobRelease ────────────────────▶ close the links, unload
 *              ◀──────────────────── JobUnloaded
 *   JobCancel (any time) ──────────▶ tear the job down
 *
 * The connection ending tears the member's part down.  Loop thread only. */
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
