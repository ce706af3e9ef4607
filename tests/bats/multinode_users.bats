#!/usr/bin/env bats
# Jobs across several agents run, on every node, in a job host of their own as the user who
# submitted them (jobhost.h, job_link.h): two throwaway users (created and removed here) on
# three root agents on loopback ports with one key (one of them, in one test, with a user
# database that lacks one user), and one user's own unprivileged agents.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
    [ "$(id -u)" -eq 0 ] || skip "needs root to create users"
    command -v useradd >/dev/null && command -v runuser >/dev/null && command -v setpriv >/dev/null ||
        skip "no useradd/runuser/setpriv"
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$LAUNCH_BIN" ||
        skip "other users cannot reach the build tree ($TMPI_BUILD)"
    need_agent
    # programs, sockets and the key where the users can reach them (the key stays 0600 root)
    PUB=$(mktemp -d /tmp/tmpit-mn.XXXXXX)
    echo "$PUB" >"$BATS_TEST_TMPDIR/pubdir"
    chmod 755 "$PUB"
    local p
    for p in mn_files sleeper names_jobs xconn; do
        tmpicc -o "$PUB/$p" "$BATS_TEST_DIRNAME/progs/$p.c"
    done
    for p in ends hostinfo; do
        tmpicc -o "$PUB/$p" "$BATS_TEST_DIRNAME/agent_progs/$p.c"
    done
    chmod 755 "$PUB"/*
    UA="tmpit_ma$$"
    UB="tmpit_mb$$"
    user_up "$UA"
    user_up "$UB"
}

teardown() {
    stop_all_agents
    users_down
    if [ -f "$BATS_TEST_TMPDIR/pubdir" ]; then
        rm -rf "$(cat "$BATS_TEST_TMPDIR/pubdir")"
        rm -f "$BATS_TEST_TMPDIR/pubdir"
    fi
}

# Creates user $1 with a 0700 home; recorded for users_down.
user_up() {
    useradd -m -d "/home/$1" -s /bin/sh "$1" || return 1
    echo "$1" >>"$BATS_TEST_TMPDIR/users"
    chmod 700 "/home/$1"
}

users_down() {
    local u
    [ -f "$BATS_TEST_TMPDIR/users" ] || return 0
    while read -r u; do
        userdel -r -f "$u" 2>/dev/null || true
    done <"$BATS_TEST_TMPDIR/users"
    rm -f "$BATS_TEST_TMPDIR/users"
}

# as USER CMD...: CMD as USER, in USER's home, with a umask of 027.
as() {
    local u=$1
    shift
    runuser -u "$u" -- sh -c 'cd "$HOME" && umask 027 && exec "$@"' sh "$@"
}

# users_cluster N [AS_USER]: agents node1..nodeN on loopback ports with one key, their sockets
# and the key in $PUB (or a directory of AS_USER's there); run as root, or as AS_USER (the user's own agents, no privilege).
# Sets KEY, PORTS, SOCKS and HOSTS (2 slots per node).
users_cluster() {
    local n=$1 user=${2:-} i line
    local dir=$PUB
    if [ -n "$user" ]; then
        dir="$PUB/$user"
        mkdir "$dir"
        chown "$user:" "$dir"
    fi
    KEY="$dir/cluster.key"
    head -c 32 /dev/urandom >"$KEY"
    chmod 600 "$KEY"
    [ -z "$user" ] || chown "$user:" "$KEY"
    read -r -a PORTS < <(free_ports "$n")
    SOCKS=()
    HOSTS="$PUB/hosts"
    : >"$HOSTS"
    for ((i = 1; i <= n; i++)); do
        local sock="$dir/node$i.sock" fifo="$BATS_TEST_TMPDIR/node$i.ready"
        local log="$BATS_TEST_TMPDIR/node$i.log"
        local -a pre=() peers=()
        local j
        for ((j = 1; j <= n; j++)); do
            ((j == i)) || peers+=(--peer "127.0.0.1:${PORTS[j - 1]}")
        done
        [ -z "$user" ] || pre=(setpriv --reuid="$user" --regid="$user" --init-groups)
        # WRAP_NODE=i: node i's agent sees WRAP_PASSWD as /etc/passwd (a mount namespace of
        # its own), as a node whose user database differs
        if [ "${WRAP_NODE:-0}" -eq "$i" ]; then
            pre=(unshare -m --propagation private sh -c
                'mount --bind "$0" /etc/passwd && exec "$@"' "$WRAP_PASSWD")
        fi
        mkfifo "$fifo"
        (cd / && exec "${pre[@]}" "$TMPID" --socket "$sock" --ready-fd 3 --log-level info \
            --name "node$i" --listen "127.0.0.1:${PORTS[i - 1]}" --key-file "$KEY" "${peers[@]}" \
            3>"$fifo" >"$log" 2>&1) &
        AGENT_PIDS[node$i]=$!
        line=""
        read -r line <"$fifo" || true
        [ "$line" = READY=1 ] || { cat "$log"; return 1; }
        SOCKS+=("$sock")
        echo "127.0.0.1 slots=2 port=${PORTS[i - 1]}" >>"$HOSTS"
    done
}

# mlaunch_as USER ARGS...: tmpi-launch as USER against node1, 60 s at most.
mlaunch_as() {
    local u=$1
    shift
    as "$u" timeout 60 "$LAUNCH_BIN" --agent "${SOCKS[0]}" --hostfile "$HOSTS" "$@"
}


# $output (tmpictl --json jobs) lists no job but ended ones (kept for ended_job_keep).
only_ended_jobs() {
    python3 -c 'import json,sys; sys.exit(any(j["state"] != "ended" for j in json.load(sys.stdin)["jobs"]))' \
        <<<"$output"
}

# The agent at socket $1 soon lists no job but ended ones: a member's job host sends its last
# frame (JobUnloaded) before it exits, so its job is "ending" until the agent has reaped it.
expect_only_ended_jobs() {
    local i
    for ((i = 0; i < 300; i++)); do
        run tmpictl --agent "$1" --json jobs
        only_ended_jobs && return 0
        sleep 0.1
    done
    echo "a job left on $1: $output" >&2
    return 1
}

@test "multinode users: two users across 3 agents read and write their own 0700 homes from every node; no rank reads the key" {
    users_cluster 3
    local u uid gid r node
    for u in "$UA" "$UB"; do
        echo "for $u only" >"/home/$u/input.dat"
        chown "$u:" "/home/$u/input.dat"
        chmod 600 "/home/$u/input.dat"
        run mlaunch_as "$u" -n 6 "$PUB/mn_files" input.dat "$KEY"
        expect_status 0
        grep -qx OK <<<"$output" || { echo "no OK: $output"; false; }
        uid=$(id -u "$u")
        gid=$(id -g "$u")
        for r in 0 1 2 3 4 5; do
            node="node$((r / 2 + 1))"
            local l
            l=$(grep "^rank $r on " <<<"$output") || { echo "no line of rank $r: $output"; false; }
            [[ "$l" == "rank $r on $node pid="* ]] || { echo "rank $r not on $node: $l"; false; }
            [[ "$l" == *" uid=$uid gid=$gid read=for $u only write=ok key=Permission denied" ]] ||
                { echo "rank $r as $u: expected uid=$uid gid=$gid, its file, no key; got: $l"; false; }
            # its file is the user's, made with the launcher's umask (027)
            [ "$(stat -c %U:%a "/home/$u/out.$r")" = "$u:640" ] ||
                { echo "out.$r: expected $u:640, got $(stat -c %U:%a "/home/$u/out.$r")"; false; }
            # the ranks ran in a job host, not in an agent
            local pid=${l#*pid=}
            pid=${pid%% *}
            local a
            for a in "${AGENT_PIDS[@]}"; do
                [ "$pid" != "$a" ] || { echo "rank $r ran inside an agent (pid $pid)"; false; }
            done
        done
        # one job host per node: three processes
        [ "$(grep -o 'pid=[0-9]*' <<<"$output" | sort -u | wc -l)" -eq 3 ] ||
            { echo "expected 3 job host processes: $output"; false; }
    done
    # each user's home stays closed to the other, on every node
    run mlaunch_as "$UB" -n 6 "$PUB/mn_files" "/home/$UA/input.dat" "$KEY"
    expect_status 0
    [ "$(grep -c "read=Permission denied" <<<"$output")" -eq 6 ] || { echo "$output"; false; }
}

@test "multinode users: a rank crashing on a non-coordinator node ends only its job; the other user's job across the same agents completes" {
    users_cluster 3
    local flag="$PUB/go" out="$BATS_TEST_TMPDIR/a.out"
    # UA's job spans the three nodes and waits (rank 0 for the file, the others in a barrier)
    as "$UA" "$LAUNCH_BIN" --agent "${SOCKS[0]}" --hostfile "$HOSTS" -n 6 "$PUB/hostinfo" \
        waitfile "$flag" >"$out" 2>&1 &
    local other=$!
    # rank 1 is on node2 when ranks are dealt round robin
    run --separate-stderr mlaunch_as "$UB" --map-by node -n 6 "$PUB/ends" segv
    [ "$status" -eq 139 ] || { echo "segv: expected 139, got $status: $stderr"; false; }
    [[ "$stderr" == *"rank 1"*"signal 11"*"(on node2)"* ]] ||
        { echo "segv: rank, signal or node not named: $stderr"; false; }
    run --separate-stderr mlaunch_as "$UB" --map-by node -n 6 "$PUB/ends" abort
    [ "$status" -eq 134 ] || { echo "abort: expected 134, got $status: $stderr"; false; }
    [[ "$stderr" == *"rank 1"*"(on node2)"* ]] || { echo "abort: rank or node not named: $stderr"; false; }
    # the whole job host on node2 dies: the node and the signal are named
    run --separate-stderr mlaunch_as "$UB" --map-by node -n 6 "$PUB/ends" killself
    [ "$status" -eq 137 ] || { echo "killself: expected 137, got $status: $stderr"; false; }
    [[ "$stderr" == *"node2"*"signal 9"* ]] || { echo "killself: node or signal not named: $stderr"; false; }
    local p
    for p in "${AGENT_PIDS[@]}"; do kill -0 "$p"; done
    touch "$flag"
    local st=0
    wait "$other" || st=$?
    [ "$st" -eq 0 ] || { echo "$UA's job ended with $st:"; cat "$out"; false; }
    grep -qx waited "$out" && grep -qx OK "$out" || { cat "$out"; false; }
    # nothing is left behind on any node (ended jobs stay listed for ended_job_keep)
    for p in "${SOCKS[@]}"; do
        expect_only_ended_jobs "$p"
    done
}

@test "multinode users: the member agents keep the job's state; the owner's tmpictl cancel on node3 ends it everywhere" {
    users_cluster 3
    local out="$BATS_TEST_TMPDIR/out"
    as "$UA" "$LAUNCH_BIN" --agent "${SOCKS[0]}" --hostfile "$HOSTS" -n 6 "$PUB/sleeper" \
        >"$out" 2>&1 &
    local pid=$! i
    for ((i = 0; i < 100; i++)); do
        run tmpictl --agent "${SOCKS[2]}" --json jobs
        [[ "$output" == *'"state":"running"'* ]] && break
        sleep 0.1
    done
    [[ "$output" == *'"owner":"'"$UA"'"'*'"state":"running"'*'"coordinator":"node1"'* ]] ||
        { echo "node3's part: expected $UA's running job coordinated by node1, got: $output"; false; }
    local id
    id=$(sed -n 's/.*"id":"\([0-9]*\)".*/\1/p' <<<"$output")
    # jobs --all: the owner sees it once, on its three nodes; another user does not see it
    run as "$UA" "$TMPI_BUILD/launcher/tmpictl" --agent "${SOCKS[1]}" --json jobs --all
    expect_status 0
    python3 -c '
