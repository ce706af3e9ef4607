/* lib_list.c — validation of tmpid.conf's private_libraries (lib_list.h). */
#include "lib_list.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module_marker.h"

#define SEPS " ,:\t"

/* Characters of a library file name (what ld.so finds through a DT_NEEDED string). */
static int name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-' || ch == '+';
}

/* The entry of TMPI_SHARED_LIBS_DEFAULT that e (of length n) overlaps: one is a prefix of
 * the other, so making e private would copy part of the system runtime per rank.  NULL if
 * none; out receives the runtime's name. */
static const char *runtime_overlap(const char *e, size_t n, char *out, size_t outlen)
{
    for (const char *p = TMPI_SHARED_LIBS_DEFAULT; *p;) {
        p += strspn(p, " ");
        size_t len = strcspn(p, " ");
        if (len && strncmp(e, p, n < len ? n : len) == 0) {
            snprintf(out, outlen, "%.*s", (int)len, p);
            return out;
        }
        p += len;
    }
    return NULL;
}

int lib_list_check_private(const char *list, char *why, size_t whylen)
{
    size_t count = 0;
    for (const char *p = list ? list : ""; *p;) {
        p += strspn(p, SEPS);
        size_t n = strcspn(p, SEPS);
        if (!n) break;
        for (size_t i = 0; i < n; i++)
            if (!name_char(p[i])) {
                snprintf(why, whylen, "\"%.*s\" is not a library name (character '%c')",
                         (int)(n > 64 ? 64 : n), p, p[i]);
                return -EINVAL;
            }
        if (n > TMPI_LIB_PREFIX_MAX) {
            snprintf(why, whylen, "\"%.32s...\" is longer than %d characters", p,
                     TMPI_LIB_PREFIX_MAX);
            return -EINVAL;
        }
        char rt[64];
        if (runtime_overlap(p, n, rt, sizeof rt)) {
            snprintf(why, whylen, "\"%.*s\" names %s, part of the system runtime every rank shares",
                     (int)n, p, rt);
            return -EINVAL;
        }
        if (++count > TMPI_PRIVATE_LIBS_MAX) {
            snprintf(why, whylen, "more than %d libraries (TMPI_PRIVATE_LIBS_MAX)",
                     TMPI_PRIVATE_LIBS_MAX);
            return -E2BIG;
        }
        p += n;
    }
    return 0;
}
