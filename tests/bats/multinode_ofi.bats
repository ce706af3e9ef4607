#!/usr/bin/env bats
# The libfabric (OFI) data plane between agents on loopback (agent/transport/ofi,
# docs/ADMIN.md "Fabrics"), with libfabric's tcp provider: the representative multi-node
# programs over OFI, the per-job choice (--transport, TMPI_TRANSPORT), and the fallback to TCP
# when a provider cannot start.  The other multi-node suites run on the default (auto: TCP
# here, no fabric); tests/unit/agent/test_tp_ofi.c covers frames, order, rendezvous, one-sided
# and a peer outside the address exchange.

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
    ! grep -q "stays on tcp" "$BATS_TEST_TMPDIR"/node*.log
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
