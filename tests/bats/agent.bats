#!/usr/bin/env bats
# tmpid end to end: rank threads cannot take the agent down, their output reaches the launcher,
# jobs are separate, bad clients are refused without harm.

bats_require_minimum_version 1.5.0
load sanitizer
load one_agent

setup_file() {
    export PROGS="$BATS_FILE_TMPDIR/progs"
    mkdir -p "$PROGS"
    for p in stdio ends tagged relpath threads atexit; do
        "$TMPI_BUILD/launcher/tmpicc" -o "$PROGS/$p" "$TMPI_SRC/tests/bats/agent_progs/$p.c"
    done
    "$TMPI_BUILD/launcher/tmpicc" -o "$PROGS/hello" "$TMPI_SRC/examples/hello.c"
}

teardown() { agent_down; }

launch() { "$TMPI_BUILD/launcher/tmpi-launch" --agent "$SOCK" "$@"; }
status_json() { "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" --json status; }
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

@test "agent: every stdio path of a rank reaches the launcher, on the right stream, line by line" {
    agent_up
    run --separate-stderr launch -n 2 "$PROGS/stdio"
    [ "$status" -eq 0 ]
    for l in "r0 printf" "r1 printf" puts "r0 fprintf-out" fputs-out fwrite-out p write-1 \
             dprintf-1 "partial line" "no newline at the end"; do
        grep -qx "$l" <<<"$output" || { echo "missing on stdout: $l"; echo "$output"; false; }
    done
    for l in "r1 fprintf-err" fputs-err write-2 "perror: No such file or directory"; do
        grep -qx "$l" <<<"$stderr" || { echo "missing on stderr: $l"; echo "$stderr"; false; }
    done
    [ "$(grep -cx puts <<<"$output")" -eq 2 ]
    # nothing of it went to the agent's own log
    if grep -q "fwrite-out\|fputs-err" "$LOG"; then false; fi
}

@test "agent: output of atexit handlers reaches the launcher" {
    # ThreadSanitizer intercepts atexit: a module built with -fsanitize=thread binds it to
    # TSan's, which runs the handler at process exit, not when the rank's image is unloaded
    # (elsewhere atexit is libc_nonshared's, registered with the module's __dso_handle)
    [ "$(build_sanitizer)" != thread ] || skip "TSan runs a module's atexit handlers at process exit"
    agent_up
    run launch -n 2 "$PROGS/atexit"
    [ "$status" -eq 0 ]
    grep -qx "rank 0: atexit handler ran" <<<"$output"
    grep -qx "rank 1: atexit handler ran" <<<"$output"
}

@test "agent: exit(), _exit(), return, abort(), assert, a crash and MPI_Abort end the job, not the agent" {
    agent_up
    run --separate-stderr launch -n 3 "$PROGS/ends" exit3
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"rank 1 exited with code 3"* ]]
    run --separate-stderr launch -n 3 "$PROGS/ends" _exit4
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"rank 1 exited with code 4"* ]]
    run --separate-stderr launch -n 3 "$PROGS/ends" return5
    [ "$status" -eq 5 ]
    run --separate-stderr launch -n 3 "$PROGS/ends" abort
    [ "$status" -eq 134 ]
    [[ "$stderr" == *"rank 1 called abort()"* ]]
    run --separate-stderr launch -n 3 "$PROGS/ends" assert
    [ "$status" -eq 134 ]
    [[ "$stderr" == *"Assertion"* ]]
    run --separate-stderr launch -n 3 "$PROGS/ends" segv
    [ "$status" -eq 139 ]
    [[ "$stderr" == *"rank 1"*"signal 11"* ]]
    run --separate-stderr launch -n 3 "$PROGS/ends" mpiabort
    [ "$status" -eq 7 ]
    [[ "$stderr" == *"rank 1"*"MPI_Abort"* ]]
    run --separate-stderr launch -n 3 "$PROGS/ends" nofinalize
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"rank 1 exited without calling MPI_Finalize"* ]]
    # still alive, and the next job runs normally
    kill -0 "$AGENT_PID"
    run launch -n 4 "$PROGS/hello"
    [ "$status" -eq 0 ]
    [[ "$output" == *"Sum of ranks: 6 (expected 6)"* ]]
    run status_json
    [ "$(json_field jobs_failed <<<"$output")" -eq 8 ]
}

