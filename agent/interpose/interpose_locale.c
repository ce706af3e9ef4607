/* interpose_locale.c — setlocale, localeconv, uselocale and duplocale for ranks: the rank's
 * global locale is its own (rank_locale.h), so one rank's setlocale changes neither another
 * rank's nor the agent's.  nl_langinfo and every locale-dependent function follow the
 * calling thread's locale, which is the rank's.  Callers that are not ranks get libc's. */
#include <locale.h>

#include "interpose_next.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
    void *_Atomic setlocale, *_Atomic localeconv, *_Atomic uselocale, *_Atomic duplocale;
} next;

/* The destructors the job thread runs in a rank's name (job.c) must not leave the rank's
 * locale on the job thread. */
static int unloading_here(const struct rank *r)
{
    return r->unloading && pthread_equal(pthread_self(), r->unloader);
}

EXPORT char *setlocale(int category, const char *name)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, setlocale)(category, name);
    return rank_locale_set(&r->libc.locale, category, name, !unloading_here(r));
}

EXPORT struct lconv *localeconv(void)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, localeconv)();
    return rank_locale_conv(&r->libc.locale);
}

EXPORT locale_t uselocale(locale_t loc)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, uselocale)(loc);
    return rank_locale_use(&r->libc.locale, loc, rank_on_own_thread(r));
}

/* a copy of "the global locale" is a copy of the rank's */
EXPORT locale_t duplocale(locale_t loc)
{
    struct rank *r = rank_current();
    if (r && loc == LC_GLOBAL_LOCALE && r->libc.locale.global) loc = r->libc.locale.global;
    return INTERPOSE_NEXT(next, duplocale)(loc);
}
