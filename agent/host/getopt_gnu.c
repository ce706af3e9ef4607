/* getopt_gnu.c — GNU getopt over caller-owned state (getopt_gnu.h). */
#include "getopt_gnu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum getopt_gnu_order {
    ORDER_PERMUTE,  /* options anywhere; non-options end up behind them */
    ORDER_REQUIRE,  /* the first non-option ends the options ('+', POSIXLY_CORRECT) */
    ORDER_IN_ORDER, /* non-options are returned as option 1 ('-') */
};

/* One call's inputs, so that the helpers below take one argument. */
struct call {
    struct getopt_gnu *st;
    const struct getopt_gnu_vars *v;
    int argc;
    char **argv;
    const char *opts; /* without its leading '+' or '-' */
    const struct option *longopts;
    int *longind;
    int long_only;
    int report; /* messages on stderr */
};

static int is_nonoption(const char *arg)
{
    return arg[0] != '-' || arg[1] == '\0';
}

static void reverse(char **a, int lo, int hi)
{
    for (hi--; lo < hi; lo++, hi--) {
        char *t = a[lo];
        a[lo] = a[hi];
        a[hi] = t;
    }
}

/* The options argv[last, optind) read since the non-options argv[first, last) were skipped
 * go in front of them, each group in its order: the non-options then wait at
 * argv[first + (optind - last), optind). */
static void options_first(struct call *c)
{
    struct getopt_gnu *st = c->st;
    int end = *c->v->optind;
    reverse(c->argv, st->first_nonopt, st->last_nonopt);
    reverse(c->argv, st->last_nonopt, end);
    reverse(c->argv, st->first_nonopt, end);
    st->first_nonopt += end - st->last_nonopt;
    st->last_nonopt = end;
}

/* What a missing argument returns: ':' when the option string asks for it. */
static int missing(const struct call *c)
{
    return c->opts[0] == ':' ? ':' : '?';
}

/* Whether longopts[i] is one of the names an ambiguous abbreviation of len bytes stands for:
 * the first that starts with it, and every later one that would act differently (every later
 * one for getopt_long_only). */
static int ambiguous_with(const struct call *c, int i, int first, const char *name, size_t len)
{
    const struct option *p = &c->longopts[i], *f = &c->longopts[first];
    if (i == first) return 1;
    if (i < first || strncmp(p->name, name, len) != 0) return 0;
    return c->long_only || p->has_arg != f->has_arg || p->flag != f->flag || p->val != f->val;
}

/* Reads the long option at st->next (after prefix: "--", "-" or "-W ").  -1 when it names no
 * long option and getopt_long_only should read it as short options instead. */
static int long_option(struct call *c, const char *prefix)
{
    struct getopt_gnu *st = c->st;
    const struct getopt_gnu_vars *v = c->v;
    char *name = st->next;
    char *end = name;
    while (*end && *end != '=')
        end++;
    size_t len = (size_t)(end - name);
    int found = -1;
    for (int i = 0; found < 0 && c->longopts[i].name; i++)
        if (strncmp(c->longopts[i].name, name, len) == 0 && strlen(c->longopts[i].name) == len)
            found = i;
    if (found < 0) {
        /* an abbreviation: it must stand for one option (or for several that act the same) */
        int ambiguous = 0;
        for (int i = 0; c->longopts[i].name; i++) {
            if (strncmp(c->longopts[i].name, name, len) != 0) continue;
            if (found < 0)
                found = i;
            else if (ambiguous_with(c, i, found, name, len))
                ambiguous = 1;
        }
        if (ambiguous) {
            if (c->report) {
                flockfile(stderr);
                fprintf(stderr, "%s: option '%s%s' is ambiguous; possibilities:", c->argv[0],
                        prefix, name);
                for (int i = 0; c->longopts[i].name; i++)
                    if (ambiguous_with(c, i, found, name, len))
                        fprintf(stderr, " '%s%s'", prefix, c->longopts[i].name);
                fprintf(stderr, "\n");
                funlockfile(stderr);
            }
            st->next = name + strlen(name);
            ++*v->optind;
            st->optopt = 0;
            return '?';
        }
    }
    if (found < 0) {
        /* getopt_long_only reads "-xyz" as short options when x is one */
        if (!c->long_only || c->argv[*v->optind][1] == '-' || !strchr(c->opts, *name)) {
            if (c->report)
                fprintf(stderr, "%s: unrecognized option '%s%s'\n", c->argv[0], prefix, name);
            st->next = NULL;
            ++*v->optind;
            st->optopt = 0;
            return '?';
        }
        return -1;
    }
    const struct option *o = &c->longopts[found];
    ++*v->optind;
    st->next = NULL;
    if (*end) {
        if (!o->has_arg) {
            if (c->report)
                fprintf(stderr, "%s: option '%s%s' doesn't allow an argument\n", c->argv[0], prefix,
                        o->name);
            st->optopt = o->val;
            return '?';
        }
        st->optarg = end + 1;
    } else if (o->has_arg == required_argument) {
        if (*v->optind >= c->argc) {
            if (c->report)
                fprintf(stderr, "%s: option '%s%s' requires an argument\n", c->argv[0], prefix,
                        o->name);
            st->optopt = o->val;
            return missing(c);
        }
        st->optarg = c->argv[(*v->optind)++];
    }
    if (c->longind) *c->longind = found;
    if (o->flag) {
        *o->flag = o->val;
        return 0;
    }
    return o->val;
}

/* Moves to the next argument that holds options, permuting on the way.  1 with getopt's
 * answer in *ret (the end of the options, a non-option returned in order, a long option), or
 * 0 with st->next set to the short options to read. */
