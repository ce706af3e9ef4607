/* test_coll_tree.c — coll_tree.c on its own: the shapes (parents and children of flat, binomial
 * and binary trees for many sizes and roots), the size-based choice, tree files (good ones and
 * every rejection, with its FILE:LINE), re-rooting, the walking order and the interval test. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "coll_tree.h"

/* ---- shapes ---- */

/* Every vertex but the root has a parent, children(v) is exactly {u : parent(u) == v}, and
 * walking up always reaches the root: a spanning tree with n - 1 edges. */
static void check_shape(enum tm_tree_shape s, int n, int root)
{
    int ch[64], edges = 0;
    for (int v = 0; v < n; v++) {
        int p = tm_tree_parent(s, n, root, v);
        if (v == root) {
            CHECK_EQ(p, -1);
        } else {
            CHECK(p >= 0 && p < n && p != v);
            edges++;
        }
        int k = tm_tree_children(s, n, root, v, ch, 64);
        CHECK(k <= 64);
        int want = 0;
        for (int u = 0; u < n; u++)
            if (u != root && tm_tree_parent(s, n, root, u) == v) want++;
        if (k != want)
            fprintf(stderr, "%s n=%d root=%d v=%d: %d children, expected %d\n",
                    tm_tree_shape_name(s), n, root, v, k, want);
        CHECK_EQ(k, want);
        for (int i = 0; i < k; i++)
            CHECK_EQ(tm_tree_parent(s, n, root, ch[i]), v);
        int u = v, steps = 0;
        while (u != root && steps++ <= n)
            u = tm_tree_parent(s, n, root, u);
        CHECK_EQ(u, root);
    }
    CHECK_EQ(edges, n - 1);
}

static void test_shapes(void)
{
    static const enum tm_tree_shape shapes[] = {TM_TREE_FLAT, TM_TREE_BINOMIAL, TM_TREE_BINARY};
    for (int si = 0; si < 3; si++)
        for (int n = 1; n <= 40; n++)
            for (int root = 0; root < n; root += (n > 8 ? 3 : 1))
                check_shape(shapes[si], n, root);

    /* Known parents.  Binomial over 8 from 0: rel without its lowest set bit. */
    static const int binom8[8] = {-1, 0, 0, 2, 0, 4, 4, 6};
    for (int v = 0; v < 8; v++)
        CHECK_EQ(tm_tree_parent(TM_TREE_BINOMIAL, 8, 0, v), binom8[v]);
    /* Rooted at 3 over 6: rel = v - 3 mod 6. */
    static const int binom6r3[6] = {5, 3, 1, -1, 3, 3};
    for (int v = 0; v < 6; v++)
        CHECK_EQ(tm_tree_parent(TM_TREE_BINOMIAL, 6, 3, v), binom6r3[v]);
    /* Binary over 7 from 0: heap order; from 2: shifted. */
    static const int bin7[7] = {-1, 0, 0, 1, 1, 2, 2};
    for (int v = 0; v < 7; v++)
        CHECK_EQ(tm_tree_parent(TM_TREE_BINARY, 7, 0, v), bin7[v]);
    static const int bin5r2[5] = {3, 3, -1, 2, 2};
    for (int v = 0; v < 5; v++)
        CHECK_EQ(tm_tree_parent(TM_TREE_BINARY, 5, 2, v), bin5r2[v]);
    for (int v = 1; v < 9; v++)
        CHECK_EQ(tm_tree_parent(TM_TREE_FLAT, 9, 0, v), 0);

    /* The binomial root serves its largest subtree first. */
    int ch[8];
    CHECK_EQ(tm_tree_children(TM_TREE_BINOMIAL, 8, 0, 0, ch, 8), 3);
    CHECK(ch[0] == 4 && ch[1] == 2 && ch[2] == 1);
    CHECK_EQ(tm_tree_children(TM_TREE_BINOMIAL, 8, 0, 4, ch, 8), 2);
    CHECK(ch[0] == 6 && ch[1] == 5);
    /* max bounds what is written, not what is counted */
    CHECK_EQ(tm_tree_children(TM_TREE_FLAT, 8, 0, 0, ch, 2), 7);
}

