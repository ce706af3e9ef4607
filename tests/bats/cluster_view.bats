#!/usr/bin/env bats
# The cluster view (issue 19): tmpictl nodes and tmpictl jobs --all from any node of a mesh of
# three loopback agents, one job id on every node of a job, and cancelling by it on a member.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() {
    # a stopped agent must go on again to be stopped for good
    local n
    for n in "${!AGENT_PIDS[@]}"; do kill -CONT "${AGENT_PIDS[$n]}" 2>/dev/null || true; done
    stop_all_agents
}

# Waits (bounded) until FILE contains TEXT.
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

# nodes_states: NAME=STATE for every node of $output (tmpictl --json nodes), sorted by name,
# and which one answered as "self".
nodes_states() {
    python3 -c '
import json, sys
r = json.load(sys.stdin)
for n in sorted(r["nodes"], key=lambda n: n["address"]):
    print("%s=%s%s" % (n["address"], n["state"], " self" if n["self"] else ""))' <<<"$output"
}

# The states as expected: ADDR=STATE for node i given as STATE i (in node order).
expect_states() {
    local self=$1 i want=() got mark
    shift
    for ((i = 1; i <= CLUSTER_N; i++)); do
        mark=""
        [ "$i" != "$self" ] || mark=" self"
        want+=("127.0.0.1:${CLUSTER_PORTS[i - 1]}=${!i}$mark")
    done
    got=$(nodes_states)
    [ "$got" = "$(printf '%s\n' "${want[@]}" | sort)" ] ||
        { echo "expected:"; printf '%s\n' "${want[@]}" | sort; echo "got:"; echo "$got"; echo "$output"; false; }
}

# bats test_tags=multinode
@test "tmpictl nodes: every agent of the mesh from any node, with its state, jobs and load" {
    start_cluster 3
    local i
    for i in 1 2 3; do
        run tmpictl --agent "${CLUSTER_SOCKS[i - 1]}" --json nodes
        expect_status 0
        expect_states "$i" up up up
    done
    python3 -c '
import json, sys
r = json.load(sys.stdin)
assert sorted(n["name"] for n in r["nodes"]) == ["node1", "node2", "node3"], r
for n in r["nodes"]:
    assert n["jobs"] == 0 and n["ranks"] == 0 and n["ncpus"] >= 1 and n["load1"] >= 0, n
    assert n["version"] and n["node_number"] >= 1, n
' <<<"$output"
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" nodes
    expect_status 0
    [[ "${lines[0]}" == NAME*ADDRESS*STATE*JOBS*RANKS*LOAD* ]] || { echo "$output"; false; }
    [[ "$output" == *"node1 "*"127.0.0.1:${CLUSTER_PORTS[0]}"*" up "*"(this agent)"* ]] || { echo "$output"; false; }
}

# bats test_tags=multinode
@test "tmpictl nodes: a killed agent is down, a stopped one times out after query_timeout_ms, the rest stay up" {
    printf '[mesh]\nquery_timeout_ms = 1500\n' >"$BATS_TEST_TMPDIR/q.conf"
    start_cluster 3 --config "$BATS_TEST_TMPDIR/q.conf"
    stop_agent node2
    kill -STOP "${AGENT_PIDS[node3]}"
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" --json nodes
    expect_status 0
    expect_states 1 up down timeout
    [[ "$output" == *"no answer within 1500 ms (query_timeout_ms)"* ]] || { echo "$output"; false; }
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" nodes
    expect_status 0
    [[ "$output" == *"127.0.0.1:${CLUSTER_PORTS[1]}"*" down "* ]] || { echo "$output"; false; }
    kill -CONT "${AGENT_PIDS[node3]}"
    run tmpictl --agent "${CLUSTER_SOCKS[2]}" --json nodes
    expect_status 0
    expect_states 3 up down up
}

