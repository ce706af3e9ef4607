/* net.c — upcall dispatch for inter-node frames (net.h).  Runs on an agent receive daemon. */
#include "net.h"

#include "coll_net.h"
#include "job.h"
#include "net_p2p.h"
#include "rma.h"

void *tm_net_header(void *state, int node, const struct netd_hdr *h, void **ctx)
{
    struct tm_job *j = state;
    if (h->type == NETD_COLL) return tm_coll_net_header(j, node, h, ctx);
    if (h->type == NETD_RMA) return tm_rma_net_header(j, node, h, ctx);
    return tm_net_p2p_header(j, node, h, ctx);
}

void tm_net_frame(void *state, int node, const struct netd_hdr *h, void *ctx)
{
    struct tm_job *j = state;
    if (h->type == NETD_COLL) {
        tm_coll_net_frame(j, node, h, ctx);
        return;
    }
    if (h->type == NETD_RMA) {
        tm_rma_net_frame(j, node, h, ctx);
        return;
    }
    tm_net_p2p_frame(j, node, h, ctx);
}
