#!/usr/bin/env bats
# Slurm as it is used (tmpi-launch(1) "Slurm", docs/ADMIN.md "Slurm"):
#   - inside an allocation without system agents, tmpi-launch starts one agent per node with
#     srun and runs the ranks on them: with tests/bats/slurm/fake-srun (no Slurm needed), and
#     with a real one-node Slurm (munged, slurmctld, slurmd started here; skipped with the
#     reason where they cannot start);
#   - with a system agent it uses that one;
#   - the prolog/epilog recipe (etc/slurm/tmpi-prolog, tmpi-epilog) with [agent]
#     allow_users_dir, run as slurmd would run them (root, SLURM_JOB_ID, SLURM_JOB_USER).

bats_require_minimum_version 1.5.0
load helpers
load slurm/cluster

FAKE_SRUN="$TMPI_SRC/tests/bats/slurm/fake-srun"

setup() {
    # No system agent may answer unless a test starts one; a job id of our own, so that the
    # agents' sockets (tmpi-alloc.JOB.*) are ours to look for.
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    export SLURM_JOB_ID=$((900000 + $$ % 90000))
    # the agents' sockets (and the coordinator's directory) go under this test's own TMPDIR:
    # a real Slurm numbers jobs from 1 in every test, so /tmp would mix tests up
    export TMPDIR="$BATS_TEST_TMPDIR/tmp"
    mkdir -p "$TMPDIR"
    unset SLURM_NTASKS SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NNODES TMPI_SRUN
}

teardown() {
    stop_all_agents
    slurm_cluster_stop
    local u
    if [ -f "$BATS_TEST_TMPDIR/users" ]; then
        while read -r u; do userdel -r -f "$u" 2>/dev/null || true; done <"$BATS_TEST_TMPDIR/users"
    fi
    [ -n "${PUB:-}" ] && rm -rf "$PUB"
    # agents a failed test left behind: by the PIDs fake-srun recorded
    if [ -f "$BATS_TEST_TMPDIR/srun.pids" ]; then
        while read -r u; do kill -TERM "$u" 2>/dev/null || true; done <"$BATS_TEST_TMPDIR/srun.pids"
    fi
    true
}

# No agent socket of this test's allocation is left (every agent removed its own on exit).
no_alloc_sockets() {
    local left
    left=$(find "$TMPDIR" -maxdepth 1 -name "tmpi-alloc.$SLURM_JOB_ID.*" 2>/dev/null)
    [ -z "$left" ] || { echo "agent sockets left: $left" >&2; return 1; }
}

# Waits (bounded) until every PID in FILE is gone.
pids_gone() {
    local f=$1 p deadline=$((SECONDS + 30))
    while read -r p; do
        while kill -0 "$p" 2>/dev/null; do
            [ $SECONDS -lt $deadline ] || { echo "pid $p still runs" >&2; return 1; }
            sleep 0.2
        done
    done <"$f"
}

@test "slurm: without system agents, srun starts one agent per node, ports come back and the ranks run there" {
    need_agent
    local hello
    hello=$(prog hello)
    cd "$BATS_TEST_TMPDIR"
    export TMPI_SRUN=$FAKE_SRUN FAKE_SRUN_LOG="$BATS_TEST_TMPDIR/srun.log"
    export FAKE_SRUN_PIDS="$BATS_TEST_TMPDIR/srun.pids"
    # two "nodes", both this machine under two names; 2(x1),1 slots: ranks 0-1 and 2
    export SLURM_JOB_NODELIST=localhost,127.0.0.1 SLURM_TASKS_PER_NODE='2,1' SLURM_NTASKS=3
    run --separate-stderr "$LAUNCH_BIN" "$hello"
    expect_status 0
    expect_line "Hello from rank 0 of 3 on fake0"
    expect_line "Hello from rank 1 of 3 on fake0"
    expect_line "Hello from rank 2 of 3 on fake1"
    local cmd
    cmd=$(cat "$FAKE_SRUN_LOG")
    for want in --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist=localhost,127.0.0.1 \
        --whole --overlap --cpu-bind=none --input=all --label "--key-fd 0" "--listen :0" \
        "--ready-fd 1"; do
        [[ " $cmd " == *" $want "* ]] || { echo "srun lacks '$want': $cmd"; false; }
    done
    # the key goes over srun's stdin, never on a command line
    if grep -Eq '[0-9a-f]{64}' <<<"$cmd"; then false; fi
    [ "$(wc -l <"$FAKE_SRUN_PIDS")" -eq 2 ]
    pids_gone "$FAKE_SRUN_PIDS"
    no_alloc_sockets
}

