/* test_size_text.c — byte counts with binary suffixes (proto/wire/size_text.c): the suffixes
 * the caller allows and no others, either case, the caller's maximum, and what is no size. */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "size_text.h"

int main(void)
{
    uint64_t v = 7;
    CHECK_EQ(size_text_parse("0", "", 10, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(size_text_parse("4096", "kmg", UINT64_MAX, &v), 0);
    CHECK_EQ(v, 4096);
    CHECK_EQ(size_text_parse("64k", "kmg", UINT64_MAX, &v), 0);
    CHECK_EQ(v, 64u << 10);
    CHECK_EQ(size_text_parse("256K", "kmg", UINT64_MAX, &v), 0);
    CHECK_EQ(v, 256u << 10);
    CHECK_EQ(size_text_parse("3G", "kmg", UINT64_MAX, &v), 0);
    CHECK_EQ(v, 3ull << 30);
    CHECK_EQ(size_text_parse("2t", "kmgt", UINT64_MAX, &v), 0);
    CHECK_EQ(v, 2ull << 40);
    /* a suffix the caller does not allow is no size */
    v = 7;
    CHECK_EQ(size_text_parse("2t", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("4k", "", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("4k", "mg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(v, 7); /* untouched on refusal */
    /* not sizes at all */
    CHECK_EQ(size_text_parse("", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("-1", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("+1", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse(" 1", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("1 ", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("k", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("4KB", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("4Q", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("1.5M", "kmg", UINT64_MAX, &v), -EINVAL);
    CHECK_EQ(size_text_parse("99999999999999999999X", "kmg", UINT64_MAX, &v), -EINVAL);
    /* the caller's maximum, digits and suffix alike */
    CHECK_EQ(size_text_parse("64", "", 64, &v), 0);
    CHECK_EQ(v, 64);
    CHECK_EQ(size_text_parse("65", "", 64, &v), -ERANGE);
    CHECK_EQ(size_text_parse("1k", "k", 1023, &v), -ERANGE);
    CHECK_EQ(size_text_parse("18446744073709551615", "", UINT64_MAX, &v), 0);
    CHECK(v == UINT64_MAX);
    CHECK_EQ(size_text_parse("18446744073709551616", "", UINT64_MAX, &v), -ERANGE);
    CHECK_EQ(size_text_parse("99999999999999999999", "kmg", UINT64_MAX, &v), -ERANGE);
    CHECK_EQ(size_text_parse("16777216T", "kmgt", UINT64_MAX, &v), -ERANGE);
    CHECK_EQ(size_text_parse("16777215T", "kmgt", UINT64_MAX, &v), 0);
    CHECK(v == 16777215ull << 40);
    return 0;
}
