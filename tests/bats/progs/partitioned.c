/* partitioned.c — partitioned communication (MPI 4.0 ch. 4) between pairs of ranks: rank r
 * with r ^ 1, then with (r + n/2) % n (so across nodes whatever the placement), each pair
 * running every case below; prints OK from rank 0.  An even number of ranks. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "rank %d: line %d: ", me, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int cls(int err)
{
    int c = err;
    MPI_Error_class(err, &c);
    return c;
}

static int val(int round, int i)
{
    return round * 100000 + i * 7 + 3;
}

/* One channel: the sender cuts n ints into sp partitions, the receiver into rp; rounds rounds
 * with one request pair; the sender readies partitions in reverse, by range or by list. */
static void channel(int peer, int sender, int n, int sp, int rp, int rounds, int how, int tag)
{
    int *buf = calloc((size_t)n, sizeof *buf);
    MPI_Request r;
    if (sender) {
        CHECK(MPI_Psend_init(buf, sp, n / sp, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &r) == MPI_SUCCESS,
              "Psend_init");
    } else {
        CHECK(MPI_Precv_init(buf, rp, n / rp, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &r) == MPI_SUCCESS,
              "Precv_init");
    }
    for (int k = 0; k < rounds; k++) {
        if (sender)
            for (int i = 0; i < n; i++)
                buf[i] = val(k, i);
        else
            memset(buf, 0, (size_t)n * sizeof *buf);
        CHECK(MPI_Start(&r) == MPI_SUCCESS, "Start");
        if (sender) {
            if (how == 0) {
                for (int i = sp - 1; i >= 0; i--)
                    CHECK(MPI_Pready(i, r) == MPI_SUCCESS, "Pready");
            } else if (how == 1) {
                CHECK(MPI_Pready_range(sp / 2, sp - 1, r) == MPI_SUCCESS, "Pready_range");
                if (sp / 2 > 0) CHECK(MPI_Pready_range(0, sp / 2 - 1, r) == 0, "Pready_range");
            } else {
                int *l = malloc(sizeof *l * (size_t)sp), m = 0;
                for (int i = 1; i < sp; i += 2)
                    l[m++] = i;
                for (int i = 0; i < sp; i += 2)
                    l[m++] = i;
                CHECK(MPI_Pready_list(sp, l, r) == MPI_SUCCESS, "Pready_list");
                free(l);
            }
        } else {
            /* every partition arrives, and its data is there when Parrived says so */
            int left = rp, *seen = calloc((size_t)rp, sizeof *seen);
            while (left) {
                for (int j = 0; j < rp; j++) {
                    int f = 0;
                    if (seen[j]) continue;
                    CHECK(MPI_Parrived(r, j, &f) == MPI_SUCCESS, "Parrived");
                    if (!f) continue;
                    seen[j] = 1, left--;
                    for (int i = j * (n / rp); i < (j + 1) * (n / rp); i++)
                        CHECK(buf[i] == val(k, i), "round %d part %d: buf[%d] = %d", k, j, i,
                              buf[i]);
                }
            }
            free(seen);
        }
        MPI_Status st;
        CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS, "Wait");
        CHECK(r != MPI_REQUEST_NULL, "the request stays after Wait");
        if (!sender) {
            int c = -1;
            MPI_Get_count(&st, MPI_INT, &c);
            CHECK(c == n && st.MPI_SOURCE == peer && st.MPI_TAG == tag,
                  "status count %d source %d tag %d", c, st.MPI_SOURCE, st.MPI_TAG);
            for (int i = 0; i < n; i++)
                CHECK(buf[i] == val(k, i), "round %d: buf[%d] = %d", k, i, buf[i]);
        }
        int f = 0;
        CHECK(MPI_Test(&r, &f, MPI_STATUS_IGNORE) == MPI_SUCCESS && f, "Test of inactive");
    }
    CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL, "Request_free");
    free(buf);
}

/* A strided layout on the receiver (every other int) against a contiguous sender with other
 * partitions, and a strided sender against a contiguous receiver. */
