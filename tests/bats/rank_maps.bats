#!/usr/bin/env bats
# The job host's memory maps per rank (issue 37): vm.max_map_count (65,530 by default) must
# hold 16,384 ranks' images and stacks.  A copied image is packed into three maps
# (agent/host/image_pack.h) and a carried rank's stack guard costs none (stack_guard.h), so
# the carriers' stacks merge; the guard still stops an overflow.

bats_require_minimum_version 1.5.0
load helpers

teardown() { stop_all_agents; }

# Maps of the job host while a job of $1 sleeper ranks waits on user-switched carriers.
host_maps() {
    local n=$1 out="$BATS_TEST_TMPDIR/out.$1" i host=""
    # the launcher itself in the background, not the launch function's subshell: a kill of
    # that subshell left the launcher and its job running on, so the job host of one call was
    # still there at the next (which then counted that host's maps, not its own)
    "$TMPI_BUILD/launcher/tmpi-launch" --agent "$AGENT_SOCK" --timeout 60 \
        -x TMPI_RANK_SWITCHING=user -n "$n" "$SLEEPER" >"$out" 2>&1 &
    local lp=$!
    for ((i = 0; i < 600; i++)); do grep -q started "$out" && break; sleep 0.1; done
    host=$(pgrep -P "${AGENT_PIDS[maps]}" | head -1)
    [ -n "$host" ] && grep -q started "$out" || { echo "job of $n did not start: $(cat "$out")" >&2; return 1; }
    # A sanitizer's allocator maps memory of its own (ASan's primary allocator at
    # 0x600000000000-0x640000000000, TSan's heap at 0x7b0000000000-0x7c0000000000): not the
    # rank's image or stack, so not counted.
    awk '{ split($1, r, "-")
           if (length(r[1]) == 12 && ((r[1] >= "600000000000" && r[1] < "640000000000") ||
                                      (r[1] >= "7b0000000000" && r[1] < "7c0000000000"))) next
           n++ } END { print n }' "/proc/$host/maps"
    kill "$lp"
    wait "$lp" 2>/dev/null || true
    for ((i = 0; i < 300; i++)); do [ -z "$(pgrep -P "${AGENT_PIDS[maps]}")" ] && break; sleep 0.1; done
    [ -z "$(pgrep -P "${AGENT_PIDS[maps]}")" ] || { echo "the job host of $n ranks did not end" >&2; return 1; }
}

@test "rank maps: a carried rank of a copied program takes at most 3 memory maps (image and stack)" {
    # ThreadSanitizer gives every map shadow and meta maps of its own (8 a rank here): the count
    # is the normal and ASan builds' to check
    [ "$(build_sanitizer)" != thread ] || skip "ThreadSanitizer adds its shadow maps to every map"
    SLEEPER=$(prog sleeper)
    start_agent maps
    local a b
    a=$(host_maps 8) && b=$(host_maps 24) || false
    echo "8 ranks: $a maps, 24 ranks: $b maps" >&3
    # A sanitized build also maps each large block on its own (ASan's secondary allocator),
    # where glibc's malloc keeps blocks of this size in its heap: one in 8 ranks allowed there.
    local slack=0
    [ -z "$(build_sanitizer)" ] || slack=2
    (((b - a) <= 3 * 16 + slack)) || { echo "$(((b - a) / 16)) maps per rank ($a at 8, $b at 24)" >&2; false; }
}

@test "rank maps: a carried rank that overflows its stack faults at the guard page below it" {
    local p out top addr
    p=$(prog stack_overflow)
    start_agent maps
    run launch --agent "$AGENT_SOCK" --timeout 60 -x TMPI_RANK_SWITCHING=user -n 4 "$p"
    [ "$status" -ne 0 ] || { echo "expected the fault to fail the job: $output" >&2; false; }
    [[ "$output" =~ stack\ top\ (0x[0-9a-f]+) ]] || { echo "no stack top: $output" >&2; false; }
    top=${BASH_REMATCH[1]}
    [[ "$output" =~ rank\ 1\ failed:\ killed\ by\ signal\ 11\ .*at\ address\ (0x[0-9a-f]+) ]] ||
        { echo "expected rank 1 killed by SIGSEGV: $output" >&2; false; }
    addr=${BASH_REMATCH[1]}
    # the default rank_stack_size (2 MiB) and the guard page: not in the next rank's stack
    ((addr < top && top - addr <= (2 << 20) + 4096)) ||
        { echo "fault at $addr, $((top - addr)) bytes below the stack top $top" >&2; false; }
}
