/* t_event.h — the MPI_T events the layers below the tools interface raise (MPI 4.0 §15.3.8;
 * their table and the handles: tools_if/mpit_events.c).  A layer raises one with tm_t_event()
 * in the rank's own thread, holding no lock; it costs a test of one pointer until the rank
 * allocates its first event handle. */
#ifndef TMPI_LIBCLIENT_T_EVENT_H
#define TMPI_LIBCLIENT_T_EVENT_H

#include <stdint.h>

#include "job.h"

enum tm_t_event_kind {
    /* a receive took a message that had arrived before it was posted (the unexpected queue):
     * struct tm_t_ev_unexpected */
    TM_T_EV_UNEXPECTED,
    /* a buffered send found too little room in the buffer it uses (it fails with
     * MPI_ERR_BUFFER): struct tm_t_ev_bsend */
    TM_T_EV_BSEND_FULL,
    TM_T_EV_KINDS
};

struct tm_t_ev_unexpected {
    int32_t source; /* the sender's rank in the communicator */
    int32_t tag;
    int64_t bytes; /* the message's size (MPI_Count) */
};

struct tm_t_ev_bsend {
    int32_t dest;  /* the destination's rank */
    int32_t pad;   /* keeps the counts 8-aligned as their datatype says */
    int64_t need;  /* bytes the message needs (its size + MPI_BSEND_OVERHEAD) */
    int64_t avail; /* bytes of the buffer free */
};

static inline void tm_t_event(struct tm_rank *me, enum tm_t_event_kind kind, const void *data)
{
    void (*fn)(struct tm_rank *, int, const void *) =
        atomic_load_explicit(&me->t_event, memory_order_acquire);
    if (TM_UNLIKELY(fn)) fn(me, (int)kind, data);
}

#endif
