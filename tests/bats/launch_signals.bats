#!/usr/bin/env bats
# SIGUSR1 and SIGUSR2 sent to tmpi-launch reach the job's ranks, as with mpirun: every rank's
# own handler runs (with its own globals), a rank with no handler is killed and the job ends
# with 128+signal; on one agent (the job host process gets the signal) and across agents.

bats_require_minimum_version 1.5.0
load helpers

teardown() {
    [ -n "${LPID:-}" ] && kill -KILL "$LPID" 2>/dev/null
    stop_cluster
    stop_all_agents
}

# run_signalled SIG NRANKS LAUNCH-ARGS...: starts the launcher in the background, waits for
# "ready" (every rank has its handler), sends SIG to the launcher, waits for it.  Sets STATUS,
# OUT and ERR (file names).
run_signalled() {
    local sig=$1 line=""
    shift
    OUT="$BATS_TEST_TMPDIR/out" ERR="$BATS_TEST_TMPDIR/err"
    local fifo="$BATS_TEST_TMPDIR/fifo"
    rm -f "$fifo"
    mkfifo "$fifo"
    "$LAUNCH_BIN" "$@" >"$fifo" 2>"$ERR" &
    LPID=$!
    exec 5<"$fifo"
    read -r -t 60 line <&5 || true
    [ "$line" = ready ] || { echo "expected ready, got '$line'"; cat "$ERR"; return 1; }
    kill "-$sig" "$LPID"
    cat <&5 >"$OUT"
    exec 5<&-
    STATUS=0
    wait "$LPID" || STATUS=$?
    LPID=
}

expect_got() {
    local n=$1 sig=$2 r
    for ((r = 0; r < n; r++)); do
        grep -qxF "rank $r got signal $sig" "$OUT" ||
            { echo "rank $r: expected 'rank $r got signal $sig' in:"; cat "$OUT" "$ERR"; return 1; }
    done
}

@test "signals: SIGUSR1 runs every rank's own handler on one agent" {
    start_agent a
    run_signalled USR1 --agent "$AGENT_SOCK" -n 4 "$(prog usr_signal)"
    [ "$STATUS" -eq 0 ] || { echo "expected status 0, got $STATUS"; cat "$OUT" "$ERR"; false; }
    expect_got 4 10
}

@test "signals: SIGUSR2 with user-level switching (ranks on carriers)" {
    start_agent a
    run_signalled USR2 --agent "$AGENT_SOCK" -x TMPI_RANK_SWITCHING=user -n 3 "$(prog usr_signal)"
    [ "$STATUS" -eq 0 ] || { echo "expected status 0, got $STATUS"; cat "$OUT" "$ERR"; false; }
    expect_got 3 12
}

@test "signals: a rank with no handler is killed and the job ends with 128+signal" {
    start_agent a
    run_signalled USR1 --agent "$AGENT_SOCK" -n 2 "$(prog usr_signal)" none
    [ "$STATUS" -eq 138 ] || { echo "expected status 138, got $STATUS"; cat "$OUT" "$ERR"; false; }
    grep -q "rank 0 killed by signal 10 (USR1): it has no handler for it" "$ERR" ||
        { echo "expected the reason on stderr, got:"; cat "$ERR"; false; }
}

# bats test_tags=multinode
@test "signals: SIGUSR1 reaches the ranks of a job across 3 agents" {
    start_cluster 3
    run_signalled USR1 --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 6 \
        "$(prog usr_signal)"
    [ "$STATUS" -eq 0 ] || { echo "expected status 0, got $STATUS"; cat "$OUT" "$ERR"; false; }
    expect_got 6 10
}

@test "signals: the agent refuses a signal other than SIGUSR1/SIGUSR2 (fake launcher)" {
    start_agent a
    run python3 - "$AGENT_SOCK" <<'PY'
import socket, struct, sys
# Envelope field 27 (SignalJob) with signo 9: a protocol violation, answered with an Error.
body = bytes([2 << 3]) + bytes([9])
env = bytes([27 << 3 | 2, 0x01]) + bytes([len(body)]) + body
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(struct.pack(">I", len(env)) + env)
data = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    data += d
print(data)
PY
    [[ "$output" == *"signal 9 cannot be forwarded"* ]] || { echo "got: $output"; false; }
}