import json, sys
j = [x for x in json.load(sys.stdin)["jobs"] if x["state"] != "ended"]
assert len(j) == 1 and j[0]["id"] == sys.argv[1] and sorted(j[0]["nodes"]) == ["node1", "node2", "node3"] and j[0]["nprocs"] == 6, j
' "$id" <<<"$output"
    run as "$UB" "$TMPI_BUILD/launcher/tmpictl" --agent "${SOCKS[1]}" --json jobs --all
    expect_status 0
    python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["jobs"] == [] and len(r["nodes"]) == 3, r' <<<"$output"
    # another user may not cancel it
    run as "$UB" "$TMPI_BUILD/launcher/tmpictl" --agent "${SOCKS[2]}" cancel "$id"
    [ "$status" -ne 0 ]
    run as "$UA" "$TMPI_BUILD/launcher/tmpictl" --agent "${SOCKS[2]}" cancel "$id"
    expect_status 0
    local st=0
    wait "$pid" || st=$?
    [ "$st" -eq 143 ] || { echo "expected 143, got $st:"; cat "$out"; false; }
    grep -q "job cancelled by uid $(id -u "$UA")" "$out" || { cat "$out"; false; }
    local s
    for s in "${SOCKS[@]}"; do
        expect_only_ended_jobs "$s"
    done
}

