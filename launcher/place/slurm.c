/* slurm.c — Slurm's compressed host lists and task counts (see slurm.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slurm.h"

/* One bracket group: its ranges, each lo..hi written with width digits. */
struct range {
    uint64_t lo, hi;
    int width;
};

/* Digits of one bound: at most 18, so that every value fits in a uint64_t with room. */
#define SLURM_MAX_DIGITS 18

/* An item split into literal pieces and bracket groups: lit[0] grp[0] lit[1] grp[1] ...
 * lit[ngroups].  Pieces point into the variable's value. */
struct item {
    const char *s;
    size_t len;
    size_t ngroups;
    struct group {
        const char *lit; /* the literal text before this group (or the tail, for the last) */
        size_t litlen;
        struct range *ranges;
        size_t nranges;
        uint64_t count; /* names this group stands for */
    } * g;              /* ngroups + 1 entries; the last has no ranges */
    size_t nalloc;      /* entries of g allocated: a parse that fails half-way has ranges in
                         * groups beyond ngroups (found by tests/fuzz/fuzz_slurm.c) */
};

static void item_free(struct item *it)
{
    for (size_t i = 0; it->g && i < it->nalloc; i++)
        free(it->g[i].ranges);
    free(it->g);
}

/* A number of at most SLURM_MAX_DIGITS digits. */
static int parse_bound(const char *s, size_t len, uint64_t *ret)
{
    if (len == 0 || len > SLURM_MAX_DIGITS) return -EINVAL;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -EINVAL;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *ret = v;
    return 0;
}

/* The inside of one bracket group: "01-04,07". */
static int parse_group(const char *var, const struct item *it, const char *s, size_t len,
                       struct group *g, struct errlist *err)
{
    const char *end = s + len;
    g->count = 0;
    for (const char *p = s;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *rend = comma ? comma : end;
        const char *dash = memchr(p, '-', (size_t)(rend - p));
        const char *lo_end = dash ? dash : rend;
        struct range r;
        if (parse_bound(p, (size_t)(lo_end - p), &r.lo) < 0 ||
            (dash && parse_bound(dash + 1, (size_t)(rend - dash - 1), &r.hi) < 0)) {
            errlist_add(err,
                        "%s: '%.*s': '%.*s' is not a number or a range of numbers (like 01-04)",
                        var, (int)it->len, it->s, (int)(rend - p), p);
            return -EINVAL;
        }
        if (!dash) r.hi = r.lo;
        r.width = (int)(lo_end - p);
        if (r.hi < r.lo) {
            errlist_add(err, "%s: '%.*s': the range %.*s goes downwards", var, (int)it->len, it->s,
                        (int)(rend - p), p);
            return -EINVAL;
        }
        if (r.hi - r.lo >= HOSTLIST_MAX_HOSTS ||
            g->count + (r.hi - r.lo + 1) > HOSTLIST_MAX_HOSTS) {
            errlist_add(err, "%s: '%.*s': more than %u hosts", var, (int)it->len, it->s,
                        HOSTLIST_MAX_HOSTS);
            return -EINVAL;
        }
        struct range *nr = realloc(g->ranges, (g->nranges + 1) * sizeof *nr);
        if (!nr) return -ENOMEM;
        g->ranges = nr;
        g->ranges[g->nranges++] = r;
        g->count += r.hi - r.lo + 1;
        if (!comma) return 0;
        p = comma + 1;
    }
}

