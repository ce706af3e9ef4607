/* ctl_tree.c — `tmpictl tree`: which algorithm and which tree a collective of a job of a given
 * layout would use between nodes, worked out with libtmpi's own code (coll_tree.c), no agent.
 *
 *   tmpictl tree --nodes N --ppn K [--size BYTES] [--coll bcast|reduce|allreduce] [--root R]
 *                [--tree-file F] [--algorithm A] [--noncommutative] [--json]
 *
 * Ranks are placed in blocks (rank r on node r / K); each node's lowest rank leads it.  The
 * choice is coll_hier.c's own rule (coll_algo.h tm_coll_select): an explicit algorithm, else a
 * tree file that fits the job (its algorithm line for the size, or its edges), else by node
 * count and size.  Without --algorithm / --tree-file, TMPI_COLL_<COLL> and
 * TMPI_COLL_TREE_FILE are honoured as a job would (tmpid.conf's [mpi] keys are not read). */
#include "ctl_tree.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_tree.h"

#define TREE_EXIT_FAILURE 1
#define TREE_EXIT_USAGE 2
#define TREE_MAX_RANKS (1 << 20)

#define COLL_BCAST TM_COLL_BCAST
#define COLL_REDUCE TM_COLL_REDUCE
#define COLL_ALLREDUCE TM_COLL_ALLREDUCE

struct tree_opts {
    long nodes, ppn, root;
    size_t size;
    enum tm_coll_id coll;
    const char *algorithm, *algorithm_from; /* NULL: auto */
    const char *tree_file, *tree_file_from;
    bool noncommutative, json;
};

/* What was decided, for both output formats. */
struct tree_plan {
    const char *algorithm;
    char why[200];
    int n, root;              /* ranks; the root the edges lead away from */
    int32_t *parent;          /* n entries when the edges are per rank (a tree file), else NULL */
    int shape_root;           /* node of the leaders' tree's root */
    enum tm_tree_shape shape; /* leaders' tree (flat/binomial/binary), TM_TREE_AUTO: none */
    long net_messages;        /* -1: not a fixed number worth printing */
    char note[200];           /* why a tree file given is not used, or "" */
};

static int usage_error(const char *fmt, const char *arg)
{
    fputs("tmpictl tree: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (try tmpictl tree --help)\n", stderr);
    return TREE_EXIT_USAGE;
}

static void tree_usage(void)
{
    char names[200];
    fputs("usage: tmpictl tree --nodes N --ppn K [--size BYTES] [--coll bcast|reduce|allreduce]\n"
          "                    [--root R] [--tree-file FILE] [--algorithm A] [--noncommutative]\n"
          "                    [--json]\n"
          "The algorithm and tree a collective of a job of N nodes x K ranks (rank r on node\n"
          "r / K) would use between the nodes.  BYTES takes K, M, G (default 8); A is one of\n",
          stdout);
    printf("  bcast, reduce: %s\n", tm_coll_algo_names(TM_COLL_BCAST, names, sizeof names));
    printf("  allreduce:     %s\n", tm_coll_algo_names(TM_COLL_ALLREDUCE, names, sizeof names));
    fputs("Without --algorithm / --tree-file, TMPI_COLL_* and TMPI_COLL_TREE_FILE apply.\n",
          stdout);
}

static int parse_long(const char *s, long min, long max, long *ret)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) return -EINVAL;
    *ret = v;
    return 0;
}

static int parse_bytes(const char *s, size_t *ret)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9') return -EINVAL;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (errno || *end || v > (SIZE_MAX >> shift)) return -EINVAL;
    *ret = (size_t)v << shift;
    return 0;
}