@test "multinode users: published names are each user's: another user's job on another agent does not find one, and publishes the same service name for itself" {
    users_cluster 2
    local svc="svc-$$" dir="$PUB/names.$UA" f pid st=0
    mkdir "$dir"
    chown "$UA:" "$dir"
    f="$dir/port"
    mlaunch_as "$UA" --map-by node -n 2 "$PUB/names_jobs" publish "$svc" "$f" >"$BATS_TEST_TMPDIR/pub.out" 2>&1 &
    pid=$!
    local i
    i=0
    while [ ! -e "$f" ] && [ "$i" -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    # the other user's lookup below proves nothing unless the name is published by then
    [ -e "$f" ] || { echo "the publisher never published:"; cat "$BATS_TEST_TMPDIR/pub.out"; false; }
    run as "$UB" timeout 60 "$LAUNCH_BIN" --agent "${SOCKS[1]}" -n 1 "$PUB/names_jobs" absent "$svc"
    [ "$status" -eq 0 ] && [[ "$output" == *"absent ok"* ]] || { echo "other user's lookup: $output"; false; }
    run as "$UB" timeout 60 "$LAUNCH_BIN" --agent "${SOCKS[0]}" -n 1 "$PUB/names_jobs" own "$svc"
    [ "$status" -eq 0 ] && [[ "$output" == *"own ok"* ]] || { echo "other user's publish: $output"; false; }
    # the owner's other job, on the other agent, finds it and lets the publisher end
    run as "$UA" timeout 60 "$LAUNCH_BIN" --agent "${SOCKS[1]}" -n 1 "$PUB/names_jobs" lookup "$svc" "$f"
    wait "$pid" || st=$?
    [ "$status" -eq 0 ] && [[ "$output" == *"lookup ok"* ]] || { echo "owner's lookup: $output"; false; }
    [ "$st" -eq 0 ] && grep -q "publish ok" "$BATS_TEST_TMPDIR/pub.out" || { echo "publish ($st):"; cat "$BATS_TEST_TMPDIR/pub.out"; false; }
}

@test "multinode users: a connect to another user's port is refused with MPI_ERR_PORT, and both agents log both users and jobs" {
    users_cluster 2
    local dir="$PUB/xconn.$UA" f pid st=0
    mkdir "$dir"
    chown "$UA:" "$dir"
    chmod 755 "$dir"
    f="$dir/port"
    # the port's job on node2, the connecting job of the other user on node1
    as "$UA" timeout 60 "$LAUNCH_BIN" --agent "${SOCKS[1]}" -n 1 "$PUB/xconn" open "$f" >"$BATS_TEST_TMPDIR/open.out" 2>&1 &
    pid=$!
    # the port's name, handed to the other user (UA's umask keeps the file from UB)
    local i=0 bdir="$PUB/xconn.$UB"
    while [ ! -e "$f" ] && [ "$i" -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    mkdir "$bdir"
    cp "$f" "$bdir/port"
    chown -R "$UB:" "$bdir"
    run as "$UB" timeout 60 "$LAUNCH_BIN" --agent "${SOCKS[0]}" -n 1 "$PUB/xconn" connect "$bdir/port"
    touch "$f.done"
    wait "$pid" || st=$?
    [ "$status" -ne 0 ] && [[ "$output" == *"MPI_Comm_connect: port tmpi-port:"*"is another user's (job "*" of uid $(id -u "$UA")): refused (MPI_ERR_PORT)"* ]] ||
        { echo "other user's connect ($status): $output"; false; }
    [[ "$output" != *"connect returned"* ]]
    [ "$st" -eq 0 ] && grep -q "open ok" "$BATS_TEST_TMPDIR/open.out" || { echo "open ($st):"; cat "$BATS_TEST_TMPDIR/open.out"; false; }
    local n
    for n in 1 2; do
        grep -q "connect of job [0-9]* (uid $(id -u "$UB")) to port tmpi-port:[0-9:]* of job [0-9]* (uid $(id -u "$UA")) refused: the port is another user's" "$BATS_TEST_TMPDIR/node$n.log" ||
            { echo "node$n logs no refusal:"; cat "$BATS_TEST_TMPDIR/node$n.log"; false; }
    done
}

@test "multinode users: a user who does not exist on one node: the job fails before any rank runs, naming the node" {
    command -v unshare >/dev/null || skip "no unshare"
    WRAP_PASSWD="$BATS_TEST_TMPDIR/passwd"
    grep -v "^$UB:" /etc/passwd >"$WRAP_PASSWD"
    chmod 644 "$WRAP_PASSWD"
    WRAP_NODE=3
    users_cluster 3
    run --separate-stderr mlaunch_as "$UB" -n 6 "$PUB/mn_files" input.dat "$KEY"
    [ "$status" -eq 1 ] || { echo "expected 1, got $status: $output $stderr"; false; }
    [[ "$stderr" == *"node 2 (127.0.0.1:${PORTS[2]}): cannot load: user $UB (uid $(id -u "$UB")) does not exist on node3"* ]] ||
        { echo "node not named: $stderr"; false; }
    [ -z "$(ls "/home/$UB" | grep '^out\.')" ] || { echo "a rank ran: $(ls "/home/$UB")"; false; }
    # the other user runs across the same agents
    run mlaunch_as "$UA" -n 6 "$PUB/mn_files" input.dat "$KEY"
    expect_status 0
}

@test "multinode users: a user's own agents (no root) run a job across them as that user" {
    users_cluster 3 "$UA"
    run mlaunch_as "$UA" -n 6 "$PUB/mn_files" input.dat "$KEY"
    expect_status 0
    [ "$(grep -c " uid=$(id -u "$UA") gid=$(id -g "$UA") .*write=ok key=open" <<<"$output")" -eq 6 ] ||
        { echo "$output"; false; }
    # another user cannot use them
    run --separate-stderr mlaunch_as "$UB" -n 6 "$PUB/mn_files" input.dat "$KEY"
    [ "$status" -ne 0 ]
}
