#!/usr/bin/env bats
# What a hostile user, or a stranger on the network, can no longer do to the agent and to the
# other users (issue 38, docs/RELIABILITY.md): with real throwaway users (root only), created
# and removed again by each test.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    mkdir -p "$BATS_FILE_TMPDIR/progs"
    local p
    for p in sleeper; do
        "$TMPI_BUILD/launcher/tmpicc" -o "$BATS_FILE_TMPDIR/progs/$p" "$TMPI_SRC/tests/bats/progs/$p.c"
    done
    "$TMPI_BUILD/launcher/tmpicc" -o "$BATS_FILE_TMPDIR/progs/hostinfo" \
        "$TMPI_SRC/tests/bats/agent_progs/hostinfo.c"
}

teardown() {
    local p
    for p in ${BG_PIDS:-}; do kill "$p" 2>/dev/null || true; done
    for p in ${BG_PIDS:-}; do wait "$p" 2>/dev/null || true; done
    stop_all_agents
    local u
    if [ -f "$BATS_TEST_TMPDIR/users" ]; then
        while read -r u; do userdel -r -f "$u" 2>/dev/null || true; done <"$BATS_TEST_TMPDIR/users"
    fi
    [ -n "${PUB:-}" ] && rm -rf "$PUB"
    true
}

