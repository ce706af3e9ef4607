/* fuzz_config.c — tmpid.conf: the INI file and every key's value parser. */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("tmpid.conf", 0);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct agent_config c;
    if (config_defaults(&c) == 0) {
        config_load(&c, path);
        config_free(&c);
    }
    close(fd);
    return 0;
}
