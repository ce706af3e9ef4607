/* tmpid.conf parsing: sizes, every section, refused keys and values name the line. */
#include <errno.h>
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
    CHECK_EQ(config_parse_size("99999999999999999999", &v), -EINVAL);
    CHECK_EQ(config_parse_size("99999999999999G", &v), -ERANGE);
}

static void test_good(void)
{
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    CHECK_EQ(c.eager_limit, 100 * 1024);
    const char *p = write_tmp("# comment\n[agent]\nname = n1\nsocket = /tmp/x.sock\n"
                              "log_level = debug\nrank_stack_size = 1M\nmax_ranks = 16\n"
                              "[mpi]\nspin_ns = 0\nintra_eager_limit = 8K\neager_limit = 64K\n"
                              "[pool]\nsize = 1M\n"
                              "[mesh]\nlisten = 127.0.0.1:7471\nkey_file = /etc/k\n"
                              "peers = a:1, b:2 ,c\nheartbeat_ms = 250\n");
    CHECK_EQ(config_load(&c, p), 0);
    CHECK(strcmp(c.name, "n1") == 0 && strcmp(c.socket_path, "/tmp/x.sock") == 0);
    CHECK_EQ(c.log_level, LOG_DEBUG);
    CHECK_EQ(c.rank_stack_size, 1u << 20);
    CHECK_EQ(c.max_ranks, 16);
    CHECK_EQ(c.spin_ns, 0);
    CHECK_EQ(c.intra_eager_limit, 8192);
    CHECK_EQ(c.eager_limit, 65536);
    CHECK_EQ(c.pool_size, 1u << 20);
    CHECK_EQ(c.npeers, 3);
    CHECK(strcmp(c.peers[0], "a:1") == 0 && strcmp(c.peers[1], "b:2") == 0);
    CHECK(strcmp(c.peers[2], "c") == 0);
    CHECK_EQ(c.heartbeat_ms, 250);
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
    expect_refused("[mesh]\npeers = a:1,,b:2\n");
    expect_refused("[mesh]\npeers =  , \n");
    expect_refused("[mesh]\nheartbeat_ms = 10\n");
    expect_refused("[mesh]\nkey_file =\n");
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    CHECK_EQ(config_load(&c, "/nonexistent/tmpid.conf"), -ENOENT);
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

int main(int argc, char **argv)
{
    test_sizes();
    test_good();
    test_bad();
    if (argc > 1)
        test_example(argv[1]);
    puts("agent config: ok");
    return 0;
}
