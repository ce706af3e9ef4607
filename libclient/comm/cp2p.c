/* cp2p.c — libtmpi's own blocking messages between members (cp2p.h). */
#include "cp2p.h"

#include <errno.h>
#include <string.h>

#include "job.h"
#include "p2p.h"
#include "p2p_route.h"
#include "request.h"
#include "wait.h"

int tm_cp2p_send(struct tm_rank *me, const struct tm_comm *c, int myrank, int ctx, int dest,
                 int tag, const void *buf, size_t bytes)
{
    /* tm_send reads the context, the member maps and the sender's rank: a stand-in with the
     * chosen context (as coll_net does for its leaders). */
    struct tm_comm sc;
    memset(&sc, 0, sizeof sc);
    sc.ctx = ctx;
    sc.size = c->size;
    sc.world_of = c->world_of;
    sc.inter = c->inter;
    sc.remote_size = c->remote_size;
    sc.remote_of = c->remote_of;
    struct tm_commref scr = {.c = &sc, .rank = myrank, .eh = MPI_ERRORS_RETURN};
    struct tm_request sreq;
    tm_req_init_stack(&sreq, me, TM_REQ_SEND, MPI_COMM_NULL);
    int r = tm_send(me, &scr, buf, bytes, dest, tag, TM_SEND_STANDARD, &sreq);
    if (r < 0) return r;
    if (r == 1) tm_wait(me, tm_req_done_cond, &sreq);
    return sreq.st_error ? -EPIPE : 0;
}

int tm_cp2p_recv(struct tm_rank *me, int ctx, int src, int tag, void *buf, size_t cap, size_t *got,
                 int *from)
{
    struct tm_request rreq;
    tm_req_init_stack(&rreq, me, TM_REQ_RECV, MPI_COMM_NULL);
    tm_recv_ctx(me, ctx, buf, cap, src, tag, &rreq);
    tm_wait(me, tm_req_done_cond, &rreq);
    if (got) *got = (size_t)rreq.st_bytes;
    if (from) *from = rreq.st_source;
    if (rreq.st_error) return rreq.st_error == MPI_ERR_TRUNCATE ? -EMSGSIZE : -EPIPE;
    return 0;
}
