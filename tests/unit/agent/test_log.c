/* The agent's log: the journal fields of a record (NODE, JOB_ID, USER, PRIORITY) and the plain
 * "<N>job ID: ..." line written when stderr is not the journal. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "interpose.h"
#include "log.h"

static int has(const char **f, size_t n, const char *want)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(f[i], want) == 0) return 1;
    fprintf(stderr, "expected the field %s among:\n", want);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "  %s\n", f[i]);
    return 0;
}

static void test_fields_of_a_job_record(void)
{
    char buf[512];
    const char *f[8];
    size_t n =
        log_fields(LOG_INFO, "node7", 42, "alice", "job 42: 4 ranks of x", buf, sizeof buf, f, 8);
    CHECK_EQ(n, 6);
    CHECK(has(f, n, "MESSAGE=job 42: 4 ranks of x"));
    CHECK(has(f, n, "PRIORITY=6"));
    CHECK(has(f, n, "SYSLOG_IDENTIFIER=tmpid"));
    CHECK(has(f, n, "NODE=node7"));
    CHECK(has(f, n, "JOB_ID=42"));
    CHECK(has(f, n, "USER=alice"));
}

static void test_job_id_found_in_plain_messages(void)
{
    char buf[512];
    const char *f[8];
    size_t n =
        log_fields(LOG_WARNING, "n", 0, NULL, "job 9: killing its job host", buf, sizeof buf, f, 8);
    CHECK(has(f, n, "JOB_ID=9"));
    n = log_fields(LOG_WARNING, "n", 0, NULL, "jobs: 9 running", buf, sizeof buf, f, 8);
    for (size_t i = 0; i < n; i++)
        CHECK(strncmp(f[i], "JOB_ID=", 7) != 0);
    n = log_fields(LOG_WARNING, "", 0, NULL, "job x: no", buf, sizeof buf, f, 8);
    CHECK_EQ(n, 3); /* no NODE, no JOB_ID, no USER */
}

static void test_fields_that_do_not_fit_are_left_out(void)
{
    char buf[40];
    const char *f[8];
    size_t n = log_fields(LOG_ERR, "node", 1, "u", "a message longer than the little buffer", buf,
                          sizeof buf, f, 8);
    for (size_t i = 0; i < n; i++)
        CHECK(strncmp(f[i], "MESSAGE=", 8) != 0);
    CHECK(n >= 1);
}

/* Not under journald: one line on stderr, the priority prefix then "job ID: ". */
static void test_plain_line(void)
{
    char path[] = "/tmp/tmpi-test-log-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    CHECK(fd >= 0 && saved >= 0);
    unsetenv("JOURNAL_STREAM");
    dup2(fd, 2);
    log_init("n1");
    log_set_level(LOG_INFO);
    log_job(LOG_NOTICE, 17, "bob", "ended: %s", "killed");
    log_debug("not shown at level info");
    dup2(saved, 2);
    close(saved);
    char got[256] = "";
    ssize_t k = pread(fd, got, sizeof got - 1, 0);
    got[k > 0 ? k : 0] = '\0';
    close(fd);
    unlink(path);
    if (strcmp(got, "<5>job 17: ended: killed\n") != 0) fprintf(stderr, "got \"%s\"\n", got);
    CHECK(strcmp(got, "<5>job 17: ended: killed\n") == 0);
}

int main(void)
{
    CHECK(interpose_init() == 0);
    test_fields_of_a_job_record();
    test_job_id_found_in_plain_messages();
    test_fields_that_do_not_fit_are_left_out();
    test_plain_line();
    puts("agent log: ok");
    return 0;
}
