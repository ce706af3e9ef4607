/* test_getopt_gnu.c — the ranks' getopt (agent/host/getopt_gnu.c) against glibc's own,
 * called in this process (dlsym RTLD_NEXT, as a program outside a rank would): for every case
 * both parse the same argv from scratch, and each call's answer, optind, optarg, optopt and
 * longind, the flag a long option sets, the permuted argv and everything written to stderr
 * must be the same. */
#include <dlfcn.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "getopt_gnu.h"

enum mode { SHORT, POSIX_SHORT, LONG, LONG_ONLY };

struct tcase {
    enum mode mode;
    const char *opts;
    const char *args; /* argv, split at spaces; "" stands for an empty argument */
    int opterr;
    int posixly_correct; /* POSIXLY_CORRECT in the environment */
    int restart;         /* parse twice: optind = 0 the second time */
};

static int flagvar;

static const struct option longopts[] = {
    {"verbose", no_argument, NULL, 'v'},
    {"verb", no_argument, NULL, 'V'}, /* an exact match wins over longer names */
    {"file", required_argument, NULL, 'f'},
    {"files", required_argument, NULL, 'F'}, /* "fil": ambiguous */
    {"color", optional_argument, NULL, 'C'},
    {"colour", optional_argument, NULL, 'C'}, /* "col": the same option for getopt_long */
    {"flag", no_argument, &flagvar, 7},
    {"xlong", no_argument, NULL, 'x'},
    {"abc", required_argument, NULL, 'A'},
    {NULL, 0, NULL, 0},
};

static const struct tcase cases[] = {
    {SHORT, "abc:d::", "prog -a -b -c val file1 -d -dopt file2 -- -a rest", 1, 0, 0},
    {SHORT, "abc:d::", "prog file1 -ab -cval file2 -bc x y", 1, 0, 0},
    {SHORT, "abc:d::", "prog x y -a z", 1, 0, 0},
    {SHORT, "abc:", "prog -a -c", 1, 0, 0},
    {SHORT, "abc:", "prog -ac", 1, 0, 0},
    {SHORT, "abc:", "prog -z -a -: -; -az", 1, 0, 0},
    {SHORT, "abc:", "prog -z -a -c", 0, 0, 0},
    {SHORT, ":abc:", "prog -z -c", 1, 0, 0},
    {SHORT, "+abc:", "prog -a file -b", 1, 0, 0},
    {SHORT, "+:abc:", "prog -a -c", 1, 0, 0},
    {SHORT, "-abc:", "prog x -a y -c z w -- -b", 1, 0, 0},
    {SHORT, "-:abc:", "prog x -c", 1, 0, 0},
    {SHORT, "ab", "prog - -a -- -b", 1, 0, 0},
    {SHORT, "ab", "prog --", 1, 0, 0},
    {SHORT, "ab", "prog a b -- c", 1, 0, 0},
    {SHORT, "ab", "prog", 1, 0, 0},
    {SHORT, "ab", "prog  -a", 1, 0, 0},
    {SHORT, "ab", "prog -\xe9 -a", 1, 0, 0},
    {SHORT, "ab", "prog --verbose", 1, 0, 0},
    {SHORT, "abc:", "prog -a x -b", 1, 1, 0},
    {SHORT, "-abc:", "prog -a x -b", 1, 1, 0},
    {POSIX_SHORT, "abc:", "prog -a x -b", 1, 0, 0},
    {SHORT, "abc:", "prog x -a y -c z w -b", 1, 0, 1},
    {SHORT, "ab:W;", "prog -W verbose -Wfile=x -W file y -W fi -W", 1, 0, 0},
    {LONG, "ab:W;", "prog -W verbose -Wfile=x -W file y -W fi -Wverbose=1 -W", 1, 0, 0},
    {LONG, ":ab:W;", "prog -W", 1, 0, 0},
    {LONG, "ab:", "prog --verbose --file=x --file y --col --color=red --colour --fla", 1, 0, 0},
    {LONG, "ab:", "prog --verb --fil a --files=b --fi c --unknown --verbose=no --file", 1, 0, 0},
    {LONG, ":ab:", "prog --fil a --unknown --verbose=no --file", 1, 0, 0},
    {LONG, "ab:", "prog --fil=a --=x --fi=y --un=z", 1, 0, 0},
    {LONG, "ab:", "prog --fil a --unknown --verbose=no --file", 0, 0, 0},
    {LONG, "ab:", "prog x --verbose y --file z w -a -- --flag", 1, 0, 0},
    {LONG, "+ab:", "prog --verbose y --file z", 1, 0, 0},
    {LONG, "-ab:", "prog --verbose y --file z --flag q", 1, 0, 0},
    {LONG, "ab:", "prog --verbose y --file z", 1, 1, 0},
    {LONG, "ab:", "prog x --verbose y --xl z -ab w", 1, 0, 1},
    {LONG, "ab:", "prog --color --color= --colour=blue --c", 1, 0, 0},
    {LONG_ONLY, "ab:", "prog -verbose -file x -a -ab -col -colo=r -fla -zzz -f y", 1, 0, 0},
    {LONG_ONLY, "ab:x", "prog -x -xl -xlong -abc q -ab -b q -c -", 1, 0, 0},
    {LONG_ONLY, "ab:", "prog --verbose -verb -v -fil a -fi=b --zz -zz", 1, 0, 0},
    {LONG_ONLY, ":ab:", "prog -fil a -file", 1, 0, 0},
    {LONG_ONLY, "-ab:", "prog x -verbose y -b", 1, 0, 0},
};

