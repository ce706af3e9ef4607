#!/usr/bin/env bats
# agent_service.bats — what the service manager relies on: tmpid --check-config, SIGHUP
# re-reading the configuration (tmpid(8) RELOADING: what can change while jobs run is applied,
# the rest is logged as needing a restart, a bad file changes nothing), and socket activation
# (tmpid.socket: the control socket passed by systemd, here by systemd-socket-activate).

load helpers

setup() {
    need_agent
    CONF="$BATS_TEST_TMPDIR/tmpid.conf"
}

teardown() { stop_all_agents; }

# wait_log NAME TEXT: waits up to 10 s for TEXT in agent NAME's log.
wait_log() {
    local log="$BATS_TEST_TMPDIR/$1.log" i
    for ((i = 0; i < 100; i++)); do
        grep -qF -- "$2" "$log" && return 0
        sleep 0.1
    done
    echo "expected in $1's log: $2; the log:" >&2
    cat "$log" >&2
    return 1
}

@test "check-config: a good file is reported OK with exit 0" {
    printf '[agent]\nmax_jobs = 3\n[mpi]\nspin_ns = 100\n' >"$CONF"
    run "$TMPID" --check-config "$CONF"
    expect_status 0
    expect_line "$CONF: OK"
    run "$TMPID" --check-config="$CONF"
    expect_status 0
}

@test "check-config: a bad value is named with its file and line, exit 1" {
    printf '[agent]\nmax_jobs = 3\nmax_jobs = lots\n' >"$CONF"
    run "$TMPID" --check-config "$CONF"
    expect_status 1
    [[ "$output" == *"$CONF:3: bad value for [agent] max_jobs"* ]] || { echo "got: $output" >&2; false; }
}

@test "check-config: an unknown key and a missing named file are errors" {
    printf '[agent]\nmax_jbos = 3\n' >"$CONF"
    run "$TMPID" --check-config "$CONF"
    expect_status 1
    [[ "$output" == *"unknown setting [agent] max_jbos"* ]] || { echo "got: $output" >&2; false; }
    run "$TMPID" --check-config "$BATS_TEST_TMPDIR/none.conf"
    expect_status 1
    [[ "$output" == *"cannot read $BATS_TEST_TMPDIR/none.conf"* ]] || { echo "got: $output" >&2; false; }
}

@test "check-config: a key file other users can read is refused" {
    head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/key"
    chmod 644 "$BATS_TEST_TMPDIR/key"
    printf '[mesh]\nkey_file = %s\n' "$BATS_TEST_TMPDIR/key" >"$CONF"
    run "$TMPID" --check-config "$CONF"
    expect_status 1
    [[ "$output" == *"key_file"*"mode 644"* ]] || { echo "got: $output" >&2; false; }
    chmod 600 "$BATS_TEST_TMPDIR/key"
    run "$TMPID" --check-config "$CONF"
    expect_status 0
}

@test "check-config: a peer that is not HOST:PORT is refused" {
    head -c 32 /dev/urandom >"$BATS_TEST_TMPDIR/key"
    chmod 600 "$BATS_TEST_TMPDIR/key"
    printf '[mesh]\nkey_file = %s\npeers = 127.0.0.1:7000, ::1:7\n' "$BATS_TEST_TMPDIR/key" >"$CONF"
    run "$TMPID" --check-config "$CONF"
    expect_status 1
    [[ "$output" == *"[mesh] peers: not HOST:PORT: ::1:7"* ]] || { echo "got: $output" >&2; false; }
}

@test "check-config: FILE given twice with different names is a usage error" {
    printf '[agent]\n' >"$CONF"
    run "$TMPID" --config /etc/other.conf --check-config "$CONF"
    expect_status 2
}

