/* ports.c — MPI_Open_port, Comm_accept/connect, Publish/Lookup/Unpublish_name and Comm_join
 * between rank groups of one job (dynproc.bats); an even number of ranks, at least 2: even
 * ranks accept, odd ones connect (with --map-by node on 2 agents: from the other node).
 * "ports nojoin" leaves out the join (ranks 0 and 1 then need not share a process).
 * Prints "ports ok" on rank 0 when every check passed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "abort_check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int side = rank % 2; /* 0 accepts, 1 connects */
    MPI_Comm half, inter;
    MPI_Comm_split(MPI_COMM_WORLD, side, rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    char port[MPI_MAX_PORT_NAME] = "", got[MPI_MAX_PORT_NAME] = "";

    /* the accepting side publishes its port under a service name, the other looks it up */
    if (side == 0 && hrank == 0) {
        CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "open");
        CHECK(MPI_Publish_name("tmpi-test-service", MPI_INFO_NULL, port) == MPI_SUCCESS, "pub");
        CHECK(err_class(MPI_Publish_name("tmpi-test-service", MPI_INFO_NULL, port)) ==
                  MPI_ERR_SERVICE,
              "a second publish of one service");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (side == 1 && hrank == 0) {
        CHECK(MPI_Lookup_name("tmpi-test-service", MPI_INFO_NULL, got) == MPI_SUCCESS, "lookup");
        CHECK(strncmp(got, "tmpi-port:", 10) == 0, "looked up %s", got);
        CHECK(err_class(MPI_Lookup_name("tmpi-no-service", MPI_INFO_NULL, got + 0)) == MPI_ERR_NAME,
              "lookup of an unknown service");
        MPI_Lookup_name("tmpi-test-service", MPI_INFO_NULL, got);
    }
    if (side == 0)
        CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter) == MPI_SUCCESS, "accept");
    else
        CHECK(MPI_Comm_connect(got, MPI_INFO_NULL, 0, half, &inter) == MPI_SUCCESS, "connect");
    int rsize, isinter;
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_test_inter(inter, &isinter);
    CHECK(isinter && rsize == size - hsize, "remote size %d", rsize);
    /* data both ways: rank i of each side with rank i of the other */
    int v = 1000 * side + hrank, w = -1;
    if (hrank < rsize)
        MPI_Sendrecv(&v, 1, MPI_INT, hrank, 4, &w, 1, MPI_INT, hrank, 4, inter, MPI_STATUS_IGNORE);
    CHECK(hrank >= rsize || w == 1000 * (1 - side) + hrank, "got %d", w);
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, side, &merged);
    int msize;
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size, "merged size %d", msize);
    MPI_Comm_free(&merged);
    CHECK(MPI_Comm_disconnect(&inter) == MPI_SUCCESS, "disconnect");

    if (side == 0 && hrank == 0) {
        CHECK(MPI_Unpublish_name("tmpi-test-service", MPI_INFO_NULL, port) == MPI_SUCCESS,
              "unpublish");
        CHECK(err_class(MPI_Unpublish_name("tmpi-test-service", MPI_INFO_NULL, port)) ==
                  MPI_ERR_SERVICE,
              "second unpublish");
        CHECK(MPI_Close_port(port) == MPI_SUCCESS, "close");
        CHECK(err_class(MPI_Close_port(port)) == MPI_ERR_PORT, "second close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* a closed port and another job's port are refused, not waited on */
    if (side == 1 && hrank == 0) {
        CHECK(err_class(MPI_Lookup_name("tmpi-test-service", MPI_INFO_NULL, port)) == MPI_ERR_NAME,
              "lookup after unpublish");
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm x = 3;
        CHECK(err_class(MPI_Comm_connect(got, MPI_INFO_NULL, 0, MPI_COMM_SELF, &x)) == MPI_ERR_PORT,
              "connect to a closed port");
        CHECK(x == MPI_COMM_NULL, "connect left %d", x);
        CHECK(err_class(MPI_Comm_connect("tmpi-port:999999:1", MPI_INFO_NULL, 0, MPI_COMM_SELF,
                                         &x)) == MPI_ERR_PORT,
              "connect to another job's port");
    }

    /* MPI_Comm_join over a socket pair between ranks 0 and 1 (one process: one fd table) */
    int fds[2] = {-1, -1}, join = !(argc > 1 && strcmp(argv[1], "nojoin") == 0);
    if (rank == 0 && join) CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0, "socketpair");
    MPI_Bcast(fds, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank < 2 && join) {
        MPI_Comm j;
        CHECK(MPI_Comm_join(fds[rank], &j) == MPI_SUCCESS, "join");
        int jr, jl;
        MPI_Comm_remote_size(j, &jr);
        MPI_Comm_size(j, &jl);
        CHECK(jr == 1 && jl == 1, "join sizes %d/%d", jl, jr);
        int a = rank + 50, b = -1;
        MPI_Sendrecv(&a, 1, MPI_INT, 0, 5, &b, 1, MPI_INT, 0, 5, j, MPI_STATUS_IGNORE);
        CHECK(b == (1 - rank) + 50, "join got %d", b);
        MPI_Comm_disconnect(&j);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && join) {
        close(fds[0]);
        close(fds[1]);
    }
    MPI_Comm_free(&half);
    if (rank == 0) printf("ports ok\n");
    MPI_Finalize();
    return 0;
}
