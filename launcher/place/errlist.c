/* errlist.c — a bounded list of error messages (see errlist.h). */
#include <stdarg.h>
#include <stdlib.h>

#include "errlist.h"

void errlist_add(struct errlist *e, const char *fmt, ...)
{
    if (e->n >= ERRLIST_MAX) {
        e->more++;
        return;
    }
    if (!e->msg) {
        e->msg = calloc(ERRLIST_MAX, sizeof *e->msg);
        if (!e->msg) {
            e->more++;
            return;
        }
    }
    va_list ap;
    va_start(ap, fmt);
    char *s;
    int r = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (r < 0) {
        e->more++;
        return;
    }
    e->msg[e->n++] = s;
}

size_t errlist_count(const struct errlist *e)
{
    return e->n + e->more;
}

void errlist_print(const struct errlist *e, FILE *f)
{
    for (size_t i = 0; i < e->n; i++)
        fprintf(f, "%s\n", e->msg[i]);
    if (e->more) fprintf(f, "... and %zu more error%s\n", e->more, e->more == 1 ? "" : "s");
}

void errlist_free(struct errlist *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->msg[i]);
    free(e->msg);
    e->msg = NULL;
    e->n = e->more = 0;
}
