/* mpi.h — the MPI interface of TMPI (threaded MPI: every rank is a thread inside tmpid).
 *
 * Handles are small integers (communicators, datatypes, ops, error handlers) or pointers
 * (requests); their values are private to TMPI and only meaningful to this library.
 * Programs are built with tmpicc, which links libtmpi and the module entry.
 */
#ifndef TMPI_MPI_H
#define TMPI_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1

/* ---- basic types ---- */
typedef ptrdiff_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Group;
typedef int MPI_Info;
typedef struct tm_request *MPI_Request;
typedef int MPI_Win;

/* Status: the three public fields MPI names, then fields only libtmpi reads. */
typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int tm_cancelled;
    long long tm_bytes;
} MPI_Status;

#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)

/* ---- communicators ---- */
#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_COMM_WORLD ((MPI_Comm)1)
#define MPI_COMM_SELF ((MPI_Comm)2)

#define MPI_GROUP_NULL ((MPI_Group)0)
#define MPI_INFO_NULL ((MPI_Info)0)

/* MPI_Comm_split_type: the ranks that share memory (here: one node's ranks). */
#define MPI_COMM_TYPE_SHARED 1

#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* ---- special values ---- */
#define MPI_ANY_SOURCE (-1)
#define MPI_PROC_NULL (-2)
#define MPI_ROOT (-3)
#define MPI_ANY_TAG (-1)
#define MPI_UNDEFINED (-32766)
#define MPI_KEYVAL_INVALID (-1)
/* MPI_TAG_UB is the attribute key MPI_Comm_get_attr answers with the largest valid tag; the
 * key is chosen equal to that tag, so code that uses it as a value gets the right bound too. */
#define MPI_TAG_UB 0x3fffffff

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 256
#define MPI_MAX_OBJECT_NAME 64
#define MPI_MAX_LIBRARY_VERSION_STRING 256

#define MPI_IN_PLACE ((void *)-1)
#define MPI_BOTTOM ((void *)0)

/* ---- datatypes (predefined; values index libtmpi's type table) ---- */
#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_CHAR ((MPI_Datatype)1)
#define MPI_SIGNED_CHAR ((MPI_Datatype)2)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)3)
#define MPI_BYTE ((MPI_Datatype)4)
#define MPI_SHORT ((MPI_Datatype)5)
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)6)
#define MPI_INT ((MPI_Datatype)7)
#define MPI_UNSIGNED ((MPI_Datatype)8)
#define MPI_LONG ((MPI_Datatype)9)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)10)
#define MPI_LONG_LONG ((MPI_Datatype)11)
#define MPI_LONG_LONG_INT MPI_LONG_LONG
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)12)
#define MPI_FLOAT ((MPI_Datatype)13)
#define MPI_DOUBLE ((MPI_Datatype)14)
#define MPI_LONG_DOUBLE ((MPI_Datatype)15)
#define MPI_WCHAR ((MPI_Datatype)16)
#define MPI_C_BOOL ((MPI_Datatype)17)
#define MPI_INT8_T ((MPI_Datatype)18)
#define MPI_INT16_T ((MPI_Datatype)19)
#define MPI_INT32_T ((MPI_Datatype)20)
#define MPI_INT64_T ((MPI_Datatype)21)
#define MPI_UINT8_T ((MPI_Datatype)22)
#define MPI_UINT16_T ((MPI_Datatype)23)
#define MPI_UINT32_T ((MPI_Datatype)24)
#define MPI_UINT64_T ((MPI_Datatype)25)
#define MPI_AINT ((MPI_Datatype)26)
#define MPI_OFFSET ((MPI_Datatype)27)
#define MPI_COUNT ((MPI_Datatype)28)
#define MPI_FLOAT_INT ((MPI_Datatype)29)
#define MPI_DOUBLE_INT ((MPI_Datatype)30)
#define MPI_LONG_INT ((MPI_Datatype)31)
#define MPI_2INT ((MPI_Datatype)32)
#define MPI_SHORT_INT ((MPI_Datatype)33)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)34)
#define MPI_PACKED ((MPI_Datatype)35)

