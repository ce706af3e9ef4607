/* errcheck.h — comparing the messages a parser collected with the ones expected (a check of
 * the tests/check.h family: fails with CHECK_FAIL). */
#ifndef TMPI_TEST_LAUNCHER_ERRCHECK_H
#define TMPI_TEST_LAUNCHER_ERRCHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "errlist.h"

/* The collected messages must be exactly want[0..n-1], in order. */
#define CHECK_ERRORS(e, ...)                                                                       \
    do {                                                                                           \
        const char *want_[] = {__VA_ARGS__};                                                       \
        check_errors_(__FILE__, __LINE__, (e), want_, sizeof want_ / sizeof *want_);               \
    } while (0)

static inline void check_errors_(const char *file, int line, const struct errlist *e,
                                 const char **want, size_t n)
{
    size_t i;
    for (i = 0; i < n && i < e->n; i++)
        if (strcmp(e->msg[i], want[i]) != 0) break;
    if (i == n && e->n == n && e->more == 0) return;
    fprintf(stderr, "%s:%d: expected %zu error(s):\n", file, line, n);
    for (size_t k = 0; k < n; k++)
        fprintf(stderr, "  %s\n", want[k]);
    fprintf(stderr, "got %zu (+%zu dropped):\n", e->n, e->more);
    for (size_t k = 0; k < e->n; k++)
        fprintf(stderr, "  %s\n", e->msg[k]);
    CHECK_FAIL;
}
#endif
