/* large_count.c — the _c calls carry counts above INT_MAX: one message, one collective and one
 * RMA transfer of argv[1] bytes (default: small, so the program also runs in the ordinary
 * lists; tests/bats/mpi41.bats passes more than 2^31 when the machine has the memory).  Also
 * the small-count checks of every _c form: the same results as the int forms. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank, size;

/* Byte i of rank r's pattern: changes every byte, differs between ranks. */
static inline unsigned char pat(MPI_Count i, int r)
{
    return (unsigned char)((i * 131u) ^ (i >> 17) ^ (unsigned)(r * 29 + 7));
}

/* Only every 4 KiB and the last bytes are checked: a full check of 3 GiB costs seconds. */
static void check_pat(const unsigned char *b, MPI_Count n, int r, const char *what)
{
    for (MPI_Count i = 0; i < n; i += 4093)
        CHECK(b[i] == pat(i, r), "%s: byte %lld is %d, not %d", what, i, b[i], pat(i, r));
    for (MPI_Count i = n > 64 ? n - 64 : 0; i < n; i++)
        CHECK(b[i] == pat(i, r), "%s: byte %lld is %d, not %d", what, i, b[i], pat(i, r));
}

static void fill(unsigned char *b, MPI_Count n, int r)
{
    for (MPI_Count i = 0; i < n; i++)
        b[i] = pat(i, r);
}