/* stderr goes to a file while a parser runs, so that the two outputs can be compared */
static char *capture(FILE *tmp, int fd2, int begin)
{
    fflush(stderr);
    if (begin) {
        CHECK(ftruncate(fileno(tmp), 0) == 0, "ftruncate");
        rewind(tmp);
        CHECK(dup2(fileno(tmp), 2) == 2, "dup2");
        return NULL;
    }
    CHECK(dup2(fd2, 2) == 2, "dup2 back");
    static char buf[8192];
    long n = lseek(fileno(tmp), 0, SEEK_END);
    CHECK(n >= 0 && n < (long)sizeof buf, "captured %ld bytes", n);
    CHECK(pread(fileno(tmp), buf, (size_t)n, 0) == n, "pread");
    buf[n] = 0;
    return buf;
}

#define MAXARGS 32

static int split(const char *args, char *store, char **argv)
{
    int argc = 0;
    if (!*args) return 0;
    strcpy(store, args);
    for (char *s = store;; s++) {
        argv[argc++] = s;
        CHECK(argc < MAXARGS, "too many arguments");
        s = strchr(s, ' ');
        if (!s) break;
        *s = 0;
    }
    argv[argc] = NULL;
    return argc;
}

/* The parser under test: glibc's (mine == 0) or ours.  Appends what each call did to out. */
typedef int (*getopt_fn)(int, char *const *, const char *);
typedef int (*getopt_long_fn)(int, char *const *, const char *, const struct option *, int *);

struct parser {
    int mine;
    struct getopt_gnu st;
    int optind, opterr, optopt;
    char *optarg;
};

static int one_call(struct parser *p, const struct tcase *t, int argc, char **argv, int *li)
{
    if (p->mine) {
        struct getopt_gnu_vars v = {&p->optind, &p->opterr, &p->optopt, &p->optarg};
        int flags = (t->mode == LONG_ONLY ? GETOPT_GNU_LONG_ONLY : 0) |
                    (t->mode == POSIX_SHORT ? GETOPT_GNU_POSIX : 0);
        const struct option *lo = t->mode == LONG || t->mode == LONG_ONLY ? longopts : NULL;
        return getopt_gnu(&p->st, &v, argc, argv, t->opts, lo, li, flags);
    }
    static const char *names[] = {"getopt", "__posix_getopt", "getopt_long", "getopt_long_only"};
    void *f = dlsym(RTLD_NEXT, names[t->mode]);
    CHECK(f != NULL, "no %s in libc", names[t->mode]);
    int r;
    if (t->mode == SHORT || t->mode == POSIX_SHORT)
        r = ((getopt_fn)f)(argc, argv, t->opts);
    else
        r = ((getopt_long_fn)f)(argc, argv, t->opts, longopts, li);
    p->optind = optind;
    p->optopt = optopt;
    p->optarg = optarg;
    return r;
}

static void run(struct parser *p, const struct tcase *t, int argc, char **argv, char *out,
                size_t outlen)
{
    size_t at = strlen(out);
    for (int calls = 0; calls < 64; calls++) {
        int li = -1;
        int r = one_call(p, t, argc, argv, &li);
        at += (size_t)snprintf(
            out + at, outlen - at, "ret=%d optind=%d optarg=%p(%s) optopt=%d longind=%d flag=%d\n",
            r, p->optind, (void *)p->optarg, p->optarg ? p->optarg : "-", p->optopt, li, flagvar);
        CHECK(at < outlen, "trace too long");
        if (r == -1) break;
    }
    for (int i = 0; i < argc; i++)
        at += (size_t)snprintf(out + at, outlen - at, "[%s]", argv[i]);
    at += (size_t)snprintf(out + at, outlen - at, "\n");
    CHECK(at < outlen, "trace too long");
}