/* Split one item into literals and groups; check the brackets. */
static int parse_item(const char *var, struct item *it, struct errlist *err)
{
    size_t ngroups = 0;
    for (size_t i = 0; i < it->len; i++)
        if (it->s[i] == '[') ngroups++;
    it->g = calloc(ngroups + 1, sizeof *it->g);
    if (!it->g) return -ENOMEM;
    it->nalloc = ngroups + 1;
    const char *p = it->s, *end = it->s + it->len;
    for (size_t k = 0;; k++) {
        const char *lb = memchr(p, '[', (size_t)(end - p));
        const char *rb = memchr(p, ']', (size_t)(end - p));
        if (rb && (!lb || rb < lb)) {
            errlist_add(err, "%s: '%.*s': ']' without '['", var, (int)it->len, it->s);
            return -EINVAL;
        }
        it->g[k].lit = p;
        it->g[k].litlen = (size_t)((lb ? lb : end) - p);
        if (!lb) {
            it->ngroups = k;
            return 0;
        }
        const char *close = memchr(lb + 1, ']', (size_t)(end - lb - 1));
        const char *nested = memchr(lb + 1, '[', (size_t)(end - lb - 1));
        if (!close) {
            errlist_add(err, "%s: '%.*s': '[' without ']'", var, (int)it->len, it->s);
            return -EINVAL;
        }
        if (nested && nested < close) {
            errlist_add(err, "%s: '%.*s': brackets cannot nest", var, (int)it->len, it->s);
            return -EINVAL;
        }
        if (close == lb + 1) {
            errlist_add(err, "%s: '%.*s': empty brackets", var, (int)it->len, it->s);
            return -EINVAL;
        }
        int r = parse_group(var, it, lb + 1, (size_t)(close - lb - 1), &it->g[k], err);
        if (r < 0) return r;
        p = close + 1;
    }
}

/* Write the names of an item: an odometer over the groups, the last group turning fastest. */
static int expand_item(const char *var, const struct item *it, char **names, size_t *n,
                       struct errlist *err)
{
    /* Each count is at most 65536 and the product is checked after every factor, so it
     * cannot overflow. */
    uint64_t total = 1;
    for (size_t k = 0; k < it->ngroups && total + *n <= HOSTLIST_MAX_HOSTS; k++)
        total *= it->g[k].count;
    if (total + *n > HOSTLIST_MAX_HOSTS) {
        errlist_add(err, "%s: more than %u hosts", var, HOSTLIST_MAX_HOSTS);
        return -EINVAL;
    }
    size_t namelen = it->len + 1 + it->ngroups * SLURM_MAX_DIGITS;
    uint64_t *idx = calloc(it->ngroups + 1, sizeof *idx); /* per group: position in its count */
    if (!idx) return -ENOMEM;
    int rc = 0;
    for (uint64_t done = 0; done < total && rc == 0; done++) {
        char *name = malloc(namelen), *w = name;
        if (!name) {
            rc = -ENOMEM;
            break;
        }
        for (size_t k = 0; k <= it->ngroups; k++) {
            memcpy(w, it->g[k].lit, it->g[k].litlen);
            w += it->g[k].litlen;
            if (k == it->ngroups) break;
            uint64_t pos = idx[k];
            const struct range *r = it->g[k].ranges;
            while (pos > r->hi - r->lo) {
                pos -= r->hi - r->lo + 1;
                r++;
            }
            w += sprintf(w, "%0*llu", r->width, (unsigned long long)(r->lo + pos));
        }
        *w = '\0';
        char *canon;
        bool v6;
        const char *why;
        rc = hostlist_parse_host(name, strlen(name), &canon, &v6, &why);
        if (rc < 0) {
            if (rc != -ENOMEM)
                errlist_add(err, "%s: '%.*s': '%s': %s", var, (int)it->len, it->s, name, why);
            free(name);
            break;
        }
        free(canon); /* keep the name as Slurm spells it */
        names[(*n)++] = name;
        for (size_t k = it->ngroups; k-- > 0;) {
            if (++idx[k] < it->g[k].count) break;
            idx[k] = 0;
        }
    }
    free(idx);
    return rc;
}

void slurm_names_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* The top-level items of a list: commas inside brackets do not split. */
static size_t item_len(const char *p)
{
    size_t i = 0;
    int depth = 0;
    for (; p[i]; i++) {
        if (p[i] == '[') depth++;
        if (p[i] == ']' && depth > 0) depth--;
        if (p[i] == ',' && depth == 0) break;
    }
    return i;
}

