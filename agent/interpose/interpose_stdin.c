/* interpose_stdin.c — standard input of rank threads: rank 0 reads the process's fd 0 (in a
 * job host, the pipe fed with tmpi-launch's stdin), every other rank reads end of file at
 * once, as with mpirun.  The ranks are threads of one process, so fd 0 cannot differ between
 * them: the reading calls a C program commonly uses on stdin / fd 0 are overridden here (with
 * the _unlocked, __*_chk and ISO C99 scanf forms glibc's headers turn them into).  Threads
 * that are not ranks, and rank 0, get the real function. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "interpose.h"
#include "job.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

#undef getc
#undef getchar
#undef getc_unlocked
#undef getchar_unlocked
#undef fgetc_unlocked
#undef fread_unlocked
#undef fgets_unlocked

/* glibc entry points that its headers do not declare (or declare only under some flags). */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
size_t __fread_chk(void *p, size_t ptrlen, size_t size, size_t n, FILE *f);
size_t __fread_unlocked_chk(void *p, size_t ptrlen, size_t size, size_t n, FILE *f);
char *__fgets_chk(char *s, size_t size, int n, FILE *f);
char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *f);
int _IO_getc(FILE *f);
ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f);
int __isoc99_scanf(const char *fmt, ...);
int __isoc99_fscanf(FILE *f, const char *fmt, ...);
int __isoc99_vscanf(const char *fmt, va_list ap);
int __isoc99_vfscanf(FILE *f, const char *fmt, va_list ap);

/* The real functions, resolved once (pthread_once), read-only afterwards. */
static struct {
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*readv)(int, const struct iovec *, int);
    size_t (*fread)(void *, size_t, size_t, FILE *);
    size_t (*fread_unlocked)(void *, size_t, size_t, FILE *);
    char *(*fgets)(char *, int, FILE *);
    char *(*fgets_unlocked)(char *, int, FILE *);
    int (*fgetc)(FILE *);
    int (*fgetc_unlocked)(FILE *);
    int (*getc_unlocked)(FILE *);
    ssize_t (*getdelim)(char **, size_t *, int, FILE *);
    int (*vfscanf)(FILE *, const char *, va_list);
    int (*isoc99_vfscanf)(FILE *, const char *, va_list);
} stdin_real;
static pthread_once_t stdin_real_once = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    *(void **)&stdin_real.read = dlsym(RTLD_NEXT, "read");
    *(void **)&stdin_real.readv = dlsym(RTLD_NEXT, "readv");
    *(void **)&stdin_real.fread = dlsym(RTLD_NEXT, "fread");
    *(void **)&stdin_real.fread_unlocked = dlsym(RTLD_NEXT, "fread_unlocked");
    *(void **)&stdin_real.fgets = dlsym(RTLD_NEXT, "fgets");
    *(void **)&stdin_real.fgets_unlocked = dlsym(RTLD_NEXT, "fgets_unlocked");
    *(void **)&stdin_real.fgetc = dlsym(RTLD_NEXT, "fgetc");
    *(void **)&stdin_real.fgetc_unlocked = dlsym(RTLD_NEXT, "fgetc_unlocked");
    *(void **)&stdin_real.getc_unlocked = dlsym(RTLD_NEXT, "getc_unlocked");
    *(void **)&stdin_real.getdelim = dlsym(RTLD_NEXT, "getdelim");
    *(void **)&stdin_real.vfscanf = dlsym(RTLD_NEXT, "vfscanf");
    *(void **)&stdin_real.isoc99_vfscanf = dlsym(RTLD_NEXT, "__isoc99_vfscanf");
}

static void real_init(void)
{
    pthread_once(&stdin_real_once, resolve);
}

void interpose_stdin_resolve(void)
{
    real_init();
}

/* A rank reading the process's standard input sees end of file unless it is rank 0 of a job
 * whose launcher sends its stdin (a job across nodes, whose parts may still run inside the
 * agent, has none: the agent's own stdin is never the ranks'). */
static int no_stdin(void)
{
    struct rank *r = rank_current();
    return r && (r->info.rank != 0 || !r->job->stdin_open);
}

static int eof_stream(FILE *f)
{
    return f == stdin && no_stdin();
}

EXPORT ssize_t read(int fd, void *buf, size_t n)
{
    if (fd == 0 && no_stdin()) return 0;
    real_init();
    return stdin_real.read(fd, buf, n);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    (void)buflen;
    return read(fd, buf, n);
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
    if (fd == 0 && no_stdin()) return 0;
    real_init();
    return stdin_real.readv(fd, iov, n);
}

