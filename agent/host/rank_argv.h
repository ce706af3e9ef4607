/* rank_argv.h — the argument vector each rank's main gets.
 *
 * main may change its argv strings, so every rank needs its own.  Copying them per rank made
 * a job's arguments cost ranks x their size (2 MiB of arguments on 256 ranks: 0.9 GB in the
 * job host).  Above RANK_ARGV_SHARE_MIN bytes the strings are written once into a memfd that
 * each rank maps privately (copy on write): a rank pays only for the pages it writes and for
 * its pointer array (8 bytes an argument); below it a plain copy is cheaper than a mapping. */
#ifndef TMPI_AGENT_RANK_ARGV_H
#define TMPI_AGENT_RANK_ARGV_H

#include <stddef.h>

/* Strings of fewer bytes than this are copied per rank. */
#define RANK_ARGV_SHARE_MIN (64 * 1024)

/* One program's arguments, shared by its ranks.  Written once by the job's set-up, then only
 * read (by every rank thread). */
struct rank_argv_src {
    int argc;
    char *const *argv; /* the job's own strings (argv[argc] == NULL) */
    size_t *offset;    /* where argv[i] starts in the strings block */
    size_t bytes;      /* the strings with their NULs */
    int fd;            /* memfd holding the block, or -1 (copied per rank) */
};

/* One rank's vector: argv for main, and what to give back after main. */
struct rank_argv {
    char **argv;
    void *map; /* the rank's private mapping of the block, or NULL */
    size_t map_len;
};

/* Prepares src for argv (argc strings, NULL-terminated; argv stays the caller's and must
 * outlive src).  0, or a negative errno (nothing to free then). */
int rank_argv_src_init(struct rank_argv_src *src, int argc, char *const *argv);
void rank_argv_src_free(struct rank_argv_src *src);

/* A rank's own vector.  0, or a negative errno. */
int rank_argv_make(const struct rank_argv_src *src, struct rank_argv *ret);
void rank_argv_free(struct rank_argv *ra);

/* Memory maps one rank's vector takes (for job_limits.h). */
int rank_argv_maps(const struct rank_argv_src *src);

#endif
