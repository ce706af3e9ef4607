/* names_jobs.c — MPI_Publish_name / Lookup_name / Unpublish_name between separately launched
 * jobs of one user, through the agents' name service (dynproc.bats, multinode_users.bats).
 * Rank 0 of the job does the calls; every rank takes part in the barriers.
 *   publish SERVICE FILE  opens a port, publishes it as SERVICE (a second publish of it fails
 *                         with MPI_ERR_SERVICE), writes the port into FILE, waits for FILE.done,
 *                         unpublishes (a second unpublish fails with MPI_ERR_SERVICE); prints
 *                         "publish ok"
 *   lookup SERVICE FILE   waits for FILE, looks SERVICE up: the port in FILE; publishing
 *                         SERVICE again fails with MPI_ERR_SERVICE (the user holds it), a
 *                         service of its own publishes and unpublishes; creates FILE.done;
 *                         prints "lookup ok"
 *   absent SERVICE        the lookup fails with MPI_ERR_NAME; prints "absent ok"
 *   own SERVICE           publishes SERVICE (free in this user's scope), looks it up, unpublishes
 *                         it; prints "own ok"
 *   leave SERVICE         publishes SERVICE and ends without unpublishing; prints "leave ok" */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abort_check.h"

/* Waits up to 60 s for path to exist. */
static int wait_file(const char *path)
{
    for (int i = 0; i < 6000; i++) {
        if (access(path, F_OK) == 0) return 0;
        usleep(10000);
    }
    return -1;
}

static void read_port(const char *path, char *port)
{
    FILE *f = fopen(path, "r");
    CHECK(f, "cannot open %s", path);
    CHECK(fgets(port, MPI_MAX_PORT_NAME, f), "%s is empty", path);
    fclose(f);
    port[strcspn(port, "\n")] = 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(argc >= 3, "usage: publish|lookup|absent|own SERVICE [FILE]");
    const char *mode = argv[1], *service = argv[2], *file = argc > 3 ? argv[3] : NULL;
    char port[MPI_MAX_PORT_NAME], got[MPI_MAX_PORT_NAME], done[4096];
    if (file) snprintf(done, sizeof done, "%s.done", file);
    if (rank == 0 && !strcmp(mode, "publish")) {
        CHECK(file, "publish needs FILE");
        CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "MPI_Open_port");
        int rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
        CHECK(rc == MPI_SUCCESS, "MPI_Publish_name %s: class %d", service, err_class(rc));
        rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
        CHECK(err_class(rc) == MPI_ERR_SERVICE, "second publish: class %d", err_class(rc));
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", file);
        FILE *f = fopen(tmp, "w");
        CHECK(f && fprintf(f, "%s\n", port) > 0 && fclose(f) == 0, "cannot write %s", tmp);
        CHECK(rename(tmp, file) == 0, "rename %s", tmp);
        CHECK(wait_file(done) == 0, "nobody created %s", done);
        rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        CHECK(rc == MPI_SUCCESS, "MPI_Unpublish_name: class %d", err_class(rc));
        rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
        CHECK(err_class(rc) == MPI_ERR_SERVICE, "second unpublish: class %d", err_class(rc));
        CHECK(MPI_Close_port(port) == MPI_SUCCESS, "MPI_Close_port");
    } else if (rank == 0 && !strcmp(mode, "lookup")) {
        CHECK(file, "lookup needs FILE");
        CHECK(wait_file(file) == 0, "nobody wrote %s", file);
        read_port(file, port);
        int rc = MPI_Lookup_name(service, MPI_INFO_NULL, got);
        CHECK(rc == MPI_SUCCESS, "MPI_Lookup_name %s: class %d", service, err_class(rc));
        CHECK(!strcmp(got, port), "looked up '%s', the publisher wrote '%s'", got, port);
        rc = MPI_Publish_name(service, MPI_INFO_NULL, "tmpi-port:1:2:3");
        CHECK(err_class(rc) == MPI_ERR_SERVICE, "publish of a taken name: class %d", err_class(rc));
        char mine[1100];
        snprintf(mine, sizeof mine, "%s-lookup", service);
        rc = MPI_Publish_name(mine, MPI_INFO_NULL, "tmpi-port:1:2:3");
        CHECK(rc == MPI_SUCCESS, "publish %s: class %d", mine, err_class(rc));
        CHECK(MPI_Unpublish_name(mine, MPI_INFO_NULL, "tmpi-port:1:2:3") == MPI_SUCCESS,
              "unpublish %s", mine);
        FILE *f = fopen(done, "w");
        CHECK(f && fclose(f) == 0, "cannot create %s", done);
    } else if (rank == 0 && !strcmp(mode, "absent")) {
        int rc = MPI_Lookup_name(service, MPI_INFO_NULL, got);
        CHECK(err_class(rc) == MPI_ERR_NAME, "lookup of %s: class %d, port '%s'", service,
              err_class(rc), rc == MPI_SUCCESS ? got : "");
    } else if (rank == 0 && !strcmp(mode, "own")) {
        const char *p = "tmpi-port:7:0:0";
        int rc = MPI_Publish_name(service, MPI_INFO_NULL, p);
        CHECK(rc == MPI_SUCCESS, "publish %s: class %d", service, err_class(rc));
        rc = MPI_Lookup_name(service, MPI_INFO_NULL, got);
        CHECK(rc == MPI_SUCCESS && !strcmp(got, p), "lookup %s: class %d", service, err_class(rc));
        CHECK(MPI_Unpublish_name(service, MPI_INFO_NULL, p) == MPI_SUCCESS, "unpublish");
    } else if (rank == 0 && !strcmp(mode, "leave")) {
        int rc = MPI_Publish_name(service, MPI_INFO_NULL, "tmpi-port:8:0:0");
        CHECK(rc == MPI_SUCCESS, "publish %s: class %d", service, err_class(rc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("%s ok\n", mode);
    MPI_Finalize();
    return 0;
}
