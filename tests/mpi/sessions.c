/* sessions.c — MPI 4.0 sessions: info and error handlers made before any initialization, two
 * sessions at once, every process set (mpi://WORLD, mpi://SELF, tmpi://node, tmpi://node/<i>)
 * listed, described and made a communicator with MPI_Comm_create_from_group, an
 * inter-communicator from two session groups, MPI_Init between sessions and a session used
 * after MPI_Finalize, and the error paths (bad session, unknown set, bad thread_level, n out of
 * range, session handlers called with their handle). */
#include <stdio.h>
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        int c_ = e_;                                                                               \
        if (e_ != MPI_SUCCESS) MPI_Error_class(e_, &c_);                                           \
        CHECK(c_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

static int handler_calls, handler_code;
static MPI_Session handler_session;

static void on_error(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_session = *s;
    handler_code = *code;
}

static int comm_errors;
static void comm_error(MPI_Comm *c, int *code, ...)
{
    (void)c, (void)code;
    comm_errors++;
}

/* A communicator of process set name in session s, its size checked against mpi_size. */
static MPI_Comm comm_of(MPI_Session s, const char *name)
{
    MPI_Group g;
    CHECK_MPI(MPI_Group_from_session_pset(s, name, &g));
    MPI_Info info;
    CHECK_MPI(MPI_Session_get_pset_info(s, name, &info));
    char val[32];
    int flag = 0;
    CHECK_MPI(MPI_Info_get_string(info, "mpi_size", &(int){sizeof val}, val, &flag));
    CHECK(flag, "%s: no mpi_size", name);
    MPI_Info_free(&info);
    int gsize, grank;
    MPI_Group_size(g, &gsize);
    MPI_Group_rank(g, &grank);
    CHECK(gsize == atoi(val), "%s: group of %d, mpi_size %s", name, gsize, val);
    MPI_Comm c = MPI_COMM_NULL;
    if (grank != MPI_UNDEFINED)
        CHECK_MPI(MPI_Comm_create_from_group(g, name, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Group_free(&g);
    return c;
}

/* Sum of 1 over c: its size, through a message of every member. */
static void check_comm(MPI_Comm c, int expect_size)
{
    int n, one = 1, sum = 0;
    CHECK_MPI(MPI_Comm_size(c, &n));
    CHECK(n == expect_size, "size %d, expected %d", n, expect_size);
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n, "allreduce gave %d over %d", sum, n);
}

static void psets(MPI_Session s, int *world_size, int *nnodes)
{
    int np = 0;
    CHECK_MPI(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &np));
    CHECK(np >= 4, "%d process sets", np);
    *nnodes = np - 3;
    const char *fixed[] = {"mpi://WORLD", "mpi://SELF", "tmpi://node"};
    for (int i = 0; i < np; i++) {
        char name[MPI_MAX_PSET_NAME_LEN], want[64];
        int len = 0;
        CHECK_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        if (i < 3) {
            snprintf(want, sizeof want, "%s", fixed[i]);
        } else {
            /* the nodes with ranks of the job, by their index in the host file */
            CHECK(len > 0 && len <= (int)sizeof want, "pset %d: length %d", i, len);
            CHECK_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, want));
            CHECK(!strncmp(want, "tmpi://node/", 12), "pset %d: \"%s\"", i, want);
        }
        CHECK(len == (int)strlen(want) + 1, "pset %d: length %d for %s", i, len, want);
        CHECK_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK(!strcmp(name, want), "pset %d: \"%s\", expected \"%s\"", i, name, want);
        len = 5; /* truncated: 4 characters and the NUL */
        CHECK_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK(!strncmp(name, want, 4) && name[4] == '\0', "truncated pset %d: \"%s\"", i, name);
    }
    MPI_Comm w = comm_of(s, "mpi://WORLD");
    MPI_Comm_size(w, world_size);
    check_comm(w, *world_size);
    MPI_Comm_free(&w);
    MPI_Comm self = comm_of(s, "mpi://self"); /* names are not case-sensitive */
    check_comm(self, 1);
    MPI_Comm_free(&self);
    /* my node's set and the node sets cover the world once */
    MPI_Comm node = comm_of(s, "tmpi://node");
    int nodesize;
    MPI_Comm_size(node, &nodesize);
    check_comm(node, nodesize);
    MPI_Comm_free(&node);
    int covered = 0, mine = 0;
    for (int i = 0; i < *nnodes; i++) {
        char name[64];
        int len = sizeof name;
        CHECK_MPI(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i + 3, &len, name));
        MPI_Group g;
        CHECK_MPI(MPI_Group_from_session_pset(s, name, &g));
        int gs, gr;
        MPI_Group_size(g, &gs);
        MPI_Group_rank(g, &gr);
        CHECK(gs > 0, "%s has no processes", name);
        covered += gs;
        if (gr != MPI_UNDEFINED) {
            mine++;
            CHECK(gs == nodesize, "%s has %d, tmpi://node %d", name, gs, nodesize);
            MPI_Comm c = comm_of(s, name);
            check_comm(c, gs);
            MPI_Comm_free(&c);
        }
        MPI_Group_free(&g);
    }
    CHECK(covered == *world_size && mine == 1, "node sets cover %d of %d, %d mine", covered,
          *world_size, mine);
}

