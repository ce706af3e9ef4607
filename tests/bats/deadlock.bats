#!/usr/bin/env bats
# Deadlock detection and tmpictl ranks: programs that deadlock in the classic ways are
# reported with the right ranks, calls and tags (tmpi-launch --on-deadlock=report|abort), a
# correct program that only looks stuck is not, and tmpictl ranks shows where every rank of a
# stuck job waits, on one node and across agents.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
    # a short check interval: the tests wait for the report, never for a time
    printf '[agent]\ndeadlock_check_ms = 200\n' >"$BATS_TEST_TMPDIR/dl.conf"
}

teardown() {
    [ -z "${STOPPED:-}" ] || kill -CONT "$STOPPED" 2>/dev/null || true
    [ -z "${LPID:-}" ] || { kill -TERM "$LPID" 2>/dev/null; wait "$LPID" 2>/dev/null; } || true
    stop_all_agents
}

dl_agent() { start_agent a --config "$BATS_TEST_TMPDIR/dl.conf"; }
dlaunch() { launch --agent "$AGENT_SOCK" "$@"; }

# Waits (bounded, generously: a loaded machine, 5 times longer under make tsan) until FILE
# contains TEXT.
wait_for_text() {
    local i
    for i in $(seq 1 $((1200 * ${TMPI_TIMEOUT_MULTIPLIER:-1}))); do
        grep -q -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "no '$2' in $1:" >&2
    cat "$1" >&2
    return 1
}

# Starts a launcher in the background with report mode (the job stays): LPID, its stderr in
# $BATS_TEST_TMPDIR/err.  Returns once the deadlock was reported.
start_stuck() {
    local sock=$1
    shift
    "$LAUNCH_BIN" --agent "$sock" --on-deadlock=report "$@" >"$BATS_TEST_TMPDIR/out" \
        2>"$BATS_TEST_TMPDIR/err" &
    LPID=$!
    wait_for_text "$BATS_TEST_TMPDIR/err" "deadlock:"
}

# The id of the job tmpictl jobs shows running on SOCK.
running_id() {
    tmpictl --agent "$1" jobs | awk '$4 == "running" { print $1; exit }'
}

@test "deadlock: two ranks both receiving first are named with calls and tags (abort: 124)" {
    dl_agent
    run --separate-stderr dlaunch --on-deadlock=abort -n 2 "$(prog dl_recv_first)"
    expect_status 124
    [[ "$stderr" == *"deadlock: rank 0 in MPI_Recv(source 1, tag 7, MPI_COMM_WORLD) waits for rank 1; rank 1 in MPI_Recv(source 0, tag 7, MPI_COMM_WORLD) waits for rank 0"* ]] || {
        echo "stderr: $stderr" >&2
        false
    }
    # said once, not again as the job's end reason
    [ "$(grep -c deadlock <<<"$stderr")" -eq 1 ] || { echo "stderr: $stderr" >&2; false; }
}

@test "deadlock: a Barrier that rank 1 skips (threads and user-level switching)" {
    dl_agent
    local mode
    for mode in kernel user; do
        run --separate-stderr dlaunch --on-deadlock=abort -x TMPI_RANK_SWITCHING=$mode -n 4 \
            "$(prog dl_skip_barrier)"
        expect_status 124
        [[ "$stderr" == *"rank 0 in MPI_Barrier(MPI_COMM_WORLD) waits for rank 1; rank 1 in MPI_Recv(source 0, tag 3, MPI_COMM_WORLD) waits for rank 0"* ]] || {
            echo "$mode: $stderr" >&2
            false
        }
        [[ "$stderr" == *"rank 3 in MPI_Barrier(MPI_COMM_WORLD) waits for rank 1"* ]]
    done
    # a report longer than a job's end reason is still said once
    run --separate-stderr dlaunch --on-deadlock=abort -n 12 "$(prog dl_skip_barrier)"
    expect_status 124
    [[ "$stderr" == *"rank 11 in MPI_Barrier(MPI_COMM_WORLD) waits for rank 1"* ]] || {
        echo "stderr: $stderr" >&2
        false
    }
    [ "$(grep -c deadlock <<<"$stderr")" -eq 1 ] || { echo "stderr: $stderr" >&2; false; }
}

