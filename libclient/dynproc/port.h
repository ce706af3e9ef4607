/* port.h — ports, names and joins (MPI 4.1 §11.9, §11.10.4) between rank groups of one job.
 *
 * A port is an entry of the job's table (tm_job.ports) named "tmpi-port:JOB:N": the root of an
 * MPI_Comm_accept waits on it for a connect request, which the root of an MPI_Comm_connect
 * queues there with its group; the acceptor answers with its group and the context ids of the
 * new inter-communicator, and each root tells its communicator.  Published names are a
 * table of the job too (tm_job.names): a service is seen by the ranks of the job that
 * published it (spawned ranks included), on its node: a job across nodes has one table per node
 * (the groups may span nodes, their roots meet on one).  A port of another job is refused
 * (MPI_ERR_PORT): two jobs are two processes, and the data plane does not join them yet. */
#ifndef TMPI_LIBCLIENT_PORT_H
#define TMPI_LIBCLIENT_PORT_H

#include "job.h"

/* The job's ports and names, at its end. */
void tm_port_free_all(struct tm_job *j);

#endif
