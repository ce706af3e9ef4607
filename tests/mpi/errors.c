/* errors.c — invalid arguments return the right error class under MPI_ERRORS_RETURN. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int v = 0, w = 0;
    EXPECT(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(&v, 1, MPI_INT, 0, -3, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Recv(&v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    EXPECT(MPI_Bcast(&v, 1, MPI_INT, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    EXPECT(MPI_Allreduce(&v, &w, 1, MPI_FLOAT, MPI_BXOR, MPI_COMM_WORLD), MPI_ERR_OP);
    /* The caller's own block of the one-block-per-member side given as the other buffer
     * aliases them (MPI_IN_PLACE says that): an error on every rank, not wrong data. */
    int *blk = calloc(2 * (size_t)size, sizeof(int)), pair[2] = {rank, rank};
    int *cnts = calloc((size_t)size, sizeof(int)), *dsps = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; i++)
        cnts[i] = 2, dsps[i] = 2 * i;
    MPI_Request rq;
    EXPECT(MPI_Allgather(&blk[2 * rank], 2, MPI_INT, blk, 2, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_BUFFER);
    EXPECT(MPI_Iallgather(&blk[2 * rank], 2, MPI_INT, blk, 2, MPI_INT, MPI_COMM_WORLD, &rq),
           MPI_ERR_BUFFER);
    EXPECT(MPI_Allgatherv(&blk[2 * rank], 2, MPI_INT, blk, cnts, dsps, MPI_INT, MPI_COMM_WORLD),
           MPI_ERR_BUFFER);
    int root = size - 1;
    if (rank == root) {
        EXPECT(MPI_Gather(&blk[2 * root], 2, MPI_INT, blk, 2, MPI_INT, root, MPI_COMM_WORLD),
               MPI_ERR_BUFFER);
        EXPECT(MPI_Scatterv(blk, cnts, dsps, MPI_INT, &blk[2 * root], 2, MPI_INT, root,
                            MPI_COMM_WORLD),
               MPI_ERR_BUFFER);
    }
    /* the error left nothing behind: the right calls work */
    CHECK_MPI(MPI_Allgather(pair, 2, MPI_INT, blk, 2, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < 2 * size; i++)
        CHECK(blk[i] == i / 2, "Allgather after the aliasing errors: block %d holds %d", i / 2,
              blk[i]);
    CHECK_MPI(MPI_Gather(pair, 2, MPI_INT, blk, 2, MPI_INT, root, MPI_COMM_WORLD));
    free(blk);
    free(cnts);
    free(dsps);
    char s[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_MPI(MPI_Error_string(MPI_ERR_RANK, s, &len));
    CHECK(len > 0 && strstr(s, "rank"), "Error_string: \"%s\"", s);
    /* Under MPI_ERRORS_RETURN the string of a returned code keeps the call and its reason,
     * not only the class's text (what MPICH's and Open MPI's users print). */
    int rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    char want[32];
    snprintf(want, sizeof want, "%d", size + 5);
    CHECK_MPI(MPI_Error_string(rc, s, &len));
    CHECK(strstr(s, "MPI_Send") && strstr(s, want) && (int)strlen(s) == len,
          "Error_string of the returned code: \"%s\"", s);
    rc = MPI_Bcast(&v, 1, MPI_INT, -7, MPI_COMM_WORLD);
    CHECK_MPI(MPI_Error_string(rc, s, &len));
    CHECK(strstr(s, "MPI_Bcast") && strstr(s, "-7"), "Error_string of the root error: \"%s\"", s);
    /* an older reason of another class stays */
    CHECK_MPI(MPI_Error_string(MPI_ERR_RANK, s, &len));
    CHECK(strstr(s, "MPI_Send"), "Error_string after another class: \"%s\"", s);
    int version, sub;
    CHECK_MPI(MPI_Get_version(&version, &sub));
    CHECK(version == 4 && sub == 1, "version %d.%d", version, sub);
    char name[MPI_MAX_PROCESSOR_NAME];
    CHECK_MPI(MPI_Get_processor_name(name, &len));
    CHECK(len > 0, "empty processor name");
    int provided = -1;
    CHECK_MPI(MPI_Query_thread(&provided));
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_FUNNELED, "thread level %d",
          provided);
    return finish_ok();
}
