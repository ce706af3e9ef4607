#include "rank_vars.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Each name a program may reference a rank variable by; glibc exports the environment and
 * the program names under several aliases of one object. */
static const struct {
    const char *name;
    enum rank_var k;
} var_names[] = {
    {"optind", RANK_VAR_OPTIND},
    {"opterr", RANK_VAR_OPTERR},
    {"optopt", RANK_VAR_OPTOPT},
    {"optarg", RANK_VAR_OPTARG},
    {"environ", RANK_VAR_ENVIRON},
    {"__environ", RANK_VAR_ENVIRON},
    {"_environ", RANK_VAR_ENVIRON},
    {"program_invocation_name", RANK_VAR_PROGNAME_FULL},
    {"__progname_full", RANK_VAR_PROGNAME_FULL},
    {"program_invocation_short_name", RANK_VAR_PROGNAME},
    {"__progname", RANK_VAR_PROGNAME},
};

int rank_var_of_symbol(const char *name)
{
    for (size_t i = 0; i < sizeof var_names / sizeof var_names[0]; i++)
        if (strcmp(name, var_names[i].name) == 0) return (int)var_names[i].k;
    return -1;
}

size_t rank_var_size(enum rank_var k)
{
    switch (k) {
    case RANK_VAR_OPTIND:
    case RANK_VAR_OPTERR:
    case RANK_VAR_OPTOPT:
        return sizeof(int);
    default:
        return sizeof(void *);
    }
}

void rank_vars_init(struct rank_vars *v)
{
    memset(v, 0, sizeof *v);
    v->own.optind = 1;
    v->own.opterr = 1;
    v->own.optopt = '?';
    /* until the rank's own are made (interpose/), what the process has */
    v->own.environ = environ;
    v->own.progname_full = program_invocation_name;
    v->own.progname = program_invocation_short_name;
    v->at[RANK_VAR_OPTIND] = &v->own.optind;
    v->at[RANK_VAR_OPTERR] = &v->own.opterr;
    v->at[RANK_VAR_OPTOPT] = &v->own.optopt;
    v->at[RANK_VAR_OPTARG] = &v->own.optarg;
    v->at[RANK_VAR_ENVIRON] = &v->own.environ;
    v->at[RANK_VAR_PROGNAME_FULL] = &v->own.progname_full;
    v->at[RANK_VAR_PROGNAME] = &v->own.progname;
}

void rank_vars_move(struct rank_vars *v, enum rank_var k, void *addr)
{
    if (addr == v->at[k]) return;
    memcpy(addr, v->at[k], rank_var_size(k));
    v->at[k] = addr;
}
