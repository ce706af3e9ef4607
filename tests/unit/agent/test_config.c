/* tmpid.conf parsing: sizes, every section, refused keys and values name the line. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "../check.h"
#include "config.h"

static const char *write_tmp(const char *text)
{
    static char path[64];
    strcpy(path, "/tmp/tmpi-test-conf-XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_sizes(void)
{
    size_t v;
    CHECK(config_parse_size("123", &v) == 0 && v == 123);
    CHECK(config_parse_size("64K", &v) == 0 && v == 65536);
    CHECK(config_parse_size("4m", &v) == 0 && v == 4u << 20);
    CHECK(config_parse_size("1G", &v) == 0 && v == 1u << 30);
    CHECK_EQ(config_parse_size("", &v), -EINVAL);
    CHECK_EQ(config_parse_size("-1", &v), -EINVAL);
    CHECK_EQ(config_parse_size("12X", &v), -EINVAL);
    CHECK_EQ(config_parse_size("4KB", &v), -EINVAL);
    CHECK_EQ(config_parse_size("99999999999999999999", &v), -ERANGE);
    CHECK_EQ(config_parse_size("99999999999999G", &v), -ERANGE);
}

static void test_good(void)
{
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    CHECK_EQ(c.eager_limit, 100 * 1024);
    CHECK_EQ(c.intra_coop_min, 256 * 1024);
    CHECK(strcmp(c.rank_switching, "auto") == 0);
    CHECK_EQ(c.kernel_ranks_per_cpu, CONFIG_KERNEL_RANKS_PER_CPU_DEFAULT);
    CHECK(strcmp(c.carrier_placement, "block") == 0);
    CHECK(strcmp(c.bind_to, "auto") == 0);
    CHECK_EQ(c.max_ranks, 16384); /* a 16,384-rank job fits one agent (issue 21) */
    CHECK_EQ(c.ended_job_keep_sec, 30);
    CHECK(c.job_memory_max == 0 && c.job_cpu_max == 0 && !c.allow_users && !c.allow_groups);
    CHECK_EQ(c.oom_score_adj, -900);
    CHECK_EQ(c.job_oom_score_adj, 500);
    CHECK_EQ(c.io_threads, 4);
    CHECK_EQ(c.io_offload_min, 256u << 10);
    const char *p = write_tmp("# comment\n[agent]\nname = n1\nsocket = /tmp/x.sock\n"
                              "log_level = debug\nrank_stack_size = 1M\nmax_ranks = 16\n"
                              "job_memory_max = 2G\njob_cpu_max = 2.5\nended_job_keep = 0\n"
                              "allow_users = alice, bob\nallow_groups = hpc\n"
                              "allow_users_dir = /run/tmpid/allowed\n"
                              "oom_score_adj = -1000\njob_oom_score_adj = +0\n"
                              "[mpi]\nspin_ns = 0\nintra_eager_limit = 8K\neager_limit = 64K\n"
                              "intra_coop_min = 1M\n"
                              "rank_switching = user\nbind_to = socket\n"
                              "carrier_placement = cyclic\nkernel_ranks_per_cpu = 2\n"
                              "[pool]\nsize = 1M\n"
                              "[io]\nthreads = 0\noffload_min = 1m\n"
                              "[mesh]\nlisten = 127.0.0.1:7471\nkey_file = /etc/k\n"
                              "peers = a:1, b:2 ,c\nheartbeat_ms = 250\nrecv_threads = 3\n"
                              "recv_spin_ns = 0\n");
    CHECK_EQ(config_load(&c, p), 0);
    CHECK(strcmp(c.name, "n1") == 0 && strcmp(c.socket_path, "/tmp/x.sock") == 0);
    CHECK_EQ(c.log_level, LOG_DEBUG);
    CHECK_EQ(c.rank_stack_size, 1u << 20);
    CHECK_EQ(c.max_ranks, 16);
    CHECK(c.job_memory_max == 2ull << 30);
    CHECK_EQ(c.job_cpu_max, 2500);
    CHECK_EQ(c.ended_job_keep_sec, 0);
    CHECK_EQ(c.oom_score_adj, -1000);
    CHECK_EQ(c.job_oom_score_adj, 0);
    CHECK(c.allow_users && strcmp(c.allow_users[0], "alice") == 0);
    CHECK(strcmp(c.allow_users[1], "bob") == 0 && c.allow_users[2] == NULL);
    CHECK(c.allow_groups && strcmp(c.allow_groups[0], "hpc") == 0 && !c.allow_groups[1]);
    CHECK(c.allow_users_dir && strcmp(c.allow_users_dir, "/run/tmpid/allowed") == 0);
    CHECK_EQ(c.key_fd, -1);
    CHECK_EQ(c.spin_ns, 0);
    CHECK(strcmp(c.rank_switching, "user") == 0);
    CHECK(strcmp(c.carrier_placement, "cyclic") == 0);
    CHECK_EQ(c.kernel_ranks_per_cpu, 2);
    CHECK(strcmp(c.bind_to, "package") == 0);
    CHECK_EQ(c.intra_eager_limit, 8192);
    CHECK_EQ(c.intra_coop_min, 1u << 20);
    CHECK_EQ(c.eager_limit, 65536);
    CHECK_EQ(c.pool_size, 1u << 20);
    CHECK_EQ(c.io_threads, 0);
    CHECK_EQ(c.io_offload_min, 1u << 20);
    CHECK_EQ(c.npeers, 3);
    CHECK(strcmp(c.peers[0], "a:1") == 0 && strcmp(c.peers[1], "b:2") == 0);
    CHECK(strcmp(c.peers[2], "c") == 0);
    CHECK_EQ(c.heartbeat_ms, 250);
    CHECK_EQ(c.recv_threads, 3);
    CHECK_EQ(c.recv_spin_ns, 0);
    CHECK(strcmp(c.listen, "127.0.0.1:7471") == 0 && strcmp(c.key_file, "/etc/k") == 0);
    unlink(p);
    config_free(&c);
}

