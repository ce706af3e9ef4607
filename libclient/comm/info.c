/* info.c — MPI info objects and MPI_INFO_ENV (info.h). */
#include "info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "errh.h"
#include "job.h"
#include "objs.h"

static struct tm_info tm_info_none = {0, 0, NULL, NULL};

struct tm_info *tm_info_empty(void)
{
    return &tm_info_none;
}

void tm_info_free_obj(void *p)
{
    struct tm_info *in = p;
    if (!in || in == &tm_info_none) return;
    for (int i = 0; i < in->n; i++) {
        free(in->key[i]);
        free(in->val[i]);
    }
    free(in->key);
    free(in->val);
    free(in);
}

static int find(const struct tm_info *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (!strcmp(in->key[i], key)) return i;
    return -1;
}

const char *tm_info_lookup(const struct tm_info *in, const char *key)
{
    int i = in ? find(in, key) : -1;
    return i < 0 ? NULL : in->val[i];
}

/* Sets key to val (a new key goes last); 0 or -1 when out of memory. */
static int put(struct tm_info *in, const char *key, const char *val)
{
    int i = find(in, key);
    char *v = strdup(val);
    if (!v) return -1;
    if (i >= 0) {
        free(in->val[i]);
        in->val[i] = v;
        return 0;
    }
    if (in->n == in->cap) {
        int ncap = in->cap ? in->cap * 2 : 8;
        char **nk = realloc(in->key, sizeof *nk * (size_t)ncap);
        if (nk) in->key = nk;
        char **nv = nk ? realloc(in->val, sizeof *nv * (size_t)ncap) : NULL;
        if (!nv) {
            free(v);
            return -1;
        }
        in->val = nv;
        in->cap = ncap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return -1;
    }
    in->key[in->n] = k;
    in->val[in->n++] = v;
    return 0;
}

struct tm_info *tm_info_dup_obj(const struct tm_info *src)
{
    struct tm_info *in = calloc(1, sizeof *in);
    if (!in) return NULL;
    for (int i = 0; src && i < src->n; i++)
        if (put(in, src->key[i], src->val[i]) < 0) {
            tm_info_free_obj(in);
            return NULL;
        }
    return in;
}

static MPI_Info add_handle(struct tm_rank *me, struct tm_info *in)
{
    pthread_mutex_lock(&me->objs->lock);
    int h = tm_objtab_add(&me->objs->infos, TM_INFO_BASE, in);
    pthread_mutex_unlock(&me->objs->lock);
    return h < 0 ? MPI_INFO_NULL : h;
}

MPI_Info tm_info_new_handle(struct tm_rank *me, const struct tm_info *src)
{
    struct tm_info *in = tm_info_dup_obj(src);
    if (!in) return MPI_INFO_NULL;
    MPI_Info h = add_handle(me, in);
    if (h == MPI_INFO_NULL) tm_info_free_obj(in);
    return h;
}

void tm_info_env_args(struct tm_rank *me, int argc, char **argv)
{
    if (!me->objs || !argv || argc < 1 || !argv[0]) return;
    pthread_mutex_lock(&me->objs->lock);
    me->objs->env_argc = argc;
    me->objs->env_argv = argv;
    /* an MPI_INFO_ENV read before MPI_Init lacks the command and the thread level: made again */
    struct tm_info *old = me->objs->env;
    me->objs->env = NULL;
    pthread_mutex_unlock(&me->objs->lock);
    tm_info_free_obj(old);
}

/* argv[1..] joined by spaces (malloc'd), or NULL. */
static char *join_args(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 1; i < argc && argv[i]; i++)
        len += strlen(argv[i]) + 1;
    char *rest = malloc(len), *p = rest;
    if (!rest) return NULL;
    for (int i = 1; i < argc && argv[i]; i++) {
        size_t n = strlen(argv[i]);
        if (i > 1) *p++ = ' ';
        memcpy(p, argv[i], n);
        p += n;
    }
    *p = 0;
    return rest;
}

/* MPI_INFO_ENV (MPI 3.1 §10.3.1 keys): what this rank was started with, as far as known, with
 * the command line argc, argv (none: argv NULL). */
