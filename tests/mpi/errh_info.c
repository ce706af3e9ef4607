/* errh_info.c — error handlers (user handlers of communicators, called with the communicator
 * and the code; Comm_call_errhandler; inheritance on dup; Errhandler_free while in use; file
 * and window handler kinds), added error classes, codes and strings, Error_string and
 * Error_class of every class, and info objects (order, limits, MPI_INFO_ENV, Comm_set_info). */
#include <string.h>

#include "check.h"

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        CHECK(e_ == (cls), "%s: expected %s, got %d", #call, #cls, e_);                            \
    } while (0)

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_code = *code;
    last_comm = *comm;
}

static void file_handler(MPI_File *f, int *code, ...)
{
    (void)f;
    calls += 100;
    last_code = *code;
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* the default is ERRORS_ARE_FATAL */
    MPI_Errhandler eh;
    CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler %d", eh);
    CHECK_MPI(MPI_Errhandler_free(&eh));

    /* a user handler gets the communicator and the code; the call returns the code */
    MPI_Errhandler mine;
    CHECK_MPI(MPI_Comm_create_errhandler(handler, &mine));
    MPI_Comm c;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_MPI(MPI_Comm_set_errhandler(c, mine));
    int v = 0;
    int e = MPI_Send(&v, 1, MPI_INT, size, 0, c);
    CHECK(e == MPI_ERR_RANK && calls == 1 && last_code == MPI_ERR_RANK && last_comm == c,
          "user handler: returned %d, %d calls, code %d, comm %d (expected %d)", e, calls,
          last_code, last_comm, c);
    CHECK_MPI(MPI_Comm_call_errhandler(c, MPI_ERR_TAG));
    CHECK(calls == 2 && last_code == MPI_ERR_TAG, "call_errhandler: %d calls, code %d", calls,
          last_code);
    /* a dup inherits it; freeing the handle keeps it alive for the communicators using it */
    MPI_Comm d;
    CHECK_MPI(MPI_Comm_dup(c, &d));
    CHECK_MPI(MPI_Errhandler_free(&mine));
    CHECK(mine == MPI_ERRHANDLER_NULL, "freed handler handle %d", mine);
    CHECK_MPI(MPI_Comm_get_errhandler(d, &eh));
    CHECK_MPI(MPI_Comm_call_errhandler(d, MPI_ERR_COUNT));
    CHECK(calls == 3 && last_code == MPI_ERR_COUNT && last_comm == d, "dup's handler: %d calls",
          calls);
    CHECK_MPI(MPI_Errhandler_free(&eh));
    CHECK_MPI(MPI_Comm_free(&d));
    CHECK_MPI(MPI_Comm_free(&c));

    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* kinds must match */
    MPI_Errhandler fh, wh;
    CHECK_MPI(MPI_File_create_errhandler(file_handler, &fh));
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, fh), MPI_ERR_ERRHANDLER);
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, fh));
    CHECK_MPI(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO));
    CHECK(calls == 103 && last_code == MPI_ERR_IO, "file handler: %d calls", calls);
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    CHECK_MPI(MPI_Errhandler_free(&fh));
    CHECK_MPI(MPI_Win_create_errhandler((MPI_Win_errhandler_function *)file_handler, &wh));
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, wh), MPI_ERR_ERRHANDLER);
    CHECK_MPI(MPI_Errhandler_free(&wh));
    EXPECT(MPI_Comm_set_errhandler(MPI_COMM_WORLD, 4242), MPI_ERR_ERRHANDLER);
    MPI_Errhandler bogus = 4242;
    EXPECT(MPI_Errhandler_free(&bogus), MPI_ERR_ERRHANDLER);

    /* every predefined class has a string and is its own class */
    char s[MPI_MAX_ERROR_STRING];
    int len, cls;
    for (int k = 0; k < MPI_ERR_LASTCODE; k++) {
        CHECK_MPI(MPI_Error_string(k, s, &len));
        CHECK(len > 0 && (int)strlen(s) == len, "class %d: string \"%s\" len %d", k, s, len);
        CHECK_MPI(MPI_Error_class(k, &cls));
        CHECK(cls == k, "class of %d is %d", k, cls);
    }
    EXPECT(MPI_Error_class(-5, &cls), MPI_ERR_ARG);
    EXPECT(MPI_Error_string(1 << 20, s, &len), MPI_ERR_ARG);

    /* added classes, codes and strings */
    int myclass, code1, code2;
    CHECK_MPI(MPI_Add_error_class(&myclass));
    CHECK(myclass >= MPI_ERR_LASTCODE, "new class %d", myclass);
    CHECK_MPI(MPI_Add_error_code(myclass, &code1));
    CHECK_MPI(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    CHECK(code1 != code2 && code1 > myclass, "codes %d %d", code1, code2);
    CHECK_MPI(MPI_Error_class(code1, &cls));
    CHECK(cls == myclass, "class of code1 %d", cls);
    CHECK_MPI(MPI_Error_class(code2, &cls));
    CHECK(cls == MPI_ERR_ARG, "class of code2 %d", cls);
    CHECK_MPI(MPI_Add_error_string(code1, "my own error"));
    CHECK_MPI(MPI_Error_string(code1, s, &len));
    CHECK(!strcmp(s, "my own error") && len == 12, "code1 string \"%s\"", s);
    CHECK_MPI(MPI_Error_string(myclass, s, &len));
    CHECK(len == 0, "class without string: \"%s\"", s);
    EXPECT(MPI_Add_error_string(MPI_ERR_ARG, "no"), MPI_ERR_ARG);
    EXPECT(MPI_Add_error_code(code1 + 1000, &code2), MPI_ERR_ARG);
    int *last, flag;
    CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= code1, "LASTUSEDCODE %d < %d", *last, code1);
    /* a user handler gets an added code */
    CHECK_MPI(MPI_Comm_create_errhandler(handler, &mine));
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, mine));
    CHECK_MPI(MPI_Comm_call_errhandler(MPI_COMM_SELF, code1));
    CHECK(last_code == code1 && last_comm == MPI_COMM_SELF, "added code to handler: %d", last_code);
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    CHECK_MPI(MPI_Errhandler_free(&mine));

    /* info: order kept, values replaced in place, limits */
    MPI_Info in, dup;
    CHECK_MPI(MPI_Info_create(&in));
    CHECK_MPI(MPI_Info_set(in, "zeta", "1"));
    CHECK_MPI(MPI_Info_set(in, "alpha", "two"));
    CHECK_MPI(MPI_Info_set(in, "mid", "3"));
    CHECK_MPI(MPI_Info_set(in, "zeta", "one"));
    int n;
    CHECK_MPI(MPI_Info_get_nkeys(in, &n));
    CHECK(n == 3, "nkeys %d", n);
    const char *order[3] = {"zeta", "alpha", "mid"};
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    for (int i = 0; i < 3; i++) {
        CHECK_MPI(MPI_Info_get_nthkey(in, i, key));
        CHECK(!strcmp(key, order[i]), "key %d is %s, expected %s", i, key, order[i]);
    }
    CHECK_MPI(MPI_Info_get(in, "zeta", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && !strcmp(val, "one"), "zeta = %s", val);
    CHECK_MPI(MPI_Info_get(in, "alpha", 1, val, &flag));
    CHECK(flag && !strcmp(val, "t"), "truncated get: %s", val);
    CHECK_MPI(MPI_Info_get_valuelen(in, "alpha", &len, &flag));
    CHECK(flag && len == 3, "valuelen %d", len);
    CHECK_MPI(MPI_Info_get(in, "nothere", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(!flag, "missing key found");
    int buflen = 2;
    CHECK_MPI(MPI_Info_get_string(in, "alpha", &buflen, val, &flag));
    CHECK(flag && buflen == 4 && !strcmp(val, "t"), "get_string: buflen %d val %s", buflen, val);
    CHECK_MPI(MPI_Info_dup(in, &dup));
    CHECK_MPI(MPI_Info_delete(in, "alpha"));
    CHECK_MPI(MPI_Info_get_nkeys(in, &n));
    CHECK(n == 2, "nkeys after delete %d", n);
    CHECK_MPI(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 3, "dup nkeys %d", n);
    EXPECT(MPI_Info_delete(in, "alpha"), MPI_ERR_INFO_NOKEY);
    char longkey[MPI_MAX_INFO_KEY + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    EXPECT(MPI_Info_set(in, longkey, "v"), MPI_ERR_INFO_KEY);
    EXPECT(MPI_Info_get(in, longkey, 10, val, &flag), MPI_ERR_INFO_KEY);
    static char longval[MPI_MAX_INFO_VAL + 2];
    memset(longval, 'v', sizeof longval - 1);
    EXPECT(MPI_Info_set(in, "k", longval), MPI_ERR_INFO_VALUE);
    longkey[MPI_MAX_INFO_KEY] = 0; /* exactly the limit is fine */
    CHECK_MPI(MPI_Info_set(in, longkey, "v"));
    EXPECT(MPI_Info_get_nthkey(in, 3, key), MPI_ERR_ARG);
    EXPECT(MPI_Info_set(MPI_INFO_NULL, "a", "b"), MPI_ERR_INFO);

    /* hints on a communicator come back from Comm_get_info; dup_with_info replaces them */
    CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, dup, &c));
    MPI_Info used;
    CHECK_MPI(MPI_Comm_get_info(c, &used));
    CHECK_MPI(MPI_Info_get(used, "mid", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && !strcmp(val, "3"), "hint mid: flag %d", flag);
    CHECK_MPI(MPI_Info_free(&used));
    CHECK_MPI(MPI_Comm_set_info(c, in));
    CHECK_MPI(MPI_Comm_dup(c, &d));
    CHECK_MPI(MPI_Comm_get_info(d, &used));
    CHECK_MPI(MPI_Info_get_nkeys(used, &n));
    CHECK(n == 3, "dup's hints: %d keys", n);
    CHECK_MPI(MPI_Info_free(&used));
    MPI_Request req;
    MPI_Comm i2;
    CHECK_MPI(MPI_Comm_idup(d, &i2, &req));
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int sum = 0;
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, i2));
    CHECK(sum == size * (size - 1) / 2, "sum over idup'd comm %d", sum);
    CHECK_MPI(MPI_Comm_free(&i2));
    CHECK_MPI(MPI_Comm_free(&d));
    CHECK_MPI(MPI_Comm_free(&c));
    CHECK_MPI(MPI_Info_free(&in));
    CHECK_MPI(MPI_Info_free(&dup));
    CHECK(in == MPI_INFO_NULL, "freed info handle %d", in);
    EXPECT(MPI_Info_free(&dup), MPI_ERR_INFO);

    /* MPI_INFO_ENV */
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && atoi(val) == size, "INFO_ENV maxprocs %s", flag ? val : "(none)");
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && !strcmp(val, argv[0]), "INFO_ENV command %s, expected %s", flag ? val : "(none)",
          argv[0]);
    CHECK_MPI(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL, val, &flag));
    CHECK(flag && !strncmp(val, "MPI_THREAD_", 11), "INFO_ENV thread_level %s", val);
    EXPECT(MPI_Info_set(MPI_INFO_ENV, "a", "b"), MPI_ERR_INFO);
    return finish_ok();
}
