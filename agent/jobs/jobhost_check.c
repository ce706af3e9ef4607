/* jobhost_check.c — the channel rules for job hosts (jobhost_check.h). */
#include "jobhost_check.h"

#include "msg_check.h"

int jobhost_chan_ok(const struct jobhost_chan_state *st, const Tmpi__Envelope *env)
{
    switch (env->msg_case) {
    case TMPI__ENVELOPE__MSG_JOB_STARTED:
        return !st->member; /* a member's start is the coordinator's to tell */
    case TMPI__ENVELOPE__MSG_OUTPUT:
    case TMPI__ENVELOPE__MSG_RANK_EXIT:
    case TMPI__ENVELOPE__MSG_RANKS_REPLY:
    case TMPI__ENVELOPE__MSG_HOST_LOG:
        return 1; /* a member's ranks are checked by the coordinator (msg_check.h) */
    case TMPI__ENVELOPE__MSG_STDIN_ACK:
        return env->stdin_ack->bytes <= st->stdin_inflight; /* only what it was given */
    case TMPI__ENVELOPE__MSG_JOB_LOADED:
        return st->member && env->job_loaded->uid == st->uid;
    case TMPI__ENVELOPE__MSG_JOB_LINKED:
        return st->member && env->job_linked->uid == st->uid &&
               env->job_linked->n_links <= JOBHOST_LINKS_MAX;
    case TMPI__ENVELOPE__MSG_LINK_TRAFFIC:
        /* cumulative counts of at most two channels */
        return st->member && env->link_traffic->n_channels <= 2;
    case TMPI__ENVELOPE__MSG_JOB_UNLOADED:
        return st->member && env->job_unloaded->uid == st->uid && st->got_end && !st->got_unloaded;
    case TMPI__ENVELOPE__MSG_JOB_END:
        return !st->got_end;
    case TMPI__ENVELOPE__MSG_RANKS_SPAWNED:
        return env->ranks_spawned->ended <= st->spawned &&
               env->ranks_spawned->ranks <=
                   MSG_MAX_SPAWN_SLOTS - (st->spawned - env->ranks_spawned->ended);
    case TMPI__ENVELOPE__MSG_NAME_REQUEST: {
        char why[160];
        return msg_check_name_request(env->name_request, why, sizeof why) == 0;
    }
    case TMPI__ENVELOPE__MSG_XFRAME:
        return env->xframe->hdr.len <= MSG_XFRAME_HDR_MAX &&
               env->xframe->payload.len <= MSG_XFRAME_PAYLOAD_MAX;
    default:
        return 0;
    }
}

int jobhost_chan_take(struct jobhost_chan_state *st, const Tmpi__Envelope *env)
{
    switch (env->msg_case) {
    case TMPI__ENVELOPE__MSG_STDIN_ACK:
        st->stdin_inflight -= env->stdin_ack->bytes;
        return 1;
    case TMPI__ENVELOPE__MSG_JOB_UNLOADED:
        st->got_unloaded = 1;
        return 1;
    case TMPI__ENVELOPE__MSG_JOB_END:
        st->got_end = 1;
        return 1;
    case TMPI__ENVELOPE__MSG_LINK_TRAFFIC:
    case TMPI__ENVELOPE__MSG_HOST_LOG:
    case TMPI__ENVELOPE__MSG_NAME_REQUEST: /* this agent's to answer (control/names.h) */
    case TMPI__ENVELOPE__MSG_XFRAME:       /* another job's (control/xrelay.h) */
        return 0;
    case TMPI__ENVELOPE__MSG_RANKS_SPAWNED:
        st->spawned = st->spawned - env->ranks_spawned->ended + env->ranks_spawned->ranks;
        return st->member; /* the coordinator counts the job's, and keeps a spare node on */
    case TMPI__ENVELOPE__MSG_RANKS_REPLY:
        return st->member;
    default:
        return 1;
    }
}
