/* inter_nbc.c — non-blocking collectives on an inter-communicator (lower and upper halves of
 * MPI_COMM_WORLD) really start and return:
 *  - each operation, started first by one group, whose members then send a token to the other
 *    group, which receives it before it starts its own part (an I* call that waited for the
 *    other group would hang here: the blocks are above the eager limits), both groups first in
 *    turn, every root form (MPI_ROOT, MPI_PROC_NULL, a remote rank), a vector datatype;
 *  - blocking collectives while non-blocking ones are outstanding;
 *  - every operation outstanding at once, completed with Waitall in reverse order by one group
 *    and by a Testany loop by the other;
 *  - MPI_Comm_idup overlapped with a pending Ibarrier and completed in either order, and an
 *    idup with the token exchange between start and wait; the dup then carries collectives;
 *  - persistent collectives (MPI_Bcast_init, MPI_Allreduce_init) started twice with the token
 *    exchange between start and wait;
 *  - invalid roots under MPI_ERRORS_RETURN give MPI_ERR_ROOT, a bad op or type of a reduction
 *    MPI_ERR_OP / MPI_ERR_TYPE, a NULL request MPI_ERR_ARG, all at the start.
 * Results are checked element by element. */
#include <string.h>

#include "check.h"

#define BIG                                                                                        \
    30000          /* ints per block: 120 KB, above the eager limits on a node and between agents  \
                    */
#define SMALL 1000 /* ints per block when every operation is outstanding at once */
#define TOKEN_TAG 7

enum {
    OP_BARRIER,
    OP_BCAST,
    OP_BCAST_VEC,
    OP_REDUCE,
    OP_ALLREDUCE,
    OP_ALLGATHER,
    OP_ALLGATHERV,
    OP_ALLTOALL,
    OP_ALLTOALLV,
    OP_ALLTOALLW,
    OP_GATHER,
    OP_GATHERV,
    OP_SCATTER,
    OP_SCATTERV,
    OP_RSCATTER,
    OP_RSCATTER_BLOCK,
    OP_N
};

static const char *const names[OP_N] = {
    "Ibarrier",   "Ibcast",     "Ibcast(vector)",  "Ireduce",
    "Iallreduce", "Iallgather", "Iallgatherv",     "Ialltoall",
    "Ialltoallv", "Ialltoallw", "Igather",         "Igatherv",
    "Iscatter",   "Iscatterv",  "Ireduce_scatter", "Ireduce_scatter_block"};

struct ic {
    MPI_Comm comm;
    int side, r, n, rn, wrank;
    int *rw;          /* remote members' world ranks */
    int blk;          /* ints per block */
    MPI_Datatype vec; /* every other int of 2 * blk */
};

/* One operation's buffers and arguments. */
struct opbuf {
    int *sb, *rb;
    int *scnt, *sdsp, *rcnt, *rdsp, *swd, *rwd;
    MPI_Datatype *types;
    int root;     /* this member's root argument */
    int rootside; /* the group holding the root */
};

static int val(int w, int j, int i)
{
    return w * 1000 + j * 37 + i % 101;
}

/* Reduce_scatter's blocks: T elements over a group of m, the same total on both sides. */
static int rs_total(const struct ic *c)
{
    return 2 * c->blk;
}

static void set_blk(struct ic *c, int blk)
{
    if (c->blk) CHECK_MPI(MPI_Type_free(&c->vec));
    c->blk = blk;
    CHECK_MPI(MPI_Type_vector(blk, 1, 2, MPI_INT, &c->vec));
    CHECK_MPI(MPI_Type_commit(&c->vec));
}

static int rs_count(int m, int i, int total)
{
    return total / m + (i < total % m);
}

