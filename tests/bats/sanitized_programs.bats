#!/usr/bin/env bats
# Programs built with a sanitizer (tmpicc -fsanitize=address / thread / undefined) run as they
# do under Open MPI: the agent starts their job host with the runtime the program needs first
# (agent/base/sanitizer_rt.h), the job's -x *SAN_OPTIONS reach that runtime, and a report that
# ends the process reaches the launcher whole (agent/host/host_stdio.c).

bats_require_minimum_version 1.5.0
load helpers
load sanitizer

teardown() { stop_all_agents; }

san_prog() { # NAME FLAGS... : builds tests/bats/sanitized/NAME.c into the test's directory
    local name=$1
    shift
    tmpicc "$@" -g -o "$BATS_TEST_TMPDIR/$name" "$TMPI_SRC/tests/bats/sanitized/$name.c"
}

@test "sanitized programs: -fsanitize=address runs, and a heap overflow's whole report reaches the launcher" {
    [ "$(build_sanitizer)" != thread ] || skip "a TSan build of TMPI cannot host the ASan runtime"
    san_prog overflow -fsanitize=address
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$BATS_TEST_TMPDIR/overflow"
    echo "$output"
    echo "stderr: $stderr"
    expect_status 0
    [[ "$output" == *"rank 0 done"* && "$output" == *"rank 1 done"* ]]
    for round in 1 2 3; do
        run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$BATS_TEST_TMPDIR/overflow" x
        echo "round $round stderr: $stderr"
        [ "$status" -ne 0 ]
        [[ "$stderr" == *"ERROR: AddressSanitizer: heap-buffer-overflow"* ]]
        # the runtime's last lines, written just before it ends the process
        [[ "$stderr" == *"SUMMARY: AddressSanitizer: heap-buffer-overflow"* ]]
        [[ "$stderr" == *"==ABORTING"* ]]
        [[ "$output" == *"rank 0 before"* && "$output" == *"rank 1 before"* ]]
        if [[ "$output" == *"not reached"* ]]; then false; fi
    done
}

@test "sanitized programs: the job's -x ASAN_OPTIONS reach the runtime of its process" {
    [ "$(build_sanitizer)" != thread ] || skip "a TSan build of TMPI cannot host the ASan runtime"
    san_prog overflow -fsanitize=address
    start_agent a
    cd "$BATS_TEST_TMPDIR"
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 \
        -x ASAN_OPTIONS=exitcode=42:log_path=asan-report ./overflow x
    echo "$output"
    echo "stderr: $stderr"
    [ "$status" -eq 42 ]
    grep -q "heap-buffer-overflow" asan-report.*
}

@test "sanitized programs: -fsanitize=thread runs, reports the program's own race in each rank and says what it cannot see" {
    [ -z "$(build_sanitizer)" ] || skip "a sanitizer build of TMPI hosts its own runtime"
    san_prog race -fsanitize=thread
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 -x TSAN_OPTIONS=exitcode=0 \
        "$BATS_TEST_TMPDIR/race"
    echo "$output"
    echo "stderr: $stderr"
    expect_status 0
    [[ "$output" == *"rank 0 sum 1"* && "$output" == *"rank 1 sum 1"* ]]
    [[ "$stderr" == *"WARNING: ThreadSanitizer: data race"* ]]
    [[ "$stderr" == *"bump"* || "$stderr" == *"race"* ]]
    [[ "$stderr" == *"libtmpi"*"is not built with ThreadSanitizer but the process runs it"* ]]
}

@test "sanitized programs: -fsanitize=undefined reports reach the launcher and the job goes on" {
    cat >"$BATS_TEST_TMPDIR/ub.c" <<'C'
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    volatile int x = INT_MAX;
    x += rank + 1;
    printf("rank %d went on\n", rank);
    MPI_Finalize();
    return 0;
}
C
    tmpicc -fsanitize=undefined -g -o "$BATS_TEST_TMPDIR/ub" "$BATS_TEST_TMPDIR/ub.c"
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$BATS_TEST_TMPDIR/ub"
    echo "$output"
    echo "stderr: $stderr"
    expect_status 0
    [[ "$output" == *"rank 0 went on"* && "$output" == *"rank 1 went on"* ]]
    [ "$(grep -c 'runtime error: signed integer overflow' <<<"$stderr")" -eq 2 ]
}
