/* Slurm's compressed host lists and task counts: ranges, padding, products, every error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "errcheck.h"
#include "slurm.h"

/* list must expand to exactly the names in want, a space-separated string. */
static void expands_to(int line, const char *list, const char *want)
{
    char **names;
    size_t n;
    struct errlist e = ERRLIST_INIT;
    int r = slurm_nodelist_expand("NL", list, &names, &n, &e);
    if (r != 0) {
        fprintf(stderr, "%s:%d: %s: expected success, got %d:\n", __FILE__, line, list, r);
        errlist_print(&e, stderr);
        exit(1);
    }
    char got[4096] = "";
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(got, " ");
        strcat(got, names[i]);
    }
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "%s:%d: %s: expected \"%s\", got \"%s\"\n", __FILE__, line, list, want,
                got);
        exit(1);
    }
    slurm_names_free(names, n);
    errlist_free(&e);
}
#define EXPANDS_TO(list, want) expands_to(__LINE__, list, want)

/* list must fail with exactly the one message want. */
static void fails_with(int line, const char *list, const char *want)
{
    char **names = NULL;
    size_t n = 0;
    struct errlist e = ERRLIST_INIT;
    int r = slurm_nodelist_expand("NL", list, &names, &n, &e);
    if (r != -EINVAL || e.n != 1 || strcmp(e.msg[0], want) != 0) {
        fprintf(stderr, "%s:%d: %s: expected -EINVAL and \"%s\", got %d:\n", __FILE__, line, list,
                want, r);
        errlist_print(&e, stderr);
        exit(1);
    }
    errlist_free(&e);
}
#define FAILS_WITH(list, want) fails_with(__LINE__, list, want)

static void test_nodelist(void)
{
    EXPANDS_TO("single", "single");
    EXPANDS_TO("node[01-04,07],gpu[1-2]-ib,single",
               "node01 node02 node03 node04 node07 gpu1-ib gpu2-ib single");
    EXPANDS_TO("n[8-10]", "n8 n9 n10");
    EXPANDS_TO("n[08-10]", "n08 n09 n10");
    EXPANDS_TO("n[098-101]", "n098 n099 n100 n101");
    EXPANDS_TO("n[0001-0002,0010]", "n0001 n0002 n0010");
    EXPANDS_TO("n[5]", "n5");
    EXPANDS_TO("n[007]x", "n007x");
    EXPANDS_TO("r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2");
    EXPANDS_TO("[1-2]a", "1a 2a");
    EXPANDS_TO("a.example.org,b-1", "a.example.org b-1");
    EXPANDS_TO("n[1,3],m[2-3,5]", "n1 n3 m2 m3 m5");
    /* the limit: 65536 names in total are fine */
    char **names;
    size_t n;
    struct errlist e = ERRLIST_INIT;
    CHECK_EQ(slurm_nodelist_expand("NL", "n[1-65536]", &names, &n, &e), 0);
    CHECK_EQ(n, 65536);
    CHECK(strcmp(names[65535], "n65536") == 0);
    slurm_names_free(names, n);
    CHECK_EQ(slurm_nodelist_expand("NL", "r[1-256]n[001-256]", &names, &n, &e), 0);
    CHECK_EQ(n, 65536);
    CHECK(strcmp(names[257], "r2n002") == 0);
    slurm_names_free(names, n);
}