static void setup(const struct ic *c, int op, int rootside, struct opbuf *b)
{
    int m = c->n > c->rn ? c->n : c->rn;
    size_t cap = (size_t)c->blk * (size_t)(m > 2 ? m : 2);
    b->sb = malloc(sizeof(int) * cap);
    b->rb = calloc(cap, sizeof(int));
    b->scnt = malloc(sizeof(int) * (size_t)m);
    b->sdsp = malloc(sizeof(int) * (size_t)m);
    b->rcnt = malloc(sizeof(int) * (size_t)m);
    b->rdsp = malloc(sizeof(int) * (size_t)m);
    b->swd = malloc(sizeof(int) * (size_t)m);
    b->rwd = malloc(sizeof(int) * (size_t)m);
    b->types = malloc(sizeof(MPI_Datatype) * (size_t)m);
    CHECK(b->sb && b->rb && b->scnt && b->sdsp && b->rcnt && b->rdsp && b->swd && b->rwd &&
              b->types,
          "out of memory");
    b->rootside = rootside;
    b->root = c->side == rootside ? (c->r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int rsum = rs_total(c);
    for (size_t i = 0; i < cap; i++)
        b->sb[i] = -1;
    switch (op) {
    case OP_ALLTOALL:
    case OP_ALLTOALLV:
    case OP_ALLTOALLW:
    case OP_SCATTER:
    case OP_SCATTERV:
        /* block j goes to remote member j */
        for (int j = 0; j < c->rn; j++)
            for (int i = 0; i < c->blk; i++)
                b->sb[(size_t)j * c->blk + i] = val(c->wrank, j, i);
        break;
    case OP_RSCATTER:
    case OP_RSCATTER_BLOCK:
        for (int i = 0; i < (op == OP_RSCATTER ? rsum : c->n * c->blk); i++)
            b->sb[i] = val(c->wrank, 0, i);
        break;
    default:
        for (int i = 0; i < 2 * c->blk; i++)
            b->sb[i] = val(c->wrank, 0, i);
    }
    for (int j = 0; j < m; j++) {
        /* receive blocks land in reverse order in the v and w forms */
        b->scnt[j] = b->rcnt[j] = c->blk;
        b->sdsp[j] = j * c->blk;
        b->rdsp[j] = (c->rn - 1 - j) * c->blk;
        b->swd[j] = (int)(sizeof(int) * (size_t)b->sdsp[j]);
        b->rwd[j] = (int)(sizeof(int) * (size_t)(j < c->rn ? b->rdsp[j] : 0));
        b->types[j] = MPI_INT;
    }
    if (op == OP_RSCATTER)
        for (int j = 0; j < c->n; j++)
            b->rcnt[j] = rs_count(c->n, j, rsum);
}

static void release(struct opbuf *b)
{
    free(b->sb);
    free(b->rb);
    free(b->scnt);
    free(b->sdsp);
    free(b->rcnt);
    free(b->rdsp);
    free(b->swd);
    free(b->rwd);
    free(b->types);
}

/* Whether op runs on this inter-communicator (Reduce_scatter_block needs equal groups). */
static int applies(const struct ic *c, int op)
{
    return op != OP_RSCATTER_BLOCK || c->n == c->rn;
}

static void start(const struct ic *c, int op, struct opbuf *b, MPI_Request *q)
{
    MPI_Comm ic = c->comm;
    int root = b->root, am_root = root == MPI_ROOT;
    switch (op) {
    case OP_BARRIER:
        CHECK_MPI(MPI_Ibarrier(ic, q));
        break;
    case OP_BCAST:
        CHECK_MPI(MPI_Ibcast(am_root ? b->sb : b->rb, 2 * c->blk, MPI_INT, root, ic, q));
        break;
    case OP_BCAST_VEC:
        CHECK_MPI(MPI_Ibcast(am_root ? b->sb : b->rb, 1, c->vec, root, ic, q));
        break;
    case OP_REDUCE:
        CHECK_MPI(MPI_Ireduce(b->sb, b->rb, 2 * c->blk, MPI_INT, MPI_SUM, root, ic, q));
        break;
    case OP_ALLREDUCE:
        CHECK_MPI(MPI_Iallreduce(b->sb, b->rb, 2 * c->blk, MPI_INT, MPI_SUM, ic, q));
        break;
    case OP_ALLGATHER:
        CHECK_MPI(MPI_Iallgather(b->sb, c->blk, MPI_INT, b->rb, c->blk, MPI_INT, ic, q));
        break;
    case OP_ALLGATHERV:
        CHECK_MPI(MPI_Iallgatherv(b->sb, c->blk, MPI_INT, b->rb, b->rcnt, b->rdsp, MPI_INT, ic, q));
        break;
    case OP_ALLTOALL:
        CHECK_MPI(MPI_Ialltoall(b->sb, c->blk, MPI_INT, b->rb, c->blk, MPI_INT, ic, q));
        break;
    case OP_ALLTOALLV:
        CHECK_MPI(MPI_Ialltoallv(b->sb, b->scnt, b->sdsp, MPI_INT, b->rb, b->rcnt, b->rdsp, MPI_INT,
                                 ic, q));
        break;
    case OP_ALLTOALLW:
        CHECK_MPI(MPI_Ialltoallw(b->sb, b->scnt, b->swd, b->types, b->rb, b->rcnt, b->rwd, b->types,
                                 ic, q));
        break;
    case OP_GATHER:
        CHECK_MPI(MPI_Igather(b->sb, c->blk, MPI_INT, b->rb, c->blk, MPI_INT, root, ic, q));
        break;
    case OP_GATHERV:
        CHECK_MPI(
            MPI_Igatherv(b->sb, c->blk, MPI_INT, b->rb, b->rcnt, b->rdsp, MPI_INT, root, ic, q));
        break;
    case OP_SCATTER:
        CHECK_MPI(MPI_Iscatter(b->sb, c->blk, MPI_INT, b->rb, c->blk, MPI_INT, root, ic, q));
        break;
    case OP_SCATTERV:
        CHECK_MPI(
            MPI_Iscatterv(b->sb, b->scnt, b->sdsp, MPI_INT, b->rb, c->blk, MPI_INT, root, ic, q));
        break;
    case OP_RSCATTER:
        CHECK_MPI(MPI_Ireduce_scatter(b->sb, b->rb, b->rcnt, MPI_INT, MPI_SUM, ic, q));
        break;
    case OP_RSCATTER_BLOCK:
        CHECK_MPI(MPI_Ireduce_scatter_block(b->sb, b->rb, c->blk, MPI_INT, MPI_SUM, ic, q));
        break;
    }
}

#define EXPECT_AT(i, got, want)                                                                    \
    CHECK((got) == (want), "%s: element %d is %d, expected %d", names[op], (int)(i), (got), (want))

/* Element-by-element check of a completed operation. */
static void verify(const struct ic *c, int op, const struct opbuf *b)
{
    int recv_side = c->side != b->rootside; /* rooted ops: the group without the root */
    int am_root = b->root == MPI_ROOT;
    int rootw = c->rw[0]; /* the root's world rank, seen from the other group */
    switch (op) {
    case OP_BARRIER:
        break;
    case OP_BCAST:
        for (int i = 0; recv_side && i < 2 * c->blk; i++)
            EXPECT_AT(i, b->rb[i], val(rootw, 0, i));
        for (int i = 0; !recv_side && !am_root && i < 2 * c->blk; i++)
            EXPECT_AT(i, b->rb[i], 0); /* MPI_PROC_NULL: untouched */
        break;
    case OP_BCAST_VEC:
        for (int i = 0; recv_side && i < 2 * c->blk; i++)
            EXPECT_AT(i, b->rb[i], i % 2 ? 0 : val(rootw, 0, i));
        break;
    case OP_REDUCE:
    case OP_ALLREDUCE:
        if (op == OP_REDUCE && !am_root) {
            for (int i = 0; i < 2 * c->blk; i++)
                EXPECT_AT(i, b->rb[i], 0);
            break;
        }
        for (int i = 0; i < 2 * c->blk; i++) {
            int want = 0;
            for (int j = 0; j < c->rn; j++)
                want += val(c->rw[j], 0, i);
            EXPECT_AT(i, b->rb[i], want);
        }
        break;
    case OP_ALLGATHER:
    case OP_GATHER:
    case OP_ALLGATHERV:
    case OP_GATHERV: {
        int rooted = op == OP_GATHER || op == OP_GATHERV,
            v = op == OP_ALLGATHERV || op == OP_GATHERV;
        if (rooted && !am_root) {
            for (int i = 0; i < c->rn * c->blk; i++)
                EXPECT_AT(i, b->rb[i], 0);
            break;
        }
        for (int j = 0; j < c->rn; j++)
            for (int i = 0; i < c->blk; i++) {
                int at = (v ? b->rdsp[j] : j * c->blk) + i;
                EXPECT_AT(at, b->rb[at], val(c->rw[j], 0, i));
            }
        break;
    }
    case OP_ALLTOALL:
    case OP_ALLTOALLV:
    case OP_ALLTOALLW:
        for (int j = 0; j < c->rn; j++)
            for (int i = 0; i < c->blk; i++) {
                int at = (op == OP_ALLTOALL ? j * c->blk : b->rdsp[j]) + i;
                EXPECT_AT(at, b->rb[at], val(c->rw[j], c->r, i));
            }
        break;
    case OP_SCATTER:
    case OP_SCATTERV:
        for (int i = 0; i < c->blk; i++)
            EXPECT_AT(i, b->rb[i], recv_side ? val(rootw, c->r, i) : 0);
        break;
    case OP_RSCATTER:
    case OP_RSCATTER_BLOCK: {
        /* my block of the other group's reduction */
        int off = 0, cnt = c->blk;
        if (op == OP_RSCATTER) {
            for (int j = 0; j < c->r; j++)
                off += b->rcnt[j];
            cnt = b->rcnt[c->r];
        } else {
            off = c->r * c->blk;
        }
        for (int i = 0; i < cnt; i++) {
            int want = 0;
            for (int j = 0; j < c->rn; j++)
                want += val(c->rw[j], 0, off + i);
            EXPECT_AT(i, b->rb[i], want);
        }
        break;
    }
    }
}

/* The first group's members each send a token to a member of the other group, which takes
 * every token addressed to it before it goes on. */
static void tokens(const struct ic *c, int first)
{
    if (c->side == first) {
        int t = c->wrank;
        CHECK_MPI(MPI_Send(&t, 1, MPI_INT, c->r % c->rn, TOKEN_TAG, c->comm));
        return;
    }
    for (int j = 0; j < c->rn; j++) {
        if (j % c->n != c->r) continue;
        int t = -1;
        CHECK_MPI(MPI_Recv(&t, 1, MPI_INT, j, TOKEN_TAG, c->comm, MPI_STATUS_IGNORE));
        CHECK(t == c->rw[j], "token from remote %d: %d, expected %d", j, t, c->rw[j]);
    }
}

/* A user op that also uses the datatype handle it is given (it must be a valid one). */
static void sum_ints(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int size = 0;
    CHECK_MPI(MPI_Type_size(*dt, &size));
    int n = size / (int)sizeof(int) * *len;
    for (int i = 0; i < n; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

/* The program frees its derived datatypes and its op right after the start calls (MPI allows
 * it: the operation keeps what it needs); the other group starts only after the tokens, so
 * the steps that run later work on what the start kept. */
static void freed_handles(const struct ic *c)
{
    for (int first = 0; first < 2; first++) {
        MPI_Datatype quad, vec;
        MPI_Op op;
        CHECK_MPI(MPI_Type_contiguous(4, MPI_INT, &quad));
        CHECK_MPI(MPI_Type_commit(&quad));
        CHECK_MPI(MPI_Type_vector(8, 1, 2, MPI_INT, &vec));
        CHECK_MPI(MPI_Type_commit(&vec));
        CHECK_MPI(MPI_Op_create(sum_ints, 1, &op));
        int in[8], out[8], v[16];
        for (int k = 0; k < 8; k++)
            in[k] = c->wrank + k, out[k] = -1;
        int bcast_root = c->side ? 0 : c->r == 0 ? MPI_ROOT : MPI_PROC_NULL;
        for (int k = 0; k < 16; k++)
            v[k] = bcast_root == MPI_ROOT && k % 2 == 0 ? 100 + k / 2 : -1;
        MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) != (c->side == first)) {
                if (turn == 0) tokens(c, first);
                continue;
            }
            CHECK_MPI(MPI_Iallreduce(in, out, 2, quad, op, c->comm, &q[0]));
            CHECK_MPI(MPI_Ibcast(v, 1, vec, bcast_root, c->comm, &q[1]));
            CHECK_MPI(MPI_Type_free(&quad));
            CHECK_MPI(MPI_Type_free(&vec));
            CHECK_MPI(MPI_Op_free(&op));
            if (turn == 0) tokens(c, first);
        }
        CHECK_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 8; k++) {
            int want = 0;
            for (int j = 0; j < c->rn; j++)
                want += c->rw[j] + k;
            CHECK(out[k] == want, "freed handles: Iallreduce[%d] = %d, expected %d", k, out[k],
                  want);
        }
        for (int k = 0; k < 16; k++) {
            int want = c->side && k % 2 == 0                  ? 100 + k / 2
                       : bcast_root == MPI_ROOT && k % 2 == 0 ? 100 + k / 2
                                                              : -1;
            CHECK(v[k] == want, "freed handles: Ibcast[%d] = %d, expected %d", k, v[k], want);
        }
    }
}

