/* test_coll_net_nb.c — non-blocking collectives on communicators that span nodes
 * (coll_net_nb.c): they progress while the members do something else.
 *
 *  - p2p_inside: rank 0 starts the operation and only then sends a token to the last rank,
 *    which receives it before it starts its own.  A non-blocking collective that waited for
 *    the other members inside its MPI_I* call would hang here (MPI 3.1 §5.12 allows this
 *    program).  Every I* kind, results checked on every rank, counts below and above the
 *    eager limit.
 *  - opposite_order: two communicators, one order of Iallreduce on some nodes and the other
 *    order on the rest (MPI only fixes the order per communicator).
 *  - many_pending: 24 operations of mixed kinds pending at once on one communicator, completed
 *    by MPI_Waitall, then by MPI_Test loops; a blocking collective between start and wait.
 *  - bad_setting: a rejected tree file (TMPI_COLL_TREE_FILE, checked where it is used: a bad
 *    algorithm setting is MPI_Init's error) fails the Ibcast at MPI_Wait with MPI_ERR_ARG,
 *    while an Iallgather on the same communicator still runs.
 * Layouts: simulated nodes (3x2, 3+3+1, 2x3 round-robin) and one job state told its nodes
 * (3+1+2, 5 uneven interleaved). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "coll_check.h"
#include "net_layout.h"

static const struct layout layouts[] = {
    {"3x2 (nodes)", 1, 0, 3, 6, {0}},
    {"3+3+1 (nodes)", 1, 0, 3, 7, {0}},
    {"2x3 round-robin (nodes)", 1, 1, 2, 6, {0}},
    {"3+1+2", 0, 0, 3, 6, {0, 0, 0, 1, 2, 2}},
    {"5 nodes uneven, interleaved", 0, 0, 5, 9, {0, 1, 1, 2, 3, 3, 3, 4, 0}},
};
#define NLAYOUTS (int)(sizeof layouts / sizeof layouts[0])

static int run_layouts(th_rank_fn fn)
{
    return run_layouts_of(layouts, NLAYOUTS, fn);
}

/* Below and above the harness's 16 KiB eager limit between leaders. */
static const int counts[] = {1, 6000};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

static int val(int rank, int i)
{
    return rank * 1000 + i % 997;
}

enum kind {
    K_BARRIER,
    K_BCAST,
    K_REDUCE,
    K_ALLREDUCE,
    K_GATHER,
    K_SCATTER,
    K_ALLGATHER,
    K_ALLTOALL,
    K_RSB,
    K_SCAN,
    K_EXSCAN,
    NKINDS
};
static const char *const kind_name[NKINDS] = {
    "Ibarrier",   "Ibcast",    "Ireduce",
    "Iallreduce", "Igather",   "Iscatter",
    "Iallgather", "Ialltoall", "Ireduce_scatter_block",
    "Iscan",      "Iexscan",
};

/* One operation's buffers: in holds n * cnt ints (the widest input), out n * cnt. */
struct op {
    enum kind k;
    int cnt, root;
    int *in, *out;
    MPI_Request req;
};

static void op_init(struct op *o, enum kind k, int cnt, int root, int me, int n)
{
    o->k = k;
    o->cnt = cnt;
    o->root = root;
    o->in = tc_alloc(sizeof(int) * (size_t)cnt * (size_t)n);
    o->out = tc_alloc(sizeof(int) * (size_t)cnt * (size_t)n);
    for (int i = 0; i < cnt * n; i++) {
        o->in[i] = val(me, i);
        o->out[i] = -1;
    }
}