@test "deadlock: a synchronous or large send to a rank that waits on another tag" {
    dl_agent
    run --separate-stderr dlaunch --on-deadlock=abort -n 2 "$(prog dl_ssend_tag)"
    expect_status 124
    [[ "$stderr" == *"rank 0 in MPI_Ssend(dest 1, tag 1, MPI_COMM_WORLD) waits for rank 1; rank 1 in MPI_Recv(source 0, tag 2, MPI_COMM_WORLD) waits for rank 0"* ]] || {
        echo "stderr: $stderr" >&2
        false
    }
    run --separate-stderr dlaunch --on-deadlock=abort -n 2 "$(prog dl_ssend_tag)" large
    expect_status 124
    [[ "$stderr" == *"rank 0 in MPI_Send(dest 1, tag 1, MPI_COMM_WORLD) waits for rank 1; rank 1 in MPI_Recv(source 0, tag 2, MPI_COMM_WORLD) waits for rank 0"* ]] || {
        echo "stderr: $stderr" >&2
        false
    }
    run --separate-stderr dlaunch --on-deadlock=abort -n 2 "$(prog dl_ssend_tag)" isend
    expect_status 124
    [[ "$stderr" == *"rank 0 in MPI_Wait(dest 1, tag 1, MPI_COMM_WORLD) waits for rank 1; rank 1 in MPI_Recv(source 0, tag 2, MPI_COMM_WORLD) waits for rank 0"* ]] || {
        echo "stderr: $stderr" >&2
        false
    }
}

@test "deadlock: a long compute phase while the others wait is not reported" {
    dl_agent
    local n
    for n in 2 4; do
        run --separate-stderr dlaunch --on-deadlock=abort -n $n "$(prog slow_compute)" 3
        expect_status 0
        expect_line done
        [[ "$stderr" != *deadlock* ]] || { echo "reported: $stderr" >&2; false; }
    done
}

@test "deadlock: report (the default) prints once and the job goes on until its timeout" {
    dl_agent
    run --separate-stderr dlaunch --timeout 5 -n 2 "$(prog dl_recv_first)"
    expect_status 124
    [ "$(grep -c '^tmpi-launch: deadlock: rank 0 in MPI_Recv' <<<"$stderr")" -eq 1 ] || {
        echo "stderr: $stderr" >&2
        false
    }
    [[ "$stderr" == *"timed out after 5 s"* ]]
    run --separate-stderr dlaunch --on-deadlock report --timeout 5 -n 2 "$(prog dl_recv_first)"
    expect_status 124
    [[ "$stderr" == *"deadlock: rank 0"* ]]
}

@test "deadlock: --on-deadlock takes report or abort only" {
    run --separate-stderr launch --on-deadlock=maybe -n 1 /bin/true
    expect_status 2
    [[ "$stderr" == *"--on-deadlock maybe: expected report or abort"* ]]
    run --separate-stderr launch --on-deadlock
    expect_status 2
}

@test "deadlock: deadlock_check_ms is checked and 0 turns the watch off" {
    need_agent
    printf '[agent]\ndeadlock_check_ms = soon\n' >"$BATS_TEST_TMPDIR/bad.conf"
    run "$TMPID" --check-config "$BATS_TEST_TMPDIR/bad.conf"
    [ "$status" -ne 0 ]
    [[ "$output" == *"deadlock_check_ms"* ]] || { echo "$output" >&2; false; }
    printf '[agent]\ndeadlock_check_ms = 0\n' >"$BATS_TEST_TMPDIR/off.conf"
    start_agent off --config "$BATS_TEST_TMPDIR/off.conf"
    run --separate-stderr dlaunch --on-deadlock=abort --timeout 3 -n 2 "$(prog dl_recv_first)"
    expect_status 124
    [[ "$stderr" != *deadlock* ]] || { echo "reported with the watch off: $stderr" >&2; false; }
}