static void test_choice_and_names(void)
{
    CHECK_EQ(tm_tree_choose(2, 1 << 20), TM_TREE_FLAT);
    CHECK_EQ(tm_tree_choose(8, 2048), TM_TREE_FLAT);
    CHECK_EQ(tm_tree_choose(9, 2048), TM_TREE_BINOMIAL);
    CHECK_EQ(tm_tree_choose(4, 4096), TM_TREE_BINOMIAL);
    CHECK_EQ(tm_tree_choose(4, 256 * 1024), TM_TREE_BINARY);
    CHECK_EQ(tm_allreduce_choose(4, 64 * 1024, 1), TM_AR_RECDOUBLING);
    CHECK_EQ(tm_allreduce_choose(4, 512 * 1024, 1), TM_AR_RING);
    CHECK_EQ(tm_allreduce_choose(2, 512 * 1024, 1), TM_AR_REDUCE_BCAST);
    CHECK_EQ(tm_allreduce_choose(4, 8, 0), TM_AR_REDUCE_BCAST);

    enum tm_tree_shape s;
    CHECK_EQ(tm_tree_shape_parse("hypercube", &s), 0);
    CHECK_EQ(s, TM_TREE_BINOMIAL);
    CHECK_EQ(tm_tree_shape_parse("tree_file", &s), 0);
    CHECK_EQ(s, TM_TREE_FILE);
    CHECK_EQ(tm_tree_shape_parse("fast", &s), -EINVAL);
    CHECK_EQ(tm_tree_shape_parse("", &s), -EINVAL);
    enum tm_allreduce_algo a;
    CHECK_EQ(tm_allreduce_parse("ring", &a), 0);
    CHECK_EQ(a, TM_AR_RING);
    CHECK_EQ(tm_allreduce_parse("tree_file", &a), 0);
    CHECK_EQ(a, TM_AR_TREE_FILE);
    CHECK_EQ(tm_allreduce_parse("binomial", &a), -EINVAL);
    CHECK(strcmp(tm_tree_shape_name(TM_TREE_BINARY), "binary") == 0);
    CHECK(strcmp(tm_allreduce_name(TM_AR_RECDOUBLING), "recursive_doubling") == 0);
}

/* ---- tree files ---- */

/* Seed 002 §5.2: 2 nodes x 8 ranks, two groups of 4 per node, both reporting to the root. */
static const char seed002[] = "# 2 nodes x 8 ranks: groups 0-3, 4-7 | 8-11, 12-15\n"
                              "ranks 16\n"
                              "0 -1\n"
                              "1 0\n2 0\n3 0\n"
                              "4 0    # second group of node 0\n"
                              "5 4\n6 4\n7 4\n"
                              "\n"
                              "8 0\n9 8\n10 8\n11 8\n"
                              "12 0\n13 12\n14 12\n15 12\n";

static void parse_ok(const char *text, struct tm_tree_file *t)
{
    char err[256] = "";
    int r = tm_tree_file_parse("t.tree", text, strlen(text), t, err, sizeof err);
    if (r) fprintf(stderr, "expected the file to parse, got %d: %s\n", r, err);
    CHECK_EQ(r, 0);
}

