/* dynproc.c — the process management calls that need no other job: MPI_Comm_get_parent of a
 * job nobody spawned, MPI_UNIVERSE_SIZE and MPI_APPNUM, MPI_Comm_disconnect of intra- and
 * inter-communicators with messages in flight before it, and its errors. */
#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent = 12345;
    CHECK_MPI(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "parent %d", parent);
    int *usize, *appnum, flag;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(!flag || *usize >= size, "MPI_UNIVERSE_SIZE %d below %d", flag ? *usize : 0, size);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(flag && *appnum == 0, "MPI_APPNUM");

    /* an eager message sent before the disconnect is received before it by the peer */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int v = rank, got = -1;
    MPI_Request rq;
    MPI_Isend(&v, 1, MPI_INT, (rank + 1) % size, 3, dup, &rq);
    MPI_Recv(&got, 1, MPI_INT, (rank + size - 1) % size, 3, dup, MPI_STATUS_IGNORE);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(got == (rank + size - 1) % size, "got %d", got);
    CHECK_MPI(MPI_Comm_disconnect(&dup));
    CHECK(dup == MPI_COMM_NULL, "disconnect left %d", dup);

    if (size >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter);
        CHECK_MPI(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL, "inter disconnect left %d", inter);
        MPI_Comm_free(&half);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm w = MPI_COMM_WORLD, none = MPI_COMM_NULL;
    int e = MPI_Comm_disconnect(&w), cls;
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COMM, "disconnect of MPI_COMM_WORLD: %d", e);
    e = MPI_Comm_disconnect(&none);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_COMM, "disconnect of MPI_COMM_NULL: %d", e);
    e = MPI_Comm_get_parent(NULL);
    MPI_Error_class(e, &cls);
    CHECK(cls == MPI_ERR_ARG, "get_parent(NULL): %d", e);
    return finish_ok();
}
