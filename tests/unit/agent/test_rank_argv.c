/* test_rank_argv.c — each rank's argument vector (agent/host/rank_argv.c): small vectors are
 * copied, large ones shared copy-on-write through a memfd; either way a rank's writes stay
 * its own and the pointers match the job's strings. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "rank_argv.h"

static void check_same(char **v, char *const *want, int argc)
{
    for (int i = 0; i < argc; i++)
        CHECK(strcmp(v[i], want[i]) == 0, "argv[%d] differs", i);
    CHECK(v[argc] == NULL, "argv[argc] is not NULL");
}

static void test_kind(size_t big_len, int want_map)
{
    char *big = malloc(big_len + 1);
    CHECK(big != NULL, "out of memory");
    memset(big, 'b', big_len);
    big[big_len] = 0;
    char *const argv[] = {"prog", "", "second", big, NULL};
    struct rank_argv_src src;
    CHECK_EQ(rank_argv_src_init(&src, 4, argv), 0);
    CHECK_EQ(rank_argv_maps(&src), want_map);
    struct rank_argv a, b;
    CHECK_EQ(rank_argv_make(&src, &a), 0);
    CHECK_EQ(rank_argv_make(&src, &b), 0);
    CHECK_EQ(a.map != NULL, want_map);
    check_same(a.argv, argv, 4);
    check_same(b.argv, argv, 4);
    /* one rank writes its strings: the other's and the job's stay as they were */
    a.argv[2][0] = 'X';
    a.argv[3][big_len - 1] = 'Y';
    CHECK(b.argv[2][0] == 's' && argv[2][0] == 's', "a write reached another rank's argv");
    CHECK(b.argv[3][big_len - 1] == 'b' && big[big_len - 1] == 'b',
          "a write reached another rank's long argument");
    rank_argv_free(&a);
    rank_argv_free(&b);
    CHECK(a.argv == NULL && a.map == NULL, "rank_argv_free left pointers");
    rank_argv_src_free(&src);
    free(big);
}

int main(void)
{
    test_kind(10, 0);
    test_kind(RANK_ARGV_SHARE_MIN, 1);
    test_kind(3 << 20, 1);
    return 0;
}