@test "tmpictl ranks: where every rank of a stuck job waits (table and --json)" {
    dl_agent
    start_stuck "$AGENT_SOCK" -n 3 "$(prog dl_skip_barrier)"
    local id
    id=$(running_id "$AGENT_SOCK")
    [ -n "$id" ]
    run tmpictl --agent "$AGENT_SOCK" ranks "$id"
    expect_status 0
    [[ "${lines[0]}" == "RANK"*"NODE"*"STATE"*"WAITING"*"CALL" ]]
    [[ "${lines[1]}" == "0 "*" waiting "*"MPI_Barrier(MPI_COMM_WORLD)" ]] || { echo "$output" >&2; false; }
    [[ "${lines[2]}" == "1 "*" waiting "*"MPI_Recv(source 0, tag 3, MPI_COMM_WORLD)" ]] || { echo "$output" >&2; false; }
    [[ "${lines[3]}" == "2 "*" waiting "*"MPI_Barrier(MPI_COMM_WORLD)" ]] || { echo "$output" >&2; false; }
    run tmpictl --agent "$AGENT_SOCK" --json ranks "$id"
    expect_status 0
    python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["job_id"] == sys.argv[1], r["job_id"]
ranks = r["ranks"]
assert [x["rank"] for x in ranks] == [0, 1, 2], ranks
one = ranks[1]
assert one["activity"] == "waiting" and one["call"] == "MPI_Recv", one
assert one["peer"] == 0 and one["tag"] == 3 and one["comm"] == "MPI_COMM_WORLD", one
assert one["waiting_sec"] > 0 and one["blocked"], one
assert ranks[0]["call"] == "MPI_Barrier" and ranks[0]["peer"] == -3, ranks[0]
' "$id" <<<"$output" || { echo "$output" >&2; false; }
}

@test "tmpictl ranks: a computing rank, and the errors" {
    dl_agent
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 "$(prog slow_compute)" 60 >"$BATS_TEST_TMPDIR/out" \
        2>&1 &
    LPID=$!
    local id="" i
    for i in $(seq 1 $((1200 * ${TMPI_TIMEOUT_MULTIPLIER:-1}))); do
        id=$(running_id "$AGENT_SOCK")
        [ -n "$id" ] && tmpictl --agent "$AGENT_SOCK" ranks "$id" | grep -q "MPI_Recv" && break
        sleep 0.1
    done
    run tmpictl --agent "$AGENT_SOCK" ranks "$id"
    expect_status 0
    [[ "${lines[1]}" == "0 "*" computing "*"-"*"-" ]] || { echo "$output" >&2; false; }
    [[ "${lines[2]}" == "1 "*" waiting "*"MPI_Recv(source 0, tag 5, MPI_COMM_WORLD)" ]] || { echo "$output" >&2; false; }
    run --separate-stderr tmpictl --agent "$AGENT_SOCK" ranks 999999
    expect_status 1
    [[ "$stderr" == "tmpictl: no job 999999 on this agent" ]] || { echo "$stderr" >&2; false; }
    run --separate-stderr tmpictl --agent "$AGENT_SOCK" ranks
    expect_status 2
    run --separate-stderr tmpictl --agent "$AGENT_SOCK" ranks x1
    expect_status 2
    [[ "$stderr" == *"a job id is a number"* ]]
}