static struct tm_info *make_env(struct tm_rank *me, int argc, char **argv)
{
    struct tm_info *in = calloc(1, sizeof *in);
    if (!in) return NULL;
    char buf[4096];
    int ok = 1;
    if (argv && argc >= 1 && argv[0]) {
        char *rest = join_args(argc, argv);
        ok &= rest != NULL;
        ok &= put(in, "command", argv[0]) == 0;
        if (rest) ok &= put(in, "argv", rest) == 0;
        free(rest);
    }
    snprintf(buf, sizeof buf, "%d", me->world ? me->world->size : me->job->world_size);
    ok &= put(in, "maxprocs", buf) == 0;
    ok &= put(in, "soft", buf) == 0;
    if (me->info && me->info->hostname) ok &= put(in, "host", me->info->hostname) == 0;
    struct utsname u;
    if (uname(&u) == 0) ok &= put(in, "arch", u.machine) == 0;
    if (getcwd(buf, sizeof buf)) ok &= put(in, "wdir", buf) == 0;
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    int tl = me->thread_level;
    ok &= put(in, "thread_level", levels[tl >= 0 && tl <= 3 ? tl : 0]) == 0;
    if (!ok) {
        tm_info_free_obj(in);
        return NULL;
    }
    return in;
}

struct tm_info *tm_info_get(struct tm_rank *me, MPI_Info h)
{
    if (!me->objs) return NULL;
    pthread_mutex_lock(&me->objs->lock);
    struct tm_info *in;
    if (h == MPI_INFO_ENV) {
        if (!me->objs->env) me->objs->env = make_env(me, me->objs->env_argc, me->objs->env_argv);
        in = me->objs->env;
    } else {
        in = tm_objtab_get(me->objs->infos, TM_INFO_BASE, h);
    }
    pthread_mutex_unlock(&me->objs->lock);
    return in;
}

/* Info objects may be used before MPI_Init or MPI_Session_init (MPI 4.0 §11.4.1): the first
 * such call makes the rank's state (rank_open.h). */
#define ENTER(fn)                                                                                  \
    struct tm_rank *me = tm_rank_pre(fn);                                                          \
    if (TM_UNLIKELY(!me)) return tm_err_noco(MPI_ERR_OTHER, fn, TM_ERR_NOINIT);

#define GET_INFO(fn, var, h)                                                                       \
    struct tm_info *var = tm_info_get(me, h);                                                      \
    if (!var) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO, fn, "invalid info %d", h);

static int check_key(struct tm_rank *me, const char *fn, const char *key)
{
    if (!key) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn, "key is NULL");
    size_t n = strlen(key);
    if (n == 0) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn, "key is empty");
    if (n > MPI_MAX_INFO_KEY)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO_KEY, fn,
                      "key of %zu characters (MPI_MAX_INFO_KEY is %d)", n, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

TM_API int PMPI_Info_create(MPI_Info *info)
{
    ENTER("MPI_Info_create");
    if (!info) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
    MPI_Info h = tm_info_new_handle(me, NULL);
    if (h == MPI_INFO_NULL)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    *info = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Info_create)

TM_API int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    const char *fn = "MPI_Info_set";
    ENTER(fn);
    GET_INFO(fn, in, info);
    if (info == MPI_INFO_ENV)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO, fn, "MPI_INFO_ENV cannot be changed");
    int e = check_key(me, fn, key);
    if (e) return e;
    if (!value) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, fn, "value is NULL");
    size_t n = strlen(value);
    if (n == 0) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, fn, "value is empty");
    if (n > MPI_MAX_INFO_VAL)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, fn,
                      "value of %zu characters (MPI_MAX_INFO_VAL is %d)", n, MPI_MAX_INFO_VAL);
    if (put(in, key, value) < 0)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    return MPI_SUCCESS;
}
TM_ALIAS(Info_set)

TM_API int PMPI_Info_delete(MPI_Info info, const char *key)
{
    const char *fn = "MPI_Info_delete";
    ENTER(fn);
    GET_INFO(fn, in, info);
    if (info == MPI_INFO_ENV)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO, fn, "MPI_INFO_ENV cannot be changed");
    int e = check_key(me, fn, key);
    if (e) return e;
    int i = find(in, key);
    if (i < 0) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY, fn, "no key \"%s\"", key);
    free(in->key[i]);
    free(in->val[i]);
    memmove(in->key + i, in->key + i + 1, sizeof *in->key * (size_t)(in->n - i - 1));
    memmove(in->val + i, in->val + i + 1, sizeof *in->val * (size_t)(in->n - i - 1));
    in->n--;
    return MPI_SUCCESS;
}
TM_ALIAS(Info_delete)

