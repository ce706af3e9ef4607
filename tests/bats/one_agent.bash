# one_agent.bash — one real tmpid per test, started by hand on a socket of its own, for the
# suites that drive a single agent directly (agent, jobhost, jobhost_oom, limits).
#
# Readiness is read from a fifo (no polling); the agent is stopped by the PID recorded here,
# never by name; a sanitizer report in its log fails the test that started it.

# agent_start [TMPID ARGS...]: the agent on $SOCK_DIR/agent.sock (default: the test's own
# directory), moved first into the cgroup directory $NODE_CG when that is set.  Sets SOCK, LOG
# and AGENT_PID.
agent_start() {
    SOCK_DIR=${SOCK_DIR:-$BATS_TEST_TMPDIR}
    SOCK="$SOCK_DIR/agent.sock"
    LOG="$BATS_TEST_TMPDIR/agent.log"
    local fifo="$BATS_TEST_TMPDIR/ready"
    rm -f "$fifo"
    mkfifo "$fifo"
    (
        if [ -n "${NODE_CG:-}" ]; then echo "$BASHPID" >"$NODE_CG/cgroup.procs" || exit 1; fi
        cd / && exec "$TMPI_BUILD/agent/tmpid" --socket "$SOCK" --ready-fd 3 --log-level info "$@" \
            3>"$fifo" >"$LOG" 2>&1
    ) &
    AGENT_PID=$!
    local line=""
    read -r -t $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) line <"$fifo" || true
    [ "$line" = "READY=1" ] || { cat "$LOG"; return 1; }
}

agent_up() { agent_start "$@"; }

agent_down() {
    if [ -n "${AGENT_PID:-}" ] && kill -0 "$AGENT_PID" 2>/dev/null; then
        kill -TERM "$AGENT_PID"
        wait "$AGENT_PID" || true
    fi
    AGENT_PID=""
    if [ -n "${LOG:-}" ] && grep -q "Sanitizer\|runtime error" "$LOG"; then
        cat "$LOG"
        return 1
    fi
}
