# helpers.bash — shared by the launcher and tmpictl suites: paths, test programs, agents.
#
# Agents (the real tmpid, or fake_agent for protocol cases the real one cannot be made to
# produce) are started on a socket of their own under $BATS_TEST_TMPDIR, with readiness read
# from a fifo (no polling), and stopped by the PID we recorded — never by name.

: "${TMPI_BUILD:?run through tests/check.sh (TMPI_BUILD=<build dir>)}"
: "${TMPI_SRC:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"

TMPID="$TMPI_BUILD/agent/tmpid"
# The binary itself, for "... &": $! of a backgrounded shell function is a subshell's PID, and a
# signal sent there would never reach the launcher.
LAUNCH_BIN="$TMPI_BUILD/launcher/tmpi-launch"
declare -gA AGENT_PIDS=()

tmpicc() { "$TMPI_BUILD/launcher/tmpicc" "$@"; }
launch() { "$TMPI_BUILD/launcher/tmpi-launch" "$@"; }
tmpictl() { "$TMPI_BUILD/launcher/tmpictl" "$@"; }

# The second pass of the multi-node tests (tests/check.sh; the tests tagged multinode):
# TMPI_TEST_TRANSPORT=ofi puts every job on libfabric's tcp provider, or the one
# TMPI_TEST_PROVIDER names (shm: the agents on loopback are one host) (tmpi-launch forwards
# TMPI_TRANSPORT and FI_PROVIDER to the job hosts), and a job whose links fell back to TCP fails
# its test when its agents stop (stop_agent).
if [ "${TMPI_TEST_TRANSPORT:-}" = ofi ]; then
    export TMPI_TRANSPORT=ofi FI_PROVIDER="${TMPI_TEST_PROVIDER:-tcp}"
fi

have_agent() { [ -x "$TMPID" ]; }
need_agent() { have_agent || skip "the agent ($TMPID) is not built"; }

# Builds tests/bats/progs/NAME.c (or examples/NAME.c) once per test file; prints its path.
prog() {
    local name=$1 out="$BATS_FILE_TMPDIR/progs/$1" src="$BATS_TEST_DIRNAME/progs/$1.c"
    [ -f "$src" ] || src="$TMPI_SRC/examples/$1.c"
    if [ ! -x "$out" ]; then
        mkdir -p "$BATS_FILE_TMPDIR/progs"
        tmpicc -o "$out" "$src" >&2 || return 1
    fi
    echo "$out"
}

load sanitizer

# The fake agent (tests/bats/fake_agent.c), built by meson with the build's own flags, so a
# sanitizer build gets a sanitized fake agent too.
fake_agent_bin() {
    local bin="$TMPI_BUILD/tests/fake_agent"
    [ -x "$bin" ] || { echo "fake agent not built: $bin" >&2; return 1; }
    echo "$bin"
}

# start_agent_bin BINARY NAME [ARGS...]: start BINARY on $BATS_TEST_TMPDIR/NAME.sock; sets
# AGENT_SOCK; its output goes to NAME.log.
start_agent_bin() {
    local bin=$1 name=$2
    shift 2
    local sock="$BATS_TEST_TMPDIR/$name.sock" fifo="$BATS_TEST_TMPDIR/$name.ready"
    local log="$BATS_TEST_TMPDIR/$name.log" line=""
    rm -f "$fifo"
    mkfifo "$fifo"
    "$bin" --socket "$sock" --ready-fd 3 --log-level warning "$@" 3>"$fifo" >"$log" 2>&1 &
    AGENT_PIDS[$name]=$!
    # bounded: an agent hung at start-up must fail its test, not stop the suite
    read -r -t $((60 * ${TMPI_TIMEOUT_MULTIPLIER:-1})) line <"$fifo" || true
    if [ "$line" != "READY=1" ]; then
        echo "agent $name did not become ready (pid ${AGENT_PIDS[$name]}); its log:" >&2
        cat "$log" >&2
        return 1
    fi
    AGENT_SOCK=$sock
}

start_agent() { need_agent; start_agent_bin "$TMPID" "$@"; }
start_fake_agent() { start_agent_bin "$(fake_agent_bin)" "$@"; }

