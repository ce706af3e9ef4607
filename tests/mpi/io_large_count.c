/* io_large_count.c — the large-count (_c) forms of the MPI-IO data-access calls on any number
 * of ranks: every explicit-offset, individual-pointer, shared-pointer and ordered form,
 * blocking, non-blocking and split collective, writes what its int twin reads back (and the
 * other way round), statuses counted with MPI_Get_count_c; MPI_File_get_type_extent_c in
 * native and external32; a count above INT_MAX reaches the library whole (of an empty type:
 * nothing moves, no MPI_ERR_COUNT of a truncated negative int), a negative one is
 * MPI_ERR_COUNT. */
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io_check.h"

#define N 8 /* ints per rank per access */

static int rank, size;

static void fill(int *v, int tag)
{
    for (int i = 0; i < N; i++)
        v[i] = tag * 1000 + rank * N + i;
}

static void check_read(const int *v, int tag, const MPI_Status *st)
{
    for (int i = 0; i < N; i++)
        CHECK_EQ(v[i], tag * 1000 + rank * N + i);
    MPI_Count c = -1;
    CHECK_MPI(MPI_Get_count_c(st, MPI_INT, &c));
    CHECK_EQ(c, (MPI_Count)N);
}

/* At offsets: form tag t writes block t with one form and reads it with its twin. */
static void explicit_offsets(MPI_File fh)
{
    int w[N], r[N];
    MPI_Status st;
    MPI_Request req;
    MPI_Offset at = (MPI_Offset)rank * N * (MPI_Offset)sizeof(int); /* bytes: the default etype */
    MPI_Offset blk = (MPI_Offset)size * N * (MPI_Offset)sizeof(int);
    fill(w, 1);
    CHECK_MPI(MPI_File_write_at_c(fh, at, w, N, MPI_INT, &st));
    CHECK_MPI(MPI_File_read_at(fh, at, r, N, MPI_INT, &st));
    check_read(r, 1, &st);
    fill(w, 2);
    CHECK_MPI(MPI_File_write_at_all(fh, blk + at, w, N, MPI_INT, &st));
    CHECK_MPI(MPI_File_read_at_all_c(fh, blk + at, r, N, MPI_INT, &st));
    check_read(r, 2, &st);
    fill(w, 3);
    CHECK_MPI(MPI_File_iwrite_at_c(fh, 2 * blk + at, w, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK_MPI(MPI_File_iread_at_all_c(fh, 2 * blk + at, r, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    check_read(r, 3, &st);
    fill(w, 4);
    CHECK_MPI(MPI_File_iwrite_at_all_c(fh, 3 * blk + at, w, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    CHECK_MPI(MPI_File_iread_at_c(fh, 3 * blk + at, r, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    check_read(r, 4, &st);
    fill(w, 5);
    CHECK_MPI(MPI_File_write_at_all_begin_c(fh, 4 * blk + at, w, N, MPI_INT));
    CHECK_MPI(MPI_File_write_at_all_end(fh, w, &st));
    CHECK_MPI(MPI_File_read_at_all_begin_c(fh, 4 * blk + at, r, N, MPI_INT));
    CHECK_MPI(MPI_File_read_at_all_end(fh, r, &st));
    check_read(r, 5, &st);
}

/* Individual pointers: a view per rank of its own blocks, every pointer form. */
static void individual_pointers(MPI_File fh)
{
    int w[N], r[N];
    MPI_Status st;
    MPI_Request req;
    MPI_Datatype ft;
    CHECK_MPI(MPI_Type_vector(16, N, size * N, MPI_INT, &ft));
    CHECK_MPI(MPI_Type_commit(&ft));
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * N * (MPI_Offset)sizeof(int), MPI_INT, ft,
                                "native", MPI_INFO_NULL));
    MPI_Offset pos = -1;
    int tags[] = {11, 12, 13, 14, 15, 16};
    fill(w, tags[0]);
    CHECK_MPI(MPI_File_write_c(fh, w, N, MPI_INT, &st));
    fill(w, tags[1]);
    CHECK_MPI(MPI_File_write_all_c(fh, w, N, MPI_INT, &st));
    fill(w, tags[2]);
    CHECK_MPI(MPI_File_iwrite_c(fh, w, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    fill(w, tags[3]);
    CHECK_MPI(MPI_File_iwrite_all_c(fh, w, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    fill(w, tags[4]);
    CHECK_MPI(MPI_File_write_all_begin_c(fh, w, N, MPI_INT));
    CHECK_MPI(MPI_File_write_all_end(fh, w, &st));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK_EQ(pos, (MPI_Offset)5 * N);
    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read_c(fh, r, N, MPI_INT, &st));
    check_read(r, tags[0], &st);
    CHECK_MPI(MPI_File_read_all_c(fh, r, N, MPI_INT, &st));
    check_read(r, tags[1], &st);
    CHECK_MPI(MPI_File_iread_c(fh, r, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    check_read(r, tags[2], &st);
    CHECK_MPI(MPI_File_iread_all_c(fh, r, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    check_read(r, tags[3], &st);
    CHECK_MPI(MPI_File_read_all_begin_c(fh, r, N, MPI_INT));
    CHECK_MPI(MPI_File_read_all_end(fh, r, &st));
    check_read(r, tags[4], &st);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
}

/* Shared pointer and ordered forms: each rank's block lands in rank order (ordered) or
 * somewhere (shared: found by its tag). */
static void shared_pointers(MPI_File fh)
{
    int w[N], r[N];
    MPI_Status st;
    MPI_Request req;
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    fill(w, 21);
    CHECK_MPI(MPI_File_write_ordered_c(fh, w, N, MPI_INT, &st));
    fill(w, 22);
    CHECK_MPI(MPI_File_write_ordered_begin_c(fh, w, N, MPI_INT));
    CHECK_MPI(MPI_File_write_ordered_end(fh, w, &st));
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_read_ordered_c(fh, r, N, MPI_INT, &st));
    check_read(r, 21, &st);
    CHECK_MPI(MPI_File_read_ordered_begin_c(fh, r, N, MPI_INT));
    CHECK_MPI(MPI_File_read_ordered_end(fh, r, &st));
    check_read(r, 22, &st);
    /* one shared write and one non-blocking shared write each, then find them */
    MPI_Barrier(MPI_COMM_WORLD);
    fill(w, 23);
    CHECK_MPI(MPI_File_write_shared_c(fh, w, N, MPI_INT, &st));
    fill(w, 24);
    CHECK_MPI(MPI_File_iwrite_shared_c(fh, w, N, MPI_INT, &req));
    CHECK_MPI(MPI_Wait(&req, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_seek_shared(fh, 2 * (MPI_Offset)size * N, MPI_SEEK_SET));
    if (rank == 0) {
        int mine = 0;
        for (int b = 0; b < 2 * size; b++) {
            if (b % 2 == 0) {
                CHECK_MPI(MPI_File_read_shared_c(fh, r, N, MPI_INT, &st));
            } else {
                CHECK_MPI(MPI_File_iread_shared_c(fh, r, N, MPI_INT, &req));
                CHECK_MPI(MPI_Wait(&req, &st));
            }
            CHECK(r[0] / 1000 == 23 || r[0] / 1000 == 24, "block %d starts with %d", b, r[0]);
            if (r[0] % 1000 == 0) mine++;
        }
        CHECK_EQ(mine, 2);
    }
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

static void extents_and_counts(MPI_File fh)
{
    MPI_Count e = -1;
    MPI_Aint ea = -1;
    MPI_Datatype pair;
    CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, 16, &pair));
    CHECK_MPI(MPI_Type_commit(&pair));
    CHECK_MPI(MPI_File_get_type_extent_c(fh, pair, &e));
    CHECK_MPI(MPI_File_get_type_extent(fh, pair, &ea));
    CHECK_EQ(e, (MPI_Count)16);
    CHECK_EQ(ea, (MPI_Aint)16);
    CHECK_EQ(io_class(MPI_File_get_type_extent_c(fh, MPI_DATATYPE_NULL, &e)), MPI_ERR_TYPE);
    /* a count above INT_MAX of an empty type: nothing to move, no truncation */
    MPI_Datatype empty;
    CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
    CHECK_MPI(MPI_Type_commit(&empty));
    MPI_Status st;
    MPI_Count big = (MPI_Count)INT_MAX + 5, c = -1;
    CHECK_MPI(MPI_File_write_at_c(fh, 0, NULL, big, empty, &st));
    CHECK_MPI(MPI_File_read_at_all_c(fh, 0, NULL, big, empty, &st));
    CHECK_MPI(MPI_Get_count_c(&st, empty, &c));
    CHECK_EQ(c, (MPI_Count)0);
    CHECK_EQ(io_class(MPI_File_write_at_c(fh, 0, &c, -1, MPI_INT, &st)), MPI_ERR_COUNT);
    CHECK_EQ(io_class(MPI_File_read_c(fh, &c, -3, MPI_INT, &st)), MPI_ERR_COUNT);
    /* external32: the file extent of an int is 4, of the resized type its data only */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_get_type_extent_c(fh, MPI_INT, &e));
    CHECK_EQ(e, (MPI_Count)4);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&empty);
    MPI_Type_free(&pair);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char p[256];
    MPI_File fh;
    io_name(p, sizeof p, NULL, "lc_at");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, p,
                            MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    explicit_offsets(fh);
    extents_and_counts(fh);
    CHECK_MPI(MPI_File_close(&fh));
    io_name(p, sizeof p, NULL, "lc_ptr");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, p,
                            MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                            MPI_INFO_NULL, &fh));
    individual_pointers(fh);
    shared_pointers(fh);
    CHECK_MPI(MPI_File_close(&fh));
    (void)argc;
    (void)argv;
    return finish_ok();
}