# Users tmpih_{a,b}PID; the programs and the agent's socket where every user reaches them.
need_users() {
    [ "$(id -u)" -eq 0 ] || skip "needs root to create users"
    command -v useradd >/dev/null && command -v runuser >/dev/null || skip "no useradd/runuser"
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$LAUNCH_BIN" ||
        skip "other users cannot reach the build tree ($TMPI_BUILD)"
    UA="tmpih_a$$" UB="tmpih_b$$"
    local u
    for u in "$UA" "$UB"; do
        useradd -M -s /bin/sh "$u" && echo "$u" >>"$BATS_TEST_TMPDIR/users"
    done
    PUB=$(mktemp -d /tmp/tmpih.XXXXXX)
    chmod 755 "$PUB"
    cp "$BATS_FILE_TMPDIR"/progs/* "$PUB/"
    chmod 755 "$PUB"/*
}

# pub_agent CONF: an agent with tmpid.conf CONF (printf %b) on $PUB/agent.sock; sets SOCK.
pub_agent() {
    printf '%b' "$1" >"$PUB/tmpid.conf"
    local fifo="$BATS_TEST_TMPDIR/ready" line=""
    SOCK="$PUB/agent.sock"
    mkfifo "$fifo"
    "$TMPID" --socket "$SOCK" --config "$PUB/tmpid.conf" --ready-fd 3 3>"$fifo" \
        >"$BATS_TEST_TMPDIR/a.log" 2>&1 &
    AGENT_PIDS[a]=$!
    read -r -t $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) line <"$fifo" || true
    [ "$line" = READY=1 ] || { cat "$BATS_TEST_TMPDIR/a.log"; false; }
}

# as USER CMD...: CMD as USER from $PUB.
as() {
    local u=$1
    shift
    runuser -u "$u" -- sh -c 'cd "$1" && shift && exec "$@"' sh "$PUB" "$@"
}

# sleepers USER N: N one-rank jobs of USER that wait for ever, in the background; returns
# once each has printed "started".
sleepers() {
    local u=$1 n=$2 i
    for ((i = 0; i < n; i++)); do
        as "$u" "$LAUNCH_BIN" --agent "$SOCK" -n 1 ./sleeper >"$BATS_TEST_TMPDIR/s.$u.$i" 2>&1 &
        BG_PIDS="${BG_PIDS:-} $!"
    done
    for ((i = 0; i < n; i++)); do
        timeout 30 sh -c 'until grep -q started "$1"; do sleep 0.1; done' sh "$BATS_TEST_TMPDIR/s.$u.$i" ||
            { cat "$BATS_TEST_TMPDIR/s.$u.$i"; return 1; }
    done
}

@test "hostile: one user's jobs stop at max_jobs_per_user (a quarter of max_jobs by default); other users and root still run" {
    need_users
    pub_agent '[agent]\nmax_jobs = 8\n'
    # default: 8 / 4 = 2 jobs of one user
    sleepers "$UA" 2
    run --separate-stderr as "$UA" "$LAUNCH_BIN" --agent "$SOCK" -n 1 ./hostinfo id
    [ "$status" -ne 0 ] || { echo "a third job of $UA ran"; false; }
    [[ "$stderr" == *"already runs 2 jobs on this agent (max_jobs_per_user is 2)"* ]] || { echo "$stderr"; false; }
    run --separate-stderr as "$UB" "$LAUNCH_BIN" --agent "$SOCK" -n 1 ./hostinfo id
    [ "$status" -eq 0 ] || { echo "$UB: $status $stderr"; false; }
    # the limit, its value and its use in tmpictl status
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" status --json
    output=$(tr -d ' \n' <<<"$output")
    [[ "$output" == *'"name":"max_jobs_per_user","value":2,"in_use":0,"refused":1'* ]] || { echo "$output"; false; }
}

@test "hostile: other users filling max_jobs leave root room (the admin reserve); max_jobs_per_user set explicitly" {
    need_users
    pub_agent '[agent]\nmax_jobs = 4\nmax_jobs_per_user = 2\n'
    sleepers "$UA" 2
    sleepers "$UB" 2
    run --separate-stderr as "$UB" "$LAUNCH_BIN" --agent "$SOCK" -n 1 ./hostinfo id
    [ "$status" -ne 0 ]
    [[ "$stderr" == *"(max_jobs_per_user is 2)"* ]] || { echo "$stderr"; false; }
    # root runs although the agent holds max_jobs jobs
    run --separate-stderr "$LAUNCH_BIN" --agent "$SOCK" -n 1 "$PUB/hostinfo" id
    [ "$status" -eq 0 ] || { echo "root: $status $stderr"; false; }
}

@test "hostile: uploads that never send their program count against max_jobs_per_user; others still run" {
    need_users
    pub_agent '[agent]\nmax_jobs = 64\n'
    # the default is 16 for max_jobs 64: 64 stalled uploads of one user hold 16
    as "$UA" /usr/bin/python3 "$TMPI_SRC/tests/bats/control_client.py" "$SOCK" stall 64 30 \
        >"$BATS_TEST_TMPDIR/stall" 2>&1 &
    BG_PIDS="$!"
    timeout 30 sh -c 'until [ -s "$1" ]; do sleep 0.1; done' sh "$BATS_TEST_TMPDIR/stall"
    run cat "$BATS_TEST_TMPDIR/stall"
    [[ "$output" == "waiting 16 refused 48; error: "*"(max_jobs_per_user is 16)"* ]] || { echo "$output"; false; }
    run --separate-stderr as "$UB" "$LAUNCH_BIN" --agent "$SOCK" -n 1 ./hostinfo id
    [ "$status" -eq 0 ] || { echo "$UB: $status $stderr"; false; }
}

# elapsed CMD...: runs CMD, sets status and ELAPSED (seconds, one decimal).
elapsed() {
    local t0 t1
    t0=$(date +%s.%N)
    run "$@"
    t1=$(date +%s.%N)
    ELAPSED=$(echo "$t1 - $t0" | bc)
}

@test "hostile: --timeout, cancel and Ctrl-C end sleeping and computing ranks within about a second (kill_grace 1 s by default)" {
    need_agent
    local p
    p=$(prog rank_stall)
    start_agent a
    # --timeout 2: sleeping ranks, then computing ones, end by 3.7 s
    elapsed "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 --timeout 2 "$p" sleep
    [ "$status" -eq 124 ] || { echo "status $status: $output"; false; }
    (($(echo "$ELAPSED < 3.7" | bc))) || { echo "--timeout 2 on sleeping ranks took $ELAPSED s"; false; }
    elapsed "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 --timeout 2 "$p" spin
    [ "$status" -eq 124 ] || { echo "status $status: $output"; false; }
    (($(echo "$ELAPSED < 3.7" | bc))) || { echo "--timeout 2 on computing ranks took $ELAPSED s"; false; }
    # Ctrl-C: the launcher returns within 1.7 s of the signal
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 "$p" sleep >"$BATS_TEST_TMPDIR/int.out" 2>&1 &
    local pid=$!
    timeout 20 sh -c 'until grep -q started "$1"; do sleep 0.05; done' sh "$BATS_TEST_TMPDIR/int.out"
    local t0 t1
    t0=$(date +%s.%N)
    kill -INT "$pid"
    wait "$pid" || true
    t1=$(date +%s.%N)
    (($(echo "$t1 - $t0 < 1.7" | bc))) || { echo "Ctrl-C took $(echo "$t1 - $t0" | bc) s"; false; }
    # tmpictl cancel
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 "$p" spin >"$BATS_TEST_TMPDIR/c.out" 2>&1 &
    pid=$!
    timeout 20 sh -c 'until grep -q started "$1"; do sleep 0.05; done' sh "$BATS_TEST_TMPDIR/c.out"
    local id
    id=$("$TMPI_BUILD/launcher/tmpictl" --agent "$AGENT_SOCK" jobs --json | tr -d ' \n' | sed -n 's/.*"id":"\([0-9]*\)".*"state":"running".*/\1/p')
    [ -n "$id" ]
    t0=$(date +%s.%N)
    "$TMPI_BUILD/launcher/tmpictl" --agent "$AGENT_SOCK" cancel "$id"
    wait "$pid" || true
    t1=$(date +%s.%N)
    (($(echo "$t1 - $t0 < 1.7" | bc))) || { echo "cancel took $(echo "$t1 - $t0" | bc) s"; false; }
}

