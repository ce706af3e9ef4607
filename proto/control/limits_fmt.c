/* limits_fmt.c — how resource limits are written (limits_fmt.h). */
#include "limits_fmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "size_text.h"

int limits_parse_cpus(const char *s, uint32_t *ret)
{
    /* whole part and up to three decimals, by hand: no locale, no rounding surprises */
    uint64_t whole = 0, frac = 0;
    unsigned nd = 0;
    const char *p = s;
    if (*p < '0' || *p > '9') return -EINVAL;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > 100000) return -ERANGE;
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (nd == 3) {
                if (*p != '0') return -EINVAL; /* finer than a thousandth */
                continue;
            }
            frac = frac * 10 + (uint64_t)(*p - '0');
            nd++;
        }
        if (nd == 0) return -EINVAL;
    }
    if (*p) return -EINVAL;
    while (nd < 3) {
        frac *= 10;
        nd++;
    }
    uint64_t v = whole * 1000 + frac;
    if (v == 0 || v > 100000ull * 1000) return -ERANGE;
    *ret = (uint32_t)v;
    return 0;
}

void limits_format_cpus(uint32_t milli, char *buf, size_t len)
{
    snprintf(buf, len, "%u.%03u", milli / 1000, milli % 1000);
}

int limits_parse_bytes(const char *s, uint64_t *ret)
{
    return size_text_parse(s, "kmgt", UINT64_MAX, ret);
}
