/* size_text.c — byte counts with a binary suffix (size_text.h). */
#include "size_text.h"

#include <errno.h>
#include <string.h>

int size_text_parse(const char *s, const char *suffixes, uint64_t max, uint64_t *ret)
{
    static const char units[] = "kmgt"; /* index i: 2^(10 (i + 1)) */
    if (*s < '0' || *s > '9') return -EINVAL;
    uint64_t v = 0;
    int big = 0; /* digits past UINT64_MAX: still parsed, so "99...9X" is -EINVAL */
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            big = 1;
        else
            v = v * 10 + d;
    }
    unsigned shift = 0;
    if (*s) {
        char c = (char)(*s | 0x20); /* ASCII lower case */
        const char *u = strchr(units, c);
        if (!u || !*u || !strchr(suffixes, c)) return -EINVAL;
        shift = 10 * (unsigned)(u - units + 1);
        if (*++s) return -EINVAL;
    }
    if (big || v > (max >> shift)) return -ERANGE;
    *ret = v << shift;
    return 0;
}
