/* rank_libc.c — a rank's own libc state (rank_libc.h). */
#include "rank_libc.h"

#include <string.h>

void rank_libc_free(struct rank_libc *l)
{
    rank_locale_free(&l->locale);
    rank_exit_free(&l->exit);
    memset(l, 0, sizeof *l);
}
