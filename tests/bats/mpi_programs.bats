#!/usr/bin/env bats
# MPI test programs (tests/mpi/*.c) built with tmpicc and run under tmpi-launch with 1, 2, 4
# and 16 ranks: each must exit 0 and print OK.

setup() {
    : "${TMPI_BUILD:?run through tests/check.sh}"
    : "${TMPI_SRC:?run through tests/check.sh}"
}

run_prog() {
    local prog=$1
    shift
    local exe="$BATS_TMPDIR/mpi_$prog"
    if [ ! -x "$exe" ] || [ "$TMPI_SRC/tests/mpi/$prog.c" -nt "$exe" ]; then
        "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$TMPI_SRC/tests/mpi/$prog.c"
    fi
    for n in "$@"; do
        run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n "$n" "$exe"
        if [ "$status" -ne 0 ] || [ "${lines[${#lines[@]}-1]}" != "OK" ]; then
            echo "$prog with $n ranks: status $status, output:"
            echo "$output"
            return 1
        fi
    done
}

@test "mpi: point-to-point order with wildcards" {
    run_prog p2p_order 1 2 4 16
}

@test "mpi: messages across the eager limit, Ssend, truncation" {
    run_prog p2p_large 1 2 4 16
}

@test "mpi: nonblocking requests, Probe, Cancel" {
    run_prog nonblocking 1 2 4 16
}

@test "mpi: Barrier, Bcast, Reduce, Allreduce, Comm_split" {
    run_prog collectives 1 2 4 16
}

@test "mpi: every rank has private globals" {
    run_prog globals 1 2 4 16
}

@test "mpi: invalid arguments return error classes" {
    run_prog errors 1 2 4 16
}

@test "mpi: a 16-rank token ring finishes" {
    run_prog ring 1 2 16
}

@test "mpi: an invalid rank with the default handler fails the job with a clear message" {
    local exe="$BATS_TMPDIR/mpi_fatal"
    printf '%s\n' '#include <mpi.h>' \
        'int main(int c, char **v) { MPI_Init(&c, &v); int x = 0;' \
        '  MPI_Send(&x, 1, MPI_INT, 99, 0, MPI_COMM_WORLD); MPI_Finalize(); return 0; }' \
        > "$BATS_TMPDIR/mpi_fatal.c"
    "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$BATS_TMPDIR/mpi_fatal.c"
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe"
    [ "$status" -ne 0 ]
    [[ "$output" == *"MPI_Send: invalid rank 99 (MPI_ERR_RANK)"* ]]
}
