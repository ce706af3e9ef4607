#include "loader.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "module_marker.h"

static int write_all(int fd, const uint8_t *p, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t w = pwrite(fd, p + off, n - off, (off_t)off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        off += (size_t)w;
    }
    return 0;
}

int image_load(const uint8_t *bytes, size_t size, const char *label, struct image *ret,
               char *err, size_t errlen)
{
    *ret = (struct image){.fd = -1};
    int fd = memfd_create(label, MFD_CLOEXEC);
    if (fd < 0) {
        int r = -errno;
        snprintf(err, errlen, "memfd_create: %s", strerror(-r));
        return r;
    }
    int r = write_all(fd, bytes, size);
    if (r < 0) {
        snprintf(err, errlen, "writing the program image: %s", strerror(-r));
        close(fd);
        return r;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "%s", dlerror());
        close(fd);
        return -ENOEXEC;
    }
    if (!dlsym(h, TMPI_MODULE_SYMBOL)) {
        snprintf(err, errlen, "not a TMPI program (build it with tmpicc)");
        dlclose(h);
        close(fd);
        return -ENOEXEC;
    }
    void *m = dlsym(h, "main");
    if (!m) {
        snprintf(err, errlen, "the program exports no main()");
        dlclose(h);
        close(fd);
        return -ENOEXEC;
    }
    ret->handle = h;
    ret->fd = fd;
    *(void **)&ret->main = m;
    return 0;
}

void image_unload(struct image *img)
{
    if (img->handle)
        dlclose(img->handle);
    if (img->fd >= 0)
        close(img->fd);
    *img = (struct image){.fd = -1};
}