EXPORT size_t fread(void *p, size_t size, size_t n, FILE *f)
{
    if (eof_stream(f)) return 0;
    real_init();
    return stdin_real.fread(p, size, n, f);
}

EXPORT size_t fread_unlocked(void *p, size_t size, size_t n, FILE *f)
{
    if (eof_stream(f)) return 0;
    real_init();
    return stdin_real.fread_unlocked(p, size, n, f);
}

EXPORT size_t __fread_chk(void *p, size_t ptrlen, size_t size, size_t n, FILE *f)
{
    (void)ptrlen;
    return fread(p, size, n, f);
}

EXPORT size_t __fread_unlocked_chk(void *p, size_t ptrlen, size_t size, size_t n, FILE *f)
{
    (void)ptrlen;
    return fread_unlocked(p, size, n, f);
}

EXPORT char *fgets(char *s, int n, FILE *f)
{
    if (eof_stream(f)) return NULL;
    real_init();
    return stdin_real.fgets(s, n, f);
}

EXPORT char *fgets_unlocked(char *s, int n, FILE *f)
{
    if (eof_stream(f)) return NULL;
    real_init();
    return stdin_real.fgets_unlocked(s, n, f);
}

EXPORT char *__fgets_chk(char *s, size_t size, int n, FILE *f)
{
    (void)size;
    return fgets(s, n, f);
}

EXPORT char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *f)
{
    (void)size;
    return fgets_unlocked(s, n, f);
}

EXPORT int fgetc(FILE *f)
{
    if (eof_stream(f)) return EOF;
    real_init();
    return stdin_real.fgetc(f);
}

EXPORT int getc(FILE *f)
{
    return fgetc(f);
}

EXPORT int _IO_getc(FILE *f)
{
    return fgetc(f);
}

EXPORT int getchar(void)
{
    return fgetc(stdin);
}

EXPORT int fgetc_unlocked(FILE *f)
{
    if (eof_stream(f)) return EOF;
    real_init();
    return stdin_real.fgetc_unlocked(f);
}

EXPORT int getc_unlocked(FILE *f)
{
    if (eof_stream(f)) return EOF;
    real_init();
    return stdin_real.getc_unlocked(f);
}

EXPORT int getchar_unlocked(void)
{
    return getc_unlocked(stdin);
}

EXPORT ssize_t getdelim(char **line, size_t *n, int delim, FILE *f)
{
    if (eof_stream(f)) return -1;
    real_init();
    return stdin_real.getdelim(line, n, delim, f);
}

EXPORT ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f)
{
    return getdelim(line, n, delim, f);
}

EXPORT ssize_t getline(char **line, size_t *n, FILE *f)
{
    return getdelim(line, n, '\n', f);
}

/* The pre-C99 scanf symbols (GNU %a): glibc's headers rename the C names to the
 * __isoc99_ ones below, so these are defined under their symbol names. */
int stdin_vfscanf(FILE *f, const char *fmt, va_list ap) __asm__("vfscanf");
int stdin_vscanf(const char *fmt, va_list ap) __asm__("vscanf");
int stdin_fscanf(FILE *f, const char *fmt, ...) __asm__("fscanf");
int stdin_scanf(const char *fmt, ...) __asm__("scanf");

EXPORT int stdin_vfscanf(FILE *f, const char *fmt, va_list ap)
{
    if (eof_stream(f)) return EOF;
    real_init();
    return stdin_real.vfscanf(f, fmt, ap);
}

EXPORT int stdin_vscanf(const char *fmt, va_list ap)
{
    return stdin_vfscanf(stdin, fmt, ap);
}

EXPORT int stdin_fscanf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = stdin_vfscanf(f, fmt, ap);
    va_end(ap);
    return r;
}

EXPORT int stdin_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = stdin_vfscanf(stdin, fmt, ap);
    va_end(ap);
    return r;
}

EXPORT int __isoc99_vfscanf(FILE *f, const char *fmt, va_list ap)
{
    if (eof_stream(f)) return EOF;
    real_init();
    return stdin_real.isoc99_vfscanf(f, fmt, ap);
}

EXPORT int __isoc99_vscanf(const char *fmt, va_list ap)
{
    return __isoc99_vfscanf(stdin, fmt, ap);
}

EXPORT int __isoc99_fscanf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = __isoc99_vfscanf(f, fmt, ap);
    va_end(ap);
    return r;
}

EXPORT int __isoc99_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = __isoc99_vfscanf(stdin, fmt, ap);
    va_end(ap);
    return r;
}
