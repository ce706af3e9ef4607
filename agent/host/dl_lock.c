#include "dl_lock.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "memfd_bytes.h"

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

int dl_open_bytes(const uint8_t *bytes, size_t size, const char *label, void **ret, char *err,
                  size_t errlen)
{
    int fd = memfd_from_bytes(label, bytes, size);
    if (fd < 0) {
        snprintf(err, errlen, "writing the program image into a memfd: %s", strerror(-fd));
        return fd;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    *ret = dl_open(path, RTLD_NOW | RTLD_LOCAL);
    if (!*ret) {
        snprintf(err, errlen, "%s", dlerror());
        close(fd);
        return -ENOEXEC;
    }
    return fd;
}

void dl_close(void *h)
{
    pthread_mutex_lock(&dl_order.mu);
    dlclose(h);
    pthread_mutex_unlock(&dl_order.mu);
}