/* ---- reduction operations ---- */
#define MPI_OP_NULL ((MPI_Op)0)
#define MPI_SUM ((MPI_Op)1)
#define MPI_PROD ((MPI_Op)2)
#define MPI_MIN ((MPI_Op)3)
#define MPI_MAX ((MPI_Op)4)
#define MPI_LAND ((MPI_Op)5)
#define MPI_LOR ((MPI_Op)6)
#define MPI_LXOR ((MPI_Op)7)
#define MPI_BAND ((MPI_Op)8)
#define MPI_BOR ((MPI_Op)9)
#define MPI_BXOR ((MPI_Op)10)
#define MPI_MINLOC ((MPI_Op)11)
#define MPI_MAXLOC ((MPI_Op)12)
#define MPI_REPLACE ((MPI_Op)13)
#define MPI_NO_OP ((MPI_Op)14)

/* A user-defined reduction (MPI_Op_create): inoutvec[i] = invec[i] op inoutvec[i], i < *len. */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);

/* ---- requests and error handlers ---- */
#define MPI_REQUEST_NULL ((MPI_Request)0)

#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)1)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)2)

/* ---- error classes ---- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_KEYVAL 20
#define MPI_ERR_NO_MEM 21
#define MPI_ERR_BASE 22
#define MPI_ERR_INFO_KEY 23
#define MPI_ERR_INFO_VALUE 24
#define MPI_ERR_INFO_NOKEY 25
#define MPI_ERR_SPAWN 26
#define MPI_ERR_PORT 27
#define MPI_ERR_SERVICE 28
#define MPI_ERR_NAME 29
#define MPI_ERR_WIN 30
#define MPI_ERR_SIZE 31
#define MPI_ERR_DISP 32
#define MPI_ERR_INFO 33
#define MPI_ERR_LOCKTYPE 34
#define MPI_ERR_ASSERT 35
#define MPI_ERR_RMA_CONFLICT 36
#define MPI_ERR_RMA_SYNC 37
#define MPI_ERR_FILE 38
#define MPI_ERR_NOT_SAME 39
#define MPI_ERR_AMODE 40
#define MPI_ERR_UNSUPPORTED_DATAREP 41
#define MPI_ERR_UNSUPPORTED_OPERATION 42
#define MPI_ERR_NO_SUCH_FILE 43
#define MPI_ERR_FILE_EXISTS 44
#define MPI_ERR_BAD_FILE 45
#define MPI_ERR_ACCESS 46
#define MPI_ERR_NO_SPACE 47
#define MPI_ERR_QUOTA 48
#define MPI_ERR_READ_ONLY 49
#define MPI_ERR_FILE_IN_USE 50
#define MPI_ERR_DUP_DATAREP 51
#define MPI_ERR_CONVERSION 52
#define MPI_ERR_IO 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_T_ERR_INVALID 58
#define MPI_ERR_LASTCODE 59

/* ---- one-sided communication (MPI 3.1 chapter 11) ---- */
#define MPI_WIN_NULL ((MPI_Win)0)
/* Window attribute keys (MPI_Win_get_attr). */
#define MPI_WIN_BASE 0x3fff0001
#define MPI_WIN_SIZE 0x3fff0002
#define MPI_WIN_DISP_UNIT 0x3fff0003
#define MPI_WIN_CREATE_FLAVOR 0x3fff0004
#define MPI_WIN_MODEL 0x3fff0005
/* Values of MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL. */
#define MPI_WIN_FLAVOR_CREATE 1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC 3
#define MPI_WIN_FLAVOR_SHARED 4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED 2
/* Assertions (Win_fence, Win_post, Win_start, Win_lock): bits. */
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOSTORE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOPRECEDE 8192
#define MPI_MODE_NOSUCCEED 16384
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED 235

/* ---- thread levels ---- */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* ---- functions ---- */
#define TM_MPI_FN(ret, name, args)                                                                 \
    ret MPI_##name args;                                                                           \
    ret PMPI_##name args;

TM_MPI_FN(int, Init, (int *argc, char ***argv))
TM_MPI_FN(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
TM_MPI_FN(int, Finalize, (void))
TM_MPI_FN(int, Initialized, (int *flag))
TM_MPI_FN(int, Finalized, (int *flag))
TM_MPI_FN(int, Query_thread, (int *provided))
TM_MPI_FN(int, Is_thread_main, (int *flag))
TM_MPI_FN(int, Abort, (MPI_Comm comm, int errorcode))
TM_MPI_FN(int, Get_processor_name, (char *name, int *resultlen))
TM_MPI_FN(int, Get_version, (int *version, int *subversion))
TM_MPI_FN(int, Get_library_version, (char *version, int *resultlen))
TM_MPI_FN(double, Wtime, (void))
TM_MPI_FN(double, Wtick, (void))

TM_MPI_FN(int, Comm_rank, (MPI_Comm comm, int *rank))
TM_MPI_FN(int, Comm_size, (MPI_Comm comm, int *size))
TM_MPI_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
TM_MPI_FN(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
TM_MPI_FN(int, Comm_free, (MPI_Comm * comm))
TM_MPI_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result))
TM_MPI_FN(int, Comm_split_type,
          (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm))
