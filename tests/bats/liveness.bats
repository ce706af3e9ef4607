#!/usr/bin/env bats
# Liveness of the nodes of a job (docs/RELIABILITY.md): three agents on loopback, one of them
# stopped with SIGSTOP (by PID) during a job.  The job's agents exchange heartbeats over its
# mesh control connections, so a node that stops answering fails the job within the
# configured heartbeat_timeout_ms, naming the node; Ctrl-C and --timeout end the launcher
# within TMPI_CANCEL_GRACE whatever the nodes do.  Stopped agents are continued (SIGCONT)
# before they are stopped for good.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
    STOPPED=()
}

teardown() {
    local p
    for p in "${STOPPED[@]}"; do
        kill -CONT "$p" 2>/dev/null || true
    done
    stop_all_agents
}

# stop_node I: SIGSTOP node I's agent (continued again in teardown, or by cont_node).
stop_node() {
    local pid=${AGENT_PIDS[node$1]}
    kill -STOP "$pid"
    STOPPED+=("$pid")
}

cont_node() { kill -CONT "${AGENT_PIDS[node$1]}"; }

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

# wait_launcher PID MAX: waits for the launcher; sets status; fails when it did not end
# within MAX seconds (then it is killed, by PID, so a hang fails instead of blocking).
wait_launcher() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -KILL "$1" 2>/dev/null || true
        wait "$1" 2>/dev/null || true
        echo "expected the launcher to end within $2 s; it was still running" >&2
        return 1
    fi
    status=0
    wait "$1" || status=$?
}

# no_jobs SOCK: the agent there runs no job (waits up to 5 s for it to get there); jobs that
# ended may still be listed (state "ended", for ended_job_keep).
no_jobs() {
    local i
    for i in $(seq 1 50); do
        run tmpictl --agent "$1" --json jobs
        python3 -c 'import json,sys; sys.exit(any(j["state"] != "ended" for j in json.load(sys.stdin)["jobs"]))' \
            <<<"$output" && return 0
        sleep 0.1
    done
    echo "expected no job on $1, got: $output" >&2
    return 1
}

# nothing_lost_exe: tests/mpi/nothing_lost.c, built once per file; prints its path.
nothing_lost_exe() {
    local exe="$BATS_FILE_TMPDIR/nothing_lost"
    [ -x "$exe" ] || tmpicc -o "$exe" "$TMPI_SRC/tests/mpi/nothing_lost.c" >&2
    echo "$exe"
}

# start_nothing_lost HOSTFILE N M: nothing_lost on N ranks, M messages each, submitted to node 1
# in the background (the caller's pid; its output in the caller's $out), once it sends.
start_nothing_lost() {
    local exe
    exe=$(nothing_lost_exe)
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$1" -n "$2" "$exe" "" "$3" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" "nothing_lost: seed"
    sleep 0.5
}

# expect_nothing_lost COUNT: the launcher (wait_launcher's status) ended with 0, COUNT
# messages checked, OK, and no sanitizer report.
expect_nothing_lost() {
    if [ "$status" -ne 0 ] || ! grep -qx OK "$out" || ! grep -q "$1 messages checked" "$out" ||
        grep -qE 'WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error:' "$out"; then
        echo "expected status 0, $1 messages checked, OK and no sanitizer report; got status $status:" >&2
        cat "$out" >&2
        return 1
    fi
}

# expect_end STATUS TEXT: the launcher (wait_launcher's status) ended with STATUS and said
# TEXT (a grep pattern) in $out.
expect_end() {
    [ "$status" -eq "$1" ] || { echo "expected status $1, got $status" >&2; cat "$out" >&2; return 1; }
    grep -q -- "$2" "$out" || { echo "expected '$2', got:" >&2; cat "$out" >&2; return 1; }
}

two_nodes() {
    head -n 2 "$(cluster_hostfile 2)" >"$BATS_TEST_TMPDIR/two"
    echo "$BATS_TEST_TMPDIR/two"
}

