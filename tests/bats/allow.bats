#!/usr/bin/env bats
# Who may submit jobs ([agent] allow_users, allow_groups in tmpid.conf): with real throwaway
# users (root only), created and removed again by each test.

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
    mkdir -p "$BATS_FILE_TMPDIR/progs"
    "$TMPI_BUILD/launcher/tmpicc" -o "$BATS_FILE_TMPDIR/progs/hostinfo" \
        "$TMPI_SRC/tests/bats/agent_progs/hostinfo.c"
}

teardown() {
    stop_all_agents
    local u
    if [ -f "$BATS_TEST_TMPDIR/users" ]; then
        while read -r u; do userdel -r -f "$u" 2>/dev/null || true; done <"$BATS_TEST_TMPDIR/users"
    fi
    if [ -f "$BATS_TEST_TMPDIR/groups" ]; then
        while read -r u; do groupdel "$u" 2>/dev/null || true; done <"$BATS_TEST_TMPDIR/groups"
    fi
    [ -n "${PUB:-}" ] && rm -rf "$PUB"
    true
}

# Users tmpiw_{a,b,c}PID, group tmpiw_gPID with c in it; a program and socket directory
# every user can reach.
need_users() {
    [ "$(id -u)" -eq 0 ] || skip "needs root to create users"
    command -v useradd >/dev/null && command -v runuser >/dev/null || skip "no useradd/runuser"
    setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$TMPI_BUILD/launcher/tmpi-launch" ||
        skip "other users cannot reach the build tree ($TMPI_BUILD)"
    UA="tmpiw_a$$" UB="tmpiw_b$$" UC="tmpiw_c$$" G="tmpiw_g$$"
    groupadd "$G" && echo "$G" >>"$BATS_TEST_TMPDIR/groups"
    local u
    for u in "$UA" "$UB" "$UC"; do
        useradd -M -s /bin/sh "$u" && echo "$u" >>"$BATS_TEST_TMPDIR/users"
    done
    usermod -a -G "$G" "$UC"
    PUB=$(mktemp -d /tmp/tmpiw.XXXXXX)
    chmod 755 "$PUB"
    cp "$BATS_FILE_TMPDIR/progs/hostinfo" "$PUB/"
    chmod 755 "$PUB/hostinfo"
}

# run_as USER: hostinfo id through the agent, as USER, from $PUB.
run_as() {
    run --separate-stderr runuser -u "$1" -- sh -c 'cd "$1" && exec "$2" --agent "$3" -n 2 ./hostinfo id' \
        sh "$PUB" "$TMPI_BUILD/launcher/tmpi-launch" "$SOCK"
}

agent_conf() {
    printf '%b' "$1" >"$PUB/tmpid.conf"
    local fifo="$BATS_TEST_TMPDIR/ready" line=""
    SOCK="$PUB/agent.sock"
    mkfifo "$fifo"
    "$TMPID" --socket "$SOCK" --config "$PUB/tmpid.conf" --ready-fd 3 3>"$fifo" \
        >"$BATS_TEST_TMPDIR/a.log" 2>&1 &
    AGENT_PIDS[a]=$!
    read -r -t $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) line <"$fifo" || true
    [ "$line" = READY=1 ] || { cat "$BATS_TEST_TMPDIR/a.log"; false; }
}

@test "allow: without allow_users / allow_groups any local user may submit" {
    need_users
    agent_conf '[agent]\n'
    run_as "$UA"
    [ "$status" -eq 0 ] || { echo "$UA: $status $stderr"; false; }
    [[ "$output" == *" uid=$(id -u "$UA") "* ]]
}

@test "allow: allow_users and allow_groups admit those users and group members; others are refused clearly" {
    need_users
    agent_conf "[agent]\nallow_users = nobody, $UA\nallow_groups = $G\n"
    run_as "$UA"
    [ "$status" -eq 0 ] || { echo "$UA (listed): $status $stderr"; false; }
    run_as "$UC"
    [ "$status" -eq 0 ] || { echo "$UC (member of $G): $status $stderr"; false; }
    run_as "$UB"
    [ "$status" -eq 1 ] || { echo "$UB: expected 1, got $status"; false; }
    [[ "$stderr" == *"user $UB (uid $(id -u "$UB")) may not submit jobs to the agent on "*"(allow_users / allow_groups in its tmpid.conf)"* ]] ||
        { echo "got: $stderr"; false; }
    grep -q "may not submit" "$BATS_TEST_TMPDIR/a.log"
    # root (an admin) always may
    run "$TMPI_BUILD/launcher/tmpi-launch" --agent "$SOCK" -n 1 "$PUB/hostinfo" id
    expect_status 0
}

@test "allow: a reload (SIGHUP) applies new allow_users to the next submissions" {
    need_users
    agent_conf '[agent]\n'
    run_as "$UB"
    [ "$status" -eq 0 ] || { echo "$UB before the reload: $status $stderr"; false; }
    printf '[agent]\nallow_users = %s\n' "$UA" >"$PUB/tmpid.conf"
    kill -HUP "${AGENT_PIDS[a]}"
    local i
    for ((i = 0; i < 50; i++)); do
        grep -q "allow_users changed" "$BATS_TEST_TMPDIR/a.log" && break
        sleep 0.1
    done
    run_as "$UB"
    [ "$status" -eq 1 ] || { echo "$UB after the reload: expected 1, got $status"; false; }
    [[ "$stderr" == *"may not submit jobs"* ]]
    run_as "$UA"
    [ "$status" -eq 0 ] || { echo "$UA: $status $stderr"; false; }
}
