#!/usr/bin/env bats
# tmpi-launch's stdin goes to rank 0 (as with mpirun); the other ranks read end of file.  It
# flows launcher -> agent -> job host -> a pipe that is the host's fd 0, within a window of
# unacknowledged bytes (MSG_STDIN_WINDOW), so any amount arrives intact and a job that does
# not read never makes anyone buffer more than the window.  Across nodes the coordinator passes
# it on to the member holding rank 0, within the same window.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    mkdir -p "$BATS_FILE_TMPDIR/progs"
    "$TMPI_BUILD/launcher/tmpicc" -o "$BATS_FILE_TMPDIR/progs/hostinfo" \
        "$TMPI_SRC/tests/bats/agent_progs/hostinfo.c"
}

setup() {
    HOSTINFO="$BATS_FILE_TMPDIR/progs/hostinfo"
    start_agent a
    SOCK=$AGENT_SOCK
}

teardown() { stop_all_agents; }

@test "stdin: a piped line reaches rank 0; ranks 1 to 3 read end of file" {
    run bash -c 'echo hello | "$1" --agent "$2" -n 4 "$3" stdin' _ "$LAUNCH_BIN" "$SOCK" "$HOSTINFO"
    expect_status 0
    expect_line "stdin: hello"
    expect_line "EOF"
    expect_line "rank 1 stdin: EOF"
    expect_line "rank 2 stdin: EOF"
    expect_line "rank 3 stdin: EOF"
    expect_line "OK"
    [ "$(grep -c '^stdin: ' <<<"$output")" -eq 1 ] || { echo "got: $output"; false; }
}

@test "stdin: 5 MiB arrive at rank 0 intact, in order; the other ranks' read(0) returns 0" {
    local f="$BATS_TEST_TMPDIR/in"
    head -c $((5 << 20)) /dev/urandom >"$f"
    local want
    want=$(python3 -c '
import sys
h = 1469598103934665603
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
print("bytes=%d fnv=%x" % (5 << 20, h))' "$f")
    run "$LAUNCH_BIN" --agent "$SOCK" -n 3 "$HOSTINFO" stdinsum <"$f"
    expect_status 0
    expect_line "$want"
    ! grep -q "read(0) returned" <<<"$output" || { echo "got: $output"; false; }
}

@test "stdin: a job that never reads its endless stdin still ends; --stdin none gives end of file" {
    run bash -c 'yes | "$1" --agent "$2" -n 2 "$3" id' _ "$LAUNCH_BIN" "$SOCK" "$HOSTINFO"
    expect_status 0
    expect_line "OK"
    run bash -c 'echo hello | "$1" --agent "$2" --stdin none -n 2 "$3" stdin' _ "$LAUNCH_BIN" \
        "$SOCK" "$HOSTINFO"
    expect_status 0
    ! grep -q "stdin: hello" <<<"$output" || { echo "got: $output"; false; }
    expect_line "EOF"
    run --separate-stderr "$LAUNCH_BIN" --agent "$SOCK" --stdin all -n 2 "$HOSTINFO" stdin
    expect_status 2
    [[ "$stderr" == *"--stdin takes one value: none"* ]]
}

@test "stdin: from /dev/null, rank 0 reads end of file at once" {
    run "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$HOSTINFO" stdin </dev/null
    expect_status 0
    expect_line "EOF"
    expect_line "rank 1 stdin: EOF"
}

# A host file of the cluster with node ORDER... first (2 slots each): rank 0 on the first.
hostfile_order() {
    local f="$BATS_TEST_TMPDIR/hosts" i
    : >"$f"
    for i in "$@"; do echo "127.0.0.1 slots=2 port=${CLUSTER_PORTS[i - 1]}" >>"$f"; done
    echo "$f"
}

# bats test_tags=multinode
@test "stdin: across 3 agents it reaches rank 0 on the coordinator and on a member node; the others read end of file" {
    start_cluster 3
    local hf
    for hf in "$(hostfile_order 1 2 3)" "$(hostfile_order 3 1 2)"; do
        run bash -c 'echo hello | "$1" --agent "$2" --hostfile "$3" -n 6 "$4" stdin' _ \
            "$LAUNCH_BIN" "${CLUSTER_SOCKS[0]}" "$hf" "$HOSTINFO"
        expect_status 0
        expect_line "stdin: hello"
        expect_line "rank 1 stdin: EOF"
        expect_line "rank 5 stdin: EOF"
        expect_line "OK"
        [ "$(grep -c '^stdin: ' <<<"$output")" -eq 1 ] || { echo "got: $output"; false; }
    done
}

# bats test_tags=multinode
@test "stdin: 5 MiB reach rank 0 on a member node intact, in order, within the window" {
    start_cluster 2
    local f="$BATS_TEST_TMPDIR/in" want
    head -c $((5 << 20)) /dev/urandom >"$f"
    want=$(python3 -c '
import sys
h = 1469598103934665603
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
print("bytes=%d fnv=%x" % (5 << 20, h))' "$f")
    run "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$(hostfile_order 2 1)" -n 4 \
        "$HOSTINFO" stdinsum <"$f"
    expect_status 0
    expect_line "$want"
    ! grep -q "read(0) returned" <<<"$output" || { echo "got: $output"; false; }
    # a job across nodes that never reads its endless stdin still ends
    run bash -c 'yes | "$1" --agent "$2" --hostfile "$3" -n 4 "$4" id' _ "$LAUNCH_BIN" \
        "${CLUSTER_SOCKS[0]}" "$(hostfile_order 2 1)" "$HOSTINFO"
    expect_status 0
    expect_line "OK"
}
