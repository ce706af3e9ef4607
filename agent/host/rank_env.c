#include "rank_env.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An array made here starts with room for this many entries and doubles when full. */
#define RANK_ENV_MIN_CAP 16

void rank_env_init(struct rank_env *e)
{
    memset(e, 0, sizeof *e);
    pthread_mutex_init(&e->mu, NULL);
}

void rank_env_seal(struct rank_env *e)
{
    pthread_mutex_lock(&e->mu);
    if (e->start) {
        /* sealed already: a second starting array would leave the first unreachable */
        pthread_mutex_unlock(&e->mu);
        return;
    }
    e->start = e->own;
    e->own = NULL;
    e->own_cap = 0;
    pthread_mutex_unlock(&e->mu);
}

void rank_env_free(struct rank_env *e)
{
    for (size_t i = 0; i < e->nmade; i++)
        free(e->made[i]);
    free(e->made);
    free(e->start);
    free(e->own);
    pthread_mutex_destroy(&e->mu);
    memset(e, 0, sizeof *e);
}

static int valid_name(const char *name)
{
    return name && name[0] && !strchr(name, '=');
}

/* The index of the first entry of the name of nlen bytes, or -1. */
static long find(char **env, const char *name, size_t nlen)
{
    for (long i = 0; env && env[i]; i++)
        if (strncmp(env[i], name, nlen) == 0 && env[i][nlen] == '=') return i;
    return -1;
}

char *rank_env_get(char **const *slot, const char *name)
{
    if (!name) return NULL;
    size_t nlen = strlen(name);
    long i = find(*slot, name, nlen);
    return i < 0 ? NULL : (*slot)[i] + nlen + 1;
}

/* Makes *slot e's own array with room for one more entry; its count in *ret_n. */
static int room_for_one(struct rank_env *e, char ***slot, size_t *ret_n)
{
    char **env = *slot;
    size_t n = 0;
    while (env && env[n])
        n++;
    *ret_n = n;
    if (env && env == e->own && n + 2 <= e->own_cap) return 0;
    size_t cap = (n + 2) * 2 > RANK_ENV_MIN_CAP ? (n + 2) * 2 : RANK_ENV_MIN_CAP;
    if (env && env == e->own) {
        char **grown = realloc(e->own, cap * sizeof *grown);
        if (!grown) return -ENOMEM;
        e->own = *slot = grown;
    } else {
        /* the program's own array (or none after clearenv): ours from now on, as glibc's
         * setenv moves to an array of its own; the old own one is no longer environ */
        char **fresh = malloc(cap * sizeof *fresh);
        if (!fresh) return -ENOMEM;
        if (n) memcpy(fresh, env, n * sizeof *fresh);
        fresh[n] = NULL;
        free(e->own);
        e->own = *slot = fresh;
    }
    e->own_cap = cap;
    return 0;
}

/* Puts string (NAME=..., name nlen bytes) in place of the name's entry, or after the last. */
static int put_locked(struct rank_env *e, char ***slot, char *string, size_t nlen)
{
    long i = find(*slot, string, nlen);
    if (i >= 0) {
        (*slot)[i] = string;
        return 0;
    }
    size_t n;
    int r = room_for_one(e, slot, &n);
    if (r < 0) return r;
    /* the terminator first: a reader on another thread sees the old end or the new entry */
    (*slot)[n + 1] = NULL;
    (*slot)[n] = string;
    return 0;
}

int rank_env_set(struct rank_env *e, char ***slot, const char *name, const char *value,
                 int overwrite)
{
    if (!valid_name(name)) return -EINVAL;
    if (!value) value = "";
    size_t nlen = strlen(name), vlen = strlen(value);
    pthread_mutex_lock(&e->mu);
    int r = 0;
    long i = find(*slot, name, nlen);
    /* the same value again (a loop setting it) needs no new string */
    if (i >= 0 && (!overwrite || strcmp((*slot)[i] + nlen + 1, value) == 0)) goto out;
    if (e->nmade == e->made_cap) {
        size_t cap = e->made_cap ? e->made_cap * 2 : RANK_ENV_MIN_CAP;
        char **grown = realloc(e->made, cap * sizeof *grown);
        if (!grown) {
            r = -ENOMEM;
            goto out;
        }
        e->made = grown;
        e->made_cap = cap;
    }
    char *s = malloc(nlen + vlen + 2);
    if (!s) {
        r = -ENOMEM;
        goto out;
    }
    memcpy(s, name, nlen);
    s[nlen] = '=';
    memcpy(s + nlen + 1, value, vlen + 1);
    e->made[e->nmade++] = s;
    r = put_locked(e, slot, s, nlen);
out:
    pthread_mutex_unlock(&e->mu);
    return r;
}

int rank_env_unset(struct rank_env *e, char ***slot, const char *name)
{
    if (!valid_name(name)) return -EINVAL;
    size_t nlen = strlen(name);
    pthread_mutex_lock(&e->mu);
    char **env = *slot;
    size_t out = 0;
    for (size_t i = 0; env && env[i]; i++)
        if (!(strncmp(env[i], name, nlen) == 0 && env[i][nlen] == '=')) env[out++] = env[i];
    if (env) env[out] = NULL;
    pthread_mutex_unlock(&e->mu);
    return 0;
}

int rank_env_put(struct rank_env *e, char ***slot, char *string)
{
    if (!string || string[0] == '=') return -EINVAL;
    const char *eq = strchr(string, '=');
    if (!eq) return rank_env_unset(e, slot, string);
    pthread_mutex_lock(&e->mu);
    int r = put_locked(e, slot, string, (size_t)(eq - string));
    pthread_mutex_unlock(&e->mu);
    return r;
}

void rank_env_clear(struct rank_env *e, char ***slot)
{
    pthread_mutex_lock(&e->mu);
    if (*slot && *slot == e->own) {
        free(e->own);
        e->own = NULL;
        e->own_cap = 0;
    }
    *slot = NULL;
    pthread_mutex_unlock(&e->mu);
}
