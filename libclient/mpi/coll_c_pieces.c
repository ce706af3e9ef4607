/* coll_c_pieces.c — large-count blocks of the rooted and all-to-all collectives in pieces
 * (coll_c_pieces.h). */
#include "coll_c_pieces.h"

#include <limits.h>
#include <stdint.h>

#include "lib.h"
#include "type.h"

/* A block's bytes: count elements of a contiguous type; -1 for another (or invalid) type or a
 * block no buffer can hold. */
static MPI_Count block_bytes(MPI_Count count, MPI_Datatype type)
{
    const struct tm_type *t = tm_type_get(type);
    if (!t || !t->contig || count < 0 || count > INTPTR_MAX / (MPI_Count)t->psize) return -1;
    return count * (MPI_Count)t->psize;
}

int tm_coll_c_big(MPI_Comm comm, MPI_Count count, MPI_Datatype type)
{
    int inter = 1;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return 0;
    return block_bytes(count, type) > INT_MAX;
}

/* k bytes with the extent of a whole block of stride bytes (committed, for one piece). */
static int piece_type(MPI_Count k, MPI_Count stride, MPI_Datatype *ret)
{
    MPI_Datatype c;
    int e = PMPI_Type_contiguous((int)k, MPI_BYTE, &c);
    if (e != MPI_SUCCESS) return e;
    e = PMPI_Type_create_resized(c, 0, (MPI_Aint)stride, ret);
    PMPI_Type_free(&c);
    if (e == MPI_SUCCESS) e = PMPI_Type_commit(ret);
    return e;
}

/* Integer arithmetic: MPI_BOTTOM with absolute addresses is a null base. */
static void *at(const void *buf, MPI_Count off)
{
    return (void *)((intptr_t)buf + (intptr_t)off);
}

static int is_root_of(MPI_Comm comm, int root)
{
    int rank = -1;
    return PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root;
}

static MPI_Count piece_at(MPI_Count n, MPI_Count done)
{
    return n - done < TM_COLL_PIECE ? n - done : TM_COLL_PIECE;
}

int tm_gather_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int me = is_root_of(comm, root);
    MPI_Count n = me ? block_bytes(recvcount, recvtype) : block_bytes(sendcount, sendtype);
    for (MPI_Count done = 0, k; done < n; done += k) {
        k = piece_at(n, done);
        MPI_Datatype rt = MPI_BYTE;
        int e = me ? piece_type(k, n, &rt) : MPI_SUCCESS;
        if (e != MPI_SUCCESS) return e;
        const void *sb = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : at(sendbuf, done);
        e = PMPI_Gather(sb, (int)k, MPI_BYTE, me ? at(recvbuf, done) : recvbuf, me ? 1 : 0, rt,
                        root, comm);
        if (me) PMPI_Type_free(&rt);
        if (e != MPI_SUCCESS) return e;
    }
    return MPI_SUCCESS;
}

int tm_scatter_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm)
{
    int me = is_root_of(comm, root);
    MPI_Count n = me ? block_bytes(sendcount, sendtype) : block_bytes(recvcount, recvtype);
    for (MPI_Count done = 0, k; done < n; done += k) {
        k = piece_at(n, done);
        MPI_Datatype st = MPI_BYTE;
        int e = me ? piece_type(k, n, &st) : MPI_SUCCESS;
        if (e != MPI_SUCCESS) return e;
        void *rb = recvbuf == MPI_IN_PLACE ? MPI_IN_PLACE : at(recvbuf, done);
        e = PMPI_Scatter(me ? at(sendbuf, done) : sendbuf, me ? 1 : 0, st, rb, (int)k, MPI_BYTE,
                         root, comm);
        if (me) PMPI_Type_free(&st);
        if (e != MPI_SUCCESS) return e;
    }
    return MPI_SUCCESS;
}

int tm_allgather_pieces(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Count n = block_bytes(recvcount, recvtype);
    for (MPI_Count done = 0, k; done < n; done += k) {
        k = piece_at(n, done);
        MPI_Datatype rt;
        int e = piece_type(k, n, &rt);
        if (e != MPI_SUCCESS) return e;
        /* in place: the rank's piece is in its block of recvbuf, where the engine looks */
        const void *sb = sendbuf == MPI_IN_PLACE ? MPI_IN_PLACE : at(sendbuf, done);
        e = PMPI_Allgather(sb, (int)k, MPI_BYTE, at(recvbuf, done), 1, rt, comm);
        PMPI_Type_free(&rt);
        if (e != MPI_SUCCESS) return e;
    }
    return MPI_SUCCESS;
}

/* In place: the engine would snapshot the whole buffer for every piece (coll_alltoall.c), so
 * the blocks are swapped pairwise instead, each pair {a, b} at step (a + b) mod size (every
 * rank has one partner per step, or none), in pieces of TM_COLL_PIECE_SWAP bytes, on a
 * duplicate of comm so that no message of the program's can match. */
static int alltoall_swap(void *recvbuf, MPI_Count n, MPI_Comm comm)
{
    int rank, size;
    MPI_Comm dup;
    int e = PMPI_Comm_rank(comm, &rank);
    if (e == MPI_SUCCESS) e = PMPI_Comm_size(comm, &size);
    if (e == MPI_SUCCESS) e = PMPI_Comm_dup(comm, &dup);
    if (e != MPI_SUCCESS) return e;
    for (int step = 0; step < size && e == MPI_SUCCESS; step++) {
        int peer = (step - rank + size) % size;
        if (peer == rank) continue;
        void *blk = at(recvbuf, (MPI_Count)peer * n);
        for (MPI_Count done = 0, k; done < n && e == MPI_SUCCESS; done += k) {
            k = n - done < TM_COLL_PIECE_SWAP ? n - done : TM_COLL_PIECE_SWAP;
            e = PMPI_Sendrecv_replace(at(blk, done), (int)k, MPI_BYTE, peer, 0, peer, 0, dup,
                                      MPI_STATUS_IGNORE);
        }
    }
    PMPI_Comm_free(&dup);
    return e;
}

int tm_alltoall_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Count n = block_bytes(recvcount, recvtype);
    if (sendbuf == MPI_IN_PLACE) return alltoall_swap(recvbuf, n, comm);
    if (block_bytes(sendcount, sendtype) != n)
        return PMPI_Alltoall(sendbuf, -1, sendtype, recvbuf, 0, recvtype, comm); /* says why */
    for (MPI_Count done = 0, k; done < n; done += k) {
        k = piece_at(n, done);
        MPI_Datatype t;
        int e = piece_type(k, n, &t);
        if (e != MPI_SUCCESS) return e;
        /* piece p of block j goes to rank j's piece p of our block */
        e = PMPI_Alltoall(at(sendbuf, done), 1, t, at(recvbuf, done), 1, t, comm);
        PMPI_Type_free(&t);
        if (e != MPI_SUCCESS) return e;
    }
    return MPI_SUCCESS;
}