static void strided(int peer, int sender)
{
    enum { N = 48 };
    int big[2 * N], *flat = calloc(N, sizeof(int));
    MPI_Datatype v0, v;
    MPI_Type_vector(N / 4, 1, 2, MPI_INT, &v0); /* 12 ints spread over 24 */
    MPI_Type_create_resized(v0, 0, (MPI_Aint)(N / 2 * sizeof(int)), &v);
    MPI_Type_free(&v0);
    MPI_Type_commit(&v);
    MPI_Request r[2];
    if (sender) {
        for (int i = 0; i < N; i++)
            flat[i] = val(9, i);
        for (int i = 0; i < 2 * N; i++)
            big[i] = i % 2 ? -1 : val(8, i / 2);
        MPI_Psend_init(flat, 3, N / 3, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Psend_init(big, 4, 1, v, peer, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    } else {
        for (int i = 0; i < 2 * N; i++)
            big[i] = -7;
        MPI_Precv_init(big, 4, 1, v, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Precv_init(flat, 2, N / 2, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    }
    MPI_Type_free(&v); /* the requests keep the layout */
    CHECK(MPI_Startall(2, r) == MPI_SUCCESS, "Startall");
    if (sender) {
        MPI_Pready_range(0, 2, r[0]);
        MPI_Pready_range(0, 3, r[1]);
    } else {
        int f = 0;
        while (!f)
            MPI_Parrived(r[0], 3, &f);
        CHECK(big[2 * (N - 1)] == val(9, N - 1) && big[2 * (N - 1) + 1] == -7,
              "strided partition 3 laid out by Parrived: %d %d", big[2 * (N - 1)],
              big[2 * (N - 1) + 1]);
    }
    CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall");
    if (!sender) {
        for (int i = 0; i < N; i++) {
            CHECK(big[2 * i] == val(9, i) && big[2 * i + 1] == -7, "strided recv %d", i);
            CHECK(flat[i] == val(8, i), "strided send %d: %d", i, flat[i]);
        }
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    free(flat);
}

/* Two channels with one tag match in init order; channels with two tags whose inits come
 * in the opposite order on the two sides match by tag. */
static void matching(int peer, int sender)
{
    int a[8], b[8], c[8], d[8];
    MPI_Request r[4];
    if (sender) {
        for (int i = 0; i < 8; i++)
            a[i] = 10 + i, b[i] = 20 + i, c[i] = 30 + i, d[i] = 40 + i;
        MPI_Psend_init(a, 2, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Psend_init(b, 4, 2, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        MPI_Psend_init(c, 1, 8, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
        MPI_Psend_init(d, 8, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    } else {
        memset(a, 0, sizeof a), memset(b, 0, sizeof b), memset(c, 0, sizeof c);
        memset(d, 0, sizeof d);
        MPI_Precv_init(d, 2, 4, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
        MPI_Precv_init(c, 8, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
        MPI_Precv_init(a, 1, 8, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Precv_init(b, 8, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    }
    /* started in another order than made: matching was fixed at init */
    int order[4] = {3, 1, 2, 0};
    for (int k = 0; k < 4; k++)
        MPI_Start(&r[order[k]]);
    if (sender)
        for (int k = 3; k >= 0; k--) {
            int np_ = k == 0 ? 2 : k == 1 ? 4 : k == 2 ? 1 : 8;
            MPI_Pready_range(0, np_ - 1, r[k]);
        }
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    if (!sender)
        for (int i = 0; i < 8; i++)
            CHECK(a[i] == 10 + i && b[i] == 20 + i && c[i] == 30 + i && d[i] == 40 + i,
                  "matching: %d %d %d %d at %d", a[i], b[i], c[i], d[i], i);
    for (int k = 0; k < 4; k++)
        MPI_Request_free(&r[k]);
}

/* The error classes of the calls' misuse, on a communicator that returns errors. */
static void errors(int peer, int sender)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int buf[8] = {0}, f = 0;
    MPI_Request r, bad;
    CHECK(cls(MPI_Psend_init(buf, 0, 8, MPI_INT, peer, 0, c, MPI_INFO_NULL, &bad)) == MPI_ERR_ARG,
          "0 partitions");
    CHECK(cls(MPI_Psend_init(buf, 2, -1, MPI_INT, peer, 0, c, MPI_INFO_NULL, &bad)) ==
              MPI_ERR_COUNT,
          "negative count");
    CHECK(cls(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 0, c, MPI_INFO_NULL, &bad)) ==
              MPI_ERR_RANK,
          "MPI_ANY_SOURCE");
    CHECK(cls(MPI_Precv_init(buf, 2, 4, MPI_INT, peer, MPI_ANY_TAG, c, MPI_INFO_NULL, &bad)) ==
              MPI_ERR_TAG,
          "MPI_ANY_TAG");
    CHECK(cls(MPI_Psend_init(buf, 2, 4, MPI_INT, np, 0, c, MPI_INFO_NULL, &bad)) == MPI_ERR_RANK,
          "rank out of range");
    CHECK(cls(MPI_Psend_init(buf, 2, 4, MPI_DATATYPE_NULL, peer, 0, c, MPI_INFO_NULL, &bad)) ==
              MPI_ERR_TYPE,
          "null type");
    if (sender) {
        MPI_Psend_init(buf, 4, 2, MPI_INT, peer, 0, c, MPI_INFO_NULL, &r);
        CHECK(cls(MPI_Pready(0, r)) == MPI_ERR_REQUEST, "Pready on an inactive request");
        CHECK(cls(MPI_Parrived(r, 0, &f)) == MPI_ERR_REQUEST, "Parrived on a send request");
        MPI_Start(&r);
        CHECK(cls(MPI_Start(&r)) == MPI_ERR_REQUEST, "Start of an active request");
        CHECK(cls(MPI_Pready(4, r)) == MPI_ERR_ARG, "Pready partition 4 of 4");
        CHECK(cls(MPI_Pready(-1, r)) == MPI_ERR_ARG, "Pready partition -1");
        CHECK(cls(MPI_Pready_range(2, 1, r)) == MPI_ERR_ARG, "Pready_range 2..1");
        CHECK(cls(MPI_Pready_range(0, 4, r)) == MPI_ERR_ARG, "Pready_range 0..4");
        int l[2] = {1, 9};
        CHECK(cls(MPI_Pready_list(2, l, r)) == MPI_ERR_ARG, "Pready_list with 9");
        CHECK(MPI_Pready(1, r) == MPI_SUCCESS, "Pready 1 (the list marked none)");
        CHECK(cls(MPI_Pready(1, r)) == MPI_ERR_ARG, "Pready 1 twice");
        CHECK(cls(MPI_Cancel(&r)) == MPI_ERR_REQUEST, "Cancel");
        MPI_Test(&r, &f, MPI_STATUS_IGNORE);
        CHECK(!f, "Test before every partition is ready");
        CHECK(cls(MPI_Request_free(&r)) == MPI_ERR_REQUEST && r != MPI_REQUEST_NULL,
              "Request_free of an active request");
        int rest[3] = {0, 2, 3};
        MPI_Pready_list(3, rest, r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Precv_init(buf, 2, 4, MPI_INT, peer, 0, c, MPI_INFO_NULL, &r);
        CHECK(MPI_Parrived(r, 0, &f) == MPI_SUCCESS && f, "Parrived on an inactive request");
        CHECK(cls(MPI_Pready(0, r)) == MPI_ERR_REQUEST, "Pready on a receive request");
        MPI_Start(&r);
        CHECK(cls(MPI_Parrived(r, 2, &f)) == MPI_ERR_ARG, "Parrived partition 2 of 2");
        int flag = 0;
        MPI_Status st;
        while (!flag)
            CHECK(MPI_Request_get_status(r, &flag, &st) == MPI_SUCCESS, "get_status");
        CHECK(r != MPI_REQUEST_NULL, "get_status keeps the request");
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&r);
    MPI_Comm_free(&c);
}

/* A rank with MPI_PROC_NULL: its requests complete at once. */
static void proc_null(void)
{
    int buf[4];
    MPI_Request r[2];
    MPI_Psend_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Precv_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Startall(2, r);
    MPI_Pready_range(0, 1, r[0]);
    int f = 0;
    MPI_Parrived(r[1], 1, &f);
    CHECK(f, "PROC_NULL Parrived");
    MPI_Status st[2];
    MPI_Waitall(2, r, st);
    CHECK(st[1].MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL status source %d", st[1].MPI_SOURCE);
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
}

/* MPI_THREAD_MULTIPLE: four threads of the sender ready the partitions at once (the setup
 * is read by whichever comes first), while the receiver's main thread polls Parrived. */
struct th {
    MPI_Request r;
    int first, step, parts;
};
static void *th_ready(void *arg)
{
    struct th *t = arg;
    for (int i = t->first; i < t->parts; i += t->step)
        CHECK(MPI_Pready(i, t->r) == MPI_SUCCESS, "thread Pready %d", i);
    return NULL;
}
static void threads(int peer, int sender)
{
    enum { P = 64, C = 100, T = 4 };
    int *buf = calloc(P * C, sizeof(int));
    MPI_Request r;
    if (sender)
        MPI_Psend_init(buf, P, C, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    else
        MPI_Precv_init(buf, P / 2, 2 * C, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < P * C; i++)
            buf[i] = sender ? val(k, i) : 0;
        MPI_Start(&r);
        if (sender) {
            pthread_t tid[T];
            struct th t[T];
            for (int j = 0; j < T; j++) {
                t[j] = (struct th){r, j, T, P};
                pthread_create(&tid[j], NULL, th_ready, &t[j]);
            }
            for (int j = 0; j < T; j++)
                pthread_join(tid[j], NULL);
        } else {
            int f = 0;
            while (!f)
                MPI_Parrived(r, P / 2 - 1, &f);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (!sender)
            for (int i = 0; i < P * C; i++)
                CHECK(buf[i] == val(k, i), "threads round %d: buf[%d] = %d", k, i, buf[i]);
    }
    MPI_Request_free(&r);
    free(buf);
}

static int multiple;

static void pair(int peer)
{
    int s = me < peer;
    channel(peer, s, 64, 8, 8, 3, 0, 0);
    channel(peer, !s, 96, 4, 6, 2, 1, 0);      /* the other way, coarser sender */
    channel(peer, s, 96, 6, 4, 2, 2, 0);       /* finer sender, by list */
    channel(peer, s, 60, 5, 3, 2, 0, 0);       /* boundaries that do not line up */
    channel(peer, s, 1 << 18, 4, 16, 2, 0, 0); /* 1 MiB: past the eager limit */
    channel(peer, s, 0, 3, 2, 1, 0, 4);        /* empty */
    strided(peer, s);
    matching(peer, s);
    errors(peer, s);
    if (multiple) threads(peer, s);
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    multiple = provided == MPI_THREAD_MULTIPLE;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np % 2 == 0, "needs an even number of ranks");
    proc_null();
    pair(me ^ 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (np > 2) pair((me + np / 2) % np);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("OK\n");
    MPI_Finalize();
    return 0;
}