# flood_during ADDRESSES: a stranger's flood of node2's mesh port from ADDRESSES loopback
# addresses, 32 connections each, while node1 pings node2 and a 2-node job runs.
flood_during() {
    local n=$1
    /usr/bin/python3 "$TMPI_SRC/tests/bats/mesh_flood.py" "${CLUSTER_PORTS[1]}" "$n" 32 7 \
        >"$BATS_TEST_TMPDIR/flood.$n" 2>&1 &
    local fp=$!
    BG_PIDS="${BG_PIDS:-} $fp"
    sleep 2.5 # the strangers hold every slot they may
    run "$TMPI_BUILD/launcher/tmpictl" --agent "${CLUSTER_SOCKS[0]}" ping "127.0.0.1:${CLUSTER_PORTS[1]}"
    [ "$status" -eq 0 ] || { echo "ping during a flood from $n addresses: $output"; false; }
    run "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$(cluster_hostfile 1)" -n 2 "$(prog mn_hello)"
    [ "$status" -eq 0 ] || { echo "2-node job during a flood from $n addresses: $status $output"; false; }
    wait "$fp"
    run cat "$BATS_TEST_TMPDIR/flood.$n"
    echo "flood from $n addresses: $output" >&3
    # the flood really flooded: hundreds of connects, and refusals
    [[ "$output" =~ ^connects\ ([0-9]+)\ closed\ ([0-9]+)$ ]]
    ((BASH_REMATCH[1] > 500 && BASH_REMATCH[2] > 100)) || { echo "weak flood: $output"; false; }
}

# bats test_tags=multinode
@test "hostile: a keyless flood from 9 and 64 loopback addresses (32 connections each, reopened at once) stops neither a peer's ping nor a 2-node job" {
    need_agent
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.5", 0))' 2>/dev/null ||
        skip "cannot bind 127.0.0.x source addresses"
    start_cluster 2
    flood_during 9
    flood_during 64
    grep -q "mesh: refusing 127.0.0" "$BATS_TEST_TMPDIR/node2.log"
}

