/* net.c — upcall dispatch for inter-node frames (net.h).  Runs on an agent receive daemon, or
 * on a rank thread inside svc net_poll. */
#include "net.h"

#include "job.h"
#include "msg_hdr.h"
#include "net_p2p.h"

/* *ctx of a frame whose protocol half was refused: net_frame drops it. */
static const char bad_frame;

void *tm_net_header(void *state, int node, const struct netd_hdr *h, void **ctx)
{
    struct tm_job *j = state;
    struct tm_msg_hdr m;
    if (tm_msg_hdr_decode(h, &m) < 0) {
        if (j->net)
            tm_net_proto_error(j->net, node, "frame %llu: malformed protocol header (type %u)",
                               (unsigned long long)h->seq, h->proto[0]);
        *ctx = (void *)&bad_frame;
        return NULL;
    }
    return tm_net_p2p_header(j, node, &m, ctx);
}

void tm_net_frame(void *state, int node, const struct netd_hdr *h, void *ctx)
{
    struct tm_job *j = state;
    struct tm_msg_hdr m;
    /* net_header has decoded the same bytes successfully */
    if (ctx == &bad_frame || tm_msg_hdr_decode(h, &m) < 0) return;
    tm_net_p2p_frame(j, node, &m, ctx);
}
