#!/usr/bin/env bats
# Dynamic processes (issue 33): MPI_Comm_spawn and MPI_Comm_spawn_multiple start more ranks of
# the job on its node, each with its own copy of its program; the universe bounds them.

bats_require_minimum_version 1.5.0
load helpers

teardown() { stop_all_agents; }

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

spawn_run() {
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" "$@"
    if [ "$status" -ne 0 ] || [[ "$output" != *"spawn ok"* ]]; then
        echo "tmpi-launch $*: status $status"
        echo "$output"
        return 1
    fi
}

@test "dynproc: spawn 1..N children that see their parents, exchange data, merge, keep their globals, threads and carriers" {
    local exe
    exe=$(prog spawn)
    spawn_run -x TMPI_UNIVERSE_SIZE=8 -n 1 "$exe" parent 1
    spawn_run -x TMPI_UNIVERSE_SIZE=8 -n 2 "$exe" parent 3
    spawn_run -x TMPI_UNIVERSE_SIZE=8 -n 1 "$exe" parent 7
    spawn_run -x TMPI_UNIVERSE_SIZE=8 -x TMPI_RANK_SWITCHING=user -n 3 "$exe" parent 4
}

@test "dynproc: the slots of spawned ranks that finalized go back to the universe: a job spawns again and again beyond its slots, and after failed spawns" {
    local exe
    exe=$(prog spawn)
    # 2 free slots, 6 spawns of 2 children each
    spawn_run -x TMPI_UNIVERSE_SIZE=3 -n 1 "$exe" repeat 6 2
    spawn_run -x TMPI_UNIVERSE_SIZE=4 -x TMPI_RANK_SWITCHING=user -n 2 "$exe" repeat 4 2
    # a spawn that failed leaves its slots free: after errors, all of the universe spawns
    spawn_run -x TMPI_UNIVERSE_SIZE=3 -n 1 "$exe" errors
}

threads_run() {
    run timeout 90 "$@"
    if [ "$status" -ne 0 ] || [[ "$output" != *"threads ok"* ]]; then
        echo "$*: status $status"
        echo "$output"
        return 1
    fi
}

@test "dynproc: 4 threads of a rank spawn at once under MPI_THREAD_MULTIPLE, over MPI_COMM_SELF and over their own duplicates of MPI_COMM_WORLD, each talking to its own children" {
    local exe launch=("$TMPI_BUILD/launcher/tmpi-launch")
    exe=$(prog spawn_threads)
    # MPICH's threads/spawn/multispawn: 4 threads x 4 children, twice
    threads_run "${launch[@]}" -x TMPI_UNIVERSE_SIZE=17 -n 1 "$exe" self 4 4 2
    # th_taskmanager: every rank's thread k spawns with the others' over its own communicator
    threads_run "${launch[@]}" -x TMPI_UNIVERSE_SIZE=10 -n 2 "$exe" world 4 2 3
    threads_run "${launch[@]}" -x TMPI_UNIVERSE_SIZE=6 -x TMPI_RANK_SWITCHING=user -n 2 "$exe" world 4 1 3
    # fewer slots than the threads ask at once: the spawns wait for each other's children
    threads_run "${launch[@]}" -x TMPI_UNIVERSE_SIZE=3 -n 1 "$exe" self 4 2 2
}

@test "dynproc: spawn_multiple starts two commands in one world, MPI_APPNUM 0 and 1" {
    local exe
    exe=$(prog spawn)
    spawn_run -x TMPI_UNIVERSE_SIZE=8 -n 2 "$exe" multiple
}

@test "dynproc: the info keys path, wdir and host: a child found by name starts in wdir" {
    local exe dir
    exe=$(prog spawn)
    dir=$(cd "$BATS_TEST_TMPDIR" && pwd -P)
    spawn_run -x TMPI_UNIVERSE_SIZE=4 -n 2 "$exe" wdir "$dir"
}

@test "dynproc: a missing program, a file that is no program, another host, a missing wdir and more ranks than the universe fail with MPI_ERR_SPAWN" {
    local exe
    exe=$(prog spawn)
    spawn_run -n 2 "$exe" errors
    spawn_run -x TMPI_UNIVERSE_SIZE=3 -n 1 "$exe" errors
}

@test "dynproc: --universe-size N is MPI_UNIVERSE_SIZE, defaults to the node's CPUs, below the world size or above 4096 is refused" {
    local exe ncpu
    exe=$(prog spawn)
    ncpu=$(nproc)
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -n 1 "$exe" parent "$ncpu"
    [ "$status" -ne 0 ]
    [[ "$output" == *"MPI_UNIVERSE_SIZE $ncpu"* ]] || { echo "$output"; false; }
    spawn_run --universe-size 5 -n 1 "$exe" parent 4
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" --universe-size=4 -n 1 "$exe" parent 4
    [ "$status" -ne 0 ]
    [[ "$output" == *"MPI_UNIVERSE_SIZE 4"* ]] || { echo "$output"; false; }
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" --universe-size 0 -n 1 "$exe" parent 1
    [ "$status" -eq 2 ]
    [[ "$output" == *"--universe-size 0: not a number of ranks from 1 to 4096"* ]]
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" --universe-size 1 -n 2 "$exe" parent 1
    [ "$status" -eq 1 ]
    [[ "$output" == *"TMPI_UNIVERSE_SIZE=1: not a number of ranks from the job's 2 to 4096"* ]]
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_UNIVERSE_SIZE=4097 -n 1 "$exe" parent 1
    [ "$status" -eq 1 ]
    [[ "$output" == *"TMPI_UNIVERSE_SIZE=4097"* ]]
}

@test "dynproc: two halves of a job meet by Open_port, Publish/Lookup_name and Comm_accept/connect, join over a socket; closed and other jobs' ports fail with MPI_ERR_PORT" {
    local exe out
    exe=$(prog ports)
    for n in 2 4; do
        run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -n "$n" "$exe"
        [ "$status" -eq 0 ] && [[ "$output" == *"ports ok"* ]] || { echo "$n: $output"; false; }
    done
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_RANK_SWITCHING=user -n 4 "$exe"
    [ "$status" -eq 0 ] && [[ "$output" == *"ports ok"* ]] || { echo "carried: $output"; false; }
}

