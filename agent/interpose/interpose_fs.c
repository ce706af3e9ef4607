/* interpose_fs.c — a rank's working directory and umask are its own (rank_proc.h).
 *
 * All jobs' ranks share the job host's process, hence one working directory and one umask.
 * Each rank has its own of both instead: chdir, fchdir, getcwd, get_current_dir_name and
 * getwd work on the rank's directory; every path-taking call of libc that programs bind
 * resolves a relative path (or AT_FDCWD) against it; and the calls that create files apply
 * the rank's umask() (interpose_proc.c has umask itself).  Calls libc makes inside itself do
 * not come here: docs/USER.md "What a rank shares with the other ranks of its node" lists
 * what follows (nftw, glob, dlopen of a relative path, posix_spawn's children ...).
 *
 * Agent threads, and a rank before its state is set up (rank_proc_start), get the process's
 * directory (the job's) and umask, as before. */
/* Both the plain and the 64 names are defined here: no header renaming. */
#undef _FILE_OFFSET_BITS
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <utime.h>

#include "interpose.h"
#include "job.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

/* Names programs bind that no public header declares: _FORTIFY_SOURCE's checked forms and the
 * stat and mknod entry points of glibc before 2.33. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev);
int __xmknodat(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev);
int __xstat(int ver, const char *path, struct stat *st);
int __xstat64(int ver, const char *path, struct stat64 *st);
int __lxstat(int ver, const char *path, struct stat *st);
int __lxstat64(int ver, const char *path, struct stat64 *st);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags);
ssize_t __readlink_chk(const char *path, char *buf, size_t n, size_t buflen);
ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t n, size_t buflen);
char *__realpath_chk(const char *path, char *resolved, size_t len);
char *__getcwd_chk(char *buf, size_t size, size_t buflen);
char *__getwd_chk(char *buf, size_t buflen);

/* The calling rank if its state is set up, else NULL. */
static struct rank *fs_rank(void)
{
    struct rank *r = rank_current();
    return r && r->proc.ready ? r : NULL;
}

/* The path to use: unchanged for agent threads and absolute paths, else joined with the
 * rank's directory into buf.  NULL (errno ENAMETOOLONG) if it does not fit. */
static const char *rank_path(const char *path, char buf[PATH_MAX])
{
    struct rank *r = rank_current();
    if (!r || !path || path[0] == '/' || path[0] == '\0') return path;
    int rc;
    if (r->proc.ready) {
        rc = rank_proc_join(&r->proc, path, buf);
    } else {
        int n = snprintf(buf, PATH_MAX, "%s/%s", r->app->cwd, path);
        rc = n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
    }
    if (rc < 0) {
        errno = -rc;
        return NULL;
    }
    return buf;
}

/* The same for the *at calls: only AT_FDCWD means the working directory. */
static const char *at_path(int dirfd, const char *path, char buf[PATH_MAX])
{
    return dirfd == AT_FDCWD ? rank_path(path, buf) : path;
}

/* With AT_EMPTY_PATH an empty path names dirfd itself: for AT_FDCWD, the rank's directory. */
static const char *at_path_flags(int dirfd, const char *path, int flags, char buf[PATH_MAX])
{
    if (dirfd == AT_FDCWD && (flags & AT_EMPTY_PATH) && path && !path[0])
        return rank_path(".", buf);
    return at_path(dirfd, path, buf);
}

/* A function whose first argument is a path: the path resolved, the rest passed on. */
#define PATH_CALL(ret, fail, name, decl, call)                                                     \
    EXPORT ret name decl                                                                           \
    {                                                                                              \
        char buf_[PATH_MAX];                                                                       \
        const char *p = rank_path(path, buf_);                                                     \
        if (!p) return fail;                                                                       \
        return INTERPOSE_REAL(ret(*) decl, name) call;                                             \
    }

