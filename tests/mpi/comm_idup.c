/* comm_idup.c — MPI_Comm_idup and MPI_Comm_idup_with_info are non-blocking collectives
 * (MPI 3.1 §6.4.2, §5.12): starting one waits for nobody, several may be in flight on one
 * communicator and on several communicators started in different orders, the new
 * communicator exists only once the request completes, and it carries the parent's
 * attributes, topology and (with_info) hints. */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

static int rank, size;

/* A working communicator of size n with this rank at position r. */
static void check_comm(MPI_Comm c, int n, int r, const char *what)
{
    int cs = -1, cr = -1, sum = -1;
    CHECK_MPI(MPI_Comm_size(c, &cs));
    CHECK_MPI(MPI_Comm_rank(c, &cr));
    CHECK(cs == n && cr == r, "%s: size %d rank %d, expected %d %d", what, cs, cr, n, r);
    CHECK_MPI(MPI_Allreduce(&cr, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "%s: Allreduce gave %d", what, sum);
    int result;
    CHECK_MPI(MPI_Comm_compare(c, MPI_COMM_WORLD, &result));
    int want = strstr(what, "of b") && size > 1 ? MPI_SIMILAR : MPI_CONGRUENT; /* b: reversed */
    CHECK(n != size || size == 1 || result == want, "%s: compare to world %d, expected %d", what,
          result, want);
}

/* Rank 0 starts the dup and then sends to rank 1, which receives before it starts its dup: a
 * dup that waited for the others inside MPI_Comm_idup would never return on rank 0. */
static void starts_without_waiting(void)
{
    MPI_Comm nc = MPI_COMM_WORLD;
    MPI_Request req;
    int token = 7;
    if (rank == 1) CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &nc, &req));
    if (rank == 0 && size > 1) CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD));
    /* Before completion the new communicator cannot be used (here: it is not there yet). */
    if (size > 1 && rank == 0) {
        int n;
        EXPECT(MPI_Comm_size(nc, &n), MPI_ERR_COMM);
    }
    int flag = 0;
    MPI_Status st;
    CHECK_MPI(MPI_Request_get_status(req, &flag, &st)); /* may or may not be done yet */
    while (!flag)
        CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    if (req != MPI_REQUEST_NULL) CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "request not released");
    check_comm(nc, size, rank, "idup of world");
    CHECK_MPI(MPI_Comm_free(&nc));
}

/* Even ranks start the dup of a then b, odd ranks b then a; each completes. */
static void crossed_orders(void)
{
    MPI_Comm a, b, na = MPI_COMM_NULL, nb = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &b)); /* reversed ranks */
    MPI_Request req[2];
    if (rank % 2 == 0) {
        CHECK_MPI(MPI_Comm_idup(a, &na, &req[0]));
        CHECK_MPI(MPI_Comm_idup(b, &nb, &req[1]));
    } else {
        CHECK_MPI(MPI_Comm_idup(b, &nb, &req[1]));
        CHECK_MPI(MPI_Comm_idup(a, &na, &req[0]));
    }
    CHECK_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    check_comm(na, size, rank, "idup of a");
    check_comm(nb, size, size - 1 - rank, "idup of b");
    MPI_Comm *all[] = {&na, &nb, &a, &b};
    for (int i = 0; i < 4; i++)
        CHECK_MPI(MPI_Comm_free(all[i]));
}

/* Several dups in flight on one communicator, mixed with its other collectives, completed in
 * another order than started. */
static void many_in_flight(void)
{
    enum { N = 8 };
    MPI_Comm nc[N];
    MPI_Request req[N + 1];
    int x = rank, sum = -1;
    for (int i = 0; i < N; i++) {
        CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &nc[i], &req[i]));
        if (i == N / 2)
            CHECK_MPI(MPI_Iallreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[N]));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = N; i >= 0; i--)
        CHECK_MPI(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
    CHECK(sum == size * (size - 1) / 2, "Iallreduce between the dups: %d", sum);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < i; j++)
            CHECK(nc[i] != nc[j], "dups %d and %d share handle %d", i, j, nc[i]);
    /* Distinct contexts: a message on one never matches a receive on another. */
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    int got[N];
    MPI_Request rq[2 * N];
    for (int i = 0; i < N; i++) {
        got[i] = -1;
        CHECK_MPI(MPI_Irecv(&got[i], 1, MPI_INT, from, 0, nc[i], &rq[i]));
    }
    int vals[N];
    for (int i = N - 1; i >= 0; i--) {
        vals[i] = 100 * i + rank;
        CHECK_MPI(MPI_Isend(&vals[i], 1, MPI_INT, peer, 0, nc[i], &rq[N + i]));
    }
    CHECK_MPI(MPI_Waitall(2 * N, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) {
        CHECK(got[i] == 100 * i + from, "dup %d carried %d, expected %d", i, got[i],
              100 * i + from);
        CHECK_MPI(MPI_Comm_free(&nc[i]));
    }
}