hb_conf() {
    printf '[mesh]\nheartbeat_timeout_ms = %s\n' "$1" >"$BATS_TEST_TMPDIR/hb.conf"
    echo "$BATS_TEST_TMPDIR/hb.conf"
}

# bats test_tags=multinode
@test "liveness: a stopped member fails the job within the heartbeat timeout, naming the node; the others run the next job" {
    start_cluster 3 --config "$(hb_conf 3000)"
    local out="$BATS_TEST_TMPDIR/out" pid
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 6 \
        "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" started
    stop_node 3
    # 3 s of silence, a heartbeat tick late at most, and slack for a loaded machine
    wait_launcher "$pid" 10 || { cat "$out"; false; }
    expect_end 1 "node 127.0.0.1:${CLUSTER_PORTS[2]} stopped answering for 3 s"
    no_jobs "${CLUSTER_SOCKS[0]}"
    no_jobs "${CLUSTER_SOCKS[1]}"
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$(two_nodes)" -n 4 \
        "$(prog mn_ring)"
    expect_status 0
    expect_line "ring ok 4"
    # continued, the third node drops its part of the failed job and takes the next one
    cont_node 3
    no_jobs "${CLUSTER_SOCKS[2]}"
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" \
        -n 6 "$(prog mn_ring)"
    expect_status 0
    expect_line "ring ok 6"
}

# bats test_tags=multinode
@test "liveness: a stopped coordinator: its members tear their parts down, Ctrl-C ends the launcher" {
    start_cluster 3 --config "$(hb_conf 3000)"
    local out="$BATS_TEST_TMPDIR/out" pid
    TMPI_CANCEL_GRACE=2 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" \
        -n 6 "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" started
    stop_node 1
    # the members lose the coordinator within its heartbeat timeout
    sleep 4
    no_jobs "${CLUSTER_SOCKS[1]}"
    no_jobs "${CLUSTER_SOCKS[2]}"
    local n
    for n in 2 3; do
        grep -q "(node1) stopped answering for 3 s" "$BATS_TEST_TMPDIR/node$n.log" || {
            echo "node$n did not report its coordinator stopped; its log:" >&2
            cat "$BATS_TEST_TMPDIR/node$n.log" >&2
            false
        }
    done
    # the launcher's own agent answers nothing: Ctrl-C still ends it within the grace
    kill -INT "$pid"
    wait_launcher "$pid" 6 || { cat "$out"; false; }
    [ "$status" -eq 130 ] || { echo "expected status 130, got $status" >&2; cat "$out"; false; }
    grep -q "did not report the job's end within 2 s of the cancel" "$out" || { cat "$out"; false; }
    cont_node 1
    no_jobs "${CLUSTER_SOCKS[0]}"
}

# bats test_tags=multinode
@test "liveness: Ctrl-C with a stopped member ends the launcher within TMPI_CANCEL_GRACE; the local agent tears its part down" {
    # the default heartbeat timeout (20 s) is far longer than the grace
    start_cluster 3
    local out="$BATS_TEST_TMPDIR/out" pid
    TMPI_CANCEL_GRACE=2 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" \
        -n 6 "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" started
    stop_node 3
    kill -INT "$pid"
    wait_launcher "$pid" 6 || { cat "$out"; false; }
    [ "$status" -eq 130 ] || { echo "expected status 130, got $status" >&2; cat "$out"; false; }
    grep -q "did not report the job's end within 2 s of the cancel" "$out" || { cat "$out"; false; }
    no_jobs "${CLUSTER_SOCKS[0]}"
    no_jobs "${CLUSTER_SOCKS[1]}"
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$(two_nodes)" -n 4 \
        "$(prog mn_ring)"
    expect_status 0
}

