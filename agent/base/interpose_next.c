/* interpose_next.c — the libc functions behind the overrides (interpose_next.h). */
#include "interpose_next.h"

#include <dlfcn.h>
#include <stdatomic.h>

void *interpose_next(void *_Atomic *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (f) return f;
    /* racing threads all store the same address */
    f = dlsym(RTLD_NEXT, name);
    atomic_store_explicit(slot, f, memory_order_release);
    return f;
}