/* argv[0] is "tree".  0, -1 (help shown) or an exit status. */
static int parse_tree_args(int argc, char **argv, struct tree_opts *o)
{
    o->size = 8;
    o->nodes = o->ppn = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            tree_usage();
            return -1;
        }
        if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (strcmp(a, "--noncommutative") == 0) {
            o->noncommutative = true;
            continue;
        }
        if (a[0] != '-') return usage_error("unexpected argument %s", a);
        if (!v) return usage_error("%s needs a value", a);
        i++;
        if (strcmp(a, "--nodes") == 0) {
            if (parse_long(v, 1, TREE_MAX_RANKS, &o->nodes) < 0)
                return usage_error("--nodes %s: expected a number of nodes >= 1", v);
        } else if (strcmp(a, "--ppn") == 0) {
            if (parse_long(v, 1, TREE_MAX_RANKS, &o->ppn) < 0)
                return usage_error("--ppn %s: expected a number of ranks per node >= 1", v);
        } else if (strcmp(a, "--size") == 0) {
            if (parse_bytes(v, &o->size) < 0)
                return usage_error("--size %s: expected bytes (K, M, G suffixes)", v);
        } else if (strcmp(a, "--root") == 0) {
            if (parse_long(v, 0, TREE_MAX_RANKS, &o->root) < 0)
                return usage_error("--root %s: expected a rank", v);
        } else if (strcmp(a, "--coll") == 0) {
            if (tm_coll_kind_parse(v, strlen(v), &o->coll) < 0)
                return usage_error("--coll %s: expected bcast, reduce or allreduce", v);
        } else if (strcmp(a, "--algorithm") == 0) {
            o->algorithm = v;
            o->algorithm_from = "--algorithm";
        } else if (strcmp(a, "--tree-file") == 0) {
            o->tree_file = v;
            o->tree_file_from = "--tree-file";
        } else {
            return usage_error("unknown option %s", a);
        }
    }
    if (o->nodes < 0 || o->ppn < 0) return usage_error("%s", "--nodes and --ppn are required");
    if (o->nodes * o->ppn > TREE_MAX_RANKS) return usage_error("%s", "more than 1048576 ranks");
    if (o->root >= o->nodes * o->ppn) {
        char n[32];
        snprintf(n, sizeof n, "%ld", o->nodes * o->ppn);
        return usage_error("--root: the job has only %s ranks", n);
    }
    const char *env = tm_coll_kind(o->coll)->env;
    if (!o->algorithm && (o->algorithm = getenv(env)) && *o->algorithm)
        o->algorithm_from = env;
    else if (!o->algorithm_from)
        o->algorithm = NULL;
    if (!o->tree_file && (o->tree_file = getenv("TMPI_COLL_TREE_FILE")) && *o->tree_file)
        o->tree_file_from = "TMPI_COLL_TREE_FILE";
    else if (!o->tree_file_from)
        o->tree_file = NULL;
    /* the algorithm's name is checked here so that a typo is a usage error */
    int algo;
    if (o->algorithm &&
        tm_coll_algo_parse(o->coll, o->algorithm, strlen(o->algorithm), &algo) < 0) {
        char names[200];
        fprintf(stderr, "tmpictl tree: %s %s: expected one of %s\n", o->algorithm_from,
                o->algorithm, tm_coll_algo_names(o->coll, names, sizeof names));
        return TREE_EXIT_USAGE;
    }
    return 0;
}

/* ---- the decision (coll_hier.c's, for a block layout) ---- */

static int node_of(const struct tree_opts *o, int r)
{
    return (int)(r / o->ppn);
}

/* The tree file for this job: 1 with *t loaded and fitting, 0 when there is none or it does
 * not fit (why in p->note), or an exit status (negated) after printing why. */
static int load_tree_file(const struct tree_opts *o, bool explicit_, struct tree_plan *p,
                          struct tm_tree_file *t)
{
    int n = (int)(o->nodes * o->ppn);
    if (!o->tree_file) {
        if (!explicit_) return 0;
        fprintf(stderr, "tmpictl tree: algorithm tree_file without a tree file (--tree-file or "
                        "TMPI_COLL_TREE_FILE)\n");
        return -TREE_EXIT_FAILURE;
    }
    char err[300];
    if (tm_tree_file_load(o->tree_file, t, err, sizeof err) < 0) {
        fprintf(stderr, "tmpictl tree: tree file rejected: %s\n", err);
        return -TREE_EXIT_FAILURE;
    }
    if (t->n == n) return 1;
    int r = 0;
    if (explicit_) {
        fprintf(stderr, "tmpictl tree: tree file %s has %d ranks but the job has %d\n",
                o->tree_file, t->n, n);
        r = -TREE_EXIT_FAILURE;
    } else
        snprintf(p->note, sizeof p->note, "tree file %s has %d ranks, not %d: not used",
                 o->tree_file, t->n, n);
    tm_tree_file_free(t);
    return r;
}

/* The tree file's edges for this job, re-rooted: 1 when they are used, 0 when an op that
 * does not commute cannot use them (p->note says so), or an exit status (negated). */
