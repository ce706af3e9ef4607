/* coll_tree.c — tree shapes, the size-based choice and tree files (coll_tree.h). */
#include "coll_tree.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tm_tree_shape_name(enum tm_tree_shape s)
{
    return tm_coll_algo_name(TM_COLL_BCAST, (int)s);
}

int tm_tree_shape_parse(const char *s, enum tm_tree_shape *ret)
{
    int v;
    if (tm_coll_algo_parse(TM_COLL_BCAST, s, strlen(s), &v) < 0) return -EINVAL;
    *ret = (enum tm_tree_shape)v;
    return 0;
}

const char *tm_allreduce_name(enum tm_allreduce_algo a)
{
    return tm_coll_algo_name(TM_COLL_ALLREDUCE, (int)a);
}

int tm_allreduce_parse(const char *s, enum tm_allreduce_algo *ret)
{
    int v;
    if (tm_coll_algo_parse(TM_COLL_ALLREDUCE, s, strlen(s), &v) < 0) return -EINVAL;
    *ret = (enum tm_allreduce_algo)v;
    return 0;
}

/* Seed 000 §3.2: with few nodes and small messages the root's n-1 sends cost less than the
 * extra steps of a deeper tree (latency bound); in the middle the hypercube's log2(n) steps
 * win; for large messages every vertex sending to at most two children keeps each link's
 * share of the bandwidth high (bandwidth bound). */
enum tm_tree_shape tm_tree_choose(int n, size_t bytes)
{
    if (n <= 2 || (bytes <= TM_TREE_FLAT_MAX_BYTES && n <= TM_TREE_FLAT_MAX_NODES))
        return TM_TREE_FLAT;
    if (bytes < TM_TREE_BINARY_MIN_BYTES) return TM_TREE_BINOMIAL;
    return TM_TREE_BINARY;
}

/* Recursive doubling needs a commutative op (partners combine in opposite orders); the ring
 * moves 2(n-1)/n of the vector per leader instead of log2(n) whole vectors, which pays once
 * the vector is large and there are more than two nodes. */
enum tm_allreduce_algo tm_allreduce_choose(int n, size_t bytes, int commute)
{
    if (!commute) return TM_AR_REDUCE_BCAST;
    if (bytes <= TM_AR_RECDOUBLING_MAX_BYTES) return TM_AR_RECDOUBLING;
    if (bytes >= TM_AR_RING_MIN_BYTES && n > 2) return TM_AR_RING;
    return TM_AR_REDUCE_BCAST;
}

static int rel_of(int n, int root, int v)
{
    return (v - root + n) % n;
}

static int abs_of(int n, int root, int rel)
{
    return (rel + root) % n;
}

int tm_tree_parent(enum tm_tree_shape s, int n, int root, int v)
{
    int rel = rel_of(n, root, v);
    if (rel == 0) return -1;
    switch (s) {
    case TM_TREE_BINOMIAL:
        return abs_of(n, root, rel & (rel - 1));
    case TM_TREE_BINARY:
        return abs_of(n, root, (rel - 1) / 2);
    default:
        return root;
    }
}

int tm_tree_children(enum tm_tree_shape s, int n, int root, int v, int *out, int max)
{
    int rel = rel_of(n, root, v), k = 0;
#define PUT(x)                                                                                     \
    do {                                                                                           \
        if (k < max) out[k] = abs_of(n, root, (x));                                                \
        k++;                                                                                       \
    } while (0)
    switch (s) {
    case TM_TREE_BINOMIAL: {
        /* children rel + 2^j for 2^j below rel's lowest set bit; largest subtree first */
        int low = rel ? rel & -rel : 1;
        if (!rel)
            while (low < n)
                low <<= 1;
        for (int b = low >> 1; b >= 1; b >>= 1)
            if (rel + b < n) PUT(rel + b);
        break;
    }
    case TM_TREE_BINARY:
        if (2 * rel + 1 < n) PUT(2 * rel + 1);
        if (2 * rel + 2 < n) PUT(2 * rel + 2);
        break;
    default:
        if (!rel)
            for (int c = 1; c < n; c++)
                PUT(c);
        break;
    }
#undef PUT
    return k;
}

/* ---- tree files ---- */

__attribute__((format(printf, 5, 6))) static void
tf_error(char *err, size_t errlen, const char *name, int line, const char *why, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, why);
    vsnprintf(msg, sizeof msg, why, ap);
    va_end(ap);
    if (line > 0)
        snprintf(err, errlen, "%s:%d: %s", name, line, msg);
    else
        snprintf(err, errlen, "%s: %s", name, msg);
}

