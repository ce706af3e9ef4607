/* oom_score.c — see oom_score.h: /proc/self/oom_score_adj read and written. */
#include "oom_score.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define OOM_SCORE_FILE "/proc/self/oom_score_adj"

int oom_score_get(int *ret)
{
    char buf[16];
    int fd = open(OOM_SCORE_FILE, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = n < 0 ? -errno : 0;
    close(fd);
    if (e < 0) return e;
    buf[n] = 0;
    char *end;
    long v = strtol(buf, &end, 10);
    if (end == buf || (*end && *end != '\n') || v < OOM_SCORE_ADJ_MIN || v > OOM_SCORE_ADJ_MAX)
        return -EIO;
    *ret = (int)v;
    return 0;
}

int oom_score_set(int value)
{
    if (value < OOM_SCORE_ADJ_MIN || value > OOM_SCORE_ADJ_MAX) return -ERANGE;
    char buf[16];
    int len = snprintf(buf, sizeof buf, "%d", value);
    int fd = open(OOM_SCORE_FILE, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t n = write(fd, buf, (size_t)len);
    int r = n == len ? 0 : n < 0 ? -errno : -EIO;
    close(fd);
    return r;
}
