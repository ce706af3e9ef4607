/* coll_net.c — the inter-node phase of the collectives (coll_net.h).
 *
 * Nothing sends NETD_COLL frames yet; until the inter-node phase is written, such a frame's
 * payload is dropped. */
#include "coll_net.h"

void *tm_coll_net_header(struct tm_job *j, int node, const struct netd_hdr *h, void **ctx)
{
    (void)j, (void)node, (void)h, (void)ctx;
    return NULL;
}

void tm_coll_net_frame(struct tm_job *j, int node, const struct netd_hdr *h, void *ctx)
{
    (void)j, (void)node, (void)h, (void)ctx;
}
