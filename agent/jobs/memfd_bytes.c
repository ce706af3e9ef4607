/* memfd_bytes.c — whole writes and memfds holding given bytes (memfd_bytes.h). */
#include "memfd_bytes.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

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
