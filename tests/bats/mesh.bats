#!/usr/bin/env bats
# The agent mesh: agents that share the cluster key accept each other, a wrong key is refused
# and logged on both sides before any job data, key files and addresses are checked.

bats_require_minimum_version 1.5.0

# Starts agent NAME listening on loopback (a free port the kernel picks) with key file KEY.
mesh_agent() {
    local name=$1 key=$2
    shift 2
    local fifo="$BATS_TEST_TMPDIR/$name.ready"
    mkfifo "$fifo"
    "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/$name.sock" --name "$name" \
        --listen 127.0.0.1:0 --key-file "$key" --ready-fd 3 --log-level info "$@" \
        3>"$fifo" >"$BATS_TEST_TMPDIR/$name.log" 2>&1 &
    PIDS+=("$!")
    local line=""
    read -r -t $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) line <"$fifo" || true
    [ "$line" = "READY=1" ] || { cat "$BATS_TEST_TMPDIR/$name.log"; return 1; }
}

# The address an agent really listens on (it asked for port 0).
addr_of() {
    "$TMPI_BUILD/launcher/tmpictl" --agent "$BATS_TEST_TMPDIR/$1.sock" --json status |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["mesh_listen"])'
}

ctl() { local n=$1; shift; "$TMPI_BUILD/launcher/tmpictl" --agent "$BATS_TEST_TMPDIR/$n.sock" "$@"; }

key() {
    head -c "${2:-32}" /dev/urandom >"$BATS_TEST_TMPDIR/$1"
    chmod "${3:-600}" "$BATS_TEST_TMPDIR/$1"
    echo "$BATS_TEST_TMPDIR/$1"
}

setup() { PIDS=(); DIRS=(); }

teardown() {
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    for d in "${DIRS[@]}"; do rm -rf "$d"; done
}

@test "mesh: three agents with one key authenticate each other both ways" {
    local k
    k=$(key cluster.key)
    mesh_agent a "$k"
    mesh_agent b "$k"
    mesh_agent c "$k"
    run ctl a ping "$(addr_of b)"
    [ "$status" -eq 0 ]
    [[ "$output" == *"(b): authenticated"* ]]
    run ctl c ping "$(addr_of a)"
    [ "$status" -eq 0 ]
    run ctl b --json ping "$(addr_of c)"
    [ "$status" -eq 0 ]
    [[ "$output" == *'"ok":true'* ]]
    [ "$(ctl b --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["mesh_accepted"])')" -eq 1 ]
}

@test "mesh: a wrong cluster key is refused and logged by both agents" {
    local k1 k2
    k1=$(key one.key)
    k2=$(key two.key)
    mesh_agent a "$k1"
    mesh_agent x "$k2"
    run ctl a ping "$(addr_of x)"
    [ "$status" -eq 1 ]
    [[ "$output" == *"does not hold our cluster key"* ]]
    run ctl x ping "$(addr_of a)"
    [ "$status" -eq 1 ]
    grep -q "refused" "$BATS_TEST_TMPDIR/a.log"
    grep -q "refused" "$BATS_TEST_TMPDIR/x.log"
    [ "$(ctl a --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["mesh_auth_failures"])')" -ge 1 ]
    # both still serve
    run ctl a status
    [ "$status" -eq 0 ]
}