static int op_start(struct op *o, MPI_Comm c)
{
    int cnt = o->cnt;
    switch (o->k) {
    case K_BARRIER:
        return MPI_Ibarrier(c, &o->req);
    case K_BCAST:
        return MPI_Ibcast(o->in, cnt, MPI_INT, o->root, c, &o->req);
    case K_REDUCE:
        return MPI_Ireduce(o->in, o->out, cnt, MPI_INT, MPI_SUM, o->root, c, &o->req);
    case K_ALLREDUCE:
        return MPI_Iallreduce(o->in, o->out, cnt, MPI_INT, MPI_SUM, c, &o->req);
    case K_GATHER:
        return MPI_Igather(o->in, cnt, MPI_INT, o->out, cnt, MPI_INT, o->root, c, &o->req);
    case K_SCATTER:
        return MPI_Iscatter(o->in, cnt, MPI_INT, o->out, cnt, MPI_INT, o->root, c, &o->req);
    case K_ALLGATHER:
        return MPI_Iallgather(o->in, cnt, MPI_INT, o->out, cnt, MPI_INT, c, &o->req);
    case K_ALLTOALL:
        return MPI_Ialltoall(o->in, cnt, MPI_INT, o->out, cnt, MPI_INT, c, &o->req);
    case K_RSB:
        return MPI_Ireduce_scatter_block(o->in, o->out, cnt, MPI_INT, MPI_SUM, c, &o->req);
    case K_SCAN:
        return MPI_Iscan(o->in, o->out, cnt, MPI_INT, MPI_SUM, c, &o->req);
    case K_EXSCAN:
        return MPI_Iexscan(o->in, o->out, cnt, MPI_INT, MPI_SUM, c, &o->req);
    default:
        return MPI_ERR_ARG;
    }
}

/* Sum over ranks lo..hi-1 of val(rank, i). */
static int sum(int lo, int hi, int i)
{
    int s = 0;
    for (int r = lo; r < hi; r++)
        s += val(r, i);
    return s;
}

/* Checks o's result on member me of n (comm rank = world rank here). */
static int op_check(const struct op *o, int me, int n)
{
    int cnt = o->cnt;
    for (int i = 0; i < cnt; i++) {
        int got, want;
        switch (o->k) {
        case K_BCAST:
            got = o->in[i], want = val(o->root, i);
            break;
        case K_REDUCE:
            if (me != o->root) return 0;
            got = o->out[i], want = sum(0, n, i);
            break;
        case K_ALLREDUCE:
            got = o->out[i], want = sum(0, n, i);
            break;
        case K_SCAN:
            got = o->out[i], want = sum(0, me + 1, i);
            break;
        case K_EXSCAN:
            if (me == 0) return 0;
            got = o->out[i], want = sum(0, me, i);
            break;
        case K_RSB:
            got = o->out[i], want = sum(0, n, me * cnt + i);
            break;
        case K_SCATTER:
            got = o->out[i], want = val(o->root, me * cnt + i);
            break;
        case K_GATHER:
        case K_ALLGATHER:
        case K_ALLTOALL:
            if (o->k == K_GATHER && me != o->root) return 0;
            for (int r = 0; r < n; r++) {
                int src = o->k == K_ALLTOALL ? me * cnt + i : i;
                got = o->out[r * cnt + i], want = val(r, src);
                TC_CHECK(got == want, "%s count %d root %d: block %d element %d is %d, not %d",
                         kind_name[o->k], cnt, o->root, r, i, got, want);
            }
            continue;
        default:
            return 0;
        }
        TC_CHECK(got == want, "%s count %d root %d: element %d is %d, not %d", kind_name[o->k], cnt,
                 o->root, i, got, want);
    }
    return 0;
}

static void op_free(struct op *o)
{
    free(o->in);
    free(o->out);
}

/* ---- p2p_inside ---- */

static int body_p2p_inside(int rank, int size, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    int last = size - 1;
    for (int k = 0; k < NKINDS; k++)
        for (int ci = 0; ci < NCOUNTS; ci++)
            for (int root = 0; root < size; root += last) {
                struct op o;
                op_init(&o, (enum kind)k, counts[ci], root, rank, size);
                int token = 1000 * k + root;
                if (rank == last) {
                    int got = -1;
                    TC_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    TC_CHECK(got == token, "token %d, expected %d", got, token);
                }
                TC_MPI(op_start(&o, MPI_COMM_WORLD));
                if (rank == 0) TC_MPI(MPI_Send(&token, 1, MPI_INT, last, 7, MPI_COMM_WORLD));
                TC_MPI(MPI_Wait(&o.req, MPI_STATUS_IGNORE));
                TC_CHECK(o.req == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
                op_check(&o, rank, size);
                op_free(&o);
                if (root == last) break; /* size 1 would loop forever */
            }
    TC_MPI(MPI_Finalize());
    return 0;
}

static int test_p2p_inside(void)
{
    return run_layouts(body_p2p_inside);
}

/* ---- opposite_order ---- */

static int body_opposite(int rank, int size, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    int node = tmpi_svc.rank_self()->node;
    MPI_Comm c[2];
    TC_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c[0]));
    TC_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c[1]));
    for (int it = 0; it < 20; it++) {
        struct op o[2];
        MPI_Request rq[2];
        for (int i = 0; i < 2; i++)
            op_init(&o[i], K_ALLREDUCE, counts[it % NCOUNTS], 0, rank, size);
        for (int i = 0; i < 2; i++) {
            int which = node % 2 ? 1 - i : i;
            TC_MPI(op_start(&o[which], c[which]));
            rq[which] = o[which].req;
        }
        TC_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 2; i++) {
            op_check(&o[i], rank, size);
            op_free(&o[i]);
        }
    }
    TC_MPI(MPI_Comm_free(&c[0]));
    TC_MPI(MPI_Comm_free(&c[1]));
    TC_MPI(MPI_Finalize());
    return 0;
}