static int copies;
static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag)
{
    (void)c, (void)key, (void)extra;
    copies++;
    *(void **)out = (char *)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

/* What the new communicator inherits: attributes (copy callbacks), topology, hints. */
static void inherits(void)
{
    int key;
    static char payload[4];
    CHECK_MPI(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    CHECK_MPI(MPI_Dims_create(size, 2, dims));
    MPI_Comm cart, nc;
    CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    CHECK_MPI(MPI_Comm_set_attr(cart, key, payload));
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    CHECK_MPI(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_Request req;
    copies = 0;
    CHECK_MPI(MPI_Comm_idup_with_info(cart, info, &nc, &req));
    CHECK_MPI(MPI_Info_free(&info)); /* the dup took what it needs */
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(copies == 1, "copy callback ran %d times", copies);
    void *v = NULL;
    int flag = 0;
    CHECK_MPI(MPI_Comm_get_attr(nc, key, &v, &flag));
    CHECK(flag && v == payload + 1, "attribute on the dup: flag %d", flag);
    int topo = -1, ndims = -1, coords[2], ccoords[2];
    CHECK_MPI(MPI_Topo_test(nc, &topo));
    CHECK_MPI(MPI_Cartdim_get(nc, &ndims));
    CHECK(topo == MPI_CART && ndims == 2, "topology of the dup: %d, %d dims", topo, ndims);
    int crank;
    CHECK_MPI(MPI_Comm_rank(cart, &crank));
    CHECK_MPI(MPI_Cart_coords(nc, crank, 2, coords));
    CHECK_MPI(MPI_Cart_coords(cart, crank, 2, ccoords));
    CHECK(coords[0] == ccoords[0] && coords[1] == ccoords[1], "coordinates differ");
    MPI_Info got;
    char val[MPI_MAX_INFO_VAL];
    CHECK_MPI(MPI_Comm_get_info(nc, &got));
    CHECK_MPI(MPI_Info_get(got, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && !strcmp(val, "true"), "hint on the dup: flag %d", flag);
    CHECK_MPI(MPI_Info_free(&got));
    check_comm(nc, size, crank, "idup_with_info of a Cartesian communicator");
    CHECK_MPI(MPI_Comm_free(&nc));
    CHECK_MPI(MPI_Comm_free(&cart));
    CHECK_MPI(MPI_Comm_free_keyval(&key));
}

/* Sub-communicators: members outside do not take part, the dup of a split works. */
static void of_split(void)
{
    MPI_Comm half, nc;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MPI_Request req;
    CHECK_MPI(MPI_Comm_idup(half, &nc, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int hs;
    MPI_Comm_size(half, &hs);
    check_comm(nc, hs, rank / 2, "idup of a split half");
    CHECK_MPI(MPI_Comm_free(&nc));
    CHECK_MPI(MPI_Comm_free(&half));
}

/* Inter-communicators: the dup works and its request completes. */
static void of_intercomm(void)
{
    if (size < 2) return;
    MPI_Comm half, inter, nc;
    int color = rank < size / 2;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half));
    CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? size / 2 : 0, 5, &inter));
    MPI_Request req;
    CHECK_MPI(MPI_Comm_idup(inter, &nc, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int flag = 0, rs = 0, sum = -1, one = 1;
    CHECK_MPI(MPI_Comm_test_inter(nc, &flag));
    CHECK_MPI(MPI_Comm_remote_size(nc, &rs));
    CHECK(flag && rs == (color ? size - size / 2 : size / 2), "inter dup: flag %d remote %d", flag,
          rs);
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, nc));
    CHECK(sum == rs, "Allreduce over the inter dup: %d, expected %d", sum, rs);
    CHECK_MPI(MPI_Comm_free(&nc));
    CHECK_MPI(MPI_Comm_free(&inter));
    CHECK_MPI(MPI_Comm_free(&half));
}

static void errors(void)
{
    MPI_Comm nc;
    MPI_Request req;
    EXPECT(MPI_Comm_idup(MPI_COMM_NULL, &nc, &req), MPI_ERR_COMM);
    EXPECT(MPI_Comm_idup(MPI_COMM_WORLD, &nc, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_idup_with_info(MPI_COMM_WORLD, (MPI_Info)12345, &nc, &req), MPI_ERR_INFO);
    /* A collective request cannot be cancelled. */
    CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &nc, &req));
    EXPECT(MPI_Cancel(&req), MPI_ERR_REQUEST);
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Comm_free(&nc));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    starts_without_waiting();
    crossed_orders();
    many_in_flight();
    inherits();
    of_split();
    of_intercomm();
    errors();
    return finish_ok();
}
