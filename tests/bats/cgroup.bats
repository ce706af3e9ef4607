#!/usr/bin/env bats
# Job hosts' cgroups (agent/jobs/cgroup.h): a cgroup of its own per job host, limits from the
# agent's config or the launch, the memory limit enforced and reported, the cgroup removed
# after the job; and what tmpictl jobs shows of them.  The cgroups are the agent's own
# (OWN/tmpid/AGENT_PID/job.ID): each test finds them by the pid of the agent it started.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    mkdir -p "$BATS_FILE_TMPDIR/progs"
    "$TMPI_BUILD/launcher/tmpicc" -o "$BATS_FILE_TMPDIR/progs/hostinfo" \
        "$TMPI_SRC/tests/bats/agent_progs/hostinfo.c"
}

setup() { HOSTINFO="$BATS_FILE_TMPDIR/progs/hostinfo"; }

teardown() {
    # the agent removes its own cgroups when it stops; a test that failed half-way may have
    # left a job waiting for its flag file
    [ -n "${FLAG:-}" ] && touch "$FLAG"
    stop_all_agents
}

# An agent with a cgroup kind other than none (root on a machine with cgroups), with the
# given tmpid.conf contents; skips otherwise.  Sets SOCK, LOG, APID.
cgroup_agent() {
    [ "$(id -u)" -eq 0 ] || skip "needs root to manage cgroups"
    local conf="$BATS_TEST_TMPDIR/tmpid.conf"
    printf '%b' "${1:-}" >"$conf"
    start_agent a --log-level notice --config "$conf"
    SOCK=$AGENT_SOCK
    LOG="$BATS_TEST_TMPDIR/a.log"
    APID=${AGENT_PIDS[a]}
    if grep -q "cgroup: none" "$LOG"; then
        skip "no usable cgroup here: $(grep 'cgroup: none' "$LOG")"
    fi
}

@test "cgroup: the agent logs which cgroup kind it uses and why" {
    cgroup_agent
    grep -qE "cgroup: (systemd|v2|v1) \(.+\)" "$LOG" || { cat "$LOG"; false; }
}

@test "cgroup: each job host runs in a cgroup of its own, removed after the job" {
    cgroup_agent
    FLAG="$BATS_TEST_TMPDIR/go"
    local out="$BATS_TEST_TMPDIR/out"
    "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$HOSTINFO" cgroup "$FLAG" >"$out" 2>&1 &
    local l=$!
    local i
    for ((i = 0; i < 200; i++)); do grep -q "^cgroup " "$out" && break; sleep 0.05; done
    # v1 lines name the controller (memory, cpu, pids); v2 and systemd the 0:: line
    local mine
    mine=$(grep -E "^cgroup [0-9]+:(.*memory.*|):" "$out" | head -1 | sed 's/^cgroup [0-9]*:[^:]*://')
    [[ "$mine" == */tmpid/$APID/job.1 || "$mine" == *tmpi-job-$APID-1.scope ]] ||
        { echo "expected the host in .../tmpid/$APID/job.1, got: $(cat "$out")"; false; }
    # the agent itself is not in it
    if grep -q "tmpid/$APID/job" "/proc/$APID/cgroup"; then false; fi
    local dir=""
    if [[ "$mine" == */tmpid/* ]]; then
        dir=$(awk '$5 ~ /cgroup/ && $0 ~ /memory/ && $9 == "cgroup" {print $5; exit}' /proc/self/mountinfo)
        [ -n "$dir" ] || dir=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
        dir="$dir$mine"
        [ -d "$dir" ] || { echo "no cgroup directory $dir"; false; }
    fi
    touch "$FLAG"
    wait "$l" || { cat "$out"; false; }
    grep -qx OK "$out"
    if [ -n "$dir" ]; then
        for ((i = 0; i < 100; i++)); do [ -d "$dir" ] || break; sleep 0.05; done
        [ ! -d "$dir" ] || { echo "cgroup $dir still there after the job"; false; }
    fi
}

# v1: the cpu hierarchy only for a job with a CPU limit (cgroup.h); without one, a cgroup there
# would only give every TMPI job of the machine one shared scheduling weight.
@test "cgroup: v1 puts a job into the cpu hierarchy only when it has a CPU limit" {
    cgroup_agent
    grep -q "cgroup: v1 (.*cpu " "$LOG" || skip "not the v1 cpu hierarchy: $(grep 'cgroup:' "$LOG")"
    local agent_cpu
    agent_cpu=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpu\(,[^:]*\)\{0,1\}://p' "/proc/$APID/cgroup")
    run "$LAUNCH_BIN" --agent "$SOCK" -n 1 "$HOSTINFO" cgroup
    expect_status 0
    local cpu mem
    cpu=$(grep -E "^cgroup [0-9]+:([^:]*,)?cpu(,[^:]*)?:" <<<"$output" | sed 's/^cgroup [0-9]*:[^:]*://')
    mem=$(grep -E "^cgroup [0-9]+:([^:]*,)?memory(,[^:]*)?:" <<<"$output" | sed 's/^cgroup [0-9]*:[^:]*://')
    [ "$cpu" = "$agent_cpu" ] || { echo "no limit: expected the agent's cpu cgroup $agent_cpu, got $cpu"; false; }
    [[ "$mem" == */tmpid/$APID/job.1 ]] || { echo "expected the memory cgroup .../job.1, got $mem"; false; }
    run "$LAUNCH_BIN" --agent "$SOCK" --cpu-limit 0.5 -n 1 "$HOSTINFO" cgroup
    expect_status 0
    cpu=$(grep -E "^cgroup [0-9]+:([^:]*,)?cpu(,[^:]*)?:" <<<"$output" | sed 's/^cgroup [0-9]*:[^:]*://')
    [[ "$cpu" == */tmpid/$APID/job.2 ]] || { echo "--cpu-limit: expected the cpu cgroup .../job.2, got $cpu"; false; }
}

