/* ofi_lib.c — libfabric loaded on first use (ofi_lib.h says why it is not linked). */
#include "ofi_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* The loaded library: written once under `once`, read-only afterwards. */
static struct {
    pthread_once_t once;
    struct ofi_lib calls;
    int ok;
    char why[256];
} lib = {.once = PTHREAD_ONCE_INIT};

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p && !lib.why[0]) snprintf(lib.why, sizeof lib.why, "libfabric.so.1 has no %s", name);
    return p;
}

static void load(void)
{
    /* RTLD_LOCAL: the providers' symbols stay out of the programs' lookup scope */
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(lib.why, sizeof lib.why, "cannot load libfabric: %s", e ? e : "unknown error");
        return;
    }
    lib.calls.getinfo = (int (*)(uint32_t, const char *, const char *, uint64_t,
                                 const struct fi_info *, struct fi_info **))sym(h, "fi_getinfo");
    lib.calls.freeinfo = (void (*)(struct fi_info *))sym(h, "fi_freeinfo");
    lib.calls.dupinfo = (struct fi_info * (*)(const struct fi_info *)) sym(h, "fi_dupinfo");
    lib.calls.fabric =
        (int (*)(struct fi_fabric_attr *, struct fid_fabric **, void *))sym(h, "fi_fabric");
    lib.calls.strerror = (const char *(*)(int))sym(h, "fi_strerror");
    lib.ok = lib.calls.getinfo && lib.calls.freeinfo && lib.calls.dupinfo && lib.calls.fabric &&
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
