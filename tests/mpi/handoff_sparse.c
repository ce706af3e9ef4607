/* handoff_sparse.c — receives into sparse layouts that the sender hands to the receiver to lay
 * out (libclient/intra/handoff.h, and packed in fast boxes: fbox.h): the receive posted before the
 * send, into columns of doubles from contiguous data, from columns and from another stride;
 * completed by Wait, Waitall, Waitany, a Test loop, a Request_get_status loop, a blocking Recv and
 * a persistent receive; truncated; from every other rank at once; from several threads; a freed
 * pending receive. Every element is checked, and every cell a receive must not write. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int rank, size, partner;
static double *freed_buf; /* freed_pending's receive buffer, freed after MPI_Finalize */

/* Column length in doubles: 300 (2,400 B) goes through a fast box once a pair has one, 700
 * (5,600 B) through the hand-off stack; both below the eager limit. */
static int rows;
#define NC 9 /* columns of the matrix a column lives in */

static double val(int r, int salt, int i)
{
    return r * 1e6 + salt * 1e3 + i;
}

/* Both of a pair at the same point (a rank without a partner pairs with itself), on a tag
 * of its own: the data tags stay below SYNC_TAGS. */
#define SYNC_TAGS 5000
static void pair_sync(int tag)
{
    CHECK_MPI(MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, SYNC_TAGS + tag, NULL, 0, MPI_BYTE, partner,
                           SYNC_TAGS + tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* Fills column c of an rows x NC matrix with the values of (r, salt), the rest with -1. */
static void fill(double *m, int c, int r, int salt)
{
    for (int i = 0; i < rows * NC; i++)
        m[i] = -1.0;
    for (int i = 0; i < rows; i++)
        m[i * NC + c] = val(r, salt, i);
}

/* Column c of m holds the first n values of (r, salt), its rest and every other cell -1. */
static void check_col(const double *m, int c, int n, int r, int salt, const char *what)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < NC; j++) {
            double want = j == c && i < n ? val(r, salt, i) : -1.0;
            CHECK(m[i * NC + j] == want, "%s: cell (%d, %d) is %g, expected %g", what, i, j,
                  m[i * NC + j], want);
        }
}

enum how { BY_WAIT, BY_WAITANY, BY_TEST, BY_STATUS, HOW_COUNT };

static void complete(MPI_Request *rq, enum how how, MPI_Status *st)
{
    int flag = 0, idx = -1;
    switch (how) {
    case BY_WAIT:
        CHECK_MPI(MPI_Wait(rq, st));
        break;
    case BY_WAITANY:
        CHECK_MPI(MPI_Waitany(1, rq, &idx, st));
        CHECK(idx == 0, "Waitany index %d", idx);
        break;
    case BY_TEST:
        while (!flag)
            CHECK_MPI(MPI_Test(rq, &flag, st));
        break;
    case BY_STATUS:
        while (!flag)
            CHECK_MPI(MPI_Request_get_status(*rq, &flag, st));
        CHECK_MPI(MPI_Wait(rq, MPI_STATUS_IGNORE));
        break;
    default:
        break;
    }
}