/* One whose first two arguments are a directory fd and a path. */
#define AT_CALL(ret, fail, name, decl, call)                                                       \
    EXPORT ret name decl                                                                           \
    {                                                                                              \
        char buf_[PATH_MAX];                                                                       \
        const char *p = at_path(dirfd, path, buf_);                                                \
        if (!p) return fail;                                                                       \
        return INTERPOSE_REAL(ret(*) decl, name) call;                                             \
    }

/* ---- creating files: the rank's umask ---- */

typedef int (*openat_fn)(int, const char *, int, ...);

static openat_fn real_openat(void)
{
    return INTERPOSE_REAL(openat_fn, openat);
}

/* openat of a rank with the rank's umask applied to a file it creates.  The kernel applies
 * the process's (host_umask) as well: when that would take bits the rank keeps, the file is
 * created with O_EXCL, so that we know it is new, and then given its mode (fchmod); a file
 * that exists is opened without O_CREAT.  A dangling symlink (O_EXCL refuses it, the plain
 * open finds nothing) is created through with the kernel's umask. */
static int open_create(int dirfd, const char *p, int flags, mode_t mode)
{
    struct rank *r = fs_rank();
    int tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
    if (!r || !((flags & O_CREAT) || tmpfile)) return real_openat()(dirfd, p, flags, mode);
    int fix;
    mode_t want = rank_proc_mode(&r->proc, mode, &fix);
    if (!fix) return real_openat()(dirfd, p, flags, want);
    if (tmpfile || (flags & O_EXCL)) {
        int fd = real_openat()(dirfd, p, flags, want);
        if (fd >= 0) (void)fchmod(fd, want);
        return fd;
    }
    for (int tries = 0; tries < 4; tries++) {
        int fd = real_openat()(dirfd, p, flags | O_EXCL, want);
        if (fd >= 0) {
            (void)fchmod(fd, want);
            return fd;
        }
        if (errno != EEXIST) return -1;
        fd = real_openat()(dirfd, p, flags & ~O_CREAT, 0);
        if (fd >= 0 || errno != ENOENT) return fd;
    }
    return real_openat()(dirfd, p, flags, want);
}

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

static int open_at(int dirfd, const char *path, int flags, mode_t mode)
{
    char buf[PATH_MAX];
    const char *p = at_path(dirfd, path, buf);
    if (!p) return -1;
    return open_create(dirfd, p, flags, mode);
}