TM_MPI_FN(int, Comm_get_attr, (MPI_Comm comm, int keyval, void *value, int *flag))

TM_MPI_FN(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
TM_MPI_FN(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler))
TM_MPI_FN(int, Errhandler_free, (MPI_Errhandler * errhandler))
TM_MPI_FN(int, Error_string, (int errorcode, char *string, int *resultlen))
TM_MPI_FN(int, Error_class, (int errorcode, int *errorclass))

TM_MPI_FN(int, Type_size, (MPI_Datatype datatype, int *size))
TM_MPI_FN(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size))
TM_MPI_FN(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent))
TM_MPI_FN(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count))
TM_MPI_FN(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count))
TM_MPI_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype))
TM_MPI_FN(int, Type_commit, (MPI_Datatype * datatype))
TM_MPI_FN(int, Type_free, (MPI_Datatype * datatype))
TM_MPI_FN(int, Op_create, (MPI_User_function * user_fn, int commute, MPI_Op *op))
TM_MPI_FN(int, Op_free, (MPI_Op * op))
TM_MPI_FN(int, Op_commutative, (MPI_Op op, int *commute))

TM_MPI_FN(int, Send,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
TM_MPI_FN(int, Ssend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
TM_MPI_FN(int, Rsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
TM_MPI_FN(int, Bsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm))
TM_MPI_FN(int, Buffer_attach, (void *buffer, int size))
TM_MPI_FN(int, Buffer_detach, (void *buffer_addr, int *size))
TM_MPI_FN(int, Recv,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Status *status))
TM_MPI_FN(int, Isend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Issend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Irsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Ibsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Irecv,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Sendrecv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
           MPI_Comm comm, MPI_Status *status))
TM_MPI_FN(int, Sendrecv_replace,
          (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
           int recvtag, MPI_Comm comm, MPI_Status *status))
TM_MPI_FN(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
TM_MPI_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))

TM_MPI_FN(int, Wait, (MPI_Request * request, MPI_Status *status))
TM_MPI_FN(int, Test, (MPI_Request * request, int *flag, MPI_Status *status))
TM_MPI_FN(int, Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]))
TM_MPI_FN(int, Testall, (int count, MPI_Request requests[], int *flag, MPI_Status statuses[]))
TM_MPI_FN(int, Waitany, (int count, MPI_Request requests[], int *index, MPI_Status *status))
TM_MPI_FN(int, Testany,
          (int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status))
TM_MPI_FN(int, Waitsome,
          (int incount, MPI_Request requests[], int *outcount, int indices[],
           MPI_Status statuses[]))
TM_MPI_FN(int, Testsome,
          (int incount, MPI_Request requests[], int *outcount, int indices[],
           MPI_Status statuses[]))
TM_MPI_FN(int, Request_free, (MPI_Request * request))
TM_MPI_FN(int, Cancel, (MPI_Request * request))
TM_MPI_FN(int, Test_cancelled, (const MPI_Status *status, int *flag))

TM_MPI_FN(int, Barrier, (MPI_Comm comm))
TM_MPI_FN(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm))
TM_MPI_FN(int, Reduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm))
TM_MPI_FN(int, Allreduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm))
TM_MPI_FN(int, Gather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm))
TM_MPI_FN(int, Gatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm))
TM_MPI_FN(int, Scatter,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm))
TM_MPI_FN(int, Scatterv,
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
TM_MPI_FN(int, Allgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm))
TM_MPI_FN(int, Allgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm))
TM_MPI_FN(int, Alltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm))
TM_MPI_FN(int, Alltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm))
TM_MPI_FN(int, Alltoallw,
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
TM_MPI_FN(int, Reduce_scatter,
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm))
TM_MPI_FN(int, Reduce_scatter_block,
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm))
TM_MPI_FN(int, Scan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm))
TM_MPI_FN(int, Exscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm))
TM_MPI_FN(int, Reduce_local,
          (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op))

