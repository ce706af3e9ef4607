#include "keyfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int keyfile_load(const char *path, struct mesh_key *ret, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int r = -errno;
        snprintf(err, errlen, "cannot open key file %s: %s", path, strerror(-r));
        return r;
    }
    struct stat st;
    int r = 0;
    if (fstat(fd, &st) < 0) {
        r = -errno;
        snprintf(err, errlen, "cannot stat key file %s: %s", path, strerror(-r));
    } else if (!S_ISREG(st.st_mode)) {
        r = -EINVAL;
        snprintf(err, errlen, "key file %s is not a regular file", path);
    } else if (st.st_mode & (S_IROTH | S_IWOTH)) {
        r = -EPERM;
        snprintf(err, errlen, "key file %s is accessible to other users (mode %03o); chmod 600 it",
                 path, (unsigned)(st.st_mode & 0777));
    } else if (st.st_size < KEYFILE_MIN) {
        r = -EINVAL;
        snprintf(err, errlen,
                 "key file %s has %lld bytes; at least %d random bytes are needed "
                 "(head -c 32 /dev/urandom)",
                 path, (long long)st.st_size, KEYFILE_MIN);
    } else if (st.st_size > KEYFILE_MAX) {
        r = -EFBIG;
        snprintf(err, errlen, "key file %s is larger than %d bytes", path, KEYFILE_MAX);
    }
    if (r < 0) {
        close(fd);
        return r;
    }
    uint8_t buf[KEYFILE_MAX];
    ssize_t n = read(fd, buf, sizeof buf);
    int saved = errno;
    close(fd);
    if (n < KEYFILE_MIN) {
        snprintf(err, errlen, "cannot read key file %s: %s", path,
                 n < 0 ? strerror(saved) : "short read");
        sodium_memzero(buf, sizeof buf);
        return n < 0 ? -saved : -EIO;
    }
    mesh_key_derive(ret, buf, (size_t)n);
    sodium_memzero(buf, sizeof buf);
    return 0;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int keyfile_read_fd(int fd, struct mesh_key *ret, char *err, size_t errlen)
{
    uint8_t buf[KEYFILE_MAX];
    size_t ndigits = 0;
    int r = 0;
    /* One byte at a time: whatever follows the newline is not ours to consume. */
    for (;;) {
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            r = -errno;
            snprintf(err, errlen, "cannot read the key from fd %d: %s", fd, strerror(-r));
            break;
        }
        if (n == 0) {
            r = -EIO;
            snprintf(err, errlen, "fd %d ended before the key's newline", fd);
            break;
        }
        if (c == '\n') break;
        int v = hex_value(c);
        if (v < 0) {
            r = -EINVAL;
            snprintf(err, errlen, "the key on fd %d is not hexadecimal digits", fd);
            break;
        }
        if (ndigits / 2 >= KEYFILE_MAX) {
            r = -EFBIG;
            snprintf(err, errlen, "the key on fd %d is longer than %d bytes", fd, KEYFILE_MAX);
            break;
        }
        if (ndigits % 2 == 0)
            buf[ndigits / 2] = (uint8_t)(v << 4);
        else
            buf[ndigits / 2] |= (uint8_t)v;
        ndigits++;
    }
    if (r == 0 && (ndigits % 2 || ndigits / 2 < KEYFILE_MIN)) {
        r = -EINVAL;
        snprintf(err, errlen,
                 "the key on fd %d has %zu hex digits; an even number, at least %d, "
                 "is needed",
                 fd, ndigits, 2 * KEYFILE_MIN);
    }
    if (r == 0) mesh_key_derive(ret, buf, ndigits / 2);
    sodium_memzero(buf, sizeof buf);
    return r;
}
