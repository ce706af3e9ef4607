/* hostlist.c — host names, the host list with merging and limits, and -H (see hostlist.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hostlist.h"

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int hostlist_parse_host(const char *s, size_t len, char **ret_name, bool *ret_ipv6,
                        const char **ret_why)
{
    char buf[HOSTLIST_MAX_NAME + 3];
    *ret_why = NULL;
    if (len == 0 || (len == 2 && s[0] == '[' && s[1] == ']')) {
        *ret_why = "empty host name";
        return -EINVAL;
    }
    if (s[0] == '[') {
        /* [IPv6]: inet_pton decides; the stored form is inet_ntop's, so that two spellings of
         * one address merge. */
        struct in6_addr a6;
        if (s[len - 1] != ']' || len - 2 >= INET6_ADDRSTRLEN) {
            *ret_why = "not an IPv6 address in brackets";
            return -EINVAL;
        }
        memcpy(buf, s + 1, len - 2);
        buf[len - 2] = '\0';
        if (inet_pton(AF_INET6, buf, &a6) != 1) {
            *ret_why = "not an IPv6 address in brackets";
            return -EINVAL;
        }
        char out[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, &a6, out, sizeof out);
        *ret_name = strdup(out);
        *ret_ipv6 = true;
        return *ret_name ? 0 : -ENOMEM;
    }
    if (len > HOSTLIST_MAX_NAME) {
        *ret_why = "host name longer than 253 characters";
        return -EINVAL;
    }
    if (memchr(s, ':', len)) {
        *ret_why = "IPv6 addresses must be written in brackets, e.g. [fe80::1]";
        return -EINVAL;
    }
    bool only_digits_dots = true;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!(is_alnum(c) || c == '.' || c == '-' || c == '_')) {
            *ret_why = "bad host name: only letters, digits, '.', '-' and '_' are allowed";
            return -EINVAL;
        }
        if (!(c == '.' || (c >= '0' && c <= '9'))) only_digits_dots = false;
    }
    if (!is_alnum(s[0])) {
        *ret_why = "bad host name: it must start with a letter or a digit";
        return -EINVAL;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (only_digits_dots) {
        struct in_addr a4;
        if (inet_pton(AF_INET, buf, &a4) != 1) {
            *ret_why = "not an IPv4 address";
            return -EINVAL;
        }
        char out[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &a4, out, sizeof out);
        memcpy(buf, out, strlen(out) + 1);
    }
    *ret_name = strdup(buf);
    *ret_ipv6 = false;
    return *ret_name ? 0 : -ENOMEM;
}

/* Host names are compared without regard to case (DNS); addresses are canonical already. */
static size_t host_hash(const char *name, uint16_t port)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = name; *c; c++) {
        h ^= (uint64_t)(unsigned char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
        h *= 1099511628211ull;
    }
    h ^= port;
    h *= 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

/* The index slot holding (name, port), or the empty slot where it would go. */
static uint32_t *index_slot(const struct hostlist *l, const char *name, uint16_t port)
{
    size_t mask = l->index_cap - 1;
    for (size_t i = host_hash(name, port) & mask;; i = (i + 1) & mask) {
        uint32_t v = l->index[i];
        if (v == 0) return &l->index[i];
        const struct host *h = &l->hosts[v - 1];
        if (h->port == port && strcasecmp(h->name, name) == 0) return &l->index[i];
    }
}

static int index_grow(struct hostlist *l)
{
    size_t cap = l->index_cap ? 2 * l->index_cap : 16;
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx) return -ENOMEM;
    free(l->index);
    l->index = idx;
    l->index_cap = cap;
    for (size_t i = 0; i < l->n; i++)
        *index_slot(l, l->hosts[i].name, l->hosts[i].port) = (uint32_t)(i + 1);
    return 0;
}