@test "hostile: control characters of a program name reach tmpictl's tables and the log escaped; --json stays exact" {
    need_agent
    local d="$BATS_TEST_TMPDIR/p" name
    mkdir -p "$d"
    name=$'x\e]0;PWNED\a\rY\x9b\xc2\x9bz\xe2\x80\x99'
    cp "$BATS_FILE_TMPDIR/progs/hostinfo" "$d/$name"
    start_agent a --log-level info
    run bash -c 'cd "$1" && exec "$2" --agent "$3" -n 1 "./$4" id' sh "$d" "$LAUNCH_BIN" "$AGENT_SOCK" "$name"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$AGENT_SOCK" jobs
    [[ "$output" != *[$'\e\a\r\x9b']* ]] || { echo "raw control characters in the table"; false; }
    [[ "$output" == *'./x\x1b]0;PWNED\x07\x0dY\x9b\xc2\x9bz'$'\xe2\x80\x99'* ]] || { echo "$output" | od -c | head; false; }
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$AGENT_SOCK" jobs --json
    [[ "$output" == *'"program":"./x\u001b]0;PWNED\u0007\rY'* ]] || { echo "$output"; false; }
    run cat "$BATS_TEST_TMPDIR/a.log"
    [[ "$output" == *'x\x1b]0;PWNED\x07\x0dY'* ]] || { echo "$output"; false; }
    [[ "$output" != *[$'\e\a\r']* ]] || { echo "raw control characters in the log"; false; }
}

@test "hostile: a SIGHUP reload applies a changed max_connections (and the other control-socket limits) and says so" {
    need_agent
    local conf="$BATS_TEST_TMPDIR/tmpid.conf"
    printf '[agent]\nmax_connections = 1024\nidle_timeout = 60\n' >"$conf"
    start_agent a --config "$conf" --log-level notice
    printf '[agent]\nmax_connections = 8\nidle_timeout = 30\n' >"$conf"
    kill -HUP "${AGENT_PIDS[a]}"
    timeout 10 sh -c 'until grep -q "idle_timeout changed" "$1"; do sleep 0.1; done' sh "$BATS_TEST_TMPDIR/a.log"
    grep -q 'reload: \[agent\] max_connections changed: applied now' "$BATS_TEST_TMPDIR/a.log"
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$AGENT_SOCK" status --json
    output=$(tr -d ' \n' <<<"$output")
    [[ "$output" == *'"name":"max_connections","value":8,'* ]] || { echo "$output"; false; }
    [[ "$output" == *'"name":"idle_timeout","value":30,'* ]] || { echo "$output"; false; }
}

@test "hostile: the agent's global counters go to root and the agent's user only" {
    need_users
    pub_agent '[agent]\n'
    run "$LAUNCH_BIN" --agent "$SOCK" -n 1 "$PUB/hostinfo" id
    [ "$status" -eq 0 ]
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" status --json
    output=$(tr -d ' \n' <<<"$output")
    [[ "$output" == *'"jobs_started":1,'* ]] || { echo "root: $output"; false; }
    run as "$UA" "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" status --json
    output=$(tr -d ' \n' <<<"$output")
    [[ "$output" == *'"jobs_started":0,'* && "$output" == *'"counters_hidden":true'* ]] || { echo "$UA: $output"; false; }
    run as "$UA" "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" status
    [[ "$output" == *"shown to root and the agent's user only"* ]] || { echo "$output"; false; }
    [[ "$output" != *"Bad frames"* ]]
}

@test "hostile: malformed frames are all counted but logged at most once a second" {
    need_agent
    start_agent a
    local t0=$SECONDS
    /usr/bin/python3 - "$AGENT_SOCK" <<'PY'
import socket, sys
for _ in range(2000):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(b"\x00\x00\x00\x03\xff\xff\xff")  # no Envelope decodes from this
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    s.close()
PY
    local secs=$((SECONDS - t0 + 1)) lines
    lines=$(grep -c "closing connection of pid" "$BATS_TEST_TMPDIR/a.log" || true)
    ((lines >= 1 && lines <= secs + 1)) || { echo "$lines log lines in $secs s"; false; }
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$AGENT_SOCK" status --json
    output=$(tr -d ' \n' <<<"$output")
    [[ "$output" == *'"bad_frames":2000,'* ]] || { echo "$output"; false; }
}

