/* net_wait.c — the network's part of the waits of a job across nodes (core/wait.h wait_net). */
#include "net_wait.h"

#include "net_p2p.h"

static void net_wait_check(struct tm_rank *me)
{
    tm_net_check(me, me->job->net);
}

static void net_wait_idle(struct tm_rank *me)
{
    tm_net_idle(me, me->job->net);
}

static int net_wait_failed(struct tm_job *j)
{
    return atomic_load_explicit(&j->net->net_errors, memory_order_seq_cst) != 0;
}

const struct tm_wait_net tm_net_wait = {
    .check = net_wait_check,
    .idle = net_wait_idle,
    .failed = net_wait_failed,
};