int hostlist_add(struct hostlist *l, const char *name, bool ipv6, uint16_t port, uint32_t slots,
                 uint32_t max_slots)
{
    if (2 * (l->n + 1) > l->index_cap && index_grow(l) < 0) return -ENOMEM;
    uint32_t *slot = index_slot(l, name, port);
    if (*slot) {
        struct host *h = &l->hosts[*slot - 1];
        if ((uint64_t)h->slots + slots > HOSTLIST_MAX_SLOTS) return -EOVERFLOW;
        uint64_t m = (h->max_slots && max_slots) ? (uint64_t)h->max_slots + max_slots : 0;
        if (m > HOSTLIST_MAX_SLOTS) return -EOVERFLOW;
        h->slots += slots;
        h->max_slots = (uint32_t)m;
        return 0;
    }
    if (slots > HOSTLIST_MAX_SLOTS || max_slots > HOSTLIST_MAX_SLOTS) return -EOVERFLOW;
    if (l->n >= HOSTLIST_MAX_HOSTS) return -E2BIG;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        struct host *nh = realloc(l->hosts, cap * sizeof *nh);
        if (!nh) return -ENOMEM;
        l->hosts = nh;
        l->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return -ENOMEM;
    l->hosts[l->n++] = (struct host){
        .name = copy, .ipv6 = ipv6, .port = port, .slots = slots, .max_slots = max_slots};
    *slot = (uint32_t)l->n;
    return 0;
}

/* A whole decimal number in [1, max]: -EINVAL when it is not one, -ERANGE when too large. */
int hostlist_parse_count(const char *s, size_t len, uint32_t max, uint32_t *ret)
{
    if (len == 0) return -EINVAL;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -EINVAL;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > (uint64_t)max + 1) v = (uint64_t)max + 1; /* saturate: no overflow */
    }
    if (v == 0) return -EINVAL;
    if (v > max) return -ERANGE;
    *ret = (uint32_t)v;
    return 0;
}

int hostlist_parse_option(struct hostlist *l, const char *arg, struct errlist *err)
{
    size_t before = errlist_count(err);
    const char *p = arg;
    for (;;) {
        size_t len = strcspn(p, ",");
        const char *colon = NULL;
        /* HOST:N -- the count follows the last ':' after a closing bracket, if any. */
        const char *hend = p + len;
        if (len && p[0] == '[') {
            const char *rb = memchr(p, ']', len);
            if (rb && rb + 1 < p + len && rb[1] == ':') colon = rb + 1;
        } else {
            const char *c = memchr(p, ':', len);
            if (c && !memchr(c + 1, ':', (size_t)(p + len - c - 1))) colon = c;
        }
        uint32_t slots = 1;
        bool ok = true;
        if (colon) {
            hend = colon;
            int r = hostlist_parse_count(colon + 1, (size_t)(p + len - colon - 1),
                                         HOSTLIST_MAX_SLOTS, &slots);
            if (r == -ERANGE) {
                errlist_add(err, "-H: %.*s: at most %u slots per host", (int)len, p,
                            HOSTLIST_MAX_SLOTS);
                ok = false;
            } else if (r < 0) {
                errlist_add(err, "-H: %.*s: the slots after ':' must be a positive integer",
                            (int)len, p);
                ok = false;
            }
        }
        char *name = NULL;
        bool v6 = false;
        const char *why;
        int r = hostlist_parse_host(p, (size_t)(hend - p), &name, &v6, &why);
        if (r == -ENOMEM) return -ENOMEM;
        if (r < 0) {
            errlist_add(err, "-H: '%.*s': %s", (int)len, p, why);
            ok = false;
        }
        if (ok) {
            r = hostlist_add(l, name, v6, HOSTLIST_DEFAULT_PORT, slots, 0);
            if (r == -ENOMEM) {
                free(name);
                return r;
            }
            if (r == -E2BIG)
                errlist_add(err, "-H: more than %u hosts", HOSTLIST_MAX_HOSTS);
            else if (r == -EOVERFLOW)
                errlist_add(err, "-H: %s: more than %u slots in total", name, HOSTLIST_MAX_SLOTS);
        }
        free(name);
        if (r == -E2BIG || !p[len]) break;
        p += len + 1;
    }
    return errlist_count(err) > before ? -EINVAL : 0;
}

uint64_t hostlist_total_slots(const struct hostlist *l)
{
    uint64_t s = 0;
    for (size_t i = 0; i < l->n; i++)
        s += l->hosts[i].slots;
    return s;
}

void hostlist_format(const struct host *h, char *buf, size_t size)
{
    snprintf(buf, size, h->ipv6 ? "[%s]:%u" : "%s:%u", h->name, (unsigned)h->port);
}

void hostlist_free(struct hostlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->hosts[i].name);
    free(l->hosts);
    free(l->index);
    *l = (struct hostlist){0};
}
