/* mpi41.c — MPI 4.1 calls: the status field accessors, Request_get_status_any/all/some (which
 * leave requests as they are: a later Wait still completes them), Type_get_value_index, and
 * the hardware kinds of MPI_Comm_split_type with MPI_Get_hw_resource_info. */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"

/* The logical index of the rank's resource of kind name (MPI_Get_hw_resource_info), -1 when
 * the rank is not within one. */
static int hw_index(const char *name)
{
    MPI_Info hw;
    CHECK_MPI(MPI_Get_hw_resource_info(&hw));
    char v[64];
    int flag = 0;
    CHECK_MPI(MPI_Info_get_string(hw, name, &(int){sizeof v}, v, &flag));
    CHECK_MPI(MPI_Info_free(&hw));
    return flag ? atoi(v) : -1;
}

/* Every member of c is within one resource of kind name. */
static void same_resource(MPI_Comm c, const char *name)
{
    int mine = hw_index(name), lo, hi;
    CHECK(mine >= 0, "a member of the %s communicator is in no %s", name, name);
    CHECK_MPI(MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, c));
    CHECK_MPI(MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, c));
    CHECK(lo == hi, "the %s communicator spans %s %d to %d", name, name, lo, hi);
}

static MPI_Comm split_kind(int kind, const char *value)
{
    MPI_Info in = MPI_INFO_NULL;
    if (value) {
        CHECK_MPI(MPI_Info_create(&in));
        CHECK_MPI(MPI_Info_set(in, "mpi_hw_resource_type", value));
    }
    MPI_Comm c = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, kind, 0, in, &c));
    if (in != MPI_INFO_NULL) CHECK_MPI(MPI_Info_free(&in));
    return c;
}

