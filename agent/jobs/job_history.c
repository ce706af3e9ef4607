/* job_history.c — ended jobs kept for tmpictl jobs (job_history.h). */
#include "job_history.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int job_history_add(struct job_history *h, const struct job_record *r)
{
    if (h->n == JOB_HISTORY_MAX) {
        memmove(h->recs, h->recs + 1, (h->n - 1) * sizeof *h->recs);
        h->n--;
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        if (cap > JOB_HISTORY_MAX) cap = JOB_HISTORY_MAX;
        struct job_record *nr = realloc(h->recs, cap * sizeof *nr);
        if (!nr) return -ENOMEM;
        h->recs = nr;
        h->cap = cap;
    }
    h->recs[h->n++] = *r;
    return 0;
}

void job_history_expire(struct job_history *h, double now, double keep_sec)
{
    size_t k = 0;
    while (k < h->n && now - h->recs[k].ended_at > keep_sec)
        k++;
    if (k == 0) return;
    memmove(h->recs, h->recs + k, (h->n - k) * sizeof *h->recs);
    h->n -= k;
}

const struct job_record *job_history_find(const struct job_history *h, uint64_t id)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->recs[i].id == id) return &h->recs[i];
    return NULL;
}

void job_history_free(struct job_history *h)
{
    free(h->recs);
    h->recs = NULL;
    h->n = h->cap = 0;
}
