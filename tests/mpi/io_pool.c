/* io_pool.c — MPI-IO's long file system calls on the job's file system threads
 * (libclient/io/io_pool.h), run on carriers (TMPI_RANK_SWITCHING=user) and on threads:
 *   - a bad TMPI_IO_THREADS or TMPI_IO_OFFLOAD_MIN makes MPI_File_open fail with
 *     MPI_ERR_OTHER on every rank (then the settings are dropped and the rest runs);
 *   - errors of a moved call reach that call: writes to /dev/full are MPI_ERR_NO_SPACE
 *     (explicit offset and individual pointer), its sync is no error;
 *   - 1 MiB per rank written, resized, preallocated, synced and read back whole;
 *   - with 4 ranks or more: ranks 0-2 open a FIFO each for reading, which blocks until rank 3
 *     opens it for writing, FIFO 2 first.  On 4 ranks over 2 carriers every carrier holds a
 *     reader, so unless a blocked open leaves its carrier the writer never runs (the job hangs
 *     until its timeout). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io_check.h"

#define MIB (1 << 20)

static int rank, size;

/* A bad setting is the open's error, on every rank; nothing is opened or created. */
static void bad_setting(const char *var, const char *value)
{
    char p[256];
    io_name(p, sizeof p, NULL, "bad");
    /* the job's own value (-x VAR=...) comes back afterwards */
    const char *was = getenv(var);
    char old[64] = "";
    if (was) snprintf(old, sizeof old, "%s", was);
    CHECK_EQ(setenv(var, value, 1), 0);
    MPI_File fh = MPI_FILE_NULL;
    int err =
        MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK_EQ(io_class(err), MPI_ERR_OTHER);
    CHECK_EQ(fh, MPI_FILE_NULL);
    CHECK_EQ(was ? setenv(var, old, 1) : unsetenv(var), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(access(p, F_OK), -1);
}

static void no_space(void)
{
    MPI_File fh;
    CHECK_EQ(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    char *buf = calloc(1, 256 << 10);
    CHECK(buf);
    MPI_Status st;
    CHECK_EQ(io_class(MPI_File_write_at(fh, 0, buf, 256 << 10, MPI_BYTE, &st)), MPI_ERR_NO_SPACE);
    CHECK_EQ(io_class(MPI_File_write(fh, buf, 128 << 10, MPI_BYTE, &st)), MPI_ERR_NO_SPACE);
    CHECK_EQ(io_class(MPI_File_write_at(fh, 0, buf, 100, MPI_BYTE, &st)), MPI_ERR_NO_SPACE);
    CHECK_EQ(MPI_File_sync(fh), MPI_SUCCESS);
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    free(buf);
}

static void round_trip(void)
{
    char p[256];
    io_name(p, sizeof p, NULL, "data");
    MPI_File fh;
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    CHECK_EQ(MPI_File_preallocate(fh, (MPI_Offset)size * MIB / 2), MPI_SUCCESS);
    uint32_t *w = malloc(MIB), *r = malloc(MIB);
    CHECK(w && r);
    for (size_t i = 0; i < MIB / 4; i++)
        w[i] = (uint32_t)rank * 7919u + (uint32_t)i;
    MPI_Status st;
    CHECK_EQ(MPI_File_write_at(fh, (MPI_Offset)rank * MIB, w, MIB, MPI_BYTE, &st), MPI_SUCCESS);
    int n;
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK_EQ(n, MIB);
    CHECK_EQ(MPI_File_sync(fh), MPI_SUCCESS);
    MPI_Offset sz;
    CHECK_EQ(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK_EQ(sz, (MPI_Offset)size * MIB);
    /* the neighbour's block, through the individual pointer */
    int peer = (rank + 1) % size;
    CHECK_EQ(MPI_File_seek(fh, (MPI_Offset)peer * MIB, MPI_SEEK_SET), MPI_SUCCESS);
    CHECK_EQ(MPI_File_read(fh, r, MIB, MPI_BYTE, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK_EQ(n, MIB);
    for (size_t i = 0; i < MIB / 4; i++)
        CHECK_EQ(r[i], (uint32_t)peer * 7919u + (uint32_t)i);
    /* shrink to half a block per rank; a read of the last rank's block stops at the end */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(MPI_File_set_size(fh, (MPI_Offset)size * MIB - MIB / 2), MPI_SUCCESS);
    CHECK_EQ(MPI_File_read_at(fh, (MPI_Offset)(size - 1) * MIB, r, MIB, MPI_BYTE, &st),
             MPI_SUCCESS);
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK_EQ(n, MIB / 2);
    CHECK_EQ(r[0], (uint32_t)(size - 1) * 7919u);
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK_EQ(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
    free(w);
    free(r);
}

static void fifos(void)
{
    if (size < 4) return;
    char p[3][256];
    for (int i = 0; i < 3; i++) {
        char tag[16];
        snprintf(tag, sizeof tag, "fifo%d", i);
        io_name(p[i], sizeof p[i], NULL, tag);
        if (rank == 0) CHECK_EQ(mkfifo(p[i], 0600), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    if (rank < 3) {
        CHECK_EQ(MPI_File_open(MPI_COMM_SELF, p[rank], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                 MPI_SUCCESS);
        CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    } else if (rank == 3) {
        const int order[3] = {2, 0, 1};
        for (int k = 0; k < 3; k++) {
            CHECK_EQ(MPI_File_open(MPI_COMM_SELF, p[order[k]], MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                     MPI_SUCCESS);
            CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < 3; i++)
            CHECK_EQ(unlink(p[i]), 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bad_setting("TMPI_IO_THREADS", "lots");
    bad_setting("TMPI_IO_THREADS", "65");
    bad_setting("TMPI_IO_OFFLOAD_MIN", "64q");
    no_space();
    round_trip();
    fifos();
    return finish_ok();
}
