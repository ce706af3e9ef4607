/* test_rank_env.c — a rank's environment (agent/host/rank_env.c) behaves as glibc's does for
 * a process: setenv with and without overwrite, putenv keeping the caller's string, unsetenv of
 * every entry, clearenv, names refused, an array the program made itself, and the starting
 * array staying where it is. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "rank_env.h"

static size_t count(char **env)
{
    size_t n = 0;
    while (env && env[n])
        n++;
    return n;
}

/* A sealed environment of {"A=1", "B=2"}, as rank_proc_start makes one. */
static void start(struct rank_env *e, char ***slot)
{
    static char a[] = "A=1", b[] = "B=2";
    rank_env_init(e);
    *slot = NULL;
    CHECK_EQ(rank_env_put(e, slot, a), 0);
    CHECK_EQ(rank_env_put(e, slot, b), 0);
    rank_env_seal(e);
}

static void test_set_get(void)
{
    struct rank_env e;
    char **env;
    start(&e, &env);
    char **first = env;
    CHECK(strcmp(rank_env_get(&env, "A"), "1") == 0);
    CHECK(rank_env_get(&env, "C") == NULL && rank_env_get(&env, "") == NULL);
    CHECK_EQ(rank_env_set(&e, &env, "A", "x", 0), 0);
    CHECK(strcmp(rank_env_get(&env, "A"), "1") == 0, "overwrite 0 replaced A");
    char *old = rank_env_get(&env, "A");
    CHECK_EQ(rank_env_set(&e, &env, "A", "x", 1), 0);
    CHECK(strcmp(rank_env_get(&env, "A"), "x") == 0);
    CHECK(strcmp(old, "1") == 0, "a value getenv returned was freed or changed");
    /* a replacement writes in place; an addition moves off the starting array */
    CHECK(env == first && count(env) == 2);
    CHECK_EQ(rank_env_set(&e, &env, "C", "3", 1), 0);
    CHECK(env != first && count(env) == 3 && strcmp(rank_env_get(&env, "C"), "3") == 0);
    CHECK(count(first) == 2, "the starting array changed under a program that kept it");
    for (int i = 0; i < 100; i++) {
        char name[16];
        snprintf(name, sizeof name, "V%d", i);
        CHECK_EQ(rank_env_set(&e, &env, name, name, 1), 0);
    }
    CHECK_EQ(count(env), 103);
    CHECK(strcmp(rank_env_get(&env, "V99"), "V99") == 0 &&
          strcmp(rank_env_get(&env, "B"), "2") == 0);
    /* the same value again makes no string */
    size_t made = e.nmade;
    CHECK_EQ(rank_env_set(&e, &env, "V5", "V5", 1), 0);
    CHECK_EQ(e.nmade, made);
    CHECK_EQ(rank_env_set(&e, &env, NULL, "x", 1), -EINVAL);
    CHECK_EQ(rank_env_set(&e, &env, "", "x", 1), -EINVAL);
    CHECK_EQ(rank_env_set(&e, &env, "A=B", "x", 1), -EINVAL);
    CHECK_EQ(rank_env_set(&e, &env, "N", NULL, 1), 0);
    CHECK(strcmp(rank_env_get(&env, "N"), "") == 0);
    rank_env_free(&e);
}

static void test_put_unset_clear(void)
{
    struct rank_env e;
    char **env;
    start(&e, &env);
    char mine[] = "P=one";
    CHECK_EQ(rank_env_put(&e, &env, mine), 0);
    CHECK(rank_env_get(&env, "P") == mine + 2, "putenv copied the string");
    mine[2] = 'O';
    CHECK(strcmp(rank_env_get(&env, "P"), "One") == 0);
    CHECK_EQ(rank_env_unset(&e, &env, "A"), 0);
    CHECK(rank_env_get(&env, "A") == NULL && count(env) == 2);
    /* two entries of one name, as a program writing its own environ may leave: both go */
    char a1[] = "A=1", b2[] = "B=2", a3[] = "A=3";
    char *twice[] = {a1, b2, a3, NULL};
    char **kept = env;
    env = twice;
    CHECK_EQ(rank_env_unset(&e, &env, "A"), 0);
    CHECK(env == twice && twice[0] == b2 && twice[1] == NULL);
    env = kept;
    char name_only[] = "P";
    CHECK_EQ(rank_env_put(&e, &env, name_only), 0);
    CHECK(rank_env_get(&env, "P") == NULL, "putenv(NAME) keeps NAME");
    char bad[] = "=x";
    CHECK_EQ(rank_env_put(&e, &env, bad), -EINVAL);
    CHECK_EQ(rank_env_put(&e, &env, NULL), -EINVAL);
    CHECK_EQ(rank_env_unset(&e, &env, "X=Y"), -EINVAL);
    CHECK_EQ(rank_env_unset(&e, &env, "NONE"), 0);
    rank_env_clear(&e, &env);
    CHECK(env == NULL && rank_env_get(&env, "B") == NULL);
    CHECK_EQ(rank_env_unset(&e, &env, "B"), 0);
    CHECK_EQ(rank_env_set(&e, &env, "Z", "26", 1), 0);
    CHECK(count(env) == 1 && strcmp(rank_env_get(&env, "Z"), "26") == 0);
    rank_env_free(&e);
}

/* environ = the program's own array: read as it is, copied into a new one on an addition. */
static void test_program_array(void)
{
    struct rank_env e;
    char **env;
    start(&e, &env);
    char only[] = "ONLY=1";
    char *mine[] = {only, NULL};
    env = mine;
    CHECK(strcmp(rank_env_get(&env, "ONLY"), "1") == 0 && rank_env_get(&env, "A") == NULL);
    CHECK_EQ(rank_env_set(&e, &env, "ONLY", "2", 1), 0);
    CHECK(env == mine && strcmp(mine[0], "ONLY=2") == 0, "a replacement left the array");
    CHECK_EQ(rank_env_set(&e, &env, "MORE", "3", 1), 0);
    CHECK(env != mine && mine[1] == NULL && count(env) == 2);
    CHECK(strcmp(rank_env_get(&env, "ONLY"), "2") == 0);
    rank_env_free(&e);
}

int main(void)
{
    test_set_get();
    test_put_unset_clear();
    test_program_array();
    printf("ok\n");
    return 0;
}
