/* coll_c_pieces.c — blocks past 2^31 - 1 bytes of the broadcast, rooted and all-to-all
 * collectives in pieces (coll_c_pieces.h). */
#include "coll_c_pieces.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "comm.h"
#include "job.h"
#include "lib.h"
#include "type.h"
#include "type_copy.h"

/* A block's bytes (its signature's: count elements in packed form, whatever the type); -1 for
 * an invalid type or a block no buffer can hold. */
static MPI_Count block_bytes(MPI_Count count, MPI_Datatype type)
{
    const struct tm_type *t = tm_type_get(type);
    if (!t || count < 0 || (t->psize && count > INTPTR_MAX / (MPI_Count)t->psize)) return -1;
    return count * (MPI_Count)t->psize;
}

int tm_cp_rank(MPI_Comm comm, int *ret_size, int *ret_inter)
{
    struct tm_rank *me = tm_self();
    const struct tm_commref *cr = me ? tm_comm_get(&me->comms, comm) : NULL;
    if (ret_size) *ret_size = cr ? cr->c->size : 0;
    if (ret_inter) *ret_inter = cr ? cr->c->inter : 0;
    return cr ? cr->rank : -1;
}

int tm_coll_c_big(MPI_Comm comm, MPI_Count count, MPI_Datatype type)
{
    /* the bytes first: the int calls ask too, and their blocks are rarely this large */
    int inter = 1;
    if (block_bytes(count, type) <= INT_MAX) return 0;
    return tm_cp_rank(comm, NULL, &inter) >= 0 && !inter;
}

int tm_coll_c_big_rooted(MPI_Comm comm, int root, MPI_Count rcount, MPI_Datatype rtype,
                         MPI_Count count, MPI_Datatype type)
{
    int inter = 1;
    if (block_bytes(rcount, rtype) <= INT_MAX && block_bytes(count, type) <= INT_MAX) return 0;
    int rank = tm_cp_rank(comm, NULL, &inter);
    if (rank < 0 || inter) return 0;
    return rank == root ? block_bytes(rcount, rtype) > INT_MAX : block_bytes(count, type) > INT_MAX;
}

int tm_bcast_pieces(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const struct tm_type *t = tm_type_get(datatype);
    int rank = tm_cp_rank(comm, NULL, NULL);
    struct tm_cflat f;
    void *b;
    int e = tm_cflat_begin(&f, comm, buffer, count, datatype, rank == root, rank != root, &b);
    const MPI_Count n = count * (MPI_Count)t->psize; /* fits: tm_coll_c_big said so */
    for (MPI_Count done = 0; e == MPI_SUCCESS && done < n;) {
        MPI_Count k = n - done < TM_BCAST_PIECE ? n - done : TM_BCAST_PIECE;
        /* integer arithmetic: MPI_BOTTOM with absolute addresses is a null base */
        e = PMPI_Bcast((void *)((intptr_t)b + (intptr_t)done), (int)k, MPI_BYTE, root, comm);
        done += k;
    }
    return tm_cflat_end(&f, e);
}

int tm_cflat_begin(struct tm_cflat *f, MPI_Comm comm, void *buf, MPI_Count count, MPI_Datatype type,
                   int in, int out, void **ret)
{
    const struct tm_type *t = tm_type_get(type);
    *f = (struct tm_cflat){0};
    *ret = buf;
    if (!t || t->contig || buf == MPI_IN_PLACE || block_bytes(count, type) <= 0) return 0;
    const size_t bytes = (size_t)count * t->psize;
    f->tmp = malloc(bytes);
    if (!f->tmp) {
        PMPI_Comm_call_errhandler(comm, MPI_ERR_NO_MEM);
        return MPI_ERR_NO_MEM;
    }
    f->t = t;
    f->user = buf;
    f->count = count;
    f->out = out;
    if (in) tm_type_pack(f->tmp, buf, (size_t)count, t, 0, bytes);
    *ret = f->tmp;
    return 0;
}

int tm_cflat_end(struct tm_cflat *f, int e)
{
    if (!f->tmp) return e;
    if (e == MPI_SUCCESS && f->out)
        tm_type_unpack(f->user, (size_t)f->count, f->t, 0, f->tmp, (size_t)f->count * f->t->psize);
    free(f->tmp);
    f->tmp = NULL;
    return e;
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
    return root >= 0 && tm_cp_rank(comm, NULL, NULL) == root;
}