/* HW_GUIDED / RESOURCE_GUIDED / HW_UNGUIDED, checked against the rank's own resources. */
static void hw_split(int rank, int size)
{
    int nshared, n;
    MPI_Comm node, c;
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    CHECK_MPI(MPI_Comm_size(node, &nshared));
    c = split_kind(MPI_COMM_TYPE_HW_GUIDED, "mpi_shared_memory");
    CHECK(c != MPI_COMM_NULL, "mpi_shared_memory gave MPI_COMM_NULL");
    CHECK_MPI(MPI_Comm_size(c, &n));
    CHECK(n == nshared, "mpi_shared_memory: %d members, the node has %d", n, nshared);
    MPI_Info used;
    char v[64];
    int flag = 0;
    CHECK_MPI(MPI_Comm_get_info(c, &used));
    CHECK_MPI(MPI_Info_get_string(used, "mpi_hw_resource_type", &(int){sizeof v}, v, &flag));
    CHECK(flag && !strcmp(v, "mpi_shared_memory"), "newcomm's info: %s", flag ? v : "no key");
    CHECK_MPI(MPI_Info_free(&used));
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Comm_free(&node));

    const char *kinds[] = {"Package", "NUMANode", "L3Cache", "L2Cache",
                           "Core",    "PU",       "socket",  "hwthread"};
    const char *alias[] = {"Package", "NUMANode", "L3Cache", "L2Cache",
                           "Core",    "PU",       "Package", "PU"};
    /* ranks on unpinned carriers (user-level switching) share their carrier's CPU, whichever
     * it is: a level finer than the carrier's CPUs groups them by carrier, with no index */
    /* (a rank thread's getpid is its thread id; a carried rank's the job host's) */
    int carried = getpid() != (pid_t)syscall(SYS_gettid);
    for (int k = 0; k < (int)(sizeof kinds / sizeof *kinds); k++)
        for (int g = 0; g < 2; g++) {
            c = split_kind(g ? MPI_COMM_TYPE_RESOURCE_GUIDED : MPI_COMM_TYPE_HW_GUIDED, kinds[k]);
            int in = hw_index(alias[k]) >= 0;
            CHECK(in == (c != MPI_COMM_NULL) || (carried && !in), "%s: in one %s %d, newcomm %s",
                  kinds[k], alias[k], in, c == MPI_COMM_NULL ? "null" : "made");
            if (c != MPI_COMM_NULL && !in) {
                CHECK_MPI(MPI_Comm_free(&c));
            } else if (c != MPI_COMM_NULL) {
                same_resource(c, alias[k]);
                CHECK_MPI(MPI_Comm_free(&c));
            }
        }

    /* not a level of any machine, no key, or not the same on every rank: MPI_COMM_NULL */
    c = split_kind(MPI_COMM_TYPE_HW_GUIDED, "no_such_level");
    CHECK(c == MPI_COMM_NULL, "an unknown level gave a communicator");
    c = split_kind(MPI_COMM_TYPE_HW_GUIDED, NULL);
    CHECK(c == MPI_COMM_NULL, "HW_GUIDED without mpi_hw_resource_type gave a communicator");
    if (size > 1) {
        c = split_kind(MPI_COMM_TYPE_HW_GUIDED, rank ? "mpi_shared_memory" : "Package");
        CHECK(c == MPI_COMM_NULL, "levels differing between ranks gave a communicator");
        /* a rank passing MPI_UNDEFINED joins the others' split and gets MPI_COMM_NULL */
        c = split_kind(rank == 1 ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_UNGUIDED, NULL);
        if (rank == 1) CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
        if (c != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(&c));
        c = split_kind(rank == 1 ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_GUIDED, "mpi_shared_memory");
        if (rank == 1) CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
        if (c != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(&c));
    }

    /* unguided: a strict subset, within one resource of the level it names; the level is
     * named in newcomm's info and in the info passed (what MPICH's users read) */
    MPI_Info given;
    CHECK_MPI(MPI_Info_create(&given));
    CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, given, &c));
    if (size == 1) CHECK(c == MPI_COMM_NULL, "one rank has no strict subset but got one");
    if (c != MPI_COMM_NULL) {
        CHECK_MPI(MPI_Comm_size(c, &n));
        CHECK(n < size, "unguided: %d members of %d", n, size);
        CHECK_MPI(MPI_Comm_get_info(c, &used));
        flag = 0;
        CHECK_MPI(MPI_Info_get_string(used, "mpi_hw_resource_type", &(int){sizeof v}, v, &flag));
        CHECK(flag, "unguided: newcomm's info has no mpi_hw_resource_type");
        CHECK_MPI(MPI_Info_free(&used));
        char g[64];
        int gflag = 0;
        CHECK_MPI(MPI_Info_get_string(given, "mpi_hw_resource_type", &(int){sizeof g}, g, &gflag));
        CHECK(gflag && !strcmp(g, v), "unguided: the info passed says %s, newcomm's %s",
              gflag ? g : "nothing", v);
        if (!carried) same_resource(c, v); /* a carrier has no index */
        CHECK_MPI(MPI_Comm_free(&c));
    }
    CHECK_MPI(MPI_Info_free(&given));

    /* On an inter-communicator whose groups share cores (the ranks of each core dealt to the
     * two groups in turn; none share one where each rank has a core of its own): the level
     * that splits both groups together, each local group's members of one resource paired
     * with the remote group's members of that resource; MPI_COMM_NULL where the other group
     * has none, or for MPI_UNDEFINED. */
    c = split_kind(MPI_COMM_TYPE_HW_GUIDED, "Core");
    int in_core = 0, core_size = 1, lead[2], first[2];
    if (c != MPI_COMM_NULL) {
        CHECK_MPI(MPI_Comm_rank(c, &in_core));
        CHECK_MPI(MPI_Comm_size(c, &core_size));
        CHECK_MPI(MPI_Comm_free(&c));
    }
    int g = in_core % 2;
    first[0] = g == 0 ? rank : size;
    first[1] = g == 1 ? rank : size;
    CHECK_MPI(MPI_Allreduce(first, lead, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (lead[1] < size) {
        MPI_Comm half, inter;
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, g, rank, &half));
        CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lead[1 - g], 9, &inter));
        for (int undef = 0; undef < 2; undef++) {
            int mykind = undef && rank == lead[1] ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_UNGUIDED;
            CHECK_MPI(MPI_Comm_split_type(inter, mykind, rank, MPI_INFO_NULL, &c));
            if (mykind == MPI_UNDEFINED) CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED gave one");
            /* a rank sharing its core with one of the other group has a partner */
            if (!undef && core_size > 1)
                CHECK(c != MPI_COMM_NULL, "inter unguided: rank %d has no communicator", rank);
            if (c == MPI_COMM_NULL) continue;
            int is_inter = 0, ln, rn, mn;
            CHECK_MPI(MPI_Comm_test_inter(c, &is_inter));
            CHECK(is_inter, "unguided on an inter-communicator gave an intra-communicator");
            CHECK_MPI(MPI_Comm_size(c, &ln));
            CHECK_MPI(MPI_Comm_remote_size(c, &rn));
            CHECK_MPI(MPI_Comm_get_info(c, &used));
            flag = 0;
            CHECK_MPI(
                MPI_Info_get_string(used, "mpi_hw_resource_type", &(int){sizeof v}, v, &flag));
            CHECK(flag, "inter unguided: newcomm's info has no mpi_hw_resource_type");
            CHECK_MPI(MPI_Info_free(&used));
            MPI_Comm both;
            CHECK_MPI(MPI_Intercomm_merge(c, g, &both));
            CHECK_MPI(MPI_Comm_size(both, &mn));
            CHECK(mn == ln + rn && mn < size, "inter unguided: %d + %d members of %d", ln, rn,
                  size);
            if (!carried) same_resource(both, v);
            CHECK_MPI(MPI_Comm_free(&both));
            CHECK_MPI(MPI_Comm_free(&c));
        }
        CHECK_MPI(MPI_Comm_free(&inter));
        CHECK_MPI(MPI_Comm_free(&half));
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int err = MPI_Comm_split_type(MPI_COMM_WORLD, 77, 0, MPI_INFO_NULL, &c);
    CHECK(err != MPI_SUCCESS, "split_type 77 was accepted");
    int cls;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_ARG, "split_type 77: class %d", cls);
    err = MPI_Get_hw_resource_info(NULL);
    CHECK(err != MPI_SUCCESS, "MPI_Get_hw_resource_info(NULL) was accepted");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* status fields */
    MPI_Status st;
    int v = -1;
    CHECK_MPI(MPI_Status_set_source(&st, 3));
    CHECK_MPI(MPI_Status_set_tag(&st, 44));
    CHECK_MPI(MPI_Status_set_error(&st, MPI_ERR_TAG));
    CHECK_MPI(MPI_Status_get_source(&st, &v));
    CHECK(v == 3 && st.MPI_SOURCE == 3, "source %d", v);
    CHECK_MPI(MPI_Status_get_tag(&st, &v));
    CHECK(v == 44, "tag %d", v);
    CHECK_MPI(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG, "error %d", v);

    /* Request_get_status_*: three receives, the middle one's message sent first */
    int in[3] = {-1, -1, -1}, out[3] = {rank, rank + 10, rank + 20};
    MPI_Request rq[4];
    for (int i = 0; i < 3; i++)
        CHECK_MPI(MPI_Irecv(&in[i], 1, MPI_INT, left, 100 + i, MPI_COMM_WORLD, &rq[i]));
    rq[3] = MPI_REQUEST_NULL;
    int idx = -2, flag = 0, outcount = -2, ind[4];
    CHECK_MPI(MPI_Request_get_status_any(4, rq, &idx, &flag, &st));
    CHECK(!flag && idx == MPI_UNDEFINED, "get_status_any before any send: flag %d", flag);
    CHECK_MPI(MPI_Request_get_status_all(4, rq, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "get_status_all before any send");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* every rank looked before any sends */
    CHECK_MPI(MPI_Send(&out[1], 1, MPI_INT, right, 101, MPI_COMM_WORLD));
    flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Request_get_status_any(4, rq, &idx, &flag, &st));
    CHECK(idx == 1 && st.MPI_TAG == 101 && st.MPI_SOURCE == left, "get_status_any: index %d", idx);
    CHECK(rq[1] != MPI_REQUEST_NULL, "get_status_any freed the request");
    MPI_Status sts[4];
    CHECK_MPI(MPI_Request_get_status_some(4, rq, &outcount, ind, sts));
    CHECK(outcount == 1 && ind[0] == 1 && sts[0].MPI_TAG == 101, "get_status_some: %d", outcount);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* every rank looked before the other two sends */
    CHECK_MPI(MPI_Send(&out[0], 1, MPI_INT, right, 100, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Send(&out[2], 1, MPI_INT, right, 102, MPI_COMM_WORLD));
    flag = 0;
    while (!flag)
        CHECK_MPI(MPI_Request_get_status_all(4, rq, &flag, sts));
    for (int i = 0; i < 3; i++)
        CHECK(sts[i].MPI_TAG == 100 + i, "get_status_all: status %d tag %d", i, sts[i].MPI_TAG);
    CHECK(sts[3].MPI_TAG == MPI_ANY_TAG && sts[3].MPI_SOURCE == MPI_ANY_SOURCE,
          "get_status_all: the null request's status is not empty");
    CHECK_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        CHECK(in[i] == left + 10 * i, "receive %d got %d", i, in[i]);
    /* all null: any says flag with index MPI_UNDEFINED, some says MPI_UNDEFINED */
    CHECK_MPI(MPI_Request_get_status_any(4, rq, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "get_status_any on null requests");
    CHECK_MPI(MPI_Request_get_status_some(4, rq, &outcount, ind, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "get_status_some on null requests: %d", outcount);

    /* Type_get_value_index */
    MPI_Datatype pt;
    CHECK_MPI(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pt));
    CHECK(pt == MPI_DOUBLE_INT, "double/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_INT, MPI_INT, &pt));
    CHECK(pt == MPI_2INT, "int/int");
    CHECK_MPI(MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &pt));
    CHECK(pt == MPI_DATATYPE_NULL, "char/int has no pair type");

    hw_split(rank, size);
    return finish_ok();
}