@test "dynproc: tmpictl jobs counts the ranks a job spawned in its RANKS" {
    start_agent one
    local sock=$AGENT_SOCK exe out="$BATS_TEST_TMPDIR/slow.out" i n=0
    exe=$(prog spawn)
    "$LAUNCH_BIN" --agent "$sock" --universe-size 3 -n 2 "$exe" slow 4 >"$out" 2>&1 &
    local pid=$!
    for ((i = 0; i < 300 && n == 0; i++)); do
        grep -q "child computing" "$out" 2>/dev/null && n=1 || sleep 0.1
    done
    [ "$n" -eq 1 ] || { echo "the child never ran:"; cat "$out"; false; }
    run tmpictl --agent "$sock" --json jobs
    local ranks
    ranks=$(python3 -c 'import json,sys; print([j["nprocs"] for j in json.load(sys.stdin)["jobs"] if j["state"] == "running"])' <<<"$output")
    run tmpictl --agent "$sock" jobs
    local table=$output
    wait "$pid"
    [ "$ranks" = "[3]" ] || { echo "nprocs of the running job: $ranks"; echo "$table"; false; }
}

# The agent at socket $1 soon lists no job but ended ones (a member's part reads "ending" until
# its job host is reaped).
dyn_no_live_jobs() {
    local i
    for ((i = 0; i < 100; i++)); do
        run tmpictl --agent "$1" --json jobs
        python3 -c 'import json,sys; sys.exit(any(x["state"] != "ended" for x in json.load(sys.stdin)["jobs"]))' <<<"$output" && return 0
        sleep 0.1
    done
    echo "$1 still runs a job: $output"
    return 1
}

# names_pair SOCK_PUB SOCK_LOOK [LOOKUP LAUNCH ARGS...]: a job publishing a service on agent
# SOCK_PUB, a job of the same user looking it up on SOCK_LOOK, both must pass.
names_pair() {
    local pub=$1 look=$2 exe svc f
    shift 2
    exe=$(prog names_jobs)
    svc="svc-$$-$RANDOM"
    f="$BATS_TEST_TMPDIR/port.$svc"
    timeout 60 "$LAUNCH_BIN" --agent "$pub" -n 2 "$exe" publish "$svc" "$f" >"$f.out" 2>&1 &
    local pid=$!
    run timeout 60 "$LAUNCH_BIN" --agent "$look" "$@" -n 2 "$exe" lookup "$svc" "$f"
    local st=0
    wait "$pid" || st=$?
    [ "$status" -eq 0 ] && [[ "$output" == *"lookup ok"* ]] || { echo "lookup: $output"; false; }
    [ "$st" -eq 0 ] && grep -q "publish ok" "$f.out" || { echo "publish ($st):"; cat "$f.out"; false; }
    # unpublished by its job: gone for everyone
    run timeout 60 "$LAUNCH_BIN" --agent "$look" -n 1 "$exe" absent "$svc"
    [ "$status" -eq 0 ] && [[ "$output" == *"absent ok"* ]] || { echo "absent: $output"; false; }
}

@test "dynproc: two jobs of one user on one agent: a name one publishes the other looks up, a taken name is refused, a name goes with the job that published it" {
    start_agent one --log-level info
    local sock=$AGENT_SOCK exe
    names_pair "$sock" "$sock"
    exe=$(prog names_jobs)
    run timeout 60 "$LAUNCH_BIN" --agent "$sock" -n 1 "$exe" leave "left-$$"
    [ "$status" -eq 0 ] && [[ "$output" == *"leave ok"* ]] || { echo "leave: $output"; false; }
    run timeout 60 "$LAUNCH_BIN" --agent "$sock" -n 1 "$exe" absent "left-$$"
    [ "$status" -eq 0 ] && [[ "$output" == *"absent ok"* ]] || { echo "after leave: $output"; false; }
    grep -q "publish of service 'left-$$'" "$BATS_TEST_TMPDIR/one.log" ||
        { echo "no log line of the publish:"; cat "$BATS_TEST_TMPDIR/one.log"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents a name published by a job on one node is looked up by a job on the other and by a job across both" {
    start_cluster 2 --log-level info
    names_pair "${CLUSTER_SOCKS[1]}" "${CLUSTER_SOCKS[0]}"
    names_pair "${CLUSTER_SOCKS[0]}" "${CLUSTER_SOCKS[1]}"
    names_pair "${CLUSTER_SOCKS[1]}" "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node
}

# bats test_tags=multinode
@test "dynproc: across 2 agents without free slots spawning fails with MPI_ERR_SPAWN, and ports, names and join connect ranks of the job" {
    start_cluster 2
    local exe pexe
    exe=$(prog spawn)
    pexe=$(prog ports)
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe" across
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* ]] || { echo "$output"; false; }
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$pexe"
    [ "$status" -eq 0 ] && [[ "$output" == *"ports ok"* ]] || { echo "$output"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents names published on one node are looked up on the other, and Comm_accept/connect join groups of two nodes; a closed port there fails with MPI_ERR_PORT" {
    start_cluster 2
    local pexe
    pexe=$(prog ports)
    # even ranks (accepting) on node1, odd ones (looking up, connecting) on node2
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 4 "$pexe" nojoin
    [ "$status" -eq 0 ] && [[ "$output" == *"ports ok"* ]] || { echo "$output"; false; }
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$pexe" nojoin
    [ "$status" -eq 0 ] && [[ "$output" == *"ports ok"* ]] || { echo "$output"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents spawn starts children on the job's nodes by their free slots, MPI_UNIVERSE_SIZE the host file's slots or --universe-size" {
    start_cluster 2
    local exe hf3 launch
    exe=$(prog spawn)
    hf3=$(cluster_hostfile 3)
    launch=("$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}")
    # ranks 0 and 1 on node1 and node2; the 4 free slots hold world ranks 2-3 (node1), 4-5 (node2)
    run timeout 60 "${launch[@]}" --hostfile "$hf3" --map-by node -n 2 "$exe" universe
    [ "$status" -eq 0 ] && [[ "$output" == *"universe 6"* ]] || { echo "universe: $output"; false; }
    # a job the host file puts on one node: every host's slots (the other node is spawn room)
    run timeout 60 "${launch[@]}" --hostfile "$hf3" -n 1 "$exe" universe
    [ "$status" -eq 0 ] && [[ "$output" == *"universe 6"* ]] || { echo "one node: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf3" -n 1 "$exe" parent 2
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* ]] || { echo "one node, parent 2: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf3" --map-by node -n 2 "$exe" parent 4
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* ]] || { echo "parent 4: $output"; false; }
    [[ "$output" == *"child 0 of 4 on node1"* && "$output" == *"child 1 of 4 on node1"* ]] || { echo "$output"; false; }
    [[ "$output" == *"child 2 of 4 on node2"* && "$output" == *"child 3 of 4 on node2"* ]] || { echo "$output"; false; }
    # node1 full (ranks 0-2), node2 rank 3: the child goes to node2's free slots
    run timeout 60 "${launch[@]}" --hostfile "$hf3" -n 4 "$exe" parent 2
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* && "$output" == *"child 1 of 2 on node2"* ]] || { echo "node2: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf3" --map-by node -n 2 "$exe" multiple
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* ]] || { echo "multiple: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf3" --map-by node -n 2 -x TMPI_RANK_SWITCHING=user "$exe" parent 3
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* ]] || { echo "carried: $output"; false; }
    # a missing program fails on the node that looks for it, more than the universe at once
    run timeout 60 "${launch[@]}" --hostfile "$hf3" --map-by node -n 2 "$exe" errors
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* ]] || { echo "errors: $output"; false; }
    # 7 beyond the world: the free slots (one per node), the rest on node 0
    run timeout 60 "${launch[@]}" --hostfile "$CLUSTER_HOSTFILE" --universe-size 9 --map-by node -n 2 "$exe" parent 7
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* && "$output" == *"child 5 of 7 on node1"* && "$output" == *"child 6 of 7 on node2"* ]] || { echo "universe-size: $output"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents the slots of spawned ranks that finalized on either node go back to the universe" {
    start_cluster 2
    local exe hf2 launch
    exe=$(prog spawn)
    hf2=$(cluster_hostfile 2)
    launch=("$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}")
    # ranks 0 and 1 on node1 and node2; world ranks 2 (node1) and 3 (node2) free, spawned 5 times
    run timeout 90 "${launch[@]}" --hostfile "$hf2" --map-by node -n 2 "$exe" repeat 5 2
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* && "$output" == *"child 1 of 2 on node2"* ]] ||
        { echo "repeat: $output"; false; }
    # a job on node1 only: node2 has only spawned ranks, and after they ended it takes the
    # next spawn's (it used to leave the job once its first children ended)
    run timeout 90 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" repeat 3 3
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* && "$output" == *"child 2 of 3 on node2"* ]] ||
        { echo "repeat onto node2: $output"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents 4 threads of a rank spawn at once, onto both nodes and onto a node without ranks of the job, round after round" {
    start_cluster 2
    local exe hf3 launch
    exe=$(prog spawn_threads)
    hf3=$(cluster_hostfile 3)
    launch=("$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}")
    # rank 0 on node1: 2 free slots there, 3 on node2 (which has only spawned ranks)
    threads_run "${launch[@]}" --hostfile "$hf3" -n 1 "$exe" self 4 1 3
    threads_run "${launch[@]}" --hostfile "$hf3" -n 1 -x TMPI_RANK_SWITCHING=user "$exe" self 4 1 3
    # ranks 0 and 1 on node1 and node2: each rank's thread k spawns with the other's
    threads_run "${launch[@]}" --hostfile "$hf3" --map-by node -n 2 "$exe" world 4 1 3
    # multispawn's 4 x 4 children beyond the host file's slots (--universe-size)
    threads_run "${launch[@]}" --hostfile "$CLUSTER_HOSTFILE" --universe-size 17 --map-by node -n 1 "$exe" self 4 4 2
}