/* glibc keeps optopt and optarg inside and copies them out after each call, and optind = 0
 * does not reset them: each case starts ours where glibc's were left. */
static int glibc_optopt, start_optopt;
static char *glibc_optarg, *start_optarg;

/* The whole trace of one parser on one case. */
static void trace(int mine, const struct tcase *t, FILE *tmp, int fd2, char *store, char *out,
                  size_t outlen)
{
    char *argv[MAXARGS + 1];
    int argc = split(t->args, store, argv);
    /* every "" stands for an empty argument */
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "\"\"") == 0) argv[i][0] = 0;
    struct parser p = {.mine = mine, .optind = 1, .opterr = t->opterr, .optopt = '?'};
    if (!mine) {
        start_optopt = glibc_optopt;
        start_optarg = glibc_optarg;
    }
    p.st.optopt = start_optopt;
    p.st.optarg = start_optarg;
    if (t->posixly_correct)
        setenv("POSIXLY_CORRECT", "1", 1);
    else
        unsetenv("POSIXLY_CORRECT");
    /* glibc's state starts over at optind 0 */
    optind = 0;
    opterr = t->opterr;
    flagvar = 0;
    out[0] = 0;
    capture(tmp, fd2, 1);
    run(&p, t, argc, argv, out, outlen);
    if (t->restart) {
        p.optind = 0;
        optind = 0;
        run(&p, t, argc, argv, out, outlen);
    }
    char *err = capture(tmp, fd2, 0);
    if (!mine) {
        glibc_optopt = p.optopt;
        glibc_optarg = p.optarg;
    }
    size_t at = strlen(out);
    snprintf(out + at, outlen - at, "stderr:\n%s", err);
    unsetenv("POSIXLY_CORRECT");
}

/* A parse with its state in the middle of a cluster: a second parser's calls in between do
 * not move it (what two ranks parsing at once need). */
static void test_two_at_once(void)
{
    char *a[] = {"a", "-xy", "file", "-z", NULL};
    char *b[] = {"b", "-q", "-r", NULL};
    struct parser pa = {.mine = 1, .optind = 1, .opterr = 1, .optopt = '?'};
    struct parser pb = pa;
    struct getopt_gnu_vars va = {&pa.optind, &pa.opterr, &pa.optopt, &pa.optarg};
    struct getopt_gnu_vars vb = {&pb.optind, &pb.opterr, &pb.optopt, &pb.optarg};
    CHECK_EQ(getopt_gnu(&pa.st, &va, 4, a, "xyz", NULL, NULL, 0), 'x');
    CHECK_EQ(getopt_gnu(&pb.st, &vb, 3, b, "qr", NULL, NULL, 0), 'q');
    CHECK_EQ(getopt_gnu(&pa.st, &va, 4, a, "xyz", NULL, NULL, 0), 'y');
    CHECK_EQ(getopt_gnu(&pb.st, &vb, 3, b, "qr", NULL, NULL, 0), 'r');
    CHECK_EQ(getopt_gnu(&pa.st, &va, 4, a, "xyz", NULL, NULL, 0), 'z');
    CHECK_EQ(getopt_gnu(&pb.st, &vb, 3, b, "qr", NULL, NULL, 0), -1);
    CHECK_EQ(getopt_gnu(&pa.st, &va, 4, a, "xyz", NULL, NULL, 0), -1);
    CHECK_EQ(pa.optind, 3);
    CHECK(strcmp(a[3], "file") == 0, "argv not permuted: %s", a[3]);
    CHECK_EQ(pb.optind, 3);
    /* no arguments at all: nothing read, nothing moved */
    CHECK_EQ(getopt_gnu(&pb.st, &vb, 0, b, "qr", NULL, NULL, 0), -1);
    CHECK_EQ(pb.optind, 3);
}

int main(void)
{
    FILE *tmp = tmpfile();
    CHECK(tmp != NULL, "tmpfile");
    int fd2 = dup(2);
    CHECK(fd2 >= 0, "dup");
    /* both parse argv made in the same store: their optarg pointers compare as they are */
    static char want[16384], got[16384], store[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct tcase *t = &cases[i];
        trace(0, t, tmp, fd2, store, want, sizeof want);
        trace(1, t, tmp, fd2, store, got, sizeof got);
        CHECK(strcmp(want, got) == 0, "case %zu (%s \"%s\"): glibc:\n%s\nours:\n%s", i, t->opts,
              t->args, want, got);
    }
    test_two_at_once();
    return 0;
}
