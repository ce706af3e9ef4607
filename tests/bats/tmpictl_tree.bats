#!/usr/bin/env bats
# tmpictl tree: the algorithm and tree a collective of a layout would use between nodes (no
# agent), with shapes, tree files (seed 002's two groups of 4 per node), --json, rejected tree
# files (exit 1 with FILE:LINE) and bad options (exit 2).

bats_require_minimum_version 1.5.0
load helpers

# The job tests start agents: stop them by PID whatever the outcome.
teardown() { stop_all_agents; }

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock" # never asked: no agent needed
    unset TMPI_COLL_BCAST TMPI_COLL_REDUCE TMPI_COLL_ALLREDUCE TMPI_COLL_TREE_FILE
    seed002="$BATS_TEST_TMPDIR/seed002.tree"
    {
        echo "# 2 nodes x 8 ranks: two groups of 4 per node, both reporting to the root"
        echo "ranks 16"
        echo "0 -1"
        for r in 1 2 3 4 8 12; do echo "$r 0"; done
        for r in 5 6 7; do echo "$r 4"; done
        for r in 9 10 11; do echo "$r 8"; done
        for r in 13 14 15; do echo "$r 12"; done
    } >"$seed002"
}

@test "tmpictl tree: shapes by node count and size" {
    run --separate-stderr tmpictl tree --nodes 2 --ppn 8
    expect_status 0
    [[ "$output" == *"algorithm: flat (auto: 2 nodes, 8 bytes)"* ]]
    [[ "$output" == *"leaders: node 0 rank 0, node 1 rank 8"* ]]
    [[ "$output" == *"node 1 (rank 8): parent node 0 (rank 0)"* ]]
    [[ "$output" == *"network messages: 1"* ]]
    run --separate-stderr tmpictl tree --nodes 16 --ppn 1 --size 4K --root 3
    expect_status 0
    [[ "$output" == *"algorithm: binomial"* ]]
    [[ "$output" == *"node 3 (rank 3): root"* ]]
    [[ "$output" == *"node 11 (rank 11): parent node 3 (rank 3)"* ]]
    [[ "$output" == *"node 10 (rank 10): parent node 9 (rank 9)"* ]]
    [[ "$output" == *"network messages: 15"* ]]
    run --separate-stderr tmpictl tree --nodes 7 --ppn 2 --size 1M --coll reduce
    expect_status 0
    [[ "$output" == *"algorithm: binary"* ]]
    [[ "$output" == *"node 6 (rank 12): parent node 2 (rank 4)"* ]]
    run --separate-stderr tmpictl tree --nodes 4 --ppn 2 --coll allreduce --size 1M
    expect_status 0
    [[ "$output" == *"algorithm: ring"* ]]
    run --separate-stderr tmpictl tree --nodes 4 --ppn 2 --coll allreduce --noncommutative
    expect_status 0
    [[ "$output" == *"algorithm: reduce_bcast"* ]]
    [[ "$output" == *"network messages: 6"* ]]
    run --separate-stderr tmpictl tree --nodes 1 --ppn 4
    expect_status 0
    [[ "$output" == *"algorithm: shared_memory"* ]]
}

@test "tmpictl tree: an algorithm forced by option or environment" {
    run --separate-stderr tmpictl tree --nodes 4 --ppn 1 --algorithm binary
    expect_status 0
    [[ "$output" == *"algorithm: binary (--algorithm: 4 nodes, 8 bytes)"* ]]
    [[ "$output" == *"node 3 (rank 3): parent node 1 (rank 1)"* ]]
    TMPI_COLL_REDUCE=binomial run --separate-stderr tmpictl tree --nodes 4 --ppn 1 --coll reduce
    expect_status 0
    [[ "$output" == *"algorithm: binomial (TMPI_COLL_REDUCE: 4 nodes, 8 bytes)"* ]]
}