static int plan_tree_file(const struct tree_opts *o, const struct tm_tree_file *t, int root,
                          struct tree_plan *p)
{
    int n = t->n;
    int file_root = t->root;
    if (o->coll == COLL_ALLREDUCE) root = file_root;
    int *order = malloc(sizeof *order * (size_t)n);
    p->parent = malloc(sizeof *p->parent * (size_t)n);
    int ok = order && p->parent && tm_tree_reroot(n, t->parent, root, p->parent) == 0 &&
             tm_tree_order(n, p->parent, order) == 0;
    int intervals = ok ? tm_tree_intervals(n, p->parent, order) : 0;
    free(order);
    if (!ok || intervals < 0) {
        fprintf(stderr, "tmpictl tree: out of memory\n");
        return -TREE_EXIT_FAILURE;
    }
    if (o->noncommutative && o->coll != COLL_BCAST && !intervals) {
        free(p->parent);
        p->parent = NULL;
        snprintf(p->note, sizeof p->note,
                 "tree file %s not used: some subtree does not hold consecutive ranks, so an op "
                 "that does not commute could not be combined in rank order",
                 o->tree_file);
        return 0;
    }
    p->n = n;
    p->root = root;
    p->algorithm = "tree_file";
    p->net_messages = 0;
    for (int v = 0; v < n; v++)
        if (p->parent[v] >= 0 && node_of(o, v) != node_of(o, p->parent[v])) p->net_messages++;
    if (o->coll == COLL_ALLREDUCE) p->net_messages *= 2;
    snprintf(p->why, sizeof p->why, "tree file %s%s%s%s", o->tree_file,
             o->tree_file_from ? " from " : "", o->tree_file_from ? o->tree_file_from : "",
             root != file_root ? ", re-rooted at the root" : "");
    return 1;
}

static int decide(const struct tree_opts *o, struct tree_plan *p)
{
    int g = (int)o->nodes, root = (int)o->root;
    bool comm = !o->noncommutative;
    p->n = (int)(o->nodes * o->ppn);
    p->root = root;
    p->shape = TM_TREE_AUTO;
    p->net_messages = -1;
    if (g == 1) {
        p->algorithm = "shared_memory";
        snprintf(p->why, sizeof p->why, "one node: no leaders, no messages");
        p->net_messages = 0;
        return 0;
    }
    int configured = 0;
    if (o->algorithm)
        (void)tm_coll_algo_parse(o->coll, o->algorithm, strlen(o->algorithm), &configured);
    struct tm_tree_file t = {0};
    int have = 0;
    if (tm_coll_takes_file(o->coll, configured)) {
        have = load_tree_file(o, configured != 0, p, &t);
        if (have < 0) return -have;
    }
    struct tm_coll_pick pk;
    tm_coll_select(o->coll, configured, have ? &t : NULL, g, o->size, comm, &pk);
    if (pk.use_file) {
        int r = plan_tree_file(o, &t, root, p);
        if (r) {
            tm_tree_file_free(&t);
            return r < 0 ? -r : 0;
        }
        /* the edges cannot combine this op in rank order: as without the file */
        tm_coll_select(o->coll, configured, NULL, g, o->size, comm, &pk);
    }
    const char *from = o->algorithm_from ? o->algorithm_from : "auto";
    char line[160] = "";
    if (strcmp(pk.from, "tree file") == 0) {
        snprintf(line, sizeof line, "tree file %s, its algorithm line for %zu bytes", o->tree_file,
                 o->size);
        from = line;
    }
    tm_tree_file_free(&t);
    p->algorithm = tm_coll_algo_name(o->coll, pk.algo);
    if (o->coll == COLL_ALLREDUCE) {
        snprintf(p->why, sizeof p->why, "%s: %d nodes, %zu bytes%s", from, g, o->size,
                 comm ? "" : ", an op that does not commute");
        if (pk.algo == TM_AR_REDUCE_BCAST) {
            p->shape = (enum tm_tree_shape)pk.shape;
            p->shape_root = 0;
            p->net_messages = 2L * (g - 1);
        }
        return 0;
    }
    p->shape = (enum tm_tree_shape)pk.shape;
    p->shape_root = node_of(o, root);
    p->net_messages = g - 1;
    snprintf(p->why, sizeof p->why, "%s: %d nodes, %zu bytes", from, g, o->size);
    if (o->coll == COLL_REDUCE && !comm) {
        /* blocks of consecutive ranks: every leader sends its partial to the root's leader */
        p->shape = TM_TREE_FLAT;
        p->algorithm = "rank_order";
        snprintf(p->why, sizeof p->why,
                 "an op that does not commute: partials go to the root's leader in rank order");
    }
    return 0;
}

/* ---- output ---- */

static const char *link_of(const struct tree_opts *o, int a, int b)
{
    return node_of(o, a) == node_of(o, b) ? "shared_memory" : "network";
}