@test "mesh: a stranger that is not an agent is cut off without harm" {
    local k
    k=$(key cluster.key)
    mesh_agent a "$k"
    local addr port
    addr=$(addr_of a)
    port=${addr##*:}
    python3 - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET / HTTP/1.0\r\n" + b"x" * 200)
s.settimeout(10)
try:
    while s.recv(4096): pass
except ConnectionResetError:
    pass
PY
    grep -q "not a TMPI mesh handshake" "$BATS_TEST_TMPDIR/a.log"
    run ctl a status
    [ "$status" -eq 0 ]
}

@test "tmpid: key files that are short, world-readable or missing are refused" {
    local short open
    short=$(key short.key 16)
    open=$(key open.key 32 644)
    run "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/s.sock" --listen 127.0.0.1:0 --key-file "$short"
    [ "$status" -eq 1 ]
    [[ "$output" == *"at least 32 random bytes"* ]]
    run "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/s.sock" --listen 127.0.0.1:0 --key-file "$open"
    [ "$status" -eq 1 ]
    [[ "$output" == *"accessible to other users"* ]]
    run "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/s.sock" --listen 127.0.0.1:0 --key-file /nonexistent.key
    [ "$status" -eq 1 ]
    run "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/s.sock" --listen 127.0.0.1:0
    [ "$status" -eq 2 ]
    [[ "$output" == *"--listen needs --key-file"* ]]
    local k
    k=$(key good.key)
    run "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/s.sock" --listen "not:an:address" --key-file "$k"
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad listen address"* ]]
}

@test "tmpictl ping: usage and unreachable or malformed addresses" {
    local k
    k=$(key cluster.key)
    mesh_agent a "$k"
    run ctl a ping
    [ "$status" -eq 2 ]
    run ctl a ping "127.0.0.1:99999"
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad address"* ]]
    run ctl a ping "127.0.0.1:1"
    [ "$status" -eq 1 ]
    [[ "$output" == *"Connection refused"* ]]
}

# Three free TCP ports on loopback.
free_ports() {
    python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
}

peer_state() { # AGENT ADDRESS -> state of that peer in AGENT's status
    ctl "$1" --json status | python3 -c '
import json, sys
for p in json.load(sys.stdin).get("peers", []):
    if p["address"] == sys.argv[1]: print(p["state"])' "$2"
}

wait_state() { # AGENT ADDRESS STATE: bounded wait for a heartbeat-driven change
    for _ in $(seq 1 100); do
        [ "$(peer_state "$1" "$2")" = "$3" ] && return 0
        sleep 0.1
    done
    ctl "$1" status
    return 1
}

@test "mesh: configured peers stay connected; a killed agent is seen down, the others stay healthy" {
    local k p1 p2 p3
    k=$(key cluster.key)
    read -r p1 p2 p3 < <(free_ports)
    printf '[mesh]\nheartbeat_ms = 100\n' >"$BATS_TEST_TMPDIR/hb.conf"
    local a1=127.0.0.1:$p1 a2=127.0.0.1:$p2 a3=127.0.0.1:$p3
    mkfifo "$BATS_TEST_TMPDIR/r1" "$BATS_TEST_TMPDIR/r2" "$BATS_TEST_TMPDIR/r3"
    local i=1
    for addr in $a1 $a2 $a3; do
        local others=()
        for o in $a1 $a2 $a3; do [ "$o" = "$addr" ] || others+=(--peer "$o"); done
        "$TMPI_BUILD/agent/tmpid" --config "$BATS_TEST_TMPDIR/hb.conf" --socket "$BATS_TEST_TMPDIR/n$i.sock" \
            --name "n$i" --listen "$addr" --key-file "$k" "${others[@]}" --ready-fd 3 \
            3>"$BATS_TEST_TMPDIR/r$i" >"$BATS_TEST_TMPDIR/n$i.log" 2>&1 &
        PIDS+=("$!")
        local line=""
        read -r line <"$BATS_TEST_TMPDIR/r$i"
        [ "$line" = "READY=1" ]
        i=$((i + 1))
    done
    wait_state n1 "$a2" up
    wait_state n1 "$a3" up
    wait_state n3 "$a1" up
    run ctl n1 status
    [[ "$output" == *"n2"*"up"* ]]
    # kill node 3 (by its PID)
    kill -KILL "${PIDS[2]}"
    wait "${PIDS[2]}" || true
    wait_state n1 "$a3" down
    wait_state n2 "$a3" down
    [ "$(peer_state n1 "$a2")" = up ]
    grep -q "peer $a3 (n3) is down" "$BATS_TEST_TMPDIR/n1.log"
    run ctl n2 status
    [ "$status" -eq 0 ]
}

@test "tmpid: --peer needs a key and a valid address" {
    run "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/s.sock" --peer 127.0.0.1:7470
    [ "$status" -eq 2 ]
    [[ "$output" == *"--peer needs --key-file"* ]]
    local k
    k=$(key cluster.key)
    run "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/s.sock" --listen 127.0.0.1:0 --key-file "$k" --peer "no:such:thing"
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad peer address"* ]]
}

@test "tmpictl ping: a user who is not an admin may ping configured peers only" {
    local k dir addr_b addr_c
    k=$(key cluster.key)
    # A socket directory the unprivileged user can reach (the test's own is private).
    dir=$(mktemp -d /tmp/tmpit-ping.XXXXXX)
    chmod 755 "$dir"
    DIRS+=("$dir")
    mesh_agent b "$k"
    mesh_agent c "$k"
    addr_b=$(addr_of b)
    addr_c=$(addr_of c)
    local fifo="$BATS_TEST_TMPDIR/a.ready"
    mkfifo "$fifo"
    "$TMPI_BUILD/agent/tmpid" --socket "$dir/a.sock" --name a --listen 127.0.0.1:0 \
        --key-file "$k" --peer "$addr_b" --ready-fd 3 --log-level info \
        3>"$fifo" >"$BATS_TEST_TMPDIR/a.log" 2>&1 &
    PIDS+=("$!")
    local line=""
    read -r -t $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) line <"$fifo" || true
    [ "$line" = "READY=1" ]
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$TMPI_BUILD/launcher/tmpictl" --agent "$dir/a.sock" "$@"; }
    run as_nobody ping "$addr_c"
    [ "$status" -ne 0 ]
    [[ "$output" == *"only root or the agent's user may ping an address that is not a configured peer"* ]]
    run as_nobody ping "$addr_b"
    [ "$status" -eq 0 ]
    [[ "$output" == *"(b): authenticated"* ]]
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$dir/a.sock" ping "$addr_c"
    [ "$status" -eq 0 ]
    grep -q "uid 65534 may not ping" "$BATS_TEST_TMPDIR/a.log"
}

