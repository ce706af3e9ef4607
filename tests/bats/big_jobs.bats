#!/usr/bin/env bats
# 16,384 ranks on one agent (issue 21, docs/ARCHITECTURE.md "How many ranks").  The default
# max_ranks takes such a job; where a kernel limit stops it the job fails at once with the
# limit's name and how to raise it.  The full run (minutes on a loaded 2-core machine) is
# opt-in: TMPI_TEST_BIG=1.

bats_require_minimum_version 1.5.0
load helpers

BIG=16384

setup_file() {
    export BIG_RING="$BATS_FILE_TMPDIR/big_ring"
    "$TMPI_BUILD/launcher/tmpicc" -o "$BIG_RING" "$TMPI_SRC/tests/bats/progs/big_ring.c"
}

teardown() { stop_all_agents; }

# Memory maps a 16,384-rank job on carriers needs against the limit: 3 per rank measured (the
# packed image; stacks whose guard pages cost no map merge, tests/bats/rank_maps.bats), 5 on
# kernels before 6.13 (no guard regions: guard page and stack), and some slack.
per_rank_maps() {
    local v
    v=$(uname -r)
    v=${v%%[!0-9.]*}
    local major=${v%%.*} minor=${v#*.}
    minor=${minor%%.*}
    ((major > 6 || (major == 6 && minor >= 13))) && echo 3 || echo 5
}
maps_suffice() { [ "$(cat /proc/sys/vm/max_map_count)" -ge $((BIG * $(per_rank_maps) + 1024)) ]; }

@test "big jobs: a 16384-rank job is not refused by the default max_ranks" {
    maps_suffice && [ "${TMPI_TEST_BIG:-0}" != 1 ] &&
        skip "vm.max_map_count allows the job: the full run is opt-in (TMPI_TEST_BIG=1)"
    start_agent big
    run launch --agent "$AGENT_SOCK" --timeout 300 -n $BIG "$BIG_RING"
    if maps_suffice; then
        [ "$status" -eq 0 ] || { echo "expected success, got $status: $output" >&2; false; }
    else
        # refused before loading thousands of images, naming the limit and its remedy
        [ "$status" -ne 0 ] || { echo "16384 ranks ran with too few maps?" >&2; false; }
        [[ "$output" != *"max_ranks"* ]] || { echo "refused by max_ranks: $output" >&2; false; }
        [[ "$output" == *"vm.max_map_count is"*"sysctl -w vm.max_map_count="* ]] ||
            { echo "expected the vm.max_map_count limit named, got: $output" >&2; false; }
    fi
}

# Several thousand ranks, as many as a loaded 2-core CI machine affords: each rank's copy of
# the program (image_copy.h: copies made without ld.so) keeps its globals to itself.  Under
# ThreadSanitizer 1024: its own shadow and per-thread state for 4096 rank threads does not fit
# (TSan's allocator fails with errno 12 and the job exits 66, no race involved); the normal and
# the ASan build keep the full size.
@test "big jobs: 4096 ranks (1024 under ThreadSanitizer) run and each rank's globals are private" {
    local n=4096
    [ "$(build_sanitizer)" != thread ] || n=1024
    [ "$(cat /proc/sys/vm/max_map_count)" -ge $((n * 8)) ] ||
        skip "vm.max_map_count < $((n * 8))"
    local p
    p=$(prog private_globals)
    start_agent big
    run launch --agent "$AGENT_SOCK" --timeout 600 -n $n "$p"
    [ "$status" -eq 0 ] || { echo "expected exit 0, got $status: $output" >&2; false; }
    [[ "$output" == *"private globals ok $n"* ]] ||
        { echo "expected 'private globals ok $n', got: $output" >&2; false; }
}

@test "big jobs: 16384 ranks run a ring and an Allreduce on user-switched carriers (TMPI_TEST_BIG=1)" {
    [ "${TMPI_TEST_BIG:-0}" = 1 ] || skip "opt-in: TMPI_TEST_BIG=1 (minutes under load)"
    maps_suffice || skip "vm.max_map_count < $((BIG * $(per_rank_maps) + 1024)): sysctl -w vm.max_map_count=262144"
    start_agent big
    local t0=$SECONDS
    run launch --agent "$AGENT_SOCK" --timeout 600 -x TMPI_RANK_SWITCHING=user -n $BIG "$BIG_RING"
    echo "16384 ranks: $((SECONDS - t0)) s" >&3
    [ "$status" -eq 0 ] || { echo "expected exit 0, got $status: $output" >&2; false; }
    [[ "$output" == *"big ring ok $BIG"* ]] || { echo "expected 'big ring ok $BIG', got: $output" >&2; false; }
}
