/* std_letter.c — the letter of the standard where programs found TMPI bent (issue 33):
 * MPI_BOTTOM with datatypes of absolute addresses in every kind of call; calls returning one
 * status leave its MPI_ERROR alone; types of negative extent (ub < lb) in pack, point-to-point,
 * collectives and RMA; attributes on predefined datatypes; a freed keyval still serves get and
 * delete until its last attribute goes; persistent requests outlive their freed types. */
#include <string.h>

#include "check.h"

#define SENTINEL (-77) /* an MPI_ERROR value no call may write */

static int rank, size;

/* ---- MPI_BOTTOM ---- */

/* An int and a double at absolute addresses: the type of (MPI_BOTTOM, 1) is that record. */
struct rec {
    int i;
    double d;
};

static MPI_Datatype abs_type(struct rec *r)
{
    MPI_Aint disp[2];
    MPI_Get_address(&r->i, &disp[0]);
    MPI_Get_address(&r->d, &disp[1]);
    int len[2] = {1, 1};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t;
    CHECK_MPI(MPI_Type_create_struct(2, len, disp, types, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    return t;
}

/* Two ints at absolute addresses (a, b): a type reductions apply to. */
static MPI_Datatype abs_ints(int *a, int *b)
{
    MPI_Aint disp[2];
    MPI_Get_address(a, &disp[0]);
    MPI_Get_address(b, &disp[1]);
    int len[2] = {1, 1};
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_hindexed(2, len, disp, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    return t;
}

static void bottom(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    struct rec out = {rank, rank + 0.5}, in = {-1, -1};
    MPI_Datatype to = abs_type(&out), ti = abs_type(&in);

    /* blocking, nonblocking, persistent and Sendrecv */
    CHECK_MPI(MPI_Sendrecv(MPI_BOTTOM, 1, to, right, 1, MPI_BOTTOM, 1, ti, left, 1, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECK(in.i == left && in.d == left + 0.5, "Sendrecv: got %d %g", in.i, in.d);
    in.i = -1;
    MPI_Request rq[2];
    CHECK_MPI(MPI_Irecv(MPI_BOTTOM, 1, ti, left, 2, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Isend(MPI_BOTTOM, 1, to, right, 2, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(in.i == left, "Isend/Irecv: got %d", in.i);
    in.i = -1;
    CHECK_MPI(MPI_Recv_init(MPI_BOTTOM, 1, ti, left, 3, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Send_init(MPI_BOTTOM, 1, to, right, 3, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Startall(2, rq));
    CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(in.i == left, "persistent: got %d", in.i);
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    if (rank == 0) {
        CHECK_MPI(MPI_Send(MPI_BOTTOM, 1, to, size - 1, 4, MPI_COMM_WORLD));
    }
    if (rank == size - 1) {
        in.i = -1;
        CHECK_MPI(MPI_Recv(MPI_BOTTOM, 1, ti, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(in.i == 0 && in.d == 0.5, "Send/Recv: got %d %g", in.i, in.d);
    }

    /* collectives: Bcast, Gather, Allreduce in place */
    struct rec b = {rank == 0 ? 42 : 0, rank == 0 ? 4.25 : 0};
    MPI_Datatype tb = abs_type(&b);
    CHECK_MPI(MPI_Bcast(MPI_BOTTOM, 1, tb, 0, MPI_COMM_WORLD));
    CHECK(b.i == 42 && b.d == 4.25, "Bcast: got %d %g", b.i, b.d);
    int *all = malloc(2 * sizeof(int) * (size_t)size);
    int x = rank, y = 10 * rank;
    MPI_Datatype txy = abs_ints(&x, &y);
    CHECK_MPI(MPI_Gather(MPI_BOTTOM, 1, txy, all, 2, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int k = 0; k < size; k++)
            CHECK(all[2 * k] == k && all[2 * k + 1] == 10 * k, "Gather: block %d", k);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, txy, MPI_SUM, MPI_COMM_WORLD));
    CHECK(x == size * (size - 1) / 2 && y == 10 * x, "Allreduce: got %d %d", x, y);
    free(all);

    /* MPI_Pack / MPI_Unpack */
    char packed[64];
    int pos = 0;
    CHECK_MPI(MPI_Pack(MPI_BOTTOM, 1, to, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    struct rec back = {0, 0};
    MPI_Datatype tback = abs_type(&back);
    int upos = 0;
    CHECK_MPI(MPI_Unpack(packed, pos, &upos, MPI_BOTTOM, 1, tback, MPI_COMM_WORLD));
    CHECK(back.i == rank && back.d == rank + 0.5, "Pack/Unpack: got %d %g", back.i, back.d);

    /* RMA: Put from MPI_BOTTOM, Get into it */
    int *wmem;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wmem, &win));
    wmem[0] = wmem[1] = -1;
    x = rank, y = rank + 100;
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(MPI_BOTTOM, 1, txy, right, 0, 2, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(wmem[0] == left && wmem[1] == left + 100, "Put: got %d %d", wmem[0], wmem[1]);
    x = y = -1;
    CHECK_MPI(MPI_Get(MPI_BOTTOM, 1, txy, right, 0, 2, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(x == rank && y == rank + 100, "Get: got %d %d", x, y);
    CHECK_MPI(MPI_Win_free(&win));

    /* A NULL buffer of a type whose data is relative is still refused. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Send(NULL, 3, MPI_INT, right, 5, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "Send(NULL, 3, MPI_INT): class %d", cls);
    err = MPI_Bcast(NULL, 3, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "Bcast(NULL, 3, MPI_INT): class %d", cls);
    pos = 0;
    err = MPI_Pack(NULL, 3, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "Pack(NULL, 3, MPI_INT): class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Type_free(&to);
    MPI_Type_free(&ti);
    MPI_Type_free(&tb);
    MPI_Type_free(&txy);
    MPI_Type_free(&tback);
}

/* ---- one status: MPI_ERROR stays the program's ---- */

static void keep_error(MPI_Status *st, const char *call)
{
    CHECK(st->MPI_ERROR == SENTINEL, "%s wrote MPI_ERROR %d", call, st->MPI_ERROR);
}

static void single_status(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v = rank, got = -1, flag = 0;
    MPI_Status st;
    MPI_Request sr, rr;
    MPI_Message msg;

    /* Recv, Probe, Iprobe, Mprobe + Mrecv, Improbe + Imrecv + Wait, Sendrecv */
    for (int tag = 10; tag < 14; tag++) {
        CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, right, tag, MPI_COMM_WORLD, &sr));
        MPI_Request_free(&sr);
    }
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Probe(left, 10, MPI_COMM_WORLD, &st));
    keep_error(&st, "MPI_Probe");
    do {
        st.MPI_ERROR = SENTINEL;
        CHECK_MPI(MPI_Iprobe(left, 10, MPI_COMM_WORLD, &flag, &st));
        keep_error(&st, "MPI_Iprobe");
    } while (!flag);
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &st));
    keep_error(&st, "MPI_Recv");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 10 && got == left, "Recv: status or data");
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Mprobe(left, 11, MPI_COMM_WORLD, &msg, &st));
    keep_error(&st, "MPI_Mprobe");
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st));
    keep_error(&st, "MPI_Mrecv");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 11, "Mrecv: status");
    flag = 0;
    while (!flag) {
        st.MPI_ERROR = SENTINEL;
        CHECK_MPI(MPI_Improbe(left, 12, MPI_COMM_WORLD, &flag, &msg, &st));
        keep_error(&st, "MPI_Improbe");
    }
    CHECK_MPI(MPI_Imrecv(&got, 1, MPI_INT, &msg, &rr));
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Wait(&rr, &st));
    keep_error(&st, "MPI_Wait after MPI_Imrecv");
    CHECK(st.MPI_TAG == 12, "Imrecv: tag %d", st.MPI_TAG);
    CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &rr));
    flag = 0;
    while (!flag) {
        st.MPI_ERROR = SENTINEL;
        CHECK_MPI(MPI_Request_get_status(rr, &flag, &st));
        keep_error(&st, "MPI_Request_get_status");
    }
    flag = 0;
    while (!flag) {
        st.MPI_ERROR = SENTINEL;
        CHECK_MPI(MPI_Test(&rr, &flag, &st));
        keep_error(&st, "MPI_Test");
    }
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(
        MPI_Sendrecv(&v, 1, MPI_INT, right, 14, &got, 1, MPI_INT, left, 14, MPI_COMM_WORLD, &st));
    keep_error(&st, "MPI_Sendrecv");
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Sendrecv_replace(&v, 1, MPI_INT, right, 15, left, 15, MPI_COMM_WORLD, &st));
    keep_error(&st, "MPI_Sendrecv_replace");
    /* a nonblocking collective's one status */
    CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &rr));
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Wait(&rr, &st));
    keep_error(&st, "MPI_Wait on MPI_Ibarrier");
    /* Waitany returns one status too */
    CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, left, 16, MPI_COMM_WORLD, &rr));
    CHECK_MPI(MPI_Send(&v, 1, MPI_INT, right, 16, MPI_COMM_WORLD));
    int idx = -1;
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Waitany(1, &rr, &idx, &st));
    keep_error(&st, "MPI_Waitany");

    /* MPI_PROC_NULL: the empty status, whose MPI_ERROR is MPI_SUCCESS */
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL)");
    keep_error(&st, "MPI_Mprobe(MPI_PROC_NULL)");
    CHECK_MPI(MPI_Mrecv(&got, 1, MPI_INT, &msg, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "Mrecv(MPI_MESSAGE_NO_PROC): source %d", st.MPI_SOURCE);
    keep_error(&st, "MPI_Mrecv(MPI_MESSAGE_NO_PROC)");
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Recv(PROC_NULL)");
    keep_error(&st, "MPI_Recv(MPI_PROC_NULL)");
    rr = MPI_REQUEST_NULL;
    st.MPI_ERROR = SENTINEL;
    CHECK_MPI(MPI_Wait(&rr, &st));
    CHECK(st.MPI_ERROR == MPI_SUCCESS && st.MPI_TAG == MPI_ANY_TAG, "Wait(null): not empty");
}

