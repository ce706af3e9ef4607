/* test_coll_tree_net.c — Bcast, Reduce and Allreduce along tree files on communicators that
 * span nodes (coll_treerun.c), and the collective settings (TMPI_COLL_*, tmpid.conf values in
 * tmpi_svc).
 *
 * Trees: seed 002 §5.2 (2 nodes x 8 ranks, two groups of 4 per node, both reporting to the
 * root), a chain that crosses between the nodes at every edge (what would deadlock if leaders
 * did not walk the edges in one order), and random trees; on nodes the harness simulates
 * (2x8, 3x4, 3+3+1, round-robin 2x3) and on a 5-node interleaved layout in one job state.
 * Checked on every rank: results for several roots (re-rooted trees) and counts (0 to over
 * the ring threshold), a commutative op and a non-commutative one (composition of affine maps,
 * in rank order: kept along trees whose subtrees are rank runs, else the usual algorithm), and
 * the network counters: a Bcast and a Reduce send exactly one message per tree edge between
 * nodes.  Then the settings: env over tmpid.conf, a tree file of another size, and every
 * rejection reaching the user as MPI_ERR_ARG with its message. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "coll_check.h"
#include "net_layout.h"

static const struct layout lay_2x8 = {"2x8 (nodes)", 1, 0, 2, 16, {0}};
static const struct layout layouts[] = {
    {"2x8 (nodes)", 1, 0, 2, 16, {0}},
    {"3x4 (nodes)", 1, 0, 3, 12, {0}},
    {"3+3+1 (nodes)", 1, 0, 3, 7, {0}},
    {"2x3 round-robin (nodes)", 1, 1, 2, 6, {0}},
    {"5 nodes uneven, interleaved", 0, 0, 5, 9, {0, 1, 1, 2, 3, 3, 3, 4, 0}},
};
#define NLAYOUTS (int)(sizeof layouts / sizeof layouts[0])

/* The run (its layout is tn_cur): its tree (parents, for the expected counters), what to
 * check. */
static struct run {
    int node_of[16]; /* where each rank is, whichever way the layout is made */
    int parent[16];
    int check_counters; /* the tree is used by Bcast and Reduce: count its cross edges */
} cur;

static void layout_nodes(const struct layout *l, int *node_of)
{
    for (int r = 0; r < l->size; r++)
        if (!l->sim)
            node_of[r] = l->node_of[r];
        else if (l->round_robin)
            node_of[r] = r % l->nnodes;
        else /* blocks of ceil(size / nnodes), as the harness splits them (body checks) */
            node_of[r] = r / ((l->size + l->nnodes - 1) / l->nnodes);
}

/* ---- tree files ---- */

static char tree_path[64];

static void write_tree(int n, const int *parent, const char *comment)
{
    strcpy(tree_path, "/tmp/test_coll_tree_net.XXXXXX");
    int fd = mkstemp(tree_path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        perror("tree file");
        exit(1);
    }
    fprintf(f, "# %s\nranks %d\n", comment, n);
    for (int v = 0; v < n; v++)
        fprintf(f, "%d %d\n", v, parent[v]);
    fclose(f);
    setenv("TMPI_COLL_TREE_FILE", tree_path, 1);
}

static void drop_tree(void)
{
    unlink(tree_path);
    unsetenv("TMPI_COLL_TREE_FILE");
}

static void tree_seed002(int *parent)
{
    for (int v = 0; v < 16; v++)
        parent[v] = v % 4 ? v - v % 4 : 0; /* group heads 4, 8, 12 report to 0 */
    parent[0] = -1;
}

/* Alternating between two halves of the nodes: every edge crosses. */
static void tree_zigzag(int n, const int *node_of, int *parent)
{
    int a[16], b[16], na = 0, nb = 0, prev = -1;
    for (int r = 0; r < n; r++) {
        if (node_of[r] % 2)
            b[nb++] = r;
        else
            a[na++] = r;
    }
    for (int i = 0; i < na || i < nb; i++) {
        if (i < na) parent[a[i]] = prev, prev = a[i];
        if (i < nb) parent[b[i]] = prev, prev = b[i];
    }
}