@test "tmpictl ranks: only the job's owner and admins (as cancel)" {
    [ "$(id -u)" -eq 0 ] || skip "needs root to act as another user (setpriv)"
    command -v setpriv >/dev/null || skip "setpriv not installed"
    local as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    "${as_nobody[@]}" test -x "$TMPI_BUILD/launcher/tmpictl" ||
        skip "user nobody cannot reach the build tree ($TMPI_BUILD)"
    local dir
    dir=$(mktemp -d /tmp/tmpi-ranks.XXXXXX)
    chmod 755 "$dir"
    start_agent_bin "$TMPID" perm --socket "$dir/a.sock" --config "$BATS_TEST_TMPDIR/dl.conf"
    local sock="$dir/a.sock"
    start_stuck "$sock" -n 2 "$(prog dl_recv_first)"
    local id
    id=$(running_id "$sock")
    run "${as_nobody[@]}" "$TMPI_BUILD/launcher/tmpictl" --agent "$sock" ranks "$id"
    [ "$status" -eq 1 ]
    [[ "$output" == *"permission denied"* ]] || { echo "$output" >&2; false; }
    run tmpictl --agent "$sock" ranks "$id"
    expect_status 0
    kill -TERM "$LPID"
    wait "$LPID" || true
    LPID=
    stop_agent perm
    rm -rf "$dir"
}

# bats test_tags=multinode
@test "deadlock and tmpictl ranks across three agents" {
    start_cluster 3 --config "$BATS_TEST_TMPDIR/dl.conf"
    start_stuck "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog dl_skip_barrier)"
    grep -q "rank 0 in MPI_Barrier(MPI_COMM_WORLD) waits for rank 1; rank 1 in MPI_Recv(source 0, tag 3, MPI_COMM_WORLD) waits for rank 0" \
        "$BATS_TEST_TMPDIR/err" || { cat "$BATS_TEST_TMPDIR/err" >&2; false; }
    # node1's part of the job: the whole job, gathered by its coordinator
    local id
    id=$(running_id "${CLUSTER_SOCKS[0]}")
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" ranks "$id"
    expect_status 0
    [ "${#lines[@]}" -eq 7 ] || { echo "$output" >&2; false; }
    [[ "${lines[2]}" == "1 "*"node1"*" waiting "*"MPI_Recv(source 0, tag 3, MPI_COMM_WORLD)" ]] || { echo "$output" >&2; false; }
    [[ "${lines[3]}" == "2 "*"node2"*" waiting "*"MPI_Barrier(MPI_COMM_WORLD)" ]] || { echo "$output" >&2; false; }
    [[ "${lines[6]}" == "5 "*"node3"*" waiting "*"MPI_Barrier(MPI_COMM_WORLD)" ]] || { echo "$output" >&2; false; }
    # a member agent points at the coordinator
    id=$(running_id "${CLUSTER_SOCKS[1]}")
    run --separate-stderr tmpictl --agent "${CLUSTER_SOCKS[1]}" ranks "$id"
    expect_status 1
    [[ "$stderr" == *"coordinated by node1"* ]] || { echo "$stderr" >&2; false; }
    kill -TERM "$LPID"
    wait "$LPID" || true
    LPID=
    # abort ends the job on every node
    run --separate-stderr launch --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" \
        --on-deadlock=abort -n 6 "$(prog dl_recv_first)"
    expect_status 124
    [[ "$stderr" == *"deadlock: rank 0 in MPI_Recv(source 1, tag 7, MPI_COMM_WORLD) waits for rank 1; rank 1 in MPI_Recv(source 0, tag 7, MPI_COMM_WORLD) waits for rank 0"* ]] || {
        echo "stderr: $stderr" >&2
        false
    }
}

# bats test_tags=multinode
@test "deadlock: a long compute phase across agents is not reported" {
    start_cluster 2 --config "$BATS_TEST_TMPDIR/dl.conf"
    run --separate-stderr launch --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" \
        --on-deadlock=abort -n 4 "$(prog slow_compute)" 3
    expect_status 0
    expect_line done
    [[ "$stderr" != *deadlock* ]] || { echo "reported: $stderr" >&2; false; }
}

