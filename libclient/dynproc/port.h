/* port.h — ports, names and joins (MPI 4.1 §11.9, §11.10.4) between rank groups of one job.
 *
 * A port is an entry of the job's table on the node of the rank that opened it
 * (comm/dyn_tab.h), named "tmpi-port:JOB:N:NODE": the root of an MPI_Comm_accept waits on it
 * for a connect request, which the root of an MPI_Comm_connect queues there with its group
 * (from another node of the job: by a request to the port's node, comm/dyn_net.h); the
 * acceptor answers with its group and the context ids of the new inter-communicator, and each
 * root tells its communicator.  Published names are one table of the job (node 0's across
 * nodes): a service is seen by every rank of the job that published it, spawned ranks
 * included.  A port of another job is refused (MPI_ERR_PORT): two jobs are two processes, and
 * the data plane does not join them yet. */
#ifndef TMPI_LIBCLIENT_PORT_H
#define TMPI_LIBCLIENT_PORT_H

#include "job.h"

#endif
