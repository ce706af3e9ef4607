/* inbox.h — what every wait and test of a rank looks at before its condition: messages handed
 * to it to lay out (handoff.h), then its fast boxes (fbox.h).  A posted receive that a sender
 * answered through either completes only here. */
#ifndef TMPI_LIBCLIENT_INBOX_H
#define TMPI_LIBCLIENT_INBOX_H

#include "fbox.h"
#include "handoff.h"
#include "job.h"

static inline void tm_inbox_poll(struct tm_rank *me)
{
    if (tm_handoff_ready(&me->handoff)) tm_handoff_take(me);
    tm_fb_poll(me);
}

/* The job's wait_poll (core/wait.h): before every look at a wait's condition, the inbox, and
 * with help a share of a large copy another rank published to this one (coop.h). */
void tm_inbox_wait_poll(struct tm_rank *me, int help);

#endif