/* Next whitespace-separated word of [*p, end) on the current line; NULL at the line's end. */
static const char *word(const char **p, const char *end, size_t *ret_len)
{
    const char *s = *p;
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    if (s == end || *s == '\n' || *s == '#') {
        *p = s;
        return NULL;
    }
    const char *w = s;
    while (s < end && !isspace((unsigned char)*s) && *s != '#')
        s++;
    *p = s;
    *ret_len = (size_t)(s - w);
    return w;
}

static int number(const char *w, size_t len, long *ret)
{
    if (!len || len > 9) return -EINVAL;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (w[i] < '0' || w[i] > '9') return -EINVAL;
        v = v * 10 + (w[i] - '0');
    }
    *ret = v;
    return 0;
}

#define TM_TREE_FILE_MAX_RANKS (1 << 20)

/* Bytes with an optional K, M or G suffix (a whole word): 0 or -EINVAL. */
static int size_word(const char *w, size_t len, size_t *ret)
{
    unsigned shift = 0;
    if (len && (w[len - 1] == 'K' || w[len - 1] == 'k'))
        shift = 10;
    else if (len && (w[len - 1] == 'M' || w[len - 1] == 'm'))
        shift = 20;
    else if (len && (w[len - 1] == 'G' || w[len - 1] == 'g'))
        shift = 30;
    if (shift) len--;
    long v;
    if (number(w, len, &v) < 0) return -EINVAL;
    *ret = (size_t)v << shift;
    return 0;
}

/* "algorithm COLL MIN-MAX NAME" after its first word: appended to *algos.  0, or -EINVAL with
 * the reason in why. */
static int algo_line(const char **p, const char *end, struct tm_tree_algo **algos, int *nalgos,
                     char *why, size_t whylen)
{
    size_t lc = 0, lr = 0, ln = 0, lx = 0;
    const char *wc = word(p, end, &lc);
    const char *wr = wc ? word(p, end, &lr) : NULL;
    const char *wn = wr ? word(p, end, &ln) : NULL;
    if (!wn || word(p, end, &lx)) {
        snprintf(why, whylen, "expected \"algorithm COLL MIN-MAX NAME\"");
        return -EINVAL;
    }
    struct tm_tree_algo a;
    if (tm_coll_kind_parse(wc, lc, &a.coll) < 0) {
        snprintf(why, whylen, "unknown collective \"%.*s\" (bcast, reduce or allreduce)", (int)lc,
                 wc);
        return -EINVAL;
    }
    const char *dash = memchr(wr, '-', lr);
    a.max = SIZE_MAX;
    if (!dash || size_word(wr, (size_t)(dash - wr), &a.min) < 0 ||
        (dash + 1 < wr + lr && size_word(dash + 1, (size_t)(wr + lr - dash - 1), &a.max) < 0) ||
        a.min > a.max) {
        snprintf(why, whylen, "bad size range \"%.*s\" (MIN-MAX or MIN-, bytes with K, M, G)",
                 (int)lr, wr);
        return -EINVAL;
    }
    if (tm_coll_algo_parse(a.coll, wn, ln, &a.algo) < 0) {
        char names[200];
        snprintf(why, whylen, "%s has no algorithm \"%.*s\" (%s)", tm_coll_kind(a.coll)->name,
                 (int)ln, wn, tm_coll_algo_names(a.coll, names, sizeof names));
        return -EINVAL;
    }
    for (int i = 0; i < *nalgos; i++) {
        const struct tm_tree_algo *o = &(*algos)[i];
        if (o->coll == a.coll && a.min <= o->max && o->min <= a.max) {
            snprintf(why, whylen, "the %s range \"%.*s\" overlaps an earlier one",
                     tm_coll_kind(a.coll)->name, (int)lr, wr);
            return -EINVAL;
        }
    }
    if (*nalgos == TM_TREE_FILE_MAX_ALGOS) {
        snprintf(why, whylen, "more than %d algorithm lines", TM_TREE_FILE_MAX_ALGOS);
        return -EINVAL;
    }
    if (!*algos && !(*algos = calloc(TM_TREE_FILE_MAX_ALGOS, sizeof **algos))) {
        snprintf(why, whylen, "out of memory");
        return -EINVAL;
    }
    (*algos)[(*nalgos)++] = a;
    return 0;
}