EXPORT int open(const char *path, int flags, ...)
{
    mode_t mode;
    OPEN_MODE(flags, flags, &mode);
    return open_at(AT_FDCWD, path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
    mode_t mode;
    OPEN_MODE(flags, flags, &mode);
    return open_at(AT_FDCWD, path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    mode_t mode;
    OPEN_MODE(flags, flags, &mode);
    return open_at(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    mode_t mode;
    OPEN_MODE(flags, flags, &mode);
    return open_at(dirfd, path, flags, mode);
}

/* _FORTIFY_SOURCE's forms, for flags without O_CREAT (libc's own check stays in force). */
PATH_CALL(int, -1, __open_2, (const char *path, int flags), (p, flags))
PATH_CALL(int, -1, __open64_2, (const char *path, int flags), (p, flags))
AT_CALL(int, -1, __openat_2, (int dirfd, const char *path, int flags), (dirfd, p, flags))
AT_CALL(int, -1, __openat64_2, (int dirfd, const char *path, int flags), (dirfd, p, flags))

EXPORT int creat(const char *path, mode_t mode)
{
    return open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int creat64(const char *path, mode_t mode)
{
    return open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* After mkdir, mkfifo or mknod made p with the kernel's umask: the rank's mode (a directory
 * keeps the set-group-ID bit its parent gave it).  0, or -1 with errno when the new object
 * cannot be given it (then it exists with the job host's umask: the call reports that). */
static int fix_mode(const char *p, int dirfd, mode_t want)
{
    struct stat st;
    if (fstatat(dirfd, p, &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
    return fchmodat(dirfd, p, want | (st.st_mode & S_ISGID), 0);
}

typedef int (*mkdirat_fn)(int, const char *, mode_t);
typedef int (*mknodat_fn)(int, const char *, mode_t, dev_t);

static int mkdir_in(int dirfd, const char *path, mode_t mode)
{
    char buf[PATH_MAX];
    const char *p = at_path(dirfd, path, buf);
    if (!p) return -1;
    struct rank *r = fs_rank();
    int fix = 0;
    if (r) mode = rank_proc_mode(&r->proc, mode, &fix);
    int rc = INTERPOSE_REAL(mkdirat_fn, mkdirat)(dirfd, p, mode);
    if (rc == 0 && fix) rc = fix_mode(p, dirfd, mode);
    return rc;
}

static int mknod_in(int dirfd, const char *path, mode_t mode, dev_t dev)
{
    char buf[PATH_MAX];
    const char *p = at_path(dirfd, path, buf);
    if (!p) return -1;
    struct rank *r = fs_rank();
    int fix = 0;
    if (r) mode = (mode & S_IFMT) | rank_proc_mode(&r->proc, mode & ~S_IFMT, &fix);
    int rc = INTERPOSE_REAL(mknodat_fn, mknodat)(dirfd, p, mode, dev);
    if (rc == 0 && fix) rc = fix_mode(p, dirfd, mode & ~S_IFMT);
    return rc;
}

EXPORT int mkdir(const char *path, mode_t mode)
{
    return mkdir_in(AT_FDCWD, path, mode);
}

EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
    return mkdir_in(dirfd, path, mode);
}

EXPORT int mknod(const char *path, mode_t mode, dev_t dev)
{
    return mknod_in(AT_FDCWD, path, mode, dev);
}

EXPORT int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
    return mknod_in(dirfd, path, mode, dev);
}

/* glibc before 2.33 bound these (the version argument is 0 on x86_64) */
EXPORT int __xmknod(int ver, const char *path, mode_t mode, dev_t *dev)
{
    (void)ver;
    return mknod_in(AT_FDCWD, path, mode, *dev);
}

EXPORT int __xmknodat(int ver, int dirfd, const char *path, mode_t mode, dev_t *dev)
{
    (void)ver;
    return mknod_in(dirfd, path, mode, *dev);
}

EXPORT int mkfifo(const char *path, mode_t mode)
{
    return mknod_in(AT_FDCWD, path, S_IFIFO | (mode & 07777), 0);
}

EXPORT int mkfifoat(int dirfd, const char *path, mode_t mode)
{
    return mknod_in(dirfd, path, S_IFIFO | (mode & 07777), 0);
}

/* Whether fopen's mode has flag c (before any ",ccs=..."). */
static int mode_has(const char *mode, char c)
{
    for (const char *m = mode; *m && *m != ','; m++)
        if (*m == c) return 1;
    return 0;
}

/* fopen and freopen create through libc's own open, with the kernel's umask: when the rank's
 * differs, the file is made first (open_create) and libc then opens what exists, or
 * for "x" (libc would meet its own O_EXCL) ret_fd is the new file for fdopen.  O_NONBLOCK: a
 * FIFO without a reader must not hold us here (libc's own open waits for it as usual). */
static int fopen_prepare(const char *p, const char *mode, int *ret_fd)
{
    *ret_fd = -1;
    struct rank *r = fs_rank();
    if (!r || !mode || (mode[0] != 'w' && mode[0] != 'a')) return 0;
    if (atomic_load_explicit(&r->proc.umask, memory_order_relaxed) == r->proc.host_umask) return 0;
    int excl = mode_has(mode, 'x');
    int flags = (mode_has(mode, '+') ? O_RDWR : O_WRONLY) | O_CREAT | O_NONBLOCK | O_NOCTTY |
                O_CLOEXEC | (excl ? O_EXCL : 0);
    int fd = open_create(AT_FDCWD, p, flags, 0666);
    if (fd < 0 && excl) return -1;
    if (excl) {
        *ret_fd = fd;
        return 0;
    }
    if (fd >= 0) close(fd);
    return 0;
}

typedef FILE *(*fopen_fn)(const char *, const char *);
typedef FILE *(*freopen_fn)(const char *, const char *, FILE *);

static FILE *fopen_in(fopen_fn real, const char *path, const char *mode)
{
    char buf[PATH_MAX];
    const char *p = rank_path(path, buf);
    if (!p) return NULL;
    int fd;
    if (fopen_prepare(p, mode, &fd) < 0) return NULL;
    if (fd < 0) return real(p, mode);
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (!mode_has(mode, 'e')) (void)fcntl(fd, F_SETFD, 0);
    FILE *f = fdopen(fd, mode);
    if (!f) close(fd);
    return f;
}

EXPORT FILE *fopen(const char *path, const char *mode)
{
    return fopen_in(INTERPOSE_REAL(fopen_fn, fopen), path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
    return fopen_in(INTERPOSE_REAL(fopen_fn, fopen64), path, mode);
}

static FILE *freopen_in(freopen_fn real, const char *path, const char *mode, FILE *f)
{
    char buf[PATH_MAX];
    const char *p = rank_path(path, buf);
    if (path && !p) return NULL;
    int fd = -1;
    if (p && fopen_prepare(p, mode, &fd) < 0) return NULL;
    if (fd >= 0) {
        /* "wx": made with the rank's mode; libc reopens it without the exclusive flag */
        close(fd);
        char plain[64];
        size_t n = 0;
        int flags = 1; /* before ",ccs=" */
        for (const char *c = mode; *c && n + 1 < sizeof plain; c++) {
            if (*c == ',') flags = 0;
            if (!flags || *c != 'x') plain[n++] = *c;
        }
        plain[n] = '\0';
        return real(p, plain, f);
    }
    return real(p, mode, f);
}

EXPORT FILE *freopen(const char *path, const char *mode, FILE *f)
{
    return freopen_in(INTERPOSE_REAL(freopen_fn, freopen), path, mode, f);
}

EXPORT FILE *freopen64(const char *path, const char *mode, FILE *f)
{
    return freopen_in(INTERPOSE_REAL(freopen_fn, freopen64), path, mode, f);
}

/* A Unix socket's path: relative ones joined into *copy when the result fits sun_path. */
static const struct sockaddr *unix_path(const struct sockaddr *addr, socklen_t *len,
                                        struct sockaddr_un *copy)
{
    if (!fs_rank() || !addr || addr->sa_family != AF_UNIX || *len <= sizeof(sa_family_t))
        return addr;
    const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
    size_t max = *len - sizeof(sa_family_t);
    if (un->sun_path[0] == '\0' || un->sun_path[0] == '/') return addr; /* abstract, absolute */
    char rel[sizeof un->sun_path + 1], buf[PATH_MAX];
    size_t n = strnlen(un->sun_path, max < sizeof un->sun_path ? max : sizeof un->sun_path);
    memcpy(rel, un->sun_path, n);
    rel[n] = '\0';
    const char *p = rank_path(rel, buf);
    if (!p) return NULL;
    if (strlen(p) >= sizeof copy->sun_path) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    memset(copy, 0, sizeof *copy);
    copy->sun_family = AF_UNIX;
    strcpy(copy->sun_path, p);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(p) + 1);
    return (const struct sockaddr *)copy;
}

typedef int (*sock_fn)(int, const struct sockaddr *, socklen_t);

/* bind creates the socket's file: 0777 less the umask, the rank's. */
EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct sockaddr_un copy;
    const struct sockaddr *a = unix_path(addr, &len, &copy);
    if (!a) return -1;
    int rc = INTERPOSE_REAL(sock_fn, bind)(fd, a, len);
    struct rank *r = fs_rank();
    int fix;
    if (rc == 0 && r && a->sa_family == AF_UNIX && ((const struct sockaddr_un *)a)->sun_path[0]) {
        mode_t want = rank_proc_mode(&r->proc, 0777, &fix);
        if (want != (0777 & ~(mode_t)r->proc.host_umask))
            (void)chmod(((const struct sockaddr_un *)a)->sun_path, want);
    }
    return rc;
}

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct sockaddr_un copy;
    const struct sockaddr *a = unix_path(addr, &len, &copy);
    if (!a) return -1;
    return INTERPOSE_REAL(sock_fn, connect)(fd, a, len);
}

/* mkstemp and friends write the name they made into the template: a relative template is
 * made absolute for libc, and the name copied back. */
static int temp_in(const char *name, char *tmpl, int (*call)(void *fn, char *t, int a, int b),
                   int a, int b)
{
    void *fn = dlsym(RTLD_NEXT, name);
    char buf[PATH_MAX];
    const char *p = rank_path(tmpl, buf);
    if (!p) return -1;
    if (p == tmpl) return call(fn, tmpl, a, b);
    int rc = call(fn, buf, a, b);
    size_t n = strlen(tmpl);
    memcpy(tmpl, buf + strlen(buf) - n, n);
    return rc;
}

static int call_mkstemp(void *fn, char *t, int a, int b)
{
    (void)a, (void)b;
    return ((int (*)(char *))fn)(t);
}

static int call_mkostemp(void *fn, char *t, int a, int b)
{
    (void)b;
    return ((int (*)(char *, int))fn)(t, a);
}

static int call_mkstemps(void *fn, char *t, int a, int b)
{
    (void)b;
    return ((int (*)(char *, int))fn)(t, a);
}

static int call_mkostemps(void *fn, char *t, int a, int b)
{
    return ((int (*)(char *, int, int))fn)(t, a, b);
}

EXPORT int mkstemp(char *tmpl)
{
    return temp_in("mkstemp", tmpl, call_mkstemp, 0, 0);
}

EXPORT int mkstemp64(char *tmpl)
{
    return temp_in("mkstemp64", tmpl, call_mkstemp, 0, 0);
}

EXPORT int mkostemp(char *tmpl, int flags)
{
    return temp_in("mkostemp", tmpl, call_mkostemp, flags, 0);
}

EXPORT int mkostemp64(char *tmpl, int flags)
{
    return temp_in("mkostemp64", tmpl, call_mkostemp, flags, 0);
}

EXPORT int mkstemps(char *tmpl, int suffixlen)
{
    return temp_in("mkstemps", tmpl, call_mkstemps, suffixlen, 0);
}

EXPORT int mkstemps64(char *tmpl, int suffixlen)
{
    return temp_in("mkstemps64", tmpl, call_mkstemps, suffixlen, 0);
}

EXPORT int mkostemps(char *tmpl, int suffixlen, int flags)
{
    return temp_in("mkostemps", tmpl, call_mkostemps, suffixlen, flags);
}

EXPORT int mkostemps64(char *tmpl, int suffixlen, int flags)
{
    return temp_in("mkostemps64", tmpl, call_mkostemps, suffixlen, flags);
}

static int call_mkdtemp(void *fn, char *t, int a, int b)
{
    (void)a, (void)b;
    return ((char *(*)(char *))fn)(t) ? 0 : -1;
}

EXPORT char *mkdtemp(char *tmpl)
{
    return temp_in("mkdtemp", tmpl, call_mkdtemp, 0, 0) == 0 ? tmpl : NULL;
}

/* ---- paths only ---- */

PATH_CALL(int, -1, access, (const char *path, int how), (p, how))
PATH_CALL(int, -1, euidaccess, (const char *path, int how), (p, how))
PATH_CALL(int, -1, eaccess, (const char *path, int how), (p, how))
PATH_CALL(int, -1, stat, (const char *path, struct stat *st), (p, st))
PATH_CALL(int, -1, stat64, (const char *path, struct stat64 *st), (p, st))
PATH_CALL(int, -1, lstat, (const char *path, struct stat *st), (p, st))
PATH_CALL(int, -1, lstat64, (const char *path, struct stat64 *st), (p, st))
PATH_CALL(int, -1, statfs, (const char *path, struct statfs *st), (p, st))
PATH_CALL(int, -1, statfs64, (const char *path, struct statfs64 *st), (p, st))
PATH_CALL(int, -1, statvfs, (const char *path, struct statvfs *st), (p, st))
PATH_CALL(int, -1, statvfs64, (const char *path, struct statvfs64 *st), (p, st))
PATH_CALL(int, -1, truncate, (const char *path, off_t len), (p, len))
PATH_CALL(int, -1, truncate64, (const char *path, off64_t len), (p, len))
PATH_CALL(int, -1, chmod, (const char *path, mode_t mode), (p, mode))
PATH_CALL(int, -1, chown, (const char *path, uid_t uid, gid_t gid), (p, uid, gid))
PATH_CALL(int, -1, lchown, (const char *path, uid_t uid, gid_t gid), (p, uid, gid))
PATH_CALL(int, -1, utime, (const char *path, const struct utimbuf *t), (p, t))
PATH_CALL(int, -1, utimes, (const char *path, const struct timeval t[2]), (p, t))
PATH_CALL(int, -1, lutimes, (const char *path, const struct timeval t[2]), (p, t))
PATH_CALL(int, -1, unlink, (const char *path), (p))
PATH_CALL(int, -1, rmdir, (const char *path), (p))
PATH_CALL(int, -1, remove, (const char *path), (p))
PATH_CALL(ssize_t, -1, readlink, (const char *path, char *buf, size_t n), (p, buf, n))
PATH_CALL(ssize_t, -1, __readlink_chk, (const char *path, char *buf, size_t n, size_t buflen),
          (p, buf, n, buflen))
PATH_CALL(long, -1, pathconf, (const char *path, int name), (p, name))
PATH_CALL(DIR *, NULL, opendir, (const char *path), (p))
PATH_CALL(char *, NULL, realpath, (const char *path, char *resolved), (p, resolved))
PATH_CALL(char *, NULL, __realpath_chk, (const char *path, char *resolved, size_t len),
          (p, resolved, len))
PATH_CALL(char *, NULL, canonicalize_file_name, (const char *path), (p))
PATH_CALL(int, -1, scandir,
          (const char *path, struct dirent ***list, int (*filter)(const struct dirent *),
           int (*compar)(const struct dirent **, const struct dirent **)),
          (p, list, filter, compar))
PATH_CALL(int, -1, scandir64,
          (const char *path, struct dirent64 ***list, int (*filter)(const struct dirent64 *),
           int (*compar)(const struct dirent64 **, const struct dirent64 **)),
          (p, list, filter, compar))

/* glibc before 2.33 bound the stat family through these (version 1 on x86_64, the layout of
 * today's struct stat): the current functions do the same. */
EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
    (void)ver;
    return stat(path, st);
}

EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
    (void)ver;
    return stat64(path, st);
}

EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
    (void)ver;
    return lstat(path, st);
}

EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
    (void)ver;
    return lstat64(path, st);
}

EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    char buf[PATH_MAX];
    const char *p = at_path_flags(dirfd, path, flags, buf);
    if (!p) return -1;
    return INTERPOSE_REAL(int (*)(int, const char *, struct stat *, int), fstatat)(dirfd, p, st,
                                                                                   flags);
}

EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    char buf[PATH_MAX];
    const char *p = at_path_flags(dirfd, path, flags, buf);
    if (!p) return -1;
    return INTERPOSE_REAL(int (*)(int, const char *, struct stat64 *, int), fstatat64)(dirfd, p, st,
                                                                                       flags);
}

EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
    (void)ver;
    return fstatat(dirfd, path, st, flags);
}

EXPORT int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *st, int flags)
{
    (void)ver;
    return fstatat64(dirfd, path, st, flags);
}

EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *st)
{
    char buf[PATH_MAX];
    const char *p = at_path_flags(dirfd, path, flags, buf);
    if (!p) return -1;
    return INTERPOSE_REAL(int (*)(int, const char *, int, unsigned, struct statx *),
                          statx)(dirfd, p, flags, mask, st);
}

EXPORT int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags)
{
    char buf[PATH_MAX];
    const char *p = at_path_flags(dirfd, path, flags, buf);
    if (!p) return -1;
    return INTERPOSE_REAL(int (*)(int, const char *, uid_t, gid_t, int), fchownat)(dirfd, p, uid,
                                                                                   gid, flags);
}