@test "tmpictl tree: seed 002, two groups of 4 per node reporting to the root" {
    run --separate-stderr tmpictl tree --nodes 2 --ppn 8 --tree-file "$seed002"
    expect_status 0
    [[ "$output" == *"algorithm: tree_file (tree file $seed002 from --tree-file)"* ]]
    [[ "$output" == *"  0: node 0, root"* ]]
    [[ "$output" == *"  5: node 0, parent 4, shared_memory"* ]]
    [[ "$output" == *"  8: node 1, parent 0, network"* ]]
    [[ "$output" == *"  12: node 1, parent 0, network"* ]]
    [[ "$output" == *"  13: node 1, parent 12, shared_memory"* ]]
    [[ "$output" == *"edges: 2 between nodes, 13 inside nodes"* ]]
    [[ "$output" == *"network messages: 2"* ]]
    # another root: the path to the file's root turns around, the edges stay
    TMPI_COLL_TREE_FILE="$seed002" run --separate-stderr tmpictl tree --nodes 2 --ppn 8 --root 9
    expect_status 0
    [[ "$output" == *"from TMPI_COLL_TREE_FILE, re-rooted at the root"* ]]
    [[ "$output" == *"  9: node 1, root"* ]]
    [[ "$output" == *"  8: node 1, parent 9, shared_memory"* ]]
    [[ "$output" == *"  0: node 0, parent 8, network"* ]]
    # a layout of another size: not used with auto, an error with tree_file
    run --separate-stderr tmpictl tree --nodes 3 --ppn 4 --tree-file "$seed002"
    expect_status 0
    [[ "$output" == *"algorithm: flat"* ]]
    [[ "$output" == *"note: tree file $seed002 has 16 ranks, not 12: not used"* ]]
    run --separate-stderr tmpictl tree --nodes 3 --ppn 4 --tree-file "$seed002" --algorithm tree_file
    expect_status 1
    [[ "$stderr" == *"tree file $seed002 has 16 ranks but the job has 12"* ]]
}

@test "tmpictl tree --json" {
    run --separate-stderr tmpictl --json tree --nodes 2 --ppn 8 --tree-file "$seed002"
    expect_status 0
    [ "$(jq -r .algorithm <<<"$output")" = tree_file ]
    [ "$(jq '.rank_edges | length' <<<"$output")" = 15 ]
    [ "$(jq '[.rank_edges[] | select(.link == "network")] | length' <<<"$output")" = 2 ]
    [ "$(jq -c .leaders <<<"$output")" = "[0,8]" ]
    run --separate-stderr tmpictl tree --json --nodes 3 --ppn 2 --coll reduce --root 5
    expect_status 0
    [ "$(jq -r .algorithm <<<"$output")" = flat ]
    [ "$(jq -c '.leader_edges' <<<"$output")" = '[{"parent_node":2,"node":0},{"parent_node":2,"node":1}]' ]
    [ "$(jq .network_messages <<<"$output")" = 2 ]
}

@test "tmpictl tree: rejected tree files exit 1 with FILE:LINE" {
    bad="$BATS_TEST_TMPDIR/bad.tree"
    printf 'ranks 4\n0 -1\n1 0\n2 3\n3 2\n' >"$bad"
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --tree-file "$bad"
    expect_status 1
    [[ "$stderr" == *"tree file rejected: $bad:4: rank 2 is on a cycle (not a tree)"* ]]
    printf 'ranks 4\n0 -1\n1 0\n2 0\n' >"$bad"
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --tree-file "$bad"
    expect_status 1
    [[ "$stderr" == *"$bad:4: rank 3 has no line (wrong size?)"* ]]
    printf 'ranks 4\n0 -1\n1 0\n2 0\n3 -\n' >"$bad"
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --tree-file "$bad"
    expect_status 1
    [[ "$stderr" == *"$bad:5: a second root (rank 3 has no parent)"* ]]
    printf 'ranks 4\n0 -1\n1 0\n2 0\n3 0 0\n' >"$bad"
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --tree-file "$bad"
    expect_status 1
    [[ "$stderr" == *"$bad:5: expected two words, found more"* ]]
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --tree-file "$BATS_TEST_TMPDIR/none"
    expect_status 1
    [[ "$stderr" == *"none: No such file or directory"* ]]
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --algorithm tree_file
    expect_status 1
    [[ "$stderr" == *"algorithm tree_file without a tree file"* ]]
}

