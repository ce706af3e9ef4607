#!/usr/bin/env bats
# The Fortran runtime's process state is each rank's own (issue 34): libgfortran is copied per
# rank like the program (TMPI_PRIVATE_LIBS_DEFAULT, image_private.h), so COMMON blocks, module
# variables and SAVE'd locals, I/O units, unit 6 (the rank's stdout, in order), unit 5 (rank
# 0's stdin), the command line and environment, RANDOM_SEED, STOP and ERROR STOP behave as in
# a process of their own.  The programs (tests/bats/fortran/) call no MPI: gfortran through
# tmpicc builds them, with or without the Fortran bindings.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    command -v gfortran >/dev/null || skip "no gfortran"
    local d="$BATS_FILE_TMPDIR" src="$TMPI_SRC/tests/bats/fortran"
    TMPI_CC=gfortran "$TMPI_BUILD/launcher/tmpicc" -J "$d" -o "$d/rank_state" "$src/rank_state.f90"
    TMPI_CC=gfortran "$TMPI_BUILD/launcher/tmpicc" -o "$d/stop_code" "$src/stop_code.f90"
    TMPI_CC=gfortran "$TMPI_BUILD/launcher/tmpicc" -fopenmp -o "$d/omp_sum" "$src/omp_sum.f90"
    TMPI_CC=gfortran "$TMPI_BUILD/launcher/tmpicc" -o "$d/app_args" "$src/app_args.f90"
    TMPI_CC=gfortran "$TMPI_BUILD/launcher/tmpicc" -o "$d/maps_name" "$src/maps_name.f90"
}

# rank_state on N ranks (the launch's options before): every rank OK, unit 6's lines in order.
run_rank_state() {
    local n=$1
    shift
    cd "$BATS_TEST_TMPDIR"
    run timeout 120 "$LAUNCH_BIN" "$@" -n "$n" "$BATS_FILE_TMPDIR/rank_state" first 'second arg' \
        <<<'input line'
    expect_status 0
    local r
    for ((r = 0; r < n; r++)); do
        expect_line "rank $r: OK"
        # rank r's 200 numbered lines, each once, in order
        grep -x "line [0-9]* of rank $r" <<<"$output" | awk -v r="$r" \
            '{ if ($2 != NR) { print "rank " r ": line " NR " is " $0; exit 1 } }
             END { if (NR != 200) { print "rank " r ": " NR " lines"; exit 1 } }'
    done
    [[ "$output" != *FAIL* ]]
}

@test "fortran runtime: units, unit 5 and 6, argv, environment, RANDOM_SEED, COMMON, module and SAVE variables are the rank's" {
    need_agent
    run_rank_state 4
}

@test "fortran runtime: the rank's state on carriers (user-level switching)" {
    need_agent
    run_rank_state 5 -x TMPI_RANK_SWITCHING=user
}

@test "fortran runtime: STOP n ends the rank and the job with status n" {
    need_agent
    run timeout 60 "$LAUNCH_BIN" -n 3 "$BATS_FILE_TMPDIR/stop_code" 1 stop 3
    expect_status 3
    [[ "$output" != *"after stop on rank 1"* ]]
    [[ "$output" == *"rank 1 exited with code 3"* ]]
    # a plain STOP is status 0
    run timeout 60 "$LAUNCH_BIN" -n 2 "$BATS_FILE_TMPDIR/stop_code" 1 plain 0
    expect_status 0
    [[ "$output" != *"after stop on rank 1"* ]]
}

@test "fortran runtime: ERROR STOP n fails the job with status n, on carriers too" {
    need_agent
    run timeout 60 "$LAUNCH_BIN" -n 3 -x TMPI_RANK_SWITCHING=user "$BATS_FILE_TMPDIR/stop_code" 2 error 5
    expect_status 5
    [[ "$output" == *"ERROR STOP 5"* ]]
    [[ "$output" == *"rank 2 exited with code 5"* ]]
    [[ "$output" != *"after stop on rank 2"* ]]
}

@test "fortran runtime: OpenMP (-fopenmp) threads in every rank, on carriers too" {
    need_agent
    local sw
    for sw in kernel user; do
        run timeout 60 "$LAUNCH_BIN" -n 3 -x OMP_NUM_THREADS=3 -x TMPI_RANK_SWITCHING=$sw \
            "$BATS_FILE_TMPDIR/omp_sum"
        expect_status 0
        expect_line "rank 0: OK"
        expect_line "rank 1: OK"
        expect_line "rank 2: OK"
    done
}

# The second program of a job loads after the first one's libgfortran master: it borrows that
# master (image_private.h), else its copies would call into the never-initialised one (unit 6
# unconnected: "End of record"; the command line of whichever rank set it last).
@test "fortran runtime: each program of an MPMD job has its own initialised runtime and command line" {
    need_agent
    local exe="$BATS_FILE_TMPDIR/app_args"
    run timeout 60 "$LAUNCH_BIN" -n 2 "$exe" one : -n 2 "$exe" two three : -n 1 "$exe"
    expect_status 0
    [ "$(grep -cx 'args 1 arg 1 one' <<<"$output")" -eq 2 ] || { echo "$output"; return 1; }
    [ "$(grep -cx 'args 2 arg 1 two' <<<"$output")" -eq 2 ] || { echo "$output"; return 1; }
    [ "$(grep -cx 'args 2 arg 2 three' <<<"$output")" -eq 2 ] || { echo "$output"; return 1; }
    [[ "$output" != *"runtime error"* ]]
}

# The copy's memfd is named after the library (...-lib0-libgfortran.so.5): TSan reports name
# it, which tests/tsan.supp relies on, and so do perf and /proc/PID/maps.
@test "fortran runtime: a rank's private libgfortran is mapped under the library's name" {
    cd "$BATS_TEST_TMPDIR"
    run timeout 60 "$LAUNCH_BIN" -n 2 "$BATS_FILE_TMPDIR/maps_name"
    expect_status 0
    [ "$(grep -c '^named copy mapped: T$' <<<"$output")" -eq 2 ] || { echo "$output"; false; }
}
