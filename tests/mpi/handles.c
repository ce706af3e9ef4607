/* handles.c — C/Fortran handle and status conversion, address arithmetic, the predefined
 * attributes and attribute callbacks, and the constants mpi.h defines for later layers. */
#include <stdio.h>
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

static void conversions(int size)
{
    /* Handles survive c2f/f2c and still work. */
    MPI_Comm dup;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm back = MPI_Comm_f2c(MPI_Comm_c2f(dup));
    CHECK(back == dup, "Comm_f2c(Comm_c2f(%d)) = %d", dup, back);
    int n = -1;
    CHECK_MPI(MPI_Comm_size(back, &n));
    CHECK(n == size, "size through a converted handle: %d, expected %d", n, size);
    CHECK_MPI(MPI_Comm_free(&dup));
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "COMM_NULL round trip");

    CHECK_MPI(MPI_Type_size(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)), &n));
    CHECK(n == (int)sizeof(double), "MPI_DOUBLE through c2f/f2c: size %d", n);
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "Op round trip");
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "Group round trip");
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "Info round trip");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
          "Errhandler round trip");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "Win round trip");
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "File round trip");

    /* An invalid Fortran handle is an invalid C handle: the call using it says so. */
    EXPECT(MPI_Comm_size(MPI_Comm_f2c(12345), &n), MPI_ERR_COMM);
    EXPECT(MPI_Type_size(MPI_Type_f2c(-7), &n), MPI_ERR_TYPE);
    int v = 1, w = 0;
    EXPECT(MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_Op_f2c(999), MPI_COMM_WORLD), MPI_ERR_OP);

    /* Statuses: every field survives, including the hidden ones (count, cancelled). */
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double buf[5] = {1, 2, 3, 4, 5}, rbuf[5];
    MPI_Status st, st2;
    CHECK_MPI(MPI_Sendrecv(buf, 3, MPI_DOUBLE, rank, 7, rbuf, 5, MPI_DOUBLE, rank, 7,
                           MPI_COMM_WORLD, &st));
    MPI_Fint f[MPI_F_STATUS_SIZE];
    CHECK_MPI(MPI_Status_c2f(&st, f));
    CHECK(f[MPI_F_SOURCE] == rank && f[MPI_F_TAG] == 7, "Fortran status: source %d tag %d",
          (int)f[MPI_F_SOURCE], (int)f[MPI_F_TAG]);
    memset(&st2, 0xff, sizeof st2);
    CHECK_MPI(MPI_Status_f2c(f, &st2));
    int count = -1, cancelled = -1;
    CHECK_MPI(MPI_Get_count(&st2, MPI_DOUBLE, &count));
    CHECK_MPI(MPI_Test_cancelled(&st2, &cancelled));
    CHECK(st2.MPI_SOURCE == rank && st2.MPI_TAG == 7 && count == 3 && !cancelled,
          "status after c2f/f2c: source %d tag %d count %d cancelled %d", st2.MPI_SOURCE,
          st2.MPI_TAG, count, cancelled);
    MPI_F08_status f08;
    CHECK_MPI(MPI_Status_c2f08(&st, &f08));
    memset(&st2, 0, sizeof st2);
    CHECK_MPI(MPI_Status_f082c(&f08, &st2));
    CHECK_MPI(MPI_Get_count(&st2, MPI_DOUBLE, &count));
    CHECK(f08.MPI_TAG == 7 && st2.MPI_TAG == 7 && count == 3, "f08 status: tag %d count %d",
          (int)f08.MPI_TAG, count);
    EXPECT(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
    EXPECT(MPI_Status_c2f(&st, MPI_F_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &st2), MPI_ERR_ARG);
    EXPECT(MPI_Status_f2c(f, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT(MPI_Status_c2f08(&st, MPI_F08_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &st2), MPI_ERR_ARG);
    /* mpif.h and mpi_f08 statuses into each other (MPI 4.0 §19.3.5) */
    MPI_F08_status g08;
    MPI_Fint g[MPI_F_STATUS_SIZE];
    memset(&g08, 0, sizeof g08);
    CHECK_MPI(MPI_Status_f2f08(f, &g08));
    CHECK(!memcmp(&g08, &f08, sizeof f08), "f2f08 differs from c2f08");
    CHECK_MPI(MPI_Status_f082f(&g08, g));
    CHECK(!memcmp(g, f, sizeof f), "f082f does not give back the mpif.h status");
    EXPECT(MPI_Status_f2f08(MPI_F_STATUS_IGNORE, &g08), MPI_ERR_ARG);
    EXPECT(MPI_Status_f082f(&g08, MPI_F_STATUS_IGNORE), MPI_ERR_ARG);
}

/* Requests and messages are pointers: their Fortran handles come from a table, stay the same
 * while the object lives and die with it. */
static void pointer_handles(int rank, int size)
{
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL,
          "REQUEST_NULL round trip");
    int peer = (rank + 1) % size, from = (rank + size - 1) % size, x = rank, y = -1, z = -1;
    MPI_Request rq[2];
    CHECK_MPI(MPI_Irecv(&y, 1, MPI_INT, from, 3, MPI_COMM_WORLD, &rq[0]));
    CHECK_MPI(MPI_Irecv(&z, 1, MPI_INT, from, 4, MPI_COMM_WORLD, &rq[1]));
    MPI_Fint f0 = MPI_Request_c2f(rq[0]), f1 = MPI_Request_c2f(rq[1]);
    CHECK(f0 != f1 && f0 != MPI_Request_c2f(MPI_REQUEST_NULL), "request handles %d %d", (int)f0,
          (int)f1);
    CHECK(MPI_Request_c2f(rq[0]) == f0, "second c2f of one request: %d then %d", (int)f0,
          (int)MPI_Request_c2f(rq[0]));
    MPI_Request back[2] = {MPI_Request_f2c(f0), MPI_Request_f2c(f1)};
    CHECK(back[0] == rq[0] && back[1] == rq[1], "Request_f2c gives the requests back");
    CHECK_MPI(MPI_Send(&x, 1, MPI_INT, peer, 4, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Send(&x, 1, MPI_INT, peer, 3, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Waitall(2, back, MPI_STATUSES_IGNORE)); /* the converted handles work */
    CHECK(y == from && z == from && back[0] == MPI_REQUEST_NULL, "received %d %d from %d", y, z,
          from);
    CHECK(MPI_Request_f2c(f0) == MPI_REQUEST_NULL && MPI_Request_f2c(12345) == MPI_REQUEST_NULL,
          "handles of freed requests and unknown handles are MPI_REQUEST_NULL");

    /* Messages: NULL and NO_PROC keep their meaning, a real one converts back. */
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL &&
              MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC,
          "MESSAGE_NULL / MESSAGE_NO_PROC round trip");
    CHECK_MPI(MPI_Send(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
    MPI_Message m;
    CHECK_MPI(MPI_Mprobe(from, 5, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE));
    MPI_Fint fm = MPI_Message_c2f(m);
    CHECK(fm != MPI_Message_c2f(MPI_MESSAGE_NULL) && fm != MPI_Message_c2f(MPI_MESSAGE_NO_PROC) &&
              MPI_Message_c2f(m) == fm,
          "message handle %d", (int)fm);
    MPI_Message m2 = MPI_Message_f2c(fm);
    CHECK(m2 == m, "Message_f2c gives the message back");
    y = -1;
    CHECK_MPI(MPI_Mrecv(&y, 1, MPI_INT, &m2, MPI_STATUS_IGNORE));
    CHECK(y == from && m2 == MPI_MESSAGE_NULL, "Mrecv through a converted message: %d", y);
    CHECK(MPI_Message_f2c(fm) == MPI_MESSAGE_NULL, "a received message's handle is gone");
}

/* MPI_Type_create_f90_*: the predefined type of the kind, with the F90 combiner and (p, r). */
static void f90_types(void)
{
    struct {
        int comb, p, r, size;
    } cases[] = {
        {MPI_COMBINER_F90_INTEGER, 0, 2, 1},
        {MPI_COMBINER_F90_INTEGER, 0, 4, 2},
        {MPI_COMBINER_F90_INTEGER, 0, 9, 4},
        {MPI_COMBINER_F90_INTEGER, 0, 18, 8},
        {MPI_COMBINER_F90_REAL, 6, MPI_UNDEFINED, 4},
        {MPI_COMBINER_F90_REAL, MPI_UNDEFINED, 300, 8},
        {MPI_COMBINER_F90_REAL, 15, 307, 8},
        {MPI_COMBINER_F90_COMPLEX, 5, 30, 8},
        {MPI_COMBINER_F90_COMPLEX, 12, MPI_UNDEFINED, 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_Datatype t, t2;
        int c = cases[i].comb, p = cases[i].p, r = cases[i].r;
        if (c == MPI_COMBINER_F90_INTEGER) {
            CHECK_MPI(MPI_Type_create_f90_integer(r, &t));
            CHECK_MPI(MPI_Type_create_f90_integer(r, &t2));
        } else if (c == MPI_COMBINER_F90_REAL) {
            CHECK_MPI(MPI_Type_create_f90_real(p, r, &t));
            CHECK_MPI(MPI_Type_create_f90_real(p, r, &t2));
        } else {
            CHECK_MPI(MPI_Type_create_f90_complex(p, r, &t));
            CHECK_MPI(MPI_Type_create_f90_complex(p, r, &t2));
        }
        CHECK(t == t2, "case %zu: equal arguments give handles %d and %d", i, t, t2);
        int size = 0, ni, na, nd, comb, ints[2] = {-1, -1};
        CHECK_MPI(MPI_Type_size(t, &size));
        CHECK(size == cases[i].size, "case %zu: size %d, expected %d", i, size, cases[i].size);
        CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
        int want_ni = c == MPI_COMBINER_F90_INTEGER ? 1 : 2;
        CHECK(comb == c && ni == want_ni && na == 0 && nd == 0,
              "case %zu: envelope combiner %d ints %d addrs %d types %d", i, comb, ni, na, nd);
        CHECK_MPI(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
        CHECK(want_ni == 1 ? ints[0] == r : ints[0] == p && ints[1] == r,
              "case %zu: contents %d %d", i, ints[0], ints[1]);
        EXPECT(MPI_Type_free(&t), MPI_ERR_TYPE); /* predefined: erroneous to free */
    }
    /* Usable at once (committed), in communication and reductions. */
    MPI_Datatype r8;
    CHECK_MPI(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &r8));
    double v = 1.5, s = 0;
    CHECK_MPI(MPI_Allreduce(&v, &s, 1, r8, MPI_SUM, MPI_COMM_WORLD));
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(s == 1.5 * size, "Allreduce over an f90 real: %g", s);
    /* Kinds this machine does not have. */
    MPI_Datatype t;
    EXPECT(MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_f90_integer(MPI_UNDEFINED, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_f90_real(MPI_UNDEFINED, 5000, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_f90_complex(40, 10, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_f90_real(6, 30, NULL), MPI_ERR_ARG);
}

static void addresses(void)
{
    double a[4] = {0};
    MPI_Aint p0, p3;
    CHECK_MPI(MPI_Get_address(&a[0], &p0));
    CHECK_MPI(MPI_Get_address(&a[3], &p3));
    CHECK(MPI_Aint_diff(p3, p0) == 3 * (MPI_Aint)sizeof(double), "Aint_diff: %ld",
          (long)MPI_Aint_diff(p3, p0));
    CHECK(MPI_Aint_add(p0, 3 * (MPI_Aint)sizeof(double)) == p3, "Aint_add");
    CHECK((double *)MPI_Aint_add((MPI_Aint)MPI_BOTTOM, p3) == &a[3], "BOTTOM + address");
    EXPECT(MPI_Get_address(&a[0], NULL), MPI_ERR_ARG);
}

static void attributes(void)
{
    int *v = NULL, flag = 0;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && v && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, v ? *v : -1);
    int tag_ub = *v, x = 0;
    CHECK(MPI_TAG_UB != tag_ub, "MPI_TAG_UB is a key, not the bound");
    EXPECT(MPI_Send(&x, 1, MPI_INT, 0, tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && *v == MPI_PROC_NULL, "MPI_HOST: flag %d value %d", flag, *v);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && *v == MPI_ANY_SOURCE, "MPI_IO: flag %d value %d", flag, *v);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL: flag %d value %d", flag, *v);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &v, &flag), MPI_ERR_COMM);

    /* The predefined callbacks behave as MPI defines them. */
    int in = 42, *out = NULL;
    flag = -1;
    CHECK_MPI(MPI_COMM_DUP_FN(MPI_COMM_WORLD, 0, NULL, &in, &out, &flag));
    CHECK(flag == 1 && out == &in, "MPI_COMM_DUP_FN: flag %d", flag);
    CHECK_MPI(MPI_COMM_NULL_COPY_FN(MPI_COMM_WORLD, 0, NULL, &in, &out, &flag));
    CHECK(flag == 0, "MPI_COMM_NULL_COPY_FN: flag %d", flag);
    CHECK_MPI(MPI_COMM_NULL_DELETE_FN(MPI_COMM_WORLD, 0, &in, NULL));
    CHECK_MPI(MPI_TYPE_DUP_FN(MPI_INT, 0, NULL, &in, &out, &flag));
    CHECK_MPI(MPI_WIN_NULL_COPY_FN(MPI_WIN_NULL, 0, NULL, &in, &out, &flag));
    CHECK_MPI(MPI_DUP_FN(MPI_COMM_WORLD, 0, NULL, &in, &out, &flag));
    CHECK(flag == 1, "MPI_DUP_FN: flag %d", flag);
}

static void constants(void)
{
    CHECK(MPI_MESSAGE_NO_PROC != MPI_MESSAGE_NULL, "message handles");
    CHECK(MPI_UNWEIGHTED != MPI_WEIGHTS_EMPTY && MPI_UNWEIGHTED != NULL &&
              MPI_WEIGHTS_EMPTY != NULL,
          "weights");
    CHECK(MPI_LOCK_EXCLUSIVE != MPI_LOCK_SHARED, "lock types");
    CHECK(MPI_GROUP_EMPTY != MPI_GROUP_NULL && MPI_INFO_ENV != MPI_INFO_NULL, "handles");
    int n = 0;
    CHECK_MPI(MPI_Type_size(MPI_INTEGER, &n));
    CHECK(n == (int)sizeof(MPI_Fint), "MPI_INTEGER size %d", n);
    CHECK_MPI(MPI_Type_size(MPI_LONG_LONG_INT, &n));
    CHECK(n == (int)sizeof(long long), "MPI_LONG_LONG_INT size %d", n);
    int version, sub, len;
    CHECK_MPI(MPI_Get_version(&version, &sub));
    CHECK(version == MPI_VERSION && sub == MPI_SUBVERSION, "version %d.%d", version, sub);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    CHECK_MPI(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && (size_t)len == strlen(lib), "library version \"%s\" length %d", lib, len);
}

/* Many live communicators at once: the handle table grows in chunks (comm.h), and a handle
 * in every chunk must reach its own communicator, also after holes are freed and refilled. */
#define MANY_COMMS 300

static void many_handles(int size)
{
    static MPI_Comm c[MANY_COMMS];
    char name[MPI_MAX_OBJECT_NAME], want[MPI_MAX_OBJECT_NAME];
    for (int i = 0; i < MANY_COMMS; i++) {
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]));
        snprintf(want, sizeof want, "dup %d", i);
        CHECK_MPI(MPI_Comm_set_name(c[i], want));
    }
    for (int i = 0; i < MANY_COMMS; i += 2)
        CHECK_MPI(MPI_Comm_free(&c[i]));
    for (int i = 0; i < MANY_COMMS; i += 2) {
        CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &c[i]));
        snprintf(want, sizeof want, "split %d", i);
        CHECK_MPI(MPI_Comm_set_name(c[i], want));
    }
    for (int i = 0; i < MANY_COMMS; i++) {
        int len = 0, n = 0;
        CHECK_MPI(MPI_Comm_get_name(c[i], name, &len));
        snprintf(want, sizeof want, "%s %d", i % 2 ? "dup" : "split", i);
        CHECK(strcmp(name, want) == 0, "communicator %d (handle %d) is named '%s', expected '%s'",
              i, c[i], name, want);
        CHECK_MPI(MPI_Comm_size(c[i], &n));
        CHECK(n == size, "communicator %d: size %d, expected %d", i, n, size);
    }
    int v = 1, sum = 0;
    CHECK_MPI(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c[MANY_COMMS - 1]));
    CHECK(sum == size, "Allreduce on the last handle: %d, expected %d", sum, size);
    for (int i = MANY_COMMS - 1; i >= 0; i--)
        CHECK_MPI(MPI_Comm_free(&c[i]));
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS && MPI_Pcontrol(2, "any", 3) == MPI_SUCCESS,
          "MPI_Pcontrol");
    conversions(size);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    pointer_handles(rank, size);
    f90_types();
    addresses();
    attributes();
    constants();
    many_handles(size);
    return finish_ok();
}