static void print_text(const struct tree_opts *o, const struct tree_plan *p)
{
    int g = (int)o->nodes;
    printf("layout: %ld nodes x %ld ranks (%d ranks), %s of %zu bytes", o->nodes, o->ppn, p->n,
           tm_coll_kind(o->coll)->name, o->size);
    if (o->coll != COLL_ALLREDUCE) printf(", root %d", (int)o->root);
    printf("\nalgorithm: %s (%s)\n", p->algorithm, p->why);
    if (p->note[0]) printf("note: %s\n", p->note);
    printf("leaders:");
    for (int i = 0; i < g && i < 64; i++)
        printf(" node %d rank %ld%s", i, i * o->ppn, i + 1 < g ? "," : "");
    printf(g > 64 ? " ...\n" : "\n");
    if (p->parent) {
        printf("tree (rank: node, parent, link to the parent):\n");
        for (int v = 0; v < p->n; v++)
            if (p->parent[v] < 0)
                printf("  %d: node %d, root\n", v, node_of(o, v));
            else
                printf("  %d: node %d, parent %d, %s\n", v, node_of(o, v), p->parent[v],
                       link_of(o, v, p->parent[v]));
        long cross = o->coll == COLL_ALLREDUCE ? p->net_messages / 2 : p->net_messages;
        printf("edges: %ld between nodes, %ld inside nodes (shared-memory copies)\n", cross,
               p->n - 1 - cross);
    } else if (p->shape != TM_TREE_AUTO) {
        printf("leaders' tree (%s, node: parent node):\n", tm_tree_shape_name(p->shape));
        for (int i = 0; i < g; i++) {
            int par = tm_tree_parent(p->shape, g, p->shape_root, i);
            if (par < 0)
                printf("  node %d (rank %ld): root\n", i, i * o->ppn);
            else
                printf("  node %d (rank %ld): parent node %d (rank %ld)\n", i, i * o->ppn, par,
                       par * o->ppn);
        }
    }
    if (g > 1 && !p->parent)
        printf("inside each node: the leader reads and writes its ranks' buffers (shared "
               "memory)\n");
    if (p->net_messages >= 0) printf("network messages: %ld\n", p->net_messages);
}

static int print_json(const struct tree_opts *o, const struct tree_plan *p)
{
    json_object *j = json_object_new_object(), *lead = json_object_new_array();
    if (!j || !lead) return -ENOMEM;
    json_object_object_add(j, "nodes", json_object_new_int64(o->nodes));
    json_object_object_add(j, "ppn", json_object_new_int64(o->ppn));
    json_object_object_add(j, "ranks", json_object_new_int(p->n));
    json_object_object_add(j, "coll", json_object_new_string(tm_coll_kind(o->coll)->name));
    json_object_object_add(j, "size", json_object_new_int64((int64_t)o->size));
    json_object_object_add(j, "root", json_object_new_int(p->root));
    json_object_object_add(j, "algorithm", json_object_new_string(p->algorithm));
    json_object_object_add(j, "why", json_object_new_string(p->why));
    if (p->note[0]) json_object_object_add(j, "note", json_object_new_string(p->note));
    for (int i = 0; i < o->nodes; i++)
        json_object_array_add(lead, json_object_new_int64(i * o->ppn));
    json_object_object_add(j, "leaders", lead);
    json_object *edges = json_object_new_array();
    if (p->parent) {
        for (int v = 0; v < p->n; v++) {
            if (p->parent[v] < 0) continue;
            json_object *e = json_object_new_object();
            json_object_object_add(e, "parent", json_object_new_int(p->parent[v]));
            json_object_object_add(e, "child", json_object_new_int(v));
            json_object_object_add(e, "link", json_object_new_string(link_of(o, v, p->parent[v])));
            json_object_array_add(edges, e);
        }
        json_object_object_add(j, "rank_edges", edges);
    } else if (p->shape != TM_TREE_AUTO) {
        for (int i = 0; i < o->nodes; i++) {
            int par = tm_tree_parent(p->shape, (int)o->nodes, p->shape_root, i);
            if (par < 0) continue;
            json_object *e = json_object_new_object();
            json_object_object_add(e, "parent_node", json_object_new_int(par));
            json_object_object_add(e, "node", json_object_new_int(i));
            json_object_array_add(edges, e);
        }
        json_object_object_add(j, "leader_edges", edges);
    } else {
        json_object_put(edges);
    }
    if (p->net_messages >= 0)
        json_object_object_add(j, "network_messages", json_object_new_int64(p->net_messages));
    puts(json_object_to_json_string_ext(j,
                                        JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
    return 0;
}

int ctl_tree_main(int argc, char **argv, bool json)
{
    struct tree_opts o = {.json = json};
    int r = parse_tree_args(argc, argv, &o);
    if (r) return r < 0 ? 0 : r;
    struct tree_plan p = {0};
    r = decide(&o, &p);
    if (r) return r;
    if (o.json)
        r = print_json(&o, &p) < 0 ? TREE_EXIT_FAILURE : 0;
    else
        print_text(&o, &p);
    free(p.parent);
    return r;
}