/* ---- negative extent ---- */

static void negative_extent(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype down;
    CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, -(MPI_Aint)sizeof(int), &down));
    CHECK_MPI(MPI_Type_commit(&down));
    MPI_Aint lb, ext;
    CHECK_MPI(MPI_Type_get_extent(down, &lb, &ext));
    CHECK(lb == 0 && ext == -(MPI_Aint)sizeof(int), "extent: lb %ld extent %ld", (long)lb,
          (long)ext);
    int arr[8], *top = &arr[7];
    for (int k = 0; k < 8; k++)
        arr[k] = 100 * rank + k;

    /* pack: element i is arr[7 - i] */
    int packed[4], pos = 0;
    CHECK_MPI(MPI_Pack(top, 4, down, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 4 * (int)sizeof(int), "Pack: %d bytes", pos);
    for (int i = 0; i < 4; i++)
        CHECK(packed[i] == 100 * rank + 7 - i, "Pack: element %d is %d", i, packed[i]);
    int un[8] = {0};
    pos = 0;
    CHECK_MPI(MPI_Unpack(packed, sizeof packed, &pos, &un[3], 4, down, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(un[3 - i] == 100 * rank + 7 - i, "Unpack: element %d", i);

    /* point-to-point, count 4: the receiver gets them reversed in plain ints, and a receive
     * in the reversed type turns them round again */
    int in[4] = {0};
    CHECK_MPI(MPI_Sendrecv(top, 4, down, right, 20, in, 4, MPI_INT, left, 20, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == 100 * left + 7 - i, "send of count 4: element %d is %d", i, in[i]);
    int fwd[4] = {rank, rank + 1, rank + 2, rank + 3}, rev[4] = {0};
    CHECK_MPI(MPI_Sendrecv(fwd, 4, MPI_INT, right, 21, &rev[3], 4, down, left, 21, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(rev[3 - i] == left + i, "receive of count 4: element %d", i);
    /* a large message (three-phase across nodes) */
    enum { BIG = 50000 };
    int *bs = malloc(BIG * sizeof(int)), *br = malloc(BIG * sizeof(int));
    for (int k = 0; k < BIG; k++)
        bs[k] = rank * BIG + k;
    CHECK_MPI(MPI_Sendrecv(&bs[BIG - 1], BIG, down, right, 22, br, BIG, MPI_INT, left, 22,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < BIG; k++)
        CHECK(br[k] == left * BIG + BIG - 1 - k, "large send: element %d", k);

    /* collectives: Bcast, Allreduce, Gather */
    int bc[4];
    for (int i = 0; i < 4; i++)
        bc[i] = rank == 0 ? 50 + i : -1;
    CHECK_MPI(MPI_Bcast(&bc[3], 4, down, 0, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(bc[i] == 50 + i, "Bcast: element %d is %d", i, bc[i]);
    int red[4] = {1, 2, 3, 4}, res[4] = {0};
    CHECK_MPI(MPI_Allreduce(&red[3], &res[3], 4, down, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(res[i] == (i + 1) * size, "Allreduce: element %d is %d", i, res[i]);
    int *g = malloc(4 * sizeof(int) * (size_t)size);
    CHECK_MPI(MPI_Gather(top, 4, down, g, 4, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int k = 0; k < size; k++)
            for (int i = 0; i < 4; i++)
                CHECK(g[4 * k + i] == 100 * k + 7 - i, "Gather: rank %d element %d", k, i);
    free(g);

    /* RMA: Put from and Get into a reversed buffer */
    int *wmem;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wmem, &win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK_MPI(MPI_Put(top, 4, down, right, 0, 4, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++)
        CHECK(wmem[i] == 100 * left + 7 - i, "Put: element %d is %d", i, wmem[i]);
    int gt[4] = {0};
    CHECK_MPI(MPI_Get(&gt[3], 4, down, right, 0, 4, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++)
        CHECK(gt[3 - i] == 100 * rank + 7 - i, "Get: element %d", i);
    CHECK_MPI(MPI_Accumulate(&red[3], 4, down, right, 0, 4, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++)
        CHECK(wmem[i] == 100 * left + 7 - i + 4 - i, "Accumulate: element %d", i);
    CHECK_MPI(MPI_Win_free(&win));
    free(bs);
    free(br);
    MPI_Type_free(&down);
}

/* ---- attributes ---- */

static int deleted;

static int count_delete(MPI_Datatype t, int key, void *val, void *extra)
{
    (void)t, (void)key, (void)val, (void)extra;
    deleted++;
    return MPI_SUCCESS;
}

static int count_comm_delete(MPI_Comm c, int key, void *val, void *extra)
{
    (void)c, (void)key, (void)val, (void)extra;
    deleted++;
    return MPI_SUCCESS;
}

static int other_key = MPI_KEYVAL_INVALID;

/* A delete callback that deletes another attribute of the same communicator. */
static int delete_other(MPI_Comm c, int key, void *val, void *extra)
{
    (void)key, (void)val, (void)extra;
    deleted++;
    return MPI_Comm_delete_attr(c, other_key);
}

static void attributes(void)
{
    /* on predefined datatypes */
    int key, v = 7, *got = NULL, flag = 0;
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &key, NULL));
    CHECK_MPI(MPI_Type_get_attr(MPI_DOUBLE, key, &got, &flag));
    CHECK(!flag, "MPI_DOUBLE has an attribute before any was set");
    CHECK_MPI(MPI_Type_set_attr(MPI_INT, key, &v));
    CHECK_MPI(MPI_Type_get_attr(MPI_INT, key, &got, &flag));
    CHECK(flag && got == &v, "MPI_INT's attribute: flag %d", flag);
    CHECK_MPI(MPI_Type_get_attr(MPI_DOUBLE, key, &got, &flag));
    CHECK(!flag, "MPI_DOUBLE got MPI_INT's attribute");
    MPI_Datatype dup;
    CHECK_MPI(MPI_Type_dup(MPI_INT, &dup));
    CHECK_MPI(MPI_Type_get_attr(dup, key, &got, &flag));
    CHECK(flag && got == &v, "a duplicate of MPI_INT lacks its attribute");
    deleted = 0;
    CHECK_MPI(MPI_Type_free(&dup));
    CHECK(deleted == 1, "freeing the duplicate: %d deletes", deleted);
    CHECK_MPI(MPI_Type_delete_attr(MPI_INT, key));
    CHECK(deleted == 2, "deleting MPI_INT's attribute: %d deletes", deleted);
    CHECK_MPI(MPI_Type_get_attr(MPI_INT, key, &got, &flag));
    CHECK(!flag, "MPI_INT's attribute survived its delete");

    /* a freed keyval serves get and delete until its last attribute goes */
    CHECK_MPI(MPI_Type_set_attr(MPI_INT, key, &v));
    int keep = key;
    CHECK_MPI(MPI_Type_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "Type_free_keyval left the handle");
    CHECK_MPI(MPI_Type_get_attr(MPI_INT, keep, &got, &flag));
    CHECK(flag && got == &v, "get with a freed keyval still in use");
    deleted = 0;
    CHECK_MPI(MPI_Type_delete_attr(MPI_INT, keep));
    CHECK(deleted == 1, "delete with a freed keyval: %d deletes", deleted);

    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int ckey;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_comm_delete, &ckey, NULL));
    CHECK_MPI(MPI_Comm_set_attr(c, ckey, &v));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, ckey, &v));
    int ckeep = ckey;
    CHECK_MPI(MPI_Comm_free_keyval(&ckey));
    CHECK_MPI(MPI_Comm_get_attr(c, ckeep, &got, &flag));
    CHECK(flag && got == &v, "Comm_get_attr with a freed keyval still in use");
    deleted = 0;
    CHECK_MPI(MPI_Comm_delete_attr(c, ckeep));
    CHECK(deleted == 1, "Comm_delete_attr with a freed keyval: %d deletes", deleted);
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_SELF, ckeep));
    CHECK(deleted == 2, "the last attribute of a freed keyval: %d deletes", deleted);
    /* gone now: the keyval is invalid */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int err = MPI_Comm_get_attr(MPI_COMM_SELF, ckeep, &got, &flag), cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_KEYVAL, "a keyval whose last attribute went: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

    /* a delete callback deleting its neighbours in the list; a second free of a keyval
     * still held by attributes is no error */
    int first, second;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_comm_delete, &other_key, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_other, &second, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_comm_delete, &first, NULL));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_attr(c, other_key, &v));
    CHECK_MPI(MPI_Comm_set_attr(c, second, &v));
    CHECK_MPI(MPI_Comm_set_attr(c, first, &v));
    deleted = 0;
    CHECK_MPI(MPI_Comm_delete_attr(c, second));
    CHECK(deleted == 2, "delete callback deleting another attribute: %d deletes", deleted);
    CHECK_MPI(MPI_Comm_get_attr(c, other_key, &got, &flag));
    CHECK(!flag, "the attribute its neighbour's callback deleted is still there");
    int first_copy = first;
    CHECK_MPI(MPI_Comm_free_keyval(&first));
    CHECK_MPI(MPI_Comm_free_keyval(&first_copy)); /* c's attribute still holds it */
    CHECK_MPI(MPI_Comm_free_keyval(&second));
    CHECK_MPI(MPI_Comm_free_keyval(&other_key));
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK(deleted == 3, "freeing the communicator: %d deletes", deleted);
    /* MPI_LASTUSEDCODE is never below MPI_ERR_LASTCODE */
    int *last = NULL;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", *last);
}

/* A persistent request keeps working after the program freed its derived type (MPI 3.1
 * §4.1.9: a freed type stays usable by operations that hold it). */
static void persistent_freed_type(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype st, rt;
    CHECK_MPI(MPI_Type_dup(MPI_INT, &st));
    CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &rt));
    CHECK_MPI(MPI_Type_commit(&rt));
    int out[2] = {rank, rank + 1}, in[2] = {-1, -1};
    MPI_Request rq[2];
    CHECK_MPI(MPI_Recv_init(in, 1, rt, left, 30, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Send_init(out, 2, st, right, 30, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Type_free(&st));
    CHECK_MPI(MPI_Type_free(&rt));
    for (int round = 0; round < 2; round++) {
        in[0] = in[1] = -1;
        CHECK_MPI(MPI_Startall(2, rq));
        CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(in[0] == left && in[1] == left + 1, "round %d after the types' free", round);
    }
    CHECK_MPI(MPI_Request_free(&rq[0]));
    CHECK_MPI(MPI_Request_free(&rq[1]));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bottom();
    single_status();
    negative_extent();
    attributes();
    persistent_freed_type();
    return finish_ok();
}