static void tree_random(int n, unsigned seed, int *parent)
{
    int perm[16] = {0};
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        seed = seed * 1103515245u + 12345u;
        int j = (int)((seed >> 8) % (unsigned)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    parent[perm[0]] = -1;
    for (int i = 1; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        parent[perm[i]] = perm[(seed >> 8) % (unsigned)i];
    }
}

static long cross_edges(int n)
{
    long e = 0;
    for (int v = 0; v < n; v++)
        if (cur.parent[v] >= 0 && cur.node_of[v] != cur.node_of[cur.parent[v]]) e++;
    return e;
}

/* ---- the body ---- */

static struct aff aff_ref(int n, int i)
{
    struct aff acc = aff_of(n - 1, i);
    for (int k = n - 2; k >= 0; k--) {
        struct aff f = aff_of(k, i);
        acc = (struct aff){f.a * acc.a, f.a * acc.b + f.b};
    }
    return acc;
}

static const int counts[] = {0, 1, 7, 5000, 140001};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

/* This node's share of the network messages of kind since *base, summed over the nodes. */
static long net_since(int kind, MPI_Count *base)
{
    MPI_Count ops, now;
    TC_MPI(MPIX_Coll_counters(kind, &ops, &now));
    long long d = (long long)(now - *base), tot = d;
    *base = now;
    if (tn_cur->sim) {
        if (tmpi_svc.rank_self()->local_rank != 0) d = 0;
        TC_MPI(MPI_Allreduce(&d, &tot, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    }
    return (long)tot;
}

static int body(int rank, int n, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    MPI_Datatype affty;
    TC_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &affty));
    TC_MPI(MPI_Type_commit(&affty));
    MPI_Op compose;
    TC_MPI(MPI_Op_create(aff_compose, 0, &compose));
    const int32_t *where = tmpi_svc.rank_self()->node_of_rank;
    for (int r = 0; r < n; r++)
        TC_CHECK(where[r] == cur.node_of[r], "rank %d is on node %d, the test thought %d", r,
                 where[r], cur.node_of[r]);
    long cross = cross_edges(n);
    int roots[3] = {0, n - 1, 5 % n};
    for (int ci = 0; ci < NCOUNTS; ci++) {
        int cnt = counts[ci];
        int *buf = tc_alloc(sizeof(int) * (size_t)cnt), *out = tc_alloc(sizeof(int) * (size_t)cnt);
        struct aff *fa = tc_alloc(sizeof *fa * (size_t)cnt),
                   *fo = tc_alloc(sizeof *fo * (size_t)cnt);
        for (int ri = 0; ri < 3; ri++) {
            int root = roots[ri];
            MPI_Count bc0 = 0, rd0 = 0, ops;
            TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
            TC_MPI(MPIX_Coll_counters(MPIX_COLL_BCAST, &ops, &bc0));
            TC_MPI(MPIX_Coll_counters(MPIX_COLL_REDUCE, &ops, &rd0));
            TC_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* nobody sends before every base is read */
            for (int i = 0; i < cnt; i++)
                buf[i] = rank == root ? i * 3 + root : TC_GAP;
            TC_MPI(MPI_Bcast(buf, cnt, MPI_INT, root, MPI_COMM_WORLD));
            for (int i = 0; i < cnt; i++)
                TC_CHECK(buf[i] == i * 3 + root, "bcast count %d root %d: [%d] = %d, expected %d",
                         cnt, root, i, buf[i], i * 3 + root);
            for (int i = 0; i < cnt; i++) {
                buf[i] = rank + i;
                out[i] = TC_GAP;
            }
            long sum = (long)n * (n - 1) / 2;
            TC_MPI(MPI_Reduce(buf, out, cnt, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
            for (int i = 0; i < cnt; i++)
                TC_CHECK(out[i] == (rank == root ? (int)(sum + (long)n * i) : TC_GAP),
                         "reduce count %d root %d: rank %d [%d] = %d", cnt, root, rank, i, out[i]);
            if (cnt && cur.check_counters) {
                TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
                long b = net_since(MPIX_COLL_BCAST, &bc0), r = net_since(MPIX_COLL_REDUCE, &rd0);
                TC_CHECK(b == cross && r == cross,
                         "root %d: a Bcast sent %ld and a Reduce %ld network messages, expected "
                         "one per tree edge between nodes: %ld",
                         root, b, r, cross);
            }
            TC_MPI(MPI_Allreduce(buf, out, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            for (int i = 0; i < cnt; i++)
                TC_CHECK(out[i] == (int)(sum + (long)n * i), "allreduce count %d: [%d] = %d", cnt,
                         i, out[i]);
            for (int i = 0; i < cnt; i++)
                out[i] = rank + i;
            TC_MPI(MPI_Reduce(rank == root ? MPI_IN_PLACE : out, rank == root ? out : NULL, cnt,
                              MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
            for (int i = 0; rank == root && i < cnt; i++)
                TC_CHECK(out[i] == (int)(sum + (long)n * i), "in-place reduce count %d: [%d] = %d",
                         cnt, i, out[i]);
            if (cnt > 20000 && ri) continue;
            for (int i = 0; i < cnt; i++) {
                fa[i] = aff_of(rank, i);
                fo[i] = (struct aff){0, 0};
            }
            TC_MPI(MPI_Reduce(fa, fo, cnt, affty, compose, root, MPI_COMM_WORLD));
            for (int i = 0; rank == root && i < cnt; i++) {
                struct aff e = aff_ref(n, i);
                TC_CHECK(fo[i].a == e.a && fo[i].b == e.b,
                         "non-commutative reduce count %d root %d: [%d] = (%u,%u), expected "
                         "(%u,%u)",
                         cnt, root, i, fo[i].a, fo[i].b, e.a, e.b);
            }
            TC_MPI(MPI_Allreduce(fa, fo, cnt, affty, compose, MPI_COMM_WORLD));
            for (int i = 0; i < cnt; i++) {
                struct aff e = aff_ref(n, i);
                TC_CHECK(fo[i].a == e.a && fo[i].b == e.b,
                         "non-commutative allreduce count %d: [%d] = (%u,%u), expected (%u,%u)",
                         cnt, i, fo[i].a, fo[i].b, e.a, e.b);
            }
        }
        free(buf);
        free(out);
        free(fa);
        free(fo);
    }
    /* A communicator of another size does not use the file: the usual algorithms. */
    MPI_Comm half;
    TC_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank < n / 2 + 1, rank, &half));
    int hn, v = rank;
    TC_MPI(MPI_Comm_size(half, &hn));
    TC_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, half));
    TC_CHECK(v == (rank < n / 2 + 1 ? n / 2 : n - 1), "split allreduce: %d", v);
    TC_MPI(MPI_Comm_free(&half));
    TC_MPI(MPI_Op_free(&compose));
    TC_MPI(MPI_Type_free(&affty));
    TC_MPI(MPI_Finalize());
    return 0;
}

static int run_tree(const struct layout *l, const char *what)
{
    struct th_result res;
    write_tree(l->size, cur.parent, what);
    int r = tn_run_layout(l, body, &res);
    drop_tree();
    if (r)
        fprintf(stderr, "  layout %s, tree %s: rank %d failed (code %d)%s%s\n", l->name, what,
                res.failed_rank, res.code, res.aborted ? ": " : "",
                res.aborted ? res.abort_why : "");
    return r;
}

/* Seed 002 §5.2, by algorithm tree_file for all three and by auto (a tree file alone). */
static int test_seed002(void)
{
    layout_nodes(&lay_2x8, cur.node_of);
    tree_seed002(cur.parent);
    cur.check_counters = 1;
    setenv("TMPI_COLL_BCAST", "tree_file", 1);
    setenv("TMPI_COLL_REDUCE", "tree_file", 1);
    setenv("TMPI_COLL_ALLREDUCE", "tree_file", 1);
    int r = run_tree(&lay_2x8, "seed 002: two groups of 4 per node, both reporting to the root");
    unsetenv("TMPI_COLL_BCAST");
    unsetenv("TMPI_COLL_REDUCE");
    unsetenv("TMPI_COLL_ALLREDUCE");
    return r || run_tree(&lay_2x8, "seed 002 with algorithm auto");
}

static int test_zigzag(void)
{
    cur.check_counters = 1;
    for (int i = 0; i < NLAYOUTS; i++) {
        layout_nodes(&layouts[i], cur.node_of);
        tree_zigzag(layouts[i].size, cur.node_of, cur.parent);
        if (run_tree(&layouts[i], "zigzag between the nodes")) return 1;
    }
    return 0;
}

static int test_random(void)
{
    cur.check_counters = 1;
    for (int i = 0; i < NLAYOUTS; i++)
        for (unsigned seed = 1; seed <= 3; seed++) {
            layout_nodes(&layouts[i], cur.node_of);
            tree_random(layouts[i].size, seed * 7919u + (unsigned)i, cur.parent);
            char what[32];
            snprintf(what, sizeof what, "random %u", seed);
            if (run_tree(&layouts[i], what)) return 1;
        }
    return 0;
}

/* ---- settings ---- */

/* One Bcast of 4 ints from rank 0; how many network messages it sent (all nodes). */
static long bcast_msgs;

static int body_bcast(int rank, int n, void *arg)
{
    (void)arg, (void)n;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    MPI_Count b0, ops;
    int v[4] = {rank, rank, rank, rank};
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TC_MPI(MPIX_Coll_counters(MPIX_COLL_BCAST, &ops, &b0));
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int e = MPI_Bcast(v, 4, MPI_INT, 0, MPI_COMM_WORLD);
    TC_CHECK(e == MPI_SUCCESS && v[3] == 0, "bcast: error %d, v[3] = %d", e, v[3]);
    TC_MPI(MPI_Barrier(MPI_COMM_WORLD));
    long m = net_since(MPIX_COLL_BCAST, &b0);
    if (rank == 0) bcast_msgs = m;
    TC_MPI(MPI_Finalize());
    return 0;
}

static int bcast_sends(long want, const char *what)
{
    struct th_result res;
    bcast_msgs = -1;
    if (tn_run_layout(&lay_2x8, body_bcast, &res)) {
        fprintf(stderr, "  %s: rank %d failed: %s\n", what, res.failed_rank, res.abort_why);
        return 1;
    }
    if (bcast_msgs != want) {
        fprintf(stderr, "  %s: the Bcast sent %ld network messages, expected %ld\n", what,
                bcast_msgs, want);
        return 1;
    }
    return 0;
}

/* The agent's tmpid.conf as this test sets it, told by key as the agent does (svc.h
 * config_item): [mpi] coll_bcast and coll_tree_file, NULL: unset. */
static const char *conf_bcast, *conf_tree_file;
static int test_config_item(int i, const char **section, const char **key, char *buf, size_t len)
{
    static const char *const keys[] = {"spin_ns", "coll_bcast", "coll_tree_file"};
    if (i < 0 || i > 2) return -1;
    *section = "mpi";
    *key = keys[i];
    const char *v = i == 0 ? "1000" : i == 1 ? conf_bcast : conf_tree_file;
    return snprintf(buf, len, "%s", v ? v : "");
}

/* tmpid.conf's values (by key, svc config_item) apply; the job's environment wins over them. */
static int test_env_over_config(void)
{
    tmpi_svc.config_item = test_config_item;
    layout_nodes(&lay_2x8, cur.node_of);
    tree_seed002(cur.parent);
    write_tree(16, cur.parent, "seed 002");
    unsetenv("TMPI_COLL_TREE_FILE");
    conf_bcast = "tree_file";
    conf_tree_file = tree_path;
    int r = bcast_sends(2, "tmpid.conf coll_bcast = tree_file");
    setenv("TMPI_COLL_BCAST", "flat", 1);
    r = r || bcast_sends(1, "TMPI_COLL_BCAST=flat over tmpid.conf tree_file");
    unsetenv("TMPI_COLL_BCAST");
    conf_bcast = NULL;
    r = r || bcast_sends(2, "tmpid.conf coll_tree_file alone (auto)");
    conf_tree_file = NULL;
    r = r || bcast_sends(1, "no settings (auto: flat on 2 nodes)");
    unlink(tree_path);
    return r;
}

/* Each bad setting: the call fn fails (fatal handler) with MPI_ERR_ARG and a message saying
 * what is wrong: a setting by MPI_Init, which reads them, a tree file's contents by the Bcast
 * that uses it. */
static int expect_refused(const char *what, const char *fn, const char *want)
{
    struct th_result res;
    int r = tn_run_layout(&lay_2x8, body_bcast, &res);
    if (!r || !res.aborted || !strstr(res.abort_why, want) || !strstr(res.abort_why, fn) ||
        !strstr(res.abort_why, "(MPI_ERR_ARG)")) {
        fprintf(stderr, "  %s: expected %s to fail with MPI_ERR_ARG and \"%s\", got %s%s\n", what,
                fn, want, r ? "the abort: " : "success", r ? res.abort_why : "");
        return 1;
    }
    return 0;
}

/* MPI_Session_init returns a bad setting through the session's error handler, and the
 * rank's MPI stays closed (a later MPI_Init still works once the setting is fixed). */
static int body_session(int rank, int n, void *arg)
{
    (void)n, (void)arg;
    place_me(rank);
    MPI_Session s = MPI_SESSION_NULL;
    int e = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    int cls = -1;
    if (e != MPI_SUCCESS) MPI_Error_class(e, &cls);
    TC_CHECK(cls == MPI_ERR_ARG && s == MPI_SESSION_NULL,
             "MPI_Session_init with TMPI_COLL_REDUCE=fast: error class %d, expected MPI_ERR_ARG",
             cls);
    return 0;
}

static int test_refused(void)
{
    int r = 0;
    layout_nodes(&lay_2x8, cur.node_of);
    setenv("TMPI_COLL_BCAST", "fast", 1);
    r |= expect_refused("unknown algorithm", "MPI_Init",
                        "TMPI_COLL_BCAST=\"fast\": not one of auto, flat, binomial, binary, "
                        "tree_file");
    setenv("TMPI_COLL_BCAST", "tree_file", 1);
    r |= expect_refused("tree_file without a file", "MPI_Init",
                        "algorithm tree_file without a tree file");
    unsetenv("TMPI_COLL_BCAST");
    setenv("TMPI_COLL_ALLREDUCE", "binomial", 1);
    r |= expect_refused("a bad setting of another collective", "MPI_Init",
                        "TMPI_COLL_ALLREDUCE=\"binomial\"");
    unsetenv("TMPI_COLL_ALLREDUCE");
    setenv("TMPI_COLL_REDUCE", "fast", 1);
    struct th_result res;
    if (tn_run_layout(&lay_2x8, body_session, &res)) {
        fprintf(stderr, "  MPI_Session_init: rank %d failed: %s\n", res.failed_rank, res.abort_why);
        r = 1;
    }
    unsetenv("TMPI_COLL_REDUCE");

    /* a file that is not a tree, with algorithm auto: still an error (it was asked for) */
    int cyc[16];
    tree_seed002(cyc);
    cyc[4] = 5;
    write_tree(16, cyc, "4 and 5 are each other's parent");
    char want[160];
    snprintf(want, sizeof want, "tree file rejected: %s:7: rank 4 is on a cycle (not a tree)",
             tree_path);
    r |= expect_refused("a cycle", "MPI_Bcast", want);
    drop_tree();

    /* a tree for 12 ranks on a job of 16: an error with tree_file, ignored with auto */
    int p12[12];
    for (int v = 0; v < 12; v++)
        p12[v] = v - 1;
    write_tree(12, p12, "a chain of 12");
    setenv("TMPI_COLL_BCAST", "tree_file", 1);
    snprintf(want, sizeof want, "tree file %s has 12 ranks but MPI_COMM_WORLD has 16", tree_path);
    r |= expect_refused("wrong size", "MPI_Bcast", want);
    unsetenv("TMPI_COLL_BCAST");
    r |= bcast_sends(1, "a tree file of another size with auto");
    drop_tree();
    return r;
}

static const struct th_test tests[] = {
    {"seed002_2x8", test_seed002},      {"zigzag", test_zigzag},
    {"random_trees", test_random},      {"env_over_config", test_env_over_config},
    {"refused_settings", test_refused}, {NULL, NULL},
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests);
}