AT_CALL(int, -1, faccessat, (int dirfd, const char *path, int how, int flags),
        (dirfd, p, how, flags))
AT_CALL(int, -1, unlinkat, (int dirfd, const char *path, int flags), (dirfd, p, flags))
AT_CALL(ssize_t, -1, readlinkat, (int dirfd, const char *path, char *buf, size_t n),
        (dirfd, p, buf, n))
AT_CALL(ssize_t, -1, __readlinkat_chk,
        (int dirfd, const char *path, char *buf, size_t n, size_t buflen),
        (dirfd, p, buf, n, buflen))
AT_CALL(int, -1, fchmodat, (int dirfd, const char *path, mode_t mode, int flags),
        (dirfd, p, mode, flags))
AT_CALL(int, -1, utimensat, (int dirfd, const char *path, const struct timespec t[2], int flags),
        (dirfd, p, t, flags))
AT_CALL(int, -1, futimesat, (int dirfd, const char *path, const struct timeval t[2]), (dirfd, p, t))

EXPORT int inotify_add_watch(int fd, const char *path, uint32_t mask)
{
    char buf[PATH_MAX];
    const char *p = rank_path(path, buf);
    if (!p) return -1;
    return INTERPOSE_REAL(int (*)(int, const char *, uint32_t), inotify_add_watch)(fd, p, mask);
}