@test "slurm: the allocation's agents end when the launcher is killed" {
    need_agent
    local hostinfo
    hostinfo=$(prog_agent hostinfo)
    cd "$BATS_TEST_TMPDIR"
    export TMPI_SRUN=$FAKE_SRUN FAKE_SRUN_PIDS="$BATS_TEST_TMPDIR/srun.pids"
    export SLURM_JOB_NODELIST=localhost SLURM_TASKS_PER_NODE=2 SLURM_NTASKS=2
    # rank 0 prints its cgroup lines, then waits for a file that never comes
    "$LAUNCH_BIN" "$hostinfo" cgroup "$BATS_TEST_TMPDIR/never" >"$BATS_TEST_TMPDIR/out" 2>&1 &
    local launcher=$!
    local deadline=$((SECONDS + 60))
    until grep -q '^cgroup ' "$BATS_TEST_TMPDIR/out" 2>/dev/null ||
        ! kill -0 "$launcher" 2>/dev/null || [ $SECONDS -ge $deadline ]; do
        sleep 0.2
    done
    grep -q '^cgroup ' "$BATS_TEST_TMPDIR/out" || { cat "$BATS_TEST_TMPDIR/out"; false; }
    [ -s "$FAKE_SRUN_PIDS" ]
    kill -KILL "$launcher"
    wait "$launcher" || true
    pids_gone "$FAKE_SRUN_PIDS"
}

@test "slurm: an srun that fails is reported and nothing is left" {
    need_agent
    local hello
    hello=$(prog hello)
    export TMPI_SRUN=false SLURM_JOB_NODELIST=localhost SLURM_TASKS_PER_NODE=2 SLURM_NTASKS=2
    run --separate-stderr "$LAUNCH_BIN" "$hello"
    expect_status 1
    [[ "$stderr" == *"the agents of the allocation did not start (srun ended"* ]] ||
        { echo "got: $stderr"; false; }
    export TMPI_SRUN="$BATS_TEST_TMPDIR/no-such-srun"
    run --separate-stderr "$LAUNCH_BIN" "$hello"
    expect_status 1
    [[ "$stderr" == *"cannot run srun ($TMPI_SRUN)"* ]] || { echo "got: $stderr"; false; }
    no_alloc_sockets
}

@test "slurm: agents that never report their ports fail the launch after TMPI_ALLOC_TIMEOUT" {
    need_agent
    local hello
    hello=$(prog hello)
    # an "srun" that takes the key and says nothing until its stdin closes
    printf '#!/bin/sh\ncat >/dev/null\n' >"$BATS_TEST_TMPDIR/silent-srun"
    chmod +x "$BATS_TEST_TMPDIR/silent-srun"
    export TMPI_SRUN="$BATS_TEST_TMPDIR/silent-srun" TMPI_ALLOC_TIMEOUT=1
    export SLURM_JOB_NODELIST=localhost SLURM_TASKS_PER_NODE=1 SLURM_NTASKS=1
    run --separate-stderr "$LAUNCH_BIN" "$hello"
    expect_status 1
    [[ "$stderr" == *"did not report their ports within 1 s (TMPI_ALLOC_TIMEOUT)"* ]] ||
        { echo "got: $stderr"; false; }
    TMPI_ALLOC_TIMEOUT=0 run --separate-stderr "$LAUNCH_BIN" "$hello"
    expect_status 2
    [[ "$stderr" == *"TMPI_ALLOC_TIMEOUT=0: not a whole number of seconds from 1 to 3600"* ]] ||
        { echo "got: $stderr"; false; }
}

