/* rank_env.h — a rank's environment: the array its `environ` points to and the strings setenv
 * made for it.
 *
 * A process has one environment; the ranks of a node share a process, so each rank has one of
 * these instead (interpose_env.c routes getenv, setenv, putenv, unsetenv and clearenv here).
 * The program may also read and assign `environ` itself: every function takes the rank's
 * environ variable (slot, rank_vars.h RANK_VAR_ENVIRON) and works on whatever array it holds
 * now, as glibc works on whatever __environ holds:
 *   - a lookup scans *slot;
 *   - a change of an existing name writes the entry in place, in any array;
 *   - an addition needs room: into the array this rank_env made (own) it appends, growing it;
 *     an array the program made (or NULL after clearenv) is first copied into a new own one,
 *     which *slot then points to.
 * Strings setenv makes are kept until rank_env_free (a program may still hold what getenv
 * returned for a value replaced since, as glibc never frees them either); putenv's string
 * stays the caller's and is used as it is.
 *
 * Threads: the rank and the threads it started share it.  Changes are serialised by mu;
 * lookups take no lock, so a getenv racing a setenv on another thread of the same rank may
 * read an array being moved, exactly the race POSIX leaves to glibc's callers too.  Functions
 * return 0 or a negative errno. */
#ifndef TMPI_AGENT_RANK_ENV_H
#define TMPI_AGENT_RANK_ENV_H

#include <pthread.h>
#include <stddef.h>

struct rank_env {
    pthread_mutex_t mu;
    char **start;   /* the starting array (rank_env_seal): never moved, freed at the end */
    char **own;     /* the array made here (NULL-terminated), or NULL */
    size_t own_cap; /* its room in entries, the terminator included */
    char **made;    /* every string setenv made: freed with the environment */
    size_t nmade, made_cap;
};

/* An empty environment; *slot is not touched. */
void rank_env_init(struct rank_env *e);

/* The array built so far becomes the starting one: like the array the kernel gives a
 * process, it stays where it is until rank_env_free (a program may keep `environ` as it
 * found it, set its own, and put the first back). */
void rank_env_seal(struct rank_env *e);

/* Frees what e made (the strings and the array): *slot must not be read afterwards. */
void rank_env_free(struct rank_env *e);

/* The value of name in *slot, or NULL. */
char *rank_env_get(char **const *slot, const char *name);

/* setenv(3): -EINVAL for a NULL or empty name or one with '=', -ENOMEM. */
int rank_env_set(struct rank_env *e, char ***slot, const char *name, const char *value,
                 int overwrite);

/* putenv(3): string "NAME=VALUE" goes into the environment itself; a string without '='
 * removes NAME (glibc's reading).  -EINVAL for NULL or "=...", -ENOMEM. */
int rank_env_put(struct rank_env *e, char ***slot, char *string);

/* unsetenv(3): every entry of name goes.  -EINVAL as for rank_env_set. */
int rank_env_unset(struct rank_env *e, char ***slot, const char *name);

/* clearenv(3): *slot becomes NULL; e's own array is freed. */
void rank_env_clear(struct rank_env *e, char ***slot);

#endif
