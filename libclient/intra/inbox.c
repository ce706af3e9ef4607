/* inbox.c — the intra-node layer's part of every wait (core/wait.h wait_poll). */
#include "inbox.h"

#include "coop.h"

void tm_inbox_wait_poll(struct tm_rank *me, int help)
{
    if (help) tm_coop_poll(&me->coop, me);
    tm_inbox_poll(me);
}