static int next_argument(struct call *c, int *ret)
{
    struct getopt_gnu *st = c->st;
    const struct getopt_gnu_vars *v = c->v;
    int *oi = v->optind;
    /* the caller may have moved optind back */
    if (st->last_nonopt > *oi) st->last_nonopt = *oi;
    if (st->first_nonopt > *oi) st->first_nonopt = *oi;
    if (st->order == ORDER_PERMUTE) {
        if (st->first_nonopt != st->last_nonopt && st->last_nonopt != *oi)
            options_first(c);
        else if (st->last_nonopt != *oi)
            st->first_nonopt = *oi;
        while (*oi < c->argc && is_nonoption(c->argv[*oi]))
            ++*oi;
        st->last_nonopt = *oi;
    }
    if (*oi != c->argc && strcmp(c->argv[*oi], "--") == 0) {
        /* "--" ends the options: what follows is non-options, after those skipped */
        ++*oi;
        if (st->first_nonopt != st->last_nonopt && st->last_nonopt != *oi)
            options_first(c);
        else if (st->first_nonopt == st->last_nonopt)
            st->first_nonopt = *oi;
        st->last_nonopt = c->argc;
        *oi = c->argc;
    }
    if (*oi == c->argc) {
        /* optind names the first non-option */
        if (st->first_nonopt != st->last_nonopt) *oi = st->first_nonopt;
        *ret = -1;
        return 1;
    }
    char *arg = c->argv[*oi];
    if (is_nonoption(arg)) {
        *ret = -1;
        if (st->order == ORDER_REQUIRE) return 1;
        st->optarg = arg;
        ++*oi;
        *ret = 1;
        return 1;
    }
    if (c->longopts) {
        if (arg[1] == '-') {
            st->next = arg + 2;
            *ret = long_option(c, "--");
            return 1;
        }
        if (c->long_only && (arg[2] || !strchr(c->opts, arg[1]))) {
            st->next = arg + 1;
            *ret = long_option(c, "-");
            if (*ret != -1) return 1;
        }
    }
    st->next = arg + 1;
    return 0;
}

/* The next short option of the cluster at st->next. */
static int short_option(struct call *c)
{
    struct getopt_gnu *st = c->st;
    const struct getopt_gnu_vars *v = c->v;
    char ch = *st->next++;
    const char *spec = strchr(c->opts, ch);
    if (*st->next == '\0') ++*v->optind;
    if (!spec || ch == ':' || ch == ';') {
        if (c->report) fprintf(stderr, "%s: invalid option -- '%c'\n", c->argv[0], ch);
        st->optopt = ch;
        return '?';
    }
    if (spec[0] == 'W' && spec[1] == ';' && c->longopts) {
        /* -W name, -Wname: the long option name */
        if (*st->next == '\0') {
            if (*v->optind == c->argc) {
                if (c->report)
                    fprintf(stderr, "%s: option requires an argument -- '%c'\n", c->argv[0], ch);
                st->optopt = ch;
                return missing(c);
            }
            st->next = c->argv[*v->optind];
        }
        int saved = c->long_only;
        c->long_only = 0;
        int r = long_option(c, "-W ");
        c->long_only = saved;
        return r;
    }
    if (spec[1] != ':') return ch;
    if (*st->next != '\0') {
        /* the rest of the cluster is the argument */
        st->optarg = st->next;
        ++*v->optind;
    } else if (spec[2] == ':') {
        st->optarg = NULL; /* an optional argument is only ever attached */
    } else if (*v->optind == c->argc) {
        if (c->report) fprintf(stderr, "%s: option requires an argument -- '%c'\n", c->argv[0], ch);
        st->optopt = ch;
        ch = (char)missing(c);
    } else {
        st->optarg = c->argv[(*v->optind)++];
    }
    st->next = NULL;
    return ch;
}

static int parse(struct getopt_gnu *st, const struct getopt_gnu_vars *v, int argc, char **argv,
                 const char *optstring, const struct option *longopts, int *longind, int flags)
{
    struct call c = {.st = st,
                     .v = v,
                     .argc = argc,
                     .argv = argv,
                     .opts = optstring,
                     .longopts = longopts,
                     .longind = longind,
                     .long_only = (flags & GETOPT_GNU_LONG_ONLY) != 0,
                     .report = *v->opterr};
    if (argc < 1) return -1;
    st->optarg = NULL;
    if (*v->optind == 0 || !st->started) {
        if (*v->optind == 0) *v->optind = 1;
        st->first_nonopt = st->last_nonopt = *v->optind;
        st->next = NULL;
        if (*c.opts == '-') {
            st->order = ORDER_IN_ORDER;
            c.opts++;
        } else if (*c.opts == '+') {
            st->order = ORDER_REQUIRE;
            c.opts++;
        } else {
            /* getenv is the rank's own when a rank calls (interpose.c) */
            int posix = (flags & GETOPT_GNU_POSIX) || getenv("POSIXLY_CORRECT");
            st->order = posix ? ORDER_REQUIRE : ORDER_PERMUTE;
        }
        st->started = 1;
    } else if (*c.opts == '-' || *c.opts == '+') {
        c.opts++;
    }
    if (*c.opts == ':') c.report = 0;
    int ret;
    if ((!st->next || *st->next == '\0') && next_argument(&c, &ret)) return ret;
    return short_option(&c);
}

int getopt_gnu(struct getopt_gnu *st, const struct getopt_gnu_vars *v, int argc, char **argv,
               const char *optstring, const struct option *longopts, int *longind, int flags)
{
    int r = parse(st, v, argc, argv, optstring, longopts, longind, flags);
    /* glibc keeps optopt and optarg inside and copies them out after every call: a program
     * sees optopt 0 after its first call that found no error, not the initial '?' */
    *v->optopt = st->optopt;
    *v->optarg = st->optarg;
    return r;
}
