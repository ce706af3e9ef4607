#!/usr/bin/env bats
# tmpicc links with undefined symbols refused: a call to a function no library defines (here
# an MPI function mpi.h declares but libtmpi does not implement) fails at link time with the
# linker naming it, while a program using libc, libm and pthreads still links and runs.

load helpers

# A function that mpi.h declares and libtmpi does not export; picked at run time from the
# build, so the test keeps working as functions get implemented.
unimplemented_fn() {
    local so="$TMPI_BUILD/libclient/libtmpi.so" f
    for f in MPI_File_iread_shared MPI_Comm_spawn_multiple MPI_T_pvar_readreset MPI_Win_create; do
        if ! nm -D --defined-only "$so" | grep -qw "$f"; then
            echo "$f"
            return 0
        fi
    done
    return 1
}

@test "tmpicc: a call to a declared but unimplemented MPI function fails at link, named" {
    local fn
    fn=$(unimplemented_fn) || skip "every candidate is implemented: pick another"
    # The file ends in .c: a non-C argument list would hide the point of the test.
    cat >"$BATS_TEST_TMPDIR/missing.c" <<C
#include <mpi.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    void *f = (void *)&$fn;
    MPI_Finalize();
    return f == 0;
}
C
    run tmpicc -o "$BATS_TEST_TMPDIR/missing" "$BATS_TEST_TMPDIR/missing.c"
    if [ "$status" -eq 0 ]; then
        echo "expected the link to fail on $fn; it succeeded" >&2
        return 1
    fi
    if [[ "$output" != *"undefined reference to \`$fn'"* ]]; then
        echo "expected the linker to name $fn; output:" >&2
        echo "$output" >&2
        return 1
    fi
    [ ! -e "$BATS_TEST_TMPDIR/missing" ]
}

@test "tmpicc: a call to a function no library defines fails at link" {
    cat >"$BATS_TEST_TMPDIR/nofn.c" <<'C'
#include <mpi.h>
void tmpi_test_no_such_function(void);
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tmpi_test_no_such_function();
    return MPI_Finalize();
}
C
    run tmpicc -o "$BATS_TEST_TMPDIR/nofn" "$BATS_TEST_TMPDIR/nofn.c"
    [ "$status" -ne 0 ]
    [[ "$output" == *tmpi_test_no_such_function* ]]
}

@test "tmpicc: a program using libc, libm, pthreads and dlopen still links and runs" {
    cat >"$BATS_TEST_TMPDIR/normal.c" <<'C'
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *work(void *arg)
{
    double *x = arg;
    *x = sqrt(*x) + exp(0.0) + pow(2.0, 3.0) + floor(1.5);
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double x = 16.0;
    pthread_t t;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    if (pthread_create(&t, NULL, work, &x) != 0) return 1;
    pthread_join(t, NULL);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char *s = strdup("ok");
    void *h = dlopen(NULL, RTLD_NOW);
    if (h) dlclose(h);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("x=%g %s\n", x, s);
    free(s);
    MPI_Finalize();
    if (rank == 0) printf("OK\n");
    return 0;
}
C
    run tmpicc -o "$BATS_TEST_TMPDIR/normal" "$BATS_TEST_TMPDIR/normal.c"
    expect_status 0
    run timeout 60 "$LAUNCH_BIN" -n 2 "$BATS_TEST_TMPDIR/normal"
    expect_status 0
    expect_line "x=14 ok"
    expect_line "OK"
}
