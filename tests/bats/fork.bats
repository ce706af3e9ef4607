#!/usr/bin/env bats
# A rank's fork() makes a process of its own: its child is no rank of the job, so exit, _exit
# and abort end that child with its status (interpose.c: forked_child).

bats_require_minimum_version 1.5.0
load helpers
@test "fork: a rank's child is a process of its own: _exit, exit and abort give it its status" {
    # A forked child that calls exit() is the job host's copy: under ASan the leak check at its
    # exit would report the job host's live state as leaks and turn its status 5 into 1
    need_agent
    LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0" run timeout 60 "$LAUNCH_BIN" -n 2 "$(prog fork_child)"
    expect_status 0
    expect_line "_exit: exited 7"
    expect_line "exit: exited 5"
    expect_line "abort: signal 6"
}