@test "tmpictl tree: bad options exit 2" {
    run --separate-stderr tmpictl tree --nodes 2
    expect_status 2
    [[ "$stderr" == *"--nodes and --ppn are required"* ]]
    run --separate-stderr tmpictl tree --nodes 0 --ppn 2
    expect_status 2
    run --separate-stderr tmpictl tree --nodes 2 --ppn x
    expect_status 2
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --size 4Q
    expect_status 2
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --coll gather
    expect_status 2
    [[ "$stderr" == *"expected bcast, reduce or allreduce"* ]]
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --root 4
    expect_status 2
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --algorithm fast
    expect_status 2
    [[ "$stderr" == *"expected one of auto, flat, binomial, binary, tree_file"* ]]
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --coll allreduce --algorithm binary
    expect_status 2
    TMPI_COLL_BCAST=fast run --separate-stderr tmpictl tree --nodes 2 --ppn 2
    expect_status 2
    [[ "$stderr" == *"TMPI_COLL_BCAST fast"* ]]
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --frob
    expect_status 2
    run --separate-stderr tmpictl tree --nodes 2 --ppn 2 --root
    expect_status 2
    [[ "$stderr" == *"--root needs a value"* ]]
    run tmpictl tree --help
    expect_status 0
    [[ "$output" == *"usage: tmpictl tree"* ]]
}

# ---- the same tree file in a real job on two agents ----