static void test_file_good(void)
{
    struct tm_tree_file t;
    parse_ok(seed002, &t);
    CHECK_EQ(t.n, 16);
    CHECK_EQ(t.root, 0);
    static const int par[16] = {-1, 0, 0, 0, 0, 4, 4, 4, 0, 8, 8, 8, 0, 12, 12, 12};
    for (int v = 0; v < 16; v++)
        CHECK_EQ(t.parent[v], par[v]);
    int ch[16];
    CHECK_EQ(tm_tree_file_children(&t, 0, ch, 16), 6);
    CHECK(ch[0] == 1 && ch[3] == 4 && ch[4] == 8 && ch[5] == 12);
    CHECK_EQ(tm_tree_file_depth(&t, 13), 2);
    CHECK_EQ(tm_tree_file_depth(&t, 0), 0);
    tm_tree_file_free(&t);
    CHECK(t.parent == NULL);

    /* "-" for the root, lines in any order, CRLF, tabs, a one-rank tree, a chain */
    parse_ok("ranks 3\r\n2\t1\r\n1 -\r\n0 2 # leaf\r\n", &t);
    CHECK(t.root == 1 && t.parent[0] == 2 && t.parent[2] == 1);
    tm_tree_file_free(&t);
    parse_ok("ranks 1\n0 -\n", &t);
    CHECK(t.n == 1 && t.root == 0);
    tm_tree_file_free(&t);
    enum { CHAIN = 5000 };
    char *chain = malloc(CHAIN * 16 + 32), *p = chain;
    p += sprintf(p, "ranks %d\n0 -\n", CHAIN);
    for (int v = 1; v < CHAIN; v++)
        p += sprintf(p, "%d %d\n", v, v - 1);
    parse_ok(chain, &t);
    CHECK_EQ(tm_tree_file_depth(&t, CHAIN - 1), CHAIN - 1);
    tm_tree_file_free(&t);
    free(chain);
}

/* text must be rejected with exactly the message want */
static void parse_bad(const char *text, const char *want)
{
    struct tm_tree_file t = {0};
    char err[256] = "";
    int r = tm_tree_file_parse("t.tree", text, strlen(text), &t, err, sizeof err);
    if (r != -EINVAL || strcmp(err, want) != 0)
        fprintf(stderr, "file:\n%s\nexpected -EINVAL and \"%s\", got %d and \"%s\"\n", text, want,
                r, err);
    CHECK_EQ(r, -EINVAL);
    CHECK(strcmp(err, want) == 0);
    CHECK(t.parent == NULL);
}

static void test_file_bad(void)
{
    /* syntax */
    parse_bad("", "t.tree: no \"ranks N\" line (empty file?)");
    parse_bad("# only a comment\n", "t.tree: no \"ranks N\" line (empty file?)");
    parse_bad("0 -\n", "t.tree:1: expected \"ranks N\" before the first rank");
    parse_bad("ranks\n", "t.tree:1: expected \"ranks N\" with 1 <= N <= 1048576");
    parse_bad("ranks 0\n", "t.tree:1: expected \"ranks N\" with 1 <= N <= 1048576");
    parse_bad("ranks 2\nranks 2\n", "t.tree:2: \"ranks\" given twice");
    parse_bad("ranks 2\n0 - 1\n", "t.tree:2: expected two words, found more");
    parse_bad("ranks 2\n0\n",
              "t.tree:2: expected \"RANK PARENT\" (PARENT a rank, or - or -1 for the root)");
    parse_bad("ranks 2\nx 0\n",
              "t.tree:2: expected \"RANK PARENT\" (PARENT a rank, or - or -1 for the root)");
    parse_bad("ranks 2\n0 -\n1 -2\n", "t.tree:3: expected a parent rank, or - or -1 for the root");
    /* wrong size */
    parse_bad("ranks 2\n0 -\n2 0\n", "t.tree:3: rank 2 is out of range");
    parse_bad("ranks 2\n0 -\n1 5\n", "t.tree:3: parent 5 is out of range");
    parse_bad("ranks 3\n0 -\n1 0\n", "t.tree:3: rank 2 has no line (wrong size?)");
    parse_bad("ranks 3\n0 -\n1 0\n1 0\n", "t.tree:4: rank 1 is given twice");
    /* not a tree */
    parse_bad("ranks 2\n0 -\n1 1\n", "t.tree:3: rank 1 is its own parent");
    parse_bad("ranks 2\n0 -\n1 -1\n", "t.tree:3: a second root (rank 1 has no parent)");
    parse_bad("ranks 2\n0 1\n1 0\n", "t.tree:3: no root (one rank must have parent -)");
    parse_bad("ranks 5\n0 -\n1 0\n2 4\n3 2\n4 3\n", "t.tree:4: rank 2 is on a cycle (not a tree)");

    /* tm_tree_file_load: a missing file names the file and the reason */
    struct tm_tree_file t;
    char err[256];
    CHECK_EQ(tm_tree_file_load("/nonexistent/t.tree", &t, err, sizeof err), -ENOENT);
    CHECK(strcmp(err, "/nonexistent/t.tree: No such file or directory") == 0);
    char path[] = "/tmp/test_coll_tree.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, seed002, strlen(seed002)) == (ssize_t)strlen(seed002));
    close(fd);
    CHECK_EQ(tm_tree_file_load(path, &t, err, sizeof err), 0);
    CHECK_EQ(t.n, 16);
    tm_tree_file_free(&t);
    FILE *f = fopen(path, "a");
    fputs("16 0\n", f);
    fclose(f);
    CHECK_EQ(tm_tree_file_load(path, &t, err, sizeof err), -EINVAL);
    char want[300];
    snprintf(want, sizeof want, "%s:20: rank 16 is out of range", path);
    CHECK(strcmp(err, want) == 0);
    unlink(path);
}