# bats test_tags=multinode
@test "liveness: --timeout with a stopped member ends the launcher with 124 within the grace" {
    start_cluster 3
    local out="$BATS_TEST_TMPDIR/out" pid
    TMPI_CANCEL_GRACE=2 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" \
        --timeout 3 -n 6 "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" started
    stop_node 3
    wait_launcher "$pid" 8 || { cat "$out"; false; }
    [ "$status" -eq 124 ] || { echo "expected status 124, got $status" >&2; cat "$out"; false; }
    grep -q "within 2 s of its 3 s timeout" "$out" || { cat "$out"; false; }
    no_jobs "${CLUSTER_SOCKS[0]}"
    no_jobs "${CLUSTER_SOCKS[1]}"
}

@test "liveness: TMPI_CANCEL_GRACE and heartbeat_timeout_ms are checked" {
    TMPI_CANCEL_GRACE=0 run launch -n 1 /bin/true
    expect_status 2
    [[ "$output" == *"TMPI_CANCEL_GRACE=0: not a whole number of seconds from 1 to 3600"* ]]
    TMPI_CANCEL_GRACE=x run launch -n 1 /bin/true
    expect_status 2
    need_agent
    printf '[mesh]\nheartbeat_timeout_ms = 100\n' >"$BATS_TEST_TMPDIR/bad.conf"
    run "$TMPID" --socket "$BATS_TEST_TMPDIR/x.sock" --config "$BATS_TEST_TMPDIR/bad.conf"
    [ "$status" -ne 0 ]
    [[ "$output" == *"bad value for [mesh] heartbeat_timeout_ms"* ]] || {
        echo "expected a bad-value error, got: $output" >&2
        false
    }
}

# tests/mpi/nothing_lost.c across the agents while one of them is stopped for less than the
# heartbeat timeout: the job must finish with every message delivered once, in order.
# bats test_tags=multinode
@test "liveness: nothing lost when a member is stopped and continued within the heartbeat timeout" {
    printf '[pool]\nsize = 4K\n[mesh]\nheartbeat_timeout_ms = 8000\n' >"$BATS_TEST_TMPDIR/tiny.conf"
    start_cluster 3 --config "$BATS_TEST_TMPDIR/tiny.conf"
    local out="$BATS_TEST_TMPDIR/out" pid
    start_nothing_lost "$(cluster_hostfile 4)" 12 300
    stop_node 2
    sleep 2
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "the job ended before the agent was continued (make it longer):" >&2
        cat "$out" >&2
        false
    fi
    cont_node 2
    wait_launcher "$pid" 180 || { cat "$out"; false; }
    expect_nothing_lost 3600
}

# kill_data_links I: resets every TCP connection of node I's job process (its data links: the
# agents' own connections stay), as a transient fault would: ss -K on each connection's
# addresses and ports, once both links are up (a reconnect may still be on its way on a slow
# machine).  Prints how many it reset.
kill_data_links() {
    local agent=${AGENT_PIDS[node$1]} host n=0 src dst i
    host=$(pgrep -P "$agent" | head -n 1)
    [ -n "$host" ] || {
        echo "node $1 runs no job process" >&2
        return 1
    }
    for i in $(seq 1 200); do
        (($(ss -tnpH state established | grep -c "pid=$host,") >= 2)) && break
        sleep 0.1
    done
    while read -r src dst; do
        ss -K -tn src "$src" dst "$dst" >/dev/null 2>&1 || true
        n=$((n + 1))
    done < <(ss -tnpH state established | awk -v p="pid=$host," 'index($0, p) { print $3, $4 }')
    echo "$n"
}

