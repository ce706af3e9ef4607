#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "text_escape.h"

/* The mutable state of the log: the threshold (read by every thread), and what log_init found
 * (written once before any other thread exists, then read only). */
static struct {
    atomic_int level;
    int journal;      /* stderr is the journal: send records with fields */
    char node[256];   /* NODE= */
    log_sink_fn sink; /* job host: records go to the agent (log_set_sink) */
} log_state = {.level = LOG_INFO};

void log_init(const char *node)
{
    snprintf(log_state.node, sizeof log_state.node, "%s", node ? node : "");
    const char *js = getenv("JOURNAL_STREAM");
    struct stat st;
    unsigned long long dev, ino;
    log_state.journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
                        (unsigned long long)st.st_dev == dev &&
                        (unsigned long long)st.st_ino == ino;
}

void log_set_sink(log_sink_fn sink)
{
    log_state.sink = sink;
}

/* "job 12: ..." -> 12; 0 when the message is not about a job. */
static uint64_t job_of(const char *msg)
{
    if (strncmp(msg, "job ", 4) != 0) return 0;
    char *end;
    unsigned long long v = strtoull(msg + 4, &end, 10);
    return end != msg + 4 && *end == ':' ? (uint64_t)v : 0;
}

size_t log_fields(int level, const char *node, uint64_t job_id, const char *user, const char *msg,
                  char *buf, size_t buflen, const char **fields, size_t max)
{
    size_t n = 0, used = 0;
    /* each field is written into buf and pointed at; one that does not fit is left out */
#define FIELD(...)                                                                                 \
    do {                                                                                           \
        int k = snprintf(buf + used, buflen - used, __VA_ARGS__);                                  \
        if (k >= 0 && (size_t)k < buflen - used && n < max) {                                      \
            fields[n++] = buf + used;                                                              \
            used += (size_t)k + 1;                                                                 \
        }                                                                                          \
    } while (0)
    FIELD("MESSAGE=%s", msg);
    FIELD("PRIORITY=%d", level);
    FIELD("SYSLOG_IDENTIFIER=tmpid");
    if (node && *node) FIELD("NODE=%s", node);
    if (!job_id) job_id = job_of(msg);
    if (job_id) FIELD("JOB_ID=%" PRIu64, job_id);
    if (user && *user) FIELD("USER=%s", user);
#undef FIELD
    return n;
}

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

/* Formats into one buffer and writes it with the write system call itself: rank threads also
 * log through here, and their stdio is routed to launchers, so the log must bypass the
 * interposers (agent/interpose/), which sit above the log and are not its to call. */
static void log_vwrite(int level, uint64_t job_id, const char *user, const char *fmt, va_list ap,
                       const char *suffix)
{
    if (level > log_get_level()) return;
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "<%d>", level);
    const int prefix = n; /* the journal gets the level as PRIORITY= instead */
    if (job_id) {
        int k = snprintf(buf + n, sizeof buf - (size_t)n, "job %" PRIu64 ": ", job_id);
        if (k > 0) n += k;
    }
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2) len = sizeof buf - 2;
    if (suffix) {
        int k = snprintf(buf + len, sizeof buf - 1 - len, ": %s", suffix);
        len += k < 0 ? 0 : (size_t)k;
        if (len > sizeof buf - 2) len = sizeof buf - 2;
    }
    /* Messages carry users' strings (program names, directories): their control characters
     * never reach the log raw (text_escape.h), so no line can be forged or a terminal set. */
    char esc[sizeof buf];
    size_t elen =
        text_escape(buf + prefix, len - (size_t)prefix, esc, sizeof esc - 2 - (size_t)prefix);
    memcpy(buf + prefix, esc, elen);
    len = (size_t)prefix + elen;
    if (log_state.sink) {
        buf[len] = '\0';
        log_state.sink(level, buf + prefix, len - (size_t)prefix);
        return;
    }
    if (log_state.journal) {
        buf[len] = '\0';
        char fbuf[2600];
        const char *fields[8];
        size_t nf = log_fields(level, log_state.node, job_id, user, buf + prefix, fbuf, sizeof fbuf,
                               fields, 8);
        struct iovec iov[8];
        for (size_t i = 0; i < nf; i++)
            iov[i] = (struct iovec){.iov_base = (void *)fields[i], .iov_len = strlen(fields[i])};
        if (sd_journal_sendv(iov, (int)nf) == 0) return;
        /* the journal refused: the line below still reaches it through stderr */
    }
    buf[len++] = '\n';
    (void)syscall(SYS_write, 2, buf, len);
}

void log_msg(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(level, 0, NULL, fmt, ap, NULL);
    va_end(ap);
}

void log_job(int level, uint64_t job_id, const char *user, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(level, job_id, user, fmt, ap, NULL);
    va_end(ap);
}

int log_errno(int level, int r, const char *fmt, ...)
{
    char err[128];
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(level, 0, NULL, fmt, ap, strerror_r(-r, err, sizeof err));
    va_end(ap);
    return r;
}
