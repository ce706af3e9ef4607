/* rank_argv.c — the argument vector each rank's main gets (rank_argv.h). */
#include "rank_argv.h"

#include "memfd_bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int rank_argv_src_init(struct rank_argv_src *src, int argc, char *const *argv)
{
    *src = (struct rank_argv_src){.argc = argc, .argv = argv, .fd = -1};
    src->offset = malloc(((size_t)argc + 1) * sizeof *src->offset);
    if (!src->offset) return -ENOMEM;
    for (int i = 0; i < argc; i++) {
        src->offset[i] = src->bytes;
        src->bytes += strlen(argv[i]) + 1;
    }
    if (src->bytes < RANK_ARGV_SHARE_MIN) return 0;
    int fd = memfd_create("tmpi-argv", MFD_CLOEXEC);
    int r = fd < 0 ? -errno : 0;
    for (int i = 0; i < argc && r == 0; i++)
        r = fd_write_all(fd, argv[i], strlen(argv[i]) + 1);
    if (r < 0) {
        if (fd >= 0) close(fd);
        free(src->offset);
        src->offset = NULL;
        return r;
    }
    src->fd = fd;
    return 0;
}

void rank_argv_src_free(struct rank_argv_src *src)
{
    if (src->fd >= 0) close(src->fd);
    free(src->offset);
    *src = (struct rank_argv_src){.fd = -1};
}

int rank_argv_make(const struct rank_argv_src *src, struct rank_argv *ret)
{
    *ret = (struct rank_argv){0};
    size_t ptrs = ((size_t)src->argc + 1) * sizeof(char *);
    char *block;
    char **v;
    if (src->fd < 0) {
        /* one allocation: the pointer array, then the strings */
        v = malloc(ptrs + src->bytes);
        if (!v) return -ENOMEM;
        block = (char *)v + ptrs;
        for (int i = 0; i < src->argc; i++)
            memcpy(block + src->offset[i], src->argv[i], strlen(src->argv[i]) + 1);
    } else {
        v = malloc(ptrs);
        if (!v) return -ENOMEM;
        block = mmap(NULL, src->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, src->fd, 0);
        if (block == MAP_FAILED) {
            int e = errno;
            free(v);
            return -e;
        }
        ret->map = block;
        ret->map_len = src->bytes;
    }
    /* from the offsets, not the strings: the mapping's pages stay untouched until read */
    for (int i = 0; i < src->argc; i++)
        v[i] = block + src->offset[i];
    v[src->argc] = NULL;
    ret->argv = v;
    return 0;
}

void rank_argv_free(struct rank_argv *ra)
{
    if (ra->map) munmap(ra->map, ra->map_len);
    free(ra->argv);
    *ra = (struct rank_argv){0};
}

int rank_argv_maps(const struct rank_argv_src *src)
{
    return src->fd >= 0 ? 1 : 0;
}
