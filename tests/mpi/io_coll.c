/* io_coll.c — collective MPI-IO: interleaved strided views (every rank's blocks between the
 * others'), contiguous blocks, holes, zero-count ranks, collective reads past the end of file,
 * with collective buffering forced on (tiny cb_buffer_size: many rounds, several aggregators)
 * and off, and the file's content checked byte for byte after each; ranks without data whose
 * view is an empty filetype (as HDF5 sets it) in a collective write; a collective read of more
 * than the file holds leaves the buffer past its end alone.  A full disk, when the
 * program's argument names a small file system: MPI_ERR_NO_SPACE and what was written before
 * still there. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io_check.h"

static int rank, size;

/* value of int i of the file in the interleaved layout: block b of rank r */
static int val(long i)
{
    return (int)(i * 2654435761u % 1000003);
}

static void interleaved(const char *p, const char *cb, const char *bufsz, int blk, int nblk)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", cb);
    MPI_Info_set(info, "romio_cb_read", cb);
    MPI_Info_set(info, "cb_buffer_size", bufsz);
    MPI_File fh;
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh),
             MPI_SUCCESS);
    MPI_Info_free(&info);
    MPI_File_set_size(fh, 0);
    /* filetype: blk ints of mine, then everybody else's */
    MPI_Datatype v, ft;
    MPI_Type_vector(1, blk, blk * size, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)blk * size * 4, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&v);
    MPI_File_set_view(fh, (MPI_Offset)rank * blk * 4, MPI_INT, ft, "native", MPI_INFO_NULL);
    /* memory: every other int of a twice-as-long buffer (a strided memory type too) */
    int n = blk * nblk;
    int *mem = calloc(2 * (size_t)n, sizeof *mem);
    for (int b = 0; b < nblk; b++)
        for (int k = 0; k < blk; k++)
            mem[2 * (b * blk + k)] = val(((long)b * size + rank) * blk + k);
    MPI_Datatype strided;
    MPI_Type_vector(n, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Status st;
    int count;
    CHECK_EQ(MPI_File_write_all(fh, mem, 1, strided, &st), MPI_SUCCESS);
    MPI_Get_count(&st, strided, &count);
    CHECK_EQ(count, 1);
    /* zero-count ranks take part too */
    CHECK_EQ(MPI_File_write_all(fh, mem, 0, MPI_INT, &st), MPI_SUCCESS);
    MPI_File_sync(fh);
    /* the whole file, read by everybody through the default view */
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    long tot = (long)n * size;
    int *all = malloc(sizeof(int) * (size_t)tot);
    CHECK_EQ(MPI_File_read_at_all(fh, 0, all, (int)tot, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, (int)tot);
    for (long i = 0; i < tot; i++)
        CHECK_EQ(all[i], val(i));
    /* everybody reads the same range, across the end of file: all of it, each */
    int *again = malloc(sizeof(int) * (size_t)(tot + 4));
    CHECK_EQ(MPI_File_read_at_all(fh, 0, again, (int)tot + 4, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, (int)tot);
    CHECK(!memcmp(again, all, sizeof(int) * (size_t)tot));
    free(again);
    /* back through the view, collectively, into the strided buffer */
    MPI_File_set_view(fh, (MPI_Offset)rank * blk * 4, MPI_INT, ft, "native", MPI_INFO_NULL);
    memset(mem, 0xff, 2 * (size_t)n * sizeof *mem);
    CHECK_EQ(MPI_File_read_all(fh, mem, 1, strided, &st), MPI_SUCCESS);
    for (int b = 0; b < nblk; b++)
        for (int k = 0; k < blk; k++) {
            CHECK_EQ(mem[2 * (b * blk + k)], val(((long)b * size + rank) * blk + k));
            CHECK_EQ(mem[2 * (b * blk + k) + 1], -1); /* the gaps stay untouched */
        }
    /* a collective read past the end: rank r asks from the last int on, gets 1 (or 0) */
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    CHECK_EQ(MPI_File_read_at_all(fh, tot - 1 + rank, all, 4, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, rank == 0 ? 1 : 0);
    /* contiguous blocks with holes between them (half of each rank's slot) */
    int half = n / 2 ? n / 2 : 1;
    MPI_File_set_size(fh, 0);
    CHECK_EQ(MPI_File_write_at_all(fh, (MPI_Offset)rank * n, all, half, MPI_INT, &st), MPI_SUCCESS);
    MPI_Offset sz;
    MPI_File_get_size(fh, &sz);
    CHECK_EQ(sz, ((MPI_Offset)(size - 1) * n + half) * 4);
    int *back = calloc((size_t)half, sizeof *back);
    CHECK_EQ(MPI_File_read_at_all(fh, (MPI_Offset)rank * n, back, half, MPI_INT, &st), MPI_SUCCESS);
    CHECK(!memcmp(back, all, (size_t)half * sizeof *back));
    free(back);
    MPI_Type_free(&strided);
    MPI_Type_free(&ft);
    free(mem);
    free(all);
    CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
}

/* A full file system (dir: a small tmpfs): writes until MPI_ERR_NO_SPACE, then reads back
 * what was written before. */
static void full_disk(const char *dir)
{
    char p[256];
    io_name(p, sizeof p, dir, "full");
    MPI_File fh;
    CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    const int chunk = 64 << 10;
    char *b = malloc((size_t)chunk);
    int err = MPI_SUCCESS, k;
    for (k = 0; k < 4096 && !err; k++) {
        memset(b, 'a' + k % 26, (size_t)chunk);
        err = MPI_File_write_at_all(fh, ((MPI_Offset)k * size + rank) * chunk, b, chunk, MPI_BYTE,
                                    MPI_STATUS_IGNORE);
    }
    CHECK_EQ(io_class(err), MPI_ERR_NO_SPACE);
    /* every round before the failing one is intact */
    for (int j = 0; j < k - 1; j++) {
        CHECK_EQ(MPI_File_read_at(fh, ((MPI_Offset)j * size + rank) * chunk, b, chunk, MPI_BYTE,
                                  MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        for (int i = 0; i < chunk; i += 4093)
            CHECK_EQ(b[i], 'a' + j % 26);
    }
    /* independent writes past the end and a preallocation past the space: MPI_ERR_NO_SPACE,
     * the collective rounds still intact */
    MPI_Offset end = (MPI_Offset)(k + 1) * size * chunk;
    memset(b, 'Z', (size_t)chunk);
    for (err = MPI_SUCCESS, k = 0; k < 4096 && !err; k++)
        err = MPI_File_write_at(fh, end + ((MPI_Offset)k * size + rank) * chunk, b, chunk, MPI_BYTE,
                                MPI_STATUS_IGNORE);
    CHECK_EQ(io_class(err), MPI_ERR_NO_SPACE);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(io_class(MPI_File_preallocate(fh, (MPI_Offset)1 << 40)), MPI_ERR_NO_SPACE);
    CHECK_EQ(
        MPI_File_read_at_all(fh, (MPI_Offset)rank * chunk, b, chunk, MPI_BYTE, MPI_STATUS_IGNORE),
        MPI_SUCCESS);
    for (int i = 0; i < chunk; i += 4093)
        CHECK_EQ(b[i], 'a');
    free(b);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_File_delete(p, MPI_INFO_NULL);
}

/* Rank 0 writes one block with an hindexed filetype; the others take part with an hindexed
 * filetype of no blocks (size 0) and count 0.  An access of data through such a view is
 * MPI_ERR_IO, not a crash. */
static void empty_views(const char *p)
{
    MPI_File fh;
    CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype ft;
    int len = 1028;
    MPI_Aint at = 2243;
    CHECK_MPI(MPI_Type_create_hindexed(rank == 0 ? 1 : 0, &len, &at, MPI_BYTE, &ft));
    CHECK_MPI(MPI_Type_commit(&ft));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    char buf[1028];
    memset(buf, 'h', sizeof buf);
    MPI_Status st;
    CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, rank == 0 ? len : 0, MPI_BYTE, &st));
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK_EQ(n, rank == 0 ? len : 0);
    MPI_Offset byte = -1;
    CHECK_MPI(MPI_File_get_byte_offset(fh, 0, &byte));
    CHECK_EQ(byte, (MPI_Offset)(rank == 0 ? at : 0));
    if (rank != 0) {
        int e = MPI_File_write_at(fh, 0, buf, 1, MPI_BYTE, &st), c;
        MPI_Error_class(e, &c);
        CHECK_EQ(c, MPI_ERR_IO);
    }
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Offset sz = 0;
    CHECK_MPI(MPI_File_get_size(fh, &sz));
    CHECK_EQ(sz, (MPI_Offset)(at + len));
    MPI_Type_free(&ft);
    CHECK_MPI(MPI_File_close(&fh));
}

/* Every rank reads 10 bytes of a 5-byte file collectively: the count is 5 and the buffer's
 * bytes past the end of file keep what they held, on the aggregator's node and the others. */
static void read_past_end(const char *p)
{
    MPI_File fh;
    CHECK_MPI(
        MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    unsigned char buf[10];
    for (int i = 0; i < 10; i++)
        buf[i] = (unsigned char)i;
    MPI_Status st;
    if (rank == 0) CHECK_MPI(MPI_File_write_at(fh, 0, buf, 5, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    memset(buf, 99, sizeof buf);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, buf, 10, MPI_BYTE, &st));
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK_EQ(n, 5);
    for (int i = 0; i < 10; i++)
        CHECK_EQ(buf[i], i < 5 ? i : 99);
    CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) {
        full_disk(argv[1]);
        return finish_ok();
    }
    char p[256];
    io_name(p, sizeof p, NULL, "coll");
    interleaved(p, "enable", "4096", 3, 700);     /* many rounds, odd block sizes */
    interleaved(p, "enable", "16777216", 256, 8); /* one round */
    interleaved(p, "disable", "16777216", 5, 50); /* every rank its own */
    interleaved(p, "automatic", "65536", 1, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK_EQ(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    empty_views(p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK_EQ(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    read_past_end(p);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) CHECK_EQ(MPI_File_delete(p, MPI_INFO_NULL), MPI_SUCCESS);
    return finish_ok();
}
