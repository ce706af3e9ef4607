/* net_proto.h — the other protocols on a job's links.  Point-to-point owns the links; a frame of
 * another message type (msg_hdr.h: one-sided communication's TM_MSG_RMA) goes to the handlers
 * its layer registered, so the network never includes the layers above it.  The handlers work
 * as net.h's upcalls do, on the protocol half already decoded: header says where the payload
 * goes (NULL: nowhere, and *ctx what frame is told), frame that it is there. */
#ifndef TMPI_LIBCLIENT_NET_PROTO_H
#define TMPI_LIBCLIENT_NET_PROTO_H

#include "msg_hdr.h"

struct tm_job;

struct tm_net_proto {
    void *(*header)(struct tm_job *j, int node, const struct tm_msg_hdr *h, void **ctx);
    void (*frame)(struct tm_job *j, int node, const struct tm_msg_hdr *h, void *ctx);
};

/* Registers p for the frames of type (not a point-to-point one) on the job's links: once per
 * job, by its maker (mpi/job_life.c), before the links deliver (the agent holds a job's frames
 * until its state exists).  A type without handlers is a protocol error.  0 or -EINVAL. */
int tm_net_proto_register(struct tm_job *j, int type, const struct tm_net_proto *p);

#endif
