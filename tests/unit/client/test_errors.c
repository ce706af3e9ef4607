/* test_errors.c — argument checking (error classes through MPI_ERRORS_RETURN), the fatal
 * handler's message and job abort, MPI_Abort waking blocked ranks, and error strings. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define EXPECT_ERR(call, cls)                                                                      \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        TH_CHECK(e_ == (cls), "%s: expected %s (%d), got %d", #call, #cls, cls, e_);               \
    } while (0)

static int rank_classes(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    TH_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Errhandler eh;
    TH_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    TH_CHECK(eh == MPI_ERRORS_RETURN, "expected MPI_ERRORS_RETURN, got %d", eh);
    int v = 0, out = 0;
    MPI_Request rq;
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, 7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, 1, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    int *tag_ub = NULL, tflag = 0;
    TH_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &tflag));
    TH_CHECK(tflag && tag_ub, "MPI_TAG_UB attribute missing");
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, 1, *tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_ERR(MPI_Recv(&v, 1, MPI_INT, 1, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_TAG);
    EXPECT_ERR(MPI_Send(&v, -1, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_ERR(MPI_Send(&v, 1, 999, 1, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_ERR(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 1, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_ERR(MPI_Send(NULL, 3, MPI_INT, 1, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, 1, 0, 77), MPI_ERR_COMM);
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_ERR(MPI_Isend(&v, 1, MPI_INT, 9, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Irecv(&v, 1, MPI_INT, 9, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Bcast(&v, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_ERR(MPI_Reduce(&v, &out, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT_ERR(MPI_Allreduce(&v, &out, 1, MPI_INT, 99, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_ERR(MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_ERR(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_ERR(MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT_ERR(MPI_Allreduce(&v, &out, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_ERR(MPI_Barrier(123), MPI_ERR_COMM);
    int sz;
    EXPECT_ERR(MPI_Comm_size(MPI_COMM_NULL, &sz), MPI_ERR_COMM);
    MPI_Comm w = MPI_COMM_WORLD;
    EXPECT_ERR(MPI_Comm_free(&w), MPI_ERR_COMM);
    /* the error handler belongs to the communicator: SELF still returns errors? no, fatal by
     * default; set it too and check it works independently */
    TH_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_ERR(MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);

    char s[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    TH_MPI(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
    TH_CHECK(len > 0 && strstr(s, "truncat"), "Error_string(MPI_ERR_TRUNCATE) = \"%s\"", s);
    TH_MPI(MPI_Error_class(MPI_ERR_RANK, &cls));
    TH_CHECK(cls == MPI_ERR_RANK, "Error_class: expected %d got %d", MPI_ERR_RANK, cls);
    int *ub = NULL, flag = 0;
    TH_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    TH_CHECK(flag && ub && *ub >= 32767, "MPI_TAG_UB attribute: flag %d value %d", flag,
             ub ? *ub : -1);
    /* a valid call still works after errors */
    int sum = 0, one = 1;
    TH_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    TH_CHECK(sum == size, "expected %d got %d", size, sum);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_classes(void)
{
    struct th_opts o = {.nranks = 2};
    return th_run(&o, rank_classes, NULL, NULL);
}

/* With the default handler an invalid rank aborts the job with a one-line message. */
static int rank_fatal(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int v = 0;
    if (rank == 1)
        MPI_Send(&v, 1, MPI_INT, 7, 0, MPI_COMM_WORLD);
    else
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never matched */
    return 0;
}
static int t_fatal(void)
{
    struct th_opts o = {.nranks = 3};
    struct th_result res;
    th_run(&o, rank_fatal, NULL, &res);
    const char *want = "rank 1: MPI_Send: invalid rank 7 (MPI_ERR_RANK)";
    if (!res.aborted || strcmp(res.abort_why, want) != 0 || res.abort_code == 0) {
        fprintf(stderr, "  expected abort \"%s\", got aborted=%d code=%d \"%s\"\n", want,
                res.aborted, res.abort_code, res.abort_why);
        return 1;
    }
    return 0;
}

/* MPI_Abort while the other ranks are blocked in Recv, Barrier and Probe: every rank ends. */
static int rank_abort(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int v = 0;
    if (rank == 0) {
        struct timespec ts = {0, 30 * 1000000L};
        nanosleep(&ts, NULL);
        MPI_Abort(MPI_COMM_WORLD, 17);
    } else if (rank % 3 == 1) {
        MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank % 3 == 2) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        MPI_Probe(0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return 0;
}
static int t_abort(void)
{
    struct th_opts o = {.nranks = 16};
    struct th_result res;
    th_run(&o, rank_abort, NULL, &res); /* returning at all means everyone was woken */
    if (!res.aborted || res.abort_code != 17 ||
        !strstr(res.abort_why, "MPI_Abort called on MPI_COMM_WORLD (errorcode 17)")) {
        fprintf(stderr, "  expected abort code 17, got aborted=%d code=%d \"%s\"\n", res.aborted,
                res.abort_code, res.abort_why);
        return 1;
    }
    return 0;
}

/* A thread the rank started is not a rank thread: MPI calls there fail with MPI_ERR_OTHER
 * instead of ending the process. */
static void *helper_thread(void *arg)
{
    int *ret = arg, v = 0;
    *ret = MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    return NULL;
}

static int rank_thread(int rank, int size, void *arg)
{
    TH_MPI(MPI_Init(NULL, NULL));
    int provided = -1, is_main = 0, e = -1;
    TH_MPI(MPI_Query_thread(&provided));
    TH_CHECK(provided == MPI_THREAD_SINGLE, "MPI_Init: expected THREAD_SINGLE, got %d", provided);
    TH_MPI(MPI_Is_thread_main(&is_main));
    TH_CHECK(is_main, "MPI_Is_thread_main false on the main thread");
    pthread_t t;
    TH_CHECK(pthread_create(&t, NULL, helper_thread, &e) == 0, "pthread_create");
    pthread_join(t, NULL);
    TH_CHECK(e == MPI_ERR_OTHER, "MPI call on a non-rank thread: expected %d, got %d",
             MPI_ERR_OTHER, e);
    TH_MPI(MPI_Finalize());
    return 0;
}
static int t_thread(void)
{
    struct th_opts o = {.nranks = 2};
    return th_run(&o, rank_thread, NULL, NULL);
}

int main(int argc, char **argv)
{
    static const struct th_test tests[] = {{"classes", t_classes},
                                           {"fatal", t_fatal},
                                           {"abort", t_abort},
                                           {"thread", t_thread},
                                           {NULL, NULL}};
    return th_main(argc, argv, tests);
}
