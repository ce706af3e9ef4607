/* libc_state.c — libc's process state is each rank's own, as if each were a process: getopt
 * (optind 1 at start; every rank parses its own argv at the same time), strtok, the rand,
 * random and drand48 generators (a fresh process's numbers, per rank), the locale, the program
 * names, tmpnam and tempnam.  The ranks take each step at once, with a barrier between steps:
 * on kernel threads they run side by side, on carriers (TMPI_RANK_SWITCHING=user) every
 * barrier switches ranks on the same thread.
 *
 * Run with the arguments "-v extra --level=3" (mpi_programs.bats) or none.  It also prints
 * one warnx and one error line per rank, which mpi_programs.bats looks for. */
#define _GNU_SOURCE
#include <errno.h>
#include <error.h>
#include <err.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

extern char *__progname, *__progname_full;

static int rank, size;

static void step(void)
{
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
}

static void check_str(const char *got, const char *want, const char *what)
{
    CHECK(got && strcmp(got, want) == 0, "%s: expected \"%s\", got \"%s\"", what, want,
          got ? got : "(null)");
}

/* main's argv: the job host parsed its own options before, and that must not show. */
static void test_main_argv(int argc, char **argv)
{
    CHECK_EQ(optind, 1);
    CHECK_EQ(opterr, 1);
    CHECK_EQ(optopt, '?');
    CHECK(optarg == NULL, "optarg set before any getopt");
    if (argc == 1) {
        CHECK_EQ(getopt(argc, argv, "v"), -1);
        CHECK_EQ(optind, 1);
        return;
    }
    CHECK_EQ(argc, 4);
    static const struct option lo[] = {{"level", required_argument, NULL, 'l'}, {0}};
    CHECK_EQ(getopt_long(argc, argv, "v", lo, NULL), 'v');
    CHECK_EQ(getopt_long(argc, argv, "v", lo, NULL), 'l');
    check_str(optarg, "3", "--level's argument");
    CHECK_EQ(getopt_long(argc, argv, "v", lo, NULL), -1);
    CHECK_EQ(optind, 3);
    check_str(argv[3], "extra", "the non-option, permuted behind the options");
}

/* Every rank parses an argv of its own, one call per step. */
static void test_getopt_at_once(void)
{
    char num[16], file[32], name[32], attached[32];
    snprintf(num, sizeof num, "%d", rank);
    snprintf(file, sizeof file, "file-%d", rank);
    snprintf(name, sizeof name, "n%d", rank);
    snprintf(attached, sizeof attached, "-c%d", rank);
    char *av[] = {"prog", file, "-a", attached, "--name", name, "-b", "--", "-a", NULL};
    int ac = 9, flag = 0;
    const struct option lo[] = {
        {"name", required_argument, NULL, 'n'}, {"flag", no_argument, &flag, 1}, {0}};
    optind = 0; /* starts over */
    const int want[] = {'a', 'c', 'n', 'b', -1};
    const int want_ind[] = {3, 4, 6, 7, 7};
    const char *want_arg[] = {NULL, num, name, NULL, NULL};
    for (int i = 0; i < 5; i++) {
        step();
        CHECK_EQ(getopt_long(ac, av, "abc:", lo, NULL), want[i]);
        CHECK_EQ(optind, want_ind[i]);
        if (want_arg[i])
            check_str(optarg, want_arg[i], "optarg");
        else
            CHECK(optarg == NULL, "optarg %s at call %d", optarg, i);
    }
    check_str(av[6], "--", "argv[6] after permutation");
    check_str(av[7], file, "argv[7] after permutation");
    check_str(av[8], "-a", "argv[8] after permutation");

    /* opterr and optopt are the rank's: rank 0 silences its errors, the others do not */
    step();
    if (rank == 0) opterr = 0;
    step();
    CHECK_EQ(opterr, rank == 0 ? 0 : 1);
    char *bad[] = {"prog", "-z", NULL};
    optind = 1;
    if (rank == 0) {
        CHECK_EQ(getopt(2, bad, "ab"), '?');
        CHECK_EQ(optopt, 'z');
    }
    step();
    CHECK_EQ(optopt, rank == 0 ? 'z' : 0);
    opterr = 1;

    /* optind = 0 starts a new parse */
    char *again[] = {"prog", "-b", "x", NULL};
    optind = 0;
    CHECK_EQ(getopt(3, again, "b"), 'b');
    CHECK_EQ(getopt(3, again, "b"), -1);
    CHECK_EQ(optind, 2);
}

