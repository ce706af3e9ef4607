/* hostfile.c — reading a host file (see hostfile.h for the format). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile.h"

/* What one line says, before it is added to the list. */
struct line {
    char *name;
    bool ipv6;
    uint32_t slots, max_slots;
    uint16_t port;
    bool have_slots, have_max, have_port;
};

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The host token: HOST, HOST:N or [IPv6][:N].  Problems are reported against loc. */
static int parse_host_token(const char *tok, size_t len, struct line *ln, const char *loc,
                            struct errlist *err)
{
    size_t hlen = len;
    const char *colon = NULL;
    if (tok[0] == '[') {
        const char *rb = memchr(tok, ']', len);
        if (rb && rb + 1 < tok + len) {
            if (rb[1] == ':')
                colon = rb + 1;
            else {
                errlist_add(err, "%s: unexpected '%.*s' after the IPv6 address", loc,
                            (int)(tok + len - rb - 1), rb + 1);
                return -EINVAL;
            }
        }
    } else {
        const char *c = memchr(tok, ':', len);
        /* two or more colons: an IPv6 address without brackets, hostlist_parse_host says so */
        if (c && !memchr(c + 1, ':', (size_t)(tok + len - c - 1))) colon = c;
    }
    int bad = 0;
    if (colon) {
        hlen = (size_t)(colon - tok);
        size_t nlen = (size_t)(tok + len - colon - 1);
        int r = hostlist_parse_count(colon + 1, nlen, HOSTLIST_MAX_SLOTS, &ln->slots);
        if (r == -ERANGE) {
            errlist_add(err, "%s: %.*s: at most %u slots per host", loc, (int)len, tok,
                        HOSTLIST_MAX_SLOTS);
            bad = -EINVAL;
        } else if (r < 0) {
            errlist_add(err, "%s: %.*s: the slots after ':' must be a positive integer", loc,
                        (int)len, tok);
            bad = -EINVAL;
        }
        ln->have_slots = true;
    }
    const char *why;
    int r = hostlist_parse_host(tok, hlen, &ln->name, &ln->ipv6, &why);
    if (r == -ENOMEM) return r;
    if (r < 0) {
        if (hlen == 0 || (hlen == 2 && tok[0] == '['))
            errlist_add(err, "%s: empty host name", loc);
        else
            errlist_add(err, "%s: '%.*s': %s", loc, (int)hlen, tok, why);
        return -EINVAL;
    }
    return bad;
}

/* One KEY=VALUE setting after the host. */
static int parse_setting(const char *tok, size_t len, struct line *ln, const char *loc,
                         struct errlist *err)
{
    const char *eq = memchr(tok, '=', len);
    if (!eq) {
        errlist_add(err, "%s: unexpected '%.*s' (settings are KEY=VALUE)", loc, (int)len, tok);
        return -EINVAL;
    }
    size_t klen = (size_t)(eq - tok), vlen = len - klen - 1;
    const char *v = eq + 1;
    int r;
#define KEY_IS(k) (klen == strlen(k) && memcmp(tok, k, klen) == 0)
    if (KEY_IS("slots") || KEY_IS("max_slots")) {
        bool is_max = KEY_IS("max_slots");
        bool *have = is_max ? &ln->have_max : &ln->have_slots;
        if (*have) {
            errlist_add(err, "%s: %s given twice", loc, is_max ? "max_slots" : "slots");
            return -EINVAL;
        }
        *have = true;
        r = hostlist_parse_count(v, vlen, HOSTLIST_MAX_SLOTS, is_max ? &ln->max_slots : &ln->slots);
        if (r == -ERANGE) {
            errlist_add(err, "%s: %.*s: at most %u slots per host", loc, (int)len, tok,
                        HOSTLIST_MAX_SLOTS);
            return -EINVAL;
        }
        if (r < 0) {
            errlist_add(err, "%s: %.*s: not a positive integer", loc, (int)len, tok);
            return -EINVAL;
        }
        return 0;
    }
    if (KEY_IS("port")) {
        if (ln->have_port) {
            errlist_add(err, "%s: port given twice", loc);
            return -EINVAL;
        }
        ln->have_port = true;
        uint32_t port;
        r = hostlist_parse_count(v, vlen, 65535, &port);
        if (r < 0) {
            errlist_add(err, "%s: %.*s: not a port number (1..65535)", loc, (int)len, tok);
            return -EINVAL;
        }
        ln->port = (uint16_t)port;
        return 0;
    }
#undef KEY_IS
    if (klen == 0)
        errlist_add(err, "%s: '%.*s': a setting needs a key before '='", loc, (int)len, tok);
    else
        errlist_add(err, "%s: unknown key '%.*s' (expected slots, max_slots or port)", loc,
                    (int)klen, tok);
    return -EINVAL;
}