/* ---- re-rooting, order, intervals ---- */

static void test_run_helpers(void)
{
    struct tm_tree_file t;
    parse_ok(seed002, &t);
    int order[16];
    CHECK_EQ(tm_tree_order(16, t.parent, order), 0);
    static const int bfs[16] = {0, 1, 2, 3, 4, 8, 12, 5, 6, 7, 9, 10, 11, 13, 14, 15};
    for (int i = 0; i < 16; i++)
        CHECK_EQ(order[i], bfs[i]);
    CHECK_EQ(tm_tree_intervals(16, t.parent, order), 1);

    /* Rooted at 9: the path 9 - 8 - 0 turns around; every other edge keeps its direction. */
    int32_t rp[16];
    CHECK_EQ(tm_tree_reroot(16, t.parent, 9, rp), 0);
    CHECK(rp[9] == -1 && rp[8] == 9 && rp[0] == 8);
    for (int v = 0; v < 16; v++)
        if (v != 9 && v != 8 && v != 0) CHECK_EQ(rp[v], t.parent[v]);
    CHECK_EQ(tm_tree_order(16, rp, order), 0);
    CHECK(order[0] == 9 && order[1] == 8 && order[2] == 0 && order[3] == 10 && order[4] == 11);
    /* 8's subtree is now everything but 9: 0-8 and 10-15, not consecutive */
    CHECK_EQ(tm_tree_intervals(16, rp, order), 0);
    /* Rooted at 4: 4's subtree is everything; 0's is everything but 4-7: not consecutive */
    CHECK_EQ(tm_tree_reroot(16, t.parent, 4, rp), 0);
    CHECK_EQ(tm_tree_order(16, rp, order), 0);
    CHECK_EQ(tm_tree_intervals(16, rp, order), 0);
    CHECK_EQ(tm_tree_reroot(16, t.parent, 16, rp), -EINVAL);
    tm_tree_file_free(&t);

    /* Intervals in shapes: binomial from 0 yes; binary from 0 over 7 no ({1,3,4}). */
    int32_t par[7];
    for (int v = 0; v < 7; v++)
        par[v] = tm_tree_parent(TM_TREE_BINOMIAL, 7, 0, v);
    CHECK_EQ(tm_tree_order(7, par, order), 0);
    CHECK_EQ(tm_tree_intervals(7, par, order), 1);
    for (int v = 0; v < 7; v++)
        par[v] = tm_tree_parent(TM_TREE_BINARY, 7, 0, v);
    CHECK_EQ(tm_tree_order(7, par, order), 0);
    CHECK_EQ(tm_tree_intervals(7, par, order), 0);
    /* not a tree: a cycle away from the root never gets into the order */
    int32_t cyc[4] = {-1, 0, 3, 2};
    CHECK_EQ(tm_tree_order(4, cyc, order), -EINVAL);
}

