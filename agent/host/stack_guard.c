/* stack_guard.c — guard pages that cost no memory map (stack_guard.h). */
#include "stack_guard.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

/* Linux's value (uapi asm-generic/mman-common.h), for C libraries whose headers predate it. */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

int stack_guard_install(void *lo, size_t len)
{
    if (madvise(lo, len, MADV_GUARD_INSTALL) == 0) return 0;
    /* EINVAL: a kernel without guard regions (or a mapping they do not apply to) */
    if (errno != EINVAL) return -errno;
    return mprotect(lo, len, PROT_NONE) < 0 ? -errno : 1;
}

/* Probed once: whether a guard region can be installed on a private anonymous page. */
static struct {
    pthread_once_t once;
    int maps;
} probe = {PTHREAD_ONCE_INIT, 1};

static void probe_once(void)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    probe.maps = madvise(p, pg, MADV_GUARD_INSTALL) == 0 ? 0 : 1;
    munmap(p, 2 * pg);
}

int stack_guard_maps(void)
{
    pthread_once(&probe.once, probe_once);
    return probe.maps;
}
