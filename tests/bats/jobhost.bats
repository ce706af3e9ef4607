#!/usr/bin/env bats
# Job hosts: every job runs in a process of its own started by the agent (jobhost.h), so
# what a rank does to its process ends its own job only.

bats_require_minimum_version 1.5.0

setup_file() {
    export PROGS="$BATS_FILE_TMPDIR/progs"
    mkdir -p "$PROGS"
    chmod 755 "$BATS_FILE_TMPDIR" "$PROGS"
    for p in ends hostinfo; do
        "$TMPI_BUILD/launcher/tmpicc" -o "$PROGS/$p" "$TMPI_SRC/tests/bats/agent_progs/$p.c"
    done
    chmod 755 "$PROGS"/*
}

# Starts an agent (as the caller, root in the multi-user tests) on a socket of its own.
agent_up() {
    SOCK_DIR=${SOCK_DIR:-$BATS_TEST_TMPDIR}
    SOCK="$SOCK_DIR/agent.sock"
    LOG="$BATS_TEST_TMPDIR/agent.log"
    local fifo="$BATS_TEST_TMPDIR/ready"
    mkfifo "$fifo"
    (cd / && exec "$TMPI_BUILD/agent/tmpid" --socket "$SOCK" --ready-fd 3 --log-level info "$@" \
        3>"$fifo" >"$LOG" 2>&1) &
    AGENT_PID=$!
    local line=""
    read -r line <"$fifo" || true
    [ "$line" = "READY=1" ] || { cat "$LOG"; return 1; }
}

agent_down() {
    if [ -n "${AGENT_PID:-}" ] && kill -0 "$AGENT_PID" 2>/dev/null; then
        kill -TERM "$AGENT_PID"
        wait "$AGENT_PID" || true
    fi
    AGENT_PID=""
    if [ -n "${LOG:-}" ] && grep -q "Sanitizer\|runtime error" "$LOG"; then
        cat "$LOG"
        return 1
    fi
}

teardown() { agent_down; }

launch() { "$TMPI_BUILD/launcher/tmpi-launch" --agent "$SOCK" "$@"; }
tmpictl() { "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" "$@"; }

# The pid rank 0 reported in a "pid=N ..." line of $output.
reported_pid() { sed -n 's/^pid=\([0-9]*\) .*/\1/p' <<<"$output"; }

@test "job host: the ranks run in a process of their own, which is gone after the job" {
    agent_up
    run launch -n 3 "$PROGS/hostinfo" id
    [ "$status" -eq 0 ]
    local pid
    pid=$(reported_pid)
    [ -n "$pid" ] || { echo "no pid in: $output"; false; }
    [ "$pid" != "$AGENT_PID" ] || { echo "the ranks ran inside the agent (pid $pid)"; false; }
    # the launcher ends when the host has sent JobEnd; the host leaves right after
    local i
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    ! kill -0 "$pid" 2>/dev/null || { echo "job host $pid still alive"; false; }
}

@test "job host: segfault, abort and kill(getpid(), SIGKILL) end only their job; a job beside them completes" {
    agent_up
    local flag="$BATS_TEST_TMPDIR/go" out="$BATS_TEST_TMPDIR/other.out"
    "$TMPI_BUILD/launcher/tmpi-launch" --agent "$SOCK" -n 2 "$PROGS/hostinfo" waitfile "$flag" \
        >"$out" 2>&1 &
    local other=$!
    run --separate-stderr launch -n 3 "$PROGS/ends" segv
    [ "$status" -eq 139 ] || { echo "segv: expected 139, got $status: $stderr"; false; }
    [[ "$stderr" == *"rank 1"*"signal 11"* ]]
    run --separate-stderr launch -n 3 "$PROGS/ends" abort
    [ "$status" -eq 134 ] || { echo "abort: expected 134, got $status: $stderr"; false; }
    run --separate-stderr launch -n 3 "$PROGS/ends" killself
    [ "$status" -eq 137 ] || { echo "killself: expected 137, got $status: $stderr"; false; }
    [[ "$stderr" == *"signal 9"* ]] || { echo "signal not named: $stderr"; false; }
    kill -0 "$AGENT_PID"
    touch "$flag"
    local st=0
    wait "$other" || st=$?
    [ "$st" -eq 0 ] || { echo "the other job ended with $st:"; cat "$out"; false; }
    grep -qx waited "$out" && grep -qx OK "$out" || { cat "$out"; false; }
}

@test "job host: tmpictl cancel of a computing job kills its process after the grace period" {
    local conf="$BATS_TEST_TMPDIR/tmpid.conf"
    printf '[agent]\nkill_grace = 1\n' >"$conf"
    agent_up --config "$conf"
    "$TMPI_BUILD/launcher/tmpi-launch" --agent "$SOCK" -n 2 "$PROGS/ends" spin \
        >"$BATS_TEST_TMPDIR/spin.out" 2>&1 &
    local l=$!
    until tmpictl jobs | grep -q running; do sleep 0.05; done
    local t0=$SECONDS
    run tmpictl cancel 1
    [ "$status" -eq 0 ]
    run tmpictl jobs
    [[ "$output" == *ending* ]] || { echo "expected state ending, got: $output"; false; }
    local st=0
    wait "$l" || st=$?
    [ "$st" -eq 143 ] || { echo "expected 143, got $st"; cat "$BATS_TEST_TMPDIR/spin.out"; false; }
    (( SECONDS - t0 <= 4 )) || { echo "took $((SECONDS - t0)) s with a grace of 1 s"; false; }
    grep -q "killing its job host" "$LOG" || { cat "$LOG"; false; }
}