@test "slurm: with a system agent answering, tmpi-launch uses it and runs no srun" {
    need_agent
    local hello
    hello=$(prog hello)
    start_agent sys
    printf '#!/bin/sh\ntouch "%s"\nexit 1\n' "$BATS_TEST_TMPDIR/srun-ran" >"$BATS_TEST_TMPDIR/marker-srun"
    chmod +x "$BATS_TEST_TMPDIR/marker-srun"
    export TMPI_AGENT=$AGENT_SOCK TMPI_SRUN="$BATS_TEST_TMPDIR/marker-srun"
    export SLURM_JOB_NODELIST=localhost SLURM_TASKS_PER_NODE=3 SLURM_NTASKS=3
    run --separate-stderr "$LAUNCH_BIN" "$hello"
    expect_status 0
    expect_line "Sum of ranks: 3 (expected 3)"
    [ ! -e "$BATS_TEST_TMPDIR/srun-ran" ]
    # a one-node allocation on another machine (salloc's shell on a login node) goes to that
    # node's agent through ours, which needs a mesh: this one has none, and says so
    export SLURM_JOB_NODELIST=tmpi-elsewhere-node
    run --separate-stderr "$LAUNCH_BIN" "$hello"
    expect_status 1
    [[ "$stderr" == *"this agent has no mesh"* ]] || { echo "got: $stderr"; false; }
    [ ! -e "$BATS_TEST_TMPDIR/srun-ran" ]
}

@test "slurm: tmpid --key-fd takes one hex line, refuses a bad key with a reason, and only with --private's rules" {
    need_agent
    run --separate-stderr "$TMPID" --private --key-file /etc/hostname --socket "$BATS_TEST_TMPDIR/a.sock"
    expect_status 2
    [[ "$stderr" == *"a --private agent takes its key from --key-fd only"* ]] || { echo "got: $stderr"; false; }
    run --separate-stderr "$TMPID" --private --listen :0 --socket "$BATS_TEST_TMPDIR/a.sock"
    expect_status 2
    [[ "$stderr" == *"a --private agent listens only with --key-fd"* ]] || { echo "got: $stderr"; false; }
    run --separate-stderr "$TMPID" --private --key-fd 7 --socket "$BATS_TEST_TMPDIR/a.sock"
    expect_status 2
    [[ "$stderr" == *"--key-fd: not an open file descriptor: 7"* ]] || { echo "got: $stderr"; false; }
    run --separate-stderr "$TMPID" --private --key-fd 0 --listen :0 \
        --socket "$BATS_TEST_TMPDIR/a.sock" <<<"not a key"
    expect_status 1
    [[ "$stderr" == *"the key on fd 0 is not hexadecimal digits"* ]] || { echo "got: $stderr"; false; }
    [ ! -e "$BATS_TEST_TMPDIR/a.sock" ]
    # a good key: ready with its port, and gone when the pipe closes
    local key
    key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
    run --separate-stderr "$TMPID" --private --key-fd 0 --listen 127.0.0.1:0 --ready-fd 1 \
        --socket "$BATS_TEST_TMPDIR/a.sock" <<<"$key"
    expect_status 0
    [ "${lines[0]}" = READY=1 ]
    [[ "${lines[1]}" =~ ^PORT=[1-9][0-9]*$ ]] || { echo "got: $output"; false; }
    [[ "$stderr" == *"the key's pipe closed: shutting down"* ]] || { echo "got: $stderr"; false; }
    [ ! -e "$BATS_TEST_TMPDIR/a.sock" ]
}

# ---- the prolog/epilog recipe ----