static void test_strtok(void)
{
    char s[64], want[3][16];
    snprintf(s, sizeof s, "%d:a,,%d:b,%d:c,", rank, rank, rank);
    for (int i = 0; i < 3; i++)
        snprintf(want[i], sizeof want[i], "%d:%c", rank, 'a' + i);
    for (int i = 0; i < 4; i++) {
        step();
        char *t = strtok(i == 0 ? s : NULL, ",");
        if (i < 3)
            check_str(t, want[i], "strtok's token");
        else
            CHECK(t == NULL, "a fourth token %s", t);
    }
}

/* What a plain process prints for the same calls in the same order (glibc, generated with a
 * program of these lines outside MPI). */
static void test_rand_fresh(void)
{
    step();
    CHECK_EQ(rand(), 1804289383);
    step();
    CHECK_EQ(rand(), 846930886);
    CHECK_EQ(rand(), 1681692777);
    step();
    srand(7);
    step();
    CHECK_EQ(rand(), 1045618677);
    CHECK_EQ(rand(), 1863967299);
    step();
    CHECK_EQ(rand(), 1272579899);
    CHECK_EQ(random(), 461085871);
    srandom(1);
    step();
    CHECK_EQ(random(), 1804289383);
    double d = drand48();
    CHECK(d == 0x1.6p-45, "first drand48 %a", d);
    step();
    d = drand48();
    CHECK(d == 0x1.0250b79ae8p-10, "second drand48 %a", d);
    srand48(42);
    step();
    CHECK_EQ(lrand48(), 1598855263);
    CHECK_EQ(lrand48(), 735945821);
    step();
    CHECK_EQ(mrand48(), 477107655);
    unsigned short x[3] = {1, 2, 3};
    d = erand48(x);
    CHECK(d == 0x1.c49aaf1b99ep-2, "erand48 %a", d);
    step();
    CHECK_EQ(nrand48(x), 565063343);
    CHECK_EQ(jrand48(x), -1485464893);
    CHECK(x[0] == 7666 && x[1] == 39619 && x[2] == 42869, "xsubi %u %u %u", x[0], x[1], x[2]);
    step();
    unsigned short s[3] = {5, 6, 7};
    unsigned short *old = seed48(s);
    CHECK(old[0] == 10787 && old[1] == 5575 && old[2] == 7280, "seed48's old value %u %u %u",
          old[0], old[1], old[2]);
    step();
    CHECK_EQ(lrand48(), 1129504919);
    unsigned short p[7] = {1, 2, 3, 4, 5, 6, 7};
    lcong48(p);
    step();
    CHECK_EQ(lrand48(), 917510);
    unsigned short y[3] = {1, 2, 3};
    CHECK_EQ(nrand48(y), 917510);
    static char st[8];
    char *prev = initstate(3, st, sizeof st);
    CHECK(prev != NULL, "initstate failed");
    step();
    CHECK_EQ(random(), 1163074432);
    CHECK_EQ(random(), 465823161);
    step();
    CHECK(setstate(prev) == st, "setstate did not answer the buffer in use");
    CHECK_EQ(random(), 846930886);
}

/* srand(rank): the numbers a process seeded so draws (glibc's random_r on a fresh state of
 * the same size, seeded the same); srand(same) everywhere: the same numbers everywhere. */
