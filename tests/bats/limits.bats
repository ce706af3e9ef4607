#!/usr/bin/env bats
# The control socket's limits (docs/RELIABILITY.md, tmpid.conf(5)): what one client may make
# the agent hold and for how long.  Each test fails without its limit: the agent would hold
# the connections, the bytes or the replies, and other clients would wait.

bats_require_minimum_version 1.5.0
load sanitizer

setup_file() {
    export PROGS="$BATS_FILE_TMPDIR/progs"
    mkdir -p "$PROGS"
    chmod 755 "$BATS_FILE_TMPDIR" "$PROGS"
    "$TMPI_BUILD/launcher/tmpicc" -o "$PROGS/careless" "$TMPI_SRC/tests/bats/progs/careless.c"
    chmod 755 "$PROGS/careless"
}

# Starts an agent with the [agent] settings given as KEY=VALUE arguments.
agent_up() {
    # other users reach the socket: a directory of its own they may enter (removed by teardown)
    SOCK_DIR=$(mktemp -d /tmp/tmpi-limits.XXXXXX)
    chmod 755 "$SOCK_DIR"
    SOCK="$SOCK_DIR/agent.sock"
    LOG="$BATS_TEST_TMPDIR/agent.log"
    local conf="$BATS_TEST_TMPDIR/tmpid.conf" kv
    echo "[agent]" >"$conf"
    for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}" >>"$conf"; done
    local fifo="$BATS_TEST_TMPDIR/ready"
    mkfifo "$fifo"
    (cd / && exec "$TMPI_BUILD/agent/tmpid" --socket "$SOCK" --config "$conf" --ready-fd 3 \
        --log-level info 3>"$fifo" >"$LOG" 2>&1) &
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

teardown() {
    local p
    for p in ${CLIENT_PIDS:-}; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    agent_down
    [ -z "${SOCK_DIR:-}" ] || rm -rf "$SOCK_DIR"
}

