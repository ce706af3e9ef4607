/* job_limits.h — the kernel limits a job's size runs into, checked before they hit.
 *
 * Every rank image takes a handful of memory maps (and, when it is dlopen()ed rather than
 * copied by image_copy.h, one open file: its memfd), plus a stack (two maps: guard page and
 * stack, or none where guard pages cost no map and the stacks merge: stack_guard.h).  A 16,384-rank
 * job on one node passes the default vm.max_map_count (65530) part-way through loading; failing
 * there takes a minute and says only "Cannot allocate memory".  These checks name the limit and how
 * to raise it. */
#ifndef TMPI_JOB_LIMITS_H
#define TMPI_JOB_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/* Maps a rank stack takes: a kernel thread's stack from the C library, or a carried rank's
 * where guard pages are mprotect'ed (the guard page and the stack itself). */
#define JOB_LIMITS_STACK_MAPS 2
/* Maps and files left free for everything else the host opens after loading. */
#define JOB_LIMITS_SLACK 256

/* Memory maps of this process now (lines of /proc/self/maps), or a negative errno. */
long job_limits_maps_now(void);

/* Maps a rank stack takes: JOB_LIMITS_STACK_MAPS, or none for carried ranks whose guard pages
 * cost no map (stack_guard.h; their stacks, mapped one after the other, merge). */
long job_limits_stack_maps(int carried);

/* Whether nprocs ranks fit, given that `loaded` images are loaded, `maps_now` maps exist, each
 * further image takes `maps_per_image` maps and, if file_per_image, one file, and each rank's
 * stack `stack_maps` maps.  0 if they fit; otherwise -ENOMEM (maps) or -EMFILE (files) with
 * why[] naming the limit and how to raise it. */
int job_limits_check(uint32_t nprocs, uint32_t loaded, long maps_now, long maps_per_image,
                     long stack_maps, int file_per_image, char *why, size_t whylen);

/* The hint for a rank thread that could not be created (EAGAIN): which limits bound threads. */
const char *job_limits_thread_hint(int err);

#endif