/* Two paths (symlink's target is text stored in the link, not a path resolved now). */
EXPORT int rename(const char *from, const char *to)
{
    char b1[PATH_MAX], b2[PATH_MAX];
    const char *f = rank_path(from, b1), *t = rank_path(to, b2);
    if (!f || !t) return -1;
    return INTERPOSE_REAL(int (*)(const char *, const char *), rename)(f, t);
}

EXPORT int renameat(int fromfd, const char *from, int tofd, const char *to)
{
    char b1[PATH_MAX], b2[PATH_MAX];
    const char *f = at_path(fromfd, from, b1), *t = at_path(tofd, to, b2);
    if (!f || !t) return -1;
    return INTERPOSE_REAL(int (*)(int, const char *, int, const char *), renameat)(fromfd, f, tofd,
                                                                                   t);
}

EXPORT int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned flags)
{
    char b1[PATH_MAX], b2[PATH_MAX];
    const char *f = at_path(fromfd, from, b1), *t = at_path(tofd, to, b2);
    if (!f || !t) return -1;
    return INTERPOSE_REAL(int (*)(int, const char *, int, const char *, unsigned),
                          renameat2)(fromfd, f, tofd, t, flags);
}

EXPORT int link(const char *from, const char *to)
{
    char b1[PATH_MAX], b2[PATH_MAX];
    const char *f = rank_path(from, b1), *t = rank_path(to, b2);
    if (!f || !t) return -1;
    return INTERPOSE_REAL(int (*)(const char *, const char *), link)(f, t);
}

