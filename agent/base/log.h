/* log.h — the agent's log: one record per event.  Under journald (stderr is the journal
 * stream) each record goes to the journal with structured fields: PRIORITY, NODE (the agent's
 * name), and JOB_ID / USER on records about a job; otherwise a line on stderr with an
 * sd-daemon "<N>" priority prefix.  Daemon code logs once, where it decides. */
#ifndef TMPI_AGENT_LOG_H
#define TMPI_AGENT_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

/* Lines above this level are dropped (LOG_ERR .. LOG_DEBUG). */
void log_set_level(int level);
int log_get_level(void);
/* "err", "warning", "notice", "info", "debug" -> level; -EINVAL if unknown. */
int log_level_parse(const char *s);

/* Once at start, before other threads log: the node name for NODE= and whether stderr is the
 * journal (JOURNAL_STREAM names stderr's device and inode, systemd.exec(5)). */
void log_init(const char *node);

/* A job host's log leaves on its channel to the agent, never on a descriptor the ranks share:
 * once set (before other threads log), every record is handed to sink (level, the escaped
 * message without the priority prefix, NUL-terminated) instead of being written.  NULL: back
 * to stderr.  The sink may be called from any thread. */
typedef void (*log_sink_fn)(int level, const char *msg, size_t len);
void log_set_sink(log_sink_fn sink);

void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs and returns r (a negative errno), the message followed by ": strerror(-r)". */
int log_errno(int level, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A record about job job_id of user (a name; NULL: unknown): "job ID: ..." on stderr, with
 * JOB_ID= and USER= fields in the journal.  Records that start "job ID:" through log_msg get
 * JOB_ID= too. */
void log_job(int level, uint64_t job_id, const char *user, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The journal fields of one record, "NAME=value" each, in fields[0..return): what log_msg
 * sends when journald is there.  buf holds the strings.  Pure, for tests. */
size_t log_fields(int level, const char *node, uint64_t job_id, const char *user, const char *msg,
                  char *buf, size_t buflen, const char **fields, size_t max);

#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
