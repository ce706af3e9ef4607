/* bigcount_probe.c — every large-count (_c) call of MPI 4.1 but the file ones (io_large_count.c
 * has those) with a count past INT_MAX, or a displacement or size past it, of a type that has
 * no data (nothing moves, nothing is touched): prints one line per call, "NAME ok" or
 * "NAME <error class>", and OK at rank 0 when every call took its arguments.  2 ranks or more,
 * one node or several. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <mpi.h>

static int rank, size, refused;

static void report(const char *name, int e)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0, cls = e;
    MPI_Error_class(e, &cls);
    if (e == MPI_SUCCESS) {
        if (rank == 0) printf("%s ok\n", name);
        return;
    }
    MPI_Error_string(e, s, &len);
    fprintf(stderr, "rank %d: %s: %s\n", rank, name, s);
    refused++;
}

/* Calls a blocking call; a non-blocking one (last argument &rq) is waited for. */
#define P(name, call) report(#name, (call))
#define PW(name, call) report(#name, wait_rc((call), &rq))
static int wait_rc(int e, MPI_Request *rq)
{
    return e != MPI_SUCCESS ? e : MPI_Wait(rq, MPI_STATUS_IGNORE);
}
/* A persistent request: started twice, then freed. */
#define PI(name, call) report(#name, start2((call), &rq))
static int start2(int e, MPI_Request *rq)
{
    for (int i = 0; i < 2 && e == MPI_SUCCESS; i++) {
        e = MPI_Start(rq);
        if (e == MPI_SUCCESS) e = MPI_Wait(rq, MPI_STATUS_IGNORE);
    }
    return e != MPI_SUCCESS ? e : MPI_Request_free(rq);
}

