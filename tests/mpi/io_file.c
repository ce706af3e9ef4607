/* io_file.c — MPI-IO on any number of ranks: open errors (MPI_ERR_NO_SUCH_FILE, _FILE_EXISTS
 * with MPI_MODE_EXCL, _AMODE, _ACCESS, _BAD_FILE for a directory), MPI_ERRORS_RETURN on files and a
 * changeable handler on MPI_FILE_NULL, size/preallocate/amode/group/info hints, views (a bad etype,
 * byte offsets, type extents), explicit-offset and individual-pointer access, a read past the end
 * (count 0, not an error), shared pointers and _ordered in rank order, non-blocking and split
 * collective forms, atomic mode, external32 and a registered data representation, delete.
 * With an argument (a read-only file system holding ro.dat): MPI_ERR_READ_ONLY, nothing lost. */
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io_check.h"

static int rank, size;

static int handler_calls;
static void count_handler(MPI_File *fh, int *code, ...)
{
    (void)fh;
    (void)code;
    handler_calls++;
}

static void open_errors(void)
{
    char p[256];
    MPI_File fh;
    io_name(p, sizeof p, NULL, "missing");
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)),
             MPI_ERR_NO_SUCH_FILE);
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_CREATE,
                                    MPI_INFO_NULL, &fh)),
             MPI_ERR_AMODE);
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_WRONLY,
                                    MPI_INFO_NULL, &fh)),
             MPI_ERR_AMODE);
    /* EXCL: exists after the first create */
    io_name(p, sizeof p, NULL, "excl");
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
                           MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    CHECK(fh == MPI_FILE_NULL);
    CHECK_EQ(
        io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
                               MPI_INFO_NULL, &fh)),
        MPI_ERR_FILE_EXISTS);
    /* no permission (root reads everything: only checked for other users) */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) chmod(p, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (geteuid() != 0)
        CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)),
                 MPI_ERR_ACCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK_EQ(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
    /* MPI_FILE_NULL's handler: ERRORS_RETURN first, then the program's own */
    MPI_Errhandler eh, old;
    CHECK_EQ(MPI_File_get_errhandler(MPI_FILE_NULL, &old), MPI_SUCCESS);
    CHECK(old == MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_File_create_errhandler(count_handler, &eh), MPI_SUCCESS);
    CHECK_EQ(MPI_File_set_errhandler(MPI_FILE_NULL, eh), MPI_SUCCESS);
    io_name(p, sizeof p, NULL, "missing2");
    handler_calls = 0;
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)),
             MPI_ERR_NO_SUCH_FILE);
    CHECK_EQ(handler_calls, 1);
    CHECK_EQ(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), MPI_SUCCESS);
    MPI_Errhandler_free(&eh);
    CHECK_EQ(io_class(MPI_File_get_amode((MPI_File)12345, &size)), MPI_ERR_FILE);
    /* names that cannot be a file: a directory, a path through a regular file */
    const char *d = getenv("TMPDIR");
    d = d && *d ? d : "/tmp";
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, d, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)),
             MPI_ERR_BAD_FILE);
    CHECK(fh == MPI_FILE_NULL);
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, d, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)),
             MPI_ERR_BAD_FILE);
    io_name(p, sizeof p, NULL, "plain");
    CHECK_EQ(
        MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
        MPI_SUCCESS);
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    char under[300];
    snprintf(under, sizeof under, "%s/x", p);
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, under, MPI_MODE_RDWR | MPI_MODE_CREATE,
                                    MPI_INFO_NULL, &fh)),
             MPI_ERR_BAD_FILE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK_EQ(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
}

/* A read-only file system (dir; its file ro.dat holds the ints 0 .. 1023): opening for
 * writing or creating is MPI_ERR_READ_ONLY, and the file reads back whole. */
