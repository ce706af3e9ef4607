/* tmpid.conf settings as text for MPI_T (config_items.c): every key there once, numbers and
 * words as tmpid.conf writes them, lists joined, truncation, the cluster key file left out. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "config.h"
#include "config_items.h"

/* The text of section.key in c, or NULL when there is no such item. */
static const char *find(const struct agent_config *c, const char *sk, char *buf, size_t len)
{
    const char *sec, *key;
    for (int i = 0; config_item_text(c, i, &sec, &key, buf, len) >= 0; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s.%s", sec, key);
        if (!strcmp(name, sk)) return buf;
    }
    return NULL;
}

int main(void)
{
    struct agent_config c;
    CHECK(config_defaults(&c) == 0);
    char path[] = "/tmp/tmpi-test-items-XXXXXX";
    int fd = mkstemp(path);
    const char *text = "[agent]\nmax_jobs = 7\nallow_users = alice, bob\n[pool]\nsize = 64K\n"
                       "[mesh]\npeers = a:1, b:2\n[io]\noffload_min = 1M\n";
    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    CHECK(config_load(&c, path) == 0);
    unlink(path);
    char buf[256];
    CHECK(find(&c, "agent.max_jobs", buf, sizeof buf) && !strcmp(buf, "7"));
    CHECK(find(&c, "pool.size", buf, sizeof buf) && !strcmp(buf, "65536"));
    CHECK(find(&c, "agent.allow_users", buf, sizeof buf) && !strcmp(buf, "alice, bob"));
    CHECK(find(&c, "mesh.peers", buf, sizeof buf) && !strcmp(buf, "a:1, b:2"));
    CHECK(find(&c, "mpi.rank_switching", buf, sizeof buf) && !strcmp(buf, "auto"));
    CHECK(find(&c, "mpi.coll_bcast", buf, sizeof buf) && !strcmp(buf, "")); /* unset */
    CHECK(find(&c, "mesh.key_file", buf, sizeof buf) == NULL);
    /* what libtmpi's file system threads read (libclient/io/io_pool.c) */
    CHECK(find(&c, "io.offload_min", buf, sizeof buf) && !strcmp(buf, "1048576"));
    CHECK(find(&c, "io.threads", buf, sizeof buf) && !strcmp(buf, "4"));
    /* truncated to the buffer, the full length returned */
    const char *sec, *key;
    int n = 0, i = 0;
    for (; (n = config_item_text(&c, i, &sec, &key, buf, 4)) >= 0; i++)
        if (!strcmp(key, "allow_users")) break;
    CHECK_EQ(n, (int)strlen("alice, bob"));
    CHECK(!strcmp(buf, "ali"));
    /* every key once */
    int count = 0;
    while (config_item_text(&c, count, &sec, &key, buf, sizeof buf) >= 0)
        count++;
    CHECK(count >= 50);
    CHECK_EQ(config_item_text(&c, count, &sec, &key, buf, sizeof buf), -1);
    CHECK_EQ(config_item_text(&c, -1, &sec, &key, buf, sizeof buf), -1);
    config_free(&c);
    puts("ok");
    return 0;
}