@test "dynproc: a connect waits at most its info key timeout, then fails with MPI_ERR_PORT and leaves no request behind; TMPI_CONNECT_PENDING_MAX bounds the connects that wait" {
    local exe
    exe=$(prog xconn)
    # a wait with a deadline is no deadlock: the watch must not end the job
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" --on-deadlock=abort -n 2 "$exe" timeout 3
    [ "$status" -eq 0 ] && [[ "$output" == *"timeout ok"* ]] || { echo "$output"; false; }
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_CONNECT_PENDING_MAX=1 -n 4 "$exe" pending
    [ "$status" -eq 0 ] && [[ "$output" == *"pending ok"* ]] || { echo "$output"; false; }
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_CONNECT_TIMEOUT=soon -n 2 "$exe" timeout 1
    # MPI_ERRORS_RETURN: the class only (MPI_ERR_INFO_VALUE, 24)
    [ "$status" -ne 0 ] && [[ "$output" == *"second connect: class 24"* ]] ||
        { echo "bad TMPI_CONNECT_TIMEOUT: $output"; false; }
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_CONNECT_PENDING_MAX=many -n 2 "$exe" timeout 1
    # MPI_ERR_OTHER, 16
    [ "$status" -ne 0 ] && [[ "$output" == *"nobody accepts: class 16"* ]] ||
        { echo "bad TMPI_CONNECT_PENDING_MAX: $output"; false; }
}

# xjobs_pair SOCK MODE_A NA MODE_C NC [SOCK_C]: job A (NA ranks, xjobs MODE_A) on agent SOCK,
# job B (NC ranks, MODE_C) on the same agent (or on SOCK_C); A's output in $XA, B's in $XB,
# statuses $XA_ST, $XB_ST.  XJOBS_ARGS: more tmpi-launch options for both jobs.
# two_nodes_hostfile I J: a host file of cluster nodes I and J (2 slots each); prints its path.
two_nodes_hostfile() {
    local f="$BATS_TEST_TMPDIR/hosts.$1$2"
    printf '127.0.0.1 slots=2 port=%s\n127.0.0.1 slots=2 port=%s\n' \
        "${CLUSTER_PORTS[$1 - 1]}" "${CLUSTER_PORTS[$2 - 1]}" >"$f"
    echo "$f"
}

xjobs_pair() {
    local exe f pid
    exe=$(prog xjobs)
    f="$BATS_TEST_TMPDIR/xport.$RANDOM"
    XA="$f.a" XB="$f.b" XA_ST=0 XB_ST=0
    local more=()
    [ -z "${XJOBS_ARGS:-}" ] || read -r -a more <<<"$XJOBS_ARGS"
    # XA_ARGS / XB_ARGS: one side's own (a host file: a job across agents)
    local amore=() bmore=()
    [ -z "${XA_ARGS:-}" ] || read -r -a amore <<<"$XA_ARGS"
    [ -z "${XB_ARGS:-}" ] || read -r -a bmore <<<"$XB_ARGS"
    timeout 60 "$LAUNCH_BIN" --agent "$1" "${more[@]}" "${amore[@]}" -n "$3" "$exe" "$2" "$f" >"$XA" 2>&1 &
    pid=$!
    timeout 60 "$LAUNCH_BIN" --agent "${6:-$1}" "${more[@]}" "${bmore[@]}" -n "$5" "$exe" "$4" "$f" >"$XB" 2>&1 || XB_ST=$?
    wait "$pid" || XA_ST=$?
    # a sanitizer's report (make sanitize / make tsan) fails the pair like a bad status
    if grep -q "Sanitizer" "$XA" "$XB"; then
        XA_ST=99
        cat "$XA" "$XB" >&2
    fi
}

