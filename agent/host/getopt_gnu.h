/* getopt_gnu.h — GNU getopt, getopt_long and getopt_long_only over state the caller owns.
 *
 * A process has one getopt: its variables (optind, opterr, optopt, optarg) and its hidden
 * position (the rest of a cluster like -abc, where the skipped non-options are) are libc's.
 * Ranks each parse their own argv, so the rank's overrides (interpose_getopt.c) run this
 * parser on the rank's variables (rank_vars.h) and the rank's position (struct getopt_gnu).
 *
 * It behaves as glibc's: argument permutation (non-options are moved behind the options, and
 * optind ends at the first of them), a leading '+' or POSIXLY_CORRECT in the environment
 * (stop at the first non-option), a leading '-' (non-options are returned as option 1 with
 * optarg), a leading ':' (no messages; ':' for a missing argument), "x::" optional
 * arguments (only attached: -xVAL, --name=VAL), unambiguous abbreviations of long options,
 * "W;" (-W name is --name), "--" ends the options, optind = 0 starts over, and the messages on
 * stderr prefixed with argv[0] when opterr is set. */
#ifndef TMPI_AGENT_GETOPT_GNU_H
#define TMPI_AGENT_GETOPT_GNU_H

#include <getopt.h>

/* The hidden position.  All zeros is the state of a process that never called getopt. */
struct getopt_gnu {
    char *next;  /* the rest of the cluster being read (-abc); NULL or "" when none */
    int started; /* the ordering and the bounds below are set up */
    int order;   /* enum getopt_gnu_order, chosen at the first call */
    int first_nonopt, last_nonopt; /* the non-options skipped so far: argv[first, last) */
    int optopt;                    /* copied to the caller's optopt and optarg after each call */
    char *optarg;
};

/* Where the caller's optind, opterr, optopt and optarg are. */
struct getopt_gnu_vars {
    int *optind, *opterr, *optopt;
    char **optarg;
};

/* flags of getopt_gnu */
#define GETOPT_GNU_LONG_ONLY 1 /* getopt_long_only: -name is a long option too */
#define GETOPT_GNU_POSIX 2     /* __posix_getopt: as if POSIXLY_CORRECT were set */

/* One call of getopt (longopts NULL), getopt_long or getopt_long_only (GETOPT_GNU_LONG_ONLY),
 * with their return values and their effect on the variables, on argv (permuted) and on
 * stderr. */
int getopt_gnu(struct getopt_gnu *st, const struct getopt_gnu_vars *v, int argc, char **argv,
               const char *optstring, const struct option *longopts, int *longind, int flags);

#endif
