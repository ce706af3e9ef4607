/* fd_write.c — whole writes to a blocking file descriptor (fd_write.h). */
#include "fd_write.h"

#include <errno.h>
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