static int test_opposite(void)
{
    return run_layouts(body_opposite);
}

/* ---- many_pending ---- */

#define NPEND 24

static int body_many(int rank, int size, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    for (int pass = 0; pass < 2; pass++) {
        struct op o[NPEND];
        MPI_Request rq[NPEND];
        for (int i = 0; i < NPEND; i++) {
            op_init(&o[i], (enum kind)(i % NKINDS), counts[(i / NKINDS) % NCOUNTS], i % size, rank,
                    size);
            TC_MPI(op_start(&o[i], MPI_COMM_WORLD));
            rq[i] = o[i].req;
        }
        /* a blocking collective on the same communicator while they are pending */
        int one = 1, all = 0;
        TC_MPI(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        TC_CHECK(all == size, "blocking Allreduce between I* start and wait: %d", all);
        if (pass == 0) {
            TC_MPI(MPI_Waitall(NPEND, rq, MPI_STATUSES_IGNORE));
        } else {
            for (int i = NPEND - 1; i >= 0; i--) { /* completed in any order, by Test alone */
                int flag = 0;
                while (!flag)
                    TC_MPI(MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE));
            }
        }
        for (int i = 0; i < NPEND; i++) {
            op_check(&o[i], rank, size);
            op_free(&o[i]);
        }
    }
    TC_MPI(MPI_Finalize());
    return 0;
}

static int test_many(void)
{
    return run_layouts(body_many);
}

/* ---- bad_setting: a rejected tree file reaches the Ibcast's request ---- */

static int body_bad(int rank, int size, void *arg)
{
    (void)arg;
    place_me(rank);
    TC_MPI(MPI_Init(NULL, NULL));
    TC_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    struct op o;
    op_init(&o, K_BCAST, 4, 0, rank, size);
    TC_MPI(op_start(&o, MPI_COMM_WORLD)); /* starting is fine: the round runs later */
    int e = MPI_Wait(&o.req, MPI_STATUS_IGNORE), cls = -1;
    MPI_Error_class(e, &cls);
    TC_CHECK(cls == MPI_ERR_ARG, "Ibcast with a rejected tree file: MPI_Wait gave class %d", cls);
    op_free(&o);
    /* collectives that take no tree settings still run (Bcast, Reduce and Allreduce all
     * refuse a bad one: coll_net.h) */
    op_init(&o, K_ALLGATHER, 4, 0, rank, size);
    TC_MPI(op_start(&o, MPI_COMM_WORLD));
    TC_MPI(MPI_Wait(&o.req, MPI_STATUS_IGNORE));
    op_check(&o, rank, size);
    op_free(&o);
    TC_MPI(MPI_Finalize());
    return 0;
}

static int test_bad(void)
{
    char path[] = "/tmp/test_coll_net_nb.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    static const char not_a_tree[] = "ranks 2\n0 1\n1 0\n"; /* a cycle, no root */
    int bad = write(fd, not_a_tree, sizeof not_a_tree - 1) != (ssize_t)(sizeof not_a_tree - 1);
    close(fd);
    setenv("TMPI_COLL_TREE_FILE", path, 1);
    int r = bad || run_layouts(body_bad);
    unsetenv("TMPI_COLL_TREE_FILE");
    unlink(path);
    return r;
}

static const struct th_test tests[] = {
    {"p2p_inside", test_p2p_inside},
    {"opposite_order", test_opposite},
    {"many_pending", test_many},
    {"bad_setting", test_bad},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return th_main(argc, argv, tests);
}
