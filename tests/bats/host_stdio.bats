#!/usr/bin/env bats
# A job host holds nothing of the agent's: its fds 1 and 2 lead to the job's launcher, never
# to the agent's log; it starts with none of the agent's environment and none of its
# descriptors; its own diagnostics reach the agent's log as records about the job
# (agent/host/host_stdio.h, issue 38).

bats_require_minimum_version 1.5.0
load helpers

teardown() { stop_all_agents; }

@test "job host: a rank's raw stdout/stderr reach the launcher, not the agent's log; no inherited fd or environment" {
    local p inherited="$BATS_TEST_TMPDIR/inherited-by-the-agent"
    p=$(prog host_stdio)
    echo "agent's own descriptor" >"$inherited"
    # the agent inherits fd 9 (no close-on-exec) and a variable of its own
    TMPI_AGENT_ONLY_VARIABLE=agent-secret start_agent a --log-level info 9<"$inherited"
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$p"
    echo "$output"
    echo "stderr: $stderr"
    [ "$status" -eq 0 ]
    # under make tsan / make sanitize the job host's own reports (its stdio thread's races
    # among them) come to the launcher through that thread: there must be none
    if grep -qE 'WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error:' <<<"$output$stderr"; then false; fi
    local log="$BATS_TEST_TMPDIR/a.log"
    echo "--- agent log"
    cat "$log"
    # what the process's fds 1 and 2 got is the launcher's
    [[ "$stderr" == *"<3>FORGED by a rank"* ]]
    [[ "$stderr" == *"raw-fd2-write"* ]]
    [[ "$output" == *"shell-stdout-line"* ]]
    if grep -q 'FORGED' "$log"; then false; fi
    if grep -q 'raw-fd2-write' "$log"; then false; fi
    if grep -q 'shell-stdout-line' "$log"; then false; fi
    # fds 1 and 2 are pipes of the host's own; nothing points at the agent's log or fd 9
    grep -qE '^fd 1 pipe:' <<<"$output"
    grep -qE '^fd 2 pipe:' <<<"$output"
    if grep -E '^fd ' <<<"$output" | grep -qE "inherited-by-the-agent|a\.log"; then false; fi
    # the environment the host was started with is not the agent's
    if grep -q '^environ TMPI_AGENT_ONLY_VARIABLE$' <<<"$output"; then false; fi
    # the host's own records reach the agent's log framed: about the job, with its user
    grep -qE "^<[0-9]>job [0-9]+: .*\(job host of $(id -un)\)$" "$log"
}
