/* mpi4.c — the MPI-4.0 pieces not tested with their MPI-3.1 relatives: MPI_VERSION 4.1 as
 * MPI_Get_version and MPI_Get_library_version say, MPI_Intercomm_create_from_groups (groups
 * of MPI_COMM_WORLD's processes), MPI_Comm_create_from_group, MPI_Info_create_env, and MPI-4.1's
 * MPI_Remove_error_string / _code / _class. */
#include <stdio.h>
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

static int rank, size;

static void version(void)
{
    CHECK(MPI_VERSION == 4 && MPI_SUBVERSION == 1, "mpi.h says %d.%d", MPI_VERSION, MPI_SUBVERSION);
    int v, sv, len;
    CHECK_MPI(MPI_Get_version(&v, &sv));
    CHECK(v == 4 && sv == 1, "MPI_Get_version: %d.%d", v, sv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    CHECK_MPI(MPI_Get_library_version(lib, &len));
    CHECK(strstr(lib, "MPI 4.1") != NULL, "MPI_Get_library_version: \"%s\"", lib);
}

/* Odd and even world ranks as the two groups; leaders at group ranks 1 and 0 where they
 * exist. */
static void from_groups(void)
{
    if (size < 2) return;
    MPI_Group world, even, odd;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int ranges[1][3] = {{0, size - 1, 2}};
    CHECK_MPI(MPI_Group_range_incl(world, 1, ranges, &even));
    CHECK_MPI(MPI_Group_range_excl(world, 1, ranges, &odd));
    int side = rank % 2, nodd = size / 2, neven = size - nodd;
    MPI_Group mine = side ? odd : even, theirs = side ? even : odd;
    int lleader = side ? 0 : (neven > 1), rleader = side ? (neven > 1) : 0;
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_no_any_source", "true"));
    MPI_Comm ic;
    CHECK_MPI(MPI_Intercomm_create_from_groups(mine, lleader, theirs, rleader, "mpi4 test", info,
                                               MPI_ERRORS_RETURN, &ic));
    int flag = 0, lsize, rsize, lrank;
    CHECK_MPI(MPI_Comm_test_inter(ic, &flag));
    CHECK_MPI(MPI_Comm_size(ic, &lsize));
    CHECK_MPI(MPI_Comm_remote_size(ic, &rsize));
    CHECK_MPI(MPI_Comm_rank(ic, &lrank));
    CHECK(flag && lsize == (side ? nodd : neven) && rsize == (side ? neven : nodd) &&
              lrank == rank / 2,
          "inter-communicator: flag %d size %d remote %d rank %d", flag, lsize, rsize, lrank);
    /* The error handler given applies: a bad rank returns instead of aborting. */
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_get_errhandler(ic, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "error handler %d", eh);
    int x = 0;
    EXPECT(MPI_Send(&x, 1, MPI_INT, rsize, 0, ic), MPI_ERR_RANK);
    MPI_Info got;
    char val[16];
    CHECK_MPI(MPI_Comm_get_info(ic, &got));
    CHECK_MPI(MPI_Info_get(got, "mpi_assert_no_any_source", 15, val, &flag));
    CHECK(flag && !strcmp(val, "true"), "hint missing");
    CHECK_MPI(MPI_Info_free(&got));
    /* It works: point-to-point to the peer of the same index, and a collective. */
    int peer = lrank < rsize ? lrank : rsize - 1, got_v = -1, one = rank;
    MPI_Request rq[2];
    int n_in = 0; /* how many of the remote group send to me */
    for (int r = 0; r < rsize; r++)
        if ((r < lsize ? r : lsize - 1) == lrank) n_in++;
    CHECK_MPI(MPI_Isend(&one, 1, MPI_INT, peer, 3, ic, &rq[0]));
    for (int i = 0; i < n_in; i++) {
        MPI_Status st;
        CHECK_MPI(MPI_Recv(&got_v, 1, MPI_INT, MPI_ANY_SOURCE, 3, ic, &st));
        CHECK(got_v % 2 != side, "a message from my own side: %d", got_v);
    }
    CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    int sum = -1;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic));
    int want = 0;
    for (int r = 0; r < size; r++)
        if (r % 2 != side) want += r;
    CHECK(sum == want, "Allreduce over it: %d, expected %d", sum, want);
    CHECK_MPI(MPI_Comm_free(&ic));

    /* Errors, each returned to the caller. */
    EXPECT(MPI_Intercomm_create_from_groups(mine, lleader, mine, 0, "t", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &ic),
           MPI_ERR_GROUP);
    EXPECT(MPI_Intercomm_create_from_groups(theirs, 0, mine, 0, "t", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &ic),
           MPI_ERR_GROUP);
    EXPECT(MPI_Intercomm_create_from_groups(mine, lsize, theirs, 0, "t", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &ic),
           MPI_ERR_RANK);
    EXPECT(MPI_Intercomm_create_from_groups(mine, 0, theirs, -1, "t", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &ic),
           MPI_ERR_RANK);
    EXPECT(MPI_Intercomm_create_from_groups(MPI_GROUP_NULL, 0, theirs, 0, "t", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &ic),
           MPI_ERR_GROUP);
    EXPECT(MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, NULL, MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &ic),
           MPI_ERR_ARG);
    EXPECT(MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "t", MPI_INFO_NULL,
                                            (MPI_Errhandler)4321, &ic),
           MPI_ERR_ERRHANDLER);
    MPI_Group *all[] = {&world, &even, &odd};
    for (int i = 0; i < 3; i++)
        CHECK_MPI(MPI_Group_free(all[i]));
    CHECK_MPI(MPI_Info_free(&info));
}