/* ---- the algorithm table and the one choice rule (coll_algo.h) ---- */

static void test_algo_table(void)
{
    size_t n;
    const struct tm_coll_algo *rows = tm_coll_algos(&n);
    CHECK(n >= 8, "%zu rows", n);
    for (size_t i = 0; i < n; i++) {
        int serves = 0;
        for (int c = 0; c < TM_COLL_COUNT; c++) {
            if (rows[i].value[c] < 0) continue;
            serves = 1;
            /* every name parses back to its value, for every collective it serves */
            int v = -1;
            CHECK_EQ(tm_coll_algo_parse(c, rows[i].name, strlen(rows[i].name), &v), 0);
            CHECK_EQ(v, rows[i].value[c]);
            CHECK(strcmp(tm_coll_algo_name(c, v), rows[i].name) == 0);
        }
        CHECK(serves, "%s serves no collective", rows[i].name);
        CHECK(rows[i].what && *rows[i].what);
    }
    char buf[200];
    CHECK(strcmp(tm_coll_algo_names(TM_COLL_BCAST, buf, sizeof buf),
                 "auto, flat, binomial, binary, tree_file") == 0,
          "got \"%s\"", buf);
    CHECK(strcmp(tm_coll_algo_names(TM_COLL_ALLREDUCE, buf, sizeof buf),
                 "auto, recursive_doubling, reduce_bcast, ring, tree_file") == 0,
          "got \"%s\"", buf);
    int v;
    CHECK_EQ(tm_coll_algo_parse(TM_COLL_REDUCE, "ring", 4, &v), -EINVAL);
    CHECK_EQ(tm_coll_algo_parse(TM_COLL_REDUCE, "hypercube", 9, &v), 0);
    CHECK_EQ(v, TM_TREE_BINOMIAL);
    enum tm_coll_id c;
    CHECK_EQ(tm_coll_kind_parse("allreduce", 9, &c), 0);
    CHECK(c == TM_COLL_ALLREDUCE && strcmp(tm_coll_kind(c)->env, "TMPI_COLL_ALLREDUCE") == 0 &&
          strcmp(tm_coll_kind(c)->conf_key, "coll_allreduce") == 0);
    CHECK_EQ(tm_coll_kind_parse("gather", 6, &c), -EINVAL);

    /* the rule: auto by size, an explicit algorithm kept, a non-commutative Allreduce */
    struct tm_coll_pick pk;
    tm_coll_select(TM_COLL_BCAST, TM_TREE_AUTO, NULL, 4, 256 * 1024, 1, &pk);
    CHECK(!pk.use_file && pk.algo == TM_TREE_BINARY && strcmp(pk.from, "auto") == 0);
    tm_coll_select(TM_COLL_REDUCE, TM_TREE_FLAT, NULL, 16, 1 << 20, 1, &pk);
    CHECK(pk.algo == TM_TREE_FLAT && pk.shape == TM_TREE_FLAT && strcmp(pk.from, "setting") == 0);
    tm_coll_select(TM_COLL_ALLREDUCE, TM_AR_RING, NULL, 4, 1 << 20, 0, &pk);
    CHECK_EQ(pk.algo, TM_AR_REDUCE_BCAST);
    tm_coll_select(TM_COLL_ALLREDUCE, TM_AR_TREE_FILE, NULL, 4, 8, 1, &pk);
    CHECK_EQ(pk.algo, TM_AR_RECDOUBLING);
}

