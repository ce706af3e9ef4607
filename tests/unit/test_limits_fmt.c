/* test_limits_fmt.c — the text form of resource limits (proto/control/limits_fmt.c): CPUs
 * with up to three decimals, sizes with K/M/G/T, and what each refuses. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "limits_fmt.h"

static void test_cpus(void)
{
    uint32_t v = 0;
    CHECK_EQ(limits_parse_cpus("1", &v), 0);
    CHECK_EQ(v, 1000);
    CHECK_EQ(limits_parse_cpus("1.5", &v), 0);
    CHECK_EQ(v, 1500);
    CHECK_EQ(limits_parse_cpus("0.001", &v), 0);
    CHECK_EQ(v, 1);
    CHECK_EQ(limits_parse_cpus("2.250", &v), 0);
    CHECK_EQ(v, 2250);
    CHECK_EQ(limits_parse_cpus("3.1000", &v), 0); /* trailing zeros past the third are fine */
    CHECK_EQ(v, 3100);
    CHECK_EQ(limits_parse_cpus("100000", &v), 0);
    CHECK_EQ(v, 100000000);
    CHECK_EQ(limits_parse_cpus("0", &v), -ERANGE);
    CHECK_EQ(limits_parse_cpus("0.0001", &v), -EINVAL);
    CHECK_EQ(limits_parse_cpus("100001", &v), -ERANGE);
    CHECK_EQ(limits_parse_cpus("", &v), -EINVAL);
    CHECK_EQ(limits_parse_cpus("1.", &v), -EINVAL);
    CHECK_EQ(limits_parse_cpus(".5", &v), -EINVAL);
    CHECK_EQ(limits_parse_cpus("-1", &v), -EINVAL);
    CHECK_EQ(limits_parse_cpus("1,5", &v), -EINVAL);
    CHECK_EQ(limits_parse_cpus("2 ", &v), -EINVAL);
    char buf[32];
    limits_format_cpus(1500, buf, sizeof buf);
    CHECK(strcmp(buf, "1.500") == 0, "1500: expected 1.500, got %s", buf);
    limits_format_cpus(1, buf, sizeof buf);
    CHECK(strcmp(buf, "0.001") == 0, "1: expected 0.001, got %s", buf);
}

static void test_bytes(void)
{
    uint64_t v = 0;
    CHECK_EQ(limits_parse_bytes("4096", &v), 0);
    CHECK_EQ(v, 4096);
    CHECK_EQ(limits_parse_bytes("64M", &v), 0);
    CHECK_EQ(v, 64u << 20);
    CHECK_EQ(limits_parse_bytes("2g", &v), 0);
    CHECK_EQ(v, 2ull << 30);
    CHECK_EQ(limits_parse_bytes("1T", &v), 0);
    CHECK_EQ(v, 1ull << 40);
    CHECK_EQ(limits_parse_bytes("12Q", &v), -EINVAL);
    CHECK_EQ(limits_parse_bytes("4MB", &v), -EINVAL);
    CHECK_EQ(limits_parse_bytes("", &v), -EINVAL);
    CHECK_EQ(limits_parse_bytes("-1", &v), -EINVAL);
    CHECK_EQ(limits_parse_bytes("99999999999999999999", &v), -ERANGE);
    CHECK_EQ(limits_parse_bytes("99999999999T", &v), -ERANGE);
}

int main(void)
{
    test_cpus();
    test_bytes();
    return 0;
}