static void test_nodelist_errors(void)
{
    FAILS_WITH("", "NL is empty");
    FAILS_WITH("node[1-2", "NL: 'node[1-2': '[' without ']'");
    FAILS_WITH("node[1-2,a", "NL: 'node[1-2,a': '[' without ']'");
    FAILS_WITH("node1-2]", "NL: 'node1-2]': ']' without '['");
    FAILS_WITH("node[[1]]", "NL: 'node[[1]]': brackets cannot nest");
    FAILS_WITH("node[]", "NL: 'node[]': empty brackets");
    FAILS_WITH("node[a-b]",
               "NL: 'node[a-b]': 'a-b' is not a number or a range of numbers (like 01-04)");
    FAILS_WITH("node[1-]",
               "NL: 'node[1-]': '1-' is not a number or a range of numbers (like 01-04)");
    FAILS_WITH("node[1,,2]",
               "NL: 'node[1,,2]': '' is not a number or a range of numbers (like 01-04)");
    FAILS_WITH("node[1-2-3]",
               "NL: 'node[1-2-3]': '1-2-3' is not a number or a range of numbers (like 01-04)");
    FAILS_WITH("node[ 1]",
               "NL: 'node[ 1]': ' 1' is not a number or a range of numbers (like 01-04)");
    FAILS_WITH("node[1234567890123456789]",
               "NL: 'node[1234567890123456789]': '1234567890123456789' is not a number or a "
               "range of numbers (like 01-04)");
    FAILS_WITH("node[3-1]", "NL: 'node[3-1]': the range 3-1 goes downwards");
    FAILS_WITH("a,,b", "NL: empty item at position 3");
    FAILS_WITH(",a", "NL: empty item at position 1");
    FAILS_WITH("a,", "NL: empty item at the end");
    FAILS_WITH("n[1-65537]", "NL: 'n[1-65537]': more than 65536 hosts");
    FAILS_WITH("n[0-99999999999]", "NL: 'n[0-99999999999]': more than 65536 hosts");
    FAILS_WITH("r[1-300]n[1-300]", "NL: more than 65536 hosts");
    FAILS_WITH("a[1-65536],b", "NL: more than 65536 hosts");
    FAILS_WITH("node[1-2]!", "NL: 'node[1-2]!': 'node1!': bad host name: only letters, digits, "
                             "'.', '-' and '_' are allowed");
    FAILS_WITH("-n[1-2]", "NL: '-n[1-2]': '-n1': bad host name: it must start with a letter or "
                          "a digit");

    /* every bad item is reported, not just the first */
    char **names;
    size_t n;
    struct errlist e = ERRLIST_INIT;
    CHECK_EQ(slurm_nodelist_expand("NL", "n[3-1],ok,m[,x],p]", &names, &n, &e), -EINVAL);
    CHECK_ERRORS(&e, "NL: 'n[3-1]': the range 3-1 goes downwards",
                 "NL: 'm[,x]': '' is not a number or a range of numbers (like 01-04)",
                 "NL: 'p]': ']' without '['");
    errlist_free(&e);
}

static void tasks_are(int line, const char *list, const uint32_t *want, size_t nwant)
{
    uint32_t *c;
    size_t n;
    struct errlist e = ERRLIST_INIT;
    int r = slurm_tasks_expand("TPN", list, &c, &n, &e);
    if (r != 0 || n != nwant || memcmp(c, want, n * sizeof *c) != 0) {
        fprintf(stderr, "%s:%d: %s: expected %zu counts, got r=%d n=%zu\n", __FILE__, line, list,
                nwant, r, r == 0 ? n : 0);
        errlist_print(&e, stderr);
        exit(1);
    }
    free(c);
}