need_users() {
    [ "$(id -u)" -eq 0 ] || skip "needs root to create users"
    command -v useradd >/dev/null && command -v runuser >/dev/null || skip "no useradd/runuser"
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$LAUNCH_BIN" ||
        skip "other users cannot reach the build tree ($TMPI_BUILD)"
    UA="tmpis_a$$" UB="tmpis_b$$"
    local u
    for u in "$UA" "$UB"; do
        useradd -M -s /bin/sh "$u" && echo "$u" >>"$BATS_TEST_TMPDIR/users"
    done
    PUB=$(mktemp -d /tmp/tmpis.XXXXXX)
    chmod 755 "$PUB"
    cp "$(prog_agent hostinfo)" "$PUB/"
    chmod 755 "$PUB/hostinfo"
    ALLOW="$PUB/allowed"
}

# A hostinfo built from the agent test programs, once per file.
prog_agent() {
    local out="$BATS_FILE_TMPDIR/progs/$1"
    if [ ! -x "$out" ]; then
        mkdir -p "$BATS_FILE_TMPDIR/progs"
        tmpicc -o "$out" "$TMPI_SRC/tests/bats/agent_progs/$1.c" >&2 || return 1
    fi
    echo "$out"
}

# start_conf_agent NAME CONF [ARGS...]: an agent with config text CONF on $PUB/NAME.sock
start_conf_agent() {
    local name=$1 conf=$2
    shift 2
    printf '%b' "$conf" >"$PUB/$name.conf"
    local fifo="$BATS_TEST_TMPDIR/$name.ready" line=""
    mkfifo "$fifo"
    "$TMPID" --socket "$PUB/$name.sock" --config "$PUB/$name.conf" --ready-fd 3 "$@" 3>"$fifo" \
        >"$BATS_TEST_TMPDIR/$name.log" 2>&1 &
    AGENT_PIDS[$name]=$!
    read -r line <"$fifo" || true
    [ "$line" = READY=1 ] || { cat "$BATS_TEST_TMPDIR/$name.log"; false; }
}

# slurm_script prolog|epilog JOB USER [DIR]: run the script as slurmd would (root, Slurm's
# variables, nothing else of ours)
slurm_script() {
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_JOB_ID="$2" SLURM_JOB_USER="$3" \
        TMPI_ALLOW_DIR="${4:-$ALLOW}" SLURM_SCRIPT_CONTEXT="$1_slurmd" \
        "$TMPI_SRC/etc/slurm/tmpi-$1"
}

run_as() { # USER SOCK [NODES...]: 2 ranks of hostinfo id, as USER
    local user=$1 sock=$2
    shift 2
    run --separate-stderr runuser -u "$user" -- sh -c 'cd "$1" && shift && exec "$@"' sh "$PUB" \
        "$LAUNCH_BIN" --agent "$sock" "$@" -n 2 ./hostinfo id
}

@test "slurm: prolog and epilog admit a user exactly while one of their jobs holds the node (allow_users_dir)" {
    need_agent
    need_users
    start_conf_agent a "[agent]\nallow_users_dir = $ALLOW\n"
    # before any prolog: the directory does not even exist
    run_as "$UA" "$PUB/a.sock"
    expect_status 1
    [[ "$stderr" == *"user $UA (uid $(id -u "$UA")) may not submit jobs to the agent on "*"no allocation of theirs holds this node (allow_users_dir $ALLOW"* ]] ||
        { echo "got: $stderr"; false; }
    slurm_script prolog 41 "$UA"
    slurm_script prolog 42 "$UA"
    [ "$(stat -c %a "$ALLOW")" = 755 ]
    run_as "$UA" "$PUB/a.sock"
    [ "$status" -eq 0 ] || { echo "$UA with jobs 41, 42: $status $stderr"; false; }
    [[ "$output" == *" uid=$(id -u "$UA") "* ]]
    run_as "$UB" "$PUB/a.sock"
    expect_status 1
    [[ "$stderr" == *"user $UB "*"may not submit"* ]]
    # one job ends: the other still admits the user
    slurm_script epilog 41 "$UA"
    run_as "$UA" "$PUB/a.sock"
    [ "$status" -eq 0 ] || { echo "$UA with job 42: $status $stderr"; false; }
    slurm_script epilog 42 "$UA"
    run_as "$UA" "$PUB/a.sock"
    expect_status 1
    [[ "$stderr" == *"no allocation of theirs holds this node"* ]]
    # root always may
    run "$LAUNCH_BIN" --agent "$PUB/a.sock" -n 1 "$PUB/hostinfo" id
    expect_status 0
    # what Slurm never sends is refused, and nothing is written
    run slurm_script prolog "4x" "$UA"
    expect_status 1
    [[ "$output" == *"SLURM_JOB_ID='4x' is not a job id"* ]]
    run slurm_script prolog 43 "../$UA"
    expect_status 1
    [ -z "$(ls -A "$ALLOW")" ]
}

