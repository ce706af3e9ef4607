#!/usr/bin/env bats
# Careless programs (docs/RELIABILITY.md, "Careless programs"): what a program should not do
# still ends with its job, whole, and leaves nothing behind in the agent.  Each test fails
# without its feature: the output would be lost, the job would hang, or the agent would keep
# the job's threads, memory, files or max_jobs slot.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    mkdir -p "$BATS_FILE_TMPDIR/progs"
    "$TMPI_BUILD/launcher/tmpicc" -o "$BATS_FILE_TMPDIR/progs/careless" \
        "$TMPI_SRC/tests/bats/progs/careless.c"
    export CARELESS="$BATS_FILE_TMPDIR/progs/careless"
}

teardown() {
    [ -z "${LAUNCHER_PID:-}" ] || { kill -KILL "$LAUNCHER_PID" 2>/dev/null || true; wait "$LAUNCHER_PID" 2>/dev/null || true; }
    stop_cluster
    stop_all_agents
}

# agent_with CONF: a real agent with that tmpid.conf; sets SOCK and APID.
agent_with() {
    local conf="$BATS_TEST_TMPDIR/tmpid.conf"
    printf '%b' "$1" >"$conf"
    start_agent a --config "$conf"
    SOCK=$AGENT_SOCK
    APID=${AGENT_PIDS[a]}
}

