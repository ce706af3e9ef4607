/* xrelay.c — frames between two jobs of one user on this agent (xrelay.h). */
#include "xrelay.h"

#include <stdio.h>

#include "agent.h"
#include "job.h"
#include "jobhost.h"
#include "log.h"

static void send_gone(struct job *to, uint64_t job, const char *reason)
{
    Tmpi__XGone g = TMPI__XGONE__INIT;
    g.job = job;
    g.reason = (char *)reason;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_XGONE;
    env.xgone = &g;
    jobhost_forward(to, &env);
}

void xrelay_frame(struct agent *a, struct job *from, const Tmpi__XFrame *f)
{
    struct job *to = agent_job(a, f->to_job);
    if (!to || to == from || !to->host) {
        send_gone(from, f->to_job,
                  to == from ? "a job cannot send to itself"
                             : "no such job on this agent (a connect between jobs on two agents "
                               "is not carried yet)");
        return;
    }
    if (to->uid != from->uid) {
        /* the owner check of the port (names.c) refuses a connect first: a frame that comes
         * here all the same is the host's own doing, and never carried */
        log_job(LOG_WARNING, from->id, from->owner,
                "frame for job %llu (uid %u) refused: it is another user's",
                (unsigned long long)to->id, (unsigned)to->uid);
        send_gone(from, f->to_job, "the job is another user's");
        return;
    }
    Tmpi__XFrame out = *f;
    out.from_job = from->id;
    Tmpi__Envelope env = TMPI__ENVELOPE__INIT;
    env.msg_case = TMPI__ENVELOPE__MSG_XFRAME;
    env.xframe = &out;
    jobhost_forward(to, &env);
}

void xrelay_job_gone(struct agent *a, const struct job *j)
{
    char why[96];
    snprintf(why, sizeof why, "job %llu ended", (unsigned long long)j->id);
    for (struct job *o = a->jobs; o; o = o->next)
        if (o != j && o->uid == j->uid && o->host) send_gone(o, j->id, why);
}
