/* log.h — the agent's log: one line per event on stderr, with sd-daemon "<N>" priority
 * prefixes so journald keeps the levels.  Daemon code logs once, where it decides. */
#ifndef TMPI_AGENT_LOG_H
#define TMPI_AGENT_LOG_H

#include <syslog.h>

/* Lines above this level are dropped (LOG_ERR .. LOG_DEBUG). */
void log_set_level(int level);
int log_get_level(void);
/* "err", "warning", "notice", "info", "debug" -> level; -EINVAL if unknown. */
int log_level_parse(const char *s);

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs and returns r (a negative errno), the message followed by ": strerror(-r)". */
int log_errno(int level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