static void test_rand_seeds(void)
{
    static char tbl[128];
    struct random_data rd;
    memset(&rd, 0, sizeof rd);
    initstate_r(1, tbl, sizeof tbl, &rd);
    srandom_r((unsigned)rank + 100, &rd);
    srand((unsigned)rank + 100);
    for (int i = 0; i < 8; i++) {
        step();
        int32_t want;
        random_r(&rd, &want);
        CHECK_EQ(rand(), want);
    }
    srand(12345);
    int mine[8], all[8 * 64];
    for (int i = 0; i < 8; i++) {
        step();
        mine[i] = rand();
    }
    if (size > 64) return;
    CHECK_MPI(MPI_Allgather(mine, 8, MPI_INT, all, 8, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 8; i++)
            CHECK(all[8 * r + i] == all[i], "srand(12345): rank %d drew %d, rank 0 %d", r,
                  all[8 * r + i], all[i]);
}

static void check_ctype(int utf8)
{
    CHECK_EQ(MB_CUR_MAX, utf8 ? 6 : 1);
    check_str(nl_langinfo(CODESET), utf8 ? "UTF-8" : "ANSI_X3.4-1968", "the codeset");
    check_str(localeconv()->decimal_point, ".", "the decimal point");
}

/* rank 0 sets C.UTF-8 for everything, rank 1 for LC_CTYPE only, rank 2 asks for a locale
 * that does not exist; nobody else sees any of it. */
static void test_locale(void)
{
    check_str(setlocale(LC_ALL, NULL), "C", "the locale at start");
    check_ctype(0);
    step();
    if (rank == 0) check_str(setlocale(LC_ALL, "C.UTF-8"), "C.UTF-8", "setlocale's answer");
    if (rank == 1) check_str(setlocale(LC_CTYPE, "C.UTF-8"), "C.UTF-8", "setlocale's answer");
    if (rank == 2) CHECK(setlocale(LC_ALL, "xx_NONE.UTF-8") == NULL, "a missing locale was set");
    for (int i = 0; i < 3; i++) {
        step();
        check_ctype(rank == 0 || rank == 1);
    }
    const char *all = setlocale(LC_ALL, NULL);
    if (rank == 0) check_str(all, "C.UTF-8", "rank 0's LC_ALL");
    if (rank == 1)
        CHECK(strncmp(all, "LC_CTYPE=C.UTF-8;LC_NUMERIC=C;LC_TIME=C;", 40) == 0,
              "rank 1's LC_ALL: %s", all);
    if (rank > 1) check_str(all, "C", "LC_ALL of a rank that did not set it");
    if (rank == 1) {
        /* the composite name sets it back */
        char *saved = strdup(all);
        check_str(setlocale(LC_ALL, "C"), "C", "setlocale C");
        CHECK(setlocale(LC_ALL, saved) != NULL, "setlocale of the composite name failed");
        check_ctype(1);
        free(saved);
    }
    /* rank 0's own uselocale is kept across switches, and its global locale stays */
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    CHECK(c != (locale_t)0, "newlocale C");
    if (rank == 0) CHECK(uselocale(c) == LC_GLOBAL_LOCALE, "uselocale's first answer");
    step();
    check_ctype(rank == 1);
    if (rank == 0) check_str(setlocale(LC_ALL, NULL), "C.UTF-8", "rank 0's global under uselocale");
    step();
    if (rank == 0) CHECK(uselocale(LC_GLOBAL_LOCALE) == c, "uselocale's second answer");
    step();
    check_ctype(rank == 0 || rank == 1);
    freelocale(c);
    setlocale(LC_ALL, "C");
    check_ctype(0);
}

static void test_prognames(char **argv)
{
    CHECK(program_invocation_name == argv[0], "program_invocation_name is not argv[0]");
    CHECK(__progname_full == argv[0], "__progname_full is not argv[0]");
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    check_str(program_invocation_short_name, base, "program_invocation_short_name");
    check_str(__progname, base, "__progname");
    /* the bats test finds these lines with the program's name in front */
    warnx("warnx of rank %d", rank);
    errno = ENOENT;
    error(0, errno, "error of rank %d", rank);
}

static void test_tmpnam(void)
{
    enum { N = 64, LEN = 64 };
    char saved[LEN], names[2][LEN], *all;
    char *p = tmpnam(NULL);
    CHECK(p != NULL, "tmpnam failed");
    snprintf(saved, sizeof saved, "%s", p);
    CHECK(strncmp(p, P_tmpdir "/file", strlen(P_tmpdir "/file")) == 0, "tmpnam's name %s", p);
    step();
    /* the others' calls meanwhile did not overwrite the rank's buffer */
    CHECK(strcmp(p, saved) == 0, "tmpnam's buffer changed from %s to %s", saved, p);
    snprintf(names[0], LEN, "%s", p);
    char *t = tempnam(NULL, "tmpiXYZ");
    CHECK(t != NULL, "tempnam failed");
    const char *b = strrchr(t, '/');
    CHECK(b && strncmp(b + 1, "tmpiX", 5) == 0 && strlen(b + 1) == 11, "tempnam's name %s", t);
    snprintf(names[1], LEN, "%s", t);
    free(t);
    if (size > N) return;
    all = malloc((size_t)size * sizeof names);
    CHECK(all != NULL, "out of memory");
    CHECK_MPI(
        MPI_Allgather(names, sizeof names, MPI_CHAR, all, sizeof names, MPI_CHAR, MPI_COMM_WORLD));
    int n = 2 * size;
    for (int i = 0; i < n; i++)
        for (int k = i + 1; k < n; k++)
            CHECK(strcmp(all + i * LEN, all + k * LEN) != 0, "two ranks got the name %s",
                  all + i * LEN);
    free(all);
}

int main(int argc, char **argv)
{
    test_main_argv(argc, argv);
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_getopt_at_once();
    test_strtok();
    test_rand_fresh();
    test_rand_seeds();
    test_locale();
    test_prognames(argv);
    test_tmpnam();
    return finish_ok();
}
