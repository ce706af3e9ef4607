/* memfd_bytes.c — whole writes and memfds holding given bytes (memfd_bytes.h). */
#include "memfd_bytes.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

int fd_write_all(int fd, const void *bytes, size_t size)
{
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, (const char *)bytes + off, size - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? -errno : -EIO;
        off += (size_t)n;
    }
    return 0;
}

int memfd_from_bytes(const char *name, const void *bytes, size_t size)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -errno;
    int r = fd_write_all(fd, bytes, size);
    if (r < 0) {
        close(fd);
        return r;
    }
    return fd;
}
