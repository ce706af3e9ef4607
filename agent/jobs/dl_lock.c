#include "dl_lock.h"

#include <dlfcn.h>
#include <pthread.h>

/* Recursive like ld.so's own: a constructor may dlopen. */
static struct {
    pthread_mutex_t mu;
} dl_order = {PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP};

void *dl_open(const char *path, int flags)
{
    pthread_mutex_lock(&dl_order.mu);
    void *h = dlopen(path, flags);
    pthread_mutex_unlock(&dl_order.mu);
    return h;
}

void dl_close(void *h)
{
    pthread_mutex_lock(&dl_order.mu);
    dlclose(h);
    pthread_mutex_unlock(&dl_order.mu);
}