@test "dynproc: two jobs of one user on one agent connect: p2p both ways (3 MiB, Ssend), Barrier, Bcast, Allreduce over the inter-communicator, Intercomm_merge with every collective on it, its dup and a split, disconnect; the accepting job goes on after the other ended" {
    start_agent one --log-level info
    xjobs_pair "$AGENT_SOCK" accept 2 connect 3
    [ "$XB_ST" -eq 0 ] && grep -q "connect ok" "$XB" || { echo "connect ($XB_ST):"; cat "$XB"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "accept ok" "$XA" || { echo "accept ($XA_ST):"; cat "$XA"; false; }
    grep -q "merged collectives ok on 5 ranks" "$XA" || { echo "no collectives on the merged communicator:"; cat "$XA"; false; }
    xjobs_pair "$AGENT_SOCK" accept 3 connect 1
    [ "$XB_ST" -eq 0 ] && grep -q "connect ok" "$XB" || { echo "connect 1 ($XB_ST):"; cat "$XB"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "accept ok" "$XA" || { echo "accept 3 ($XA_ST):"; cat "$XA"; false; }
    # a bound of 4 KiB: the 3 MiB messages, the Ssend and most collectives' messages go as
    # envelopes first, their bytes once matched
    XJOBS_ARGS="-x TMPI_XJOB_UNEXPECTED_MAX=4096" xjobs_pair "$AGENT_SOCK" accept 2 connect 2
    [ "$XB_ST" -eq 0 ] && grep -q "connect ok" "$XB" || { echo "connect 4 KiB ($XB_ST):"; cat "$XB"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "accept ok" "$XA" || { echo "accept 4 KiB ($XA_ST):"; cat "$XA"; false; }
}

@test "dynproc: MPI_Ibarrier on the inter-communicator and MPI_Ibarrier, MPI_Ibcast and MPI_Iallreduce on the merged communicator of two jobs return before the other job entered them, and complete in MPI_Wait" {
    start_agent one --log-level info
    xjobs_pair "$AGENT_SOCK" nbc-accept 2 nbc-connect 2
    [ "$XB_ST" -eq 0 ] || { echo "connect ($XB_ST):"; cat "$XB"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "nbc ok" "$XA" || { echo "accept ($XA_ST):"; cat "$XA"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 3 agents MPI_Ibarrier, MPI_Ibcast and MPI_Iallreduce between a job across two agents and a job on a third return before the other job entered them" {
    start_cluster 3 --log-level info
    XA_ARGS="--hostfile $(two_nodes_hostfile 1 2)" xjobs_pair "${CLUSTER_SOCKS[0]}" nbc-accept 3 nbc-connect 2 "${CLUSTER_SOCKS[2]}"
    [ "$XB_ST" -eq 0 ] || { echo "connect ($XB_ST):"; cat "$XB"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "nbc ok" "$XA" || { echo "accept ($XA_ST):"; cat "$XA"; false; }
}

@test "dynproc: every other non-blocking collective and the persistent ones on the merged communicator of two jobs, and Ireduce, Iallgather, Ialltoall on their inter-communicator, return before the other job entered them: it waits for a message sent after the post" {
    start_agent one --log-level info
    xjobs_pair "$AGENT_SOCK" nbp-accept 2 nbp-connect 3
    [ "$XB_ST" -eq 0 ] || { echo "connect ($XB_ST):"; cat "$XB" "$XA"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "nbp ok: 26 operations" "$XA" || { echo "accept ($XA_ST):"; cat "$XA"; false; }
}

@test "dynproc: persistent collectives on the merged communicator of two jobs, started by each job in the other's reverse order, match by their *_init order" {
    start_agent one --log-level info
    xjobs_pair "$AGENT_SOCK" porder-accept 2 porder-connect 3
    [ "$XB_ST" -eq 0 ] || { echo "connect ($XB_ST):"; cat "$XB" "$XA"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "porder ok" "$XA" || { echo "accept ($XA_ST):"; cat "$XA"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 3 agents every other non-blocking collective and the persistent ones between a job across two agents and a job on a third return before the other job entered them: it waits for a message sent after the post" {
    start_cluster 3 --log-level info
    XA_ARGS="--hostfile $(two_nodes_hostfile 1 2)" xjobs_pair "${CLUSTER_SOCKS[0]}" nbp-accept 3 nbp-connect 2 "${CLUSTER_SOCKS[2]}"
    [ "$XB_ST" -eq 0 ] || { echo "connect ($XB_ST):"; cat "$XB" "$XA"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "nbp ok: 26 operations" "$XA" || { echo "accept ($XA_ST):"; cat "$XA"; false; }
}

@test "dynproc: a job connected to another that dies gets an error from its probe, receive and send in bounded time, and ends cleanly" {
    start_agent one --log-level info
    SECONDS=0
    xjobs_pair "$AGENT_SOCK" survive 2 die 2
    [ "$XB_ST" -eq 3 ] || { echo "die ($XB_ST):"; cat "$XB"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "survive ok" "$XA" || { echo "survive ($XA_ST):"; cat "$XA"; false; }
    [ "$SECONDS" -lt 30 ] || { echo "took $SECONDS s"; false; }
}

@test "dynproc: TMPI_XJOB_UNEXPECTED_MAX bounds the bytes one job has out to another unmatched: sends past it wait for the receives (MPI_Isend returns, a later message still overtakes), and a bad value fails the connect" {
    start_agent one --log-level info
    local exe f pid st=0
    exe=$(prog xjobs)
    # the default (64 MiB): all 64 messages of 16 KiB go at once
    f="$BATS_TEST_TMPDIR/xport.flood1"
    timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 "$exe" flood-accept "$f" >"$f.a" 2>&1 &
    pid=$!
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 "$exe" flood-connect "$f"
    wait "$pid" || st=$?
    [ "$status" -eq 0 ] && [ "$st" -eq 0 ] && [[ "$output" == *"flood: 64 of 64 done before any receive"* ]] ||
        { echo "default ($status, $st): $output"; cat "$f.a"; false; }
    # 64 KiB: four go, the others wait until the receiver matched them
    f="$BATS_TEST_TMPDIR/xport.flood2"
    timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 "$exe" flood-accept "$f" >"$f.a" 2>&1 &
    pid=$!
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -x TMPI_XJOB_UNEXPECTED_MAX=65536 -n 1 "$exe" flood-connect "$f"
    st=0
    wait "$pid" || st=$?
    [ "$status" -eq 0 ] && [ "$st" -eq 0 ] && [[ "$output" == *"flood: 4 of 64 done before any receive"* ]] ||
        { echo "65536 ($status, $st): $output"; cat "$f.a"; false; }
    f="$BATS_TEST_TMPDIR/xport.flood3"
    echo "tmpi-port:1:0:0" >"$f"
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -x TMPI_XJOB_UNEXPECTED_MAX=lots -n 1 "$exe" flood-connect "$f"
    [ "$status" -ne 0 ] && [[ "$output" == *"TMPI_XJOB_UNEXPECTED_MAX is 'lots', not a number of bytes from 0 to 1099511627776"* ]] ||
        { echo "bad value ($status): $output"; false; }
}

@test "dynproc: a rank waiting for a message from a connected job is no deadlock (--on-deadlock=abort lets it wait)" {
    start_agent one --log-level info
    local exe f pid st=0
    exe=$(prog xjobs)
    f="$BATS_TEST_TMPDIR/xport.wait"
    timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" --on-deadlock=abort -n 1 "$exe" wait-accept "$f" >"$f.a" 2>&1 &
    pid=$!
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 "$exe" wait-connect "$f"
    wait "$pid" || st=$?
    [ "$status" -eq 0 ] || { echo "connect ($status): $output"; false; }
    [ "$st" -eq 0 ] && grep -q "wait ok" "$f.a" || { echo "accept ($st):"; cat "$f.a"; false; }
}

@test "dynproc: MPI_Comm_join joins ranks of two jobs of one user over a connected socket" {
    start_agent one --log-level info
    local exe f pid st=0
    exe=$(prog xjobs)
    f="$BATS_TEST_TMPDIR/join.sock"
    timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 "$exe" join "$f" listen >"$f.a" 2>&1 &
    pid=$!
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 "$exe" join "$f" connect
    wait "$pid" || st=$?
    [ "$status" -eq 0 ] && [[ "$output" == *"join ok"* ]] || { echo "connect ($status): $output"; false; }
    [ "$st" -eq 0 ] && grep -q "join ok" "$f.a" || { echo "listen ($st):"; cat "$f.a"; false; }
}

@test "dynproc: a connect to a closed port of the user's other job fails at once with MPI_ERR_PORT" {
    start_agent one --log-level info
    local exe f
    exe=$(prog xconn)
    f="$BATS_TEST_TMPDIR/xport.closed"
    touch "$f.done"
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 "$exe" open "$f"
    [ "$status" -eq 0 ] || { echo "open: $output"; false; }
    run timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 "$exe" connect "$f"
    [ "$status" -ne 0 ] && [[ "$output" == *"no open port tmpi-port:"*"(no job of this user has it open) (MPI_ERR_PORT)"* ]] ||
        { echo "closed port ($status): $output"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents a connect times out and is dropped at the port's node" {
    start_cluster 2
    local exe
    exe=$(prog xconn)
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$exe" timeout 1.5
    [ "$status" -eq 0 ] && [[ "$output" == *"timeout ok"* ]] || { echo "$output"; false; }
}

# bats test_tags=multinode
@test "dynproc: two jobs of one user on two agents connect over the mesh: p2p both ways (3 MiB, Ssend), Barrier, Bcast, Allreduce, merge with every collective on it, its dup and a split, disconnect; the accepting job goes on after the other ended" {
    start_cluster 2 --log-level info
    xjobs_pair "${CLUSTER_SOCKS[0]}" accept 2 connect 3 "${CLUSTER_SOCKS[1]}"
    [ "$XB_ST" -eq 0 ] && grep -q "connect ok" "$XB" || { echo "connect ($XB_ST):"; cat "$XB" "$BATS_TEST_TMPDIR"/node*.log; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "accept ok" "$XA" || { echo "accept ($XA_ST):"; cat "$XA"; false; }
    grep -q "merged collectives ok on 5 ranks" "$XA" || { echo "no collectives on the merged communicator:"; cat "$XA"; false; }
    # the other way round, over the link both agents have now
    xjobs_pair "${CLUSTER_SOCKS[1]}" accept 1 connect 2 "${CLUSTER_SOCKS[0]}"
    [ "$XB_ST" -eq 0 ] && grep -q "connect ok" "$XB" || { echo "connect 2 ($XB_ST):"; cat "$XB"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "accept ok" "$XA" || { echo "accept 1 ($XA_ST):"; cat "$XA"; false; }
}

# bats test_tags=multinode
@test "dynproc: a job across 2 agents connects to a job on a third, and to a job across two agents one of which it shares: every rank reaches every remote rank both ways, Barrier, Bcast, Allreduce, merge with every collective on it, its dup and a split, disconnect; the accepting job goes on after the other ended" {
    start_cluster 3 --log-level info
    # A: 2 ranks on node1 + 2 on node2, accepting; B: 2 ranks on node3
    XA_ARGS="--hostfile $(two_nodes_hostfile 1 2)" xjobs_pair "${CLUSTER_SOCKS[0]}" accept 4 connect 2 "${CLUSTER_SOCKS[2]}"
    [ "$XB_ST" -eq 0 ] && grep -q "connect ok" "$XB" || { echo "connect ($XB_ST):"; cat "$XB" "$XA" "$BATS_TEST_TMPDIR"/node*.log; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "accept ok" "$XA" || { echo "accept ($XA_ST):"; cat "$XA"; false; }
    grep -q "merged collectives ok on 6 ranks" "$XA" || { echo "no collectives on the merged communicator:"; cat "$XA"; false; }
    # A across node3 + node2 accepting, B across node1 + node2 (4 hosts, two of them on node2);
    # a 4 KiB bound: the big messages and most collectives' go as envelopes first
    XJOBS_ARGS="-x TMPI_XJOB_UNEXPECTED_MAX=4096" XA_ARGS="--hostfile $(two_nodes_hostfile 3 2)" \
        XB_ARGS="--hostfile $(two_nodes_hostfile 1 2)" \
        xjobs_pair "${CLUSTER_SOCKS[2]}" accept 3 connect 4 "${CLUSTER_SOCKS[0]}"
    [ "$XB_ST" -eq 0 ] && grep -q "connect ok" "$XB" || { echo "connect 2 ($XB_ST):"; cat "$XB" "$XA" "$BATS_TEST_TMPDIR"/node*.log; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "accept ok" "$XA" || { echo "accept 2 ($XA_ST):"; cat "$XA"; false; }
    grep -q "merged collectives ok on 7 ranks" "$XA" || { echo "no collectives on the merged communicator 2:"; cat "$XA"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents a job connected to another that dies gets an error from its probe, receive and send in bounded time" {
    start_cluster 2 --log-level info
    SECONDS=0
    xjobs_pair "${CLUSTER_SOCKS[0]}" survive 2 die 2 "${CLUSTER_SOCKS[1]}"
    [ "$XB_ST" -eq 3 ] || { echo "die ($XB_ST):"; cat "$XB"; false; }
    [ "$XA_ST" -eq 0 ] && grep -q "survive ok" "$XA" || { echo "survive ($XA_ST):"; cat "$XA"; false; }
    [ "$SECONDS" -lt 30 ] || { echo "took $SECONDS s"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents a job connected to another whose agent dies gets an error from its probe, receive and send in bounded time" {
    start_cluster 2 --log-level info
    local exe f pid bpid st=0 i
    exe=$(prog xjobs)
    f="$BATS_TEST_TMPDIR/xport.agent"
    timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" -n 1 "$exe" survive "$f" >"$f.a" 2>&1 &
    pid=$!
    timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[1]}" -n 1 "$exe" linger "$f" >"$f.b" 2>&1 &
    bpid=$!
    for ((i = 0; i < 300; i++)); do
        grep -q "linger connected" "$f.b" && break
        sleep 0.1
    done
    grep -q "linger connected" "$f.b" || { echo "no connect:"; cat "$f.a" "$f.b"; false; }
    SECONDS=0
    kill -9 "${AGENT_PIDS[node2]}"
    wait "$pid" || st=$?
    kill "$bpid" 2>/dev/null || true
    wait "$bpid" || true
    [ "$st" -eq 0 ] && grep -q "survive ok" "$f.a" || { echo "survive ($st):"; cat "$f.a"; cat "$BATS_TEST_TMPDIR/node1.log"; false; }
    [ "$SECONDS" -lt 30 ] || { echo "took $SECONDS s"; false; }
    # node1 saw the link go (the mesh connection the two agents' relays shared)
    grep -q "xrelay: link to .* closed" "$BATS_TEST_TMPDIR/node1.log" || { echo "no link loss logged:"; cat "$BATS_TEST_TMPDIR/node1.log"; false; }
}

# bats test_tags=multinode
@test "dynproc: MPI_Comm_join joins ranks of two jobs of one user on two agents" {
    start_cluster 2 --log-level info
    local exe f pid st=0
    exe=$(prog xjobs)
    f="$BATS_TEST_TMPDIR/join.sock"
    timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" -n 2 "$exe" join "$f" listen >"$f.a" 2>&1 &
    pid=$!
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[1]}" -n 1 "$exe" join "$f" connect
    wait "$pid" || st=$?
    [ "$status" -eq 0 ] && [[ "$output" == *"join ok"* ]] || { echo "connect ($status): $output"; false; }
    [ "$st" -eq 0 ] && grep -q "join ok" "$f.a" || { echo "listen ($st):"; cat "$f.a"; false; }
}

# bats test_tags=multinode
@test "dynproc: MPI_Comm_join joins a rank on the second node of a job across 2 agents with one on the second node of another job across 2 agents" {
    start_cluster 3 --log-level info
    local exe f pid st=0
    exe=$(prog xjobs)
    f="$BATS_TEST_TMPDIR/join.sock"
    # rank 3 of A is on node2, rank 2 of B on node1
    timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$(two_nodes_hostfile 1 2)" -n 4 "$exe" join "$f" listen 3 >"$f.a" 2>&1 &
    pid=$!
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[2]}" --hostfile "$(two_nodes_hostfile 3 1)" -n 3 "$exe" join "$f" connect 2
    wait "$pid" || st=$?
    [ "$status" -eq 0 ] && [[ "$output" == *"join ok"* ]] || { echo "connect ($status): $output"; cat "$f.a"; false; }
    [ "$st" -eq 0 ] && grep -q "join ok" "$f.a" || { echo "listen ($st):"; cat "$f.a"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 2 agents a spawn one node cannot start fails with MPI_ERR_SPAWN in every errcode, and the children the other node started never run" {
    local conf="$BATS_TEST_TMPDIR/tmpid.conf" exe big hf size
    : >"$conf"
    start_cluster 2 --config "$conf" --log-level debug
    exe=$(prog spawn)
    # a copy of the program too large for node2 alone (its max_program_size, reloaded)
    big="$BATS_TEST_TMPDIR/big-spawn"
    cp "$exe" "$big"
    size=$(stat -c %s "$exe")
    truncate -s $((size + 4 * 1048576)) "$big"
    printf '[agent]\nlog_level = debug\nmax_program_size = %d\n' $((size + 1048576)) >"$conf"
    kill -HUP "${AGENT_PIDS[node2]}"
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q "reload: done" "$BATS_TEST_TMPDIR/node2.log" && break
        sleep 0.1
    done
    grep -q "reload: done" "$BATS_TEST_TMPDIR/node2.log" || { cat "$BATS_TEST_TMPDIR/node2.log"; false; }
    hf=$(cluster_hostfile 2)
    # rank 0 on node1, rank 1 (the root) on node2; child 0 in node1's free slot, started
    # first, child 1 on node2, which refuses the program
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$hf" --map-by node -n 2 "$exe" partial "$big" 2
    [ "$status" -eq 0 ] && [[ "$output" == *"partial spawn failed as it should"* && "$output" == *"spawn ok"* ]] ||
        { echo "status $status: $output"; cat "$BATS_TEST_TMPDIR"/node*.log; false; }
    [[ "$output" != *"child 0 of 2"* ]] || { echo "a child ran: $output"; false; }
    grep -q "ends unrun\|end unrun" "$BATS_TEST_TMPDIR/node1.log" || { echo "node1 never withdrew its child:"; cat "$BATS_TEST_TMPDIR/node1.log"; false; }
    # nothing of the job stays: its job hosts (by PID) are gone on both nodes
    local pids p
    pids=$(sed -n 's/.*job host pid \([0-9]*\).*/\1/p' "$BATS_TEST_TMPDIR"/node*.log)
    [ -n "$pids" ] || { echo "no job host pids logged"; cat "$BATS_TEST_TMPDIR"/node*.log; false; }
    for p in $pids; do
        for ((i = 0; i < 100; i++)); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
        ! kill -0 "$p" 2>/dev/null || { echo "job host $p still runs"; false; }
    done
    dyn_no_live_jobs "${CLUSTER_SOCKS[0]}"
    dyn_no_live_jobs "${CLUSTER_SOCKS[1]}"
}

@test "dynproc: carried ranks waiting for MPI_Lookup_name's answer park: their carriers run the other ranks meanwhile" {
    start_agent one
    local sock=$AGENT_SOCK exe out="$BATS_TEST_TMPDIR/park.out" go="$BATS_TEST_TMPDIR/go" done="$BATS_TEST_TMPDIR/done" i n=0
    exe=$(prog names_park)
    # two ranks per carrier (one per CPU): the even ones look up, holding every carrier before
    "$LAUNCH_BIN" --agent "$sock" -x TMPI_RANK_SWITCHING=user -x TMPI_CARRIER_PLACEMENT=block -n $((2 * $(nproc))) "$exe" "$go" "$done" >"$out" 2>&1 &
    local pid=$!
    for ((i = 0; i < 300 && n == 0; i++)); do
        grep -q "ready" "$out" 2>/dev/null && n=1 || sleep 0.1
    done
    [ "$n" -eq 1 ] || { echo "the job never started:"; cat "$out"; false; }
    # the agent answers no name while it is stopped: the even ranks wait, rank 1 must still run
    kill -STOP "${AGENT_PIDS[one]}"
    touch "$go"
    for ((i = 0; i < 100; i++)); do [ -e "$done" ] && break; sleep 0.1; done
    local seen=0
    [ -e "$done" ] && seen=1
    kill -CONT "${AGENT_PIDS[one]}"
    local st=0
    wait "$pid" || st=$?
    [ "$seen" -eq 1 ] || { echo "rank 1 did not run while the even ranks waited for the agent"; cat "$out"; false; }
    [ "$st" -eq 0 ] && grep -q "names_park ok" "$out" || { echo "status $st:"; cat "$out"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 3 agents a job on one node of the host file spawns onto the two nodes without ranks, which end with it" {
    start_cluster 3 --log-level debug
    local exe hf2 launch
    exe=$(prog spawn)
    hf2=$(cluster_hostfile 2)
    launch=("$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}")
    # rank 0 on node1; its free slot holds world rank 1, node2's and node3's ranks 2-5
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" universe
    [ "$status" -eq 0 ] && [[ "$output" == *"universe 6"* ]] || { echo "universe: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" parent 5
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* ]] || { echo "parent 5: $output"; false; }
    [[ "$output" == *"child 0 of 5 on node1"* && "$output" == *"child 2 of 5 on node2"* &&
        "$output" == *"child 4 of 5 on node3"* ]] || { echo "$output"; false; }
    # a spawn that leaves node3 unused: the job ends all the same
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" parent 2
    [ "$status" -eq 0 ] && [[ "$output" == *"child 1 of 2 on node2"* ]] || { echo "parent 2: $output"; false; }
    # no spawn at all
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 2 "$(prog mn_hello)"
    [ "$status" -eq 0 ] || { echo "hello: $output"; false; }
    local s
    for s in "${CLUSTER_SOCKS[@]}"; do
        dyn_no_live_jobs "$s"
    done
}

# bats test_tags=multinode
@test "dynproc: across 3 agents the info key host puts the children on the host file's node it names, a host:port of a shared machine or this node's name; another host fails with MPI_ERR_SPAWN naming it" {
    start_cluster 3
    local exe hf2 launch
    exe=$(prog spawn)
    hf2=$(cluster_hostfile 2)
    launch=("$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}")
    # rank 0 on node1 (one free slot), node2 and node3 two free slots each, no ranks
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" host "127.0.0.1:${CLUSTER_PORTS[2]}" 2
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* && "$output" == *"child 0 of 2 on node3"* &&
        "$output" == *"child 1 of 2 on node3"* ]] || { echo "host node3: $output"; false; }
    # a name all three share: the first of them with room for both
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" host 127.0.0.1 2
    [ "$status" -eq 0 ] && [[ "$output" == *"child 0 of 2 on node2"* && "$output" == *"child 1 of 2 on node2"* ]] ||
        { echo "host 127.0.0.1: $output"; false; }
    # the root's own node by its agent's name
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" host node1 1
    [ "$status" -eq 0 ] && [[ "$output" == *"child 0 of 1 on node1"* ]] || { echo "host node1: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" badhost no-such-node.invalid 1
    [ "$status" -eq 0 ] && [[ "$output" == *"badhost failed as it should"* ]] || { echo "another host: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" badhost no-such-node.invalid 1 fatal
    [ "$status" -ne 0 ] && [[ "$output" == *"MPI_Comm_spawn: host no-such-node.invalid is not a node of the job"*"(MPI_ERR_SPAWN)"* ]] ||
        { echo "another host, fatal: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" badhost "127.0.0.1:${CLUSTER_PORTS[1]}" 3
    [ "$status" -eq 0 ] && [[ "$output" == *"badhost failed as it should"* ]] || { echo "a full host: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" badhost "127.0.0.1:${CLUSTER_PORTS[1]}" 3 fatal
    [ "$status" -ne 0 ] && [[ "$output" == *"host 127.0.0.1:${CLUSTER_PORTS[1]}: 3 ranks asked, fewer free slots left there"* ]] ||
        { echo "a full host, fatal: $output"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 3 agents tmpictl jobs at the coordinator counts the ranks spawned on every node, a member its own part, jobs --all the job once" {
    start_cluster 3
    local exe hf2 out="$BATS_TEST_TMPDIR/slow.out" i n=0
    exe=$(prog spawn)
    hf2=$(cluster_hostfile 2)
    # rank 0 on node1; the 5 children in node1's free slot and node2's and node3's two each
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$hf2" -n 1 "$exe" slow 5 5 >"$out" 2>&1 &
    local pid=$!
    for ((i = 0; i < 300 && n < 5; i++)); do
        n=$(grep -c "child computing" "$out" 2>/dev/null || true)
        [ "$n" -ge 5 ] || sleep 0.1
    done
    [ "$n" -ge 5 ] || { echo "the children never ran:"; cat "$out"; false; }
    local k ranks=()
    for k in 0 1 2; do
        run tmpictl --agent "${CLUSTER_SOCKS[$k]}" --json jobs
        ranks+=("$(python3 -c 'import json,sys; print([j["nprocs"] for j in json.load(sys.stdin)["jobs"] if j["state"] == "running"])' <<<"$output")")
    done
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" --json jobs --all
    local all=$output
    wait "$pid" || { cat "$out"; false; }
    [ "${ranks[*]}" = "[6] [2] [2]" ] || { echo "RANKS at node1, node2, node3: ${ranks[*]}"; false; }
    python3 -c '
import json, sys
j = [x for x in json.load(sys.stdin)["jobs"] if x["state"] == "running"]
assert len(j) == 1 and j[0]["nprocs"] == 6 and sorted(j[0]["nodes"]) == ["node1", "node2", "node3"], j
' <<<"$all" || { echo "$all"; false; }
}

# bats test_tags=multinode
@test "dynproc: across 3 agents spawn_multiple puts each command on the host its info key host names (host:port, another node's agent name, a list of slots, add-host, hostfile), one world in command order with each command's MPI_APPNUM, talking to the parent both ways" {
    start_cluster 3
    local exe hf2 launch
    exe=$(prog spawn)
    hf2=$(cluster_hostfile 2)
    launch=("$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}")
    # rank 0 on node1 (one free slot); node2 and node3 two free slots each
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" hosts "127.0.0.1:${CLUSTER_PORTS[2]}" 2 "127.0.0.1:${CLUSTER_PORTS[1]}" 1 - 1
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* ]] || { echo "three hosts: $output"; false; }
    [[ "$output" == *"child 0 of 4 on node3"* && "$output" == *"child 1 of 4 on node3"* &&
        "$output" == *"child 2 of 4 on node2"* && "$output" == *"child 3 of 4 on node1"* ]] ||
        { echo "placement: $output"; false; }
    # the other nodes by their agents' names, which only they know
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" hosts node3 1 node2 2 node1 1
    [ "$status" -eq 0 ] && [[ "$output" == *"child 0 of 4 on node3"* && "$output" == *"child 1 of 4 on node2"* &&
        "$output" == *"child 2 of 4 on node2"* && "$output" == *"child 3 of 4 on node1"* ]] ||
        { echo "agent names: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" host NODE2 2
    [ "$status" -eq 0 ] && [[ "$output" == *"child 0 of 2 on node2"* && "$output" == *"child 1 of 2 on node2"* ]] ||
        { echo "host NODE2: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" badhost node4 1 fatal
    [ "$status" -ne 0 ] && [[ "$output" == *"host node4 is not a node of the job"*"(MPI_ERR_SPAWN)"* ]] ||
        { echo "host node4: $output"; false; }
    # Open MPI's host list: one slot an entry, the command's ranks fill them in order; add-host
    # names the job's hosts as host does
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" host "node2,node3,node2" 3
    [ "$status" -eq 0 ] && [[ "$output" == *"spawn ok"* && "$output" == *"child 0 of 3 on node2"* &&
        "$output" == *"child 1 of 3 on node3"* && "$output" == *"child 2 of 3 on node2"* ]] ||
        { echo "host list: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" hosts "node2,node3" 2 - 1
    [ "$status" -eq 0 ] && [[ "$output" == *"child 0 of 3 on node2"* && "$output" == *"child 1 of 3 on node3"* &&
        "$output" == *"child 2 of 3 on node1"* ]] || { echo "host list in spawn_multiple: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" addhost node3 2
    [ "$status" -eq 0 ] && [[ "$output" == *"child 0 of 2 on node3"* && "$output" == *"child 1 of 2 on node3"* ]] ||
        { echo "add-host: $output"; false; }
    # Open MPI's hostfile: its hosts' slots as such a list
    local hfs="$BATS_TEST_TMPDIR/spawn.hosts"
    printf '# where the children go\n127.0.0.1 port=%s slots=2\nnode2\n' "${CLUSTER_PORTS[2]}" >"$hfs"
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" hostfile "$hfs" 3
    [ "$status" -eq 0 ] && [[ "$output" == *"child 0 of 3 on node3"* && "$output" == *"child 1 of 3 on node3"* &&
        "$output" == *"child 2 of 3 on node2"* ]] || { echo "hostfile: $output"; false; }
    printf 'node2 slots=two\n' >"$hfs"
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" hostfile "$hfs" 1
    [ "$status" -ne 0 ] && [[ "$output" == *"hostfile $hfs line 1: slots=two is not slots=N or port=P (MPI_ERR_SPAWN)"* ]] ||
        { echo "bad hostfile: $output"; false; }
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" badhost "node2,node3" 3 fatal
    [ "$status" -ne 0 ] && [[ "$output" == *"host node2,node3 lists 2 slots for the 3 ranks of"*"(MPI_ERR_SPAWN)"* ]] ||
        { echo "short host list: $output"; false; }
    # the same host twice around another: one row per run of commands
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" hosts "127.0.0.1:${CLUSTER_PORTS[1]}" 1 "127.0.0.1:${CLUSTER_PORTS[2]}" 2 "127.0.0.1:${CLUSTER_PORTS[1]}" 1
    [ "$status" -eq 0 ] && [[ "$output" == *"child 0 of 4 on node2"* && "$output" == *"child 1 of 4 on node3"* &&
        "$output" == *"child 2 of 4 on node3"* && "$output" == *"child 3 of 4 on node2"* ]] ||
        { echo "around: $output"; false; }
    # a host without room for its command fails the whole spawn and frees what it reserved:
    # then both of node2's slots take a spawn
    run timeout 60 "${launch[@]}" --hostfile "$hf2" -n 1 "$exe" badhosts "127.0.0.1:${CLUSTER_PORTS[1]}" 1 "127.0.0.1:${CLUSTER_PORTS[2]}" 3
    [ "$status" -eq 0 ] && [[ "$output" == *"badhosts failed as it should"* && "$output" != *" of 4 on "* &&
        "$output" == *"child 0 of 2 on node2"* && "$output" == *"child 1 of 2 on node2"* ]] ||
        { echo "no room: $output"; false; }
}
