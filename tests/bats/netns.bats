#!/usr/bin/env bats
# Agents on separate hosts: two network namespaces joined by a veth pair (192.0.2.0/24, the
# documentation range), one agent in each.  Skipped, saying why, where namespaces are not
# permitted.  Everything created here is removed by name of our own making and by PID.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    NS_A="tmpi$$a"
    NS_B="tmpi$$b"
    VETH_A="tv$$a"
    VETH_B="tv$$b"
    PIDS=()
    if ! ip netns add "$NS_A" 2>/dev/null; then
        skip "network namespaces are not permitted here (ip netns add failed; needs root/CAP_SYS_ADMIN)"
    fi
    ip netns add "$NS_B"
    ip link add "$VETH_A" type veth peer name "$VETH_B"
    ip link set "$VETH_A" netns "$NS_A"
    ip link set "$VETH_B" netns "$NS_B"
    ip -n "$NS_A" addr add 192.0.2.1/24 dev "$VETH_A"
    ip -n "$NS_B" addr add 192.0.2.2/24 dev "$VETH_B"
    for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
    ip -n "$NS_A" link set "$VETH_A" up
    ip -n "$NS_B" link set "$VETH_B" up
}

teardown() {
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    ip netns del "$NS_A" 2>/dev/null || true
    ip netns del "$NS_B" 2>/dev/null || true
}

# ns_agent NS NAME ADDR KEY [TMPID ARGS...]: an agent inside namespace NS listening on ADDR.
ns_agent() {
    local ns=$1 name=$2 addr=$3 key=$4
    shift 4
    local fifo="$BATS_TEST_TMPDIR/$name.ready"
    mkfifo "$fifo"
    ip netns exec "$ns" "$TMPI_BUILD/agent/tmpid" --socket "$BATS_TEST_TMPDIR/$name.sock" \
        --name "$name" --listen "$addr" --key-file "$key" --ready-fd 3 "$@" \
        3>"$fifo" >"$BATS_TEST_TMPDIR/$name.log" 2>&1 &
    PIDS+=("$!")
    local line=""
    read -r line <"$fifo" || true
    [ "$line" = "READY=1" ] || { cat "$BATS_TEST_TMPDIR/$name.log"; return 1; }
}

# A tests/mpi program, built into this file's own directory.
mpi_prog() {
    local exe="$BATS_FILE_TMPDIR/mpi_$1"
    [ -x "$exe" ] || tmpicc -o "$exe" "$TMPI_SRC/tests/mpi/$1.c" >&2 || return 1
    echo "$exe"
}

# bats test_tags=multinode
@test "netns: agents on two hosts authenticate across a veth link; a wrong key is refused" {
    head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/k"
    chmod 600 "$BATS_TEST_TMPDIR/k"
    head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/other"
    chmod 600 "$BATS_TEST_TMPDIR/other"
    ns_agent "$NS_A" hosta 192.0.2.1:7470 "$BATS_TEST_TMPDIR/k"
    ns_agent "$NS_B" hostb 192.0.2.2:7470 "$BATS_TEST_TMPDIR/k"
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$BATS_TEST_TMPDIR/hosta.sock" ping 192.0.2.2:7470
    [ "$status" -eq 0 ]
    [[ "$output" == *"(hostb): authenticated"* ]]
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$BATS_TEST_TMPDIR/hostb.sock" ping 192.0.2.1
    [ "$status" -eq 0 ]
    # the other host is not reachable on loopback: it really is another host
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$BATS_TEST_TMPDIR/hosta.sock" ping 127.0.0.1:7471
    [ "$status" -eq 1 ]
    # a third agent with another key, on host b
    ns_agent "$NS_B" hostc 192.0.2.2:7471 "$BATS_TEST_TMPDIR/other"
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$BATS_TEST_TMPDIR/hosta.sock" ping 192.0.2.2:7471
    [ "$status" -eq 1 ]
    [[ "$output" == *"does not hold our cluster key"* ]]
    grep -q "refused" "$BATS_TEST_TMPDIR/hostc.log"
}

# bats test_tags=multinode
@test "netns: one job across two hosts: ring with a 1 MiB block, output and exit status" {
    head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/k"
    chmod 600 "$BATS_TEST_TMPDIR/k"
    ns_agent "$NS_A" hosta 192.0.2.1:7470 "$BATS_TEST_TMPDIR/k"
    ns_agent "$NS_B" hostb 192.0.2.2:7470 "$BATS_TEST_TMPDIR/k"
    printf '192.0.2.1 slots=2 port=7470\n192.0.2.2 slots=2 port=7470\n' >"$BATS_TEST_TMPDIR/hosts"
    run "$TMPI_BUILD/launcher/tmpi-launch" --agent "$BATS_TEST_TMPDIR/hosta.sock" \
        --hostfile "$BATS_TEST_TMPDIR/hosts" -n 4 "$(prog mn_ring)"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"ring ok 4"* ]]
    run "$TMPI_BUILD/launcher/tmpi-launch" --agent "$BATS_TEST_TMPDIR/hosta.sock" \
        --hostfile "$BATS_TEST_TMPDIR/hosts" -n 4 "$(prog mn_hello)"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"rank 3 of 4 on hostb"* ]]
    [[ "$output" == *"rank 0 of 4 on hosta"* ]]
}

