/* job_pools.h — thread pools of the shared libraries, sized as a process per rank gets them.
 *
 * OpenBLAS and OpenMP runtimes are loaded once into the job host and size their thread pools
 * when they load, from OPENBLAS_NUM_THREADS / OMP_NUM_THREADS or else the CPUs the loading
 * thread may use: the whole node.  A process per rank bound to its core would start one
 * thread; here the job's ranks would all share a pool as big as the node and queue on it (HPL
 * on 4 ranks ran its BLAS calls one rank at a time).  So before the job's programs load, each
 * such variable the job does not set (tmpi-launch -x) gets the node's CPUs divided among the
 * node's ranks (at least 1) in the job host's environment. */
#ifndef TMPI_AGENT_JOB_POOLS_H
#define TMPI_AGENT_JOB_POOLS_H

struct job;

/* The pool sizes for the node's ranks of j; job thread, before the first image loads.  0 or a
 * negative errno (out of memory in setenv). */
int job_pools_size(struct job *j);

#endif
