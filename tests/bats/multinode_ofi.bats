#!/usr/bin/env bats
# The libfabric (OFI) data plane between agents on loopback (agent/transport/ofi,
# docs/ADMIN.md "Fabrics"), with libfabric's tcp provider: the representative multi-node
# programs over OFI, the per-job choice (--transport, TMPI_TRANSPORT), the fallback to TCP
# when a provider cannot start, what tmpictl status says carries each link, and the agent's
# decision for auto.  Every other multi-node test runs on both transports (tests/README.md:
# the [ofi] pass of make check); tests/unit/agent/test_tp_ofi.c covers frames, order,
# rendezvous, one-sided and a peer outside the address exchange.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID TMPI_TRANSPORT FI_PROVIDER
}

teardown() { stop_all_agents; }

mlaunch() { launch --agent "${CLUSTER_SOCKS[0]}" "$@"; }

mpi_prog() {
    local exe="$BATS_FILE_TMPDIR/mpi_$1"
    [ -x "$exe" ] || tmpicc -o "$exe" "$TMPI_SRC/tests/mpi/$1.c" >&2 || return 1
    echo "$exe"
}

@test "multinode ofi: ring, all pairs to 16 MiB, one-sided and collectives on 3 nodes over libfabric tcp" {
    start_cluster 3 --log-level info
    FI_PROVIDER=tcp run mlaunch --timeout 60 --transport ofi --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_ring)"
    expect_status 0
    [[ "$output" == *"ring ok 6"* ]] || { echo "$output" >&2; false; }
    # every node's job host opened its endpoint on the provider asked for
    for i in 1 2 3; do
        grep -q "transport ofi, provider tcp" "$BATS_TEST_TMPDIR/node$i.log" || {
            cat "$BATS_TEST_TMPDIR/node$i.log" >&2
            false
        }
    done
    if grep -q "stays on tcp" "$BATS_TEST_TMPDIR"/node*.log; then false; fi
    TMPI_TRANSPORT=ofi FI_PROVIDER=tcp run mlaunch --timeout 60 --hostfile "$CLUSTER_HOSTFILE" -n 6 \
        "$(prog mn_allpairs)" 0 1 65536 100001 1048576 16777216
    expect_status 0
    for s in 0 1 65536 100001 1048576 16777216; do
        [[ "$output" == *"allpairs $s ok"* ]] || { echo "$output" >&2; false; }
    done
    for p in rma_basic rma_passive collectives; do
        FI_PROVIDER=tcp run mlaunch --timeout 60 --transport ofi --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog "$p")"
        expect_status 0
    done
}

# MPI RMA windows registered with fi_mr: Put and Get (and flush) to a target on another node
# complete while that rank computes, as remote memory access (the job host's log line at job
# end counts them), and fence, post/start/complete/wait and lock/unlock still end what they
# cover; on tcp the same program runs as frames, and says nothing of remote memory access.
@test "multinode ofi: Put and Get to a busy target on another node go as fi_write/fi_read, every epoch ends what it covers" {
    start_cluster 2 --log-level info
    local i
    FI_PROVIDER=tcp run mlaunch --timeout 60 --transport ofi --hostfile "$CLUSTER_HOSTFILE" -n 4 "$(prog mn_rma_busy)"
    expect_status 0
    [[ "$output" == *"rma busy ok 4"* ]] || { echo "$output" >&2; false; }
    # both directions: rank 0 wrote to and read from its target, the target wrote to rank 0
    for i in 1 2; do
        wait_for_text "$BATS_TEST_TMPDIR/node$i.log" \
            "one-sided transfers (.* bytes) to node .* went as remote memory access on ofi:tcp;ofi_rxm (fi_write, fi_read)"
    done
    run mlaunch --timeout 60 --transport tcp --hostfile "$CLUSTER_HOSTFILE" -n 4 "$(prog mn_rma_busy)"
    expect_status 0
    [[ "$output" == *"rma busy ok 4"* ]] || { echo "$output" >&2; false; }
    [ "$(cat "$BATS_TEST_TMPDIR"/node*.log | grep -c "went as remote memory access")" -eq 2 ] || {
        grep "went as remote memory access" "$BATS_TEST_TMPDIR"/node*.log >&2
        false
    }
}