/* A tree file names an algorithm per size range; the rest of the sizes use its edges. */
static void test_file_algorithms(void)
{
    struct tm_tree_file t;
    parse_ok("ranks 4\n"
             "algorithm bcast 0-2K flat   # small: one step\n"
             "algorithm bcast 1M- binary\n"
             "0 -\n1 0\n2 0\n3 2\n"
             "algorithm allreduce 0-64k recursive_doubling\n"
             "algorithm allreduce 65537- tree_file\n",
             &t);
    CHECK_EQ(t.nalgos, 4);
    CHECK_EQ(tm_tree_file_algo(&t, TM_COLL_BCAST, 0), TM_TREE_FLAT);
    CHECK_EQ(tm_tree_file_algo(&t, TM_COLL_BCAST, 2048), TM_TREE_FLAT);
    CHECK_EQ(tm_tree_file_algo(&t, TM_COLL_BCAST, 2049), -1);
    CHECK_EQ(tm_tree_file_algo(&t, TM_COLL_BCAST, (size_t)1 << 40), TM_TREE_BINARY);
    CHECK_EQ(tm_tree_file_algo(&t, TM_COLL_REDUCE, 8), -1);
    struct tm_coll_pick pk;
    tm_coll_select(TM_COLL_BCAST, TM_TREE_AUTO, &t, 2, 100, 1, &pk);
    CHECK(!pk.use_file && pk.algo == TM_TREE_FLAT && strcmp(pk.from, "tree file") == 0);
    tm_coll_select(TM_COLL_BCAST, TM_TREE_AUTO, &t, 2, 4096, 1, &pk);
    CHECK(pk.use_file, "no line for 4 KiB: the edges");
    tm_coll_select(TM_COLL_BCAST, TM_TREE_BINOMIAL, &t, 2, 100, 1, &pk);
    CHECK(!pk.use_file && pk.algo == TM_TREE_BINOMIAL, "an explicit setting wins over the file");
    tm_coll_select(TM_COLL_ALLREDUCE, TM_AR_AUTO, &t, 2, 8, 1, &pk);
    CHECK(!pk.use_file && pk.algo == TM_AR_RECDOUBLING);
    tm_coll_select(TM_COLL_ALLREDUCE, TM_AR_AUTO, &t, 2, 1 << 20, 1, &pk);
    CHECK(pk.use_file, "the line says tree_file: the edges");
    tm_tree_file_free(&t);
    CHECK(t.algos == NULL && t.nalgos == 0);

    parse_bad("ranks 1\n0 -\nalgorithm bcast 0-2K\n",
              "t.tree:3: expected \"algorithm COLL MIN-MAX NAME\"");
    parse_bad("ranks 1\n0 -\nalgorithm bcast 0-2K flat x\n",
              "t.tree:3: expected \"algorithm COLL MIN-MAX NAME\"");
    parse_bad("ranks 1\n0 -\nalgorithm gather 0- flat\n",
              "t.tree:3: unknown collective \"gather\" (bcast, reduce or allreduce)");
    parse_bad("ranks 1\n0 -\nalgorithm bcast 4K-1K flat\n",
              "t.tree:3: bad size range \"4K-1K\" (MIN-MAX or MIN-, bytes with K, M, G)");
    parse_bad("ranks 1\n0 -\nalgorithm bcast 4K flat\n",
              "t.tree:3: bad size range \"4K\" (MIN-MAX or MIN-, bytes with K, M, G)");
    parse_bad("ranks 1\n0 -\nalgorithm bcast 0- ring\n",
              "t.tree:3: bcast has no algorithm \"ring\" (auto, flat, binomial, binary, "
              "tree_file)");
    parse_bad("ranks 1\n0 -\nalgorithm reduce 0-4K flat\nalgorithm reduce 4K- binary\n",
              "t.tree:4: the reduce range \"4K-\" overlaps an earlier one");
}

int main(void)
{
    test_algo_table();
    test_file_algorithms();
    test_shapes();
    test_choice_and_names();
    test_file_good();
    test_file_bad();
    test_run_helpers();
    printf("PASS coll_tree\n");
    return 0;
}