TM_MPI_FN(int, Ibarrier, (MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Ibcast,
          (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Ireduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Iallreduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Igather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Igatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Iscatter,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Iscatterv,
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Iallgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Iallgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Ialltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Ialltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Ialltoallw,
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
           MPI_Request *request))
TM_MPI_FN(int, Ireduce_scatter,
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Ireduce_scatter_block,
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Iscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request))
TM_MPI_FN(int, Iexscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request))

/* ---- one-sided communication ---- */
TM_MPI_FN(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
TM_MPI_FN(int, Free_mem, (void *base))
TM_MPI_FN(int, Win_create,
          (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win))
TM_MPI_FN(int, Win_allocate,
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
TM_MPI_FN(int, Win_allocate_shared,
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win))
TM_MPI_FN(int, Win_shared_query,
          (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr))
TM_MPI_FN(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
TM_MPI_FN(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
TM_MPI_FN(int, Win_detach, (MPI_Win win, const void *base))
TM_MPI_FN(int, Win_free, (MPI_Win * win))
TM_MPI_FN(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag))
TM_MPI_FN(int, Win_set_name, (MPI_Win win, const char *win_name))
TM_MPI_FN(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen))
TM_MPI_FN(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
TM_MPI_FN(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
TM_MPI_FN(int, Win_call_errhandler, (MPI_Win win, int errorcode))
TM_MPI_FN(int, Put,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
TM_MPI_FN(int, Get,
          (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win))
TM_MPI_FN(int, Accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win))
TM_MPI_FN(int, Get_accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win))
TM_MPI_FN(int, Fetch_and_op,
          (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
           MPI_Aint target_disp, MPI_Op op, MPI_Win win))
TM_MPI_FN(int, Compare_and_swap,
          (const void *origin_addr, const void *compare_addr, void *result_addr,
           MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win))
TM_MPI_FN(int, Rput,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           MPI_Request *request))
TM_MPI_FN(int, Rget,
          (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           MPI_Request *request))
TM_MPI_FN(int, Raccumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win, MPI_Request *request))
TM_MPI_FN(int, Rget_accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win, MPI_Request *request))
TM_MPI_FN(int, Win_fence, (int assert, MPI_Win win))
TM_MPI_FN(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
TM_MPI_FN(int, Win_unlock, (int rank, MPI_Win win))
TM_MPI_FN(int, Win_lock_all, (int assert, MPI_Win win))
TM_MPI_FN(int, Win_unlock_all, (MPI_Win win))
TM_MPI_FN(int, Win_flush, (int rank, MPI_Win win))
TM_MPI_FN(int, Win_flush_all, (MPI_Win win))
TM_MPI_FN(int, Win_flush_local, (int rank, MPI_Win win))
TM_MPI_FN(int, Win_flush_local_all, (MPI_Win win))
TM_MPI_FN(int, Win_sync, (MPI_Win win))

/* ---- TMPI extensions ---- */
/* Collective counters of the calling rank's job: how many operations of one kind the job has
 * performed (each collective call counts once, whatever the number of members) and how many
 * network messages they sent (0 while a job runs on one node).  kind: MPIX_COLL_*. */
enum {
    MPIX_COLL_BARRIER,
    MPIX_COLL_BCAST,
    MPIX_COLL_REDUCE,
    MPIX_COLL_ALLREDUCE,
    MPIX_COLL_GATHER,
    MPIX_COLL_GATHERV,
    MPIX_COLL_SCATTER,
    MPIX_COLL_SCATTERV,
    MPIX_COLL_ALLGATHER,
    MPIX_COLL_ALLGATHERV,
    MPIX_COLL_ALLTOALL,
    MPIX_COLL_ALLTOALLV,
    MPIX_COLL_ALLTOALLW,
    MPIX_COLL_REDUCE_SCATTER,
    MPIX_COLL_REDUCE_SCATTER_BLOCK,
    MPIX_COLL_SCAN,
    MPIX_COLL_EXSCAN,
    MPIX_COLL_KINDS
};
int MPIX_Coll_counters(int kind, MPI_Count *operations, MPI_Count *net_messages);

#undef TM_MPI_FN

#ifdef __cplusplus
}
#endif

#endif