/* Even and odd members of the world set as an inter-communicator. */
static void inter(MPI_Session s, int size)
{
    if (size < 2) return;
    MPI_Group world, even, odd;
    CHECK_MPI(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    int ranges[1][3] = {{0, size - 1, 2}}, rank;
    MPI_Group_rank(world, &rank);
    CHECK_MPI(MPI_Group_range_incl(world, 1, ranges, &even));
    CHECK_MPI(MPI_Group_range_excl(world, 1, ranges, &odd));
    MPI_Comm ic;
    CHECK_MPI(MPI_Intercomm_create_from_groups(rank % 2 ? odd : even, 0, rank % 2 ? even : odd, 0,
                                               "sessions inter", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                               &ic));
    int rsize, flag;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_remote_size(ic, &rsize);
    CHECK(flag && rsize == (rank % 2 ? (size + 1) / 2 : size / 2), "remote size %d", rsize);
    int lr, v = rank, got = -1;
    MPI_Comm_rank(ic, &lr);
    if (lr == 0)
        CHECK_MPI(
            MPI_Sendrecv(&v, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE));
    if (lr == 0) CHECK(got == (rank % 2 ? 0 : 1), "leader got %d", got);
    MPI_Comm_free(&ic);
    MPI_Group_free(&world);
    MPI_Group_free(&even);
    MPI_Group_free(&odd);
}

static void errors(MPI_Session s)
{
    MPI_Group g;
    EXPECT(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g), MPI_ERR_ARG);
    EXPECT(MPI_Group_from_session_pset(s, "tmpi://node/999999", &g), MPI_ERR_ARG);
    EXPECT(MPI_Group_from_session_pset(s, "tmpi://node/01", &g), MPI_ERR_ARG);
    int len = 0, np;
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &np);
    EXPECT(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, np, &len, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, NULL), MPI_ERR_ARG);
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "thread_level", "MPI_THREAD_PLENTY");
    MPI_Session s2 = MPI_SESSION_NULL;
    EXPECT(MPI_Session_init(bad, MPI_ERRORS_RETURN, &s2), MPI_ERR_INFO_VALUE);
    CHECK(s2 == MPI_SESSION_NULL, "a failed init gave session %d", s2);
    MPI_Info_free(&bad);
    /* the session's own handler: called with the session and the code */
    MPI_Errhandler eh, got;
    CHECK_MPI(MPI_Session_create_errhandler(on_error, &eh));
    CHECK_MPI(MPI_Session_set_errhandler(s, eh));
    CHECK_MPI(MPI_Session_get_errhandler(s, &got));
    CHECK(got == eh, "get_errhandler gave %d, set %d", got, eh);
    MPI_Errhandler_free(&got);
    handler_calls = 0;
    CHECK_MPI(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_session == s && handler_code == MPI_ERR_OTHER,
          "handler: %d calls, session %d, code %d", handler_calls, handler_session, handler_code);
    EXPECT(MPI_Group_from_session_pset(s, "no such set", &g), MPI_ERR_ARG);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_ARG, "handler after a bad set: %d, %d",
          handler_calls, handler_code);
    MPI_Comm_errhandler_function *cf = (MPI_Comm_errhandler_function *)on_error;
    MPI_Errhandler ceh;
    MPI_Comm_create_errhandler(cf, &ceh);
    EXPECT(MPI_Session_set_errhandler(s, ceh), MPI_ERR_ERRHANDLER); /* a communicator's handler */
    MPI_Errhandler_free(&ceh);
    CHECK_MPI(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);
    /* MPI_Comm_create_from_group raises its errors on the handler it is given */
    MPI_Errhandler given;
    MPI_Comm_create_errhandler(comm_error, &given);
    comm_errors = 0;
    MPI_Comm nc;
    EXPECT(MPI_Comm_create_from_group(MPI_GROUP_NULL, "bad", MPI_INFO_NULL, given, &nc),
           MPI_ERR_GROUP);
    EXPECT(MPI_Intercomm_create_from_groups(MPI_GROUP_NULL, 0, MPI_GROUP_NULL, 0, "bad",
                                            MPI_INFO_NULL, given, &nc),
           MPI_ERR_GROUP);
    CHECK(comm_errors == 2, "the given handler ran %d times", comm_errors);
    MPI_Errhandler_free(&given);
    /* a process left out calls it with MPI_GROUP_EMPTY and gets MPI_COMM_NULL */
    nc = MPI_COMM_WORLD;
    CHECK_MPI(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "empty", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                         &nc));
    CHECK(nc == MPI_COMM_NULL, "Comm_create_from_group(MPI_GROUP_EMPTY) gave %d", nc);
    /* not a session: MPI_COMM_WORLD's handler (returns here) */
    EXPECT(MPI_Session_get_num_psets(12345, MPI_INFO_NULL, &np), MPI_ERR_SESSION);
    MPI_Session none = MPI_SESSION_NULL;
    EXPECT(MPI_Session_finalize(&none), MPI_ERR_SESSION);
}

