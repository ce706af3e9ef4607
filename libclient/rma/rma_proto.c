/* rma_proto.c — one-sided communication's frames on the job's links (TM_MSG_RMA), as the
 * network's handler table takes them (net/net_proto.h). */
#include "rma.h"

#include "net_proto.h"

static const struct tm_net_proto rma_proto = {
    .header = tm_rma_net_header,
    .frame = tm_rma_net_frame,
};

int tm_rma_net_register(struct tm_job *j)
{
    return tm_net_proto_register(j, TM_MSG_RMA, &rma_proto);
}
