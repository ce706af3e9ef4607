#!/usr/bin/env bats
# A job's states as tmpictl jobs shows them: a cancel ends the job for certain (its process is
# killed kill_grace seconds later if its ranks do not stop), the state reads "ending" then
# "ended", and an ended job stays listed for ended_job_keep seconds.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    mkdir -p "$BATS_FILE_TMPDIR/progs"
    "$TMPI_BUILD/launcher/tmpicc" -o "$BATS_FILE_TMPDIR/progs/ends" \
        "$TMPI_SRC/tests/bats/agent_progs/ends.c"
}

teardown() { stop_all_agents; }

# agent_with CONF: a real agent with that tmpid.conf; sets SOCK and APID.
agent_with() {
    local conf="$BATS_TEST_TMPDIR/tmpid.conf"
    printf '%b' "$1" >"$conf"
    start_agent a --config "$conf"
    SOCK=$AGENT_SOCK
    APID=${AGENT_PIDS[a]}
}

# The state of job $1 in tmpictl jobs ("" when not listed); awk, not python: fast enough
# to look twice within ended_job_keep.
job_state() {
    tmpictl --agent "$SOCK" jobs | awk -v id="$1" 'NR > 1 && $1 == id { print $4 }'
}

@test "job states: cancel of a busy-looping job kills its process within the grace; ending, then ended" {
    agent_with '[agent]\nkill_grace = 2\nended_job_keep = 60\n'
    "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$BATS_FILE_TMPDIR/progs/ends" spin \
        >"$BATS_TEST_TMPDIR/out" 2>&1 &
    local l=$!
    until [ "$(job_state 1)" = running ]; do sleep 0.05; done
    # the job's process: the agent's only child
    local host
    host=$(cat /proc/"$APID"/task/*/children)
    [[ "$host" =~ ^[0-9]+\ *$ ]] || { echo "expected one child of the agent, got: '$host'"; false; }
    host=${host// /}
    kill -0 "$host"
    local t0=$SECONDS
    run tmpictl --agent "$SOCK" cancel 1
    expect_status 0
    # rank 1 computes and never looks: the job stays ending until its process is killed
    [ "$(job_state 1)" = ending ] || { echo "expected ending, got '$(job_state 1)'"; false; }
    local i
    for ((i = 0; i < 100; i++)); do kill -0 "$host" 2>/dev/null || break; sleep 0.05; done
    ! kill -0 "$host" 2>/dev/null || { echo "job process $host alive after 5 s (grace 2 s)"; false; }
    (( SECONDS - t0 <= 4 )) || { echo "took $((SECONDS - t0)) s with a grace of 2 s"; false; }
    local st=0
    wait "$l" || st=$?
    [ "$st" -eq 143 ] || { echo "launcher: expected 143, got $st"; cat "$BATS_TEST_TMPDIR/out"; false; }
    for ((i = 0; i < 100; i++)); do [ "$(job_state 1)" = ended ] && break; sleep 0.05; done
    [ "$(job_state 1)" = ended ] || { echo "expected ended, got '$(job_state 1)'"; false; }
    run tmpictl --agent "$SOCK" --json jobs
    python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; assert j["exit_status"] == 143, j' <<<"$output"
    run tmpictl --agent "$SOCK" jobs
    local row='^1 +[^ ]+ +2 ended '
    [[ "${lines[1]}" =~ $row ]] || { echo "got: $output"; false; }
    run --separate-stderr tmpictl --agent "$SOCK" cancel 1
    expect_status 1
    [[ "$stderr" == *"job 1 has already ended"* ]] || { echo "got: $stderr"; false; }
    run tmpictl --agent "$SOCK" status
    [[ "$output" == *", 0 running"* ]] || { echo "an ended job counted as running: $output"; false; }
}

@test "job states: an ended job is listed for ended_job_keep seconds, then forgotten" {
    agent_with '[agent]\nended_job_keep = 2\n'
    run "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$BATS_FILE_TMPDIR/progs/ends" return0
    expect_status 0
    local i
    for ((i = 0; i < 40; i++)); do [ "$(job_state 1)" = ended ] && break; sleep 0.05; done
    [ "$(job_state 1)" = ended ] || { echo "expected ended, got '$(job_state 1)'"; false; }
    sleep 2.5
    [ -z "$(job_state 1)" ] || { echo "still listed after ended_job_keep: $(job_state 1)"; false; }
}

@test "job states: ended_job_keep = 0 forgets a job as soon as it ends" {
    agent_with '[agent]\nended_job_keep = 0\n'
    run "$LAUNCH_BIN" --agent "$SOCK" -n 2 "$BATS_FILE_TMPDIR/progs/ends" return0
    expect_status 0
    local i
    for ((i = 0; i < 40; i++)); do [ -z "$(job_state 1)" ] && break; sleep 0.05; done
    [ -z "$(job_state 1)" ] || { echo "expected no job, got '$(job_state 1)'"; false; }
}
