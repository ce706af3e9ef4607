/* ctl_cluster.h — tmpictl's tables for the cluster view: `tmpictl nodes`, `tmpictl jobs
 * --all` (ctl_cluster.c). */
#ifndef TMPI_LAUNCHER_CTL_CLUSTER_H
#define TMPI_LAUNCHER_CTL_CLUSTER_H

#include "control.pb-c.h"

void ctl_print_nodes(const Tmpi__NodesReply *r);

/* The jobs, each once, with the nodes of its parts; a note on stderr for each agent that did
 * not answer (its jobs are missing). */
void ctl_print_jobs_all(const Tmpi__JobsReply *r);

#endif