# The data links of a running 2-node job are reset twice (from either end) while nothing_lost
# sends: each time both job processes ask their agents for the link anew, the links resend
# what was not acknowledged, and every message arrives once, in order, with its bytes.
# bats test_tags=multinode
@test "liveness: data links reset twice during a 2-node job are reconnected; nothing lost" {
    # a short budget: a reconnect left waiting for an answer that came fails the job (above)
    start_cluster 2 --config "$(reconnect_conf 4000)"
    local out="$BATS_TEST_TMPDIR/out" pid n m=3000
    # a sanitizer build is slower by far: fewer messages still outlast the two resets (400 did
    # not always: under ASan a job ended while its links came back from the first)
    [ -z "$(build_sanitizer)" ] || m=1200
    start_nothing_lost "$CLUSTER_HOSTFILE" 4 "$m"
    n=$(kill_data_links 1)
    [ "$n" -ge 2 ] || { echo "expected 2 data links of node 1, reset $n" >&2; cat "$out"; false; }
    sleep 1
    kill -0 "$pid" 2>/dev/null || { echo "the job ended before the second reset:" >&2; cat "$out"; false; }
    n=$(kill_data_links 2)
    [ "$n" -ge 2 ] || { echo "expected 2 data links of node 2, reset $n" >&2; cat "$out"; false; }
    wait_launcher "$pid" 180 || { cat "$out"; false; }
    expect_nothing_lost $((4 * m))
    # the job processes said what happened, through their agents' logs
    grep -q "broke .*reconnecting" "$BATS_TEST_TMPDIR/node1.log"
    grep -q "broke .*reconnecting" "$BATS_TEST_TMPDIR/node2.log"
}

# One-sided traffic (tests/mpi/rma_steady.c: Put, flush, Get back, compare) across data links
# reset twice: on OFI the Puts and Gets are remote writes and reads, and one in flight at a
# reset completes with an error from the provider; it goes again once the link is back (before,
# the window failed with MPI_ERR_OTHER), and every block read back is the one put.
# bats test_tags=multinode
@test "liveness: one-sided Puts and Gets across data links reset twice are carried out; every block checked" {
    # A budget shorter than the job's run after the resets: a link whose peer's answer was
    # dropped (relink said rejoining after on_rejoin had run) stays broken and fails the job
    # within the run, not only when a slow run outlasted the 20 s default.
    start_cluster 2 --config "$(reconnect_conf 4000)"
    local out="$BATS_TEST_TMPDIR/out" pid n exe="$BATS_FILE_TMPDIR/rma_steady"
    tmpicc -o "$exe" "$TMPI_SRC/tests/mpi/rma_steady.c"
    # 100 rounds at least, and 8 s: it outlasts both resets on a fast link too
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe" 100 8 \
        >"$out" 2>&1 &
    pid=$!
    wait_for_text "$out" "rma_steady: started"
    sleep 0.5
    n=$(kill_data_links 1)
    [ "$n" -ge 2 ] || { echo "expected 2 data links of node 1, reset $n" >&2; cat "$out"; false; }
    sleep 1
    kill -0 "$pid" 2>/dev/null || { echo "the job ended before the second reset:" >&2; cat "$out"; false; }
    n=$(kill_data_links 2)
    [ "$n" -ge 2 ] || { echo "expected 2 data links of node 2, reset $n" >&2; cat "$out"; false; }
    wait_launcher "$pid" 180 || { cat "$out"; false; }
    expect_end 0 "rma_steady: [0-9]* rounds checked"
    grep -qx OK "$out" || { echo "expected OK, got:" >&2; cat "$out" >&2; false; }
}

# A node that stops (its agent and its job process, SIGSTOP) while its data links carry
# traffic: the links cannot be reconnected, and the job fails on the heartbeat with the node
# named as stopped, not as a data link fault.
# bats test_tags=multinode
@test "liveness: a node stopped during traffic fails the job as 'stopped answering', not as a link fault" {
    start_cluster 2 --config "$(hb_conf 3000)"
    local out="$BATS_TEST_TMPDIR/out" pid p
    start_nothing_lost "$CLUSTER_HOSTFILE" 4 100000
    for p in $(pgrep -P "${AGENT_PIDS[node2]}"); do
        kill -STOP "$p"
        STOPPED+=("$p")
    done
    stop_node 2
    wait_launcher "$pid" 15 || { cat "$out"; false; }
    expect_end 1 "node 127.0.0.1:${CLUSTER_PORTS[1]} stopped answering for 3 s"
}