static void expect_refused(const char *text)
{
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    const char *p = write_tmp(text);
    int r = config_load(&c, p);
    if (r != -EINVAL) {
        fprintf(stderr, "config accepted, expected refusal: %s\n", text);
        exit(1);
    }
    unlink(p);
    config_free(&c);
}

static void test_bad(void)
{
    expect_refused("[agent]\nnmae = typo\n");
    expect_refused("[nosuch]\nname = x\n");
    expect_refused("[agent]\nmax_ranks = 0\n");
    expect_refused("[agent]\nmax_ranks = lots\n");
    expect_refused("[agent]\nrank_stack_size = 1K\n");
    expect_refused("[agent]\nlog_level = loud\n");
    expect_refused("[agent]\nname =\n");
    expect_refused("[agent\nname = x\n");
    expect_refused("[mpi]\nspin_ns = -5\n");
    expect_refused("[mpi]\nrank_switching = fibers\n");
    expect_refused("[mpi]\nintra_coop_min = 2G\n");
    expect_refused("[mpi]\nintra_coop_min = lots\n");
    expect_refused("[mpi]\nbind_to = sideways\n");
    expect_refused("[io]\nthreads = 65\n");
    expect_refused("[io]\nthreads = -1\n");
    expect_refused("[io]\nthreads = many\n");
    expect_refused("[io]\noffload_min = 256KB\n");
    expect_refused("[io]\noffload_min = -4k\n");
    expect_refused("[io]\nthread = 4\n");
    expect_refused("[mpi]\nrank_switching =\n");
    expect_refused("[mpi]\ncarrier_placement = scattered\n");
    expect_refused("[mpi]\ncarrier_placement =\n");
    expect_refused("[mpi]\nkernel_ranks_per_cpu = 0\n");
    expect_refused("[mpi]\nkernel_ranks_per_cpu = 1025\n");
    expect_refused("[mpi]\nkernel_ranks_per_cpu = many\n");
    expect_refused("[mesh]\npeers = a:1,,b:2\n");
    expect_refused("[mesh]\npeers =  , \n");
    expect_refused("[mesh]\nheartbeat_ms = 10\n");
    expect_refused("[mesh]\nrecv_threads = 0\n");
    expect_refused("[mesh]\nrecv_threads = 65\n");
    expect_refused("[mesh]\nrecv_spin_ns = 10000001\n");
    expect_refused("[mesh]\nrecv_spin_ns = -1\n");
    expect_refused("[mesh]\nkey_file =\n");
    expect_refused("[agent]\njob_memory_max = 4K\n");
    expect_refused("[agent]\njob_cpu_max = lots\n");
    expect_refused("[agent]\njob_cpu_max = 0.0001\n");
    expect_refused("[agent]\nended_job_keep = 86401\n");
    expect_refused("[agent]\nallow_users = a,,b\n");
    expect_refused("[agent]\nallow_groups =\n");
    expect_refused("[agent]\nallow_users_dir = run/tmpid/allowed\n");
    expect_refused("[agent]\nallow_users_dir =\n");
    expect_refused("[agent]\noom_score_adj = -1001\n");
    expect_refused("[agent]\njob_oom_score_adj = 1001\n");
    expect_refused("[agent]\njob_oom_score_adj = high\n");
    expect_refused("[agent]\noom_score_adj = -900x\n");
    expect_refused("[agent]\noom_score_adj =\n");
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    CHECK_EQ(config_load(&c, "/nonexistent/tmpid.conf"), -ENOENT);
    config_free(&c);
}