/* MPI_Comm_create_from_group: halves of the world, each its own communicator; the handler
 * and hints given apply.  MPI_Info_create_env: a copy of MPI_INFO_ENV. */
static void from_group(void)
{
    MPI_Group world, half;
    CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int lo = rank < (size + 1) / 2, n = lo ? (size + 1) / 2 : size / 2;
    int range[1][3] = {{lo ? 0 : (size + 1) / 2, lo ? (size + 1) / 2 - 1 : size - 1, 1}};
    CHECK_MPI(MPI_Group_range_incl(world, 1, range, &half));
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_allow_overtaking", "true"));
    MPI_Comm c;
    CHECK_MPI(
        MPI_Comm_create_from_group(half, lo ? "lower" : "upper", info, MPI_ERRORS_RETURN, &c));
    int cs, cr, sum = -1;
    CHECK_MPI(MPI_Comm_size(c, &cs));
    CHECK_MPI(MPI_Comm_rank(c, &cr));
    CHECK(cs == n && cr == rank - range[0][0], "from group: size %d rank %d", cs, cr);
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    int want = 0;
    for (int r = range[0][0]; r <= range[0][1]; r++)
        want += r;
    CHECK(sum == want, "Allreduce over it: %d, expected %d", sum, want);
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "error handler %d", eh);
    MPI_Info got;
    char val[16];
    int flag;
    CHECK_MPI(MPI_Comm_get_info(c, &got));
    CHECK_MPI(MPI_Info_get(got, "mpi_assert_allow_overtaking", 15, val, &flag));
    CHECK(flag && !strcmp(val, "true"), "hint missing");
    CHECK_MPI(MPI_Info_free(&got));
    CHECK_MPI(MPI_Comm_free(&c));
    MPI_Group other;
    CHECK_MPI(MPI_Group_difference(world, half, &other));
    if (size > 1)
        EXPECT(MPI_Comm_create_from_group(other, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
               MPI_ERR_GROUP);
    EXPECT(MPI_Comm_create_from_group(half, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
           MPI_ERR_ARG);
    EXPECT(MPI_Comm_create_from_group(MPI_GROUP_NULL, "t", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c),
           MPI_ERR_GROUP);
    MPI_Group *all[] = {&world, &half, &other};
    for (int i = 0; i < 3; i++)
        CHECK_MPI(MPI_Group_free(all[i]));
    CHECK_MPI(MPI_Info_free(&info));

    MPI_Info env;
    CHECK_MPI(MPI_Info_create_env(0, NULL, &env));
    char procs[32];
    CHECK_MPI(MPI_Info_get(env, "maxprocs", 31, procs, &flag));
    CHECK(flag && atoi(procs) == size, "Info_create_env maxprocs %s", flag ? procs : "(none)");
    CHECK_MPI(MPI_Info_free(&env));
}

static void remove_errors(void)
{
    int cls, code, *last, flag, before;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    before = *last;
    CHECK_MPI(MPI_Add_error_class(&cls));
    CHECK_MPI(MPI_Add_error_code(cls, &code));
    CHECK_MPI(MPI_Add_error_string(code, "a code of mine"));
    char s[MPI_MAX_ERROR_STRING];
    int len, got;
    /* Out of order: each refused, nothing lost. */
    EXPECT(MPI_Remove_error_class(cls), MPI_ERR_ARG);
    EXPECT(MPI_Remove_error_code(code), MPI_ERR_ARG);
    EXPECT(MPI_Remove_error_code(cls), MPI_ERR_ARG);
    EXPECT(MPI_Remove_error_class(code), MPI_ERR_ARG);
    EXPECT(MPI_Remove_error_class(MPI_ERR_RANK), MPI_ERR_ARG);
    EXPECT(MPI_Remove_error_string(MPI_ERR_TAG), MPI_ERR_ARG);
    CHECK_MPI(MPI_Error_string(code, s, &len));
    CHECK(!strcmp(s, "a code of mine"), "string \"%s\"", s);
    /* In order. */
    CHECK_MPI(MPI_Remove_error_string(code));
    EXPECT(MPI_Remove_error_string(code), MPI_ERR_ARG);
    CHECK_MPI(MPI_Remove_error_code(code));
    EXPECT(MPI_Error_class(code, &got), MPI_ERR_ARG);
    CHECK_MPI(MPI_Remove_error_class(cls));
    EXPECT(MPI_Error_class(cls, &got), MPI_ERR_ARG);
    EXPECT(MPI_Add_error_code(cls, &code), MPI_ERR_ARG);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(*last == before, "LASTUSEDCODE %d after removing everything added, was %d", *last,
          before);
    /* A new class works as before. */
    CHECK_MPI(MPI_Add_error_class(&cls));
    CHECK_MPI(MPI_Error_class(cls, &got));
    CHECK(got == cls, "new class %d has class %d", cls, got);
    CHECK_MPI(MPI_Remove_error_class(cls));
}

/* MPI 4.1 §11.4.1: MPI_Info_create_env before MPI_Init, with main's arguments, says what the
 * one after MPI_Init says; MPI_INFO_ENV read before MPI_Init has the command after it. */
static void env_before_init(int argc, char **argv, MPI_Info pre)
{
    char a[MPI_MAX_INFO_VAL], b[MPI_MAX_INFO_VAL];
    int fa = 0, fb = 0;
    MPI_Info post;
    CHECK_MPI(MPI_Info_create_env(argc, argv, &post));
    const char *keys[] = {"command", "maxprocs", "thread_level", "wdir"};
    for (int i = 0; i < 4; i++) {
        CHECK_MPI(MPI_Info_get(pre, keys[i], MPI_MAX_INFO_VAL - 1, a, &fa));
        CHECK_MPI(MPI_Info_get(post, keys[i], MPI_MAX_INFO_VAL - 1, b, &fb));
        CHECK(fa && fb && strcmp(a, b) == 0, "create_env %s: before MPI_Init %s, after %s", keys[i],
              fa ? a : "(none)", fb ? b : "(none)");
    }
    CHECK_MPI(MPI_Info_get(pre, "command", MPI_MAX_INFO_VAL - 1, a, &fa));
    CHECK(fa && strcmp(a, argv[0]) == 0, "create_env command %s, argv[0] %s", a, argv[0]);
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL - 1, b, &fb));
    CHECK(fb && strcmp(b, argv[0]) == 0, "MPI_INFO_ENV command after MPI_Init: %s",
          fb ? b : "(none)");
    CHECK_MPI(MPI_Info_free(&pre));
    CHECK_MPI(MPI_Info_free(&post));
}

int main(int argc, char **argv)
{
    MPI_Info pre = MPI_INFO_NULL;
    char v[MPI_MAX_INFO_VAL];
    int flag;
    CHECK_MPI(MPI_Info_create_env(argc, argv, &pre));
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    env_before_init(argc, argv, pre);
    version();
    from_groups();
    from_group();
    remove_errors();
    return finish_ok();
}
