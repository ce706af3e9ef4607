/* mem_align.c — the memory alignment hint (mem_align.h). */
#include "mem_align.h"

#include <errno.h>
#include <stdlib.h>

size_t tm_mem_align(MPI_Info info, size_t dflt)
{
    if (info == MPI_INFO_NULL) return dflt;
    char v[32];
    int len = (int)sizeof v, flag = 0;
    if (PMPI_Info_get_string(info, "mpi_minimum_memory_alignment", &len, v, &flag) != MPI_SUCCESS ||
        !flag || len > (int)sizeof v)
        return dflt;
    char *end;
    errno = 0;
    unsigned long long a = strtoull(v, &end, 10);
    if (errno || end == v || *end || a < dflt || a > TM_MEM_ALIGN_MAX || (a & (a - 1))) return dflt;
    return (size_t)a;
}
