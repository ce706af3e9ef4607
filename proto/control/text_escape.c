/* text_escape.c — control characters as \xHH (text_escape.h). */
#include "text_escape.h"

#include <stdio.h>
#include <string.h>

size_t text_escape(const char *s, size_t len, char *out, size_t outlen)
{
    size_t o = 0;
    unsigned cont = 0; /* UTF-8 continuation bytes still owed to the last lead byte */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[12];
        size_t n = 1;
        e[0] = (char)c;
        if (cont && c >= 0x80 && c <= 0xbf) {
            cont--;
        } else if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 &&
                   (unsigned char)s[i + 1] <= 0x9f) {
            /* U+0080..U+009F, the C1 controls, in UTF-8 (0x9b is CSI) */
            n = (size_t)snprintf(e, sizeof e, "\\xc2\\x%02x", (unsigned char)s[i + 1]);
            i++;
            cont = 0;
        } else {
            cont = c >= 0xf0 && c <= 0xf7   ? 3
                   : c >= 0xe0 && c <= 0xef ? 2
                   : c >= 0xc2 && c <= 0xdf ? 1
                                            : 0;
            if (c == '\\')
                n = 2, memcpy(e, "\\\\", 2);
            else if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f))
                n = (size_t)snprintf(e, sizeof e, "\\x%02x", c); /* C0, DEL, a lone C1 byte */
        }
        if (o + n >= outlen) break;
        memcpy(out + o, e, n);
        o += n;
    }
    out[o] = '\0';
    return o;
}

const char *text_escape_str(const char *s, char *out, size_t outlen)
{
    text_escape(s ? s : "", s ? strlen(s) : 0, out, outlen);
    return out;
}
