#!/usr/bin/env bats
# MPI programs across three agents on loopback (one cluster key): the test programs of
# tests/mpi with 3 nodes x 2 ranks, point-to-point between every pair at sizes around the
# eager limit up to 16 MiB, unexpected messages with a 4 KiB pool, wildcard receives, and the
# network messages of one Bcast.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() { stop_all_agents; }

# 60 s a job, scaled like the unit tests' timeouts under make sanitize / make tsan
# (TMPI_TIMEOUT_MULTIPLIER): TSan makes a 16 MiB all-pairs exchange minutes long.
mlaunch() { timeout $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" "$@"; }

# A tests/mpi program, built into this file's own directory (never a shared one: a binary
# built by another build tree would load that tree's libtmpi).
mpi_prog() {
    local exe="$BATS_FILE_TMPDIR/mpi_$1"
    [ -x "$exe" ] || tmpicc -o "$exe" "$TMPI_SRC/tests/mpi/$1.c" >&2 || return 1
    echo "$exe"
}

# Status 0, a line OK, and no sanitizer report anywhere.
expect_ok() {
    # output of other nodes may arrive after rank 0's OK: any line will do
    if [ "$status" -ne 0 ] || ! printf '%s\n' "${lines[@]}" | grep -qx OK ||
        [[ "$output" == *Sanitizer* ]]; then
        echo "expected status 0 and an OK line, got status $status; output:" >&2
        echo "$output" >&2
        return 1
    fi
}

# bats test_tags=multinode
@test "multinode mpi: the tests/mpi programs on 3 nodes x 2 ranks" {
    start_cluster 3
    local p
    for p in ring p2p_order p2p_large coop_copy handoff_sparse nonblocking collectives bcast_rounds coll_all nbc_progress net_progress; do
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p" >&2; return 1; }
    done
}

# MPI-IO across nodes: the shared file pointer lives in an RMA window at rank 0 (a receive
# daemon serves the other nodes), each node's leader aggregates for its node, pieces of other
# nodes travel leader to leader.
# bats test_tags=multinode
@test "multinode mpi: MPI-IO on 3 nodes x 2 ranks (shared pointers, aggregators per node)" {
    start_cluster 3
    local p
    for p in io_file io_coll io_large_count io_pool; do
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p" >&2; return 1; }
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -x TMPI_RANK_SWITCHING=user -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p on carriers" >&2; return 1; }
    done
}

# One-sided communication across nodes: every operation to a neighbour on another node
# travels as TM_MSG_RMA frames applied by that node's receive daemon.
# bats test_tags=multinode
@test "multinode mpi: one-sided communication on 3 nodes x 2 ranks" {
    start_cluster 3
    local p
    for p in rma_basic rma_acc rma_errors rma_null rma_passive rma_dtypes rma_pairs rma_mixed rma_steady error_classes; do
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p" >&2; return 1; }
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -x TMPI_RANK_SWITCHING=user -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p on carriers" >&2; return 1; }
    done
}

# Communicators across agents: groups and communicators made from them, a create/free loop
# whose ids come from the nodes' own ranges, inter-communicators whose leaders are on one node
# and on two, their collectives with MPI_ROOT and MPI_PROC_NULL roots (and non-blocking ones
# with point-to-point between start and wait), attributes, handlers.
# bats test_tags=multinode
@test "multinode mpi: groups, communicators, inter-communicators, attributes on 3 nodes x 2 ranks" {
    start_cluster 3
    local p
    for p in groups comm_loop intercomm inter_nbc attrs errh_info comm_threads comm_idup mpi4 mpi41 dynproc; do
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p" >&2; return 1; }
    done
}

# Sessions across agents: one tmpi://node/<i> set per node with ranks, communicators made
# from the node sets and the world set agree on ids among their members only, on threads and on carriers.
# bats test_tags=multinode
@test "multinode mpi: sessions and process sets on 3 nodes x 2 ranks, threads and carriers" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog sessions)"
    expect_ok || return 1
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -x TMPI_RANK_SWITCHING=user -n 6 "$(mpi_prog sessions)"
    expect_ok || return 1
    # 2 ranks on 3 nodes: the node without ranks has no process set
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$(mpi_prog sessions)"
    expect_ok
}