/* The partner's data in three send layouts into a posted column receive, completed four ways. */
static void layouts(void)
{
    double *src = malloc(sizeof(double) * rows * NC), *dst = malloc(sizeof(double) * rows * NC);
    double *flat = malloc(sizeof(double) * rows);
    CHECK(src && dst && flat, "out of memory");
    MPI_Datatype col, col2;
    CHECK_MPI(MPI_Type_vector(rows, 1, NC, MPI_DOUBLE, &col));
    CHECK_MPI(MPI_Type_commit(&col));
    /* the same column read from a matrix of 2 * NC columns (another stride) */
    CHECK_MPI(MPI_Type_vector(rows, 1, 2 * NC, MPI_DOUBLE, &col2));
    CHECK_MPI(MPI_Type_commit(&col2));
    double *wide = malloc(sizeof(double) * rows * 2 * NC);
    CHECK(wide, "out of memory");
    for (int kind = 0; kind < 3; kind++)
        for (int how = 0; how < HOW_COUNT; how++) {
            int salt = kind * 10 + how, tag = 100 + salt;
            for (int i = 0; i < rows; i++)
                flat[i] = val(rank, salt, i);
            fill(src, 2, rank, salt);
            for (int i = 0; i < rows * 2 * NC; i++)
                wide[i] = i % (2 * NC) == 5 ? val(rank, salt, i / (2 * NC)) : -2.0;
            for (int i = 0; i < rows * NC; i++)
                dst[i] = -1.0;
            MPI_Request rq, sq;
            CHECK_MPI(MPI_Irecv(&dst[4], 1, col, partner, tag, MPI_COMM_WORLD, &rq));
            pair_sync(tag);
            if (kind == 0)
                CHECK_MPI(MPI_Isend(flat, rows, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD, &sq));
            else if (kind == 1)
                CHECK_MPI(MPI_Isend(&src[2], 1, col, partner, tag, MPI_COMM_WORLD, &sq));
            else
                CHECK_MPI(MPI_Isend(&wide[5], 1, col2, partner, tag, MPI_COMM_WORLD, &sq));
            MPI_Status st;
            complete(&rq, (enum how)how, &st);
            CHECK_MPI(MPI_Wait(&sq, MPI_STATUS_IGNORE));
            CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == tag, "status %d/%d", st.MPI_SOURCE,
                  st.MPI_TAG);
            int cnt = -1;
            MPI_Get_count(&st, MPI_DOUBLE, &cnt);
            CHECK(cnt == rows, "count %d", cnt);
            char what[64];
            snprintf(what, sizeof what, "layout %d completed by %d", kind, how);
            check_col(dst, 4, rows, partner, salt, what);
            pair_sync(tag); /* the partner reuses its buffers only after this */
        }
    /* a blocking receive and a persistent one, posted before the partner sends */
    MPI_Request pr;
    CHECK_MPI(MPI_Recv_init(&dst[1], 1, col, partner, 300, MPI_COMM_WORLD, &pr));
    for (int round = 0; round < 3; round++) {
        fill(src, 0, rank, 50 + round);
        for (int i = 0; i < rows * NC; i++)
            dst[i] = -1.0;
        if (rank < partner) {
            CHECK_MPI(MPI_Recv(&dst[1], 1, col, partner, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Send(&src[0], 1, col, partner, 200, MPI_COMM_WORLD));
        } else {
            usleep(2000); /* the partner's Recv is posted by now, most runs */
            CHECK_MPI(MPI_Send(&src[0], 1, col, partner, 200, MPI_COMM_WORLD));
            CHECK_MPI(MPI_Recv(&dst[1], 1, col, partner, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        check_col(dst, 1, rows, partner, 50 + round, "blocking Recv");
        for (int i = 0; i < rows * NC; i++)
            dst[i] = -1.0;
        CHECK_MPI(MPI_Start(&pr));
        pair_sync(301);
        CHECK_MPI(MPI_Send(&src[0], 1, col, partner, 300, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        check_col(dst, 1, rows, partner, 50 + round, "persistent receive");
        pair_sync(302);
    }
    CHECK_MPI(MPI_Request_free(&pr));
    MPI_Type_free(&col);
    MPI_Type_free(&col2);
    free(src);
    free(dst);
    free(flat);
    free(wide);
}

/* A message longer than the posted column: MPI_ERR_TRUNCATE, rows - 50 doubles laid out and
 * nothing else written. */
static void truncation(void)
{
    double *dst = malloc(sizeof(double) * rows * NC), *flat = malloc(sizeof(double) * rows);
    CHECK(dst && flat, "out of memory");
    MPI_Datatype shortcol;
    CHECK_MPI(MPI_Type_vector(rows - 50, 1, NC, MPI_DOUBLE, &shortcol));
    CHECK_MPI(MPI_Type_commit(&shortcol));
    for (int i = 0; i < rows; i++)
        flat[i] = val(rank, 7, i);
    for (int i = 0; i < rows * NC; i++)
        dst[i] = -1.0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request rq;
    CHECK_MPI(MPI_Irecv(&dst[3], 1, shortcol, partner, 400, MPI_COMM_WORLD, &rq));
    pair_sync(401);
    CHECK_MPI(MPI_Send(flat, rows, MPI_DOUBLE, partner, 400, MPI_COMM_WORLD));
    MPI_Status st;
    int e = MPI_Wait(&rq, &st);
    CHECK(e == MPI_ERR_TRUNCATE, "truncation: Wait returned %d", e);
    int cnt = -1;
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    CHECK(cnt == rows - 50, "truncation: count %d", cnt);
    check_col(dst, 3, rows - 50, partner, 7, "truncation");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&shortcol);
    free(dst);
    free(flat);
    pair_sync(402);
}

/* Every rank posts a column receive from every other, then sends them all theirs: several
 * messages wait on one rank's hand-off stack at once. */
static void all_to_all(void)
{
    double *dst = malloc(sizeof(double) * (size_t)rows * (size_t)size);
    double *flat = malloc(sizeof(double) * rows);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    CHECK(dst && flat && rq, "out of memory");
    MPI_Datatype col; /* column j of an rows x size matrix */
    CHECK_MPI(MPI_Type_vector(rows, 1, size, MPI_DOUBLE, &col));
    CHECK_MPI(MPI_Type_commit(&col));
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < rows * size; i++)
            dst[i] = -1.0;
        for (int i = 0; i < rows; i++)
            flat[i] = val(rank, round, i);
        for (int r = 0; r < size; r++)
            CHECK_MPI(MPI_Irecv(&dst[r], 1, col, r, 500, MPI_COMM_WORLD, &rq[r]));
        MPI_Barrier(MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            CHECK_MPI(MPI_Isend(flat, rows, MPI_DOUBLE, r, 500, MPI_COMM_WORLD, &rq[size + r]));
        CHECK_MPI(MPI_Waitall(2 * size, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < rows; i++)
            for (int r = 0; r < size; r++)
                CHECK(dst[i * size + r] == val(r, round, i), "all to all round %d: row %d from %d",
                      round, i, r);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Type_free(&col);
    free(dst);
    free(flat);
    free(rq);
}

/* Several threads of each rank receive columns at once, each on its own tag. */
#define NTHREADS 3
static void *thread_main(void *arg)
{
    int id = (int)(intptr_t)arg;
    double *dst = malloc(sizeof(double) * rows * NC), *flat = malloc(sizeof(double) * rows);
    CHECK(dst && flat, "out of memory");
    MPI_Datatype col;
    CHECK_MPI(MPI_Type_vector(rows, 1, NC, MPI_DOUBLE, &col));
    CHECK_MPI(MPI_Type_commit(&col));
    for (int round = 0; round < 50; round++) {
        int salt = 100 + id * 60 + round, tag = 600 + id;
        for (int i = 0; i < rows; i++)
            flat[i] = val(rank, salt, i);
        for (int i = 0; i < rows * NC; i++)
            dst[i] = -1.0;
        MPI_Request rq[2];
        CHECK_MPI(MPI_Irecv(&dst[id], 1, col, partner, tag, MPI_COMM_WORLD, &rq[0]));
        CHECK_MPI(MPI_Isend(flat, rows, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD, &rq[1]));
        CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        check_col(dst, id, rows, partner, salt, "threads");
        /* both sides' buffers are reused next round: the partner's thread must be done */
        CHECK_MPI(MPI_Sendrecv(NULL, 0, MPI_BYTE, partner, 700 + id, NULL, 0, MPI_BYTE, partner,
                               700 + id, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    MPI_Type_free(&col);
    free(dst);
    free(flat);
    return NULL;
}

static void threads(int level)
{
    if (level < MPI_THREAD_MULTIPLE) return;
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        CHECK(pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i) == 0,
              "pthread_create");
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
}

/* A posted column receive freed before its message comes: the message is still taken (the
 * sender completes) and the job ends cleanly. */
static void freed_pending(void)
{
    double *dst = freed_buf = malloc(sizeof(double) * rows * NC);
    double *flat = malloc(sizeof(double) * rows);
    CHECK(dst && flat, "out of memory");
    MPI_Datatype col;
    CHECK_MPI(MPI_Type_vector(rows, 1, NC, MPI_DOUBLE, &col));
    CHECK_MPI(MPI_Type_commit(&col));
    for (int i = 0; i < rows; i++)
        flat[i] = val(rank, 9, i);
    MPI_Request rq;
    CHECK_MPI(MPI_Irecv(&dst[0], 1, col, partner, 800, MPI_COMM_WORLD, &rq));
    CHECK_MPI(MPI_Request_free(&rq));
    CHECK(rq == MPI_REQUEST_NULL, "Request_free left the handle");
    MPI_Type_free(&col); /* a freed type still serves the pending receive */
    pair_sync(801);
    CHECK_MPI(MPI_Send(flat, rows, MPI_DOUBLE, partner, 800, MPI_COMM_WORLD));
    pair_sync(802);
    free(flat); /* dst is the receive's until its message is laid out: main frees it */
}

int main(int argc, char **argv)
{
    /* Fast boxes serve single-threaded ranks only (fbox.h): threads run with the argument
     * "multiple", the fast-box path without it. */
    int level, want = argc > 1 && strcmp(argv[1], "multiple") == 0 ? MPI_THREAD_MULTIPLE
                                                                   : MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, want, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    partner = size == 1 ? 0 : rank ^ 1;
    if (partner >= size) partner = rank;
    static const int lengths[] = {300, 700};
    for (int k = 0; k < 2; k++) {
        rows = lengths[k];
        layouts();
        truncation();
        all_to_all();
        threads(level);
    }
    freed_pending();
    int rc = finish_ok();
    free(freed_buf);
    return rc;
}
