#!/usr/bin/env bats
# Jobs across several agents: tmpi-launch submits the placement to its local agent, which
# coordinates every node over the mesh.  Three agents on loopback ports share one key.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() { stop_all_agents; }

# Runs tmpi-launch against node1 of the cluster.
mlaunch() { launch --agent "${CLUSTER_SOCKS[0]}" "$@"; }

# The lines "rank R of N on NODE" the hello program prints, sorted.
hello_lines() { grep '^rank ' <<<"$output" | sort -V; }

# Waits (bounded) until FILE contains TEXT.
wait_for_text() {
    local i
    for i in $(seq 1 100); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "no '$2' in $1:" >&2
    cat "$1" >&2
    return 1
}


# $output (tmpictl --json jobs) lists no job but ended ones (kept for ended_job_keep).
no_live_jobs() {
    python3 -c 'import json,sys; j=[x for x in json.load(sys.stdin)["jobs"] if x["state"] != "ended"]; assert not j, "expected no job but ended ones, got %r" % j' <<<"$output"
}

# The agent at socket $1 soon lists no job but ended ones: a member's job host sends its last
# frame before it exits, so its part reads "ending" until the agent has reaped it (slow under
# the sanitizers).
expect_no_live_jobs() {
    local i
    for ((i = 0; i < 300; i++)); do
        run tmpictl --agent "$1" --json jobs
        [ "$status" -eq 0 ] && no_live_jobs 2>/dev/null && return 0
        sleep 0.1
    done
    no_live_jobs
}

# bats test_tags=multinode
@test "multinode: hello across three nodes from a host file, ranks by slot" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_hello)"
    expect_status 0
    [ "$(hello_lines)" = "$(printf 'rank %d of 6 on node%d\n' 0 1 1 1 2 2 3 2 4 3 5 3)" ]
}

# bats test_tags=multinode
@test "multinode: --map-by node deals ranks round robin, --ppn fills two nodes" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 6 "$(prog mn_hello)"
    expect_status 0
    [ "$(hello_lines)" = "$(printf 'rank %d of 6 on node%d\n' 0 1 1 2 2 3 3 1 4 2 5 3)" ]
    run mlaunch --hostfile "$(cluster_hostfile 4)" --ppn 3 -n 6 "$(prog mn_hello)"
    expect_status 0
    [ "$(hello_lines)" = "$(printf 'rank %d of 6 on node%d\n' 0 1 1 1 2 1 3 2 4 2 5 2)" ]
}

# bats test_tags=multinode
@test "multinode: a rank's exit code on a remote node is the launcher's" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_fail)" exit 4 3
    expect_status 3
    [[ "$output" == *"rank 4 exited with code 3"* ]]
    # the other members were torn down and the cluster takes the next job
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_fail)" exit 2 5
    expect_status 5
}

# bats test_tags=multinode
@test "multinode: MPI_Abort on a remote node ends the job everywhere" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_fail)" abort 5 7
    expect_status 7
    [[ "$output" == *"rank 5: MPI_Abort"* ]]
    for s in "${CLUSTER_SOCKS[@]}"; do
        expect_no_live_jobs "$s"
    done
}

# MPI_ERRORS_ARE_FATAL (the default handler) ends the job, never an agent, and says which rank,
# which call and which error, also when that rank runs on a node other than the launcher's.
# bats test_tags=multinode
@test "multinode: MPI_ERRORS_ARE_FATAL on a remote node ends the job naming rank, function and error; the agents live on" {
    start_cluster 3
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_fail)" fatal 5 0
    [ "$status" -ne 0 ] || { echo "$output" >&2; return 1; }
    [[ "$output" == *"rank 5: MPI_Send: invalid rank 46 (MPI_ERR_RANK)"* ]] || {
        echo "$output" >&2
        return 1
    }
    for s in "${CLUSTER_SOCKS[@]}"; do
        expect_no_live_jobs "$s"
    done
    # every agent takes the next job
    run mlaunch --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog mn_ring)"
    expect_status 0
}

# bats test_tags=multinode
@test "multinode: a node that cannot load: no rank runs anywhere, the node is named" {
    start_cluster 2
    printf '[agent]\nmax_ranks = 1\n' >"$BATS_TEST_TMPDIR/small.conf"
    CLUSTER_PORTS+=("$(free_ports 1)")
    CLUSTER_N=3
    start_cluster_agent 3 --config "$BATS_TEST_TMPDIR/small.conf"
    mkdir "$BATS_TEST_TMPDIR/ran"
    run mlaunch --hostfile "$(cluster_hostfile 2)" -n 6 "$(prog mn_touch)" "$BATS_TEST_TMPDIR/ran"
    expect_status 1
    [[ "$output" == *"node 2 (127.0.0.1:${CLUSTER_PORTS[2]}): cannot load: a job needs 1 to 1 ranks"* ]]
    [ -z "$(ls "$BATS_TEST_TMPDIR/ran")" ]
}