static void read_only_fs(const char *dir)
{
    char p[512];
    MPI_File fh;
    snprintf(p, sizeof p, "%s/ro.dat", dir);
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)),
             MPI_ERR_READ_ONLY);
    CHECK(fh == MPI_FILE_NULL);
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                                    MPI_INFO_NULL, &fh)),
             MPI_ERR_READ_ONLY);
    snprintf(p, sizeof p, "%s/new.dat", dir);
    CHECK_EQ(io_class(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                                    MPI_INFO_NULL, &fh)),
             MPI_ERR_READ_ONLY);
    snprintf(p, sizeof p, "%s/ro.dat", dir);
    CHECK_EQ(io_class(MPI_File_delete(p, MPI_INFO_NULL)), MPI_ERR_READ_ONLY);
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS);
    int v[1024], count;
    MPI_Status st;
    CHECK_EQ(MPI_File_read_at_all(fh, 0, v, 1024, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 1024);
    for (int i = 0; i < 1024; i++)
        CHECK_EQ(v[i], i);
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
}

static void basics(const char *p)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "65536");
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "my_own_key", "kept");
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh),
             MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_Errhandler eh;
    MPI_File_get_errhandler(fh, &eh);
    CHECK(eh == MPI_ERRORS_RETURN);
    MPI_Info used;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    CHECK_EQ(MPI_File_get_info(fh, &used), MPI_SUCCESS);
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "65536"));
    MPI_Info_get(used, "striping_factor", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "4"));
    MPI_Info_get(used, "my_own_key", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && !strcmp(v, "kept"));
    MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL, v, &flag);
    CHECK(flag && atoi(v) >= 1);
    MPI_Info_free(&used);
    int amode;
    MPI_File_get_amode(fh, &amode);
    CHECK_EQ(amode, MPI_MODE_RDWR | MPI_MODE_CREATE);
    MPI_Group g;
    int gs;
    MPI_File_get_group(fh, &g);
    MPI_Group_size(g, &gs);
    CHECK_EQ(gs, size);
    MPI_Group_free(&g);
    CHECK_EQ(MPI_File_set_size(fh, 100), MPI_SUCCESS);
    MPI_Offset sz;
    MPI_File_get_size(fh, &sz);
    CHECK_EQ(sz, 100);
    CHECK_EQ(MPI_File_preallocate(fh, 4096), MPI_SUCCESS);
    MPI_File_get_size(fh, &sz);
    CHECK_EQ(sz, 4096);
    CHECK_EQ(MPI_File_set_size(fh, 0), MPI_SUCCESS);

    /* explicit offsets: each rank its 16 ints */
    int buf[16], in[16];
    for (int i = 0; i < 16; i++)
        buf[i] = rank * 1000 + i;
    MPI_Status st;
    int count;
    CHECK_EQ(MPI_File_write_at(fh, (MPI_Offset)rank * 64, buf, 16, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 16);
    MPI_File_sync(fh);
    int peer = (rank + 1) % size;
    CHECK_EQ(MPI_File_read_at(fh, (MPI_Offset)peer * 64, in, 16, MPI_INT, &st), MPI_SUCCESS);
    for (int i = 0; i < 16; i++)
        CHECK_EQ(in[i], peer * 1000 + i);
    /* a read past the end: count 0, no error; a read across it: what is there */
    CHECK_EQ(MPI_File_read_at(fh, (MPI_Offset)size * 64 + 100, in, 16, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 0);
    CHECK_EQ(MPI_File_read_at(fh, (MPI_Offset)size * 64 - 8, in, 16, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 2);

    /* a view: etype int, filetype every size-th int (rank's column) */
    MPI_Datatype col, colr;
    MPI_Type_vector(1, 1, size, MPI_INT, &col);
    MPI_Type_create_resized(col, 0, (MPI_Aint)size * 4, &colr);
    MPI_Type_commit(&colr);
    MPI_Type_free(&col);
    CHECK_EQ(io_class(MPI_File_set_view(fh, 0, MPI_DATATYPE_NULL, colr, "native", MPI_INFO_NULL)),
             MPI_ERR_TYPE);
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_CHAR, &three);
    MPI_Type_commit(&three);
    CHECK_EQ(io_class(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL)),
             MPI_ERR_TYPE);
    CHECK_EQ(io_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no_such_rep", MPI_INFO_NULL)),
             MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Type_free(&three);
    int bl[2] = {1, 1}, dd[2] = {3, 0};
    MPI_Datatype decr;
    MPI_Type_indexed(2, bl, dd, MPI_INT, &decr);
    MPI_Type_commit(&decr);
    CHECK_EQ(io_class(MPI_File_set_view(fh, 0, MPI_INT, decr, "native", MPI_INFO_NULL)),
             MPI_ERR_IO);
    MPI_Type_free(&decr);
    CHECK_EQ(MPI_File_set_view(fh, (MPI_Offset)rank * 4, MPI_INT, colr, "native", MPI_INFO_NULL),
             MPI_SUCCESS);
    MPI_Offset disp, pos;
    MPI_File_get_byte_offset(fh, 3, &disp);
    CHECK_EQ(disp, (MPI_Offset)rank * 4 + 3 * size * 4);
    for (int i = 0; i < 16; i++)
        buf[i] = i * size + rank; /* the value of the file's int there */
    CHECK_EQ(MPI_File_write(fh, buf, 8, MPI_INT, &st), MPI_SUCCESS);
    MPI_File_get_position(fh, &pos);
    CHECK_EQ(pos, 8);
    CHECK_EQ(MPI_File_write_all(fh, buf + 8, 8, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 8);
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(disp == (MPI_Offset)rank * 4 && et == MPI_INT && !strcmp(rep, "native"));
    MPI_Type_free(&ft);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    int *all = malloc(sizeof(int) * 16 * (size_t)size);
    CHECK_EQ(MPI_File_read_at_all(fh, 0, all, 16 * size, MPI_INT, &st), MPI_SUCCESS);
    for (int i = 0; i < 16 * size; i++)
        CHECK_EQ(all[i], i);
    MPI_File_seek(fh, -2, MPI_SEEK_END);
    MPI_File_get_position(fh, &pos);
    CHECK_EQ(pos, 16 * size - 2);
    CHECK_EQ(MPI_File_read(fh, in, 4, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 2);
    CHECK_EQ(in[1], 16 * size - 1);
    MPI_Aint ext;
    MPI_File_get_type_extent(fh, colr, &ext);
    CHECK_EQ(ext, (MPI_Aint)size * 4);
    MPI_Type_free(&colr);
    MPI_Barrier(MPI_COMM_WORLD); /* everybody saw the end of file before it moves */

    /* non-blocking and split collective */
    MPI_Request rq;
    CHECK_EQ(MPI_File_iwrite_at(fh, 1000 + rank, &rank, 1, MPI_INT, &rq), MPI_SUCCESS);
    MPI_Wait(&rq, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 1);
    CHECK_EQ(MPI_File_iwrite_at_all(fh, 2000 + rank, &rank, 1, MPI_INT, &rq), MPI_SUCCESS);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    int x = -1;
    CHECK_EQ(MPI_File_iread_at(fh, 2000 + peer, &x, 1, MPI_INT, &rq), MPI_SUCCESS);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK_EQ(x, peer);
    CHECK_EQ(MPI_File_read_at_all_begin(fh, 1000 + peer, &x, 1, MPI_INT), MPI_SUCCESS);
    CHECK_EQ(io_class(MPI_File_write_all_begin(fh, &x, 1, MPI_INT)), MPI_ERR_OTHER);
    CHECK_EQ(MPI_File_read_at_all_end(fh, &x, &st), MPI_SUCCESS);
    CHECK_EQ(x, peer);
    CHECK_EQ(io_class(MPI_File_read_all_end(fh, &x, &st)), MPI_ERR_OTHER);

    /* shared pointer: every rank's record lands once; ordered: in rank order */
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_set_size(fh, 0);
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    int rec[2] = {rank, rank * 7};
    CHECK_EQ(MPI_File_write_shared(fh, rec, 2, MPI_INT, &st), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_get_position_shared(fh, &pos);
    CHECK_EQ(pos, 2 * size);
    MPI_File_read_at_all(fh, 0, all, 2 * size, MPI_INT, &st);
    int seen = 0;
    for (int i = 0; i < size; i++) {
        CHECK_EQ(all[2 * i + 1], all[2 * i] * 7);
        seen += all[2 * i];
    }
    CHECK_EQ(seen, size * (size - 1) / 2);
    int n = rank + 1, ord[64];
    for (int i = 0; i < n; i++)
        ord[i] = rank;
    CHECK_EQ(MPI_File_write_ordered(fh, ord, n, MPI_INT, &st), MPI_SUCCESS);
    MPI_File_get_position_shared(fh, &pos);
    CHECK_EQ(pos, 2 * size + size * (size + 1) / 2);
    MPI_File_seek_shared(fh, 2 * size, MPI_SEEK_SET);
    CHECK_EQ(MPI_File_read_ordered(fh, ord, n, MPI_INT, &st), MPI_SUCCESS);
    for (int i = 0; i < n; i++)
        CHECK_EQ(ord[i], rank);
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    int got[2] = {-1, -1};
    CHECK_EQ(MPI_File_iread_shared(fh, got, 2, MPI_INT, &rq), MPI_SUCCESS);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK_EQ(got[1], got[0] * 7);

    /* atomic mode: every rank adds its byte to one word, each write whole */
    CHECK_EQ(MPI_File_set_atomicity(fh, 1), MPI_SUCCESS);
    int flag2;
    MPI_File_get_atomicity(fh, &flag2);
    CHECK_EQ(flag2, 1);
    int64_t word[8];
    for (int i = 0; i < 8; i++)
        word[i] = rank;
    for (int k = 0; k < 20; k++)
        CHECK_EQ(MPI_File_write_at(fh, 0, word, 16, MPI_INT, &st), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t back[8];
    MPI_File_read_at(fh, 0, back, 16, MPI_INT, &st);
    for (int i = 1; i < 8; i++)
        CHECK_EQ(back[i], back[0]); /* one rank's write, never a mix */
    MPI_File_set_atomicity(fh, 0);

    /* writing a read-only file, reading a write-only one */
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS);
    CHECK_EQ(io_class(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st)), MPI_ERR_READ_ONLY);
    MPI_File_close(&fh);
    CHECK_EQ(
        MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh),
        MPI_SUCCESS);
    MPI_File_get_position(fh, &pos);
    MPI_File_get_size(fh, &sz);
    CHECK_EQ(pos, sz);
    CHECK_EQ(io_class(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st)), MPI_ERR_ACCESS);
    MPI_File_close(&fh);
    free(all);
}

/* A representation that stores each int as its bitwise complement. */
static int rd_conv(void *ub, MPI_Datatype t, int count, void *fb, MPI_Offset pos, void *x)
{
    (void)t, (void)pos, (void)x;
    for (int i = 0; i < count; i++)
        ((int *)ub)[i] = ~((int *)fb)[i];
    return MPI_SUCCESS;
}
static int wr_conv(void *ub, MPI_Datatype t, int count, void *fb, MPI_Offset pos, void *x)
{
    (void)t, (void)pos, (void)x;
    for (int i = 0; i < count; i++)
        ((int *)fb)[i] = ~((int *)ub)[i];
    return MPI_SUCCESS;
}
/* MPI_Register_datarep_c's: counts in MPI_Count; adds 1 on the way to the file */
static int rd_conv_c(void *ub, MPI_Datatype t, MPI_Count count, void *fb, MPI_Offset pos, void *x)
{
    (void)t, (void)pos;
    ++*(int *)x;
    for (MPI_Count i = 0; i < count; i++)
        ((int *)ub)[i] = ((int *)fb)[i] - 1;
    return MPI_SUCCESS;
}
static int wr_conv_c(void *ub, MPI_Datatype t, MPI_Count count, void *fb, MPI_Offset pos, void *x)
{
    (void)t, (void)pos;
    ++*(int *)x;
    for (MPI_Count i = 0; i < count; i++)
        ((int *)fb)[i] = ((int *)ub)[i] + 1;
    return MPI_SUCCESS;
}
static int ext_fn(MPI_Datatype t, MPI_Aint *e, void *x)
{
    (void)x;
    MPI_Type_size(t, (int *)e);
    *e = (int)*e;
    return MPI_SUCCESS;
}

static void datareps(const char *p)
{
    MPI_File fh;
    MPI_Status st;
    CHECK_EQ(MPI_Register_datarep("tmpi_not", rd_conv, wr_conv, ext_fn, NULL), MPI_SUCCESS);
    CHECK_EQ(io_class(MPI_Register_datarep("tmpi_not", rd_conv, wr_conv, ext_fn, NULL)),
             MPI_ERR_DUP_DATAREP);
    CHECK_EQ(io_class(MPI_Register_datarep("external32", rd_conv, wr_conv, ext_fn, NULL)),
             MPI_ERR_DUP_DATAREP);
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, p,
                           MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    int v[4] = {rank, 0x01020304, -1, 7}, w[4];
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
    MPI_File_write_at(fh, (MPI_Offset)rank * 4, v, 4, MPI_INT, &st);
    MPI_File_read_at(fh, (MPI_Offset)rank * 4, w, 4, MPI_INT, &st);
    CHECK(!memcmp(v, w, sizeof v));
    MPI_File_sync(fh);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    unsigned char raw[4];
    MPI_File_read_at(fh, (MPI_Offset)rank * 16 + 4, raw, 4, MPI_BYTE, &st);
    CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == 4); /* big-endian */
    MPI_File_sync(fh);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tmpi_not", MPI_INFO_NULL);
    MPI_File_write_at(fh, (MPI_Offset)rank * 4, v, 4, MPI_INT, &st);
    MPI_File_read_at(fh, (MPI_Offset)rank * 4, w, 4, MPI_INT, &st);
    CHECK(!memcmp(v, w, sizeof v));
    MPI_File_sync(fh);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_read_at(fh, (MPI_Offset)rank * 4, w, 4, MPI_INT, &st);
    CHECK_EQ(w[0], ~rank);
    /* the large-count form: its MPI_Count functions convert */
    int calls = 0;
    CHECK_EQ(MPI_Register_datarep_c("tmpi_plus1", rd_conv_c, wr_conv_c, ext_fn, &calls),
             MPI_SUCCESS);
    CHECK_EQ(io_class(MPI_Register_datarep_c("tmpi_plus1", rd_conv_c, wr_conv_c, ext_fn, NULL)),
             MPI_ERR_DUP_DATAREP);
    CHECK_EQ(io_class(MPI_Register_datarep_c("tmpi_x", rd_conv_c, wr_conv_c, NULL, NULL)),
             MPI_ERR_ARG);
    MPI_File_sync(fh);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "tmpi_plus1", MPI_INFO_NULL);
    MPI_File_write_at(fh, (MPI_Offset)rank * 4, v, 4, MPI_INT, &st);
    MPI_File_read_at(fh, (MPI_Offset)rank * 4, w, 4, MPI_INT, &st);
    CHECK(!memcmp(v, w, sizeof v));
    CHECK(calls >= 2);
    MPI_File_sync(fh);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_read_at(fh, (MPI_Offset)rank * 4, w, 4, MPI_INT, &st);
    CHECK_EQ(w[0], rank + 1);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(p, F_OK) != 0); /* deleted on close */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) {
        read_only_fs(argv[1]);
        return finish_ok();
    }
    open_errors();
    char p[256];
    io_name(p, sizeof p, NULL, "basic");
    basics(p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK_EQ(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
    io_name(p, sizeof p, NULL, "rep");
    datareps(p);
    return finish_ok();
}