# The agent's child processes (its job hosts), one PID a line.
agent_children() { cat /proc/"$APID"/task/*/children | tr ' ' '\n' | sed '/^$/d'; }

# Waits (up to 60 s) until the agent has no child process left.
wait_no_children() {
    local i
    for ((i = 0; i < 600; i++)); do [ -z "$(agent_children)" ] && return 0; sleep 0.1; done
    echo "the agent still has children after 60 s: $(agent_children | tr '\n' ' ')" >&2
    return 1
}

# check_bigwrite FILE N: FILE holds one line of N-1 'x' and the line "OK", in either order.
check_bigwrite() {
    local f=$1 n=$2 lens
    lens=$(awk '{ print length($0) }' "$f" | sort -n | tr '\n' ' ')
    [ "$lens" = "2 $((n - 1)) " ] || { echo "expected lines of 2 and $((n - 1)) bytes, got lengths: $lens" >&2; return 1; }
    grep -qx OK "$f" || { echo "no OK line" >&2; return 1; }
    local other
    other=$(grep -vx OK "$f" | tr -d 'x\n' | wc -c)
    [ "$other" -eq 0 ] || { echo "the long line has $other bytes that are not 'x'" >&2; return 1; }
}

fd_count() { ls /proc/"$1"/fd | wc -l; }
rss_kib() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/"$1"/status; }

@test "careless: one write(2) of 4 MiB, 8 MiB + 1 and 32 MiB reaches the launcher whole" {
    agent_with '[agent]\n'
    local n out="$BATS_TEST_TMPDIR/out"
    for n in 4194304 8388609 33554432; do
        run --separate-stderr timeout 120 "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$CARELESS" bigwrite "$n"
        [ "$status" -eq 0 ] || { echo "size $n: status $status, stderr: $stderr"; false; }
        printf '%s\n' "$output" >"$out"
        check_bigwrite "$out" "$n"
    done
    # with --tag-output the long line keeps its one prefix
    run --separate-stderr timeout 120 "$LAUNCH_BIN" --agent "$SOCK" -n 2 --tag-output "$CARELESS" bigwrite 4194304
    [ "$status" -eq 0 ] || { echo "status $status, stderr: $stderr"; false; }
    local tagged
    tagged=$(grep -c '^\[0\] ' <<<"$output")
    [ "$tagged" -eq 2 ] || { echo "expected 2 lines tagged [0], got $tagged"; false; }
}

# check_bytes FILE N: FILE holds N-1 'x', their newline and the line "OK" from another rank,
# which may land inside the long line (a line over 64 KiB leaves in pieces; tmpi-launch(1), Output).
check_bytes() {
    local f=$1 n=$2 xs rest
    xs=$(tr -cd x <"$f" | wc -c)
    [ "$xs" -eq $((n - 1)) ] || { echo "expected $((n - 1)) x, got $xs" >&2; return 1; }
    rest=$(tr -d x <"$f" | od -An -c | tr -s ' ')
    [ "$rest" = " \n O K \n" ] || [ "$rest" = " O K \n \n" ] ||
        { echo "besides the x: '$rest'" >&2; return 1; }
}

# bats test_tags=multinode
@test "careless: a 5 MiB write on a member node reaches the launcher through the coordinator" {
    start_cluster 2
    local out="$BATS_TEST_TMPDIR/out"
    # 2 slots a node: rank 3 runs on node2, rank 0 on node1 (the coordinator)
    run --separate-stderr timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" \
        --hostfile "$CLUSTER_HOSTFILE" -n 4 "$CARELESS" bigwrite 5242880 3
    [ "$status" -eq 0 ] || { echo "status $status, stderr: $stderr"; false; }
    printf '%s\n' "$output" >"$out"
    check_bytes "$out" 5242880
}

@test "careless: pthread_exit in a rank ends the rank like a return from main (kernel and user switching)" {
    agent_with '[agent]\n'
    local sw
    for sw in kernel user; do
        # before MPI_Finalize: the job fails naming the rank, it does not hang
        run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -x TMPI_RANK_SWITCHING=$sw \
            -n 8 "$CARELESS" pthread_exit
        [ "$status" -eq 1 ] || { echo "$sw: expected 1, got $status; stderr: $stderr"; false; }
        [[ "$stderr" == *"rank 1 exited without calling MPI_Finalize"* ]] ||
            { echo "$sw: stderr: $stderr"; false; }
        # after it: the job ends well
        run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -x TMPI_RANK_SWITCHING=$sw \
            -n 8 "$CARELESS" pthread_exit finalized
        [ "$status" -eq 0 ] || { echo "$sw finalized: expected 0, got $status; stderr: $stderr"; false; }
        grep -qx OK <<<"$output" || { echo "$sw finalized: no OK in: $output"; false; }
    done
    wait_no_children
}

@test "careless: a thread a rank leaves running ends with its job; the agent runs on" {
    agent_with '[agent]\nkill_grace = 2\n'
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -n 4 "$CARELESS" leftover
    [ "$status" -eq 0 ] || { echo "status $status, stderr: $stderr"; false; }
    grep -qx OK <<<"$output"
    local host
    host=$(sed -n 's/^host //p' <<<"$output")
    [ -n "$host" ] && [ "$host" != "$APID" ] || { echo "bad host pid '$host' (agent $APID)"; false; }
    wait_no_children
    ! kill -0 "$host" 2>/dev/null || { echo "job host $host still alive"; false; }
    # before job hosts, the leftover thread crashed the agent about 2 s after the job
    kill -0 "$APID"
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$CARELESS" sleep 2
    [ "$status" -eq 0 ] || { echo "next job: status $status, stderr: $stderr"; false; }
    kill -0 "$APID"
}

@test "careless: memory and files a rank never releases leave with its job, not in the agent" {
    agent_with '[agent]\n'
    # one job first: the agent's own first-use allocations are not the jobs' leaks
    run timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$CARELESS" leak 1
    [ "$status" -eq 0 ]
    wait_no_children
    local rss0 fd0 i
    rss0=$(rss_kib "$APID")
    fd0=$(fd_count "$APID")
    for ((i = 0; i < 3; i++)); do
        # 2 x 128 MiB in 4 KiB blocks and 2 x 64 open files per job
        run --separate-stderr timeout 120 "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$CARELESS" leak 128
        [ "$status" -eq 0 ] || { echo "job $i: status $status, stderr: $stderr"; false; }
        local host
        host=$(sed -n 's/^host //p' <<<"$output")
        [ -n "$host" ] && [ "$host" != "$APID" ] || { echo "bad host pid '$host' (agent $APID)"; false; }
        wait_no_children
    done
    local rss1 fd1
    rss1=$(rss_kib "$APID")
    fd1=$(fd_count "$APID")
    # 768 MiB and 384 files leaked in all: the agent keeps none of them
    (( rss1 - rss0 < 16384 )) || { echo "agent RSS from $rss0 to $rss1 KiB"; false; }
    (( fd1 - fd0 <= 4 )) || { echo "agent fds from $fd0 to $fd1"; false; }
}

@test "careless: max_jobs counts only live jobs: a stuck job whose launcher was killed frees its slot" {
    # root's jobs (the test's) have no room beyond max_jobs either
    agent_with '[agent]\nmax_jobs = 1\nadmin_reserve_jobs = 0\nkill_grace = 2\nended_job_keep = 60\n'
    "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$CARELESS" sleep 3600 >"$BATS_TEST_TMPDIR/a.out" 2>&1 &
    LAUNCHER_PID=$!
    local i
    for ((i = 0; i < 600; i++)); do
        tmpictl --agent "$SOCK" jobs | awk 'NR > 1 && $4 == "running" { f = 1 } END { exit !f }' && break
        sleep 0.1
    done
    # the slot is taken: a second job is refused by name
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -n 1 "$CARELESS" sleep 0
    [ "$status" -ne 0 ] || { echo "a second job ran beside max_jobs = 1"; false; }
    [[ "$stderr" == *max_jobs* ]] || { echo "stderr: $stderr"; false; }
    # the launcher dies without a word; its ranks sleep in a system call and never look
    kill -KILL "$LAUNCHER_PID"
    wait "$LAUNCHER_PID" || true
    LAUNCHER_PID=""
    wait_no_children
    run tmpictl --agent "$SOCK" jobs
    if awk 'NR > 1 && ($4 == "running" || $4 == "ending") { f = 1 } END { exit !f }' <<<"$output"; then
        echo "a job is still listed as live: $output"
        false
    fi
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -n 1 "$CARELESS" sleep 0
    [ "$status" -eq 0 ] || { echo "next job: status $status, stderr: $stderr"; false; }
}

# bats test_tags=multinode
@test "careless: exit() or abort() in an atexit handler ends the job with its status, on one node and across two" {
    agent_with '[agent]\nkill_grace = 2\n'
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -n 3 "$CARELESS" atexit exit3
    # ThreadSanitizer intercepts atexit and runs a module's handlers at process exit, not at
    # unload: nothing to test then (agent.bats checks that handlers run in other builds)
    if [ "$status" -eq 0 ] && ! grep -qx "atexit handler runs" <<<"$output"; then
        skip "the program's atexit handlers do not run when its image is unloaded in this build"
    fi
    grep -qx "atexit handler runs" <<<"$output" || { echo "the handler did not run: $output"; false; }
    [ "$status" -eq 3 ] || { echo "exit3: expected 3, got $status; stderr: $stderr"; false; }
    [[ "$stderr" == *"rank 2 exited with code 3 in an atexit handler or destructor"* ]] ||
        { echo "stderr: $stderr"; false; }
    # the handler runs when rank 2 exits, as in a process (rank_exit.h): its status ends the
    # job, so rank 0's OK after MPI_Finalize may or may not come first, as under mpirun
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -n 3 "$CARELESS" atexit abort
    [ "$status" -eq 134 ] || { echo "abort: expected 134, got $status; stderr: $stderr"; false; }
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$SOCK" -n 3 "$CARELESS" atexit exit0
    [ "$status" -eq 0 ] || { echo "exit0: expected 0, got $status; stderr: $stderr"; false; }
    wait_no_children
    stop_agent a
    # across two agents: the rank's node ends its part, the job ends everywhere
    start_cluster 2
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" \
        --hostfile "$CLUSTER_HOSTFILE" -n 4 "$CARELESS" atexit exit3
    [ "$status" -eq 3 ] || { echo "across nodes: expected 3, got $status; stderr: $stderr"; false; }
    [[ "$stderr" == *"rank 3 exited with code 3 in an atexit handler or destructor"* ]] ||
        { echo "stderr: $stderr"; false; }
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" \
        --hostfile "$CLUSTER_HOSTFILE" -n 4 "$CARELESS" atexit exit0
    [ "$status" -eq 0 ] || { echo "across nodes, exit0: expected 0, got $status; stderr: $stderr"; false; }
}
