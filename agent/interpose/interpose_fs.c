/* interpose_fs.c — relative paths of rank threads resolve against the job's directory.
 *
 * All jobs share the agent's process, hence one working directory; each job has its own
 * (the launcher's cwd).  The common path-taking calls of C programs prefix a relative path
 * with the job's directory when the caller is a rank.  chdir() by a rank is refused: it would
 * move every job. */
/* Both the plain and the 64 names are defined here: no header renaming. */
#undef _FILE_OFFSET_BITS
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

/* Returns the path to use: unchanged for agent threads and absolute paths, else joined with
 * the job's directory into buf.  NULL (errno ENAMETOOLONG) if it does not fit. */
static const char *rank_path(const char *path, char buf[PATH_MAX])
{
    struct rank *r = rank_current();
    if (!r || !path || path[0] == '/' || path[0] == '\0') return path;
    int n = snprintf(buf, PATH_MAX, "%s/%s", r->app->cwd, path);
    if (n < 0 || n >= PATH_MAX) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return buf;
}

/* The next definition of a libc function, looked up once per call site. */
#define REAL(type, name) ((type)real_sym(#name))

static void *real_sym(const char *name)
{
    /* dlsym is thread-safe; these calls are not on any hot path */
    return dlsym(RTLD_NEXT, name);
}

#define PATH_OR_FAIL(p, buf, fail)                                                                 \
    const char *p = rank_path(path, buf);                                                          \
    if (!p) return fail

/* The mode argument exists only when the flags create a file. */
#define OPEN_MODE(flags, last, ret_mode)                                                           \
    do {                                                                                           \
        *(ret_mode) = 0;                                                                           \
        if ((flags) & (O_CREAT | O_TMPFILE)) {                                                     \
            va_list ap_;                                                                           \
            va_start(ap_, last);                                                                   \
            *(ret_mode) = (mode_t)va_arg(ap_, int);                                                \
            va_end(ap_);                                                                           \
        }                                                                                          \
    } while (0)

typedef int (*openat_fn)(int, const char *, int, ...);

/* open, open64 and openat all land here: dirfd AT_FDCWD for the first two. */
static int open_in_job(const char *real_name, int dirfd, const char *path, int flags, mode_t mode)
{
    char buf[PATH_MAX];
    const char *p = path;
    if (dirfd == AT_FDCWD && !(p = rank_path(path, buf))) return -1;
    if (strcmp(real_name, "openat") == 0) return REAL(openat_fn, openat)(dirfd, p, flags, mode);
    return ((int (*)(const char *, int, ...))real_sym(real_name))(p, flags, mode);
}

EXPORT int open(const char *path, int flags, ...)
{
    mode_t mode;
    OPEN_MODE(flags, flags, &mode);
    return open_in_job("open", AT_FDCWD, path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
    mode_t mode;
    OPEN_MODE(flags, flags, &mode);
    return open_in_job("open64", AT_FDCWD, path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    mode_t mode;
    OPEN_MODE(flags, flags, &mode);
    return open_in_job("openat", dirfd, path, flags, mode);
}

EXPORT int creat(const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, -1);
    return REAL(int (*)(const char *, mode_t), creat)(p, mode);
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, NULL);
    return REAL(FILE * (*)(const char *, const char *), fopen)(p, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, NULL);
    return REAL(FILE * (*)(const char *, const char *), fopen64)(p, mode);
}

EXPORT FILE *freopen(const char *path, const char *mode, FILE *f)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, NULL);
    return REAL(FILE * (*)(const char *, const char *, FILE *), freopen)(p, mode, f);
}

EXPORT int access(const char *path, int how)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, -1);
    return REAL(int (*)(const char *, int), access)(p, how);
}

EXPORT int stat(const char *path, struct stat *st)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, -1);
    return REAL(int (*)(const char *, struct stat *), stat)(p, st);
}

EXPORT int lstat(const char *path, struct stat *st)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, -1);
    return REAL(int (*)(const char *, struct stat *), lstat)(p, st);
}

EXPORT int mkdir(const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, -1);
    return REAL(int (*)(const char *, mode_t), mkdir)(p, mode);
}

EXPORT int unlink(const char *path)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, -1);
    return REAL(int (*)(const char *), unlink)(p);
}

EXPORT int remove(const char *path)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, -1);
    return REAL(int (*)(const char *), remove)(p);
}

EXPORT int rename(const char *from, const char *to)
{
    char b1[PATH_MAX], b2[PATH_MAX];
    const char *f = rank_path(from, b1), *t = rank_path(to, b2);
    if (!f || !t) return -1;
    return REAL(int (*)(const char *, const char *), rename)(f, t);
}

EXPORT DIR *opendir(const char *path)
{
    char buf[PATH_MAX];
    PATH_OR_FAIL(p, buf, NULL);
    return REAL(DIR * (*)(const char *), opendir)(p);
}

EXPORT int chdir(const char *path)
{
    if (rank_current()) {
        errno = EPERM;
        return -1;
    }
    return REAL(int (*)(const char *), chdir)(path);
}

/* getcwd of a rank is its job's directory. */
EXPORT char *getcwd(char *buf, size_t size)
{
    struct rank *r = rank_current();
    if (!r) return REAL(char *(*)(char *, size_t), getcwd)(buf, size);
    size_t n = strlen(r->app->cwd) + 1;
    if (!buf) {
        size_t cap = size > n ? size : n;
        buf = malloc(cap);
        if (!buf) return NULL;
        size = cap;
    }
    if (size < n) {
        errno = ERANGE;
        return NULL;
    }
    memcpy(buf, r->app->cwd, n);
    return buf;
}
