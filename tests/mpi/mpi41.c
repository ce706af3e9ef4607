/* mpi41.c — MPI 4.1 calls: the status field accessors, Request_get_status_any/all/some (which
 * leave requests as they are: a later Wait still completes them), Type_get_value_index. */
#include "check.h"

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* status fields */
    MPI_Status st;
    int v = -1;
    CHECK_MPI(MPI_Status_set_source(&st, 3));
    CHECK_MPI(MPI_Status_set_tag(&st, 44));
    CHECK_MPI(MPI_Status_set_error(&st, MPI_ERR_TAG));
    CHECK_MPI(MPI_Status_get_source(&st, &v));
    CHECK(v == 3 && st.MPI_SOURCE == 3, "source %d", v);
    CHECK_MPI(MPI_Status_get_tag(&st, &v));
    CHECK(v == 44, "tag %d", v);
    CHECK_MPI(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG, "error %d", v);

    /* Request_get_status_*: three receives, the middle one's message sent first */
    int in[3] = {-1, -1, -1}, out[3] = {rank, rank + 10, rank + 20};
    MPI_Request rq[4];
    for (int i = 0; i < 3; i++)
        CHECK_MPI(MPI_Irecv(&in[i], 1, MPI_INT, left, 100 + i, MPI_COMM_WORLD, &rq[i]));
    rq[3] = MPI_REQUEST_NULL;
    int idx = -2, flag = 0, outcount = -2, ind[4];
    CHECK_MPI(MPI_Request_get_status_any(4, rq, &idx, &flag, &st));
    CHECK(!flag && idx == MPI_UNDEFINED, "get_status_any before any send: flag %d", flag);
    CHECK_MPI(MPI_Request_get_status_all(4, rq, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "get_status_all before any send");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* every rank looked before any sends */
    CHECK_MPI(MPI_Send(&out[1], 1, MPI_INT, right, 101, MPI_COMM_WORLD));
    flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Request_get_status_any(4, rq, &idx, &flag, &st));
    CHECK(idx == 1 && st.MPI_TAG == 101 && st.MPI_SOURCE == left, "get_status_any: index %d", idx);
    CHECK(rq[1] != MPI_REQUEST_NULL, "get_status_any freed the request");
    MPI_Status sts[4];
    CHECK_MPI(MPI_Request_get_status_some(4, rq, &outcount, ind, sts));
    CHECK(outcount == 1 && ind[0] == 1 && sts[0].MPI_TAG == 101, "get_status_some: %d", outcount);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* every rank looked before the other two sends */
    CHECK_MPI(MPI_Send(&out[0], 1, MPI_INT, right, 100, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Send(&out[2], 1, MPI_INT, right, 102, MPI_COMM_WORLD));
    flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Request_get_status_all(4, rq, &flag, sts));
    for (int i = 0; i < 3; i++)
        CHECK(sts[i].MPI_TAG == 100 + i, "get_status_all: status %d tag %d", i, sts[i].MPI_TAG);
    CHECK(sts[3].MPI_TAG == MPI_ANY_TAG && sts[3].MPI_SOURCE == MPI_ANY_SOURCE,
          "get_status_all: the null request's status is not empty");
    CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        CHECK(in[i] == left + 10 * i, "receive %d got %d", i, in[i]);
    /* all null: any says flag with index MPI_UNDEFINED, some says MPI_UNDEFINED */
    CHECK_MPI(MPI_Request_get_status_any(4, rq, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "get_status_any on null requests");
    CHECK_MPI(MPI_Request_get_status_some(4, rq, &outcount, ind, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "get_status_some on null requests: %d", outcount);

    /* Type_get_value_index */
    MPI_Datatype pt;
    CHECK_MPI(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pt));
    CHECK(pt == MPI_DOUBLE_INT, "double/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_INT, MPI_INT, &pt));
    CHECK(pt == MPI_2INT, "int/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &pt));
    CHECK(pt == MPI_DATATYPE_NULL, "char/int has no pair type");
    return finish_ok();
}