# The job process of the other node dies (SIGKILL) while the links carry traffic: the links
# break, and the job ends with the message of that node's agent naming the process and the
# signal, not with a reconnect timeout.
# bats test_tags=multinode
@test "liveness: a peer job process that dies during traffic ends the job with a message naming its node" {
    start_cluster 2
    local out="$BATS_TEST_TMPDIR/out" pid host
    start_nothing_lost "$CLUSTER_HOSTFILE" 4 100000
    host=$(pgrep -P "${AGENT_PIDS[node2]}" | head -n 1)
    [ -n "$host" ] || { echo "node 2 runs no job process" >&2; false; }
    kill -KILL "$host"
    wait_launcher "$pid" 15 || { cat "$out"; false; }
    [ "$status" -ne 0 ] || { echo "expected a failure, got status 0" >&2; cat "$out"; false; }
    grep -q "the job's process on node2 was killed by signal 9" "$out" || {
        echo "expected node2's job process named, got:" >&2
        cat "$out" >&2
        false
    }
}

# 30 % of all packets between the two hosts of a job dropped for 10 s (tests/bats/lossy_link.py,
# the soak's emulated network; root), with heartbeat_timeout_ms 10000 and so a data link's TCP
# user timeout of 5 s: links time out under that loss (before, the job failed) and are
# reconnected; the agents' own connections hold, and nothing is lost.
@test "liveness: 30 % packet loss for 10 s does not fail a 2-node job; nothing lost" {
    [ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, TUN devices)"
    [ -c /dev/net/tun ] || skip "no /dev/net/tun"
    run timeout 400 "$TMPI_SRC/tests/bats/lossy_link.py" --build "$TMPI_BUILD" --loss 0.3 \
        --seconds 10 --config "$(hb_conf 10000)" "$(nothing_lost_exe)" "" 6000
    echo "$output"
    expect_status 0
    expect_line OK
    [[ "$output" == *"24000 messages checked"* ]]
}

# lossy: tests/bats/lossy_link.py across two emulated hosts (root), the job nothing_lost.
lossy() {
    [ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, TUN devices)"
    [ -c /dev/net/tun ] || skip "no /dev/net/tun"
    run timeout 400 "$TMPI_SRC/tests/bats/lossy_link.py" --build "$TMPI_BUILD" "$@" \
        "$(nothing_lost_exe)" "" 1000
    echo "$output"
    expect_status 0
    expect_line OK
    [[ "$output" == *"4000 messages checked"* ]]
}

# The first handshakes of a job's two data links never complete (every packet of those two
# connections dropped): the agent dials them again within link_reconnect_timeout_ms, as it
# does a broken link, and the job runs (before, it failed with "cannot connect to node 1 ...:
# handshake timed out", the soak's one failed job).
@test "liveness: a job whose first data link handshakes are cut dials them again and runs" {
    lossy --seconds 0 --blackhole 2 --blackhole 3 --config "$(hb_conf 10000)"
    [[ "$output" == *"connections [2, 3] of "*" cut"* ]]
    [[ "$output" == *"channel 1: handshake timed out; trying again"* ]]
    [[ "$output" == *"channel 2: handshake timed out; trying again"* ]]
}

# The same for the coordinator's control connection to the other node.
@test "liveness: a job whose control connection handshake is cut connects again and runs" {
    lossy --seconds 0 --blackhole 1 --config "$(hb_conf 10000)"
    [[ "$output" == *"connections [1] of "*" cut"* ]]
    [[ "$output" == *"node 1 (192.0.2.2:7470): cannot connect: handshake timed out; trying again"* ]]
}