/* Each operation on its own: the group `first` starts, then the tokens, then the other starts. */
static void one_by_one(const struct ic *c)
{
    for (int first = 0; first < 2; first++)
        for (int op = 0; op < OP_N; op++) {
            if (!applies(c, op)) continue;
            struct opbuf b;
            setup(c, op, first, &b);
            MPI_Request q = MPI_REQUEST_NULL;
            if (c->side == first) start(c, op, &b, &q);
            tokens(c, first);
            if (c->side != first) start(c, op, &b, &q);
            CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
            CHECK(q == MPI_REQUEST_NULL, "%s: request not freed", names[op]);
            verify(c, op, &b);
            release(&b);
        }
}

/* Every operation outstanding at once, completed in different orders by the two groups. */
static void all_at_once(const struct ic *c)
{
    struct opbuf b[OP_N];
    MPI_Request q[OP_N];
    for (int op = 0; op < OP_N; op++) {
        q[op] = MPI_REQUEST_NULL;
        setup(c, op, op % 2, &b[op]);
        if (applies(c, op)) start(c, op, &b[op], &q[op]);
    }
    if (c->side == 0) {
        MPI_Request rev[OP_N];
        for (int op = 0; op < OP_N; op++)
            rev[op] = q[OP_N - 1 - op];
        CHECK_MPI(MPI_Waitall(OP_N, rev, MPI_STATUSES_IGNORE));
    } else {
        int left = 0;
        for (int op = 0; op < OP_N; op++)
            left += q[op] != MPI_REQUEST_NULL;
        while (left > 0) {
            int idx = MPI_UNDEFINED, flag = 0;
            CHECK_MPI(MPI_Testany(OP_N, q, &idx, &flag, MPI_STATUS_IGNORE));
            if (flag && idx != MPI_UNDEFINED) left--;
        }
    }
    for (int op = 0; op < OP_N; op++) {
        if (applies(c, op)) verify(c, op, &b[op]);
        release(&b[op]);
    }
}

