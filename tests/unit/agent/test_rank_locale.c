/* test_rank_locale.c — a rank's setlocale (agent/host/rank_locale.c) answers what glibc's
 * answers for the same calls, made here on the process's own locale side by side (names of
 * single categories, LC_ALL's composite names and their order, "" read from the environment,
 * POSIX, unknown names and categories, composite names set back); the rank's locale is the
 * calling thread's and leaves the process's alone; uselocale and the carriers' switch. */
#include <dlfcn.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "rank_locale.h"

typedef char *(*setlocale_fn)(int, const char *);

static setlocale_fn glibc_setlocale;
static struct rank_locale mine;

static void same(int cat, const char *name)
{
    char *w = glibc_setlocale(cat, name);
    char *want = w ? strdup(w) : NULL;
    char *got = rank_locale_set(&mine, cat, name, 1);
    CHECK((!want && !got) || (want && got && strcmp(want, got) == 0),
          "setlocale(%d, %s): glibc \"%s\", ours \"%s\"", cat, name ? name : "NULL",
          want ? want : "(null)", got ? got : "(null)");
    free(want);
}

static void check_codeset(const char *want)
{
    const char *got = nl_langinfo(CODESET);
    CHECK(strcmp(got, want) == 0, "codeset: expected %s, got %s", want, got);
}

int main(void)
{
    glibc_setlocale = (setlocale_fn)dlsym(RTLD_NEXT, "setlocale");
    CHECK(glibc_setlocale != NULL, "no setlocale in libc");
    unsetenv("LC_ALL");
    unsetenv("LANG");
    for (int c = 0; c <= LC_IDENTIFICATION; c++) {
        static const char *vars[] = {
            "LC_CTYPE",     "LC_NUMERIC",     "LC_TIME",          "LC_COLLATE", "LC_MONETARY",
            "LC_MESSAGES",  "LC_ALL",         "LC_PAPER",         "LC_NAME",    "LC_ADDRESS",
            "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION"};
        unsetenv(vars[c]);
    }
    same(LC_ALL, NULL);
    same(LC_CTYPE, NULL);
    same(LC_CTYPE, "C.UTF-8");
    check_codeset("UTF-8");
    same(LC_ALL, NULL);
    same(LC_NUMERIC, "POSIX");
    same(LC_TIME, "C.utf8");
    same(LC_ALL, NULL);
    same(LC_TIME, NULL);
    /* unknown names and categories change nothing */
    same(LC_ALL, "xx_NONE.UTF-8");
    same(LC_COLLATE, "xx_NONE");
    same(LC_ALL, NULL);
    CHECK(rank_locale_set(&mine, 99, "C", 1) == NULL, "category 99 accepted");
    char *saved = strdup(rank_locale_set(&mine, LC_ALL, NULL, 1));
    same(LC_ALL, "C");
    check_codeset("ANSI_X3.4-1968");
    same(LC_ALL, NULL);
    /* the composite name sets every category back */
    same(LC_ALL, saved);
    same(LC_ALL, NULL);
    check_codeset("UTF-8");
    free(saved);
    same(LC_ALL, "LC_CTYPE=C;LC_NUMERIC=C");
    /* "" reads the environment: LC_ALL, then the category's variable, then LANG */
    setenv("LANG", "C.UTF-8", 1);
    setenv("LC_NUMERIC", "C", 1);
    same(LC_ALL, "");
    same(LC_ALL, NULL);
    same(LC_NUMERIC, NULL);
    setenv("LC_ALL", "C", 1);
    same(LC_CTYPE, "");
    same(LC_ALL, NULL);
    unsetenv("LC_ALL");
    same(LC_ALL, "C.UTF-8");
    same(LC_ALL, NULL);
    CHECK(strcmp(rank_locale_conv(&mine)->decimal_point, ".") == 0, "decimal point");

    /* the rank's locale leaves the process's alone */
    glibc_setlocale(LC_ALL, "C");
    CHECK(strcmp(rank_locale_set(&mine, LC_ALL, NULL, 1), "C.UTF-8") == 0, "rank's LC_ALL");
    check_codeset("UTF-8"); /* this thread runs in the rank's locale */
    CHECK(strcmp(glibc_setlocale(LC_ALL, NULL), "C") == 0, "the process's locale changed");

    /* uselocale: the rank's own, LC_GLOBAL_LOCALE meaning the rank's global locale */
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    CHECK(rank_locale_use(&mine, c, 1) == LC_GLOBAL_LOCALE, "uselocale's first answer");
    check_codeset("ANSI_X3.4-1968");
    CHECK(rank_locale_use(&mine, (locale_t)0, 1) == c, "uselocale(0) does not answer c");
    CHECK(strcmp(rank_locale_set(&mine, LC_CTYPE, NULL, 1), "C.UTF-8") == 0, "global changed");
    check_codeset("ANSI_X3.4-1968"); /* setlocale does not override a thread's uselocale */
    CHECK(rank_locale_use(&mine, LC_GLOBAL_LOCALE, 1) == c, "uselocale's second answer");
    check_codeset("UTF-8");

    /* a carrier leaving the rank's context goes back to the process's locale, and entering
     * it comes back to the rank's */
    rank_locale_leave(&mine);
    check_codeset("ANSI_X3.4-1968");
    rank_locale_enter(&mine);
    check_codeset("UTF-8");
    rank_locale_leave(&mine);
    /* a rank that never set a locale costs the switch nothing and stays in the process's */
    struct rank_locale fresh = {0};
    rank_locale_enter(&fresh);
    check_codeset("ANSI_X3.4-1968");
    CHECK(strcmp(rank_locale_set(&fresh, LC_ALL, NULL, 1), "C") == 0, "a fresh rank's LC_ALL");

    /* with threads, replaced objects are kept until the rank is freed */
    CHECK(rank_locale_for_thread(&mine) == mine.global, "a thread's first locale");
    rank_locale_set(&mine, LC_ALL, "C", 0);
    rank_locale_set(&mine, LC_ALL, "C.UTF-8", 0);
    CHECK(mine.nretired >= 1, "nothing kept for the rank's threads");
    freelocale(c);
    rank_locale_free(&mine);
    rank_locale_free(&fresh);
    return 0;
}
