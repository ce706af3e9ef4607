/* text_escape.h — user-supplied strings made safe to show to an administrator.
 *
 * Program names, working directories, node and user names reach tmpictl's tables and the
 * agent's log; raw, their control characters would act on the admin's terminal (ESC sets
 * titles and clears screens, CR overwrites a line, BEL rings) or forge log lines.  Every
 * control character (C0, DEL, and C1 written as UTF-8 or as a single byte) is shown as \xHH
 * and a backslash as \\, so what is shown is what was sent.  --json output escapes in its
 * own way (JSON strings) and does not use this. */
#ifndef TMPI_PROTO_TEXT_ESCAPE_H
#define TMPI_PROTO_TEXT_ESCAPE_H

#include <stddef.h>

/* Room text_escape needs for n input bytes, with the NUL. */
#define TEXT_ESCAPE_SIZE(n) (4 * (n) + 1)

/* Escapes len bytes of s into out (outlen > 0 bytes, always NUL-terminated; an escape that
 * does not fit whole is left out, and so is the rest).  Returns the length written. */
size_t text_escape(const char *s, size_t len, char *out, size_t outlen);

/* text_escape of the NUL-terminated s (NULL: ""); returns out. */
const char *text_escape_str(const char *s, char *out, size_t outlen);

#endif
