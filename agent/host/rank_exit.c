/* rank_exit.c — a rank's exit handlers (rank_exit.h). */
#include "rank_exit.h"

#include <errno.h>
#include <stdlib.h>

int rank_exit_add(struct rank_exit *e, struct rank_exit_list *list, struct rank_exit_fn fn)
{
    int rc = 0;
    pthread_mutex_lock(&e->mu);
    if (list->n == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 8;
        struct rank_exit_fn *f = realloc(list->fns, cap * sizeof *f);
        if (!f)
            rc = -ENOMEM;
        else {
            list->fns = f;
            list->cap = cap;
        }
    }
    if (rc == 0) list->fns[list->n++] = fn;
    pthread_mutex_unlock(&e->mu);
    return rc;
}

int rank_exit_run_one(struct rank_exit *e, struct rank_exit_list *list, int status)
{
    pthread_mutex_lock(&e->mu);
    int any = list->n > 0;
    struct rank_exit_fn fn = any ? list->fns[--list->n] : (struct rank_exit_fn){0};
    pthread_mutex_unlock(&e->mu);
    if (!any) return 0;
    if (fn.kind == RANK_EXIT_ON_EXIT)
        fn.fn.on_exit(status, fn.arg);
    else if (fn.kind == RANK_EXIT_PLAIN)
        fn.fn.plain();
    else
        fn.fn.cxa(fn.arg);
    return 1;
}

void rank_exit_free(struct rank_exit *e)
{
    free(e->at_exit.fns);
    free(e->at_quick_exit.fns);
    e->at_exit = e->at_quick_exit = (struct rank_exit_list){0};
}