# MPI_T across agents: each node's collective counters count the calls of the node that hosts
# world rank 0 only.
# bats test_tags=multinode
@test "multinode mpi: MPI_T variables and per-node collective counters on 3 nodes x 2 ranks" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog mpit)"
    expect_ok
}

# Ranks on carriers (user-level switching) across nodes: idle carriers read the links, a
# blocked rank runs on another carrier while its neighbour computes (net_progress, carriers).
# bats test_tags=multinode
@test "multinode mpi: derived datatypes on 3 nodes x 2 ranks (eager and three-phase)" {
    start_cluster 3
    local p
    for p in datatypes_p2p datatypes_api datatypes_coll coll_dtypes type_threads persistent std_letter large_count; do
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p" >&2; return 1; }
    done
}

# bats test_tags=multinode
@test "multinode mpi: each rank's libc state (getopt, strtok, rand, locale, tmpnam) on 3 nodes x 2 ranks, on threads and on carriers" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog libc_state)" -v extra --level=3
    expect_ok
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -x TMPI_RANK_SWITCHING=user -n 6 "$(mpi_prog libc_state)"
    expect_ok
}

# bats test_tags=multinode
@test "multinode mpi: the tests/mpi programs on 3 nodes x 2 ranks, ranks on carriers" {
    start_cluster 3
    local p
    for p in p2p_order nonblocking coll_all net_progress carriers topo_neighbor coop_copy handoff_sparse thread_join; do
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -x TMPI_RANK_SWITCHING=user -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p" >&2; return 1; }
    done
}

# Each rank's own process state, and TMPI_NODE_RANK / the LOCAL variables per node.
# bats test_tags=multinode
@test "multinode mpi: each rank has its own process state on 3 nodes x 2 ranks, threads and carriers" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog rank_process)"
    expect_ok
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -x TMPI_RANK_SWITCHING=user -n 6 "$(mpi_prog rank_process)" carried
    expect_ok
}

# Complete point-to-point across agents: persistent requests, Isendrecv, matched probe of eager
# and three-phase messages, generalized requests, cancel (send_cancel's test below checks that
# an unmatched send to another node is cancelled).
# bats test_tags=multinode
@test "multinode mpi: persistent requests and collectives, matched probe, grequests, cancel, THREAD_MULTIPLE on 3 nodes x 2 ranks" {
    start_cluster 3
    local p
    for p in persistent persistent_coll persistent_coll_order persistent_coll_free mprobe grequest thread_multiple bsend task_farm; do
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p" >&2; return 1; }
    done
}

# MPI_Cancel of sends to a rank on another node (net/cancel.c): the receiver's node takes an
# unmatched message out of its queue, eager (stored, or held by a full pool) or three-phase,
# and answers; a received one is not cancelled; receives racing the cancels.  2 nodes x 2
# ranks by node (every pair across the nodes), 3 nodes x 2 (pairs across and within), ranks on
# carriers, and with a 4 KiB pool, where unexpected eager messages are held.
# bats test_tags=multinode
@test "multinode mpi: MPI_Cancel of unmatched sends to another node succeeds, eager and three-phase, with racing receivers" {
    start_cluster 3
    run mlaunch --hostfile "$(cluster_hostfile 2)" --map-by node -n 4 "$(mpi_prog send_cancel)"
    expect_ok || { echo "2 ranks a node, by node" >&2; return 1; }
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog send_cancel)"
    expect_ok || { echo "3 nodes x 2" >&2; return 1; }
    run mlaunch --hostfile "$(cluster_hostfile 2)" --map-by node -x TMPI_RANK_SWITCHING=user -n 4 "$(mpi_prog send_cancel)"
    expect_ok || { echo "ranks on carriers" >&2; return 1; }
    stop_cluster
    printf '[pool]\nsize = 4K\n' >"$BATS_TEST_TMPDIR/tiny.conf"
    start_cluster 2 --config "$BATS_TEST_TMPDIR/tiny.conf"
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$(mpi_prog send_cancel)"
    expect_ok || { echo "4 KiB pool" >&2; return 1; }
}

