/* cp2p.h — blocking point-to-point for libtmpi's own protocols (making communicators): a
 * message on a context of libtmpi's choosing between members of a communicator, so it never
 * meets the program's traffic.  Derived contexts: TM_CTX_MAKE(ctx) carries the messages that
 * make communicators from the one of context ctx (below every id coll_net derives). */
#ifndef TMPI_LIBCLIENT_CP2P_H
#define TMPI_LIBCLIENT_CP2P_H

#include <stddef.h>

#include "comm.h"

#define TM_CTX_MAKE(ctx) (-(1 << 30) - 8 - (ctx))

/* Sends bytes to rank dest of c (the remote group on an inter-communicator) as my rank
 * myrank, on context ctx.  Returns 0 or a negative errno. */
int tm_cp2p_send(struct tm_rank *me, const struct tm_comm *c, int myrank, int ctx, int dest,
                 int tag, const void *buf, size_t bytes);
/* Receives up to cap bytes from src (or MPI_ANY_SOURCE) on ctx; *got: bytes received, *from:
 * the source (either may be NULL). */
int tm_cp2p_recv(struct tm_rank *me, int ctx, int src, int tag, void *buf, size_t cap, size_t *got,
                 int *from);

#endif
