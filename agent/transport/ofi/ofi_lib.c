/* ofi_lib.c — libfabric loaded on first use (ofi_lib.h says why it is not linked). */
#include "ofi_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

/* The loaded library: written once under `once`, read-only afterwards. */
static struct {
    pthread_once_t once;
    struct ofi_lib calls;
    int (*real_getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                        struct fi_info **);
    int ok;
    char why[256];
} lib = {.once = PTHREAD_ONCE_INIT};

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p && !lib.why[0]) snprintf(lib.why, sizeof lib.why, "libfabric.so.1 has no %s", name);
    return p;
}

/* Signals whose disposition a rank's crash (and the job host's fault handling) relies on. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define NFATAL (sizeof fatal_signals / sizeof *fatal_signals)

static void fatal_save(struct sigaction before[NFATAL])
{
    for (size_t i = 0; i < NFATAL; i++)
        sigaction(fatal_signals[i], NULL, &before[i]);
}

static void fatal_restore(const struct sigaction before[NFATAL])
{
    for (size_t i = 0; i < NFATAL; i++)
        sigaction(fatal_signals[i], &before[i], NULL);
}

/* fi_getinfo loads and starts the providers: their start may install handlers too. */
static int guarded_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                           const struct fi_info *hints, struct fi_info **info)
{
    struct sigaction before[NFATAL];
    fatal_save(before);
    int r = lib.real_getinfo(version, node, service, flags, hints, info);
    fatal_restore(before);
    return r;
}

static void load(void)
{
    /* A provider library's constructor (libinfinipath's) installs a SIGSEGV handler that prints
     * a backtrace and exits 1: a rank's segfault would then end as "exited with code 1"
     * instead of signal 11.  The dispositions from before the load are put back. */
    struct sigaction before[NFATAL];
    fatal_save(before);
    /* RTLD_LOCAL: the providers' symbols stay out of the programs' lookup scope */
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    fatal_restore(before);
    if (!h) {
        const char *e = dlerror();
        snprintf(lib.why, sizeof lib.why, "cannot load libfabric: %s", e ? e : "unknown error");
        return;
    }
    lib.real_getinfo = (int (*)(uint32_t, const char *, const char *, uint64_t,
                                const struct fi_info *, struct fi_info **))sym(h, "fi_getinfo");
    lib.calls.getinfo = guarded_getinfo;
    lib.calls.freeinfo = (void (*)(struct fi_info *))sym(h, "fi_freeinfo");
    lib.calls.dupinfo = (struct fi_info * (*)(const struct fi_info *)) sym(h, "fi_dupinfo");
    lib.calls.fabric =
        (int (*)(struct fi_fabric_attr *, struct fid_fabric **, void *))sym(h, "fi_fabric");
    lib.calls.strerror = (const char *(*)(int))sym(h, "fi_strerror");
    lib.ok = lib.real_getinfo && lib.calls.freeinfo && lib.calls.dupinfo && lib.calls.fabric &&
             lib.calls.strerror;
    if (!lib.ok) dlclose(h);
}

const struct ofi_lib *ofi_lib_get(char *why, size_t why_len)
{
    pthread_once(&lib.once, load);
    if (lib.ok) return &lib.calls;
    if (why) snprintf(why, why_len, "%s", lib.why);
    return NULL;
}
