/* xfer.h — per-job table of transfer handles: what a cookie or rcookie on the wire stands for.
 *
 * A cookie that comes back from another node (CTS names the sender's pending send, DATA the
 * receiver's matched receive) is never a pointer: it is (generation << 32) | (index + 1) into
 * this table, and a lookup checks the index, the generation and the kind.  An unknown, stale
 * (the slot was freed and reused) or mistyped cookie finds nothing, so a bad frame is a
 * protocol error the caller reports instead of a wild pointer.  Cookie 0 is never handed out.
 *
 * Concurrency: one mutex per table; rank threads put (a send goes three-phase, a receive
 * answers with CTS), daemons take.  The table grows by doubling up to TM_XFER_MAX entries. */
#ifndef TMPI_LIBCLIENT_XFER_H
#define TMPI_LIBCLIENT_XFER_H

#include <pthread.h>
#include <stdint.h>

#define TM_XFER_MAX (1u << 22) /* transfers in flight per job and node */

/* RMA_ORIGIN: a rank's answers on one window (rma.h struct tm_rma_origin), freed with the
 * window; RMA_GET: a fetching operation waiting for its data (rma_net.c); CANCEL: an
 * MPI_Cancel of a send waiting for the receiver's node to answer (cancel.c). */
enum tm_xfer_kind {
    TM_XFER_SEND = 1,
    TM_XFER_RECV = 2,
    TM_XFER_RMA_ORIGIN = 3,
    TM_XFER_RMA_GET = 4,
    TM_XFER_CANCEL = 5
};

struct tm_xfer_slot;

struct tm_xfer_tab {
    pthread_mutex_t lock;
    struct tm_xfer_slot *v; /* cap entries */
    uint32_t cap;
    uint32_t free_head; /* index + 1 of the first free slot, 0: none */
    uint32_t used;
};

int tm_xfer_init(struct tm_xfer_tab *t);
/* Calls each(p, kind, arg) for every live entry, then frees the table. */
void tm_xfer_fini(struct tm_xfer_tab *t, void (*each)(void *p, int kind, void *arg), void *arg);

/* Registers p; 0 and *ret_cookie, -ENOMEM, or -ENOSPC at TM_XFER_MAX live entries. */
int tm_xfer_put(struct tm_xfer_tab *t, int kind, void *p, uint64_t *ret_cookie);
/* The entry cookie names if it is live and of this kind, else NULL.  get leaves it in place,
 * take frees the slot (its generation moves on, so the cookie goes stale). */
void *tm_xfer_get(struct tm_xfer_tab *t, uint64_t cookie, int kind);
void *tm_xfer_take(struct tm_xfer_tab *t, uint64_t cookie, int kind);

#endif