int tm_tree_file_algo(const struct tm_tree_file *t, enum tm_coll_id coll, size_t bytes)
{
    for (int i = 0; t && i < t->nalgos; i++)
        if (t->algos[i].coll == coll && t->algos[i].min <= bytes && bytes <= t->algos[i].max)
            return t->algos[i].algo;
    return -1;
}

int tm_tree_file_parse(const char *name, const char *text, size_t len, struct tm_tree_file *ret,
                       char *err, size_t errlen)
{
    const char *p = text, *end = text + len;
    int line = 0, n = -1, root = -1;
    int32_t *parent = NULL;
    int *line_of = NULL; /* where each rank was given, for the messages of the checks below */
    struct tm_tree_algo *algos = NULL;
    int nalgos = 0;
#define FAIL(l, ...)                                                                               \
    do {                                                                                           \
        tf_error(err, errlen, name, (l), __VA_ARGS__);                                             \
        goto fail;                                                                                 \
    } while (0)
    while (p < end) {
        line++;
        size_t l1, l2, l3;
        const char *w1 = word(&p, end, &l1);
        if (w1 && l1 == 9 && memcmp(w1, "algorithm", 9) == 0) {
            char why[300];
            if (algo_line(&p, end, &algos, &nalgos, why, sizeof why) < 0) FAIL(line, "%s", why);
        } else if (w1) {
            const char *w2 = word(&p, end, &l2);
            const char *w3 = w2 ? word(&p, end, &l3) : NULL;
            if (w3) FAIL(line, "expected two words, found more");
            long a, b;
            if (l1 == 5 && memcmp(w1, "ranks", 5) == 0) {
                if (n >= 0) FAIL(line, "\"ranks\" given twice");
                if (!w2 || number(w2, l2, &a) < 0 || a < 1 || a > TM_TREE_FILE_MAX_RANKS)
                    FAIL(line, "expected \"ranks N\" with 1 <= N <= %ld",
                         (long)TM_TREE_FILE_MAX_RANKS);
                n = (int)a;
                parent = malloc(sizeof *parent * (size_t)n);
                line_of = calloc((size_t)n, sizeof *line_of);
                if (!parent || !line_of) {
                    free(parent);
                    free(line_of);
                    snprintf(err, errlen, "%s: out of memory", name);
                    return -ENOMEM;
                }
            } else {
                if (n < 0) FAIL(line, "expected \"ranks N\" before the first rank");
                if (number(w1, l1, &a) < 0 || !w2)
                    FAIL(line, "expected \"RANK PARENT\" (PARENT a rank, or - or -1 for the root)");
                if (a >= n) FAIL(line, "rank %ld is out of range", a);
                if (line_of[a]) FAIL(line, "rank %ld is given twice", a);
                if ((l2 == 1 && *w2 == '-') || (l2 == 2 && memcmp(w2, "-1", 2) == 0)) {
                    if (root >= 0) FAIL(line, "a second root (rank %ld has no parent)", a);
                    root = (int)a;
                    b = -1;
                } else if (number(w2, l2, &b) < 0) {
                    FAIL(line, "expected a parent rank, or - or -1 for the root");
                } else if (b >= n) {
                    FAIL(line, "parent %ld is out of range", b);
                } else if (b == a) {
                    FAIL(line, "rank %ld is its own parent", a);
                }
                parent[a] = (int32_t)b;
                line_of[a] = line;
            }
        }
        while (p < end && *p != '\n')
            p++;
        if (p < end) p++;
    }
    if (n < 0) FAIL(0, "no \"ranks N\" line (empty file?)");
    for (int v = 0; v < n; v++)
        if (!line_of[v]) FAIL(line, "rank %ld has no line (wrong size?)", (long)v);
    if (root < 0) FAIL(line, "no root (one rank must have parent -)");
    /* Every rank must reach the root.  Walk up from each rank, marking the path; meeting a
     * rank of the current walk again is a cycle.  line_of doubles as the mark (negated: on
     * the current walk; 0: known to reach the root), so the check is linear in n. */
    line_of[root] = 0;
    for (int v = 0; v < n; v++) {
        int u = v;
        while (line_of[u] > 0) {
            line_of[u] = -line_of[u];
            u = parent[u];
        }
        if (line_of[u] < 0) FAIL(-line_of[u], "rank %ld is on a cycle (not a tree)", (long)u);
        for (u = v; line_of[u] < 0; u = parent[u])
            line_of[u] = 0;
    }
    free(line_of);
    ret->n = n;
    ret->root = root;
    ret->parent = parent;
    ret->nalgos = nalgos;
    ret->algos = algos;
    return 0;
fail:
#undef FAIL
    free(parent);
    free(line_of);
    free(algos);
    return -EINVAL;
}