# Liveness (docs/RELIABILITY.md): host b's link is taken down during a job.  Nothing reaches
# either side any more, no connection is reset: only the heartbeats of the job's mesh
# connections can tell, within heartbeat_timeout_ms.
# bats test_tags=multinode
@test "netns: a host whose link goes down fails the job within the heartbeat timeout, naming it; the job after the link is back runs" {
    head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/k"
    chmod 600 "$BATS_TEST_TMPDIR/k"
    printf '[mesh]\nheartbeat_timeout_ms = 3000\n' >"$BATS_TEST_TMPDIR/hb.conf"
    local conf=(--config "$BATS_TEST_TMPDIR/hb.conf")
    ns_agent "$NS_A" hosta 192.0.2.1:7470 "$BATS_TEST_TMPDIR/k" "${conf[@]}"
    ns_agent "$NS_A" hosta2 192.0.2.1:7471 "$BATS_TEST_TMPDIR/k" "${conf[@]}"
    ns_agent "$NS_B" hostb 192.0.2.2:7470 "$BATS_TEST_TMPDIR/k" "${conf[@]}"
    printf '192.0.2.1 slots=2 port=7470\n192.0.2.1 slots=2 port=7471\n' >"$BATS_TEST_TMPDIR/a"
    cp "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/all"
    printf '192.0.2.2 slots=2 port=7470\n' >>"$BATS_TEST_TMPDIR/all"
    local out="$BATS_TEST_TMPDIR/out" pid i
    "$TMPI_BUILD/launcher/tmpi-launch" --agent "$BATS_TEST_TMPDIR/hosta.sock" \
        --hostfile "$BATS_TEST_TMPDIR/all" -n 6 "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    for i in $(seq 1 100); do
        grep -q started "$out" && break
        sleep 0.1
    done
    grep -q started "$out" || { cat "$out"; false; }
    ip -n "$NS_B" link set "$VETH_B" down
    # 3 s of silence, a tick late at most, and slack for a loaded machine
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        wait "$pid" || true
        echo "expected the launcher to end within 10 s of the link going down; it did not:" >&2
        cat "$out" >&2
        false
    fi
    local status=0
    wait "$pid" || status=$?
    [ "$status" -eq 1 ] || { echo "expected status 1, got $status" >&2; cat "$out"; false; }
    grep -q "node 192.0.2.2:7470 stopped answering for 3 s" "$out" || { cat "$out"; false; }
    # the two agents of host a run the next job
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" --agent "$BATS_TEST_TMPDIR/hosta.sock" \
        --hostfile "$BATS_TEST_TMPDIR/a" -n 4 "$(prog mn_ring)"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"ring ok 4"* ]]
    # host b dropped its part on its own (its coordinator stopped answering too)
    for i in $(seq 1 50); do
        grep -q "stopped answering for 3 s" "$BATS_TEST_TMPDIR/hostb.log" && break
        sleep 0.1
    done
    grep -q "stopped answering for 3 s" "$BATS_TEST_TMPDIR/hostb.log" ||
        { cat "$BATS_TEST_TMPDIR/hostb.log"; false; }
    ip -n "$NS_B" link set "$VETH_B" up
    # The first connect after the link comes back may still meet the neighbour entry that
    # failed while it was down (EHOSTUNREACH): wait for the carrier and forget those entries,
    # as a real node's link coming back would after its ARP timeout.
    for i in $(seq 1 100); do
        ip -n "$NS_A" link show "$VETH_A" | grep -q LOWER_UP &&
            ip -n "$NS_B" link show "$VETH_B" | grep -q LOWER_UP && break
        sleep 0.1
    done
    ip -n "$NS_A" neigh flush dev "$VETH_A"
    ip -n "$NS_B" neigh flush dev "$VETH_B"
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" --agent "$BATS_TEST_TMPDIR/hosta.sock" \
        --hostfile "$BATS_TEST_TMPDIR/all" -n 6 "$(prog mn_ring)"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ "$output" == *"ring ok 6"* ]]
}

# Issue 16's network-namespace run: a representative set of the tests/mpi programs with two
# ranks on each of two hosts (communicators, inter-communicators, topologies and neighbourhood
# collectives, one-sided communication with derived types, datatypes, MPI-4.0 calls), whose
# traffic crosses the veth link.
# bats test_tags=multinode
@test "netns: communicator, topology, RMA and datatype programs across two hosts" {
    head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/k"
    chmod 600 "$BATS_TEST_TMPDIR/k"
    ns_agent "$NS_A" hosta 192.0.2.1:7470 "$BATS_TEST_TMPDIR/k"
    ns_agent "$NS_B" hostb 192.0.2.2:7470 "$BATS_TEST_TMPDIR/k"
    printf '192.0.2.1 slots=2 port=7470\n192.0.2.2 slots=2 port=7470\n' >"$BATS_TEST_TMPDIR/hosts"
    local p
    for p in groups intercomm inter_nbc comm_idup topo_cart topo_dist topo_neighbor rma_basic \
        rma_passive rma_dtypes datatypes_p2p coll_dtypes mpi4 halo_cart rma_mixed; do
        run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" --agent "$BATS_TEST_TMPDIR/hosta.sock" \
            --hostfile "$BATS_TEST_TMPDIR/hosts" -n 4 "$(mpi_prog "$p")"
        if [ "$status" -ne 0 ] || ! printf '%s\n' "${lines[@]}" | grep -qx OK; then
            echo "program $p: status $status, output:" >&2
            echo "$output" >&2
            return 1
        fi
    done
}