EXPORT int linkat(int fromfd, const char *from, int tofd, const char *to, int flags)
{
    char b1[PATH_MAX], b2[PATH_MAX];
    const char *f = at_path_flags(fromfd, from, flags, b1), *t = at_path(tofd, to, b2);
    if (!f || !t) return -1;
    return INTERPOSE_REAL(int (*)(int, const char *, int, const char *, int),
                          linkat)(fromfd, f, tofd, t, flags);
}

EXPORT int symlink(const char *target, const char *path)
{
    char buf[PATH_MAX];
    const char *p = rank_path(path, buf);
    if (!p) return -1;
    return INTERPOSE_REAL(int (*)(const char *, const char *), symlink)(target, p);
}

EXPORT int symlinkat(const char *target, int dirfd, const char *path)
{
    char buf[PATH_MAX];
    const char *p = at_path(dirfd, path, buf);
    if (!p) return -1;
    return INTERPOSE_REAL(int (*)(const char *, int, const char *), symlinkat)(target, dirfd, p);
}

/* ---- the working directory ---- */

static int fail(int rc)
{
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return 0;
}

EXPORT int chdir(const char *path)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_REAL(int (*)(const char *), chdir)(path);
    if (!r->proc.ready) return fail(-EPERM); /* it would move every rank and job */
    return fail(rank_proc_chdir(&r->proc, path));
}

