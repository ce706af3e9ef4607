/* groups.c — groups (every operation, with their error classes), Comm_create over the parent,
 * Comm_create_group over the group only, Comm_compare, Comm_split_type, names. */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

static int gsize(MPI_Group g)
{
    int s = -1;
    CHECK_MPI(MPI_Group_size(g, &s));
    return s;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Group world, even, odd, g;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK(gsize(world) == size, "world group size %d, expected %d", gsize(world), size);
    int r = -1;
    CHECK_MPI(MPI_Group_rank(world, &r));
    CHECK(r == rank, "group rank %d, expected %d", r, rank);

    /* even ranks by range, odd ranks by exclusion of the evens */
    int rng[1][3] = {{0, (size - 1) / 2 * 2, 2}};
    CHECK_MPI(MPI_Group_range_incl(world, 1, rng, &even));
    CHECK(gsize(even) == (size + 1) / 2, "even group %d", gsize(even));
    CHECK_MPI(MPI_Group_range_excl(world, 1, rng, &odd));
    CHECK(gsize(odd) == size / 2, "odd group %d", gsize(odd));
    CHECK_MPI(MPI_Group_rank(even, &r));
    CHECK(r == (rank % 2 ? MPI_UNDEFINED : rank / 2), "rank %d in even group: %d", rank, r);

    /* union(odd, even) is every rank, odds first; it is similar to world, not identical */
    CHECK_MPI(MPI_Group_union(odd, even, &g));
    int res;
    CHECK_MPI(MPI_Group_compare(g, world, &res));
    CHECK(res == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "union vs world: %d", res);
    int *in = malloc(sizeof(int) * size), *out = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++)
        in[i] = i;
    CHECK_MPI(MPI_Group_translate_ranks(g, size, in, world, out));
    for (int i = 0; i < size; i++) {
        int expect = i < size / 2 ? 2 * i + 1 : 2 * (i - size / 2);
        CHECK(out[i] == expect, "union rank %d is world %d, expected %d", i, out[i], expect);
    }
    CHECK_MPI(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL, "freed group not null");

    CHECK_MPI(MPI_Group_intersection(even, odd, &g));
    CHECK(gsize(g) == 0, "even & odd: %d", gsize(g));
    CHECK_MPI(MPI_Group_compare(g, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_IDENT, "empty intersection vs MPI_GROUP_EMPTY: %d", res);
    CHECK_MPI(MPI_Group_free(&g));
    CHECK_MPI(MPI_Group_difference(world, odd, &g));
    CHECK_MPI(MPI_Group_compare(g, even, &res));
    CHECK(res == MPI_IDENT, "world - odd vs even: %d", res);
    CHECK_MPI(MPI_Group_free(&g));

    /* incl in reverse order; excl of rank 0; translate with PROC_NULL */
    for (int i = 0; i < size; i++)
        in[i] = size - 1 - i;
    CHECK_MPI(MPI_Group_incl(world, size, in, &g));
    CHECK_MPI(MPI_Group_rank(g, &r));
    CHECK(r == size - 1 - rank, "reversed rank %d", r);
    int pn = MPI_PROC_NULL, pr = 0;
    CHECK_MPI(MPI_Group_translate_ranks(g, 1, &pn, world, &pr));
    CHECK(pr == MPI_PROC_NULL, "PROC_NULL translated to %d", pr);
    CHECK_MPI(MPI_Group_free(&g));
    int zero = 0;
    CHECK_MPI(MPI_Group_excl(world, 1, &zero, &g));
    CHECK(gsize(g) == size - 1, "excl 0: %d", gsize(g));
    CHECK_MPI(MPI_Group_free(&g));

    /* error classes */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int bad[2] = {0, size};
    EXPECT(MPI_Group_incl(world, 1, &bad[1], &g), MPI_ERR_RANK);
    EXPECT(MPI_Group_incl(world, -1, bad, &g), MPI_ERR_ARG);
    int dup[2] = {0, 0};
    EXPECT(MPI_Group_incl(world, 2, dup, &g), size > 1 ? MPI_ERR_RANK : MPI_ERR_ARG);
    EXPECT(MPI_Group_excl(world, 1, &bad[1], &g), MPI_ERR_RANK);
    int badr[1][3] = {{0, size, 1}};
    EXPECT(MPI_Group_range_incl(world, 1, badr, &g), MPI_ERR_RANK);
    int zstride[1][3] = {{0, 0, 0}};
    EXPECT(MPI_Group_range_incl(world, 1, zstride, &g), MPI_ERR_ARG);
    EXPECT(MPI_Group_translate_ranks(world, 1, &bad[1], world, out), MPI_ERR_RANK);
    EXPECT(MPI_Group_size(MPI_GROUP_NULL, &r), MPI_ERR_GROUP);
    EXPECT(MPI_Group_rank(12345, &r), MPI_ERR_GROUP);
    MPI_Group gn = MPI_GROUP_NULL;
    EXPECT(MPI_Group_free(&gn), MPI_ERR_GROUP);
    EXPECT(MPI_Comm_group(MPI_COMM_NULL, &g), MPI_ERR_COMM);
    EXPECT(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &g), MPI_ERR_GROUP);

    /* Comm_create over the parent: the evens, ordered as the group */
    MPI_Comm ce;
    CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, even, &ce));
    if (rank % 2) {
        CHECK(ce == MPI_COMM_NULL, "odd rank %d got a communicator", rank);
    } else {
        int cr, cs, sum = 0;
        MPI_Comm_rank(ce, &cr);
        MPI_Comm_size(ce, &cs);
        CHECK(cr == rank / 2 && cs == (size + 1) / 2, "even comm rank %d size %d", cr, cs);
        CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ce));
        int expect = 0;
        for (int i = 0; i < size; i += 2)
            expect += i;
        CHECK(sum == expect, "sum over evens %d, expected %d", sum, expect);
        CHECK_MPI(MPI_Comm_free(&ce));
    }
    /* Comm_create with disjoint groups: evens and odds each get their own */
    MPI_Comm cm;
    CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, rank % 2 ? odd : even, &cm));
    CHECK(cm != MPI_COMM_NULL, "no communicator for my half");
    int hs;
    MPI_Comm_size(cm, &hs);
    CHECK(hs == (rank % 2 ? size / 2 : (size + 1) / 2), "half size %d", hs);
    CHECK_MPI(MPI_Comm_free(&cm));

    /* Comm_create_group: only the odd ranks call it, twice with different tags */
    if (rank % 2) {
        MPI_Comm co, co2;
        CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, odd, 7, &co));
        CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, odd, 8, &co2));
        int cr, v = rank, got = -1;
        MPI_Comm_rank(co, &cr);
        CHECK(cr == rank / 2, "odd comm rank %d", cr);
        CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, 0, co));
        CHECK(v == 1, "bcast from odd rank 0 gave %d", v);
        CHECK_MPI(MPI_Comm_compare(co, co2, &res));
        CHECK(res == MPI_CONGRUENT, "two create_group comms compare %d", res);
        CHECK_MPI(MPI_Allreduce(&rank, &got, 1, MPI_INT, MPI_MAX, co2));
        CHECK(got == (size % 2 ? size - 2 : size - 1), "max odd %d", got);
        CHECK_MPI(MPI_Comm_free(&co));
        CHECK_MPI(MPI_Comm_free(&co2));
    }
    EXPECT(MPI_Comm_create_group(MPI_COMM_WORLD, world, -5, &cm), MPI_ERR_TAG);

    /* compare: dup is congruent, a reordering split is similar, a half is unequal */
    MPI_Comm d, rev;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, d, &res));
    CHECK(res == MPI_CONGRUENT, "dup compare %d", res);
    CHECK_MPI(MPI_Comm_compare(d, d, &res));
    CHECK(res == MPI_IDENT, "self compare %d", res);
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, rev, &res));
    CHECK(res == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "reversed compare %d", res);
    int flag = 1;
    CHECK_MPI(MPI_Comm_test_inter(rev, &flag));
    CHECK(!flag, "an intra-communicator tests inter");

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world name \"%s\"", name);
    CHECK_MPI(MPI_Comm_get_name(d, name, &len));
    CHECK(len == 0 && name[0] == 0, "unnamed dup has name \"%s\"", name);
    CHECK_MPI(MPI_Comm_set_name(d, "my dup"));
    CHECK_MPI(MPI_Comm_get_name(d, name, &len));
    CHECK(!strcmp(name, "my dup") && len == 6, "dup name \"%s\"", name);

    /* split_type SHARED: the ranks of this node; UNDEFINED gives no communicator */
    MPI_Comm node, none;
    CHECK_MPI(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    int ns, nsum = 0;
    MPI_Comm_size(node, &ns);
    CHECK_MPI(MPI_Allreduce(&ns, &nsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(nsum >= size && ns >= 1, "node sizes sum %d", nsum);
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
    CHECK(none == MPI_COMM_NULL, "split_type UNDEFINED gave a communicator");
    EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &none), MPI_ERR_ARG);

    CHECK_MPI(MPI_Comm_free(&node));
    CHECK_MPI(MPI_Comm_free(&rev));
    CHECK_MPI(MPI_Comm_free(&d));
    EXPECT(MPI_Comm_free(&d), MPI_ERR_COMM);
    MPI_Comm w = MPI_COMM_WORLD;
    EXPECT(MPI_Comm_free(&w), MPI_ERR_COMM);
    CHECK_MPI(MPI_Group_free(&even));
    CHECK_MPI(MPI_Group_free(&odd));
    CHECK_MPI(MPI_Group_free(&world));
    free(in);
    free(out);
    return finish_ok();
}