@test "agent: threads a rank starts print to the launcher and cannot end the agent" {
    agent_up
    run launch -n 2 "$PROGS/threads" ok
    [ "$status" -eq 0 ]
    [ "$(grep -c 'child of rank [01] says hi' <<<"$output")" -eq 2 ]
    run --separate-stderr launch -n 2 "$PROGS/threads" exit
    [ "$status" -eq 9 ]
    [[ "$stderr" == *"called exit() from a thread it started"* ]]
    run --separate-stderr launch -n 2 "$PROGS/threads" segv
    [ "$status" -eq 139 ]
    kill -0 "$AGENT_PID"
    run launch -n 2 "$PROGS/threads" ok
    [ "$status" -eq 0 ]
}

@test "agent: two jobs run at once, each with its own globals and output" {
    agent_up
    launch -n 4 "$PROGS/tagged" jobA >"$BATS_TEST_TMPDIR/a.out" &
    local a=$!
    launch -n 3 "$PROGS/tagged" jobB >"$BATS_TEST_TMPDIR/b.out" &
    local b=$!
    wait "$a"
    wait "$b"
    [ "$(grep -c '^jobA rank [0-3] counter 200$' "$BATS_TEST_TMPDIR/a.out")" -eq 4 ]
    [ "$(grep -c '^jobB rank [0-2] counter 200$' "$BATS_TEST_TMPDIR/b.out")" -eq 3 ]
    if grep -q jobB "$BATS_TEST_TMPDIR/a.out"; then false; fi
}

@test "agent: a program is sent once and then run from the cache" {
    agent_up
    launch -n 2 "$PROGS/hello" >/dev/null
    launch -n 2 "$PROGS/hello" >/dev/null
    run status_json
    [ "$(json_field cached_programs <<<"$output")" -eq 1 ]
    [ "$(json_field jobs_started <<<"$output")" -eq 2 ]
}

@test "agent: relative paths of ranks resolve in the launcher's directory" {
    agent_up
    cd "$BATS_TEST_TMPDIR"
    echo "the input" >input.txt
    run launch -n 2 "$PROGS/relpath"
    [ "$status" -eq 0 ]
    [ "$(grep -cx 'read the input' <<<"$output")" -eq 2 ]
    grep -qx "cwd $BATS_TEST_TMPDIR" <<<"$output"
}

@test "agent: malformed, oversized and unexpected frames close only that connection" {
    agent_up
    python3 - "$SOCK" <<'PY'
import socket, sys
def send(data):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(data)
    s.settimeout(5)
    got = b""
    while True:
        chunk = s.recv(4096)
        if not chunk: break
        got += chunk
    s.close()
    return got
send(b"\xff\xff\xff\xff")                        # larger than max_frame_size
send(b"\x00\x00\x00\x00")                        # empty body
send(b"\x00\x00\x00\x05\xff\xff\xff\xff\xff")    # not a protobuf Envelope
send(b"\x00\x00\x00\x02\x22\x00")                # JobStarted: not a tool's message
PY
    kill -0 "$AGENT_PID"
    run status_json
    [ "$status" -eq 0 ]
    [ "$(json_field bad_frames <<<"$output")" -eq 4 ]
    grep -q "frame larger than max_frame_size" "$LOG"
    grep -q "malformed frame" "$LOG"
    run launch -n 2 "$PROGS/hello"
    [ "$status" -eq 0 ]
}

@test "agent: --timeout tears a stuck job down with status 124" {
    agent_up
    run --separate-stderr launch -n 2 --timeout 1 "$PROGS/ends" nofinalize-wait
    [ "$status" -eq 124 ]
    [[ "$stderr" == *"timed out after 1 s"* ]]
    run launch -n 2 "$PROGS/hello"
    [ "$status" -eq 0 ]
}