EXPORT int fchdir(int fd)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_REAL(int (*)(int), fchdir)(fd);
    if (!r->proc.ready) return fail(-EPERM);
    return fail(rank_proc_fchdir(&r->proc, fd));
}

/* getcwd of a rank is its own directory; buf NULL allocates (glibc's extension: size bytes,
 * or as many as needed when size is 0). */
EXPORT char *getcwd(char *buf, size_t size)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_REAL(char *(*)(char *, size_t), getcwd)(buf, size);
    if (!r->proc.ready) {
        size_t n = strlen(r->app->cwd) + 1;
        if (!buf && !(buf = malloc(size = size > n ? size : n))) return NULL;
        if (size < n) {
            errno = ERANGE;
            return NULL;
        }
        return memcpy(buf, r->app->cwd, n);
    }
    if (buf && size == 0) {
        errno = EINVAL;
        return NULL;
    }
    char *mine = NULL;
    if (!buf) {
        size_t n = rank_proc_cwd_len(&r->proc) + 1;
        /* room for a chdir meanwhile to a longer name */
        size = size ? size : n > PATH_MAX ? n : PATH_MAX;
        if (!(buf = mine = malloc(size))) return NULL;
    }
    int rc = rank_proc_getcwd(&r->proc, buf, size);
    if (rc < 0) {
        free(mine);
        errno = -rc;
        return NULL;
    }
    if (mine && size > strlen(mine) + 1) {
        char *fit = realloc(mine, strlen(mine) + 1);
        if (fit) buf = fit;
    }
    return buf;
}

/* _FORTIFY_SOURCE's getcwd: the buffer's real size is checked as libc checks it. */
EXPORT char *__getcwd_chk(char *buf, size_t size, size_t buflen)
{
    if (size > buflen) {
        fprintf(stderr, "*** buffer overflow detected ***: terminated\n");
        abort();
    }
    return getcwd(buf, size);
}

/* getwd is deprecated for programs, not for us who must answer it */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
EXPORT char *getwd(char *buf)
{
    if (!rank_current()) return INTERPOSE_REAL(char *(*)(char *), getwd)(buf);
    if (getcwd(buf, PATH_MAX)) return buf;
    snprintf(buf, PATH_MAX, "%s", strerror(errno));
    return NULL;
}

EXPORT char *__getwd_chk(char *buf, size_t buflen)
{
    if (buflen < PATH_MAX) {
        fprintf(stderr, "*** buffer overflow detected ***: terminated\n");
        abort();
    }
    return getwd(buf);
}
#pragma GCC diagnostic pop

/* glibc's: $PWD when it names the same directory (it keeps the symlinks the user went
 * through), else the canonical name. */
EXPORT char *get_current_dir_name(void)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_REAL(char *(*)(void), get_current_dir_name)();
    const char *pwd = getenv("PWD");
    char here[PATH_MAX];
    struct stat a, b;
    if (pwd && pwd[0] == '/' && getcwd(here, sizeof here) && stat(pwd, &a) == 0 &&
        stat(here, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return strdup(pwd);
    return getcwd(NULL, 0);
}
