#!/usr/bin/env bats
# The control socket's limits (docs/RELIABILITY.md, tmpid.conf(5)): what one client may make
# the agent hold and for how long.  Each test fails without its limit: the agent would hold
# the connections, the bytes or the replies, and other clients would wait.

bats_require_minimum_version 1.5.0
load sanitizer
load one_agent

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
    local conf="$BATS_TEST_TMPDIR/tmpid.conf" kv
    echo "[agent]" >"$conf"
    for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}" >>"$conf"; done
    agent_start --config "$conf"
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
    # logged: the first refusal (and then one in 100), with the count
    grep -q "(max_connections; 1 refusal(s) of this limit so far)" "$LOG" || { cat "$LOG"; false; }
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
    grep -q "(message_timeout; 1 refusal(s) of this limit so far)" "$LOG" || { cat "$LOG"; false; }
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
    grep -q "(max_unread_replies; 1 refusal(s) of this limit so far)" "$LOG" || { cat "$LOG"; false; }
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
    grep -q "(max_args_size; 1 refusal(s) of this limit so far)" "$LOG" || { cat "$LOG"; false; }
    grep -q "(max_env_size; 1 refusal(s) of this limit so far)" "$LOG" || { cat "$LOG"; false; }
    run launch -n 2 "$PROGS/careless" "${a:0:20000}"
    [ "$status" -eq 0 ] || { echo "a job within the limits failed: $output"; false; }
}

@test "limits: slow, unfinished, flooding and unread clients at once never hold up another client's requests" {
    need_setpriv
    agent_up message_timeout=120 idle_timeout=240 max_unread_replies=64K
    local d="$BATS_TEST_TMPDIR"
    # one byte every 0.5 s: 104 bytes, 52 s of dripping; the unfinished frames and the flood
    # are held 60 s
    client drip 0.5 >"$d/drip.out" 2>&1 &
    CLIENT_PIDS="$!"
    client partial 4 4194000 60 >"$d/partial.out" 2>&1 &
    CLIENT_PIDS="$CLIENT_PIDS $!"
    as_nobody /usr/bin/python3 "$TMPI_SRC/tests/bats/control_client.py" "$SOCK" flood 200 60 \
        >"$d/flood.out" 2>&1 &
    CLIENT_PIDS="$CLIENT_PIDS $!"
    client unread 300000 >"$d/unread.out" 2>&1 &
    CLIENT_PIDS="$CLIENT_PIDS $!"
    # the flood is in (its connections are counted)
    local i
    for ((i = 0; i < 600; i++)); do
        [ "$(limit_field max_connections_per_user refused)" -ge 72 ] && break
        sleep 0.1
    done
    # every request of another client is answered while they go on (timeout: a hang guard)
    for ((i = 0; i < 5; i++)); do
        run timeout 20 "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" status
        [ "$status" -eq 0 ] || { echo "status $i failed ($status): $output"; false; }
        run timeout 20 "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" jobs
        [ "$status" -eq 0 ] || { echo "jobs $i failed ($status): $output"; false; }
    done
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" --agent "$SOCK" -n 2 "$PROGS/careless"
    [ "$status" -eq 0 ] || { echo "a job failed beside the abusive clients ($status): $output"; false; }
}

# run_argv_job OUT FLAG ARGS...: starts careless argv on 256 ranks in the background
# (LAUNCHER), waits until rank 0 reported; sets HOST to the job host's pid.
run_argv_job() {
    local out=$1 flag=$2 i
    shift 2
    launch -n 256 "$PROGS/careless" argv "$flag" "$@" >"$out" 2>&1 &
    LAUNCHER=$!
    CLIENT_PIDS="${CLIENT_PIDS:-} $LAUNCHER"
    for ((i = 0; i < 1200; i++)); do
        grep -q '^args ' "$out" 2>/dev/null && break
        kill -0 "$LAUNCHER" 2>/dev/null || break
        sleep 0.1
    done
    grep -q '^args ' "$out" || { echo "no report from rank 0:" >&2; cat "$out" >&2; return 1; }
    HOST=$(sed -n 's/^host //p' "$out")
}

pss_kib() { sed -n 's/^Pss:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/smaps_rollup"; }

@test "limits: 1.8 MB of arguments on 256 ranks are not copied per rank; each rank's strings are its own" {
    [ -r /proc/self/smaps_rollup ] || skip "no /proc/PID/smaps_rollup"
    agent_up
    local big pss_small pss_big hwm0 hwm1 i
    big=$(head -c 120000 /dev/zero | tr '\0' a)
    local args=()
    for ((i = 0; i < 15; i++)); do args+=("$big"); done
    hwm0=$(vm_kib "$AGENT_PID" VmHWM)
    run_argv_job "$BATS_TEST_TMPDIR/small.out" "$BATS_TEST_TMPDIR/go.small" xxxx
    pss_small=$(pss_kib "$HOST")
    touch "$BATS_TEST_TMPDIR/go.small"
    wait "$LAUNCHER" || { cat "$BATS_TEST_TMPDIR/small.out"; false; }
    run_argv_job "$BATS_TEST_TMPDIR/big.out" "$BATS_TEST_TMPDIR/go.big" "${args[@]}"
    local got
    got=$(sed -n 's/^args \([0-9]*\) bytes/\1/p' "$BATS_TEST_TMPDIR/big.out")
    (( got > 1800000 )) || { cat "$BATS_TEST_TMPDIR/big.out"; false; }
    pss_big=$(pss_kib "$HOST")
    touch "$BATS_TEST_TMPDIR/go.big"
    # every rank wrote its rank into its last argument and read it back (careless.c argv)
    wait "$LAUNCHER" || { cat "$BATS_TEST_TMPDIR/big.out"; false; }
    hwm1=$(vm_kib "$AGENT_PID" VmHWM)
    echo "job host Pss: $pss_small kB with 32 B of arguments, $pss_big kB with 1.8 MB; agent VmHWM $hwm0 -> $hwm1 kB" >&2
    # a copy per rank is 256 x 1.8 MB = 460 MB (and was twice that, MPI_INFO_ENV's included);
    # the bounds leave room for a sanitizer's shadow memory of what is touched
    (( pss_big - pss_small < 128 * 1024 )) ||
        { echo "the job host took $(( (pss_big - pss_small) / 1024 )) MiB more for 1.8 MB of arguments"; false; }
    (( hwm1 - hwm0 < 128 * 1024 )) || { echo "the agent grew by $(( (hwm1 - hwm0) / 1024 )) MiB"; false; }
}
