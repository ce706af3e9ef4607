/* rank_libc.h — libc's hidden state that a process has one of, one per rank.
 *
 * libc keeps some process state in statics of its own: getopt's position in argv, strtok's
 * place in its string, the rand/random and drand48 generators, the global locale, the buffer
 * tmpnam(NULL) returns, the exit handlers.  Ranks each behave as a process of their own, so
 * the overrides in agent/interpose/ (interpose_getopt.c, interpose_rand.c,
 * interpose_locale.c, interpose_misc.c, interpose_error.c, interpose_exit.c) keep that state
 * here, in the calling rank's struct rank.  The variables a program names (optind, the
 * program names) are in rank_vars.h.
 *
 * All zeros (a calloc'ed struct rank) is the state of a process that has called none of
 * them.  Only the rank's own context and the threads it started touch it; each part says
 * what protects it. */
#ifndef TMPI_AGENT_RANK_LIBC_H
#define TMPI_AGENT_RANK_LIBC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "getopt_gnu.h"
#include "rank_exit.h"
#include "rank_locale.h"

/* glibc's rand() is random(): its state as a process starts with, TYPE_3 in 128 bytes
 * seeded with 1, set up at the rank's first call. */
#define RANK_RANDOM_STATE_BYTES 128

struct rank_rand {
    int ready; /* random and its table set up as srandom(1) leaves them */
    struct random_data random;
    int32_t table[RANK_RANDOM_STATE_BYTES / sizeof(int32_t)];
    struct drand48_data drand48; /* all zeros: drand48 as a process starts with it */
};

struct rank_libc {
    struct getopt_gnu getopt;
    char *strtok_next; /* strtok's place in the string it was last given */
    struct rank_rand rand;
    struct rank_locale locale;
    char tmpnam[L_tmpnam]; /* what tmpnam(NULL) returns */
    /* error_at_line's last place, for error_one_per_line */
    const char *error_file;
    unsigned int error_line;
    struct rank_exit exit;
};

/* Frees what the rank's libc state holds (its locale objects, its exit handlers): after the
 * rank and every thread it started are gone. */
void rank_libc_free(struct rank_libc *l);

#endif