static void user_fn(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const MPI_Count H = (MPI_Count)INT_MAX + 1; /* odd multiples keep a v side factor-free */
    const MPI_Aint D = (MPI_Aint)INT_MAX + 9;
    /* Z: a type without data; its counts move nothing */
    MPI_Datatype Z;
    MPI_Type_contiguous(0, MPI_INT, &Z);
    MPI_Type_commit(&Z);
    char sb[64], rb[64];
    MPI_Request rq;
    MPI_Status st;
    MPI_Message msg;
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Count *cn = calloc((size_t)size, sizeof *cn);
    MPI_Aint *ds = calloc((size_t)size, sizeof *ds);
    MPI_Datatype *ts = malloc(sizeof *ts * (size_t)size);
    for (int i = 0; i < size; i++)
        cn[i] = H, ds[i] = D, ts[i] = Z;

    /* point-to-point */
    P(MPI_Sendrecv_c, MPI_Sendrecv_c(sb, H, Z, peer, 1, rb, H, Z, from, 1, MPI_COMM_WORLD, &st));
    MPI_Count c = 0;
    P(MPI_Get_count_c, MPI_Get_count_c(&st, MPI_BYTE, &c));
    P(MPI_Get_elements_c, MPI_Get_elements_c(&st, Z, &c));
    P(MPI_Status_set_elements_c, MPI_Status_set_elements_c(&st, MPI_INT, H));
    P(MPI_Sendrecv_replace_c,
      MPI_Sendrecv_replace_c(rb, H, Z, peer, 2, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    PW(MPI_Isendrecv_c, MPI_Isendrecv_c(sb, H, Z, peer, 3, rb, H, Z, from, 3, MPI_COMM_WORLD, &rq));
    PW(MPI_Isendrecv_replace_c,
       MPI_Isendrecv_replace_c(rb, H, Z, peer, 4, from, 4, MPI_COMM_WORLD, &rq));
    MPI_Request r2;
    P(MPI_Irecv_c, MPI_Irecv_c(rb, H, Z, from, 5, MPI_COMM_WORLD, &r2));
    P(MPI_Send_c, MPI_Send_c(sb, H, Z, peer, 5, MPI_COMM_WORLD));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Irecv_c(rb, H, Z, from, 6, MPI_COMM_WORLD, &r2);
    PW(MPI_Isend_c, MPI_Isend_c(sb, H, Z, peer, 6, MPI_COMM_WORLD, &rq));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Irecv_c(rb, H, Z, from, 7, MPI_COMM_WORLD, &r2);
    P(MPI_Ssend_c, MPI_Ssend_c(sb, H, Z, peer, 7, MPI_COMM_WORLD));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Irecv_c(rb, H, Z, from, 8, MPI_COMM_WORLD, &r2);
    PW(MPI_Issend_c, MPI_Issend_c(sb, H, Z, peer, 8, MPI_COMM_WORLD, &rq));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Irecv_c(rb, H, Z, from, 9, MPI_COMM_WORLD, &r2);
    MPI_Barrier(MPI_COMM_WORLD); /* the receive is posted before the ready send */
    P(MPI_Rsend_c, MPI_Rsend_c(sb, H, Z, peer, 9, MPI_COMM_WORLD));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Irecv_c(rb, H, Z, from, 10, MPI_COMM_WORLD, &r2);
    MPI_Barrier(MPI_COMM_WORLD);
    PW(MPI_Irsend_c, MPI_Irsend_c(sb, H, Z, peer, 10, MPI_COMM_WORLD, &rq));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    /* buffered: an attached buffer of more than 2^31 bytes, reserved but never touched
     * beyond what the sends use */
    const MPI_Count BIG = (MPI_Count)3 << 30;
    void *bb = mmap(NULL, (size_t)BIG, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    P(MPI_Buffer_attach_c, MPI_Buffer_attach_c(bb, BIG));
    MPI_Irecv_c(rb, H, Z, from, 11, MPI_COMM_WORLD, &r2);
    P(MPI_Bsend_c, MPI_Bsend_c(sb, H, Z, peer, 11, MPI_COMM_WORLD));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Irecv_c(rb, H, Z, from, 12, MPI_COMM_WORLD, &r2);
    PW(MPI_Ibsend_c, MPI_Ibsend_c(sb, H, Z, peer, 12, MPI_COMM_WORLD, &rq));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    void *ob;
    MPI_Count osz = 0;
    P(MPI_Buffer_detach_c, MPI_Buffer_detach_c(&ob, &osz));
    if (osz != BIG) report("MPI_Buffer_detach_c size", MPI_ERR_SIZE);
    P(MPI_Comm_attach_buffer_c, MPI_Comm_attach_buffer_c(MPI_COMM_WORLD, bb, BIG));
    P(MPI_Comm_detach_buffer_c, MPI_Comm_detach_buffer_c(MPI_COMM_WORLD, &ob, &osz));
    munmap(bb, (size_t)BIG);
    /* persistent point-to-point: each started twice */
    MPI_Request pr[2];
    P(MPI_Recv_init_c, MPI_Recv_init_c(rb, H, Z, from, 13, MPI_COMM_WORLD, &pr[0]));
    P(MPI_Send_init_c, MPI_Send_init_c(sb, H, Z, peer, 13, MPI_COMM_WORLD, &pr[1]));
    for (int i = 0; i < 2; i++)
        MPI_Startall(2, pr), MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    MPI_Request_free(&pr[0]), MPI_Request_free(&pr[1]);
    MPI_Recv_init_c(rb, H, Z, from, 14, MPI_COMM_WORLD, &pr[0]);
    P(MPI_Ssend_init_c, MPI_Ssend_init_c(sb, H, Z, peer, 14, MPI_COMM_WORLD, &pr[1]));
    MPI_Startall(2, pr), MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    MPI_Request_free(&pr[0]), MPI_Request_free(&pr[1]);
    MPI_Recv_init_c(rb, H, Z, from, 15, MPI_COMM_WORLD, &pr[0]);
    bb = malloc(4096);
    MPI_Buffer_attach(bb, 4096);
    P(MPI_Bsend_init_c, MPI_Bsend_init_c(sb, H, Z, peer, 15, MPI_COMM_WORLD, &pr[1]));
    MPI_Startall(2, pr), MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    MPI_Request_free(&pr[0]), MPI_Request_free(&pr[1]);
    int bsz;
    MPI_Buffer_detach(&ob, &bsz);
    free(bb);
    MPI_Recv_init_c(rb, H, Z, from, 16, MPI_COMM_WORLD, &pr[0]);
    MPI_Start(&pr[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    P(MPI_Rsend_init_c, MPI_Rsend_init_c(sb, H, Z, peer, 16, MPI_COMM_WORLD, &pr[1]));
    MPI_Start(&pr[1]);
    MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
    MPI_Request_free(&pr[0]), MPI_Request_free(&pr[1]);
    /* matched probe */
    MPI_Isend_c(sb, H, Z, peer, 17, MPI_COMM_WORLD, &r2);
    MPI_Mprobe(from, 17, MPI_COMM_WORLD, &msg, &st);
    P(MPI_Mrecv_c, MPI_Mrecv_c(rb, H, Z, &msg, &st));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    MPI_Isend_c(sb, H, Z, peer, 18, MPI_COMM_WORLD, &r2);
    MPI_Mprobe(from, 18, MPI_COMM_WORLD, &msg, &st);
    PW(MPI_Imrecv_c, MPI_Imrecv_c(rb, H, Z, &msg, &rq));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);

    /* packing */
    MPI_Count pos = 0, psz = 0;
    P(MPI_Pack_size_c, MPI_Pack_size_c(H, Z, MPI_COMM_WORLD, &psz));
    P(MPI_Pack_c, MPI_Pack_c(sb, H, Z, rb, sizeof rb, &pos, MPI_COMM_WORLD));
    pos = 0;
    P(MPI_Unpack_c, MPI_Unpack_c(rb, sizeof rb, &pos, sb, H, Z, MPI_COMM_WORLD));
    P(MPI_Pack_external_size_c, MPI_Pack_external_size_c("external32", H, Z, &psz));
    pos = 0;
    P(MPI_Pack_external_c, MPI_Pack_external_c("external32", sb, H, Z, rb, sizeof rb, &pos));
    pos = 0;
    P(MPI_Unpack_external_c, MPI_Unpack_external_c("external32", rb, sizeof rb, &pos, sb, H, Z));
    MPI_Op uop;
    P(MPI_Op_create_c, MPI_Op_create_c(user_fn, 1, &uop));
    P(MPI_Reduce_local_c, MPI_Reduce_local_c(sb, rb, H, Z, MPI_SUM));

    /* collectives: blocking, non-blocking, persistent */
    MPI_Comm W = MPI_COMM_WORLD;
    P(MPI_Bcast_c, MPI_Bcast_c(rb, H, Z, 0, W));
    P(MPI_Gather_c, MPI_Gather_c(sb, H, Z, rb, H, Z, 0, W));
    P(MPI_Gatherv_c, MPI_Gatherv_c(sb, H, Z, rb, cn, ds, Z, 0, W));
    P(MPI_Scatter_c, MPI_Scatter_c(sb, H, Z, rb, H, Z, 0, W));
    P(MPI_Scatterv_c, MPI_Scatterv_c(sb, cn, ds, Z, rb, H, Z, 0, W));
    P(MPI_Allgather_c, MPI_Allgather_c(sb, H, Z, rb, H, Z, W));
    P(MPI_Allgatherv_c, MPI_Allgatherv_c(sb, H, Z, rb, cn, ds, Z, W));
    P(MPI_Alltoall_c, MPI_Alltoall_c(sb, H, Z, rb, H, Z, W));
    P(MPI_Alltoallv_c, MPI_Alltoallv_c(sb, cn, ds, Z, rb, cn, ds, Z, W));
    P(MPI_Alltoallw_c, MPI_Alltoallw_c(sb, cn, ds, ts, rb, cn, ds, ts, W));
    P(MPI_Reduce_c, MPI_Reduce_c(sb, rb, H, Z, MPI_SUM, 0, W));
    P(MPI_Allreduce_c, MPI_Allreduce_c(sb, rb, H, Z, MPI_SUM, W));
    P(MPI_Reduce_scatter_c, MPI_Reduce_scatter_c(sb, rb, cn, Z, MPI_SUM, W));
    P(MPI_Reduce_scatter_block_c, MPI_Reduce_scatter_block_c(sb, rb, H, Z, MPI_SUM, W));
    P(MPI_Scan_c, MPI_Scan_c(sb, rb, H, Z, MPI_SUM, W));
    P(MPI_Exscan_c, MPI_Exscan_c(sb, rb, H, Z, MPI_SUM, W));
    PW(MPI_Ibcast_c, MPI_Ibcast_c(rb, H, Z, 0, W, &rq));
    PW(MPI_Igather_c, MPI_Igather_c(sb, H, Z, rb, H, Z, 0, W, &rq));
    PW(MPI_Igatherv_c, MPI_Igatherv_c(sb, H, Z, rb, cn, ds, Z, 0, W, &rq));
    PW(MPI_Iscatter_c, MPI_Iscatter_c(sb, H, Z, rb, H, Z, 0, W, &rq));
    PW(MPI_Iscatterv_c, MPI_Iscatterv_c(sb, cn, ds, Z, rb, H, Z, 0, W, &rq));
    PW(MPI_Iallgather_c, MPI_Iallgather_c(sb, H, Z, rb, H, Z, W, &rq));
    PW(MPI_Iallgatherv_c, MPI_Iallgatherv_c(sb, H, Z, rb, cn, ds, Z, W, &rq));
    PW(MPI_Ialltoall_c, MPI_Ialltoall_c(sb, H, Z, rb, H, Z, W, &rq));
    PW(MPI_Ialltoallv_c, MPI_Ialltoallv_c(sb, cn, ds, Z, rb, cn, ds, Z, W, &rq));
    PW(MPI_Ialltoallw_c, MPI_Ialltoallw_c(sb, cn, ds, ts, rb, cn, ds, ts, W, &rq));
    PW(MPI_Ireduce_c, MPI_Ireduce_c(sb, rb, H, Z, MPI_SUM, 0, W, &rq));
    PW(MPI_Iallreduce_c, MPI_Iallreduce_c(sb, rb, H, Z, MPI_SUM, W, &rq));
    PW(MPI_Ireduce_scatter_c, MPI_Ireduce_scatter_c(sb, rb, cn, Z, MPI_SUM, W, &rq));
    PW(MPI_Ireduce_scatter_block_c, MPI_Ireduce_scatter_block_c(sb, rb, H, Z, MPI_SUM, W, &rq));
    PW(MPI_Iscan_c, MPI_Iscan_c(sb, rb, H, Z, MPI_SUM, W, &rq));
    PW(MPI_Iexscan_c, MPI_Iexscan_c(sb, rb, H, Z, MPI_SUM, W, &rq));
    MPI_Info I = MPI_INFO_NULL;
    PI(MPI_Bcast_init_c, MPI_Bcast_init_c(rb, H, Z, 0, W, I, &rq));
    PI(MPI_Gather_init_c, MPI_Gather_init_c(sb, H, Z, rb, H, Z, 0, W, I, &rq));
    PI(MPI_Gatherv_init_c, MPI_Gatherv_init_c(sb, H, Z, rb, cn, ds, Z, 0, W, I, &rq));
    PI(MPI_Scatter_init_c, MPI_Scatter_init_c(sb, H, Z, rb, H, Z, 0, W, I, &rq));
    PI(MPI_Scatterv_init_c, MPI_Scatterv_init_c(sb, cn, ds, Z, rb, H, Z, 0, W, I, &rq));
    PI(MPI_Allgather_init_c, MPI_Allgather_init_c(sb, H, Z, rb, H, Z, W, I, &rq));
    PI(MPI_Allgatherv_init_c, MPI_Allgatherv_init_c(sb, H, Z, rb, cn, ds, Z, W, I, &rq));
    PI(MPI_Alltoall_init_c, MPI_Alltoall_init_c(sb, H, Z, rb, H, Z, W, I, &rq));
    PI(MPI_Alltoallv_init_c, MPI_Alltoallv_init_c(sb, cn, ds, Z, rb, cn, ds, Z, W, I, &rq));
    PI(MPI_Alltoallw_init_c, MPI_Alltoallw_init_c(sb, cn, ds, ts, rb, cn, ds, ts, W, I, &rq));
    PI(MPI_Reduce_init_c, MPI_Reduce_init_c(sb, rb, H, Z, MPI_SUM, 0, W, I, &rq));
    PI(MPI_Allreduce_init_c, MPI_Allreduce_init_c(sb, rb, H, Z, MPI_SUM, W, I, &rq));
    PI(MPI_Reduce_scatter_init_c, MPI_Reduce_scatter_init_c(sb, rb, cn, Z, MPI_SUM, W, I, &rq));
    PI(MPI_Reduce_scatter_block_init_c,
       MPI_Reduce_scatter_block_init_c(sb, rb, H, Z, MPI_SUM, W, I, &rq));
    PI(MPI_Scan_init_c, MPI_Scan_init_c(sb, rb, H, Z, MPI_SUM, W, I, &rq));
    PI(MPI_Exscan_init_c, MPI_Exscan_init_c(sb, rb, H, Z, MPI_SUM, W, I, &rq));

    /* neighbourhood collectives on a ring */
    int dims[1] = {size}, per[1] = {1};
    MPI_Comm R;
    MPI_Cart_create(W, 1, dims, per, 0, &R);
    MPI_Comm_set_errhandler(R, MPI_ERRORS_RETURN);
    P(MPI_Neighbor_allgather_c, MPI_Neighbor_allgather_c(sb, H, Z, rb, H, Z, R));
    P(MPI_Neighbor_allgatherv_c, MPI_Neighbor_allgatherv_c(sb, H, Z, rb, cn, ds, Z, R));
    P(MPI_Neighbor_alltoall_c, MPI_Neighbor_alltoall_c(sb, H, Z, rb, H, Z, R));
    P(MPI_Neighbor_alltoallv_c, MPI_Neighbor_alltoallv_c(sb, cn, ds, Z, rb, cn, ds, Z, R));
    P(MPI_Neighbor_alltoallw_c, MPI_Neighbor_alltoallw_c(sb, cn, ds, ts, rb, cn, ds, ts, R));
    PW(MPI_Ineighbor_allgather_c, MPI_Ineighbor_allgather_c(sb, H, Z, rb, H, Z, R, &rq));
    PW(MPI_Ineighbor_allgatherv_c, MPI_Ineighbor_allgatherv_c(sb, H, Z, rb, cn, ds, Z, R, &rq));
    PW(MPI_Ineighbor_alltoall_c, MPI_Ineighbor_alltoall_c(sb, H, Z, rb, H, Z, R, &rq));
    PW(MPI_Ineighbor_alltoallv_c, MPI_Ineighbor_alltoallv_c(sb, cn, ds, Z, rb, cn, ds, Z, R, &rq));
    PW(MPI_Ineighbor_alltoallw_c,
       MPI_Ineighbor_alltoallw_c(sb, cn, ds, ts, rb, cn, ds, ts, R, &rq));
    PI(MPI_Neighbor_allgather_init_c, MPI_Neighbor_allgather_init_c(sb, H, Z, rb, H, Z, R, I, &rq));
    PI(MPI_Neighbor_allgatherv_init_c,
       MPI_Neighbor_allgatherv_init_c(sb, H, Z, rb, cn, ds, Z, R, I, &rq));
    PI(MPI_Neighbor_alltoall_init_c, MPI_Neighbor_alltoall_init_c(sb, H, Z, rb, H, Z, R, I, &rq));
    PI(MPI_Neighbor_alltoallv_init_c,
       MPI_Neighbor_alltoallv_init_c(sb, cn, ds, Z, rb, cn, ds, Z, R, I, &rq));
    PI(MPI_Neighbor_alltoallw_init_c,
       MPI_Neighbor_alltoallw_init_c(sb, cn, ds, ts, rb, cn, ds, ts, R, I, &rq));
    MPI_Comm_free(&R);

    /* inter-communicator collectives: the two halves of the ranks */
    if (size >= 2) {
        MPI_Comm half, X;
        MPI_Comm_split(W, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, W, rank % 2 ? 0 : 1, 99, &X);
        MPI_Comm_set_errhandler(X, MPI_ERRORS_RETURN);
        int low = rank % 2 == 0, lr;
        MPI_Comm_rank(half, &lr);
        int root = low ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        P(MPI_Bcast_c(inter), MPI_Bcast_c(rb, H, Z, root, X));
        P(MPI_Gather_c(inter), MPI_Gather_c(sb, H, Z, rb, H, Z, root, X));
        P(MPI_Allgather_c(inter), MPI_Allgather_c(sb, H, Z, rb, H, Z, X));
        P(MPI_Alltoall_c(inter), MPI_Alltoall_c(sb, H, Z, rb, H, Z, X));
        P(MPI_Allreduce_c(inter), MPI_Allreduce_c(sb, rb, H, Z, MPI_SUM, X));
        PW(MPI_Iallgather_c(inter), MPI_Iallgather_c(sb, H, Z, rb, H, Z, X, &rq));
        MPI_Comm_free(&X);
        MPI_Comm_free(&half);
    }

    /* one-sided: counts of origin and target past int, windows of more than 2^31 bytes
     * (reserved, never touched) and target displacements past int (displacement units past
     * int: bigfold.c wunit) */
    MPI_Win win;
    void *wb = mmap(NULL, (size_t)BIG, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    P(MPI_Win_create_c, MPI_Win_create_c(wb, BIG, 1, MPI_INFO_NULL, W, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_fence(0, win);
    P(MPI_Put_c, MPI_Put_c(sb, H, Z, peer, D, H, Z, win));
    P(MPI_Get_c, MPI_Get_c(rb, H, Z, peer, D, H, Z, win));
    P(MPI_Accumulate_c, MPI_Accumulate_c(sb, H, Z, peer, D, H, Z, MPI_SUM, win));
    P(MPI_Get_accumulate_c, MPI_Get_accumulate_c(sb, H, Z, rb, H, Z, peer, D, H, Z, MPI_SUM, win));
    MPI_Win_fence(0, win);
    MPI_Win_lock_all(0, win);
    PW(MPI_Rput_c, MPI_Rput_c(sb, H, Z, peer, D, H, Z, win, &rq));
    PW(MPI_Rget_c, MPI_Rget_c(rb, H, Z, peer, D, H, Z, win, &rq));
    PW(MPI_Raccumulate_c, MPI_Raccumulate_c(sb, H, Z, peer, D, H, Z, MPI_SUM, win, &rq));
    PW(MPI_Rget_accumulate_c,
       MPI_Rget_accumulate_c(sb, H, Z, rb, H, Z, peer, D, H, Z, MPI_SUM, win, &rq));
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    munmap(wb, (size_t)BIG);
    void *base;
    P(MPI_Win_allocate_c, MPI_Win_allocate_c(64, 8, MPI_INFO_NULL, W, &base, &win));
    MPI_Win_free(&win);
    MPI_Comm node;
    MPI_Comm_split_type(W, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    P(MPI_Win_allocate_shared_c,
      MPI_Win_allocate_shared_c(64, 8, MPI_INFO_NULL, node, &base, &win));
    MPI_Aint qs = 0, qd = 0;
    P(MPI_Win_shared_query_c, MPI_Win_shared_query_c(win, 0, &qs, &qd, &base));
    if (qd != 8 || qs != 64) report("MPI_Win_shared_query_c size and disp_unit", MPI_ERR_SIZE);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);

    MPI_Op_free(&uop);
    MPI_Type_free(&Z);
    int all = 0;
    MPI_Allreduce(&refused, &all, 1, MPI_INT, MPI_SUM, W);
    if (rank == 0) printf(all ? "REFUSED %d\n" : "OK\n", all);
    free(cn), free(ds), free(ts);
    MPI_Finalize();
    return all != 0;
}