static void test_tasks(void)
{
    tasks_are(__LINE__, "2(x3),1", (uint32_t[]){2, 2, 2, 1}, 4);
    tasks_are(__LINE__, "4", (uint32_t[]){4}, 1);
    tasks_are(__LINE__, "1,16(x2),3(x1)", (uint32_t[]){1, 16, 16, 3}, 4);
    const char *bad[] = {"",     "0",    "2(x0)", "2(3)", "2(x3",   "a",        "2,",
                         "(x2)", "2(x)", "-1",    "2 ",   "2(x3)x", "1(x65537)"};
    const char *msg[] = {
        "TPN is empty",
        "TPN: '0' is not N or N(xM) with positive whole numbers",
        "TPN: '2(x0)' is not N or N(xM) with positive whole numbers",
        "TPN: '2(3)' is not N or N(xM) with positive whole numbers",
        "TPN: '2(x3' is not N or N(xM) with positive whole numbers",
        "TPN: 'a' is not N or N(xM) with positive whole numbers",
        "TPN: '' is not N or N(xM) with positive whole numbers",
        "TPN: '(x2)' is not N or N(xM) with positive whole numbers",
        "TPN: '2(x)' is not N or N(xM) with positive whole numbers",
        "TPN: '-1' is not N or N(xM) with positive whole numbers",
        "TPN: '2 ' is not N or N(xM) with positive whole numbers",
        "TPN: '2(x3)x' is not N or N(xM) with positive whole numbers",
        "TPN: '1(x65537)' is not N or N(xM) with positive whole numbers",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint32_t *c;
        size_t n;
        struct errlist e = ERRLIST_INIT;
        if (slurm_tasks_expand("TPN", bad[i], &c, &n, &e) != -EINVAL || e.n != 1 ||
            strcmp(e.msg[0], msg[i]) != 0) {
            fprintf(stderr, "%s: expected \"%s\", got \"%s\"\n", bad[i], msg[i],
                    e.n ? e.msg[0] : "(nothing)");
            exit(1);
        }
        errlist_free(&e);
    }
    uint32_t *c;
    size_t n;
    struct errlist e = ERRLIST_INIT;
    CHECK_EQ(slurm_tasks_expand("TPN", "1(x65536),1", &c, &n, &e), -EINVAL);
    CHECK_ERRORS(&e, "TPN: more than 65536 nodes");
    errlist_free(&e);
}

static void test_hosts(void)
{
    struct hostlist l = {0};
    struct errlist e = ERRLIST_INIT;
    CHECK_EQ(slurm_hosts("node[01-03],gpu1", "2(x3),1", &l, &e), 0);
    CHECK_EQ(l.n, 4);
    CHECK(strcmp(l.hosts[0].name, "node01") == 0 && l.hosts[0].slots == 2);
    CHECK(strcmp(l.hosts[2].name, "node03") == 0 && l.hosts[2].slots == 2);
    CHECK(strcmp(l.hosts[3].name, "gpu1") == 0 && l.hosts[3].slots == 1);
    CHECK_EQ(l.hosts[3].port, HOSTLIST_DEFAULT_PORT);
    hostlist_free(&l);

    /* no task counts: one slot per node */
    CHECK_EQ(slurm_hosts("a,b", NULL, &l, &e), 0);
    CHECK(l.n == 2 && l.hosts[0].slots == 1 && l.hosts[1].slots == 1);
    hostlist_free(&l);
    CHECK_EQ(slurm_hosts("a,b", "", &l, &e), 0);
    CHECK_EQ(hostlist_total_slots(&l), 2);
    hostlist_free(&l);

    /* a node listed twice: its slots add up */
    CHECK_EQ(slurm_hosts("a,b,a", "1,2,3", &l, &e), 0);
    CHECK(l.n == 2 && l.hosts[0].slots == 4 && l.hosts[1].slots == 2);
    hostlist_free(&l);
    CHECK_ERRORS(&e);

    CHECK_EQ(slurm_hosts("node[1-4]", "2(x3)", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "SLURM_TASKS_PER_NODE gives slots for 3 nodes but SLURM_JOB_NODELIST has 4");
    errlist_free(&e);
    hostlist_free(&l);
    CHECK_EQ(slurm_hosts("node1", "1,1", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "SLURM_TASKS_PER_NODE gives slots for 2 nodes but SLURM_JOB_NODELIST has 1");
    errlist_free(&e);
    hostlist_free(&l);
    CHECK_EQ(slurm_hosts("node[1-2", "1", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "SLURM_JOB_NODELIST: 'node[1-2': '[' without ']'");
    errlist_free(&e);
    CHECK_EQ(slurm_hosts("a", "x", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "SLURM_TASKS_PER_NODE: 'x' is not N or N(xM) with positive whole numbers");
    errlist_free(&e);
    hostlist_free(&l);
    CHECK_EQ(slurm_hosts("a,a", "1048576,1", &l, &e), -EINVAL);
    CHECK_ERRORS(&e, "SLURM_JOB_NODELIST: a: more than 1048576 slots in total");
    errlist_free(&e);
    hostlist_free(&l);
}

int main(void)
{
    test_nodelist();
    test_nodelist_errors();
    test_tasks();
    test_hosts();
    puts("slurm: ok");
    return 0;
}
