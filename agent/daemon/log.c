#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "interpose.h"

/* The only mutable state of the log: the threshold, read by every thread. */
static struct {
    atomic_int level;
} log_state = {LOG_INFO};

void log_set_level(int level)
{
    atomic_store_explicit(&log_state.level, level, memory_order_relaxed);
}
int log_get_level(void)
{
    return atomic_load_explicit(&log_state.level, memory_order_relaxed);
}

int log_level_parse(const char *s)
{
    static const struct {
        const char *name;
        int level;
    } names[] = {{"err", LOG_ERR},       {"error", LOG_ERR}, {"warning", LOG_WARNING},
                 {"notice", LOG_NOTICE}, {"info", LOG_INFO}, {"debug", LOG_DEBUG}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) return names[i].level;
    return -EINVAL;
}

/* Formats into one buffer and writes it with the real write(): rank threads also log through
 * here, and their stdio is routed to launchers, so the log must bypass the interposers. */
static void log_vwrite(int level, const char *fmt, va_list ap, const char *suffix)
{
    if (level > log_get_level()) return;
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "<%d>", level);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2) len = sizeof buf - 2;
    if (suffix) {
        int k = snprintf(buf + len, sizeof buf - 1 - len, ": %s", suffix);
        len += k < 0 ? 0 : (size_t)k;
        if (len > sizeof buf - 2) len = sizeof buf - 2;
    }
    buf[len++] = '\n';
    interpose_real_write(2, buf, len);
}

void log_msg(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(level, fmt, ap, NULL);
    va_end(ap);
}

int log_errno(int level, int r, const char *fmt, ...)
{
    char err[128];
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(level, fmt, ap, strerror_r(-r, err, sizeof err));
    va_end(ap);
    return r;
}