int slurm_nodelist_expand(const char *var, const char *list, char ***ret_names, size_t *ret_n,
                          struct errlist *err)
{
    size_t before = errlist_count(err), n = 0;
    char **names = calloc(HOSTLIST_MAX_HOSTS, sizeof *names);
    if (!names) return -ENOMEM;
    int r = 0;
    if (!*list) {
        errlist_add(err, "%s is empty", var);
        r = -EINVAL;
    }
    for (const char *p = list; *p && r != -ENOMEM;) {
        struct item it = {.s = p, .len = item_len(p)};
        if (it.len == 0) {
            errlist_add(err, "%s: empty item at position %zu", var, (size_t)(p - list) + 1);
            r = -EINVAL;
        } else {
            int rc = parse_item(var, &it, err);
            if (rc == 0) rc = expand_item(var, &it, names, &n, err);
            if (rc < 0) r = rc;
        }
        item_free(&it);
        p += it.len;
        if (*p == ',') {
            p++;
            if (!*p) {
                errlist_add(err, "%s: empty item at the end", var);
                r = -EINVAL;
            }
        }
        if (n >= HOSTLIST_MAX_HOSTS && *p) {
            errlist_add(err, "%s: more than %u hosts", var, HOSTLIST_MAX_HOSTS);
            r = -EINVAL;
            break;
        }
    }
    if (r == 0 && errlist_count(err) > before) r = -EINVAL;
    if (r < 0) {
        slurm_names_free(names, n);
        return r;
    }
    *ret_names = names;
    *ret_n = n;
    return 0;
}

int slurm_tasks_expand(const char *var, const char *list, uint32_t **ret_counts, size_t *ret_n,
                       struct errlist *err)
{
    size_t n = 0, cap = 0;
    uint32_t *counts = NULL;
    int r = 0;
    if (!*list) {
        errlist_add(err, "%s is empty", var);
        return -EINVAL;
    }
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        const char *paren = memchr(p, '(', len);
        uint32_t count, times = 1;
        size_t clen = paren ? (size_t)(paren - p) : len;
        int rc = hostlist_parse_count(p, clen, HOSTLIST_MAX_SLOTS, &count);
        if (rc == 0 && paren) {
            /* "(xM)" must close the piece */
            if (len - clen < 4 || paren[1] != 'x' || p[len - 1] != ')')
                rc = -EINVAL;
            else
                rc = hostlist_parse_count(paren + 2, len - clen - 3, HOSTLIST_MAX_HOSTS, &times);
        }
        if (rc < 0) {
            errlist_add(err, "%s: '%.*s' is not N or N(xM) with positive whole numbers", var,
                        (int)len, p);
            r = -EINVAL;
            break;
        }
        if (n + times > HOSTLIST_MAX_HOSTS) {
            errlist_add(err, "%s: more than %u nodes", var, HOSTLIST_MAX_HOSTS);
            r = -EINVAL;
            break;
        }
        if (n + times > cap) {
            size_t ncap = cap ? cap : 16;
            while (ncap < n + times)
                ncap *= 2;
            uint32_t *nc = realloc(counts, ncap * sizeof *nc);
            if (!nc) {
                r = -ENOMEM;
                break;
            }
            counts = nc;
            cap = ncap;
        }
        for (uint32_t i = 0; i < times; i++)
            counts[n++] = count;
        if (!p[len]) break;
        p += len + 1;
    }
    if (r < 0) {
        free(counts);
        return r;
    }
    *ret_counts = counts;
    *ret_n = n;
    return 0;
}

int slurm_hosts(const char *nodelist, const char *tasks, struct hostlist *l, struct errlist *err)
{
    char **names = NULL;
    size_t n = 0, nc = 0;
    uint32_t *counts = NULL;
    int r = slurm_nodelist_expand("SLURM_JOB_NODELIST", nodelist, &names, &n, err);
    if (r < 0) return r;
    if (tasks && *tasks) {
        r = slurm_tasks_expand("SLURM_TASKS_PER_NODE", tasks, &counts, &nc, err);
        if (r == 0 && nc != n) {
            errlist_add(err,
                        "SLURM_TASKS_PER_NODE gives slots for %zu node%s but SLURM_JOB_NODELIST "
                        "has %zu",
                        nc, nc == 1 ? "" : "s", n);
            r = -EINVAL;
        }
    }
    for (size_t i = 0; r == 0 && i < n; i++) {
        r = hostlist_add(l, names[i], false, HOSTLIST_DEFAULT_PORT, counts ? counts[i] : 1, 0);
        if (r == -EOVERFLOW) {
            errlist_add(err, "SLURM_JOB_NODELIST: %s: more than %u slots in total", names[i],
                        HOSTLIST_MAX_SLOTS);
            r = -EINVAL;
        }
    }
    free(counts);
    slurm_names_free(names, n);
    return r;
}