@test "hostile: a SIGUSR1 a rank raises itself is reported as that rank's (rank 1 and rank 2 of 3), on threads and on carriers" {
    need_agent
    local p sw
    p=$(prog raise_usr1)
    start_agent a
    for sw in auto kernel user; do
        run "$LAUNCH_BIN" --agent "$AGENT_SOCK" -x TMPI_RANK_SWITCHING=$sw -n 3 --timeout 30 "$p" 1
        [ "$status" -eq 138 ] || { echo "$sw: status $status: $output"; false; }
        [[ "$output" == *"rank 1 killed by signal 10 (USR1)"* ]] || { echo "$sw: $output"; false; }
        run "$LAUNCH_BIN" --agent "$AGENT_SOCK" -x TMPI_RANK_SWITCHING=$sw -n 3 --timeout 30 "$p" 2
        [ "$status" -eq 138 ] || { echo "$sw: status $status: $output"; false; }
        [[ "$output" == *"rank 2 killed by signal 10 (USR1)"* ]] || { echo "$sw: $output"; false; }
    done
}

@test "hostile: job cgroups left by a SIGKILLed agent are removed at its next start, and it says so" {
    need_agent
    local p
    p=$(prog rank_stall)
    start_agent a
    local apid=${AGENT_PIDS[a]}
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 "$p" sleep >"$BATS_TEST_TMPDIR/j.out" 2>&1 &
    BG_PIDS="$!"
    timeout 20 sh -c 'until grep -q started "$1"; do sleep 0.05; done' sh "$BATS_TEST_TMPDIR/j.out"
    local dirs
    dirs=$(find /sys/fs/cgroup -maxdepth 6 -type d -path "*/tmpid/$apid" 2>/dev/null)
    [ -n "$dirs" ] || skip "this agent puts jobs in no cgroup"
    kill -KILL "$apid"
    wait "$apid" 2>/dev/null || true
    unset "AGENT_PIDS[a]"
    # its job host leaves within kill_grace of losing the agent; the directories stay
    sleep 3
    # (any agent starting on this machine removes them: one of another test may be first)
    local d left=0
    for d in $dirs; do [ ! -d "$d" ] || left=1; done
    start_agent b --log-level info
    for d in $dirs; do [ ! -d "$d" ] || { echo "$d is still there"; false; }; done
    if ((left)); then
        grep -q "cgroup: removed .*/tmpid/$apid, left by an agent that is gone" "$BATS_TEST_TMPDIR/b.log"
    fi
}

@test "hostile: --check-config reports every bad setting, each with its own line" {
    need_agent
    local f="$BATS_TEST_TMPDIR/bad.conf"
    printf '[agent]\n# a comment\nmax_jobs = lots\n\nmax_ranks = 0\n[mesh]\nbogus = 1\nheartbeat_ms = 1\n' >"$f"
    run "$TMPID" --check-config "$f"
    [ "$status" -ne 0 ]
    expect_line "$f:3: bad value for [agent] max_jobs: \"lots\" (Invalid argument)"
    expect_line "$f:5: bad value for [agent] max_ranks: \"0\" (Numerical result out of range)"
    expect_line "$f:7: unknown setting [mesh] bogus"
    expect_line "$f:8: bad value for [mesh] heartbeat_ms: \"1\" (Numerical result out of range)"
    printf '[agent]\nnot a setting\nmax_jobs = 2\n' >"$f"
    run "$TMPID" --check-config "$f"
    [ "$status" -ne 0 ]
    expect_line "$f:2: syntax error"
}
