#!/usr/bin/env bats
# tmpictl: status, jobs and cancel against a real agent (and the fake one for a job table with
# a known row), --json, and the error cases.

bats_require_minimum_version 1.5.0
load helpers

setup() { export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"; }
teardown() { stop_all_agents; }

@test "tmpictl: usage errors exit 2" {
    run --separate-stderr tmpictl
    expect_status 2
    [[ "$stderr" == *"no command given"* ]]
    run --separate-stderr tmpictl frobnicate
    expect_status 2
    [[ "$stderr" == *"unknown command frobnicate"* ]]
    run --separate-stderr tmpictl cancel
    expect_status 2
    run --separate-stderr tmpictl cancel abc
    expect_status 2
    [[ "$stderr" == *"a job id is a number"* ]]
    run --separate-stderr tmpictl --bogus status
    expect_status 2
    run --separate-stderr tmpictl status jobs
    expect_status 2
    run tmpictl --help
    expect_status 0
    run tmpictl --version
    expect_status 0
    [[ "$output" == "tmpictl (TMPI) "* ]]
}

@test "tmpictl: no agent is an error naming the socket" {
    run --separate-stderr tmpictl --agent "$BATS_TEST_TMPDIR/none.sock" status
    expect_status 1
    [[ "$stderr" == "tmpictl: no agent at $BATS_TEST_TMPDIR/none.sock: No such file or directory" ]]
    # TMPI_AGENT is honoured
    run --separate-stderr tmpictl jobs
    expect_status 1
    [[ "$stderr" == "tmpictl: no agent at $TMPI_AGENT:"* ]]
}

@test "tmpictl: status and jobs of a real agent" {
    start_agent a
    run tmpictl --agent "$AGENT_SOCK" status
    expect_status 0
    [[ "$output" == *"Version:"* ]]
    [[ "$output" == *"Buffer pool:"* ]]
    [[ "$output" == *"ID"*"OWNER"*"RANKS"*"STATE"*"RUNTIME"*"PROGRAM"* ]]
    TMPI_AGENT="$AGENT_SOCK" run tmpictl jobs
    expect_status 0
    [[ "${lines[0]}" == "ID"*"PROGRAM" ]]
}

@test "tmpictl: --json is valid JSON with the proto's field names" {
    start_agent a
    run tmpictl --agent "$AGENT_SOCK" --json status
    expect_status 0
    python3 -m json.tool <<<"$output" >/dev/null
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert {"version","pid","uptime_sec","pool","jobs","jobs_started","bad_frames","cached_programs"} <= d.keys(), d' <<<"$output"
    run tmpictl --agent "$AGENT_SOCK" jobs --json
    expect_status 0
    python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["jobs"] == [], d' <<<"$output"
}

@test "tmpictl: a running job is listed and can be cancelled" {
    start_agent a
    local out="$BATS_TEST_TMPDIR/out" line=""
    mkfifo "$out"
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 "$(prog sleeper)" >"$out" 2>"$BATS_TEST_TMPDIR/err" &
    local pid=$!
    exec 5<"$out"
    read -r line <&5
    [ "$line" = started ]
    run tmpictl --agent "$AGENT_SOCK" --json jobs
    expect_status 0
    local id
    id=$(python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"]; assert len(j)==1 and j[0]["nprocs"]==2, j; print(j[0]["id"])' <<<"$output")
    # the 64-bit uid is a string of digits, which every JSON reader keeps exactly
    python3 -c 'import json,sys; u=json.load(sys.stdin)["jobs"][0]["uid"]; assert isinstance(u, str) and u.isdigit(), "uid: expected a string of digits, got %r" % (u,)' <<<"$output"
    run tmpictl --agent "$AGENT_SOCK" jobs
    [[ "${lines[1]}" == "$id "*" 2 "*"sleeper" ]]
    run tmpictl --agent "$AGENT_SOCK" cancel "$id"
    expect_status 0
    local st=0
    wait "$pid" || st=$?
    exec 5<&-
    [ "$st" -ne 0 ]
}

@test "tmpictl: cancelling an unknown job is an error" {
    start_agent a
    run --separate-stderr tmpictl --agent "$AGENT_SOCK" cancel 987654
    expect_status 1
    [[ "$stderr" == "tmpictl: "* ]]
}

@test "tmpictl (fake agent): the human-readable tables" {
    start_fake_agent f
    run tmpictl --agent "$AGENT_SOCK" status
    expect_status 0
    expect_line "Agent:           fake (pid ${AGENT_PIDS[f]})"
    expect_line "Uptime:          1h02m05s"
    expect_line "Buffer pool:     1.0 MiB used of 64.0 MiB (2%)"
    [[ "${lines[-1]}" =~ ^7\ +tester\ +4\ running\ +12\.5s\ +-/-\ +-\ +\./app$ ]]
    run tmpictl --agent "$AGENT_SOCK" --json cancel 7
    expect_status 0
    [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' <<<"$output")" -eq 7 ]
    run --separate-stderr tmpictl --agent "$AGENT_SOCK" cancel 8
    expect_status 1
    [ "$stderr" = "tmpictl: no job 8" ]
}

@test "tmpictl: a socket the user may not use is explained, not called 'no agent'" {
    [ "$(id -u)" -eq 0 ] || skip "needs root to run tmpictl as another user"
    command -v setpriv >/dev/null || skip "setpriv is not installed"
    local d pid
    d=$(mktemp -d /tmp/tmpictl-perm.XXXXXX)
    chmod 755 "$d"
    # a listening socket only root may connect to, as a system agent's could be
    python3 -c 'import os,socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o700); s.listen(1); print("up", flush=True); time.sleep(60)' \
        "$d/tmpid.sock" >"$d/up" &
    pid=$!
    local i
    for ((i = 0; i < 100; i++)); do
        [ -s "$d/up" ] && break
        sleep 0.1
    done
    run --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$TMPI_BUILD/launcher/tmpictl" --agent "$d/tmpid.sock" status
    local st1=$status err1=$stderr
    chmod 700 "$d"
    run --separate-stderr setpriv --reuid=nobody --regid=nogroup --clear-groups \
        "$TMPI_BUILD/launcher/tmpictl" --agent "$d/tmpid.sock" status
    local st2=$status err2=$stderr
    kill "$pid"
    wait "$pid" || true
    rm -rf "$d"
    [ "$st1" -eq 1 ] || { echo "expected status 1, got $st1" >&2; return 1; }
    local want="tmpictl: the agent's socket $d/tmpid.sock belongs to root (mode 0700) and you (nobody) may not connect to it: Permission denied."
    [[ "$err1" == "$want"* ]] || { echo "expected: $want..." >&2; echo "got: $err1" >&2; return 1; }
    [ "$st2" -eq 1 ] || { echo "expected status 1, got $st2" >&2; return 1; }
    want="tmpictl: cannot reach the agent's socket $d/tmpid.sock: a directory on its path is closed to you (Permission denied)"
    [ "$err2" = "$want" ] || { echo "expected: $want" >&2; echo "got: $err2" >&2; return 1; }
}
