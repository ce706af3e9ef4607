/* rank_vars.h — libc's variables that a program reads and writes by name (optind, environ,
 * program_invocation_name ...), one set per rank.
 *
 * A process has one of each; every rank must have its own, or getopt in one rank moves
 * another's optind (and the job host's own option parsing leaves optind at 10 before main).
 * The program reaches such a variable in one of two ways, and the loader makes both private:
 * - a shared object (what tmpicc links) reads it through a GOT slot: each copy's slot is
 *   pointed at this rank's storage (own below);
 * - a PIE executable (CMake, Meson, plain cc) has a copy relocation: the variable lives in the
 *   program's own .bss, so each copy already holds one; the loader records that address.
 * Either way at[k] says where the rank's variable k is, and the interposed libc functions
 * (getopt, getenv, error ...) use it through RANK_VAR.  Only the loading thread (before the
 * rank starts) and the rank itself touch a rank's set. */
#ifndef TMPI_AGENT_RANK_VARS_H
#define TMPI_AGENT_RANK_VARS_H

#include <stddef.h>

enum rank_var {
    RANK_VAR_OPTIND,        /* int */
    RANK_VAR_OPTERR,        /* int */
    RANK_VAR_OPTOPT,        /* int */
    RANK_VAR_OPTARG,        /* char * */
    RANK_VAR_ENVIRON,       /* char **: environ, __environ, _environ */
    RANK_VAR_PROGNAME_FULL, /* char *: program_invocation_name, __progname_full */
    RANK_VAR_PROGNAME,      /* char *: program_invocation_short_name, __progname */
    RANK_VAR_COUNT
};

struct rank_vars {
    void *at[RANK_VAR_COUNT]; /* where the rank's variable lives: in own, or in its image */
    struct {
        int optind, opterr, optopt;
        char *optarg;
        char **environ;
        char *progname_full, *progname;
    } own;
};

/* The rank variable a dynamic symbol of libc is, or -1 for every other name. */
int rank_var_of_symbol(const char *name);

/* The size of variable k in bytes (what a copy relocation of it must hold). */
size_t rank_var_size(enum rank_var k);

/* Points every variable at own and gives each the value a fresh process starts with (optind
 * and opterr 1, optopt '?', optarg NULL); the environment and the program names start as the
 * process's. */
void rank_vars_init(struct rank_vars *v);

/* Moves variable k to addr (a copy relocation in the rank's image): the current value is
 * copied there and at[k] points to it from now on. */
void rank_vars_move(struct rank_vars *v, enum rank_var k, void *addr);

/* The rank's variable k as an lvalue of the given type: RANK_VAR(v, RANK_VAR_OPTIND, int) = 1. */
#define RANK_VAR(v, k, type) (*(type *)(v)->at[(k)])

#endif
