/* interpose_stdio.c — stdout/stderr of rank threads go to the job's launcher.
 *
 * Every libc entry point a C program commonly uses to write to stdout or stderr is overridden
 * (gcc also turns printf into puts/putchar/fwrite, and _FORTIFY_SOURCE into the __*_chk
 * forms).  For other streams, and for threads that are not ranks, the real function runs. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interpose.h"
#include "output.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

/* With optimisation glibc's headers turn some of these into macros; we define the functions. */
#undef fwrite_unlocked
#undef fputc_unlocked
#undef putc_unlocked
#undef putchar_unlocked
#undef fputs_unlocked
#undef putc
#undef putchar

/* glibc entry points that its headers do not declare. */
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int _IO_putc(int c, FILE *f);
void __assert_fail(const char *expr, const char *file, unsigned line, const char *func);

/* Which rank stream a FILE is for the calling thread: 1, 2, or 0 (not captured). */
static int captured(FILE *f, struct rank **ret)
{
    if (f != stdout && f != stderr) return 0;
    struct rank *r = rank_current();
    if (!r) return 0;
    *ret = r;
    return f == stdout ? 1 : 2;
}

static int captured_fd(int fd, struct rank **ret)
{
    if (fd != 1 && fd != 2) return 0;
    struct rank *r = rank_current();
    if (!r) return 0;
    *ret = r;
    return fd;
}

/* Formats and routes; returns the character count like printf, or -1. */
static int route_vprintf(struct rank *r, int stream, const char *fmt, va_list ap)
{
    char small[512];
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(small, sizeof small, fmt, aq);
    va_end(aq);
    if (n < 0) return -1;
    if ((size_t)n < sizeof small) return output_write(r, stream, small, (size_t)n) < 0 ? -1 : n;
    char *big = malloc((size_t)n + 1);
    if (!big) {
        errno = ENOMEM;
        return -1;
    }
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    int rc = output_write(r, stream, big, (size_t)n) < 0 ? -1 : n;
    free(big);
    return rc;
}

EXPORT int vfprintf(FILE *f, const char *fmt, va_list ap)
{
    struct rank *r;
    int s = captured(f, &r);
    if (s) return route_vprintf(r, s, fmt, ap);
    return interpose_real()->vfprintf(f, fmt, ap);
}

EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}

EXPORT int vprintf(const char *fmt, va_list ap)
{
    return vfprintf(stdout, fmt, ap);
}

EXPORT int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stdout, fmt, ap);
    va_end(ap);
    return n;
}

EXPORT int vdprintf(int fd, const char *fmt, va_list ap)
{
    struct rank *r;
    int s = captured_fd(fd, &r);
    if (s) return route_vprintf(r, s, fmt, ap);
    return interpose_real()->vdprintf(fd, fmt, ap);
}

EXPORT int dprintf(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vdprintf(fd, fmt, ap);
    va_end(ap);
    return n;
}

/* _FORTIFY_SOURCE variants: the flag only adds checks we do not need to repeat. */
EXPORT int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
    (void)flag;
    return vfprintf(f, fmt, ap);
}
EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
    (void)flag;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}
EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
    (void)flag;
    return vfprintf(stdout, fmt, ap);
}
EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
    (void)flag;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stdout, fmt, ap);
    va_end(ap);
    return n;
}
EXPORT int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
    (void)flag;
    return vdprintf(fd, fmt, ap);
}
EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
    (void)flag;
    va_list ap;
    va_start(ap, fmt);
    int n = vdprintf(fd, fmt, ap);
    va_end(ap);
    return n;
}

EXPORT int fputs(const char *s, FILE *f)
{
    struct rank *r;
    int st = captured(f, &r);
    if (st) return output_write(r, st, s, strlen(s)) < 0 ? EOF : 1;
    return interpose_real()->fputs(s, f);
}

EXPORT int fputs_unlocked(const char *s, FILE *f)
{
    return fputs(s, f);
}

EXPORT int puts(const char *s)
{
    struct rank *r = rank_current();
    if (!r) return interpose_real()->puts(s);
    if (output_write(r, 1, s, strlen(s)) < 0 || output_write(r, 1, "\n", 1) < 0) return EOF;
    return 1;
}

EXPORT int fputc(int c, FILE *f)
{
    struct rank *r;
    int st = captured(f, &r);
    if (st) {
        char ch = (char)c;
        return output_write(r, st, &ch, 1) < 0 ? EOF : (unsigned char)c;
    }
    return interpose_real()->fputc(c, f);
}

EXPORT int putc(int c, FILE *f)
{
    return fputc(c, f);
}
EXPORT int _IO_putc(int c, FILE *f)
{
    return fputc(c, f);
}
EXPORT int fputc_unlocked(int c, FILE *f)
{
    return fputc(c, f);
}
EXPORT int putc_unlocked(int c, FILE *f)
{
    return fputc(c, f);
}
EXPORT int putchar(int c)
{
    return fputc(c, stdout);
}
EXPORT int putchar_unlocked(int c)
{
    return fputc(c, stdout);
}

EXPORT size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    struct rank *r;
    int st = captured(f, &r);
    if (st) {
        if (size == 0 || n == 0) return 0;
        int rc = output_write(r, st, p, size * n);
        if (rc < 0) {
            errno = -rc;
            return 0;
        }
        return n;
    }
    return interpose_real()->fwrite(p, size, n, f);
}

EXPORT size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *f)
{
    return fwrite(p, size, n, f);
}

/* Rank output is already on its way line by line; a partial line waits for its newline so
 * lines of different ranks never mix. */
EXPORT int fflush(FILE *f)
{
    struct rank *r;
    if (f && captured(f, &r)) return 0;
    return interpose_real()->fflush(f);
}

EXPORT void perror(const char *s)
{
    struct rank *r = rank_current();
    if (!r) {
        interpose_real()->perror(s);
        return;
    }
    char err[256];
    const char *msg = strerror_r(errno, err, sizeof err);
    if (s && *s)
        fprintf(stderr, "%s: %s\n", s, msg);
    else
        fprintf(stderr, "%s\n", msg);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    struct rank *r;
    int st = captured_fd(fd, &r);
    if (st) {
        int rc = output_write(r, st, buf, n);
        if (rc < 0) {
            errno = -rc;
            return -1;
        }
        return (ssize_t)n;
    }
    return interpose_real()->write(fd, buf, n);
}

/* assert() reaches abort() inside libc, past our abort override: catch it here. */
EXPORT void __assert_fail(const char *expr, const char *file, unsigned line, const char *func)
{
    struct rank *r = rank_current();
    fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, func, expr);
    if (r) rank_end(RANK_END_ABORT, 128 + 6, "assertion failed");
    abort();
}
