/* interpose_exit.c — the exit handlers of ranks (rank_exit.h): on_exit, __cxa_atexit (what a
 * program's atexit calls, with its __dso_handle), __cxa_at_quick_exit (at_quick_exit's) and
 * quick_exit.  A rank's handlers run when the rank exits (rank.c), not when the job host
 * does: libc's process-wide list would run them never (the job host ends with _exit) or
 * after the rank's program is gone.  Callers that are not ranks, and __cxa_atexit
 * registrations of other objects (the system's libraries), go to libc. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "interpose_next.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);
int __cxa_at_quick_exit(void (*fn)(void), void *dso);

static struct {
    void *_Atomic on_exit, *_Atomic __cxa_atexit, *_Atomic __cxa_at_quick_exit, *_Atomic quick_exit;
} next;

/* Whether dso (a __dso_handle: an address inside its object) is the rank's copy of its
 * program. */
static int in_rank_image(const struct rank *r, const void *dso)
{
    const struct image *img = &r->image;
    if (img->copy.src) return (uintptr_t)dso - (uintptr_t)img->copy.map < img->copy.len;
    if (img->handle) {
        Dl_info info;
        void *map = NULL;
        return dladdr1(dso, &info, &map, RTLD_DL_LINKMAP) && map == img->handle;
    }
    return 0;
}

static int add(struct rank *r, struct rank_exit_list *list, struct rank_exit_fn fn)
{
    /* libc's answers: 0, or -1 (on_exit) / nonzero (the others) without memory */
    return rank_exit_add(&r->libc.exit, list, fn) < 0 ? -1 : 0;
}

EXPORT int on_exit(void (*fn)(int, void *), void *arg)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, on_exit)(fn, arg);
    return add(r, &r->libc.exit.at_exit,
               (struct rank_exit_fn){.kind = RANK_EXIT_ON_EXIT, .fn.on_exit = fn, .arg = arg});
}

EXPORT int __cxa_atexit(void (*fn)(void *), void *arg, void *dso)
{
    struct rank *r = rank_current();
    /* dso NULL: for the process's exit, which for a rank is its own */
    if (!r || (dso && !in_rank_image(r, dso)))
        return INTERPOSE_NEXT(next, __cxa_atexit)(fn, arg, dso);
    return add(r, &r->libc.exit.at_exit,
               (struct rank_exit_fn){.kind = RANK_EXIT_CXA, .fn.cxa = fn, .arg = arg});
}

EXPORT int __cxa_at_quick_exit(void (*fn)(void), void *dso)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, __cxa_at_quick_exit)(fn, dso);
    return add(r, &r->libc.exit.at_quick_exit,
               (struct rank_exit_fn){.kind = RANK_EXIT_PLAIN, .fn.plain = fn});
}

/* The rank's at_quick_exit handlers, newest first, then the rank ends with status; its
 * atexit and on_exit handlers do not run. */
EXPORT void quick_exit(int status)
{
    struct rank *r = rank_current();
    if (!r) INTERPOSE_NEXT(next, quick_exit)(status);
    struct rank_exit *e = &r->libc.exit;
    if (rank_on_own_thread(r)) e->skip = 1;
    while (rank_exit_run_one(e, &e->at_quick_exit, status))
        ;
    rank_end(RANK_END_CODE, status, NULL);
}