mlaunch() { timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" "$@"; }

# The network messages of mn_bcast_count's Bcast (from rank 5), summed over the nodes.
bcast_messages() {
    awk '/^node .* bcast messages /{ s += $NF } END { print s + 0 }' <<<"$output"
}

# bats test_tags=multinode
@test "tree file in a job: 2 agents x 8 ranks, the Bcast crosses the file's 2 edges between nodes" {
    start_cluster 2
    local hosts
    hosts=$(cluster_hostfile 8)
    run mlaunch --hostfile "$hosts" -n 16 "$(prog mn_bcast_count)"
    expect_status 0
    [ "$(bcast_messages)" -eq 1 ] # auto: a flat tree between the 2 leaders
    # what tmpictl tree says for this layout and root is what the job does
    run --separate-stderr tmpictl tree --nodes 2 --ppn 8 --root 5 --tree-file "$seed002"
    [[ "$output" == *"network messages: 2"* ]]
    run mlaunch --hostfile "$hosts" -n 16 -x TMPI_COLL_TREE_FILE="$seed002" \
        -x TMPI_COLL_BCAST=tree_file "$(prog mn_bcast_count)"
    expect_status 0
    printf '%s\n' "${lines[@]}" | grep -qx OK # other nodes' lines may come after it
    if [ "$(bcast_messages)" -ne 2 ]; then
        echo "expected 2 network messages, got $(bcast_messages): $output" >&2
        return 1
    fi
    run mlaunch --hostfile "$hosts" -n 16 -x TMPI_COLL_BCAST=fast "$(prog mn_bcast_count)"
    [ "$status" -ne 0 ]
    # MPI_Init reads the settings and reports a bad one, not the first collective
    [[ "$output" == *'MPI_Init: TMPI_COLL_BCAST="fast": not one of auto, flat, binomial, binary, tree_file (MPI_ERR_ARG)'* ]] || { echo "$output"; false; }
    [[ "$output" != *MPI_Allreduce* && "$output" != *MPI_Bcast* ]] || { echo "$output"; false; }
}

@test "tmpictl tree: a tree file names an algorithm per size range, its edges elsewhere" {
    local f="$BATS_TEST_TMPDIR/sized.tree"
    { cat "$seed002"; echo "algorithm bcast 0-2K binomial"; echo "algorithm allreduce 1M- ring"; } >"$f"
    run --separate-stderr tmpictl tree --nodes 2 --ppn 8 --size 1K --tree-file "$f"
    expect_status 0
    [[ "$output" == *"algorithm: binomial (tree file $f, its algorithm line for 1024 bytes: 2 nodes, 1024 bytes)"* ]] || { echo "$output"; false; }
    run --separate-stderr tmpictl tree --nodes 2 --ppn 8 --size 4K --tree-file "$f"
    expect_status 0
    [[ "$output" == *"algorithm: tree_file (tree file $f from --tree-file)"* ]] || { echo "$output"; false; }
    run --separate-stderr tmpictl tree --nodes 2 --ppn 8 --coll allreduce --size 2M --tree-file "$f"
    [[ "$output" == *"algorithm: ring (tree file $f, its algorithm line"* ]] || { echo "$output"; false; }
    # an explicit algorithm wins over the file's lines
    run --separate-stderr tmpictl tree --nodes 2 --ppn 8 --size 1K --tree-file "$f" --algorithm flat
    [[ "$output" == *"algorithm: flat (--algorithm: 2 nodes, 1024 bytes)"* ]] || { echo "$output"; false; }
    echo "algorithm bcast 1K-4K flat" >>"$f"
    run --separate-stderr tmpictl tree --nodes 2 --ppn 8 --tree-file "$f"
    expect_status 1
    [[ "$stderr" == *"$f:21: the bcast range \"1K-4K\" overlaps an earlier one"* ]] || { echo "$stderr"; false; }
}

# bats test_tags=multinode
@test "tree file in a job: its algorithm line for the Bcast's size replaces its edges" {
    start_cluster 2
    local hosts f="$BATS_TEST_TMPDIR/flat.tree"
    hosts=$(cluster_hostfile 8)
    { cat "$seed002"; echo "algorithm bcast 0- flat"; } >"$f"
    run mlaunch --hostfile "$hosts" -n 16 -x TMPI_COLL_TREE_FILE="$f" "$(prog mn_bcast_count)"
    expect_status 0
    # flat between the 2 leaders: 1 message, not the file's 2 edges between the nodes
    [ "$(bcast_messages)" -eq 1 ] || { echo "expected 1, got $(bcast_messages): $output" >&2; false; }
    { cat "$seed002"; echo "algorithm bcast 0- tree_file"; } >"$f"
    run mlaunch --hostfile "$hosts" -n 16 -x TMPI_COLL_TREE_FILE="$f" "$(prog mn_bcast_count)"
    expect_status 0
    [ "$(bcast_messages)" -eq 2 ] || { echo "expected 2, got $(bcast_messages): $output" >&2; false; }
}

# bats test_tags=multinode
@test "tree file from tmpid.conf: used by jobs, a bad one stops the agent with both FILE:LINEs" {
    local conf="$BATS_TEST_TMPDIR/tree.conf"
    printf '[mpi]\ncoll_tree_file = %s\n' "$seed002" >"$conf"
    start_cluster 2 --config "$conf"
    run mlaunch --hostfile "$(cluster_hostfile 8)" -n 16 "$(prog mn_bcast_count)"
    expect_status 0
    [ "$(bcast_messages)" -eq 2 ]
    stop_cluster
    need_agent
    local bad="$BATS_TEST_TMPDIR/bad.tree"
    printf 'ranks 2\n0 -1\n1 0\n1 0\n' >"$bad"
    printf '[mpi]\ncoll_bcast = binomial\n\ncoll_tree_file = %s\n' "$bad" >"$conf"
    run --separate-stderr timeout 10 "$TMPID" --config "$conf" --socket "$BATS_TEST_TMPDIR/x.sock"
    [ "$status" -ne 0 ]
    [[ "$stderr" == *"$conf:4: bad value for [mpi] coll_tree_file: $bad:4: rank 1 is given twice"* ]]
}
