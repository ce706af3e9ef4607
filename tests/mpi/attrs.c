/* attrs.c — keyvals and attributes on communicators: set/get/delete, copy callbacks on dup
 * (NULL_COPY, DUP_FN, a user one), delete callbacks on delete, free and MPI_Finalize (on
 * MPI_COMM_SELF before MPI_COMM_WORLD), freed keyvals, the deprecated MPI_Attr_* forms, the
 * predefined attributes of MPI_COMM_WORLD and the error classes of bad keyvals. */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

static int ncopies, ndeletes;
static int last_deleted = -1;

static int copy_plus_one(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)key;
    CHECK(extra == &ncopies, "extra_state %p, expected %p", extra, (void *)&ncopies);
    ncopies++;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)extra;
    ndeletes++;
    last_deleted = (int)(long)val;
    return MPI_SUCCESS;
}

static int failing_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)comm, (void)key, (void)val, (void)extra;
    return MPI_ERR_OTHER;
}

/* Finalize order: SELF's attribute must go before WORLD's. */
static int order[2], norder;
static int record_delete(MPI_Comm comm, int key, void *val, void *extra)
{
    (void)key, (void)val, (void)extra;
    if (norder < 2) order[norder] = comm;
    norder++;
    if (comm == MPI_COMM_WORLD && (norder != 2 || order[0] != MPI_COMM_SELF)) {
        fprintf(stderr, "FAILED: finalize deleted WORLD's attribute before SELF's\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size, flag;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* predefined attributes */
    int *v;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB: flag %d", flag);
    int send = 1, got = 0;
    CHECK_MPI(MPI_Sendrecv(&send, 1, MPI_INT, rank, *v, &got, 1, MPI_INT, rank, *v, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && (*v == MPI_PROC_NULL || (*v >= 0 && *v < size)), "MPI_HOST %d", *v);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && (*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || *v >= 0), "MPI_IO %d", *v);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL %d", *v);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(!flag || *v >= size, "MPI_UNIVERSE_SIZE %d", *v);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(!flag || *v >= 0, "MPI_APPNUM %d", *v);
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", *v);
    int before = *v, cls;
    CHECK_MPI(MPI_Add_error_class(&cls));
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(*v == cls && cls > before, "LASTUSEDCODE %d after adding class %d", *v, cls);

    /* set / get / delete, copy on dup */
    int kcopy, knull, kdup;
    CHECK_MPI(MPI_Comm_create_keyval(copy_plus_one, count_delete, &kcopy, &ncopies));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL));
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kdup, NULL));
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_attr(c, kcopy, (void *)100L));
    CHECK_MPI(MPI_Comm_set_attr(c, knull, (void *)200L));
    CHECK_MPI(MPI_Comm_set_attr(c, kdup, (void *)300L));
    void *val;
    CHECK_MPI(MPI_Comm_get_attr(c, kcopy, &val, &flag));
    CHECK(flag && val == (void *)100L, "get kcopy: flag %d val %p", flag, val);
    /* setting again deletes the old value first */
    CHECK_MPI(MPI_Comm_set_attr(c, kcopy, (void *)101L));
    CHECK(ndeletes == 1 && last_deleted == 100, "replace: %d deletes, last %d", ndeletes,
          last_deleted);
    MPI_Comm d;
    CHECK_MPI(MPI_Comm_dup(c, &d));
    CHECK(ncopies == 1, "copy callback ran %d times", ncopies);
    CHECK_MPI(MPI_Comm_get_attr(d, kcopy, &val, &flag));
    CHECK(flag && val == (void *)102L, "dup's kcopy: flag %d val %p", flag, val);
    CHECK_MPI(MPI_Comm_get_attr(d, knull, &val, &flag));
    CHECK(!flag, "NULL_COPY attribute was copied");
    CHECK_MPI(MPI_Comm_get_attr(d, kdup, &val, &flag));
    CHECK(flag && val == (void *)300L, "DUP_FN attribute: flag %d val %p", flag, val);
    /* delete on Comm_delete_attr and on Comm_free */
    CHECK_MPI(MPI_Comm_delete_attr(d, kdup));
    CHECK(ndeletes == 2 && last_deleted == 300, "delete_attr: %d deletes", ndeletes);
    CHECK_MPI(MPI_Comm_get_attr(d, kdup, &val, &flag));
    CHECK(!flag, "deleted attribute still there");
    CHECK_MPI(MPI_Comm_free(&d));
    CHECK(ndeletes == 3 && last_deleted == 102, "free of the dup: %d deletes, last %d", ndeletes,
          last_deleted);
    /* a freed keyval stays usable by the attributes that hold it */
    CHECK_MPI(MPI_Comm_free_keyval(&kcopy));
    CHECK(kcopy == MPI_KEYVAL_INVALID, "freed keyval is %d", kcopy);
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK(ndeletes == 5, "free of c: %d deletes", ndeletes);

    /* a failing delete callback fails the free (the communicator stays) */
    int kfail;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &kfail, NULL));
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_attr(c, kfail, NULL));
    EXPECT(MPI_Comm_delete_attr(c, kfail), MPI_ERR_OTHER);
    CHECK_MPI(MPI_Comm_free_keyval(&kfail));

    /* deprecated forms */
    int kold;
    CHECK_MPI(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kold, NULL));
    CHECK_MPI(MPI_Attr_put(MPI_COMM_WORLD, kold, (void *)7L));
    CHECK_MPI(MPI_Attr_get(MPI_COMM_WORLD, kold, &val, &flag));
    CHECK(flag && val == (void *)7L, "Attr_get: flag %d", flag);
    CHECK_MPI(MPI_Attr_delete(MPI_COMM_WORLD, kold));
    CHECK_MPI(MPI_Keyval_free(&kold));

    /* bad keyvals */
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, 999999, NULL), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_get_attr(MPI_COMM_WORLD, kcopy, &val, &flag), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_free_keyval(&kcopy), MPI_ERR_KEYVAL);
    int tkey;
    CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL));
    EXPECT(MPI_Comm_set_attr(MPI_COMM_WORLD, tkey, NULL), MPI_ERR_KEYVAL);
    EXPECT(MPI_Comm_free_keyval(&tkey), MPI_ERR_KEYVAL);
    CHECK_MPI(MPI_Type_free_keyval(&tkey));
    EXPECT(MPI_Comm_set_attr(MPI_COMM_NULL, knull, NULL), MPI_ERR_COMM);
    CHECK_MPI(MPI_Comm_free_keyval(&knull));
    CHECK_MPI(MPI_Comm_free_keyval(&kdup));

    /* finalize deletes SELF's attributes, then WORLD's */
    int kfin;
    CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &kfin, NULL));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, kfin, NULL));
    CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, kfin, NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("OK\n");
    fflush(stdout);
    CHECK_MPI(MPI_Finalize());
    if (norder != 2) {
        fprintf(stderr, "FAILED: finalize ran %d delete callbacks, expected 2\n", norder);
        return 1;
    }
    return 0;
}
