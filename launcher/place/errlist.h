/* errlist.h — a bounded list of error messages, for parsers that report every problem.
 *
 * The host file, Slurm and placement parsers do not print: they collect one line per problem
 * here ("FILE:LINE: what is wrong") and the tool decides where the lines go.  At most
 * ERRLIST_MAX messages are kept; later ones (and ones that could not be allocated) are only
 * counted, so a file of garbage cannot make us allocate without bound.
 */
#ifndef TMPI_LAUNCHER_ERRLIST_H
#define TMPI_LAUNCHER_ERRLIST_H

#include <stdio.h>
#include <stddef.h>

#define ERRLIST_MAX 100

struct errlist {
    char **msg; /* n messages, in the order they were added */
    size_t n;
    size_t more; /* errors beyond ERRLIST_MAX or lost to a failed allocation */
};

#define ERRLIST_INIT                                                                               \
    {                                                                                              \
        0                                                                                          \
    }

/* Add one message (printf-style, no trailing newline). */
void errlist_add(struct errlist *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Total number of errors seen, kept or not. */
size_t errlist_count(const struct errlist *e);
/* Print every kept message on its own line, then "... and N more errors" when some were
 * dropped. */
void errlist_print(const struct errlist *e, FILE *f);
void errlist_free(struct errlist *e);

#endif
