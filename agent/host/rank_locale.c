/* rank_locale.c — a rank's locale (rank_locale.h). */
#include "rank_locale.h"

#include <errno.h>
#include <langinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose_next.h"

/* The categories LC_ALL stands for, in the order glibc writes a composite name. */
static const struct {
    int cat;
    const char *name;
} cats[] = {
    {LC_CTYPE, "LC_CTYPE"},
    {LC_NUMERIC, "LC_NUMERIC"},
    {LC_TIME, "LC_TIME"},
    {LC_COLLATE, "LC_COLLATE"},
    {LC_MONETARY, "LC_MONETARY"},
    {LC_MESSAGES, "LC_MESSAGES"},
    {LC_PAPER, "LC_PAPER"},
    {LC_NAME, "LC_NAME"},
    {LC_ADDRESS, "LC_ADDRESS"},
    {LC_TELEPHONE, "LC_TELEPHONE"},
    {LC_MEASUREMENT, "LC_MEASUREMENT"},
    {LC_IDENTIFICATION, "LC_IDENTIFICATION"},
};
#define NCATS (sizeof cats / sizeof cats[0])

/* libc's functions behind tmpid's overrides; and the one struct lconv libc's localeconv fills
 * for the whole process, copied out under mu. */
static struct {
    void *_Atomic uselocale, *_Atomic localeconv;
    pthread_mutex_t mu;
} next = {.mu = PTHREAD_MUTEX_INITIALIZER};

void rank_locale_apply(locale_t loc)
{
    INTERPOSE_NEXT(next, uselocale)(loc);
}

/* The index in cats of category, or -1 (LC_ALL, or not a category). */
static int cat_index(int category)
{
    for (size_t i = 0; i < NCATS; i++)
        if (cats[i].cat == category) return (int)i;
    return -1;
}

static const char *name_of(const struct rank_locale *l, size_t i)
{
    return l->global ? nl_langinfo_l(_NL_LOCALE_NAME(cats[i].cat), l->global) : "C";
}

/* The category's name when the program asks for "": the environment decides. */
static const char *from_env(size_t i)
{
    const char *vars[] = {"LC_ALL", cats[i].name, "LANG"};
    for (size_t k = 0; k < 3; k++) {
        const char *v = getenv(vars[k]);
        if (v && *v) return v;
    }
    return "C";
}

/* Splits a composite name "LC_CTYPE=x;LC_NUMERIC=y;..." (every category once, in any order)
 * into want[], written into buf.  0 or -EINVAL. */
static int split_composite(const char *name, char *buf, const char *want[NCATS])
{
    strcpy(buf, name);
    for (size_t i = 0; i < NCATS; i++)
        want[i] = NULL;
    for (char *s = buf; s && *s;) {
        char *eq = strchr(s, '='), *semi = strchr(s, ';');
        if (!eq || (semi && semi < eq)) return -EINVAL;
        *eq = 0;
        if (semi) *semi = 0;
        int i = -1;
        for (size_t k = 0; k < NCATS; k++)
            if (strcmp(s, cats[k].name) == 0) i = (int)k;
        if (i < 0 || want[i]) return -EINVAL;
        want[i] = eq + 1;
        s = semi ? semi + 1 : NULL;
    }
    for (size_t i = 0; i < NCATS; i++)
        if (!want[i]) return -EINVAL;
    return 0;
}

/* A locale object with category i named want[i]: one newlocale per distinct name (all "C":
 * libc's own C object, which freelocale leaves alone).  0 with errno on failure. */
static locale_t build(const char *const want[NCATS])
{
    locale_t obj = (locale_t)0;
    int done[NCATS] = {0};
    for (size_t i = 0; i < NCATS; i++) {
        if (done[i]) continue;
        int mask = 0;
        for (size_t k = i; k < NCATS; k++)
            if (!done[k] && strcmp(want[k], want[i]) == 0) {
                mask |= 1 << cats[k].cat;
                done[k] = 1;
            }
        /* newlocale changes obj in place or frees it; on failure obj stays ours */
        locale_t n = newlocale(mask, want[i], obj);
        if (!n) {
            int e = errno;
            if (obj) freelocale(obj);
            errno = e;
            return (locale_t)0;
        }
        obj = n;
    }
    return obj;
}

