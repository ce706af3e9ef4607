/* interpose.h — libc functions tmpid overrides for rank threads.
 *
 * tmpid is linked with --export-dynamic, so the modules (loaded RTLD_LOCAL) bind exit, abort,
 * printf, write, getenv ... to the definitions in the executable.  Each override checks
 * whether the calling thread belongs to a rank: if not, it forwards to the real libc function
 * found with dlsym(RTLD_NEXT); if so, it ends the rank instead of the process, or routes the
 * output to the rank's launcher. */
#ifndef TMPI_AGENT_INTERPOSE_H
#define TMPI_AGENT_INTERPOSE_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

/* Resolves the real functions behind the standard-input overrides (interpose_stdin.c); part
 * of interpose_init. */
void interpose_stdin_resolve(void);

/* The real libc entry points, resolved once by interpose_init(). */
struct interpose_real {
    void (*exit)(int) __attribute__((noreturn));
    void (*abort)(void) __attribute__((noreturn));
    ssize_t (*write)(int, const void *, size_t);
    int (*vfprintf)(FILE *, const char *, va_list);
    int (*vdprintf)(int, const char *, va_list);
    int (*fputs)(const char *, FILE *);
    int (*puts)(const char *);
    int (*fputc)(int, FILE *);
    size_t (*fwrite)(const void *, size_t, size_t, FILE *);
    int (*fflush)(FILE *);
    void (*perror)(const char *);
    char *(*getenv)(const char *);
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    void (*(*signal)(int, void (*)(int)))(int);
};

/* The next definition of libc's name (dlsym RTLD_NEXT) as type, looked up once per call site.
 * A benign race: every thread stores the same pointer. */
#define INTERPOSE_REAL(type, name)                                                                 \
    ({                                                                                             \
        static void *_Atomic real_fn_;                                                             \
        void *f_ = atomic_load_explicit(&real_fn_, memory_order_relaxed);                          \
        if (!f_) {                                                                                 \
            f_ = dlsym(RTLD_NEXT, #name);                                                          \
            atomic_store_explicit(&real_fn_, f_, memory_order_relaxed);                            \
        }                                                                                          \
        (type) f_;                                                                                 \
    })

/* Resolves the real functions.  Must run before any other thread starts.  0 or -ENOENT. */
int interpose_init(void);
const struct interpose_real *interpose_real(void);

/* write() that never goes to a rank's launcher (for the agent's own log). */
ssize_t interpose_real_write(int fd, const void *buf, size_t n);

#endif
