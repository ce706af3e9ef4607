/* rank_locale.h — a rank's locale: what its setlocale set, what its uselocale set, and what
 * its context runs with.
 *
 * A process's setlocale changes the global locale, which every thread that did not call
 * uselocale follows.  The job host has one global locale for all ranks and the agent (and
 * stays "C", as a fresh process starts), so a rank's setlocale makes a locale object of the
 * rank's own instead (newlocale) and makes it the calling thread's locale (uselocale): the
 * functions that follow the locale (printf's decimal point, strtod, isalpha, mbrtowc,
 * nl_langinfo, strcoll ...) see the rank's choice, other ranks and the agent keep theirs.
 *
 * A thread's locale belongs to the OS thread, so with carriers (carrier.h) it is switched with
 * the rank: rank_locale_enter/leave around each run, a load and a branch when the rank never
 * set a locale.  A rank's own uselocale is kept here for the same reason.  Threads the rank
 * starts begin with its locale (rank_locale_for_thread).
 *
 * Only the rank's own context and the threads it started touch this, unsynchronised, as
 * setlocale is not thread-safe in a process either. */
#ifndef TMPI_AGENT_RANK_LOCALE_H
#define TMPI_AGENT_RANK_LOCALE_H

#include <locale.h>
#include <stdatomic.h>
#include <stddef.h>

/* All zeros: a rank that never called setlocale or uselocale ("C" everywhere). */
struct rank_locale {
    locale_t global; /* made by the rank's setlocale; 0: still "C" */
    locale_t thread; /* set by the rank's uselocale; 0: follows global */
    locale_t cur;    /* what the rank's context runs with: thread, else global; 0: neither */
    char *all;       /* setlocale(LC_ALL, NULL)'s answer since the last change; NULL: "C" */
    struct lconv conv;
    /* threads the rank started may still use replaced objects: those are kept until the rank
     * is freed instead of being freed at once (atomic: several threads of one rank may start
     * threads at once) */
    atomic_int shared;
    locale_t *retired;
    size_t nretired, cap;
};

/* setlocale(category, name) for the rank: name "" reads LC_ALL, then the category's variable,
 * then LANG from the environment (getenv: the rank's own); a composite LC_ALL name (as
 * setlocale(LC_ALL, NULL) returns it) sets each category.  apply: make the result the calling
 * thread's locale (the rank's context, or a thread it started).  The name as setlocale
 * returns it, or NULL with nothing changed (errno set). */
char *rank_locale_set(struct rank_locale *l, int category, const char *name, int apply);

/* uselocale(loc) for the rank's own context (own) or a thread it started, where
 * LC_GLOBAL_LOCALE means the rank's global locale. */
locale_t rank_locale_use(struct rank_locale *l, locale_t loc, int own);

/* localeconv() in the calling thread's locale, in the rank's own struct lconv. */
struct lconv *rank_locale_conv(struct rank_locale *l);

/* The locale a thread the rank starts begins with (0: LC_GLOBAL_LOCALE); from now on replaced
 * objects are kept (they may be in use there). */
locale_t rank_locale_for_thread(struct rank_locale *l);

/* Makes loc the calling thread's locale (libc's uselocale, never the rank's override). */
void rank_locale_apply(locale_t loc);

/* A carrier switching to the rank's context and back. */
static inline void rank_locale_enter(const struct rank_locale *l)
{
    if (l->cur) rank_locale_apply(l->cur);
}
static inline void rank_locale_leave(const struct rank_locale *l)
{
    if (l->cur) rank_locale_apply(LC_GLOBAL_LOCALE);
}

/* Frees the rank's objects; no thread may still run in them. */
void rank_locale_free(struct rank_locale *l);

#endif
