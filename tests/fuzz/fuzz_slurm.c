/* fuzz_slurm.c — Slurm's SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE syntax (bracketed
 * ranges, repeat counts), the two strings split at the first NUL byte of the input. */
#include <stdlib.h>
#include <string.h>

#include "errlist.h"
#include "fuzz.h"
#include "hostlist.h"
#include "slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 2);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    s[size + 1] = '\0';
    const char *nodes = s;
    const char *tasks = s + strlen(s) + 1;
    if (tasks > s + size) tasks = s + size;
    struct hostlist l;
    memset(&l, 0, sizeof l);
    struct errlist err;
    memset(&err, 0, sizeof err);
    slurm_hosts(nodes, tasks, &l, &err);
    hostlist_free(&l);
    errlist_free(&err);
    free(s);
    return 0;
}
