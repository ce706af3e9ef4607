/* xconn.c — MPI_Comm_connect's bounds and connects between separately launched jobs
 * (dynproc.bats, multinode_users.bats).
 *   open FILE           rank 0 opens a port, writes it into FILE, waits for FILE.done, closes
 *                       the port; prints "open ok"
 *   connect FILE        rank 0 waits for FILE and connects to its port with the errors
 *                       fatal: the job ends with the connect's error message (the test reads
 *                       it); prints "connect returned" if it ever returns
 * (MPI_ERRORS_RETURN gives the class only, MPI_ERRORS_ARE_FATAL prints the reason; the opener
 * closes its port after FILE.done or 20 s.)
 *   timeout SECS        rank 0 opens a port; the last rank (another node when the job spans
 *                       two) connects with info timeout=SECS and nobody accepts: MPI_ERR_PORT
 *                       after SECS (not before, at most 10 s after); then connects again and
 *                       rank 0 accepts: the first connect left no request behind; prints
 *                       "timeout ok"
 *   pending             rank 0 opens a port; every other rank connects with timeout 3 on
 *                       MPI_COMM_SELF (TMPI_CONNECT_PENDING_MAX=1): one waits and times out
 *                       (3 s), the others are refused at once (MPI_ERR_PORT in under 1.5 s);
 *                       prints "pending ok" */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abort_check.h"

static int wait_file(const char *path)
{
    for (int i = 0; i < 6000; i++) {
        if (access(path, F_OK) == 0) return 0;
        usleep(10000);
    }
    return -1;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f && fclose(f) == 0, "cannot create %s", path);
}

static int connect_with(const char *port, const char *secs, char *msg)
{
    MPI_Info info = MPI_INFO_NULL;
    if (secs) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "timeout", secs);
    }
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = MPI_Comm_connect(port, info, 0, MPI_COMM_SELF, &inter);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    int len = 0;
    msg[0] = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    if (rc == MPI_SUCCESS) MPI_Comm_disconnect(&inter);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK(argc >= 2, "usage: open|connect|timeout|pending ...");
    const char *mode = argv[1];
    char port[MPI_MAX_PORT_NAME], msg[MPI_MAX_ERROR_STRING], done[4096];
    if (!strcmp(mode, "open") && rank == 0) {
        CHECK(argc >= 3, "open FILE");
        snprintf(done, sizeof done, "%s.done", argv[2]);
        CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
        FILE *f = fopen(tmp, "w");
        CHECK(f && fprintf(f, "%s\n", port) > 0 && fclose(f) == 0, "cannot write %s", tmp);
        CHECK(rename(tmp, argv[2]) == 0, "rename %s", tmp);
        for (int i = 0; i < 2000 && access(done, F_OK) != 0; i++)
            usleep(10000);
        CHECK(MPI_Close_port(port) == MPI_SUCCESS, "MPI_Close_port");
        printf("open ok\n");
    } else if (!strcmp(mode, "connect") && rank == 0) {
        CHECK(argc >= 3, "connect FILE");
        snprintf(done, sizeof done, "%s.done", argv[2]);
        CHECK(wait_file(argv[2]) == 0, "no port in %s", argv[2]);
        FILE *f = fopen(argv[2], "r");
        CHECK(f && fgets(port, sizeof port, f), "cannot read %s", argv[2]);
        fclose(f);
        port[strcspn(port, "\n")] = 0;
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_Comm inter;
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        touch(done);
        printf("connect returned\n");
    } else if (!strcmp(mode, "timeout")) {
        CHECK(argc >= 3 && size >= 2, "timeout SECS on 2 ranks or more");
        double secs = atof(argv[2]);
        if (rank == 0) CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
        MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (rank == size - 1) {
            double t0 = MPI_Wtime();
            int rc = connect_with(port, argv[2], msg);
            double dt = MPI_Wtime() - t0;
            CHECK(err_class(rc) == MPI_ERR_PORT, "connect nobody accepts: class %d (%s)",
                  err_class(rc), msg);
            CHECK(dt >= secs * 0.9 && dt < secs + 10, "timeout %s s, the connect took %.2f s",
                  argv[2], dt);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* the timed-out request is gone: this accept meets the second connect */
        MPI_Comm inter = MPI_COMM_NULL;
        if (rank == 0) {
            int rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            CHECK(rc == MPI_SUCCESS, "accept: class %d", err_class(rc));
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE);
            CHECK(v == 42, "accept: got %d from the second connect, not 42", v);
            MPI_Comm_disconnect(&inter);
            MPI_Close_port(port);
        } else if (rank == size - 1) {
            int rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            CHECK(rc == MPI_SUCCESS, "second connect: class %d", err_class(rc));
            int v = 42;
            MPI_Send(&v, 1, MPI_INT, 0, 5, inter);
            MPI_Comm_disconnect(&inter);
        }
        if (rank == 0) printf("timeout ok\n");
    } else if (!strcmp(mode, "pending")) {
        CHECK(size >= 3, "pending on 3 ranks or more");
        if (rank == 0) CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
        MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
        int mine[2] = {0, 0}, all[2];
        if (rank > 0) {
            double t0 = MPI_Wtime();
            int rc = connect_with(port, "3", msg);
            double dt = MPI_Wtime() - t0;
            CHECK(err_class(rc) == MPI_ERR_PORT, "connect: class %d (%s)", err_class(rc), msg);
            if (dt >= 2.7 && dt < 13)
                mine[0] = 1;
            else if (dt < 1.5)
                mine[1] = 1;
            else
                CHECK(0, "connect failed after %.2f s: neither the timeout nor the limit", dt);
        }
        MPI_Reduce(mine, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            CHECK(all[0] == 1 && all[1] == size - 2, "%d timed out, %d refused (1 and %d)", all[0],
                  all[1], size - 2);
            MPI_Close_port(port);
            printf("pending ok\n");
        }
    }
    MPI_Finalize();
    return 0;
}