# 30 % of all packets dropped from before the job is submitted, for 10 s: its connections,
# data links and hellos are set up under the loss (before, a third of such jobs failed with
# "cannot set up the link ...: it closed the link" or "handshake timed out").  The default
# heartbeat timeout (20 s): the program's upload to the other node also crosses the loss, and
# with 10 s a member once heard nothing from its coordinator for that long at a load of 148
# (TCP's retransmission backing off) and tore its part down.
@test "liveness: a 2-node job started under 30 % packet loss runs; nothing lost" {
    lossy --from-start --loss 0.3 --seconds 10
}

# job_host I: the PID of node I's job process.
job_host() {
    local host
    host=$(pgrep -P "${AGENT_PIDS[node$1]}" | head -n 1)
    [ -n "$host" ] || {
        echo "node $1 runs no job process" >&2
        return 1
    }
    echo "$host"
}

# stop_host_reset I J: SIGSTOP node I's job process (not its agent), then reset node J's data
# links, so that they must be reconnected while the process at I cannot answer.
stop_host_reset() {
    local host n
    host=$(job_host "$1")
    kill -STOP "$host"
    STOPPED+=("$host")
    n=$(kill_data_links "$2")
    [ "$n" -ge 2 ] || {
        echo "expected 2 data links of node $2, reset $n" >&2
        return 1
    }
}

reconnect_conf() {
    printf '[mesh]\nlink_reconnect_timeout_ms = %s\n' "$1" >"$BATS_TEST_TMPDIR/rc.conf"
    echo "$BATS_TEST_TMPDIR/rc.conf"
}

# A peer job process that is stopped (SIGSTOP; its agent runs on) while its links are
# reconnected cannot answer on the new sockets its agent hands it: the job ends within
# link_reconnect_timeout_ms (3 s) and the kill grace, naming that process's node; from either
# end (node 2 stopped: node 1 dials and waits for its answer; node 1 stopped: node 2 waits for
# node 1 to dial).  Before, a reconnect counted as done once the socket was handed over, and
# the job hung until --timeout.
# On OFI too: a rank's send to the stopped process no longer waits in the provider's full
# queue with its link's send lock held (tp_ofi.c "Queueing"), which kept the reattach that
# starts the budget's wait for the peer's answer from running.
# bats test_tags=multinode
@test "liveness: a peer job process stopped during a reconnect ends the job within the reconnect budget, naming its node" {
    start_cluster 2 --config "$(reconnect_conf 3000)"
    local out="$BATS_TEST_TMPDIR/out" pid stopped other
    for stopped in 2 1; do
        other=$((3 - stopped))
        start_nothing_lost "$CLUSTER_HOSTFILE" 4 100000
        stop_host_reset "$stopped" "$other" || { kill -KILL "$pid"; cat "$out"; false; }
        # 3 s of budget, 1 s of grace, slack for a loaded machine
        wait_launcher "$pid" 15 || { cat "$out"; false; }
        expect_end 1 "the job's process on node$stopped stopped answering"
        no_jobs "${CLUSTER_SOCKS[0]}"
        no_jobs "${CLUSTER_SOCKS[1]}"
    done
}

# Continued within the budget, the stopped process takes its new sockets and the job completes
# with nothing lost.
# bats test_tags=multinode
@test "liveness: a peer job process stopped during a reconnect and continued in time: the job completes, nothing lost" {
    start_cluster 2 --config "$(reconnect_conf 8000)"
    local out="$BATS_TEST_TMPDIR/out" pid host m=3000
    [ -z "$(build_sanitizer)" ] || m=400
    start_nothing_lost "$CLUSTER_HOSTFILE" 4 "$m"
    host=$(job_host 2)
    stop_host_reset 2 1 || { kill -KILL "$pid"; cat "$out"; false; }
    sleep 2
    kill -CONT "$host"
    wait_launcher "$pid" 180 || { cat "$out"; false; }
    expect_nothing_lost $((4 * m))
    grep -q "broke .*reconnecting" "$BATS_TEST_TMPDIR/node1.log"
}