@test "cgroup: a job over its --mem-limit is killed and the launcher says so; one beside it and one under it run" {
    cgroup_agent
    # a job beside it, waiting for a file: the other job's end must not touch it
    FLAG="$BATS_TEST_TMPDIR/go"
    "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$HOSTINFO" waitfile "$FLAG" >"$BATS_TEST_TMPDIR/beside" 2>&1 &
    local beside=$!
    until tmpictl --agent "$SOCK" jobs | grep -q running; do sleep 0.05; done
    run --separate-stderr "$LAUNCH_BIN" --agent "$SOCK" --mem-limit 64M -n 2 "$HOSTINFO" eat 400
    [ "$status" -eq 137 ] || { echo "expected 137, got $status: $output $stderr"; false; }
    [[ "$stderr" == *"killed on "*" for exceeding its memory limit of 67108864 bytes"* ]] ||
        { echo "got: $stderr"; false; }
    touch "$FLAG"
    local st=0
    wait "$beside" || st=$?
    [ "$st" -eq 0 ] || { echo "the job beside ended with $st:"; cat "$BATS_TEST_TMPDIR/beside"; false; }
    grep -qx waited "$BATS_TEST_TMPDIR/beside" && grep -qx OK "$BATS_TEST_TMPDIR/beside" ||
        { cat "$BATS_TEST_TMPDIR/beside"; false; }
    # under ThreadSanitizer its shadow memory counts in the job's cgroup too
    local under=64M
    [ "$(build_sanitizer)" != thread ] || under=1G
    run "$LAUNCH_BIN" --agent "$SOCK" --mem-limit "$under" -n 2 "$HOSTINFO" eat 16
    expect_status 0
    expect_line "ate 16 MiB"
    kill -0 "$APID"
}

@test "cgroup: the agent's job_memory_max applies; a launch may lower it, not raise it" {
    cgroup_agent '[agent]\njob_memory_max = 64M\njob_cpu_max = 1.5\n'
    run --separate-stderr "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$HOSTINFO" eat 400
    [ "$status" -eq 137 ] || { echo "expected 137 under job_memory_max, got $status"; false; }
    run --separate-stderr "$LAUNCH_BIN" --agent "$SOCK" --mem-limit 128M -n 2 "$HOSTINFO" id
    expect_status 1
    [[ "$stderr" == *"--mem-limit of 134217728 bytes is above this agent's limit of 67108864 bytes (job_memory_max)"* ]] ||
        { echo "got: $stderr"; false; }
    run --separate-stderr "$LAUNCH_BIN" --agent "$SOCK" --cpu-limit 2 -n 2 "$HOSTINFO" id
    expect_status 1
    [[ "$stderr" == *"--cpu-limit of 2.000 CPUs is above this agent's limit of 1.500 CPUs"* ]] ||
        { echo "got: $stderr"; false; }
    # lowered: visible in tmpictl jobs while it runs
    FLAG="$BATS_TEST_TMPDIR/go"
    "$LAUNCH_BIN" --agent "$SOCK" --mem-limit 32M --cpu-limit 0.5 -n 2 "$HOSTINFO" cgroup "$FLAG" \
        >"$BATS_TEST_TMPDIR/out" 2>&1 &
    local l=$!
    until tmpictl --agent "$SOCK" jobs | grep -q running; do sleep 0.05; done
    run tmpictl --agent "$SOCK" --json jobs
    expect_status 0
    python3 -c '
import json, sys
j = [x for x in json.load(sys.stdin)["jobs"] if x["state"] == "running"]
assert len(j) == 1, j
j = j[0]
assert j["mem_limit"] == 32 << 20, "mem_limit: expected %d, got %r" % (32 << 20, j.get("mem_limit"))
assert j["cpu_limit_milli"] == 500, "cpu_limit_milli: expected 500, got %r" % j.get("cpu_limit_milli")
assert j["cgroup"] in ("v1", "v2", "systemd"), j
' <<<"$output"
    run tmpictl --agent "$SOCK" jobs
    [[ "$output" == *"/32.0 MiB"*" 0.500 "* ]] || { echo "got: $output"; false; }
    touch "$FLAG"
    wait "$l"
}

@test "cgroup: bad limits are usage errors of the launcher and of the config" {
    run --separate-stderr launch --mem-limit 12Q -n 1 "$HOSTINFO"
    expect_status 2
    [[ "$stderr" == *"--mem-limit 12Q"* ]]
    run --separate-stderr launch --cpu-limit 0 -n 1 "$HOSTINFO"
    expect_status 2
    run --separate-stderr launch --cpu-limit 1.0005 -n 1 "$HOSTINFO"
    expect_status 2
    local conf="$BATS_TEST_TMPDIR/bad.conf"
    printf '[agent]\njob_cpu_max = lots\n' >"$conf"
    run "$TMPID" --config "$conf" --socket "$BATS_TEST_TMPDIR/x.sock"
    [ "$status" -ne 0 ]
    [[ "$output" == *"bad value for [agent] job_cpu_max"* ]] || { echo "got: $output"; false; }
}