TM_API int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    const char *fn = "MPI_Info_get";
    ENTER(fn);
    GET_INFO(fn, in, info);
    int e = check_key(me, fn, key);
    if (e) return e;
    if (valuelen < 0) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "valuelen %d", valuelen);
    if (!flag || (!value && valuelen > 0))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "value or flag is NULL");
    int i = find(in, key);
    *flag = i >= 0;
    if (i >= 0 && value) {
        /* At most valuelen characters, then the terminator (value holds valuelen + 1). */
        size_t n = strlen(in->val[i]);
        if (n > (size_t)valuelen) n = (size_t)valuelen;
        memcpy(value, in->val[i], n);
        value[n] = 0;
    }
    return MPI_SUCCESS;
}
TM_ALIAS(Info_get)

TM_API int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    const char *fn = "MPI_Info_get_string";
    ENTER(fn);
    GET_INFO(fn, in, info);
    int e = check_key(me, fn, key);
    if (e) return e;
    if (!buflen || !flag || *buflen < 0 || (!value && *buflen > 0))
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "invalid buflen, value or flag");
    int i = find(in, key);
    *flag = i >= 0;
    if (i < 0) return MPI_SUCCESS;
    size_t n = strlen(in->val[i]);
    if (*buflen > 0) {
        size_t k = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, in->val[i], k);
        value[k] = 0;
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}
TM_ALIAS(Info_get_string)

TM_API int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    const char *fn = "MPI_Info_get_valuelen";
    ENTER(fn);
    GET_INFO(fn, in, info);
    int e = check_key(me, fn, key);
    if (e) return e;
    if (!valuelen || !flag)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "valuelen or flag is NULL");
    int i = find(in, key);
    *flag = i >= 0;
    if (i >= 0) *valuelen = (int)strlen(in->val[i]);
    return MPI_SUCCESS;
}
TM_ALIAS(Info_get_valuelen)

TM_API int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    ENTER("MPI_Info_get_nkeys");
    GET_INFO("MPI_Info_get_nkeys", in, info);
    if (!nkeys)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys is NULL");
    *nkeys = in->n;
    return MPI_SUCCESS;
}
TM_ALIAS(Info_get_nkeys)

TM_API int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    const char *fn = "MPI_Info_get_nthkey";
    ENTER(fn);
    GET_INFO(fn, in, info);
    if (!key) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "key is NULL");
    if (n < 0 || n >= in->n)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "n %d: the info has %d keys", n, in->n);
    strcpy(key, in->key[n]);
    return MPI_SUCCESS;
}
TM_ALIAS(Info_get_nthkey)

TM_API int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    ENTER("MPI_Info_dup");
    GET_INFO("MPI_Info_dup", in, info);
    if (!newinfo) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_dup", "newinfo is NULL");
    MPI_Info h = tm_info_new_handle(me, in);
    if (h == MPI_INFO_NULL)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    *newinfo = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Info_dup)

TM_API int PMPI_Info_free(MPI_Info *info)
{
    ENTER("MPI_Info_free");
    if (!info) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Info_free", "info is NULL");
    if (*info == MPI_INFO_ENV)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO, "MPI_Info_free",
                      "MPI_INFO_ENV cannot be freed");
    pthread_mutex_lock(&me->objs->lock);
    struct tm_info *in = tm_objtab_get(me->objs->infos, TM_INFO_BASE, *info);
    if (in) tm_objtab_del(me->objs->infos, TM_INFO_BASE, *info);
    pthread_mutex_unlock(&me->objs->lock);
    if (!in)
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_INFO, "MPI_Info_free", "invalid info %d", *info);
    tm_info_free_obj(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
TM_ALIAS(Info_free)

/* MPI 4.0 §11.2.2: a new info object with what MPI_INFO_ENV holds, for argc and argv when
 * given (NULL: those MPI_Init recorded).  Allowed before MPI_Init and after MPI_Finalize
 * (MPI 4.1 §11.4.1), so made fresh: MPI_INFO_ENV's cache is not touched. */
TM_API int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    const char *fn = "MPI_Info_create_env";
    ENTER(fn);
    if (!info) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "info is NULL");
    if (!me->objs) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    pthread_mutex_lock(&me->objs->lock);
    if (!argv || argc < 1) {
        argc = me->objs->env_argc;
        argv = me->objs->env_argv;
    }
    struct tm_info *in = make_env(me, argc, argv);
    pthread_mutex_unlock(&me->objs->lock);
    if (!in) return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    MPI_Info h = add_handle(me, in);
    if (h == MPI_INFO_NULL) {
        tm_info_free_obj(in);
        return tm_err(me, MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *info = h;
    return MPI_SUCCESS;
}
TM_ALIAS(Info_create_env)
