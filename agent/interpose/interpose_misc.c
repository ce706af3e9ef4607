/* interpose_misc.c — strtok, tmpnam and tempnam for ranks: strtok's place and tmpnam(NULL)'s
 * buffer are the rank's (rank_libc.h), so ranks interleaving them do not overwrite each
 * other's; tempnam reads the rank's own TMPDIR.  Callers that are not ranks get libc's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "interpose_next.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
    void *_Atomic strtok, *_Atomic tmpnam, *_Atomic tempnam;
} next;

EXPORT char *strtok(char *s, const char *delim)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, strtok)(s, delim);
    return strtok_r(s, delim, &r->libc.strtok_next);
}

static int is_dir(const char *d)
{
    struct stat st;
    return d && stat(d, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A name DIR/PFX + 6 random letters and digits that does not exist now (what glibc's tmpnam
 * and tempnam make), into buf.  0, or a negative errno. */
static int free_name(char *buf, size_t len, const char *dir, const char *pfx)
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    size_t dlen = strlen(dir);
    while (dlen > 1 && dir[dlen - 1] == '/')
        dlen--;
    int n = snprintf(buf, len, "%.*s/%sXXXXXX", (int)dlen, dir, pfx);
    if (n < 0 || (size_t)n >= len) return -EINVAL;
    char *x = buf + n - 6;
    /* as many tries as libc's: names are drawn from 62^6, so a clash is rare */
    for (unsigned t = 0; t < TMP_MAX; t++) {
        unsigned char rnd[6];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) return -errno;
        for (int i = 0; i < 6; i++)
            x[i] = set[rnd[i] % (sizeof set - 1)];
        struct stat st;
        if (lstat(buf, &st) < 0) {
            if (errno == ENOENT) return 0;
            return -errno;
        }
    }
    return -EEXIST;
}

EXPORT char *tmpnam(char s[L_tmpnam])
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, tmpnam)(s);
    char name[L_tmpnam];
    int rc = free_name(name, sizeof name, P_tmpdir, "file");
    if (rc < 0) {
        errno = -rc;
        return NULL;
    }
    char *out = s ? s : r->libc.tmpnam;
    memcpy(out, name, strlen(name) + 1);
    return out;
}

EXPORT char *tempnam(const char *dir, const char *pfx)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, tempnam)(dir, pfx);
    /* TMPDIR first, then dir, then P_tmpdir, then /tmp: the first that is a directory */
    const char *env = getenv("TMPDIR");
    const char *d = is_dir(env) ? env : is_dir(dir) ? dir : is_dir(P_tmpdir) ? P_tmpdir : NULL;
    if (!d && is_dir("/tmp")) d = "/tmp";
    if (!d) {
        errno = ENOENT;
        return NULL;
    }
    /* at most 5 bytes of the prefix, "file" without one */
    char p[6];
    snprintf(p, sizeof p, "%s", pfx && *pfx ? pfx : "file");
    size_t len = strlen(d) + sizeof p + 8;
    char *name = malloc(len);
    if (!name) return NULL;
    int rc = free_name(name, len, d, p);
    if (rc < 0) {
        free(name);
        errno = -rc;
        return NULL;
    }
    return name;
}
