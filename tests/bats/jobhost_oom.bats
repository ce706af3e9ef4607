#!/usr/bin/env bats
# A job that exhausts memory ends its own job only (issue 15, "Containment"), with no TMPI
# memory limit set: when the node runs out, the kernel's OOM killer ends the job host that holds
# the memory, never the agent (agent/base/oom_score.h), and the launcher reports the signal
# and "out of memory".  A rank whose malloc fails and that aborts is an abort like any other.
# The "node" is a memory cgroup the test makes and starts the whole agent in; everything it
# creates (users, cgroups, processes) is removed again, processes by their PIDs.

bats_require_minimum_version 1.5.0
load sanitizer
load one_agent

setup_file() {
    export PROGS="$BATS_FILE_TMPDIR/progs"
    mkdir -p "$PROGS"
    chmod 755 "$BATS_FILE_TMPDIR" "$PROGS"
    for p in ends hostinfo; do
        "$TMPI_BUILD/launcher/tmpicc" -o "$PROGS/$p" "$TMPI_SRC/tests/bats/agent_progs/$p.c"
    done
    chmod 755 "$PROGS"/*
}

tmpictl() { "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" "$@"; }
L="$TMPI_BUILD/launcher/tmpi-launch"

# ---- throwaway users tmpit_* with 0700 homes (root only), removed again ----

need_users() {
    [ "$(id -u)" -eq 0 ] || skip "needs root to create users and cgroups"
    command -v useradd >/dev/null && command -v runuser >/dev/null || skip "no useradd/runuser"
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$L" ||
        skip "other users cannot reach the build tree ($TMPI_BUILD)"
    UA="tmpit_oa$$"
    UB="tmpit_ob$$"
    local u
    for u in "$UA" "$UB"; do
        useradd -m -d "/home/$u" -s /bin/sh "$u" || return 1
        echo "$u" >>"$BATS_TEST_TMPDIR/users"
        chmod 700 "/home/$u"
    done
    PUB=$(mktemp -d /tmp/tmpit-oom.XXXXXX)
    echo "$PUB" >"$BATS_TEST_TMPDIR/pubdir"
    cp "$PROGS"/* "$PUB"/
    chmod 755 "$PUB" "$PUB"/*
    SOCK_DIR=$PUB
}

# as USER CMD...: CMD as USER, in USER's home.
as() {
    local u=$1
    shift
    runuser -u "$u" -- sh -c 'cd "$HOME" && exec "$@"' sh "$@"
}

# ---- the stand-in node: a memory cgroup with a limit, the agent inside ----

# node_cgroup_up BYTES: a memory cgroup limited to BYTES (no swap beyond) in the v1 memory
# hierarchy, else in cgroup v2; sets NODE_CG.  Skips where neither can be made.
node_cgroup_up() {
    local bytes=$1 mnt own
    mnt=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)memory(,|$)/ {print $5; exit}' /proc/self/mountinfo)
    if [ -n "$mnt" ]; then
        own=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup)
        [ "$own" = / ] && own=""
        NODE_CG="$mnt$own/tmpit-oom.$$.$BATS_TEST_NUMBER"
        mkdir "$NODE_CG" || skip "cannot create a v1 memory cgroup under $mnt$own"
        echo "$NODE_CG" >"$BATS_TEST_TMPDIR/nodecg"
        echo "$bytes" >"$NODE_CG/memory.limit_in_bytes" || return 1
        if [ -e "$NODE_CG/memory.memsw.limit_in_bytes" ]; then
            echo "$bytes" >"$NODE_CG/memory.memsw.limit_in_bytes" || return 1
        fi
        return 0
    fi
    mnt=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
    if [ -n "$mnt" ] && grep -qw memory "$mnt/cgroup.controllers" 2>/dev/null; then
        grep -qw memory "$mnt/cgroup.subtree_control" || echo +memory >"$mnt/cgroup.subtree_control" ||
            skip "cannot enable the v2 memory controller at $mnt"
        NODE_CG="$mnt/tmpit-oom.$$.$BATS_TEST_NUMBER"
        mkdir "$NODE_CG" || skip "cannot create a v2 cgroup at $mnt"
        echo "$NODE_CG" >"$BATS_TEST_TMPDIR/nodecg"
        echo "$bytes" >"$NODE_CG/memory.max" || return 1
        [ ! -e "$NODE_CG/memory.swap.max" ] || echo 0 >"$NODE_CG/memory.swap.max" || return 1
        return 0
    fi
    skip "no memory cgroup (v1 memory hierarchy or v2 memory controller) to stand in for a node"
}

# Ends what is left in the node cgroup (by PID), then removes it and what the agent left
# inside (OWN/tmpid stays after an agent, cgroup.c).
node_cgroup_down() {
    local cg pid i
    [ -f "$BATS_TEST_TMPDIR/nodecg" ] || return 0
    cg=$(cat "$BATS_TEST_TMPDIR/nodecg")
    for ((i = 0; i < 100; i++)); do
        pids=$(find "$cg" -name cgroup.procs -exec cat {} + 2>/dev/null)
        [ -z "$pids" ] && break
        for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
        sleep 0.1
    done
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ ! -d "$cg" ] || { echo "cannot remove the cgroup $cg" >&2; return 1; }
    rm -f "$BATS_TEST_TMPDIR/nodecg"
}

teardown() {
    [ -z "${FLAG:-}" ] || touch "$FLAG"
    local pid
    for pid in ${LAUNCHERS:-}; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    agent_down
    node_cgroup_down
    if [ -f "$BATS_TEST_TMPDIR/users" ]; then
        while read -r u; do userdel -r -f "$u" 2>/dev/null || true; done <"$BATS_TEST_TMPDIR/users"
        rm -f "$BATS_TEST_TMPDIR/users"
    fi
    if [ -f "$BATS_TEST_TMPDIR/pubdir" ]; then
        rm -rf "$(cat "$BATS_TEST_TMPDIR/pubdir")"
        rm -f "$BATS_TEST_TMPDIR/pubdir"
    fi
}

# beside USER: a job of USER that waits in the open of the FIFO FLAG (another job's end must not
# touch it), in the background; waits until the agent lists it running.  Sets BESIDE (its
# launcher) and FLAG.  While it waits it allocates nothing: a job that allocates while the node
# is out of memory can be the kernel's next choice (a second OOM kill can come before the first
# victim's memory is freed; waitfile's polling lookups allocate dentries, and did draw it).
beside() {
    FLAG="$PUB/go"
    mkfifo -m 600 "$FLAG"
    chown "$1:" "$FLAG"
    as "$1" "$L" --agent "$SOCK" -n 2 "$PUB/hostinfo" waitfifo "$FLAG" >"$BATS_TEST_TMPDIR/beside" 2>&1 &
    BESIDE=$!
    LAUNCHERS="${LAUNCHERS:-} $BESIDE"
    local i
    for ((i = 0; i < 600; i++)); do
        tmpictl jobs | grep -q running && return 0
        kill -0 "$BESIDE" 2>/dev/null || break
        sleep 0.1
    done
    echo "the job beside did not start:" >&2
    cat "$BATS_TEST_TMPDIR/beside" >&2
    return 1
}

# The job beside, released (a writer opens the FIFO; bounded should its reader be gone), must
# complete with its whole output.
beside_completes() {
    timeout 30 sh -c ': >"$1"' sh "$FLAG" || true
    local st=0
    wait "$BESIDE" || st=$?
    [ "$st" -eq 0 ] || { echo "the job beside ended with $st:"; cat "$BATS_TEST_TMPDIR/beside"; return 1; }
    grep -qx waited "$BATS_TEST_TMPDIR/beside" && grep -qx OK "$BATS_TEST_TMPDIR/beside" ||
        { echo "the job beside's output:"; cat "$BATS_TEST_TMPDIR/beside"; return 1; }
}

# The agent is the one started (same PID) and answers.
agent_answers() {
    kill -0 "$AGENT_PID" || { echo "the agent (pid $AGENT_PID) is gone"; cat "$LOG"; return 1; }
    run tmpictl --json status
    [ "$status" -eq 0 ] || { echo "tmpictl status failed ($status): $output"; return 1; }
    [[ "$output" == *"\"pid\":$AGENT_PID,"* ]] || { echo "another agent answered: $output"; return 1; }
}

# Can this process lower its OOM score (CAP_SYS_RESOURCE)?  A sandbox may not grant it.
can_lower_oom_score() { sh -c 'echo -1 >/proc/self/oom_score_adj' 2>/dev/null; }

@test "jobhost oom: the agent lowers its OOM score, each job host (as its user) raises its own; the kernel rates the agent lower; configured and reloaded values" {
    need_users
    agent_up
    local mine want
    mine=$(cat /proc/self/oom_score_adj)
    if can_lower_oom_score; then
        want=-900
    else
        # (no CAP_SYS_RESOURCE in this sandbox, even for root: the agent says so and goes on)
        want=$mine
        grep -q "cannot set the agent's OOM score adjustment to -900" "$LOG" || { cat "$LOG"; false; }
    fi
    [ "$(cat "/proc/$AGENT_PID/oom_score_adj")" -eq "$want" ] ||
        { echo "agent: expected $want, got $(cat "/proc/$AGENT_PID/oom_score_adj")"; false; }
    run as "$UA" "$L" --agent "$SOCK" -n 2 "$PUB/hostinfo" oomscore
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    grep -qx "oom_score_adj 500" <<<"$output" || { echo "job host: expected 500, got: $output"; false; }
    # while a job runs, the kernel's badness of its host is above the agent's
    beside "$UB"
    local host
    # the newest child: the first job's host may still be on its way out
    host=$(pgrep -n -P "$AGENT_PID")
    [ -n "$host" ] || { echo "no job host under the agent"; false; }
    (($(cat "/proc/$host/oom_score") > $(cat "/proc/$AGENT_PID/oom_score"))) ||
        { echo "oom_score: job host $(cat "/proc/$host/oom_score"), agent $(cat "/proc/$AGENT_PID/oom_score")"; false; }
    beside_completes
    agent_down

    # the configured values; raising needs no privilege, so these hold everywhere
    local conf="$BATS_TEST_TMPDIR/tmpid.conf"
    printf '[agent]\noom_score_adj = 100\njob_oom_score_adj = 800\n' >"$conf"
    agent_up --config "$conf"
    [ "$(cat "/proc/$AGENT_PID/oom_score_adj")" -eq 100 ]
    run as "$UA" "$L" --agent "$SOCK" -n 2 "$PUB/hostinfo" oomscore
    grep -qx "oom_score_adj 800" <<<"$output" || { echo "job host: expected 800, got: $output"; false; }
    # a reload: the jobs started after it take job_oom_score_adj; oom_score_adj needs a restart
    printf '[agent]\noom_score_adj = 200\njob_oom_score_adj = 900\n' >"$conf"
    kill -HUP "$AGENT_PID"
    local i
    for ((i = 0; i < 300; i++)); do grep -q "reload: done" "$LOG" && break; sleep 0.1; done
    grep -qF "[agent] job_oom_score_adj changed: applies to jobs started from now" "$LOG" &&
        grep -qF "[agent] oom_score_adj changed: needs a restart" "$LOG" || { cat "$LOG"; false; }
    [ "$(cat "/proc/$AGENT_PID/oom_score_adj")" -eq 100 ]
    run as "$UA" "$L" --agent "$SOCK" -n 2 "$PUB/hostinfo" oomscore
    grep -qx "oom_score_adj 900" <<<"$output" || { echo "after the reload: expected 900, got: $output"; false; }
}

@test "jobhost oom: under a service user with CAP_SETUID/SETGID/KILL (OOMScoreAdjust=-900 as the unit sets it), job hosts raise their score as their users" {
    need_users
    command -v setpriv >/dev/null || skip "no setpriv"
    local svc="tmpit_os$$" want start=()
    useradd -M -s /usr/sbin/nologin "$svc"
    echo "$svc" >>"$BATS_TEST_TMPDIR/users"
    # the service manager lowers the score before the agent runs (it has CAP_SYS_RESOURCE);
    # where nobody may lower it, the agent keeps what it inherited and says so
    if can_lower_oom_score && command -v choom >/dev/null; then
        start=(choom -n -900 --)
        want=-900
    else
        want=$(cat /proc/self/oom_score_adj)
    fi
    mkdir "$PUB/svc"
    chown "$svc:" "$PUB/svc"
    SOCK="$PUB/svc/agent.sock"
    LOG="$BATS_TEST_TMPDIR/agent.log"
    local fifo="$BATS_TEST_TMPDIR/ready" line=""
    mkfifo "$fifo"
    (cd / && exec "${start[@]}" setpriv --reuid="$svc" --regid="$svc" --clear-groups \
        --inh-caps=+setuid,+setgid,+kill --ambient-caps=+setuid,+setgid,+kill \
        "$TMPI_BUILD/agent/tmpid" --socket "$SOCK" --ready-fd 3 --log-level info 3>"$fifo" >"$LOG" 2>&1) &
    AGENT_PID=$!
    read -r -t $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) line <"$fifo" || true
    [ "$line" = READY=1 ] || { cat "$LOG"; false; }
    [ "$(cat "/proc/$AGENT_PID/oom_score_adj")" -eq "$want" ] ||
        { echo "agent: expected $want, got $(cat "/proc/$AGENT_PID/oom_score_adj")"; cat "$LOG"; false; }
    [ "$want" -eq -900 ] || grep -q "cannot set the agent's OOM score adjustment" "$LOG" || { cat "$LOG"; false; }
    run as "$UA" "$L" --agent "$SOCK" -n 2 "$PUB/hostinfo" oomscore
    [ "$status" -eq 0 ] || { echo "$output"; cat "$LOG"; false; }
    grep -qx "oom_score_adj 500" <<<"$output" || { echo "job host: expected 500, got: $output"; false; }
}

@test "jobhost oom: job_oom_score_adj at or below oom_score_adj, or out of range, is a config error" {
    local conf="$BATS_TEST_TMPDIR/bad.conf"
    printf '[agent]\njob_oom_score_adj = -950\n' >"$conf"
    run "$TMPI_BUILD/agent/tmpid" --check-config "$conf"
    [ "$status" -ne 0 ]
    [[ "$output" == *"job_oom_score_adj (-950) must be above oom_score_adj (-900)"* ]] ||
        { echo "got: $output"; false; }
    printf '[agent]\noom_score_adj = -1001\n' >"$conf"
    run "$TMPI_BUILD/agent/tmpid" --check-config "$conf"
    [ "$status" -ne 0 ]
    [[ "$output" == *"bad value for [agent] oom_score_adj"* ]] || { echo "got: $output"; false; }
}

@test "jobhost oom: a node out of memory with no limit ends the job that ate it (137, out of memory); the agent and another user's job carry on" {
    need_users
    # 512 MiB stands in for the node (TSan: its shadow memory counts too)
    local mib=512
    [ "$(build_sanitizer)" != thread ] || mib=2048
    node_cgroup_up $((mib << 20))
    agent_up
    grep -q "cgroup: systemd" "$LOG" &&
        skip "job hosts go into systemd scopes, outside the cgroup standing in for the node"
    local kind
    kind=$(sed -n 's/.*cgroup: \(systemd\|v2\|v1\|none\) .*/\1/p' "$LOG" | head -1)
    beside "$UB"
    # A eats up to four times the node: killed long before (bounded, should the cgroup fail)
    run --separate-stderr as "$UA" "$L" --agent "$SOCK" -n 2 "$PUB/hostinfo" eat $((4 * mib))
    [ "$status" -eq 137 ] || { echo "expected 137, got $status: $output / $stderr"; cat "$LOG"; false; }
    [[ "$stderr" == *"killed by signal 9 (KILL)"* ]] || { echo "signal not named: $stderr"; false; }
    if [ "$kind" != none ]; then
        # the job's cgroup counted the kill: the agent knows
        [[ "$stderr" == *"out of memory"* ]] || { echo "no 'out of memory' ($kind): $stderr"; false; }
        [[ "$stderr" != *"memory limit"* ]] || { echo "no limit was set: $stderr"; false; }
        grep -q "the node ran out of memory and the kernel's OOM killer ended the job's process" "$LOG" ||
            { cat "$LOG"; false; }
    fi
    [[ "$output" != *"ate "* ]] || { echo "the eater was not stopped: $output"; false; }
    agent_answers
    if [ "$kind" != none ]; then
        # a limit of its own above what the node has: the node ran out first, and says so
        run --separate-stderr as "$UA" "$L" --agent "$SOCK" --mem-limit $((2 * mib))M -n 2 \
            "$PUB/hostinfo" eat $((4 * mib))
        [ "$status" -eq 137 ] || { echo "expected 137, got $status: $output / $stderr"; false; }
        [[ "$stderr" == *"killed by signal 9 (KILL): out of memory"* ]] ||
            { echo "expected the node's out of memory, got: $stderr"; false; }
        agent_answers
    fi
    beside_completes
    agent_answers
}

@test "jobhost oom: a rank whose malloc fails under an address-space limit and that aborts ends its own job only" {
    case "$(build_sanitizer)" in
    *address* | *thread*) skip "the sanitizer's allocator reports running out of memory itself" ;;
    esac
    need_users
    agent_up
    beside "$UB"
    run --separate-stderr as "$UA" "$L" --agent "$SOCK" -n 3 "$PUB/ends" nomem
    [ "$status" -eq 134 ] || { echo "expected 134, got $status: $output / $stderr"; false; }
    [[ "$output" == *"malloc failed after "*" MiB"* ]] || { echo "malloc did not fail: $output"; false; }
    [[ "$stderr" == *"rank 1 called abort()"* ]] || { echo "got: $stderr"; false; }
    agent_answers
    beside_completes
}
