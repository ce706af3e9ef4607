#include "job_pools.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "job.h"

/* The variables the common pooled libraries read at load: OpenBLAS (and GotoBLAS, its
 * ancestor), BLIS, MKL and every OpenMP runtime. */
static const char *const pool_vars[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                        "BLIS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"};

int job_pools_size(struct job *j)
{
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    unsigned per = j->nprocs ? (unsigned)cpus / j->nprocs : 1;
    char val[16];
    snprintf(val, sizeof val, "%u", per ? per : 1);
    for (size_t i = 0; i < sizeof pool_vars / sizeof pool_vars[0]; i++) {
        const char *mine = j->napps ? job_app_getenv(j, &j->apps[0], pool_vars[i]) : NULL;
        if (setenv(pool_vars[i], mine ? mine : val, 1) < 0) return -errno;
    }
    return 0;
}
