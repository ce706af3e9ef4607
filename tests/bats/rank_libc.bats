#!/usr/bin/env bats
# A rank's end as a process's: its exit handlers (atexit, on_exit, at_quick_exit) run when it
# exits, newest first, on_exit's with its status; _exit runs none; and what libc prints in a
# rank (getopt's messages) names the rank's program.  tests/bats/progs/rank_libc.c.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() { stop_all_agents; }

# The lines of rank R in the output, in order, joined by "|".
rank_lines() { grep "^rank $1: " <<<"$output" | sed "s/^rank $1: //" | paste -sd'|'; }

# ThreadSanitizer intercepts atexit and runs a program's handlers at process exit (as
# careless.bats notes): the tests of atexit's order have nothing to check in such a build.
no_tsan_atexit() {
    [[ "$(build_sanitizer)" != *thread* ]] || skip "ThreadSanitizer runs atexit handlers itself"
}

# expect_rank_lines WANT [RANKS]: each of ranks 0 .. RANKS-1 (2) printed WANT.
expect_rank_lines() {
    local want=$1 r got
    for ((r = 0; r < ${2:-2}; r++)); do
        got=$(rank_lines "$r")
        if [ "$got" != "$want" ]; then
            echo "rank $r: expected $want" >&2
            echo "got: $got; output:" >&2
            echo "$output" >&2
            return 1
        fi
    done
}

@test "rank libc: exit handlers run when main returns, newest first, on_exit's with main's value" {
    no_tsan_atexit
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$(prog rank_libc)" order
    expect_status 0
    expect_rank_lines "on_exit D status 0|atexit C|on_exit B status 0|atexit A"
}

@test "rank libc: exit() runs the rank's exit handlers with its status" {
    no_tsan_atexit
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 1 "$(prog rank_libc)" exit
    expect_status 3
    expect_rank_lines "on_exit D status 3|atexit C|on_exit B status 3|atexit A" 1
}

@test "rank libc: exit() in an exit handler ends it, the others run with the new status" {
    no_tsan_atexit
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 1 "$(prog rank_libc)" nested
    expect_status 4
    expect_rank_lines "atexit calls exit(4)|on_exit B status 4" 1
}

@test "rank libc: _exit runs no exit handler" {
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 1 "$(prog rank_libc)" _exit
    expect_status 6
    expect_rank_lines "" 1
}

@test "rank libc: quick_exit runs the at_quick_exit handlers only, newest first" {
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 1 "$(prog rank_libc)" quick
    expect_status 7
    expect_rank_lines "at_quick_exit Q2|at_quick_exit Q1" 1
}

@test "rank libc: getopt's messages name the rank's program, as glibc's do" {
    start_agent a
    local p
    p=$(prog rank_libc)
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$p" getopt -a -z --fil -b
    expect_status 0
    expect_rank_lines "option a|option ?|option ?|option ?"
    # one of each per rank, in glibc's words
    [ "$(grep -cx "$p: invalid option -- 'z'" <<<"$stderr")" = 2 ]
    [ "$(grep -cx "$p: option '--fil' is ambiguous; possibilities: '--file' '--filter'" <<<"$stderr")" = 2 ]
    [ "$(grep -cx "$p: option requires an argument -- 'b'" <<<"$stderr")" = 2 ]
}
