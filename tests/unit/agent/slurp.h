/* slurp.h — the loader tests' program files, read whole (a failure ends the test). */
#ifndef TMPI_TEST_SLURP_H
#define TMPI_TEST_SLURP_H

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"

static inline uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s", path);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    uint8_t *b = malloc((size_t)st.st_size);
    CHECK(b && read(fd, b, (size_t)st.st_size) == st.st_size);
    close(fd);
    *len = (size_t)st.st_size;
    return b;
}

#endif