static MPI_Count piece_at(MPI_Count n, MPI_Count done)
{
    return n - done < TM_COLL_PIECE ? n - done : TM_COLL_PIECE;
}

static int gather_bytes(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm);

int tm_gather_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int me = is_root_of(comm, root), size = 0;
    tm_cp_rank(comm, &size, NULL);
    struct tm_cflat fs, fr = {0};
    void *sb, *rb = recvbuf;
    int e = tm_cflat_begin(&fs, comm, (void *)sendbuf, sendcount, sendtype, 1, 0, &sb);
    if (!e && me)
        e = tm_cflat_begin(&fr, comm, recvbuf, recvcount * size, recvtype, sendbuf == MPI_IN_PLACE,
                           1, &rb);
    /* both sides as bytes now (contiguous types or their packed stand-ins) */
    if (!e)
        e = gather_bytes(sb, block_bytes(sendcount, sendtype), MPI_BYTE, rb,
                         block_bytes(recvcount, recvtype), MPI_BYTE, root, comm);
    return tm_cflat_end(&fs, tm_cflat_end(&fr, e));
}

static int gather_bytes(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm)
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

static int scatter_bytes(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm);

int tm_scatter_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm)
{
    int me = is_root_of(comm, root), size = 0;
    tm_cp_rank(comm, &size, NULL);
    struct tm_cflat fs = {0}, fr;
    void *sb = (void *)sendbuf, *rb;
    int e = tm_cflat_begin(&fr, comm, recvbuf, recvcount, recvtype, 0, 1, &rb);
    if (!e && me)
        e = tm_cflat_begin(&fs, comm, (void *)sendbuf, sendcount * size, sendtype, 1, 0, &sb);
    if (!e)
        e = scatter_bytes(sb, block_bytes(sendcount, sendtype), MPI_BYTE, rb,
                          block_bytes(recvcount, recvtype), MPI_BYTE, root, comm);
    return tm_cflat_end(&fs, tm_cflat_end(&fr, e));
}

static int scatter_bytes(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
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

static int allgather_bytes(const void *sendbuf, void *recvbuf, MPI_Count n, MPI_Comm comm);

int tm_allgather_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int size = 0;
    tm_cp_rank(comm, &size, NULL);
    struct tm_cflat fs, fr;
    void *sb, *rb;
    int e = tm_cflat_begin(&fs, comm, (void *)sendbuf, sendcount, sendtype, 1, 0, &sb);
    if (!e)
        e = tm_cflat_begin(&fr, comm, recvbuf, recvcount * size, recvtype, sendbuf == MPI_IN_PLACE,
                           1, &rb);
    else
        fr = (struct tm_cflat){0};
    if (!e) e = allgather_bytes(sb, rb, block_bytes(recvcount, recvtype), comm);
    return tm_cflat_end(&fs, tm_cflat_end(&fr, e));
}

static int allgather_bytes(const void *sendbuf, void *recvbuf, MPI_Count n, MPI_Comm comm)
{
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

static int alltoall_bytes(const void *sendbuf, void *recvbuf, MPI_Count n, MPI_Comm comm);

int tm_alltoall_pieces(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MPI_Count n = block_bytes(recvcount, recvtype);
    if (sendbuf != MPI_IN_PLACE && block_bytes(sendcount, sendtype) != n)
        return PMPI_Alltoall(sendbuf, -1, sendtype, recvbuf, 0, recvtype, comm); /* says why */
    int size = 0;
    tm_cp_rank(comm, &size, NULL);
    struct tm_cflat fs, fr = {0};
    void *sb, *rb;
    int e = tm_cflat_begin(&fs, comm, (void *)sendbuf, sendcount * size, sendtype, 1, 0, &sb);
    if (!e)
        e = tm_cflat_begin(&fr, comm, recvbuf, recvcount * size, recvtype, sendbuf == MPI_IN_PLACE,
                           1, &rb);
    if (!e)
        e = sendbuf == MPI_IN_PLACE ? alltoall_swap(rb, n, comm) : alltoall_bytes(sb, rb, n, comm);
    return tm_cflat_end(&fs, tm_cflat_end(&fr, e));
}

static int alltoall_bytes(const void *sendbuf, void *recvbuf, MPI_Count n, MPI_Comm comm)
{
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