/* config_load must refuse text with exactly the message want on stderr ("FILE:" prefixed). */
static void expect_message(const char *text, const char *want)
{
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    const char *p = write_tmp(text);
    char conf[64], errpath[] = "/tmp/tmpi-test-err-XXXXXX";
    strcpy(conf, p);
    int efd = mkstemp(errpath), saved = dup(2);
    CHECK(efd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(efd, 2);
    int r = config_load(&c, conf);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char got[1024] = "", full[1200];
    ssize_t n = pread(efd, got, sizeof got - 1, 0);
    got[n > 0 ? n : 0] = '\0';
    close(efd);
    unlink(errpath);
    snprintf(full, sizeof full, "%s:%s\n", conf, want);
    if (r != -EINVAL || strcmp(got, full) != 0)
        fprintf(stderr, "expected -EINVAL and \"%s\", got %d and \"%s\"\n", full, r, got);
    CHECK_EQ(r, -EINVAL);
    CHECK(strcmp(got, full) == 0);
    unlink(conf);
    config_free(&c);
}

/* [mpi] coll_*: algorithm names, and a tree file that must parse when the agent starts. */
static void test_coll(void)
{
    char tree[] = "/tmp/tmpi-test-tree-XXXXXX";
    int fd = mkstemp(tree);
    CHECK(fd >= 0);
    const char *t = "ranks 3\n0 -1\n1 0\n2 1\n";
    CHECK(write(fd, t, strlen(t)) == (ssize_t)strlen(t));
    close(fd);
    char text[256];
    snprintf(text, sizeof text,
             "[mpi]\ncoll_bcast = tree_file\ncoll_reduce = binomial\ncoll_allreduce = ring\n"
             "coll_tree_file = %s\n",
             tree);
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    CHECK(c.coll_bcast == NULL && c.coll_tree_file == NULL);
    const char *p = write_tmp(text);
    CHECK_EQ(config_load(&c, p), 0);
    CHECK(strcmp(c.coll_bcast, "tree_file") == 0 && strcmp(c.coll_reduce, "binomial") == 0);
    CHECK(strcmp(c.coll_allreduce, "ring") == 0 && strcmp(c.coll_tree_file, tree) == 0);
    unlink(p);
    config_free(&c);

    expect_message(
        "[mpi]\ncoll_bcast = fast\n",
        "2: bad value for [mpi] coll_bcast: \"fast\" (one of auto, flat, binomial, binary, "
        "tree_file)");
    expect_message("[mpi]\n\ncoll_allreduce = binomial\n",
                   "3: bad value for [mpi] coll_allreduce: \"binomial\" (one of auto, "
                   "recursive_doubling, reduce_bcast, ring, tree_file)");
    expect_message(
        "[mpi]\ncoll_reduce = ring\n",
        "2: bad value for [mpi] coll_reduce: \"ring\" (one of auto, flat, binomial, binary, "
        "tree_file)");
    expect_message("[mpi]\ncoll_tree_file = t.tree\n",
                   "2: bad value for [mpi] coll_tree_file: \"t.tree\" (not an absolute path)");
    expect_message("[mpi]\ncoll_tree_file = /nonexistent/t.tree\n",
                   "2: bad value for [mpi] coll_tree_file: /nonexistent/t.tree: No such file or "
                   "directory");
    fd = open(tree, O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    CHECK(write(fd, "0 2\n", 4) == 4);
    close(fd);
    snprintf(text, sizeof text, "[mpi]\ncoll_tree_file = %s\n", tree);
    char want[256];
    snprintf(want, sizeof want,
             "2: bad value for [mpi] coll_tree_file: %s:5: rank 0 is given twice", tree);
    expect_message(text, want);
    unlink(tree);
}

/* The OOM killer must prefer a job host to the agent: job_oom_score_adj above oom_score_adj,
 * whatever order the file sets them in. */
static void test_oom_scores_ordered(void)
{
    expect_message("[agent]\njob_oom_score_adj = -900\n",
                   " [agent] job_oom_score_adj (-900) must be above oom_score_adj (-900): the "
                   "kernel must end a job before the agent");
    expect_message("[agent]\noom_score_adj = 600\n",
                   " [agent] job_oom_score_adj (500) must be above oom_score_adj (600): the "
                   "kernel must end a job before the agent");
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    const char *p = write_tmp("[agent]\njob_oom_score_adj = 1000\noom_score_adj = 600\n");
    CHECK_EQ(config_load(&c, p), 0);
    CHECK(c.oom_score_adj == 600 && c.job_oom_score_adj == 1000);
    unlink(p);
    config_free(&c);
}

/* The shipped example must parse: every setting in it is commented out or valid. */
static void test_example(const char *srcdir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/../../../etc/tmpid.conf", srcdir);
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    CHECK_EQ(config_load(&c, path), 0);
    config_free(&c);
}

/* The accepted text is kept whole (job hosts get it), and a file over CONFIG_MAX_BYTES or with
 * a NUL byte is refused before it is parsed. */
static void test_text_kept_and_bounded(void)
{
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    const char *text = "[agent]\nmax_jobs = 7\n";
    const char *p = write_tmp(text);
    CHECK_EQ(config_load(&c, p), 0);
    CHECK(c.text != NULL);
    CHECK_EQ(c.text_len, strlen(text));
    CHECK(strcmp(c.text, text) == 0);
    unlink(p);

    char path[] = "/tmp/tmpi-test-conf-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, CONFIG_MAX_BYTES + 1) == 0); /* zeros: too big is checked first */
    close(fd);
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    int r = config_load(&c, path);
    dup2(saved, 2);
    close(saved);
    close(devnull);
    CHECK_EQ(r, -EINVAL);
    CHECK_EQ(c.max_jobs, 7); /* the refused file changed nothing */
    unlink(path);
    config_free(&c);
    CHECK(c.text == NULL);
}

int main(int argc, char **argv)
{
    test_text_kept_and_bounded();
    test_sizes();
    test_good();
    test_bad();
    test_coll();
    test_oom_scores_ordered();
    if (argc > 1) test_example(argv[1]);
    puts("agent config: ok");
    return 0;
}