int tm_tree_file_load(const char *path, struct tm_tree_file *ret, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = cap < ((size_t)64 << 20) ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf || rerr) {
        snprintf(err, errlen, "%s: %s", path, rerr ? "read error" : "too large or out of memory");
        free(buf);
        return rerr ? -EIO : -ENOMEM;
    }
    int r = tm_tree_file_parse(path, buf, len, ret, err, errlen);
    free(buf);
    return r;
}

void tm_tree_file_free(struct tm_tree_file *t)
{
    if (!t) return;
    free(t->parent);
    t->parent = NULL;
    t->n = 0;
    free(t->algos);
    t->algos = NULL;
    t->nalgos = 0;
}

int tm_tree_file_children(const struct tm_tree_file *t, int v, int *out, int max)
{
    int k = 0;
    for (int u = 0; u < t->n; u++)
        if (t->parent[u] == v) {
            if (k < max) out[k] = u;
            k++;
        }
    return k;
}

int tm_tree_file_depth(const struct tm_tree_file *t, int v)
{
    int d = 0;
    while (t->parent[v] >= 0) {
        v = t->parent[v];
        d++;
    }
    return d;
}

/* ---- running a tree ---- */

int tm_tree_reroot(int n, const int32_t *parent, int root, int32_t *ret_parent)
{
    if (root < 0 || root >= n) return -EINVAL;
    memcpy(ret_parent, parent, sizeof *parent * (size_t)n);
    /* Turn the edges on the path from root up to the old root around: the set of edges
     * stays the tree's, only their direction changes. */
    int prev = -1, v = root;
    while (v >= 0) {
        int up = parent[v];
        ret_parent[v] = prev;
        prev = v;
        v = up;
    }
    return 0;
}

int tm_tree_order(int n, const int32_t *parent, int *ret_order)
{
    /* Children lists in ascending rank (counting sort by parent), then breadth first. */
    int *start = calloc((size_t)n + 1, sizeof *start), *kids = malloc(sizeof *kids * (size_t)n);
    if (!start || !kids) {
        free(start);
        free(kids);
        return -ENOMEM;
    }
    int root = -1;
    for (int v = 0; v < n; v++)
        if (parent[v] < 0)
            root = v;
        else
            start[parent[v] + 1]++;
    for (int v = 0; v < n; v++)
        start[v + 1] += start[v];
    for (int v = 0; v < n; v++)
        if (parent[v] >= 0) kids[start[parent[v]]++] = v;
    /* start[p] now ends p's run; p's run begins where p-1's ended */
    int head = 0, tail = 0;
    if (root >= 0) ret_order[tail++] = root;
    while (head < tail) {
        int p = ret_order[head++];
        for (int k = p ? start[p - 1] : 0; k < start[p]; k++)
            ret_order[tail++] = kids[k];
    }
    free(start);
    free(kids);
    return tail == n ? 0 : -EINVAL;
}

int tm_tree_intervals(int n, const int32_t *parent, const int *order)
{
    int *lo = malloc(sizeof *lo * (size_t)n), *hi = malloc(sizeof *hi * (size_t)n);
    int *cnt = malloc(sizeof *cnt * (size_t)n);
    if (!lo || !hi || !cnt) {
        free(lo);
        free(hi);
        free(cnt);
        return -ENOMEM;
    }
    for (int v = 0; v < n; v++) {
        lo[v] = hi[v] = v;
        cnt[v] = 1;
    }
    int ok = 1;
    /* Children come after their parent in order: walking it backwards finishes every subtree
     * before its parent takes it in. */
    for (int i = n - 1; i >= 0; i--) {
        int v = order[i], p = parent[v];
        if (hi[v] - lo[v] + 1 != cnt[v]) ok = 0;
        if (p < 0) continue;
        if (lo[v] < lo[p]) lo[p] = lo[v];
        if (hi[v] > hi[p]) hi[p] = hi[v];
        cnt[p] += cnt[v];
    }
    free(lo);
    free(hi);
    free(cnt);
    return ok;
}
