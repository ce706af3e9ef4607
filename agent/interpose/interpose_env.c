/* interpose_env.c — the environment of a rank is its own (rank_env.h): getenv, secure_getenv,
 * setenv, unsetenv, putenv and clearenv work on the array the rank's `environ` holds.  Agent
 * threads, and a rank before its state is set up, use the process's. */
#include <errno.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "interpose.h"
#include "job.h"
#include "rank.h"

#define EXPORT __attribute__((visibility("default")))

/* The calling rank if its environment is set up, else NULL. */
static struct rank *env_rank(void)
{
    struct rank *r = rank_current();
    return r && r->proc.ready ? r : NULL;
}

static int fail(int rc)
{
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return 0;
}

EXPORT char *getenv(const char *name)
{
    struct rank *r = rank_current();
    if (r && r->proc.ready) return rank_env_get(rank_proc_environ(r), name);
    if (r) {
        /* before its own is made (rank_proc_start): what it will start with */
        char *v = job_app_getenv(r->job, r->app, name);
        if (v) return v;
    }
    return interpose_real()->getenv(name);
}

/* glibc's: nothing for a program running with more privileges than its user (AT_SECURE). */
EXPORT char *secure_getenv(const char *name)
{
    return getauxval(AT_SECURE) ? NULL : getenv(name);
}

typedef int (*setenv_fn)(const char *, const char *, int);
typedef int (*unsetenv_fn)(const char *);
typedef int (*putenv_fn)(char *);
typedef int (*clearenv_fn)(void);

EXPORT int setenv(const char *name, const char *value, int overwrite)
{
    struct rank *r = env_rank();
    if (!r) return INTERPOSE_REAL(setenv_fn, setenv)(name, value, overwrite);
    return fail(rank_env_set(&r->proc.env, rank_proc_environ(r), name, value, overwrite));
}

EXPORT int unsetenv(const char *name)
{
    struct rank *r = env_rank();
    if (!r) return INTERPOSE_REAL(unsetenv_fn, unsetenv)(name);
    return fail(rank_env_unset(&r->proc.env, rank_proc_environ(r), name));
}

EXPORT int putenv(char *string)
{
    struct rank *r = env_rank();
    if (!r) return INTERPOSE_REAL(putenv_fn, putenv)(string);
    return fail(rank_env_put(&r->proc.env, rank_proc_environ(r), string));
}

EXPORT int clearenv(void)
{
    struct rank *r = env_rank();
    if (!r) return INTERPOSE_REAL(clearenv_fn, clearenv)();
    rank_env_clear(&r->proc.env, rank_proc_environ(r));
    return 0;
}