# bats test_tags=multinode
@test "tmpictl: a job across two nodes has one id everywhere, jobs --all lists it once, a member cancels it" {
    start_cluster 3 --log-level info
    local out="$BATS_TEST_TMPDIR/out" pid two="$BATS_TEST_TMPDIR/two"
    head -n 2 "$CLUSTER_HOSTFILE" >"$two"
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$two" -n 4 "$(prog sleeper)" \
        >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" started
    # the same id, a string in JSON, on both nodes of the job
    local id1 id2
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" --json jobs
    id1=$(python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; assert len(j)==1 and isinstance(j[0]["id"], str), j; print(j[0]["id"])' <<<"$output")
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" --json jobs
    id2=$(python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; assert len(j)==1, j; print(j[0]["id"])' <<<"$output")
    [ -n "$id1" ] && [ "$id1" = "$id2" ] || { echo "node1 says '$id1', node2 '$id2'"; false; }
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" jobs
    [[ "${lines[1]}" == "$id1 "* ]] || { echo "$output"; false; }
    # jobs --all from the node that has no part of it: once, with both nodes and all 4 ranks
    run tmpictl --agent "${CLUSTER_SOCKS[2]}" --json jobs --all
    expect_status 0
    python3 -c '
import json, sys
r = json.load(sys.stdin)
j = [x for x in r["jobs"] if x["state"] != "ended"]
assert len(j) == 1, r
assert j[0]["id"] == sys.argv[1] and j[0]["nprocs"] == 4 and sorted(j[0]["nodes"]) == ["node1", "node2"], j
assert sorted(n["state"] for n in r["nodes"]) == ["up", "up", "up"], r["nodes"]
' "$id1" <<<"$output"
    run tmpictl --agent "${CLUSTER_SOCKS[2]}" jobs --all
    expect_status 0
    [[ "$output" == *"$id1 "*"node1,node2"* || "$output" == *"$id1 "*"node2,node1"* ]] || { echo "$output"; false; }
    # the member node cancels the whole job by that id
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" --json cancel "$id1"
    expect_status 0
    [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$output")" = "$id1" ]
    local st=0
    wait "$pid" || st=$?
    [ "$st" -eq 143 ] || { echo "expected 143, got $st:"; cat "$out"; false; }
    grep -q "job cancelled by uid $(id -u)" "$out" || { cat "$out"; false; }
    # both nodes' logs name the job by the same id
    grep -q "job $id1: 4 ranks of .*across 2 nodes" "$BATS_TEST_TMPDIR/node1.log" ||
        { cat "$BATS_TEST_TMPDIR/node1.log"; false; }
    grep -q "job $id1" "$BATS_TEST_TMPDIR/node2.log" || { cat "$BATS_TEST_TMPDIR/node2.log"; false; }
}

# bats test_tags=multinode
@test "tmpictl jobs --all: a node that is down is reported, the others' jobs listed" {
    start_cluster 3
    stop_agent node3
    run --separate-stderr tmpictl --agent "${CLUSTER_SOCKS[0]}" jobs --all
    expect_status 0
    [[ "$stderr" == *"127.0.0.1:${CLUSTER_PORTS[2]}) is down"*"its jobs are not listed"* ]] || { echo "$stderr"; false; }
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" nodes --all
    expect_status 2
    [[ "$output" == *"--all goes with jobs only"* ]]
}

# bats test_tags=multinode
@test "tmpictl nodes: an agent without peers lists itself" {
    start_cluster 1
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" --json nodes
    expect_status 0
    expect_states 1 up
}

# bats test_tags=multinode
@test "job ids: [mesh] node_number is their high part; two agents with one number refuse a clash" {
    local conf="$BATS_TEST_TMPDIR/node.conf" out="$BATS_TEST_TMPDIR/out" pid
    printf '[mesh]\nnode_number = 7\n' >"$conf"
    start_cluster 2 --config "$conf"
    # node1's first job: 7 * 10^9 + 1
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" -n 1 "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" started
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" --json jobs
    [[ "$output" == *'"id":"7000000001"'* ]] || { echo "$output"; false; }
    # node2's first job has the same id and a part on node1: node1 refuses it, naming the cause
    printf '127.0.0.1 slots=1 port=%s\n127.0.0.1 slots=1 port=%s\n' "${CLUSTER_PORTS[1]}" \
        "${CLUSTER_PORTS[0]}" >"$BATS_TEST_TMPDIR/hosts"
    run launch --agent "${CLUSTER_SOCKS[1]}" --hostfile "$BATS_TEST_TMPDIR/hosts" -n 2 "$(prog mn_hello)"
    [ "$status" -ne 0 ]
    [[ "$output" == *"job id 7000000001 is taken on node1"*"node_number"* ]] || { echo "$output"; false; }
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" cancel 7000000001
    expect_status 0
    wait "$pid" || true
}