/* Sessions only, no MPI_Init: the job ends well after the last MPI_Session_finalize, and
 * fails naming the rank when one leaves with its session open ("leave"). */
static int sessions_only(int leave)
{
    MPI_Session s;
    CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Comm w = comm_of(s, "mpi://WORLD");
    int rank, size, flag = 1;
    MPI_Comm_rank(w, &rank);
    MPI_Comm_size(w, &size);
    check_comm(w, size);
    MPI_Initialized(&flag);
    CHECK(!flag, "MPI_Initialized true without MPI_Init");
    MPI_Barrier(w);
    MPI_Comm_disconnect(&w);
    if (leave && rank == 1 % size) return 0;
    CHECK_MPI(MPI_Session_finalize(&s));
    if (rank == 0) printf("OK\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) return sessions_only(!strcmp(argv[1], "leave"));
    /* before any initialization: an info and a session error handler */
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE"));
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Session_create_errhandler(on_error, &eh));
    MPI_Session a, b;
    CHECK_MPI(MPI_Session_init(info, eh, &a));
    CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &b));
    CHECK(a != b && a != MPI_SESSION_NULL, "sessions %d and %d", a, b);
    CHECK(MPI_Session_f2c(MPI_Session_c2f(a)) == a, "c2f/f2c");
    MPI_Info_free(&info);
    MPI_Errhandler_free(&eh); /* the session keeps it */
    int flag = 1;
    MPI_Initialized(&flag);
    CHECK(!flag, "MPI_Initialized true with sessions only");
    MPI_Info used;
    CHECK_MPI(MPI_Session_get_info(a, &used));
    char val[64];
    CHECK_MPI(MPI_Info_get_string(used, "thread_level", &(int){sizeof val}, val, &flag));
    CHECK(flag && !strcmp(val, "MPI_THREAD_MULTIPLE"), "thread_level \"%s\"", val);
    MPI_Info_free(&used);

    int size, nnodes;
    psets(a, &size, &nnodes);
    inter(b, size);

    /* MPI_Init with sessions open, then MPI_COMM_WORLD agrees with mpi://WORLD */
    int provided;
    CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Initialized(&flag);
    CHECK(flag, "MPI_Initialized false after MPI_Init");
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize == size, "MPI_COMM_WORLD %d, mpi://WORLD %d", wsize, size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errors(b);
    MPI_Finalize();
    MPI_Finalized(&flag);
    CHECK(flag, "MPI_Finalized false");

    /* sessions outlive the world model, and a new one opens after it */
    CHECK_MPI(MPI_Session_finalize(&a));
    CHECK(a == MPI_SESSION_NULL, "finalize left %d", a);
    MPI_Session c;
    CHECK_MPI(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_Comm w = comm_of(c, "mpi://WORLD");
    check_comm(w, size);
    int rank;
    MPI_Comm_rank(w, &rank);
    MPI_Barrier(w);
    if (rank == 0) printf("OK\n");
    MPI_Comm_free(&w);
    CHECK_MPI(MPI_Session_finalize(&c));
    CHECK_MPI(MPI_Session_finalize(&b));
    return 0;
}
