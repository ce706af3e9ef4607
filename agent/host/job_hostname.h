/* job_hostname.h — which nodes of its job a host name names: MPI_Comm_spawn's info key host
 * (svc.h host_nodes).
 *
 * A node is named by its host in the job's host file (NodePlacement host, the address its
 * links were opened to; letters in any case) alone or with ":PORT" (several agents on one
 * machine are told apart so), and this node also by its agent's name (MPI_Get_processor_name),
 * the machine's host name, "localhost" and a numeric address of one of its interfaces.  A job
 * on one node has only those last names.  Another node's own names only that node knows:
 * libtmpi asks it (comm/dyn_net.h TM_DYN_HOST), which answers with this function. */
#ifndef TMPI_AGENT_JOB_HOSTNAME_H
#define TMPI_AGENT_JOB_HOSTNAME_H

struct job;

/* The nodes of j that host names, ascending, the first cap into out; how many (0: none).
 * Any thread (the names are fixed when the job is assigned). */
int job_host_nodes(const struct job *j, const char *host, int *out, int cap);

#endif