@test "agent: SIGTERM ends running jobs cleanly and the agent exits 0" {
    agent_up
    launch -n 2 "$PROGS/ends" wait-forever 2>"$BATS_TEST_TMPDIR/l.err" &
    local l=$!
    # the job is running once the agent lists it
    until "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" jobs | grep -q running; do :; done
    kill -TERM "$AGENT_PID"
    local st=0
    wait "$AGENT_PID" || st=$?
    [ "$st" -eq 0 ]
    AGENT_PID=""
    st=0
    wait "$l" || st=$?
    [ "$st" -eq 143 ]
    grep -q "shutting down" "$BATS_TEST_TMPDIR/l.err"
    [ ! -e "$SOCK" ]
}

@test "tmpid: bad options and config files are refused clearly" {
    run "$TMPI_BUILD/agent/tmpid" --bogus
    [ "$status" -eq 2 ]
    run "$TMPI_BUILD/agent/tmpid" --ready-fd 999
    [ "$status" -eq 2 ]
    [[ "$output" == *"not an open file descriptor"* ]]
    run "$TMPI_BUILD/agent/tmpid" --log-level loud
    [ "$status" -eq 2 ]
    run "$TMPI_BUILD/agent/tmpid" --config /nonexistent.conf
    [ "$status" -eq 1 ]
    [[ "$output" == *"/nonexistent.conf"* ]]
    printf '[agent]\nmax_ranks = many\n' >"$BATS_TEST_TMPDIR/bad.conf"
    run "$TMPI_BUILD/agent/tmpid" --config "$BATS_TEST_TMPDIR/bad.conf"
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad.conf:2: bad value for [agent] max_ranks"* ]]
    run "$TMPI_BUILD/agent/tmpid" --version
    [ "$status" -eq 0 ]
}

@test "tmpid: a second agent on the same socket is refused" {
    agent_up
    run "$TMPI_BUILD/agent/tmpid" --socket "$SOCK"
    [ "$status" -eq 1 ]
    [[ "$output" == *"another agent is already listening"* ]]
    kill -0 "$AGENT_PID"
}

@test "agent: a job larger than max_ranks is refused with the limit" {
    printf '[agent]\nmax_ranks = 4\n' >"$BATS_TEST_TMPDIR/small.conf"
    agent_up --config "$BATS_TEST_TMPDIR/small.conf"
    run --separate-stderr launch -n 5 "$PROGS/hello"
    echo "$stderr"
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"1 to 4 ranks"* ]]
}

@test "agent: other users see only their own jobs and cannot cancel others' (SO_PEERCRED)" {
    [ "$(id -u)" -eq 0 ] || skip "needs root to act as another user (setpriv)"
    command -v setpriv >/dev/null || skip "setpriv not installed"
    local as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
    "${as_nobody[@]}" test -x "$TMPI_BUILD/launcher/tmpictl" ||
        skip "user nobody cannot reach the build tree ($TMPI_BUILD)"
    # a socket directory other users can reach (bats' own is private)
    SOCK_DIR=$(mktemp -d /tmp/tmpi-perm.XXXXXX)
    chmod 755 "$SOCK_DIR"
    agent_up
    launch -n 2 "$PROGS/ends" wait-forever >/dev/null 2>&1 &
    local l=$!
    until "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" jobs | grep -q running; do :; done
    run "${as_nobody[@]}" "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" jobs
    [ "$status" -eq 0 ]
    if grep -q running <<<"$output"; then false; fi
    run "${as_nobody[@]}" "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" cancel 1
    [ "$status" -eq 1 ]
    [[ "$output" == *"permission denied"* ]]
    # the owner (root, an admin) can
    run "$TMPI_BUILD/launcher/tmpictl" --agent "$SOCK" cancel 1
    [ "$status" -eq 0 ]
    local st=0
    wait "$l" || st=$?
    [ "$st" -eq 143 ]
    agent_down
    rm -rf "$SOCK_DIR"
}