/* One line without its newline and comment.  Returns 0 (a host, or nothing on the line),
 * -EINVAL after reporting, -ENOMEM. */
static int parse_line(char *s, struct line *ln, const char *loc, struct errlist *err)
{
    int bad = 0, r;
    bool first = true;
    while (*s) {
        while (is_blank(*s))
            s++;
        if (!*s) break;
        size_t len = 0;
        while (s[len] && !is_blank(s[len]))
            len++;
        if (first && memchr(s, '=', len)) {
            errlist_add(err, "%s: empty host name: the line starts with '%.*s'", loc, (int)len, s);
            bad = -EINVAL;
        } else if (first) {
            r = parse_host_token(s, len, ln, loc, err);
            if (r == -ENOMEM) return r;
            if (r < 0) bad = r;
        } else {
            if (parse_setting(s, len, ln, loc, err) < 0) bad = -EINVAL;
        }
        first = false;
        s += len;
    }
    if (!bad && ln->have_max && ln->max_slots < (ln->have_slots ? ln->slots : 1)) {
        errlist_add(err, "%s: max_slots=%u is less than slots=%u", loc, ln->max_slots,
                    ln->have_slots ? ln->slots : 1);
        bad = -EINVAL;
    }
    return bad;
}

/* Read one line into buf (HOSTFILE_MAX_LINE + 1 bytes) without its newline.  A longer line is
 * read to its end but not kept, so no line can make us allocate.  Returns false at the end of
 * the file (or on a read error) when nothing was read. */
static bool read_line(FILE *f, char *buf, size_t *ret_len, bool *ret_long, bool *ret_nul)
{
    size_t len = 0;
    bool any = false;
    int c;
    *ret_long = *ret_nul = false;
    while ((c = getc_unlocked(f)) != EOF) {
        any = true;
        if (c == '\n') break;
        if (c == '\0') *ret_nul = true;
        if (len < HOSTFILE_MAX_LINE + 1)
            buf[len++] = (char)c;
        else
            *ret_long = true;
    }
    if (len && buf[len - 1] == '\r') len--;
    if (len > HOSTFILE_MAX_LINE) *ret_long = true;
    buf[len < HOSTFILE_MAX_LINE ? len : HOSTFILE_MAX_LINE] = '\0';
    *ret_len = len;
    return any;
}

int hostfile_parse_stream(FILE *f, const char *name, struct hostlist *l, struct errlist *err)
{
    size_t before = errlist_count(err), lineno = 0, len;
    bool full = false; /* the host limit was reached: keep checking lines, add nothing */
    bool too_long, nul;
    char *buf = malloc(HOSTFILE_MAX_LINE + 2);
    char *loc = malloc(strlen(name) + 24);
    int r = 0;
    if (!buf || !loc) {
        free(buf);
        free(loc);
        return -ENOMEM;
    }
    errno = 0;
    while (read_line(f, buf, &len, &too_long, &nul)) {
        lineno++;
        sprintf(loc, "%s:%zu", name, lineno);
        if (too_long) {
            errlist_add(err, "%s: line longer than %d characters", loc, HOSTFILE_MAX_LINE);
            continue;
        }
        if (nul) {
            errlist_add(err, "%s: the line contains a NUL byte", loc);
            continue;
        }
        char *hash = strchr(buf, '#');
        if (hash) *hash = '\0';
        struct line ln = {.slots = 1, .port = HOSTLIST_DEFAULT_PORT};
        r = parse_line(buf, &ln, loc, err);
        if (r == 0 && ln.name && !full) {
            r = hostlist_add(l, ln.name, ln.ipv6, ln.port, ln.slots,
                             ln.have_max ? ln.max_slots : 0);
            if (r == -E2BIG) {
                errlist_add(err, "%s: more than %u hosts", loc, HOSTLIST_MAX_HOSTS);
                full = true;
            } else if (r == -EOVERFLOW) {
                errlist_add(err, "%s: %s: more than %u slots in total", loc, ln.name,
                            HOSTLIST_MAX_SLOTS);
            }
        }
        free(ln.name);
        if (r == -ENOMEM) break;
        r = 0;
    }
    bool read_error = ferror(f);
    int read_errno = errno ? errno : EIO;
    free(buf);
    free(loc);
    if (r == -ENOMEM) return r;
    if (read_error) {
        errlist_add(err, "%s: %s", name, strerror(read_errno));
        return -EINVAL;
    }
    if (errlist_count(err) > before) return -EINVAL;
    if (l->n == 0) {
        errlist_add(err, "%s: no hosts in the file", name);
        return -EINVAL;
    }
    return 0;
}

int hostfile_parse(const char *path, struct hostlist *l, struct errlist *err)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        errlist_add(err, "%s: %s", path, strerror(errno));
        return -EINVAL;
    }
    int r = hostfile_parse_stream(f, path, l, err);
    fclose(f);
    return r;
}