@test "SIGHUP applies a live setting: a lowered max_program_size refuses the next program" {
    local hello
    hello=$(prog hello)
    printf '[agent]\nmax_program_size = 256M\n' >"$CONF"
    start_agent main --config "$CONF" --log-level info
    run launch --agent "$AGENT_SOCK" -n 1 "$hello"
    expect_status 0
    printf '[agent]\nmax_program_size = 4K\n' >"$CONF"
    kill -HUP "${AGENT_PIDS[main]}"
    wait_log main "reload: done"
    grep -qF "[agent] max_program_size changed: applied now" "$BATS_TEST_TMPDIR/main.log"
    run launch --agent "$AGENT_SOCK" -n 1 "$hello"
    [ "$status" -ne 0 ] || { echo "a program over 4K was accepted after the reload" >&2; false; }
    [[ "$output" == *max_program_size* ]] || { echo "got: $output" >&2; false; }
    # the agent is still the same process and still serves
    kill -0 "${AGENT_PIDS[main]}"
    run tmpictl --agent "$AGENT_SOCK" status
    expect_status 0
}

@test "SIGHUP applies max_ranks to the next submission" {
    local hello
    hello=$(prog hello)
    printf '[agent]\nmax_ranks = 64\n' >"$CONF"
    start_agent main --config "$CONF" --log-level info
    run launch --agent "$AGENT_SOCK" -n 4 "$hello"
    expect_status 0
    printf '[agent]\nmax_ranks = 2\n' >"$CONF"
    kill -HUP "${AGENT_PIDS[main]}"
    wait_log main "reload: done"
    run launch --agent "$AGENT_SOCK" -n 4 "$hello"
    [ "$status" -ne 0 ] || { echo "4 ranks accepted with max_ranks = 2" >&2; false; }
    [[ "$output" == *"1 to 2 ranks"* ]] || { echo "got: $output" >&2; false; }
    run launch --agent "$AGENT_SOCK" -n 2 "$hello"
    expect_status 0
}

@test "SIGHUP with a bad file changes nothing and the agent runs on" {
    local hello
    hello=$(prog hello)
    printf '[agent]\nmax_program_size = 256M\n' >"$CONF"
    start_agent main --config "$CONF" --log-level info
    printf '[agent]\nmax_program_size = 4K\nmax_jobs = none\n' >"$CONF"
    kill -HUP "${AGENT_PIDS[main]}"
    wait_log main "reload: the new configuration was refused"
    grep -qF 'bad value for [agent] max_jobs' "$BATS_TEST_TMPDIR/main.log"
    run launch --agent "$AGENT_SOCK" -n 2 "$hello"
    expect_status 0
}

@test "SIGHUP: a setting that needs a restart is logged and keeps its running value" {
    printf '[agent]\nname = before\n' >"$CONF"
    start_agent main --config "$CONF" --log-level info
    printf '[agent]\nname = after\n' >"$CONF"
    kill -HUP "${AGENT_PIDS[main]}"
    wait_log main "reload: done"
    grep -qF '[agent] name changed: needs a restart' "$BATS_TEST_TMPDIR/main.log"
    run tmpictl --agent "$AGENT_SOCK" status
    expect_status 0
    [[ "$output" == *before* ]] || { echo "expected the running name 'before'; got: $output" >&2; false; }
}

@test "socket activation: the first tool connection starts the agent, which serves it and keeps the socket file" {
    command -v systemd-socket-activate >/dev/null || skip "systemd-socket-activate is not installed"
    local sock="$BATS_TEST_TMPDIR/act.sock" log="$BATS_TEST_TMPDIR/act.log" pid hello
    hello=$(prog hello)
    # systemd-socket-activate binds, waits for a connection, then execs tmpid in its own
    # process, so $! is the agent's PID.
    systemd-socket-activate -l "$sock" -- "$TMPID" --socket "$sock" --log-level info \
        >"$log" 2>&1 &
    pid=$!
    AGENT_PIDS[act]=$pid
    local i
    for ((i = 0; i < 100; i++)); do [ -S "$sock" ] && break; sleep 0.05; done
    run tmpictl --agent "$sock" status
    expect_status 0
    grep -qF "listening on $sock (socket passed by systemd)" "$log" || { cat "$log" >&2; false; }
    run launch --agent "$sock" -n 2 "$hello"
    expect_status 0
    kill -TERM "$pid"
    wait "$pid" || true
    unset "AGENT_PIDS[act]"
    # the file belongs to whoever created the socket (systemd): the agent leaves it
    [ -S "$sock" ] || { echo "the agent removed the socket file it was given" >&2; false; }
}

