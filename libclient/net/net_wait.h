/* net_wait.h — what a wait of a job across nodes does for the network (core/wait.h
 * wait_net): the protocol errors the daemons found end it, and before the rank sleeps the
 * cumulative ACKs it owes go out (net_p2p.h tm_net_check, tm_net_idle).  Registered by the
 * job's maker (mpi/job_life.c) when the job has links. */
#ifndef TMPI_LIBCLIENT_NET_WAIT_H
#define TMPI_LIBCLIENT_NET_WAIT_H

#include "job.h"

extern const struct tm_wait_net tm_net_wait;

#endif