stop_agent() {
    local name=$1 pid=${AGENT_PIDS[$1]:-} log="$BATS_TEST_TMPDIR/$1.log"
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    unset "AGENT_PIDS[$name]"
    # Under make sanitize / make tsan the agents' own reports land in their logs: a report
    # fails the test that ran them.
    if grep -qE 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:' "$log" 2>/dev/null; then
        echo "sanitizer report in agent $name's log:" >&2
        grep -m1 -A30 -E 'ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:' "$log" >&2
        return 1
    fi
    if [ "${TMPI_TEST_TRANSPORT:-}" = ofi ] && grep -qE "the job's links use tcp|stays on tcp" "$log" 2>/dev/null; then
        echo "the OFI pass: a job of agent $name left libfabric:" >&2
        grep -m3 -E "the job's links use tcp|stays on tcp" "$log" >&2
        return 1
    fi
}

stop_all_agents() {
    local name rc=0
    for name in "${!AGENT_PIDS[@]}"; do
        stop_agent "$name" || rc=1
    done
    return $rc
}

# Fails with what was expected and what came instead.
expect_status() {
    if [ "$status" -ne "$1" ]; then
        echo "expected status $1, got $status; output:" >&2
        echo "$output" >&2
        return 1
    fi
}

expect_line() {
    if ! grep -qxF -- "$1" <<<"$output"; then
        echo "expected the line: $1" >&2
        echo "got:" >&2
        echo "$output" >&2
        return 1
    fi
}

# ---- several agents on loopback, one cluster key (jobs across nodes) ----

# N free TCP ports on 127.0.0.1 (bound together, so they differ, then released for the agents).
free_ports() {
    python3 - "${1:-3}" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()
PY
}

# start_cluster N [TMPID ARGS...]: agents node1..nodeN listening on free loopback ports, with
# one key, each with the others as configured peers.  Sets CLUSTER_N, CLUSTER_KEY, CLUSTER_PORTS[i-1], CLUSTER_SOCKS[i-1] and
# CLUSTER_HOSTFILE (2 slots per node, in node order); node1 is the one to submit to.
start_cluster() {
    need_agent
    local n=$1 i
    shift
    CLUSTER_N=$n
    CLUSTER_KEY="$BATS_TEST_TMPDIR/cluster.key"
    head -c 32 /dev/urandom >"$CLUSTER_KEY"
    chmod 600 "$CLUSTER_KEY"
    read -r -a CLUSTER_PORTS < <(free_ports "$n")
    CLUSTER_SOCKS=()
    for ((i = 1; i <= n; i++)); do
        start_cluster_agent "$i" "$@" || return 1
    done
    CLUSTER_HOSTFILE=$(cluster_hostfile 2)
}

# start_cluster_agent I [TMPID ARGS...]: (re)start node I of the cluster (its port and the
# cluster key unless ARGS give another --key-file).
start_cluster_agent() {
    local i=$1 j peers=()
    shift
    # every other node is a configured peer, as in a real cluster's tmpid.conf (tmpictl nodes)
    for ((j = 1; j <= ${#CLUSTER_PORTS[@]}; j++)); do
        ((j == i)) || peers+=(--peer "127.0.0.1:${CLUSTER_PORTS[j - 1]}")
    done
    start_agent_bin "$TMPID" "node$i" --name "node$i" --listen "127.0.0.1:${CLUSTER_PORTS[i - 1]}" \
        --key-file "$CLUSTER_KEY" "${peers[@]}" "$@" || return 1
    CLUSTER_SOCKS[i - 1]=$AGENT_SOCK
}

# cluster_hostfile SLOTS: a host file with every node of the cluster; prints its path.
cluster_hostfile() {
    local f="$BATS_TEST_TMPDIR/cluster.hosts.$1" p
    : >"$f"
    for p in "${CLUSTER_PORTS[@]}"; do
        echo "127.0.0.1 slots=$1 port=$p" >>"$f"
    done
    echo "$f"
}

stop_cluster() {
    local i
    for ((i = 1; i <= ${CLUSTER_N:-0}; i++)); do
        stop_agent "node$i"
    done
}