/* Blocking collectives on the inter-communicator while non-blocking ones are outstanding
 * (MPI orders them together): the blocking ones complete first, then the others. */
static void mixed(const struct ic *c)
{
    struct opbuf b[2];
    MPI_Request q[2];
    setup(c, OP_BCAST, 1, &b[0]);
    setup(c, OP_ALLREDUCE, 0, &b[1]);
    start(c, OP_BCAST, &b[0], &q[0]);
    start(c, OP_ALLREDUCE, &b[1], &q[1]);
    CHECK_MPI(MPI_Barrier(c->comm));
    int sum = -1, want = 0;
    for (int j = 0; j < c->rn; j++)
        want += c->rw[j];
    CHECK_MPI(MPI_Allreduce(&c->wrank, &sum, 1, MPI_INT, MPI_SUM, c->comm));
    CHECK(sum == want, "blocking Allreduce between non-blocking ones: %d, expected %d", sum, want);
    CHECK_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    verify(c, OP_BCAST, &b[0]);
    verify(c, OP_ALLREDUCE, &b[1]);
    release(&b[0]);
    release(&b[1]);
}

/* The dup is an inter-communicator congruent to c's, and carries a collective. */
static void check_dup(const struct ic *c, MPI_Comm d)
{
    CHECK(d != MPI_COMM_NULL, "idup gave MPI_COMM_NULL");
    int flag = 0, rn = 0, res = MPI_UNEQUAL;
    CHECK_MPI(MPI_Comm_test_inter(d, &flag));
    CHECK(flag, "the idup of an inter-communicator is not one");
    CHECK_MPI(MPI_Comm_remote_size(d, &rn));
    CHECK(rn == c->rn, "idup remote size %d, expected %d", rn, c->rn);
    CHECK_MPI(MPI_Comm_compare(c->comm, d, &res));
    CHECK(res == MPI_CONGRUENT, "idup compares %d", res);
    int sum = -1, want = 0;
    for (int j = 0; j < c->rn; j++)
        want += c->rw[j];
    CHECK_MPI(MPI_Allreduce(&c->wrank, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK(sum == want, "Allreduce on the idup: %d, expected %d", sum, want);
    MPI_Request q;
    CHECK_MPI(MPI_Iallreduce(&c->wrank, &sum, 1, MPI_INT, MPI_SUM, d, &q));
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(sum == want, "Iallreduce on the idup: %d, expected %d", sum, want);
}

static void idups(const struct ic *c)
{
    /* overlapped with a pending Ibarrier, completed in either order */
    MPI_Request q[2];
    MPI_Comm d = MPI_COMM_NULL;
    CHECK_MPI(MPI_Ibarrier(c->comm, &q[0]));
    CHECK_MPI(MPI_Comm_idup(c->comm, &d, &q[1]));
    if (c->side == 0) {
        CHECK_MPI(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    } else {
        CHECK_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    }
    check_dup(c, d);
    CHECK_MPI(MPI_Comm_free(&d));

    /* the token exchange between start and wait, each group first in turn */
    for (int first = 0; first < 2; first++) {
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Info info;
        CHECK_MPI(MPI_Info_create(&info));
        CHECK_MPI(MPI_Info_set(info, "tmpi_test_hint", "1"));
        if (c->side == first) CHECK_MPI(MPI_Comm_idup_with_info(c->comm, info, &d, &r));
        tokens(c, first);
        if (c->side != first) CHECK_MPI(MPI_Comm_idup_with_info(c->comm, info, &d, &r));
        CHECK_MPI(MPI_Info_free(&info));
        CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check_dup(c, d);
        CHECK_MPI(MPI_Comm_free(&d));
    }
}

/* Persistent collectives on the inter-communicator, started twice. */
static void persistent(const struct ic *c)
{
    struct opbuf b;
    setup(c, OP_BCAST, 0, &b);
    int *sum = calloc(2 * c->blk, sizeof(int));
    CHECK(sum, "out of memory");
    MPI_Request q[2];
    CHECK_MPI(MPI_Bcast_init(b.root == MPI_ROOT ? b.sb : b.rb, 2 * c->blk, MPI_INT, b.root, c->comm,
                             MPI_INFO_NULL, &q[0]));
    CHECK_MPI(
        MPI_Allreduce_init(b.sb, sum, 2 * c->blk, MPI_INT, MPI_SUM, c->comm, MPI_INFO_NULL, &q[1]));
    for (int round = 0; round < 2; round++) {
        memset(b.rb, 0, sizeof(int) * 2 * c->blk);
        memset(sum, 0, sizeof(int) * 2 * c->blk);
        if (c->side == 0) CHECK_MPI(MPI_Startall(2, q));
        tokens(c, 0);
        if (c->side != 0) CHECK_MPI(MPI_Startall(2, q));
        CHECK_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        int op = OP_BCAST;
        verify(c, op, &b);
        op = OP_ALLREDUCE;
        for (int i = 0; i < 2 * c->blk; i++) {
            int want = 0;
            for (int j = 0; j < c->rn; j++)
                want += val(c->rw[j], 0, i);
            EXPECT_AT(i, sum[i], want);
        }
    }
    CHECK_MPI(MPI_Request_free(&q[0]));
    CHECK_MPI(MPI_Request_free(&q[1]));
    free(sum);
    release(&b);
}

#define EXPECT_CLASS(call, cls)                                                                    \
    do {                                                                                           \
        int e_ = (call), c_ = -1;                                                                  \
        MPI_Error_class(e_, &c_);                                                                  \
        CHECK(c_ == (cls), "%s: expected %s, got class %d", #call, #cls, c_);                      \
    } while (0)

static void bad_roots(const struct ic *c)
{
    MPI_Comm ic = c->comm;
    MPI_Request q = MPI_REQUEST_NULL;
    int x[4] = {0}, y[4] = {0}, one[1] = {1}, zero[1] = {0};
    EXPECT_CLASS(MPI_Ibcast(x, 1, MPI_INT, c->rn, ic, &q), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Ibcast(x, 1, MPI_INT, -7, ic, &q), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Ireduce(x, y, 1, MPI_INT, MPI_SUM, c->rn + 3, ic, &q), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Igather(x, 1, MPI_INT, y, 1, MPI_INT, c->rn, ic, &q), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Igatherv(x, 1, MPI_INT, y, one, zero, MPI_INT, -5, ic, &q), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Iscatter(x, 1, MPI_INT, y, 1, MPI_INT, c->rn, ic, &q), MPI_ERR_ROOT);
    EXPECT_CLASS(MPI_Iscatterv(x, one, zero, MPI_INT, y, 1, MPI_INT, c->rn, ic, &q), MPI_ERR_ROOT);
    /* a reduction's op and type are checked when it starts */
    EXPECT_CLASS(MPI_Iallreduce(x, y, 1, MPI_INT, MPI_OP_NULL, ic, &q), MPI_ERR_OP);
    EXPECT_CLASS(MPI_Ireduce_scatter_block(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, ic, &q),
                 MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Ibcast(x, 1, MPI_INT, 0, ic, NULL), MPI_ERR_ARG);
    CHECK(q == MPI_REQUEST_NULL, "a refused start gave a request");
    /* the inter-communicator still works after the refusals */
    CHECK_MPI(MPI_Ibarrier(ic, &q));
    CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) return finish_ok(); /* an inter-communicator needs two groups */

    struct ic c = {.wrank = wrank, .side = wrank >= wsize / 2};
    MPI_Comm local;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, c.side, wrank, &local));
    /* leaders: world 0 and world wsize / 2 (on different nodes when the job spans nodes) */
    CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, c.side ? 0 : wsize / 2, 5, &c.comm));
    CHECK_MPI(MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN));
    MPI_Comm_rank(c.comm, &c.r);
    MPI_Comm_size(c.comm, &c.n);
    MPI_Comm_remote_size(c.comm, &c.rn);
    c.rw = malloc(sizeof(int) * (size_t)c.rn);
    CHECK(c.rw, "out of memory");
    for (int j = 0; j < c.rn; j++)
        c.rw[j] = c.side ? j : wsize / 2 + j;
    set_blk(&c, BIG);
    one_by_one(&c);
    persistent(&c);
    mixed(&c);
    set_blk(&c, SMALL);
    all_at_once(&c);
    idups(&c);
    freed_handles(&c);
    bad_roots(&c);

    CHECK_MPI(MPI_Type_free(&c.vec));
    free(c.rw);
    CHECK_MPI(MPI_Comm_free(&c.comm));
    CHECK_MPI(MPI_Comm_free(&local));
    return finish_ok();
}
