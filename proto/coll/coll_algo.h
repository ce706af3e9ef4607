/* coll_algo.h — the one table of the collectives' algorithms between nodes, and the one rule
 * that picks one.
 *
 * Everything that names or chooses an algorithm reads this table: tmpid's parser of
 * tmpid.conf [mpi] coll_* (agent/base/config.c), libtmpi's reading of the settings and
 * TMPI_COLL_* (libclient/coll_net/coll_net.c) and its leaders' choice (coll_hier.c),
 * `tmpictl tree` (launcher/ctl/ctl_tree.c) and tree files' "algorithm" lines (coll_tree.h).
 * A new algorithm is a row here and its code in coll_hier.c (docs/COLLECTIVES.md "Adding an
 * algorithm").  Pure data and computation, any thread. */
#ifndef TMPI_PROTO_COLL_ALGO_H
#define TMPI_PROTO_COLL_ALGO_H

#include <stddef.h>

struct tm_tree_file;

/* The collectives whose inter-node phase has a choice of algorithm. */
enum tm_coll_id { TM_COLL_BCAST, TM_COLL_REDUCE, TM_COLL_ALLREDUCE };
#define TM_COLL_COUNT 3

/* A collective: its name (tmpictl tree --coll, tree files), the variable a job sets and the
 * [mpi] key of tmpid.conf. */
struct tm_coll_kind {
    const char *name;
    const char *env;
    const char *conf_key;
};

/* One algorithm: its name in settings, tmpictl tree and tree files (alias: another spelling
 * accepted), and per collective the value its code knows it by (enum tm_tree_shape for bcast
 * and reduce, enum tm_allreduce_algo for allreduce), -1 where it does not apply.  Value 0 is
 * "auto" for every collective. */
struct tm_coll_algo {
    const char *name;
    const char *alias;
    int value[TM_COLL_COUNT];
    const char *what; /* one line for the documentation */
};

const struct tm_coll_kind *tm_coll_kind(enum tm_coll_id c);
/* "bcast", "reduce", "allreduce": 0, or -EINVAL. */
int tm_coll_kind_parse(const char *name, size_t len, enum tm_coll_id *ret);

/* The rows, in the order the names are listed (*ret_n of them). */
const struct tm_coll_algo *tm_coll_algos(size_t *ret_n);
/* Parses an algorithm's name (len bytes) for collective c: 0 with its value, or -EINVAL (no
 * such name, or not one of c's). */
int tm_coll_algo_parse(enum tm_coll_id c, const char *s, size_t len, int *ret);
/* The name of c's algorithm value ("?" if none). */
const char *tm_coll_algo_name(enum tm_coll_id c, int value);
/* "auto, flat, ..." for messages: c's names, into buf (always NUL-ended); returns buf. */
const char *tm_coll_algo_names(enum tm_coll_id c, char *buf, size_t len);
/* 1 if value is c's "auto" or "tree_file" (the algorithms a tree file may replace). */
int tm_coll_takes_file(enum tm_coll_id c, int value);

/* What a leader runs. */
struct tm_coll_pick {
    int use_file;     /* the tree file's edges (then algo is unset) */
    int algo;         /* else c's algorithm value, never auto or tree_file */
    int shape;        /* the leaders' tree (enum tm_tree_shape): bcast and reduce, and allreduce's
                       * reduce_bcast */
    const char *from; /* why: "setting", "tree file" (its line for the size) or "auto" */
};

/* The one choice rule, shared by libtmpi's leaders and tmpictl tree.  configured: the
 * setting's value for c (0: auto); file: the tree file that fits the communicator and may be
 * used for this call, or NULL; n: the nodes (leaders); bytes: one leader's data; commute:
 * whether the op commutes (1 for bcast).
 *   - auto or tree_file with a file: the file's "algorithm" line for c and bytes, if any,
 *     else (or when that line says tree_file) the file's edges;
 *   - auto, tree_file without a file: by n and bytes (tm_tree_choose, tm_allreduce_choose);
 *   - an Allreduce with an op that does not commute takes reduce_bcast whatever was asked
 *     (recursive doubling and the ring combine in other orders). */
void tm_coll_select(enum tm_coll_id c, int configured, const struct tm_tree_file *file, int n,
                    size_t bytes, int commute, struct tm_coll_pick *ret);

#endif
