/* io_posix.c — moving segment lists to and from the file (io.h): preadv/pwritev over runs of
 * file-contiguous segments (IOV_MAX at a time), short transfers continued, end of file, read
 * sieving, and atomic mode's byte-range locks.  A carried rank's long moves run on the job's
 * file system threads (io_pool.h). */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "io.h"
#include "io_pool.h"
#include "lib.h"

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* Transfers iov (n entries, `want` bytes) at off, continuing after short transfers.  *got:
 * bytes moved; a read stops at end of file.  0 or errno. */
static int xfer(int fd, int write, struct iovec *iov, int n, int64_t off, size_t want, size_t *got)
{
    size_t moved = 0;
    while (moved < want) {
        ssize_t r = write ? pwritev(fd, iov, n, (off_t)off) : preadv(fd, iov, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR) continue;
            *got = moved;
            return errno;
        }
        if (r == 0) {
            if (write) {
                *got = moved;
                return EIO;
            }
            break; /* end of file */
        }
        moved += (size_t)r;
        off += r;
        /* skip what was moved */
        while (n && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
    *got = moved;
    return 0;
}

/* Segments v[0..n) grouped into file-contiguous runs of at most IOV_MAX. */
static int runs(int fd, int write, const struct tm_io_seg *v, size_t n, size_t *done)
{
    struct iovec iov[IOV_MAX < 1024 ? IOV_MAX : 1024];
    const int max = (int)(sizeof iov / sizeof iov[0]);
    *done = 0;
    size_t i = 0;
    while (i < n) {
        int k = 0;
        size_t want = 0;
        int64_t off = v[i].off;
        while (i + (size_t)k < n && k < max &&
               (k == 0 || v[i + (size_t)k].off == off + (int64_t)want)) {
            iov[k].iov_base = v[i + (size_t)k].mem;
            iov[k].iov_len = v[i + (size_t)k].len;
            want += v[i + (size_t)k].len;
            k++;
        }
        size_t got;
        int e = xfer(fd, write, iov, k, off, want, &got);
        *done += got;
        if (e) return tm_io_errno_class(e);
        /* a short read is the end of file; later runs may still start before it (an
         * aggregator's pieces of several ranks overlap) */
        i += (size_t)k;
    }
    return MPI_SUCCESS;
}

/* Reads v[i..j) (gaps between them at most TM_IO_SIEVE_GAP, span at most `sieve`) with one
 * pread of their span into buf, then copies out.  *done as runs(). */
static int sieve_read(int fd, const struct tm_io_seg *v, size_t i, size_t j, char *buf,
                      size_t *done)
{
    int64_t lo = v[i].off, hi = v[j - 1].off + (int64_t)v[j - 1].len;
    struct iovec one = {buf, (size_t)(hi - lo)};
    size_t got;
    int e = xfer(fd, 0, &one, 1, lo, (size_t)(hi - lo), &got);
    *done = 0;
    if (e) return tm_io_errno_class(e);
    for (size_t k = i; k < j; k++) {
        int64_t at = v[k].off - lo;
        if (at >= (int64_t)got) break;
        size_t len = v[k].len;
        if (at + (int64_t)len > (int64_t)got) len = (size_t)((int64_t)got - at);
        memcpy(v[k].mem, buf + at, len);
        *done += len;
        if (len < v[k].len) break;
    }
    return MPI_SUCCESS;
}

static int pread_segs(int fd, const struct tm_io_seg *v, size_t n, size_t sieve, size_t *done)
{
    *done = 0;
    if (sieve == 0 || n < 4) return runs(fd, 0, v, n, done);
    char *buf = NULL;
    size_t i = 0;
    int err = MPI_SUCCESS;
    while (i < n && !err) {
        /* the longest stretch worth one read: small gaps, bounded span, ascending */
        size_t j = i + 1;
        while (j < n && v[j].off >= v[j - 1].off + (int64_t)v[j - 1].len &&
               (size_t)(v[j].off - (v[j - 1].off + (int64_t)v[j - 1].len)) <= TM_IO_SIEVE_GAP &&
               (size_t)(v[j].off + (int64_t)v[j].len - v[i].off) <= sieve)
            j++;
        size_t got, want = 0;
        for (size_t k = i; k < j; k++)
            want += v[k].len;
        if (j - i >= 4) {
            if (!buf && !(buf = malloc(sieve))) return runs(fd, 0, v + i, n - i, done);
            err = sieve_read(fd, v, i, j, buf, &got);
        } else {
            err = runs(fd, 0, v + i, j - i, &got);
        }
        *done += got;
        (void)want;
        i = j;
    }
    free(buf);
    return err;
}

/* A segment list's move as a task of the job's file system threads (io_pool.h): a carried
 * rank's long read or write leaves its carrier. */
struct segs_task {
    struct tm_iop_task t; /* first */
    int fd, write;
    const struct tm_io_seg *v;
    size_t n, sieve, *done;
};

static int segs_run(struct tm_iop_task *t)
{
    struct segs_task *s = (struct segs_task *)t;
    return s->write ? runs(s->fd, 1, s->v, s->n, s->done)
                    : pread_segs(s->fd, s->v, s->n, s->sieve, s->done);
}

static int segs_move(int fd, int write, const struct tm_io_seg *v, size_t n, size_t sieve,
                     size_t *done)
{
    struct segs_task s = {{.run = segs_run}, fd, write, v, n, sieve, done};
    struct tm_rank *me = tm_self();
    if (!me) return segs_run(&s.t);
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += v[i].len;
    return tm_iop_call(me, &s.t, bytes);
}

int tm_io_pwrite_segs(int fd, const struct tm_io_seg *v, size_t n, size_t *done)
{
    return segs_move(fd, 1, v, n, 0, done);
}

int tm_io_pread_segs(int fd, const struct tm_io_seg *v, size_t n, size_t sieve, size_t *done)
{
    return segs_move(fd, 0, v, n, sieve, done);
}

int tm_io_lock(int fd, int write, int64_t lo, int64_t hi)
{
    struct flock fl = {.l_type = write ? F_WRLCK : F_RDLCK,
                       .l_whence = SEEK_SET,
                       .l_start = (off_t)lo,
                       .l_len = (off_t)(hi - lo)};
    /* F_OFD_SETLKW would block a carrier thread whose other ranks may hold the lock: poll, and
     * sleep between tries (a carried rank parks in nanosleep). */
    struct timespec nap = {0, 20000};
    for (;;) {
        if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return MPI_SUCCESS;
        if (errno != EAGAIN && errno != EACCES && errno != EINTR) return tm_io_errno_class(errno);
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 1000000) nap.tv_nsec *= 2;
    }
}

void tm_io_unlock(int fd, int64_t lo, int64_t hi)
{
    struct flock fl = {
        .l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = (off_t)lo, .l_len = (off_t)(hi - lo)};
    (void)fcntl(fd, F_OFD_SETLK, &fl);
}
