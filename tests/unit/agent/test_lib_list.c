/* test_lib_list.c — tmpid.conf's private_libraries check (agent/base/lib_list.c): names,
 * separators, the system runtime refused either way round (a prefix of its name or it a prefix
 * of the entry), TMPI_LIB_PREFIX_MAX characters and TMPI_PRIVATE_LIBS_MAX entries. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "lib_list.h"

static char why[256];

static int check(const char *list)
{
    why[0] = '\0';
    return lib_list_check_private(list, why, sizeof why);
}

static void test_names(void)
{
    CHECK_EQ(check(NULL), 0);
    CHECK_EQ(check(""), 0);
    CHECK_EQ(check(" ,: "), 0);
    CHECK_EQ(check("libifcore.so.5, libflang:libpgf90 libx+y_z-1.so"), 0);
    CHECK_EQ(check("libgfortran.so"), 0); /* the built-in one: allowed, changes nothing */
    CHECK_EQ(check("libfoo.so /usr/lib/libbar.so"), -EINVAL);
    CHECK(strstr(why, "\"/usr/lib/libbar.so\" is not a library name (character '/')"), "%s", why);
    CHECK_EQ(check("lib\"x"), -EINVAL);
    CHECK_EQ(check("libfoo\n"), -EINVAL);
}

static void test_runtime(void)
{
    CHECK_EQ(check("libc.so.6"), -EINVAL); /* a longer name of libc.so */
    CHECK(strstr(why, "names libc.so, part of the system runtime"), "%s", why);
    CHECK_EQ(check("libstd"), -EINVAL); /* a prefix of libstdc++.so */
    CHECK(strstr(why, "libstdc++.so"), "%s", why);
    CHECK_EQ(check("ld-linux-x86-64.so.2"), -EINVAL);
    CHECK_EQ(check("libtmpi.so.0"), -EINVAL);
    CHECK_EQ(check("li"), -EINVAL);         /* would match every lib... */
    CHECK_EQ(check("libcounter libcx"), 0); /* neither overlaps libc.so */
}

static void test_limits(void)
{
    char name[TMPI_LIB_PREFIX_MAX + 2];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    memcpy(name, "libq", 4);
    CHECK_EQ(check(name), -EINVAL); /* TMPI_LIB_PREFIX_MAX + 1 characters */
    CHECK(strstr(why, "is longer than 255 characters"), "%s", why);
    name[TMPI_LIB_PREFIX_MAX] = '\0';
    CHECK_EQ(check(name), 0);
    char list[TMPI_PRIVATE_LIBS_MAX * 8 + 16] = "";
    for (int i = 0; i < TMPI_PRIVATE_LIBS_MAX; i++) {
        char e[16];
        snprintf(e, sizeof e, "lq%d ", i);
        strcat(list, e);
    }
    CHECK_EQ(check(list), 0);
    strcat(list, "lqlast");
    CHECK_EQ(check(list), -E2BIG);
    CHECK(strstr(why, "more than 32 libraries (TMPI_PRIVATE_LIBS_MAX)"), "%s", why);
}

int main(void)
{
    test_names();
    test_runtime();
    test_limits();
    return 0;
}