@test "slurm: allow_users_dir that others may write lets nobody in, and says why" {
    need_agent
    need_users
    start_conf_agent a "[agent]\nallow_users_dir = $ALLOW\n"
    slurm_script prolog 51 "$UA"
    chmod 777 "$ALLOW"
    run_as "$UA" "$PUB/a.sock"
    expect_status 1
    [[ "$stderr" == *"allow_users_dir $ALLOW must belong to root (or the agent's user) and be writable by nobody else"* ]] ||
        { echo "got: $stderr"; false; }
    chmod 755 "$ALLOW"
    run_as "$UA" "$PUB/a.sock"
    [ "$status" -eq 0 ] || { echo "$status $stderr"; false; }
}

@test "slurm: an allocation on one node is no right to another node's agent" {
    need_agent
    need_users
    local key="$PUB/cluster.key" ports
    head -c 32 /dev/urandom >"$key"
    chmod 600 "$key"
    read -r -a ports < <(free_ports 2)
    start_conf_agent n1 "[agent]\nallow_users_dir = $PUB/allowed1\n" --name node1 \
        --listen "127.0.0.1:${ports[0]}" --key-file "$key"
    start_conf_agent n2 "[agent]\nallow_users_dir = $PUB/allowed2\n" --name node2 \
        --listen "127.0.0.1:${ports[1]}" --key-file "$key"
    slurm_script prolog 61 "$UA" "$PUB/allowed1"
    printf '127.0.0.1 slots=1 port=%s\n127.0.0.1 slots=1 port=%s\n' "${ports[@]}" >"$PUB/hosts"
    chmod 644 "$PUB/hosts"
    run_as "$UA" "$PUB/n1.sock" --hostfile "$PUB/hosts"
    [ "$status" -ne 0 ] || { echo "expected a refusal: $output"; false; }
    [[ "$stderr" == *"may not submit jobs to the agent on node2"* ]] || { echo "got: $stderr"; false; }
    slurm_script prolog 61 "$UA" "$PUB/allowed2"
    run_as "$UA" "$PUB/n1.sock" --hostfile "$PUB/hosts"
    [ "$status" -eq 0 ] || { echo "with both nodes: $status $stderr"; false; }
}

# ---- a real Slurm ----

start_slurm() {
    need_agent
    slurm_cluster_start "$BATS_TEST_TMPDIR/slurm" || skip "no Slurm here: $SLURM_SKIP"
    unset SLURM_JOB_ID
}

@test "slurm (real): salloc -N1 -n4 tmpi-launch ./hello runs 4 ranks on agents srun started" {
    start_slurm
    cp "$(prog hello)" "$BATS_TEST_TMPDIR/hello"
    cd "$BATS_TEST_TMPDIR"
    run --separate-stderr timeout 60 salloc -N1 -n4 "$LAUNCH_BIN" ./hello
    expect_status 0
    local r
    for r in 0 1 2 3; do
        grep -q "^Hello from rank $r of 4 on " <<<"$output" || { echo "no rank $r: $output"; false; }
    done
    expect_line "Sum of ranks: 6 (expected 6)"
    # the ranks ran in a step of the allocation: srun's step 0 of job 1
    grep -q "StepId=1.0" "$SLURM_DIR/slurmd.log" ||
        { echo "no step 1.0 in slurmd.log"; tail -20 "$SLURM_DIR/slurmd.log"; false; }
    SLURM_JOB_ID=1 no_alloc_sockets
}