# bats test_tags=multinode
@test "multinode mpi: all pairs from 0 bytes to 16 MiB, every byte checked" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_allpairs)"
    expect_ok
    local s
    for s in 0 1 65536 99999 100000 100001 1048576 16777216; do
        expect_line "allpairs $s ok"
    done
}

# bats test_tags=multinode
@test "multinode mpi: unexpected messages with a 4 KiB pool, wildcard receives" {
    printf '[pool]\nsize = 4K\n' >"$BATS_TEST_TMPDIR/tiny.conf"
    start_cluster 3 --config "$BATS_TEST_TMPDIR/tiny.conf"
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" status
    [[ "$output" == *"Buffer pool:"*" of 4"* ]] || { echo "pool not 4K: $output" >&2; return 1; }
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_unexpected)"
    expect_ok
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_allpairs)" 0 1 4097 100001
    expect_ok
}

# The stress of tests/mpi/nothing_lost.c across agents, with a pool so small that unexpected
# eager messages fall back to three-phase.
# bats test_tags=multinode
@test "multinode mpi: nothing lost on 3 nodes x 4 ranks with a 4 KiB pool" {
    printf '[pool]\nsize = 4K\n' >"$BATS_TEST_TMPDIR/tiny.conf"
    start_cluster 3 --config "$BATS_TEST_TMPDIR/tiny.conf"
    run mlaunch --hostfile "$(cluster_hostfile 4)" -n 12 "$(mpi_prog nothing_lost)"
    expect_ok
    [[ "$output" == *"nothing_lost: 576 messages checked"* ]] || { echo "$output" >&2; false; }
}

# bats test_tags=multinode
@test "multinode mpi: pairs i, i + n/2 ping-pong on carriers placed cyclic, 3 nodes x 4 ranks" {
    start_cluster 3
    run mlaunch --hostfile "$(cluster_hostfile 4)" -x TMPI_RANK_SWITCHING=user \
        -x TMPI_CARRIER_PLACEMENT=cyclic -n 12 "$(mpi_prog carrier_wakes)" any
    expect_ok
}

# bats test_tags=multinode
@test "multinode mpi: a Bcast on 3 nodes x 4 ranks sends 2 network messages in all" {
    start_cluster 3
    run mlaunch --hostfile "$(cluster_hostfile 4)" -n 12 "$(prog mn_bcast_count)"
    expect_ok
    [ "$(grep -c '^node .* bcast messages ' <<<"$output")" -eq 3 ]
    local total
    total=$(awk '/^node .* bcast messages /{ s += $NF } END { print s }' <<<"$output")
    if [ "$total" -ne 2 ]; then
        echo "expected 2 network messages over the nodes, got $total:" >&2
        echo "$output" >&2
        return 1
    fi
}

# Topologies across agents: 3 nodes x 2 ranks (the standard tests/mpi runs), and 3 nodes x 4
# ranks, where reorder = 1 must keep as many neighbours on one node as one column per node
# of a 4-wide grid does.
# bats test_tags=multinode
@test "multinode mpi: topologies and neighbourhood collectives on 3 nodes" {
    start_cluster 3
    local p
    run mlaunch --hostfile "$(cluster_hostfile 4)" -n 12 "$(mpi_prog topo_cart)"
    expect_ok || { echo "program topo_cart on 3 x 4" >&2; return 1; }
    expect_line "reorder: 4 ranks per node, 9 neighbour pairs on one node (columns: 9)"
    for p in topo_cart topo_graph topo_dist topo_neighbor halo_cart; do
        run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p on 3 x 2" >&2; return 1; }
        [ "$p" = topo_cart ] && continue # run on 3 x 4 above
        run mlaunch --hostfile "$(cluster_hostfile 4)" -n 12 "$(mpi_prog "$p")"
        expect_ok || { echo "program $p on 3 x 4" >&2; return 1; }
    done
}
