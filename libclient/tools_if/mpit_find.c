/* mpit_find.c — the one search by name over the interface's tables (mpit.h tm_t_find): the
 * *_get_index calls of variables, categories and events, and the interface's own lookups. */
#include <string.h>

#include "mpit.h"

const char tm_t_skip[] = "";

int tm_t_find(const char *name, tm_t_name_at_fn name_at, void *arg)
{
    char buf[TM_T_NAME_MAX];
    /* tables are tens of entries, looked up once by a tool: a linear search is enough */
    for (int i = 0;; i++) {
        const char *s = name_at(i, arg, buf);
        if (!s) return -1;
        if (s != tm_t_skip && !strcmp(s, name)) return i;
    }
}
