/* test_job_history.c — ended jobs kept for tmpictl jobs (agent/jobs/job_history.c): expiry
 * after ended_job_keep, lookup, and the JOB_HISTORY_MAX bound (the oldest go first). */
#include <string.h>

#include "../check.h"
#include "job_history.h"

static struct job_record rec(uint64_t id, double ended_at)
{
    struct job_record r;
    memset(&r, 0, sizeof r);
    r.id = id;
    r.ended_at = ended_at;
    r.exit_status = (int)(id % 7);
    return r;
}

static void test_expire_and_find(void)
{
    struct job_history h = {0};
    for (uint64_t i = 1; i <= 5; i++) {
        struct job_record r = rec(i, (double)i * 10);
        CHECK_EQ(job_history_add(&h, &r), 0);
    }
    CHECK_EQ(h.n, 5);
    CHECK(job_history_find(&h, 3) && job_history_find(&h, 3)->exit_status == 3);
    CHECK(job_history_find(&h, 6) == NULL);
    /* at 45 with a keep of 20: ended at 10 and 20 are older than 20 s, 30 is not */
    job_history_expire(&h, 45, 20);
    CHECK_EQ(h.n, 3);
    CHECK_EQ(h.recs[0].id, 3);
    CHECK(job_history_find(&h, 2) == NULL);
    job_history_expire(&h, 1000, 0);
    CHECK_EQ(h.n, 0);
    job_history_free(&h);
}

static void test_bound(void)
{
    struct job_history h = {0};
    for (uint64_t i = 1; i <= JOB_HISTORY_MAX + 10; i++) {
        struct job_record r = rec(i, 1);
        CHECK_EQ(job_history_add(&h, &r), 0);
    }
    CHECK_EQ(h.n, JOB_HISTORY_MAX);
    CHECK_EQ(h.recs[0].id, 11);
    CHECK_EQ(h.recs[h.n - 1].id, JOB_HISTORY_MAX + 10);
    CHECK(job_history_find(&h, 10) == NULL);
    job_history_free(&h);
}

int main(void)
{
    test_expire_and_find();
    test_bound();
    return 0;
}
