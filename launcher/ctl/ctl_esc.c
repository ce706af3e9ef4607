/* ctl_esc.c — escaped strings for tmpictl's tables (ctl_esc.h). */
#include "ctl_esc.h"

#include "text_escape.h"

/* One line's fields: MSG_MAX_PATH (4096) bytes escape to at most 4 times as many. */
static struct {
    char buf[CTL_ESC_SLOTS][TEXT_ESCAPE_SIZE(4096)];
    unsigned next;
} ctl_esc_slots;

const char *ctl_esc(const char *s, const char *dflt)
{
    if (!s || !*s) return dflt;
    char *out = ctl_esc_slots.buf[ctl_esc_slots.next++ % CTL_ESC_SLOTS];
    return text_escape_str(s, out, sizeof ctl_esc_slots.buf[0]);
}
