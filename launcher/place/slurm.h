/* slurm.h — the hosts of a Slurm allocation, from the variables Slurm sets for a job.
 *
 *   SLURM_JOB_NODELIST    a compressed host list: items separated by commas, each item a
 *                         host name in which bracket groups expand to ranges of numbers:
 *                         "node[01-04,07],gpu[1-2]-ib,single" is node01 node02 node03 node04
 *                         node07 gpu1-ib gpu2-ib single.  A range keeps the zero padding of
 *                         its lower bound ([08-10] is 08 09 10).  Several groups in one item
 *                         expand as a product, the leftmost group varying slowest
 *                         (r[1-2]n[1-2]: r1n1 r1n2 r2n1 r2n2).
 *   SLURM_TASKS_PER_NODE  slots per node, in node-list order: counts separated by commas,
 *                         "N(xM)" standing for M times N ("2(x3),1" is 2 2 2 1).
 *
 * Errors name the variable and the piece that is wrong.  Limits: HOSTLIST_MAX_HOSTS nodes,
 * HOSTLIST_MAX_SLOTS slots per node.
 */
#ifndef TMPI_LAUNCHER_SLURM_H
#define TMPI_LAUNCHER_SLURM_H

#include <stddef.h>
#include <stdint.h>

#include "errlist.h"
#include "hostlist.h"

/* Expand a compressed host list into *ret_names (*ret_n new strings, in order; free with
 * slurm_names_free).  Every name is checked with hostlist_parse_host.  Returns 0, -EINVAL
 * (the problems in err, prefixed with var), or -ENOMEM. */
int slurm_nodelist_expand(const char *var, const char *list, char ***ret_names, size_t *ret_n,
                          struct errlist *err);
void slurm_names_free(char **names, size_t n);

/* Expand a tasks-per-node list into *ret_counts (*ret_n entries, each >= 1; free()).  Returns
 * 0, -EINVAL (problems in err, prefixed with var) or -ENOMEM. */
int slurm_tasks_expand(const char *var, const char *list, uint32_t **ret_counts, size_t *ret_n,
                       struct errlist *err);

/* The allocation as hosts: nodelist is SLURM_JOB_NODELIST's value, tasks
 * SLURM_TASKS_PER_NODE's (NULL or empty: one slot per node).  The two lists must have the
 * same length.  Hosts get the default agent port.  Returns 0, -EINVAL (problems in err) or
 * -ENOMEM. */
int slurm_hosts(const char *nodelist, const char *tasks, struct hostlist *l, struct errlist *err);

#endif
