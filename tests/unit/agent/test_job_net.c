/* test_job_net.c — the checks of job_net_send (agent/host/job_net.c, svc.h net_send) before
 * any link is touched: a node outside the job, this node itself, a channel other than
 * point-to-point or collectives, and a flag other than TMPI_NET_WHOLE are -EINVAL; a valid
 * send to a node whose link is not up is -EPIPE; none of them counts a frame. */
#include <errno.h>
#include <string.h>

#include "../check.h"
#include "job_net.h"
#include "mesh_auth.h"
#include "svc.h"

int main(void)
{
    Tmpi__NodePlacement p[3];
    Tmpi__NodePlacement *pp[3];
    const char *hosts[3] = {"192.0.2.1", "192.0.2.2", "::1"};
    for (int i = 0; i < 3; i++) {
        tmpi__node_placement__init(&p[i]);
        p[i].host = (char *)hosts[i];
        p[i].port = 7000 + (unsigned)i;
        pp[i] = &p[i];
    }
    struct job_net *n = NULL;
    CHECK_EQ(job_net_new(NULL, 42, 1, 3, pp, &n), 0);
    struct netd_hdr h;
    memset(&h, 0, sizeof h);

    /* nodes: outside the job, and this node (no link to itself) */
    CHECK_EQ(job_net_send(n, -1, TMPI_CH_P2P, 0, &h, NULL, NULL, NULL), -EINVAL);
    CHECK_EQ(job_net_send(n, 3, TMPI_CH_P2P, 0, &h, NULL, NULL, NULL), -EINVAL);
    CHECK_EQ(job_net_send(n, 1, TMPI_CH_P2P, 0, &h, NULL, NULL, NULL), -EINVAL);
    /* channels: only point-to-point and collectives */
    CHECK_EQ(job_net_send(n, 0, 0, 0, &h, NULL, NULL, NULL), -EINVAL);
    CHECK_EQ(job_net_send(n, 0, TMPI_CH_CTL, 0, &h, NULL, NULL, NULL), -EINVAL);
    /* flags: TMPI_NET_WHOLE is the only one */
    CHECK_EQ(job_net_send(n, 0, TMPI_CH_P2P, 2u, &h, NULL, NULL, NULL), -EINVAL);
    CHECK_EQ(job_net_send(n, 0, TMPI_CH_P2P, TMPI_NET_WHOLE | 4u, &h, NULL, NULL, NULL), -EINVAL);
    /* no job_net at all */
    CHECK_EQ(job_net_send(NULL, 0, TMPI_CH_P2P, 0, &h, NULL, NULL, NULL), -EINVAL);

    /* valid, with and without the flag, on both channels: the link is not up */
    CHECK_EQ(job_net_send(n, 0, TMPI_CH_P2P, 0, &h, NULL, NULL, NULL), -EPIPE);
    CHECK_EQ(job_net_send(n, 2, TMPI_CH_COLL, TMPI_NET_WHOLE, &h, NULL, NULL, NULL), -EPIPE);

    CHECK_EQ(atomic_load(&n->frames_sent), 0);
    for (int c = 0; c < 2; c++)
        CHECK_EQ(atomic_load(&n->tx_frames[c]), 0);
    job_net_free(n);
    return 0;
}