# bats test_tags=multinode
@test "deadlock: parents waiting for a spawned child that computes are not reported, on one node and across agents" {
    dl_agent
    run --separate-stderr dlaunch --on-deadlock=abort --universe-size 4 -n 2 "$(prog spawn)" slow 2
    expect_status 0
    expect_line "spawn ok"
    [[ "$stderr" != *deadlock* ]] || { echo "reported: $stderr" >&2; false; }
    start_cluster 2 --config "$BATS_TEST_TMPDIR/dl.conf"
    local hf
    hf=$(cluster_hostfile 2)
    # the child lands on node1's free slot, its parents on node1 and node2
    run --separate-stderr launch --agent "${CLUSTER_SOCKS[0]}" --hostfile "$hf" --map-by node \
        --on-deadlock=abort -n 2 "$(prog spawn)" slow 2
    expect_status 0
    expect_line "spawn ok"
    [[ "$stderr" != *deadlock* ]] || { echo "reported: $stderr" >&2; false; }
}

# bats test_tags=multinode
@test "tmpictl ranks: spawned ranks are listed where they run, on one node and across agents" {
    dl_agent
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" --universe-size 3 -n 2 "$(prog spawn)" slow 30 \
        >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
    LPID=$!
    wait_for_text "$BATS_TEST_TMPDIR/out" "child computing"
    local id
    id=$(running_id "$AGENT_SOCK")
    run tmpictl --agent "$AGENT_SOCK" ranks "$id"
    expect_status 0
    [ "${#lines[@]}" -eq 4 ] || { echo "$output" >&2; false; }
    [[ "${lines[3]}" == "2 "*" computing "* ]] || { echo "$output" >&2; false; }
    kill -TERM "$LPID"
    wait "$LPID" || true
    LPID=
    start_cluster 2 --config "$BATS_TEST_TMPDIR/dl.conf"
    local hf
    hf=$(cluster_hostfile 2)
    # ranks 0 and 1 fill node1, rank 2 is on node2 with the one free slot: the child's
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$hf" -n 3 "$(prog spawn)" slow 30 \
        >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
    LPID=$!
    wait_for_text "$BATS_TEST_TMPDIR/out" "child computing"
    # the coordinator's state follows its members' (running once every node said so)
    local i
    for i in $(seq 1 100); do
        id=$(running_id "${CLUSTER_SOCKS[0]}")
        [ -z "$id" ] || break
        sleep 0.1
    done
    [ -n "$id" ] || { tmpictl --agent "${CLUSTER_SOCKS[0]}" jobs >&2; false; }
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" ranks "$id"
    expect_status 0
    [ "${#lines[@]}" -eq 5 ] || { echo "$output" >&2; false; }
    [[ "${lines[4]}" == "3 "*"node2"*" computing "* ]] || { echo "$output" >&2; false; }
}

# bats test_tags=multinode
@test "tmpictl ranks: a node that does not answer is left out after query_timeout_ms, and named" {
    printf '[agent]\ndeadlock_check_ms = 200\n[mesh]\nquery_timeout_ms = 2000\n' \
        >"$BATS_TEST_TMPDIR/dlq.conf"
    start_cluster 3 --config "$BATS_TEST_TMPDIR/dlq.conf"
    start_stuck "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 6 "$(prog dl_skip_barrier)"
    local id
    id=$(running_id "${CLUSTER_SOCKS[0]}")
    # node3's agent stops answering (SIGSTOP by PID; continued in teardown)
    STOPPED=${AGENT_PIDS[node3]}
    kill -STOP "$STOPPED"
    run tmpictl --agent "${CLUSTER_SOCKS[0]}" ranks "$id"
    expect_status 0
    [ "${#lines[@]}" -eq 6 ] || { echo "$output" >&2; false; }
    [[ "${lines[4]}" == "3 "*"node2"* ]] || { echo "$output" >&2; false; }
    expect_line "(some ranks did not answer: 127.0.0.1:${CLUSTER_PORTS[2]}: no answer within 2000 ms (query_timeout_ms))"
    kill -CONT "$STOPPED"
    STOPPED=
}
