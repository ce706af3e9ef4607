/* relax.h — the pause a spinning thread takes between looks (libtmpi's waits and the agent's
 * idle carriers): lets the sibling hyper-thread run and saves power without a system call. */
#ifndef TMPI_PROTO_RELAX_H
#define TMPI_PROTO_RELAX_H

static inline void tm_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

#endif