tmpictl() { "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" "$@"; }
launch() { "$TMPI_BUILD/launcher/tmpi-launch" --agent "$SOCK" "$@"; }
client() { /usr/bin/python3 "$TMPI_SRC/tests/bats/control_client.py" "$SOCK" "$@"; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
need_setpriv() {
    [ "$(id -u)" -eq 0 ] || skip "needs root to act as another user (setpriv)"
    command -v setpriv >/dev/null || skip "setpriv not installed"
}

# limit_field NAME FIELD: a field of one limit in tmpictl --json status.
limit_field() {
    tmpictl --json status | /usr/bin/python3 -c "
import json, sys
for l in json.load(sys.stdin)['limits']:
    if l['name'] == '$1': print(l['$2'])"
}

# Waits (up to 10 s) until the client's result file has a line; prints the file.
client_result() {
    local f=$1 i
    for ((i = 0; i < 200; i++)); do [ -s "$f" ] && break; sleep 0.05; done
    cat "$f"
}

vm_kib() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status"; }

@test "limits: 5000 idle connections of one user leave tmpictl status answering (max_connections_per_user)" {
    need_setpriv
    agent_up
    local out="$BATS_TEST_TMPDIR/flood.out"
    as_nobody /usr/bin/python3 "$TMPI_SRC/tests/bats/control_client.py" "$SOCK" flood 5000 30 \
        >"$out" 2>&1 &
    CLIENT_PIDS=$!
    run client_result "$out"
    [[ "$output" == "held 128 refused 4872"* ]] || { echo "expected 128 held, got: $output"; false; }
    [[ "$output" == *"error: uid 65534 already has 128 connections open (max_connections_per_user)"* ]] ||
        { echo "no error frame: $output"; false; }
    run timeout 5 "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" status
    [ "$status" -eq 0 ] || { echo "status failed ($status): $output"; false; }
    [ "$(limit_field max_connections_per_user refused)" -eq 4872 ]
    [ "$(limit_field max_connections in_use)" -eq 129 ]
    grep -q "refusing pid [0-9]* (uid 65534).*max_connections_per_user" "$LOG" || { cat "$LOG"; false; }
    run timeout 20 "$TMPI_BUILD/launcher/tmpi-launch" --agent "$SOCK" -n 2 "$PROGS/careless"
    [ "$status" -eq 0 ] || { echo "a job failed beside the flood ($status): $output"; false; }
}

@test "limits: max_connections refuses other users beyond it; the administrators keep a reserve" {
    need_setpriv
    agent_up max_connections=8 max_connections_per_user=1000
    local out="$BATS_TEST_TMPDIR/flood.out"
    as_nobody /usr/bin/python3 "$TMPI_SRC/tests/bats/control_client.py" "$SOCK" flood 20 30 \
        >"$out" 2>&1 &
    CLIENT_PIDS=$!
    run client_result "$out"
    [[ "$output" == "held 8 refused 12"* ]] || { echo "expected 8 held, got: $output"; false; }
    [[ "$output" == *"(max_connections): try again"* ]] || { echo "no error frame: $output"; false; }
    run timeout 5 "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" status
    [ "$status" -eq 0 ] || { echo "root's status failed ($status): $output"; false; }
    [ "$(limit_field max_connections refused)" -eq 12 ]
}

@test "limits: a connection that sends nothing is closed after idle_timeout" {
    agent_up idle_timeout=1
    run timeout 30 /usr/bin/python3 "$TMPI_SRC/tests/bats/control_client.py" "$SOCK" idle
    [ "$status" -eq 0 ]
    local s
    s=$(sed -n 's/^closed after \([0-9]*\)\..*/\1/p' <<<"$output")
    [ -n "$s" ] && [ "$s" -ge 1 ] && [ "$s" -le 3 ] || { echo "expected closed after 1-3 s, got: $output"; false; }
    [[ "$output" == *"error: nothing sent for 1 s (idle_timeout)"* ]] || { echo "$output"; false; }
    [ "$(limit_field idle_timeout refused)" -eq 1 ]
    grep -q "closing the connection of pid .*idle_timeout" "$LOG"
}

@test "limits: a frame dripping one byte every 0.5 s is dropped at message_timeout" {
    agent_up message_timeout=2 idle_timeout=60
    run timeout 60 /usr/bin/python3 "$TMPI_SRC/tests/bats/control_client.py" "$SOCK" drip 0.5
    [ "$status" -eq 0 ]
    local s
    s=$(sed -n 's/^closed after \([0-9]*\)\..*/\1/p' <<<"$output")
    [ -n "$s" ] && [ "$s" -ge 2 ] && [ "$s" -le 4 ] || { echo "expected closed after 2-4 s, got: $output"; false; }
    [[ "$output" == *"(message_timeout)"* ]] || { echo "$output"; false; }
    [ "$(limit_field message_timeout refused)" -eq 1 ]
}

@test "limits: 32 unfinished 4 MiB frames keep the agent's memory within max_buffered_input" {
    agent_up max_buffered_input=8M
    local hwm0 hwm1
    hwm0=$(vm_kib "$AGENT_PID" VmHWM)
    local out="$BATS_TEST_TMPDIR/partial.out"
    client partial 32 4194000 20 >"$out" 2>&1 &
    CLIENT_PIDS=$!
    # root's request goes through while the frames are held
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(limit_field max_buffered_input refused)" -ge 1 ] && break
        sleep 0.1
    done
    run timeout 5 "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" status
    [ "$status" -eq 0 ] || { echo "status failed beside the frames ($status): $output"; false; }
    hwm1=$(vm_kib "$AGENT_PID" VmHWM)
    echo "VmHWM $hwm0 kB -> $hwm1 kB" >&2
    # (not under ThreadSanitizer: its shadow and allocator metadata grow with every buffer)
    if [ "$(build_sanitizer)" != thread ]; then
        (( hwm1 - hwm0 < 24 * 1024 )) || { echo "the agent grew by $(( (hwm1 - hwm0) / 1024 )) MiB (limit 8 MiB)"; false; }
    fi
    [ "$(limit_field max_buffered_input refused)" -ge 24 ]
    grep -q "max_buffered_input" "$LOG"
}

@test "limits: a client that never reads its replies is closed at max_unread_replies" {
    agent_up max_unread_replies=64K
    local rss0 rss1
    run timeout 60 /usr/bin/python3 "$TMPI_SRC/tests/bats/control_client.py" "$SOCK" unread 300000
    [ "$output" = closed ] || { echo "expected the agent to close the stream, got: $output"; false; }
    [ "$(limit_field max_unread_replies refused)" -eq 1 ]
    hwm=$(vm_kib "$AGENT_PID" VmHWM)
    (( hwm < 64 * 1024 )) || { echo "the agent reached $((hwm / 1024)) MiB"; false; }
}

@test "limits: arguments and environment over max_args_size / max_env_size are refused by name" {
    agent_up max_args_size=64K max_env_size=8K
    local a
    a=$(head -c 30000 /dev/zero | tr '\0' a)
    run --separate-stderr launch -n 2 "$PROGS/careless" "$a" "$a" "$a"
    [ "$status" -ne 0 ]
    [[ "$stderr" == *"arguments of 90003 bytes (max_args_size is 65536)"* ]] || { echo "$stderr"; false; }
    export TMPI_BIG_VAR=$a
    run --separate-stderr launch -n 2 -x TMPI_BIG_VAR "$PROGS/careless"
    [ "$status" -ne 0 ]
    [[ "$stderr" == *"environment of "*" bytes (max_env_size is 8192)"* ]] || { echo "$stderr"; false; }
    [ "$(limit_field max_args_size refused)" -eq 1 ]
    [ "$(limit_field max_env_size refused)" -eq 1 ]
    run launch -n 2 "$PROGS/careless" "${a:0:20000}"
    [ "$status" -eq 0 ] || { echo "a job within the limits failed: $output"; false; }
}
