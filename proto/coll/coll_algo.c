/* coll_algo.c — the collectives' algorithm table and the choice rule (coll_algo.h). */
#include "coll_algo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "coll_tree.h"

static const struct tm_coll_kind kinds[TM_COLL_COUNT] = {
    [TM_COLL_BCAST] = {"bcast", "TMPI_COLL_BCAST", "coll_bcast"},
    [TM_COLL_REDUCE] = {"reduce", "TMPI_COLL_REDUCE", "coll_reduce"},
    [TM_COLL_ALLREDUCE] = {"allreduce", "TMPI_COLL_ALLREDUCE", "coll_allreduce"},
};

#define NA (-1)
/* bcast, reduce, allreduce */
static const struct tm_coll_algo algos[] = {
    {"auto", NULL, {TM_TREE_AUTO, TM_TREE_AUTO, TM_AR_AUTO}, "by node count and size"},
    {"flat", NULL, {TM_TREE_FLAT, TM_TREE_FLAT, NA}, "the root's leader to every other leader"},
    {"binomial",
     "hypercube",
     {TM_TREE_BINOMIAL, TM_TREE_BINOMIAL, NA},
     "a binomial tree (seed 000's hypercube)"},
    {"binary", NULL, {TM_TREE_BINARY, TM_TREE_BINARY, NA}, "a balanced binary tree"},
    {"recursive_doubling",
     NULL,
     {NA, NA, TM_AR_RECDOUBLING},
     "log2(n) exchanges of the whole vector"},
    {"reduce_bcast",
     NULL,
     {NA, NA, TM_AR_REDUCE_BCAST},
     "a reduce to one leader, then a bcast, along a tree"},
    {"ring", NULL, {NA, NA, TM_AR_RING}, "reduce-scatter and allgather around a ring"},
    {"tree_file",
     NULL,
     {TM_TREE_FILE, TM_TREE_FILE, TM_AR_TREE_FILE},
     "the edges of the tree file (TMPI_COLL_TREE_FILE, [mpi] coll_tree_file)"},
};
#define NALGOS (sizeof algos / sizeof *algos)

const struct tm_coll_kind *tm_coll_kind(enum tm_coll_id c)
{
    return (unsigned)c < TM_COLL_COUNT ? &kinds[c] : NULL;
}

static int same(const char *name, const char *s, size_t len)
{
    return name && strlen(name) == len && memcmp(name, s, len) == 0;
}

int tm_coll_kind_parse(const char *name, size_t len, enum tm_coll_id *ret)
{
    for (int c = 0; c < TM_COLL_COUNT; c++)
        if (same(kinds[c].name, name, len)) {
            *ret = (enum tm_coll_id)c;
            return 0;
        }
    return -EINVAL;
}

const struct tm_coll_algo *tm_coll_algos(size_t *ret_n)
{
    *ret_n = NALGOS;
    return algos;
}

int tm_coll_algo_parse(enum tm_coll_id c, const char *s, size_t len, int *ret)
{
    if ((unsigned)c >= TM_COLL_COUNT) return -EINVAL;
    for (size_t i = 0; i < NALGOS; i++)
        if (algos[i].value[c] != NA &&
            (same(algos[i].name, s, len) || same(algos[i].alias, s, len))) {
            *ret = algos[i].value[c];
            return 0;
        }
    return -EINVAL;
}

const char *tm_coll_algo_name(enum tm_coll_id c, int value)
{
    if ((unsigned)c >= TM_COLL_COUNT || value == NA) return "?";
    for (size_t i = 0; i < NALGOS; i++)
        if (algos[i].value[c] == value) return algos[i].name;
    return "?";
}

const char *tm_coll_algo_names(enum tm_coll_id c, char *buf, size_t len)
{
    size_t k = 0;
    if (len) buf[0] = '\0';
    for (size_t i = 0; (unsigned)c < TM_COLL_COUNT && i < NALGOS && k < len; i++) {
        if (algos[i].value[c] == NA) continue;
        int w = snprintf(buf + k, len - k, "%s%s", k ? ", " : "", algos[i].name);
        if (w < 0) break;
        k += (size_t)w;
    }
    return buf;
}

int tm_coll_takes_file(enum tm_coll_id c, int value)
{
    return value == 0 ||
           (c == TM_COLL_ALLREDUCE ? value == TM_AR_TREE_FILE : value == TM_TREE_FILE);
}

void tm_coll_select(enum tm_coll_id c, int configured, const struct tm_tree_file *file, int n,
                    size_t bytes, int commute, struct tm_coll_pick *ret)
{
    int a = configured;
    ret->use_file = 0;
    ret->from = a ? "setting" : "auto";
    if (file && tm_coll_takes_file(c, a)) {
        int fa = tm_tree_file_algo(file, c, bytes);
        if (fa < 0 || (fa != 0 && tm_coll_takes_file(c, fa))) {
            ret->use_file = 1;
            ret->algo = ret->shape = -1;
            ret->from = "tree file";
            return;
        }
        a = fa;
        ret->from = "tree file";
    }
    if (c == TM_COLL_ALLREDUCE) {
        if (a == TM_AR_AUTO || a == TM_AR_TREE_FILE || (!commute && a != TM_AR_REDUCE_BCAST))
            a = tm_allreduce_choose(n, bytes, commute);
        ret->algo = a;
        ret->shape = tm_tree_choose(n, bytes);
        return;
    }
    if (a == TM_TREE_AUTO || a == TM_TREE_FILE) a = tm_tree_choose(n, bytes);
    ret->algo = ret->shape = a;
}