@test "slurm (real): an sbatch script runs tmpi-launch without -n, standard input included" {
    start_slurm
    cp "$(prog hello)" "$BATS_TEST_TMPDIR/hello"
    cp "$(prog_agent hostinfo)" "$BATS_TEST_TMPDIR/hostinfo"
    cd "$BATS_TEST_TMPDIR"
    # on the allocation's only node the batch script's own private agent runs the ranks, so
    # rank 0 reads the script's standard input
    cat >job.sh <<EOF
#!/bin/sh
#SBATCH -N1 -n3
export TMPI_AGENT="$TMPI_AGENT"
"$LAUNCH_BIN" ./hello || exit 1
echo piped | exec "$LAUNCH_BIN" ./hostinfo stdin
EOF
    run timeout 60 sbatch --wait --output="$BATS_TEST_TMPDIR/job.out" job.sh
    expect_status 0
    run cat job.out
    expect_line "Sum of ranks: 3 (expected 3)"
    expect_line "stdin: piped"
    grep -q "^Hello from rank 2 of 3 on " job.out
}

@test "slurm (real): killing tmpi-launch inside the allocation ends its agents' step" {
    start_slurm
    cp "$(prog_agent hostinfo)" "$BATS_TEST_TMPDIR/hostinfo"
    cd "$BATS_TEST_TMPDIR"
    # Inside the allocation: start the job, wait for rank 0's output, kill -9 the launcher,
    # then wait (bounded) until no agent of this allocation runs; say what was seen.
    cat >inside.sh <<EOF
#!/bin/bash
"$LAUNCH_BIN" ./hostinfo cgroup "$BATS_TEST_TMPDIR/never" >out 2>&1 &
launcher=\$!
deadline=\$((SECONDS + 60))
until grep -q '^cgroup ' out || [ \$SECONDS -ge \$deadline ]; do sleep 0.2; done
grep -q '^cgroup ' out || { echo "the job did not start"; cat out; exit 1; }
pgrep -f "tmpi-alloc.\$SLURM_JOB_ID." >/dev/null || { echo "no agent found"; exit 1; }
kill -KILL \$launcher
deadline=\$((SECONDS + 40))
while pgrep -f "tmpi-alloc.\$SLURM_JOB_ID." >/dev/null && [ \$SECONDS -lt \$deadline ]; do sleep 0.2; done
pgrep -af "tmpi-alloc.\$SLURM_JOB_ID." && { echo "agents still run"; exit 1; }
ls "\$TMPDIR"/tmpi-alloc.* 2>/dev/null && { echo "agent sockets left"; cat out; exit 1; }
echo "agents gone"
EOF
    chmod +x inside.sh
    TMPI_AGENT="$TMPI_AGENT" run timeout 90 salloc -N1 -n2 ./inside.sh
    expect_status 0
    expect_line "agents gone"
}

@test "slurm (real): a user's salloc runs the agents and the ranks as that user" {
    need_agent
    need_users
    slurm_cluster_start "$PUB/slurm" || skip "no Slurm here: $SLURM_SKIP"
    unset SLURM_JOB_ID
    export TMPDIR="$PUB/tmp"
    mkdir -p "$TMPDIR"
    chmod 1777 "$TMPDIR"
    run --separate-stderr runuser -u "$UA" -- sh -c 'cd "$1" && shift && exec "$@"' sh "$PUB" \
        timeout 60 salloc -N1 -n3 "$LAUNCH_BIN" ./hostinfo id
    expect_status 0
    [[ "$output" == *" uid=$(id -u "$UA") "* ]] || { echo "got: $output"; false; }
    expect_line OK
    grep -q "StepId=1.0" "$SLURM_DIR/slurmd.log"
    SLURM_JOB_ID=1 no_alloc_sockets
}
