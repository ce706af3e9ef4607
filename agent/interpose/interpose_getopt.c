/* interpose_getopt.c — getopt, getopt_long, getopt_long_only and __posix_getopt (what
 * <unistd.h> names getopt under strict POSIX) for ranks: each rank parses with its own
 * optind, opterr, optopt, optarg (rank_vars.h) and its own position (rank_libc.h), so ranks
 * that parse their argv at once do not move each other, and each starts at optind 1 whatever
 * the job host parsed before.  The parser is getopt_gnu.c; callers that are not ranks get
 * libc's. */
#include <getopt.h>

#include "getopt_gnu.h"
#include "interpose_next.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

int __posix_getopt(int argc, char *const *argv, const char *optstring);

static struct {
    void *_Atomic getopt, *_Atomic __posix_getopt, *_Atomic getopt_long, *_Atomic getopt_long_only;
} next;

static int rank_getopt(struct rank *r, int argc, char *const *argv, const char *optstring,
                       const struct option *longopts, int *longind, int flags)
{
    struct rank_vars *v = &r->vars;
    struct getopt_gnu_vars gv = {
        .optind = &RANK_VAR(v, RANK_VAR_OPTIND, int),
        .opterr = &RANK_VAR(v, RANK_VAR_OPTERR, int),
        .optopt = &RANK_VAR(v, RANK_VAR_OPTOPT, int),
        .optarg = &RANK_VAR(v, RANK_VAR_OPTARG, char *),
    };
    /* argv is permuted as glibc permutes it, whatever the prototype says */
    return getopt_gnu(&r->libc.getopt, &gv, argc, (char **)argv, optstring, longopts, longind,
                      flags);
}

EXPORT int getopt(int argc, char *const *argv, const char *optstring)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, getopt)(argc, argv, optstring);
    return rank_getopt(r, argc, argv, optstring, NULL, NULL, 0);
}

EXPORT int __posix_getopt(int argc, char *const *argv, const char *optstring)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, __posix_getopt)(argc, argv, optstring);
    return rank_getopt(r, argc, argv, optstring, NULL, NULL, GETOPT_GNU_POSIX);
}

EXPORT int getopt_long(int argc, char *const *argv, const char *optstring,
                       const struct option *longopts, int *longind)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, getopt_long)(argc, argv, optstring, longopts, longind);
    return rank_getopt(r, argc, argv, optstring, longopts, longind, 0);
}

EXPORT int getopt_long_only(int argc, char *const *argv, const char *optstring,
                            const struct option *longopts, int *longind)
{
    struct rank *r = rank_current();
    if (!r) return INTERPOSE_NEXT(next, getopt_long_only)(argc, argv, optstring, longopts, longind);
    return rank_getopt(r, argc, argv, optstring, longopts, longind, GETOPT_GNU_LONG_ONLY);
}