@test "mesh: a handshake must complete within its deadline however slowly bytes arrive" {
    local k addr
    k=$(key cluster.key)
    mesh_agent a "$k"
    addr=$(addr_of a)
    # One byte of a HELLO every second: each byte would restart an idle timeout.
    run python3 - "$addr" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
t0 = time.time()
hello = b"TMPIMESH" + bytes(200)
for i in range(15):
    try:
        s.send(hello[i:i + 1])
    except OSError:
        break
    s.settimeout(1.0)
    try:
        if s.recv(1) == b"":
            break
    except socket.timeout:
        pass
    except OSError:
        break
print("closed after %.1f s" % (time.time() - t0))
PY
    [ "$status" -eq 0 ]
    local secs=${output#closed after }
    secs=${secs% s}
    # the deadline is 5 s; the drip would have kept it open for 15 s
    python3 -c "import sys; sys.exit(0 if 4.0 <= $secs <= 9.0 else 1)" || { echo "$output"; false; }
    grep -q "handshake timed out" "$BATS_TEST_TMPDIR/a.log"
}

@test "mesh: strangers cannot hold more than 32 handshakes from one address" {
    local k addr
    k=$(key cluster.key)
    mesh_agent a "$k"
    addr=$(addr_of a)
    run python3 - "$addr" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
conns = [socket.create_connection((host, int(port))) for _ in range(40)]
time.sleep(0.5)
closed = 0
for s in conns:
    s.settimeout(0.05)
    try:
        if s.recv(1) == b"":
            closed += 1
    except socket.timeout:
        pass
    except OSError:
        closed += 1
print(closed)
PY
    [ "$status" -eq 0 ]
    [ "$output" -eq 8 ] || { echo "closed at once: $output (expected the 8 beyond 32)"; false; }
    grep -q "handshakes pending" "$BATS_TEST_TMPDIR/a.log"
}