@test "socket activation: without passed sockets the agent binds the path itself and removes it at exit" {
    start_agent plain
    [ -S "$AGENT_SOCK" ]
    local sock=$AGENT_SOCK
    stop_agent plain
    [ ! -e "$sock" ] || { echo "the socket file stayed after the agent left" >&2; false; }
}

@test "unit: systemd-analyze security rates tmpid.service as docs/ADMIN.md says, better than 6.9 before job hosts" {
    local unit="$TMPI_BUILD/etc/tmpid.service"
    [ -f "$unit" ] || skip "the unit is not generated in this build ($unit)"
    command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
    systemd-analyze security --help 2>/dev/null | grep -q -- '--offline' ||
        skip "systemd-analyze security has no --offline (systemd < 250)"
    # offline: the unit file as shipped, not a loaded unit
    local copy="$BATS_TEST_TMPDIR/tmpid.service"
    cp "$unit" "$copy"
    run systemd-analyze security --offline=true --no-pager "$copy"
    local got
    got=$(sed -n 's/.*Overall exposure level for tmpid.service: \([0-9.]*\) .*/\1/p' <<<"$output")
    [ -n "$got" ] || { echo "no exposure level in: $output"; false; }
    local doc
    doc=$(sed -n 's/.*`systemd-analyze security tmpid` rates it \([0-9.]*\) .*/\1/p' "$TMPI_SRC/docs/ADMIN.md")
    [ "$got" = "$doc" ] || { echo "systemd-analyze says $got, docs/ADMIN.md says '$doc'"; false; }
    awk -v g="$got" 'BEGIN { exit !(g < 6.9) }' || { echo "exposure $got is not below 6.9"; false; }
}

@test "check-config: [io] threads and offload_min are checked (0 to 64 threads, a size)" {
    printf '[io]\nthreads = 0\noffload_min = 1m\n' >"$CONF"
    run "$TMPID" --check-config "$CONF"
    expect_status 0
    printf '[io]\nthreads = 65\n' >"$CONF"
    run "$TMPID" --check-config "$CONF"
    expect_status 1
    [[ "$output" == *"$CONF:2: bad value for [io] threads"* ]] || { echo "got: $output" >&2; false; }
    printf '[io]\noffload_min = 256KB\n' >"$CONF"
    run "$TMPID" --check-config "$CONF"
    expect_status 1
    [[ "$output" == *"$CONF:2: bad value for [io] offload_min"* ]] || { echo "got: $output" >&2; false; }
}

# [io] threads = 0 keeps every file system call on its rank: io_pool's FIFO opens on 4 ranks
# over at most 3 carriers then hold every carrier (the readers block the writer) and the job
# hangs until its timeout; the job's TMPI_IO_THREADS wins over the file and the job ends (4:
# the three blocked readers and the writer each need a thread).
@test "MPI-IO's file system threads: tmpid.conf [io] threads is the jobs' default, TMPI_IO_THREADS wins" {
    [ "$(getconf _NPROCESSORS_ONLN)" -le 3 ] || skip "4 ranks need more ranks than carriers (at most 3 CPUs)"
    local exe="$BATS_TEST_TMPDIR/io_pool"
    "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$TMPI_SRC/tests/mpi/io_pool.c"
    printf '[io]\nthreads = 0\n' >"$CONF"
    start_agent a --config "$CONF"
    run timeout 120 "$LAUNCH_BIN" --agent "$AGENT_SOCK" --timeout 60 -x TMPI_RANK_SWITCHING=user \
        -x TMPI_IO_THREADS=4 -n 4 "$exe"
    expect_status 0
    expect_line OK
    run timeout 120 "$LAUNCH_BIN" --agent "$AGENT_SOCK" --timeout 8 -x TMPI_RANK_SWITCHING=user \
        -n 4 "$exe"
    [ "$status" -ne 0 ] || { echo "the job ended although [io] threads = 0: $output" >&2; false; }
    [[ "$output" != *OK* ]]
}
