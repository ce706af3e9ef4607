/* stack_guard.h — guard pages that cost no memory map.
 *
 * A guard page made with mprotect(PROT_NONE) splits its stack's mapping in two, so every
 * rank stack took two of the job host's maps (vm.max_map_count, job_limits.h).  Linux 6.13
 * and later install guard regions in the page tables instead (madvise MADV_GUARD_INSTALL): an
 * access faults (SIGSEGV) as it would on a PROT_NONE page, the mapping stays whole, and
 * stacks the kernel places side by side merge into one mapping.  Older kernels refuse that
 * advice; the guard is then made with mprotect as before. */
#ifndef TMPI_AGENT_STACK_GUARD_H
#define TMPI_AGENT_STACK_GUARD_H

#include <stddef.h>

/* Makes [lo, lo + len) (page-aligned, inside an anonymous private mapping) fault on any
 * access.  Returns the maps it added: 0 (a guard region) or 1 (mprotect); or a negative
 * errno. */
int stack_guard_install(void *lo, size_t len);

/* The maps one guard adds on this kernel (0 or 1), probed once per process: for the estimate
 * of a job's maps before it loads (job_limits.h). */
int stack_guard_maps(void);

#endif
