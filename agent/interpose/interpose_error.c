/* interpose_error.c — error, error_at_line and the err/warn family for ranks: they print
 * the rank's program name (its argv[0], rank_vars.h) where libc would print the job host's
 * ("tmpid"), to the rank's stderr; exit(status) ends the rank.  error_at_line's
 * error_one_per_line memory is the rank's (rank_libc.h).  error_print_progname and
 * error_one_per_line are libc's variables, one for the process, honoured as they are;
 * error_message_count is not counted for ranks.  The err/warn family of callers that are not
 * ranks goes to libc's; error and error_at_line (libc has no va_list form to forward to)
 * print the same with the process's name. */
#include <err.h>
#include <errno.h>
#include <error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose_next.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
    void *_Atomic vwarn, *_Atomic vwarnx, *_Atomic verr, *_Atomic verrx;
} next;

/* argv[0] (error's) or its last component (err's and warn's), as a process has them */
static const char *prog_name(const struct rank *r, int full)
{
    const char *n;
    if (r)
        n = full ? RANK_VAR(&r->vars, RANK_VAR_PROGNAME_FULL, char *)
                 : RANK_VAR(&r->vars, RANK_VAR_PROGNAME, char *);
    else
        n = full ? program_invocation_name : program_invocation_short_name;
    return n ? n : "";
}

static void print_errno(int errnum)
{
    char buf[128];
    fprintf(stderr, ": %s", strerror_r(errnum, buf, sizeof buf));
}

/* The message, the error's text and the end of error() and error_at_line(). */
static void error_tail(int status, int errnum, const char *fmt, va_list ap)
{
    vfprintf(stderr, fmt, ap);
    if (errnum) print_errno(errnum);
    fputc('\n', stderr);
    fflush(stderr);
    if (status) exit(status);
}

EXPORT void error(int status, int errnum, const char *fmt, ...)
{
    struct rank *r = rank_current();
    fflush(stdout);
    if (error_print_progname)
        error_print_progname();
    else
        fprintf(stderr, "%s: ", prog_name(r, 1));
    va_list ap;
    va_start(ap, fmt);
    error_tail(status, errnum, fmt, ap);
    va_end(ap);
}

EXPORT void error_at_line(int status, int errnum, const char *file, unsigned int line,
                          const char *fmt, ...)
{
    struct rank *r = rank_current();
    if (error_one_per_line && r) {
        struct rank_libc *l = &r->libc;
        /* the same place as the last message: nothing printed, and no exit either */
        if (l->error_line == line &&
            (file == l->error_file || (file && l->error_file && strcmp(file, l->error_file) == 0)))
            return;
        l->error_file = file;
        l->error_line = line;
    }
    fflush(stdout);
    if (error_print_progname)
        error_print_progname();
    else
        fprintf(stderr, "%s:", prog_name(r, 1));
    if (file)
        fprintf(stderr, "%s:%u: ", file, line);
    else
        fprintf(stderr, " ");
    va_list ap;
    va_start(ap, fmt);
    error_tail(status, errnum, fmt, ap);
    va_end(ap);
}

EXPORT void vwarn(const char *fmt, va_list ap)
{
    struct rank *r = rank_current();
    if (!r) {
        INTERPOSE_NEXT(next, vwarn)(fmt, ap);
        return;
    }
    int e = errno;
    fprintf(stderr, "%s: ", prog_name(r, 0));
    if (fmt) {
        vfprintf(stderr, fmt, ap);
        print_errno(e);
        fputc('\n', stderr);
    } else {
        char buf[128];
        fprintf(stderr, "%s\n", strerror_r(e, buf, sizeof buf));
    }
    errno = e;
}

EXPORT void vwarnx(const char *fmt, va_list ap)
{
    struct rank *r = rank_current();
    if (!r) {
        INTERPOSE_NEXT(next, vwarnx)(fmt, ap);
        return;
    }
    fprintf(stderr, "%s: ", prog_name(r, 0));
    if (fmt) vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

EXPORT void verr(int status, const char *fmt, va_list ap)
{
    if (!rank_current()) INTERPOSE_NEXT(next, verr)(status, fmt, ap);
    vwarn(fmt, ap);
    exit(status);
}

EXPORT void verrx(int status, const char *fmt, va_list ap)
{
    if (!rank_current()) INTERPOSE_NEXT(next, verrx)(status, fmt, ap);
    vwarnx(fmt, ap);
    exit(status);
}

EXPORT void warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

EXPORT void warnx(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarnx(fmt, ap);
    va_end(ap);
}

EXPORT void err(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verr(status, fmt, ap);
}

EXPORT void errx(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verrx(status, fmt, ap);
}