# Accumulates to a window on another node go as the provider's atomics (fi_atomic,
# fi_fetch_atomic, fi_compare_atomic: libfabric tcp's ofi_rxm carries them and applies them in
# the target's progress), and so do those of origins on the target's own node, through the
# endpoint's own address, so that both stay atomic against each other: Fetch_and_op's values
# are each count once, a CAS loop and a strided Accumulate add up (the job hosts' log lines
# count which way they went).  On tcp the same program runs as frames and says nothing of it.
@test "multinode ofi: accumulates from the target's node and from another go as fi_atomic and stay atomic against each other" {
    start_cluster 2 --log-level info
    FI_PROVIDER=tcp run mlaunch --timeout 60 --transport ofi --hostfile "$CLUSTER_HOSTFILE" -n 4 "$(prog mn_acc_atomic)"
    expect_status 0
    [[ "$output" == *"acc atomic ok 4"* ]] || { echo "$output" >&2; false; }
    wait_for_text "$BATS_TEST_TMPDIR/node2.log" \
        "accumulates to node 0 (.*) went as atomics of ofi:tcp;ofi_rxm (fi_atomic)"
    wait_for_text "$BATS_TEST_TMPDIR/node1.log" \
        "accumulates to this node's own windows went as atomics of ofi:tcp;ofi_rxm (fi_atomic)"
    run mlaunch --timeout 60 --transport tcp --hostfile "$CLUSTER_HOSTFILE" -n 4 "$(prog mn_acc_atomic)"
    expect_status 0
    [[ "$output" == *"acc atomic ok 4"* ]] || { echo "$output" >&2; false; }
    [ "$(cat "$BATS_TEST_TMPDIR"/node*.log | grep -c "went as atomics")" -eq 2 ] || {
        grep "went as atomics" "$BATS_TEST_TMPDIR"/node*.log >&2
        false
    }
}

@test "multinode ofi: a provider that cannot start leaves the job on tcp with a log line" {
    start_cluster 2
    FI_PROVIDER=no-such-provider run mlaunch --timeout 60 --transport ofi --hostfile "$CLUSTER_HOSTFILE" -n 4 "$(prog mn_ring)"
    expect_status 0
    [[ "$output" == *"ring ok 4"* ]] || { echo "$output" >&2; false; }
    grep -q "transport ofi: no libfabric provider no-such-provider.*the job's links use tcp" \
        "$BATS_TEST_TMPDIR/node1.log" || { cat "$BATS_TEST_TMPDIR/node1.log" >&2; false; }
}

@test "multinode ofi: a bad transport word is refused by the launcher" {
    run launch --transport rdma -n 1 /bin/true
    [ "$status" -ne 0 ]
    [[ "$output" == *"--transport rdma: must be auto, tcp or ofi"* ]] || { echo "$output" >&2; false; }
    TMPI_TRANSPORT=carrier-pigeon run launch -n 1 /bin/true
    [ "$status" -ne 0 ]
    [[ "$output" == *"TMPI_TRANSPORT=carrier-pigeon: must be auto, tcp or ofi"* ]] || {
        echo "$output" >&2
        false
    }
    run launch -x TMPI_TRANSPORT=verbs -n 1 /bin/true
    [ "$status" -ne 0 ]
    [[ "$output" == *"TMPI_TRANSPORT=verbs: must be auto, tcp or ofi"* ]] || { echo "$output" >&2; false; }
}

# Polls (up to 30 s) until file $1 has the text $2.
wait_for_text() {
    local i
    for i in $(seq 1 300); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "no '$2' in $1:" >&2
    cat "$1" >&2
    return 1
}

# Polls (up to 30 s) until the agent at socket $1 lists no job with links.  An ended job stays
# in the list a while (as `tmpictl jobs` shows it), without links: waiting for it to leave the
# list took 30 s a round.
wait_no_links() {
    local i
    for i in $(seq 1 300); do
        tmpictl --agent "$1" --json status |
            python3 -c 'import json, sys
sys.exit(1 if any(j.get("links") for j in json.load(sys.stdin)["jobs"]) else 0)' &&
            return 0
        sleep 0.1
    done
    echo "the agent at $1 still lists a job's links:" >&2
    tmpictl --agent "$1" status >&2
    return 1
}