# bats test_tags=multinode
@test "multinode: an unreachable node is named and nothing runs" {
    start_cluster 2
    local hf="$BATS_TEST_TMPDIR/hosts" dead
    dead=$(free_ports 1)
    cp "$CLUSTER_HOSTFILE" "$hf"
    echo "127.0.0.1 slots=2 port=$dead" >>"$hf"
    mkdir "$BATS_TEST_TMPDIR/ran"
    run mlaunch --hostfile "$hf" -n 6 "$(prog mn_touch)" "$BATS_TEST_TMPDIR/ran"
    expect_status 1
    [[ "$output" == *"node 2 (127.0.0.1:$dead): cannot connect"* ]]
    [ -z "$(ls "$BATS_TEST_TMPDIR/ran")" ]
}

# bats test_tags=multinode
@test "multinode: a host file of one host that is another agent: that agent runs the job, or the job fails naming it" {
    start_cluster 2
    local hf="$BATS_TEST_TMPDIR/hosts" dead
    # node2 alone, submitted to node1: node2 runs every rank (it used to be node1, quietly)
    echo "127.0.0.1 slots=2 port=${CLUSTER_PORTS[1]}" >"$hf"
    run mlaunch --hostfile "$hf" -n 2 "$(prog mn_hello)"
    expect_status 0
    [ "$(hello_lines)" = "$(printf 'rank %d of 2 on node2\n' 0 1)" ]
    # an agent that does not answer is named, and nothing runs here either
    dead=$(free_ports 1)
    echo "127.0.0.1 slots=2 port=$dead" >"$hf"
    mkdir "$BATS_TEST_TMPDIR/ran"
    run mlaunch --hostfile "$hf" -n 2 "$(prog mn_touch)" "$BATS_TEST_TMPDIR/ran"
    expect_status 1
    [[ "$output" == *"node 0 (127.0.0.1:$dead): cannot connect"* ]] || { echo "$output" >&2; false; }
    [ -z "$(ls "$BATS_TEST_TMPDIR/ran")" ]
}

# bats test_tags=multinode
@test "multinode: an agent with another key is refused and named" {
    start_cluster 2
    head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/other.key"
    chmod 600 "$BATS_TEST_TMPDIR/other.key"
    CLUSTER_PORTS+=("$(free_ports 1)")
    CLUSTER_N=3
    start_cluster_agent 3 --key-file "$BATS_TEST_TMPDIR/other.key"
    run mlaunch --hostfile "$(cluster_hostfile 2)" -n 6 "$(prog mn_hello)"
    expect_status 1
    [[ "$output" == *"node 2 (127.0.0.1:${CLUSTER_PORTS[2]}): cannot connect: the peer does not hold our cluster key"* ]]
}

# bats test_tags=multinode
@test "multinode: a member agent killed during the job: the launcher ends, the others stay healthy" {
    start_cluster 3
    local out="$BATS_TEST_TMPDIR/out" pid
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 6 \
        "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" started
    # the member's job is visible there, with its coordinator
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" --json jobs
    [[ "$output" == *'"coordinator":"node1"'* ]]
    kill -KILL "${AGENT_PIDS[node3]}"
    wait "${AGENT_PIDS[node3]}" || true
    unset "AGENT_PIDS[node3]"
    local status=0 t0=$SECONDS
    wait "$pid" || status=$?
    [ "$status" -ne 0 ]
    [ $((SECONDS - t0)) -le 10 ]
    grep -q "node 2 (127.0.0.1:${CLUSTER_PORTS[2]})" "$out" || { cat "$out"; false; }
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" status
    expect_status 0
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" status
    expect_status 0
    # a next job on the two survivors
    run mlaunch --hostfile "$(cluster_hostfile 2 | xargs head -n 2 >"$BATS_TEST_TMPDIR/two"; echo "$BATS_TEST_TMPDIR/two")" \
        -n 4 "$(prog mn_fail)" exit 3 9
    expect_status 9
}

# bats test_tags=multinode
@test "multinode: Ctrl-C of the launcher cancels every member" {
    start_cluster 3
    local out="$BATS_TEST_TMPDIR/out" pid
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 6 \
        "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" started
    kill -INT "$pid"
    local status=0
    wait "$pid" || status=$?
    [ "$status" -eq 143 ] || { cat "$out"; false; }
    grep -q "job cancelled" "$out"
    for s in "${CLUSTER_SOCKS[@]}"; do
        for _ in $(seq 1 50); do
            run tmpictl --agent "$s" --json jobs
            no_live_jobs 2>/dev/null && break
            sleep 0.1
        done
        no_live_jobs
    done
}

@test "multinode: an agent without a mesh refuses, no agent at all is a clear error" {
    start_agent plain
    run launch --agent "$AGENT_SOCK" -H "127.0.0.1:1,127.0.0.2:1" -n 2 "$(prog mn_hello)"
    expect_status 1
    [[ "$output" == *"this agent has no mesh"* ]]
    run launch --agent "$BATS_TEST_TMPDIR/nothing.sock" -H "127.0.0.1:1,127.0.0.2:1" -n 2 "$(prog mn_hello)"
    expect_status 1
    [[ "$output" == *"a job across several nodes needs a running tmpid with a mesh"* ]]
}