/* The _c forms at small counts: same data and statuses as the int forms. */
static void small_forms(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double out[5] = {rank, 1, 2, 3, 4}, in[5] = {0};
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv_c(out, 5, MPI_DOUBLE, right, 1, in, 5, MPI_DOUBLE, left, 1,
                             MPI_COMM_WORLD, &st));
    MPI_Count c = -1;
    CHECK_MPI(MPI_Get_count_c(&st, MPI_DOUBLE, &c));
    CHECK(c == 5 && in[0] == left, "Sendrecv_c: count %lld, first %g", c, in[0]);
    CHECK_MPI(MPI_Get_elements_c(&st, MPI_DOUBLE, &c));
    CHECK(c == 5, "Get_elements_c: %lld", c);
    MPI_Request rq[2];
    CHECK_MPI(MPI_Irecv_c(in, 5, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Isend_c(out, 5, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Recv_init_c(in, 5, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Send_init_c(out, 5, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Startall(2, rq));
    CHECK_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    CHECK_MPI(MPI_Isendrecv_c(out, 5, MPI_DOUBLE, right, 4, in, 5, MPI_DOUBLE, left, 4,
                              MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(in[0] == left, "Isendrecv_c");
    MPI_Message msg;
    CHECK_MPI(MPI_Isend_c(out, 5, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Mprobe(left, 5, MPI_COMM_WORLD, &msg, &st));
    CHECK_MPI(MPI_Mrecv_c(in, 5, MPI_DOUBLE, &msg, &st));
    CHECK_MPI(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    if (size > 1 && rank == 0)
        CHECK_MPI(MPI_Ssend_c(out, 5, MPI_DOUBLE, size - 1, 6, MPI_COMM_WORLD));
    if (size > 1 && rank == size - 1)
        CHECK_MPI(MPI_Recv_c(in, 5, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, &st));

    /* Pack_c / Unpack_c / Pack_size_c, type queries */
    MPI_Count psize = 0, pos = 0;
    CHECK_MPI(MPI_Pack_size_c(5, MPI_DOUBLE, MPI_COMM_WORLD, &psize));
    CHECK(psize == 5 * (MPI_Count)sizeof(double), "Pack_size_c: %lld", psize);
    char packed[64];
    CHECK_MPI(MPI_Pack_c(out, 5, MPI_DOUBLE, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == psize, "Pack_c: position %lld", pos);
    double back[5] = {0};
    MPI_Count upos = 0;
    CHECK_MPI(MPI_Unpack_c(packed, pos, &upos, back, 5, MPI_DOUBLE, MPI_COMM_WORLD));
    CHECK(back[0] == rank && back[4] == 4, "Unpack_c");
    MPI_Count sz, lb, ext;
    CHECK_MPI(MPI_Type_size_c(MPI_DOUBLE, &sz));
    CHECK_MPI(MPI_Type_get_extent_c(MPI_DOUBLE, &lb, &ext));
    CHECK(sz == 8 && lb == 0 && ext == 8, "Type_size_c / get_extent_c");
    CHECK_MPI(MPI_Type_get_true_extent_c(MPI_DOUBLE, &lb, &ext));
    CHECK(lb == 0 && ext == 8, "Type_get_true_extent_c");
    CHECK_MPI(MPI_Status_set_elements_c(&st, MPI_DOUBLE, (MPI_Count)INT_MAX + 10));
    CHECK_MPI(MPI_Get_count_c(&st, MPI_DOUBLE, &c));
    CHECK(c == (MPI_Count)INT_MAX + 10, "Status_set_elements_c beyond INT_MAX: %lld", c);
    int ic = 0;
    CHECK_MPI(MPI_Get_count(&st, MPI_DOUBLE, &ic));
    CHECK(ic == MPI_UNDEFINED, "Get_count beyond INT_MAX: %d", ic);

    /* collectives and local reduction */
    int v[3] = {rank, 1, 2}, r[3] = {0};
    CHECK_MPI(MPI_Allreduce_c(v, r, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(r[0] == size * (size - 1) / 2 && r[1] == size, "Allreduce_c");
    CHECK_MPI(MPI_Reduce_c(v, r, 3, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD));
    if (rank == 0) CHECK(r[0] == size - 1, "Reduce_c");
    CHECK_MPI(MPI_Iallreduce_c(v, r, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    int lo[3] = {1, 1, 1};
    CHECK_MPI(MPI_Reduce_local_c(lo, v, 3, MPI_INT, MPI_SUM));
    CHECK(v[1] == 2, "Reduce_local_c");

    /* RMA */
    int *wmem;
    MPI_Win win;
    CHECK_MPI(
        MPI_Win_allocate(3 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wmem, &win));
    CHECK_MPI(MPI_Win_fence(0, win));
    int three[3] = {rank, rank + 1, rank + 2};
    CHECK_MPI(MPI_Put_c(three, 3, MPI_INT, right, 0, 3, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(wmem[0] == left && wmem[2] == left + 2, "Put_c: %d %d %d", wmem[0], wmem[1], wmem[2]);
    CHECK_MPI(MPI_Win_fence(0, win)); /* the check above reads what the next epoch changes */
    CHECK_MPI(MPI_Accumulate_c(three, 3, MPI_INT, right, 0, 3, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    int g[3] = {0};
    CHECK_MPI(MPI_Get_c(g, 3, MPI_INT, right, 0, 3, MPI_INT, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(g[0] == 2 * rank && g[2] == 2 * (rank + 2), "Get_c after Accumulate_c");
    CHECK_MPI(
        MPI_Get_accumulate_c(three, 3, MPI_INT, g, 3, MPI_INT, right, 0, 3, MPI_INT, MPI_SUM, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    CHECK(g[0] == 2 * rank, "Get_accumulate_c");
    CHECK_MPI(MPI_Win_free(&win));

    /* a negative count is still refused */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Send_c(out, -1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_COUNT, "Send_c with count -1: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* One message, one Allreduce and one Put of n bytes, n possibly > INT_MAX (ranks 0 and 1). */
static void big(MPI_Count n)
{
    if (size < 2) return;
    MPI_Comm pair;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair));
    if (rank >= 2) return;
    unsigned char *b = malloc((size_t)n);
    CHECK(b != NULL, "no memory for %lld bytes", n);
    if (rank == 0) {
        fill(b, n, 0);
        CHECK_MPI(MPI_Send_c(b, n, MPI_BYTE, 1, 1, pair));
    } else {
        memset(b, 0, (size_t)n);
        MPI_Status st;
        CHECK_MPI(MPI_Recv_c(b, n, MPI_BYTE, 0, 1, pair, &st));
        MPI_Count c = 0;
        CHECK_MPI(MPI_Get_count_c(&st, MPI_BYTE, &c));
        CHECK(c == n, "Recv_c of %lld bytes: Get_count_c says %lld", n, c);
        check_pat(b, n, 0, "Send_c/Recv_c");
    }
    /* Allreduce_c with MPI_BXOR in place: rank 1 holds rank 0's pattern, rank 0 too: the
     * result is all zero bytes but for the pattern mixed with a marker byte every page */
    if (rank == 0)
        for (MPI_Count i = 0; i < n; i += 4096)
            b[i] ^= 0x5a;
    CHECK_MPI(MPI_Allreduce_c(MPI_IN_PLACE, b, n, MPI_BYTE, MPI_BXOR, pair));
    for (MPI_Count i = 0; i < n; i += 4093)
        CHECK(b[i] == (i % 4096 == 0 ? 0x5a : 0), "Allreduce_c: byte %lld is %d", i, b[i]);
    CHECK(b[n - 1] == ((n - 1) % 4096 == 0 ? 0x5a : 0), "Allreduce_c: last byte");
    /* Put_c of n bytes into rank 1's window, taken from rank 0's refilled buffer */
    MPI_Win win;
    unsigned char *w = NULL;
    MPI_Aint wsize = rank == 1 ? (MPI_Aint)n : 0;
    if (rank == 1) free(b), b = NULL; /* the window takes its place */
    CHECK_MPI(MPI_Win_allocate(wsize, 1, MPI_INFO_NULL, pair, &w, &win));
    if (rank == 0) fill(b, n, 1);
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 0) CHECK_MPI(MPI_Put_c(b, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win));
    CHECK_MPI(MPI_Win_fence(0, win));
    if (rank == 1) check_pat(w, n, 1, "Put_c");
    CHECK_MPI(MPI_Win_free(&win));
    free(b);
    MPI_Comm_free(&pair);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    small_forms();
    MPI_Count n = argc > 1 ? strtoll(argv[1], NULL, 0) : 3 * 1024 * 1024 + 17;
    big(n);
    return finish_ok();
}