@test "multinode ofi: tmpictl status says what carries each link of a running job, on ofi and on tcp" {
    start_cluster 2
    local out="$BATS_TEST_TMPDIR/out" pid tr want
    for tr in ofi tcp; do
        want=tcp
        [ "$tr" = ofi ] && want="ofi:tcp;ofi_rxm"
        FI_PROVIDER=tcp "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --transport "$tr" \
            --hostfile "$CLUSTER_HOSTFILE" -n 4 "$(prog mn_send_wait)" >"$out" 2>&1 &
        pid=$!
        wait_for_text "$out" received
        # the member's view: its links go to node 0, one per channel
        run tmpictl --agent "${CLUSTER_SOCKS[1]}" status
        expect_status 0
        [[ "$output" == *TRANSPORT* ]] || { echo "$output" >&2; false; }
        grep -Eq "^[0-9]+ +0 +127\.0\.0\.1:${CLUSTER_PORTS[0]} +p2p +$want\$" <<<"$output" || {
            echo "expected the p2p link to node 0 on $want; got:" >&2
            echo "$output" >&2
            false
        }
        grep -Eq "^[0-9]+ +0 +127\.0\.0\.1:${CLUSTER_PORTS[0]} +coll +$want\$" <<<"$output" || {
            echo "$output" >&2
            false
        }
        run tmpictl --agent "${CLUSTER_SOCKS[0]}" --json status
        expect_status 0
        python3 -c '
import json, sys
links = [l for j in json.load(sys.stdin)["jobs"] for l in j.get("links", [])]
want = [{"node": 1, "channel": c, "peer": "127.0.0.1:" + sys.argv[1], "carrier": sys.argv[2]}
        for c in (1, 2)]
sys.exit(0 if links == want else "links %r, expected %r" % (links, want))
' "${CLUSTER_PORTS[1]}" "$want" <<<"$output"

        kill -INT "$pid"
        wait "$pid" || true
        # the launcher is gone before the agents drop the job: the next round must
        # not see this job's links
        wait_no_links "${CLUSTER_SOCKS[0]}"
    done
}

@test "multinode ofi: the agent decides transport auto once and tells its job hosts, which do not look again" {
    start_cluster 2
    local i out="$BATS_TEST_TMPDIR/out" pid host
    # the agent looks in the background: tmpictl status says what it found
    for i in $(seq 1 100); do
        run tmpictl --agent "${CLUSTER_SOCKS[1]}" status
        [[ "$output" == *"Transport:       auto: tcp (no fabric provider)"* ]] && break
        sleep 0.1
    done
    [[ "$output" == *"Transport:       auto: tcp (no fabric provider)"* ]] || { echo "$output" >&2; false; }
    # the look ran in a child (tmpid --probe-fabric): the agent never loaded libfabric's providers
    if grep -E "libfabric|libpsm|infinipath" "/proc/${AGENT_PIDS[node2]}/maps" >&2; then false; fi
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 \
        "$(prog mn_send_wait)" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" received
    # the member's job host was handed the answer and never loaded libfabric to look
    host=$(pgrep -n -P "${AGENT_PIDS[node2]}")
    [ -n "$host" ]
    grep -q -- "--fabric" "/proc/$host/cmdline" || { tr '\0' ' ' <"/proc/$host/cmdline" >&2; false; }
    if grep libfabric "/proc/$host/maps" >&2; then false; fi
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" status
    grep -Eq " p2p +tcp$" <<<"$output" || { echo "$output" >&2; false; }
    kill -INT "$pid"
    wait "$pid" || true
}

@test "multinode ofi: --display-map across nodes says which transport and provider the links use" {
    run launch -n 4 -H a:2,b:2 --transport ofi -x FI_PROVIDER=verbs --display-map
    expect_status 0
    expect_line "links between nodes: 2 per pair (p2p, coll), transport ofi; on ofi, provider verbs"
    TMPI_TRANSPORT=tcp run launch -n 4 -H a:2,b:2 --display-map
    expect_status 0
    expect_line "links between nodes: 2 per pair (p2p, coll), transport tcp"
    run launch -n 4 -H a:2,b:2 --display-map
    expect_status 0
    [[ "$output" == *"transport: the agents' [mesh] transport"* ]] || { echo "$output" >&2; false; }
    # one node: no links, no line
    run launch -n 2 -H a:2 --display-map
    expect_status 0
    [[ "$output" != *"links between nodes"* ]] || { echo "$output" >&2; false; }
}