/* setlocale(LC_ALL, NULL)'s answer: the common name, or each category's. */
static char *all_name(const struct rank_locale *l)
{
    size_t len = 0;
    int same = 1;
    for (size_t i = 0; i < NCATS; i++) {
        len += strlen(cats[i].name) + strlen(name_of(l, i)) + 2;
        if (strcmp(name_of(l, i), name_of(l, 0)) != 0) same = 0;
    }
    if (same) return strdup(name_of(l, 0));
    char *s = malloc(len);
    if (!s) return NULL;
    size_t at = 0;
    for (size_t i = 0; i < NCATS; i++)
        at += (size_t)sprintf(s + at, "%s%s=%s", i ? ";" : "", cats[i].name, name_of(l, i));
    return s;
}

static void retire(struct rank_locale *l, locale_t old)
{
    if (!old) return;
    if (atomic_load_explicit(&l->shared, memory_order_relaxed)) {
        if (l->nretired == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 4;
            locale_t *r = realloc(l->retired, cap * sizeof *r);
            /* without room it stays allocated for good: a thread may still use it */
            if (!r) return;
            l->retired = r;
            l->cap = cap;
        }
        l->retired[l->nretired++] = old;
        return;
    }
    freelocale(old);
}

static void update_cur(struct rank_locale *l, int apply)
{
    l->cur = l->thread ? l->thread : l->global;
    if (apply) rank_locale_apply(l->cur ? l->cur : LC_GLOBAL_LOCALE);
}

char *rank_locale_set(struct rank_locale *l, int category, const char *name, int apply)
{
    int only = cat_index(category);
    if (only < 0 && category != LC_ALL) {
        errno = EINVAL;
        return NULL;
    }
    if (!name) return only >= 0 ? (char *)name_of(l, (size_t)only) : l->all ? l->all : "C";
    const char *want[NCATS];
    char *buf = NULL;
    for (size_t i = 0; i < NCATS; i++)
        want[i] = name_of(l, i);
    if (only < 0 && strchr(name, ';')) {
        buf = malloc(strlen(name) + 1);
        if (!buf) return NULL;
        if (split_composite(name, buf, want) < 0) {
            free(buf);
            errno = EINVAL;
            return NULL;
        }
    } else {
        for (size_t i = 0; i < NCATS; i++)
            if (only < 0 || (int)i == only) want[i] = *name ? name : from_env(i);
    }
    locale_t obj = build(want);
    int e = errno;
    free(buf);
    if (!obj) {
        errno = e;
        return NULL;
    }
    locale_t old = l->global;
    l->global = obj;
    char *all = all_name(l);
    if (!all) {
        l->global = old;
        if (obj) freelocale(obj);
        errno = ENOMEM;
        return NULL;
    }
    free(l->all);
    l->all = all;
    update_cur(l, apply);
    retire(l, old);
    return only >= 0 ? (char *)name_of(l, (size_t)only) : l->all;
}

locale_t rank_locale_use(struct rank_locale *l, locale_t loc, int own)
{
    locale_t (*real)(locale_t) = INTERPOSE_NEXT(next, uselocale);
    if (!own) {
        /* a thread the rank started: its own locale, the rank's global one for "global" */
        locale_t prev = real(loc == LC_GLOBAL_LOCALE && l->global ? l->global : loc);
        return prev && prev == l->global ? LC_GLOBAL_LOCALE : prev;
    }
    locale_t prev = l->thread ? l->thread : LC_GLOBAL_LOCALE;
    if (loc) {
        l->thread = loc == LC_GLOBAL_LOCALE ? (locale_t)0 : loc;
        update_cur(l, 1);
    }
    return prev;
}

struct lconv *rank_locale_conv(struct rank_locale *l)
{
    struct lconv *(*real)(void) = INTERPOSE_NEXT(next, localeconv);
    /* libc fills one struct for the process from the calling thread's locale: under the lock
     * no other rank's call rewrites it while it is copied */
    pthread_mutex_lock(&next.mu);
    l->conv = *real();
    pthread_mutex_unlock(&next.mu);
    return &l->conv;
}

locale_t rank_locale_for_thread(struct rank_locale *l)
{
    atomic_store_explicit(&l->shared, 1, memory_order_relaxed);
    return l->global;
}

void rank_locale_free(struct rank_locale *l)
{
    if (l->global) freelocale(l->global);
    for (size_t i = 0; i < l->nretired; i++)
        freelocale(l->retired[i]);
    free(l->retired);
    free(l->all);
    *l = (struct rank_locale){0};
}
