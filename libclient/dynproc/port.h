/* port.h — ports, names and joins (MPI 4.1 §11.9, §11.10.4) between rank groups of one job.
 *
 * A port is an entry of the job's table on the node of the rank that opened it
 * (comm/dyn_tab.h), named "tmpi-port:JOB:N:NODE": the root of an MPI_Comm_accept waits on it
 * for a connect request, which the root of an MPI_Comm_connect queues there with its group
 * (from another node of the job: by a request to the port's node, comm/dyn_net.h); the
 * acceptor answers with its group and the context ids of the new inter-communicator, and each
 * root tells its communicator.  Published names are one table of the job (node 0's across
 * nodes): a service is seen by every rank of the job that published it, spawned ranks
 * included.
 *
 * Every port is also registered with the agent (svc name_op TMPI_NAME_PORT_OPEN, dropped at
 * MPI_Close_port and with the job), so that a connect to a port of another job asks the agents
 * for it (TMPI_NAME_PORT_FIND, on every agent): another user's port is refused there and
 * logged with both users and jobs; a port no job of the user has open fails at once.  A port
 * of the user's other job on the same agent is connected over the path between jobs the agent
 * relays (comm/xconn.h, net/xjob.h); MPI_Comm_join with a rank of another job opens a port on
 * one side and connects from the other.
 *
 * A connect waits for its accept at most MPI_Comm_connect's info key "timeout" (seconds, as in
 * MPICH), else TMPI_CONNECT_TIMEOUT, else TM_CONNECT_TIMEOUT_S; then it leaves the port's
 * queue and fails with MPI_ERR_PORT.  At most TM_CONNECT_PENDING_MAX (comm/dyn_tab.h) connects
 * wait on the ports of one job host at once. */
#ifndef TMPI_LIBCLIENT_PORT_H
#define TMPI_LIBCLIENT_PORT_H

#include "job.h"

/* The default deadline of MPI_Comm_connect, in seconds. */
#define TM_CONNECT_TIMEOUT_S 60

#endif
