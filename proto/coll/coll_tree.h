/* coll_tree.h — the trees of the inter-node phase (seed 000 §3.2, seed 002 §5): their shapes,
 * which one a collective uses for a number of nodes and a message size, and tree files.
 *
 * Pure computation, no MPI state: libtmpi's leaders, `tmpictl tree` and the unit tests share
 * it.  A tree has n vertices 0..n-1 (node groups of a communicator, or ranks for a tree file)
 * and a root; the shapes are defined on the index relative to the root, rel = (v - root) mod n:
 *   flat:     every vertex is a child of the root (one step; the root sends n-1 times);
 *   binomial: parent(rel) = rel without its lowest set bit (the hypercube of seed 000);
 *   binary:   parent(rel) = (rel - 1) / 2 (balanced, at most two children per vertex).
 * Every shape has exactly n - 1 edges, so a Bcast or Reduce along it crosses n - 1 links. */
#ifndef TMPI_PROTO_COLL_TREE_H
#define TMPI_PROTO_COLL_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "coll_algo.h"

enum tm_tree_shape {
    TM_TREE_AUTO = 0, /* by node count and size: tm_tree_choose() */
    TM_TREE_FLAT,
    TM_TREE_BINOMIAL,
    TM_TREE_BINARY,
    TM_TREE_FILE, /* the parents a tree file gives (struct tm_tree_file) */
};

/* Thresholds of tm_tree_choose (docs/COLLECTIVES.md explains them). */
#define TM_TREE_FLAT_MAX_BYTES 2048u           /* flat up to this size ... */
#define TM_TREE_FLAT_MAX_NODES 8               /* ... and this many nodes */
#define TM_TREE_BINARY_MIN_BYTES (256u * 1024) /* balanced binary from this size on */

/* Allreduce between node leaders. */
enum tm_allreduce_algo {
    TM_AR_AUTO = 0,
    TM_AR_RECDOUBLING,  /* log2(n) exchanges of the whole vector: small messages */
    TM_AR_REDUCE_BCAST, /* reduce to one leader along a tree, then bcast: 2(n-1) messages */
    TM_AR_RING,         /* reduce-scatter + allgather around a ring: large messages */
    TM_AR_TREE_FILE,    /* reduce to the tree file's root along its edges, then bcast back */
};
#define TM_AR_RECDOUBLING_MAX_BYTES (64u * 1024)
#define TM_AR_RING_MIN_BYTES (512u * 1024)

/* The names are coll_algo.c's table: a Bcast's (or Reduce's) shape, an Allreduce's algorithm.
 * The parsers accept a name of the table for that collective; -EINVAL else. */
const char *tm_tree_shape_name(enum tm_tree_shape s);
int tm_tree_shape_parse(const char *s, enum tm_tree_shape *ret);
const char *tm_allreduce_name(enum tm_allreduce_algo a);
int tm_allreduce_parse(const char *s, enum tm_allreduce_algo *ret);

/* The shape for a Bcast/Reduce over n nodes of bytes each (never AUTO or FILE). */
enum tm_tree_shape tm_tree_choose(int n, size_t bytes);
/* The Allreduce algorithm for n nodes, bytes, and whether the op commutes (never AUTO). */
enum tm_allreduce_algo tm_allreduce_choose(int n, size_t bytes, int commute);

/* Parent of v in shape s (not FILE) over n vertices rooted at root; -1 for the root. */
int tm_tree_parent(enum tm_tree_shape s, int n, int root, int v);
/* Children of v, in the order a sender serves them (nearest subtree last for binomial, so the
 * largest subtree starts first); writes at most max, returns how many there are. */
int tm_tree_children(enum tm_tree_shape s, int n, int root, int v, int *out, int max);

/* ---- tree files ----
 *
 * A text file that gives each rank's parent for one job size, e.g. two groups of 4 ranks per
 * node reporting to rank 0 (seed 002 §5.2):
 *
 *   # 2 nodes x 8 ranks
 *   ranks 16
 *   0 -          <- the root: no parent
 *   1 0
 *   ...
 *
 * Blank lines and text after '#' are ignored.  "ranks N" comes first; then one line
 * "RANK PARENT" per rank ("-" or "-1" for the root).  Lines
 *
 *   algorithm COLL MIN-MAX NAME      e.g.  algorithm bcast 0-2K flat
 *                                          algorithm allreduce 1M- ring
 *
 * name the algorithm (coll_algo.h's table: any of COLL's, tree_file for the edges above) that
 * COLL (bcast, reduce, allreduce) uses for MIN <= bytes <= MAX (K, M, G suffixes; no MAX: no
 * upper bound); sizes no line covers use the edges.  Rejected with a message naming
 * FILE:LINE: bad syntax, a rank out of range or given twice, a missing rank, no root or two
 * roots, a cycle (which also means some rank cannot reach the root), an unknown collective or
 * algorithm, an empty range or two ranges of one collective that overlap. */
struct tm_tree_algo {
    enum tm_coll_id coll;
    size_t min, max; /* bytes, both included */
    int algo;        /* the collective's value (coll_algo.h) */
};
/* Algorithm lines one tree file may hold. */
#define TM_TREE_FILE_MAX_ALGOS 64
struct tm_tree_file {
    int n;
    int root;
    int32_t *parent; /* n entries, parent[root] == -1 */
    int nalgos;
    struct tm_tree_algo *algos; /* nalgos entries, NULL when none */
};

/* Parses text (len bytes) named name (for messages).  On error returns -EINVAL and writes a
 * one-line "NAME:LINE: why" into err (errlen bytes). */
int tm_tree_file_parse(const char *name, const char *text, size_t len, struct tm_tree_file *ret,
                       char *err, size_t errlen);
/* Reads and parses the file at path; -errno of the read (message in err too) or -EINVAL. */
int tm_tree_file_load(const char *path, struct tm_tree_file *ret, char *err, size_t errlen);
void tm_tree_file_free(struct tm_tree_file *t);
/* The algorithm the file names for coll at bytes (its value), or -1 when no line covers it. */
int tm_tree_file_algo(const struct tm_tree_file *t, enum tm_coll_id coll, size_t bytes);
/* Children of v in a tree file, ascending; returns how many (writes at most max). */
int tm_tree_file_children(const struct tm_tree_file *t, int v, int *out, int max);
/* Depth of v (root 0). */
int tm_tree_file_depth(const struct tm_tree_file *t, int v);

/* ---- running a tree (a tree file, or a shape written out as parents) ----
 *
 * parent[v] for v in 0..n-1, -1 for the root. */

/* The same edges directed away from root instead (the path from root to the old root turns
 * around): how a Bcast/Reduce whose root is not the file's root runs.  0 or -EINVAL. */
int tm_tree_reroot(int n, const int32_t *parent, int root, int32_t *ret_parent);
/* Breadth first from the root, each vertex's children in ascending rank: a parent comes
 * before its children and siblings are adjacent and ascending.  Every leader walks this one
 * order, so the messages between two leaders are sent and received in the same order (what
 * keeps a tree that crosses between nodes several times free of deadlock).  n entries.
 * 0, -ENOMEM, or -EINVAL if parent is not a tree. */
int tm_tree_order(int n, const int32_t *parent, int *ret_order);
/* 1 if every subtree holds consecutive ranks (then a non-commutative op can be combined in
 * rank order along the tree), 0 if not, -ENOMEM.  order: from tm_tree_order. */
int tm_tree_intervals(int n, const int32_t *parent, const int *order);

#endif
