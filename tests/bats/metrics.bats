#!/usr/bin/env bats
# The Prometheus endpoint (issue 19): off by default, [metrics] listen in tmpid.conf, GET
# /metrics in the text exposition format, other paths 404, and its limits.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() { stop_all_agents; }

# metrics_conf PORT [KEY=VALUE...]: a tmpid.conf with [metrics] listen on 127.0.0.1:PORT.
metrics_conf() {
    local f="$BATS_TEST_TMPDIR/metrics.conf" kv
    printf '[metrics]\nlisten = 127.0.0.1:%s\n' "$1" >"$f"
    shift
    for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}" >>"$f"; done
    echo "$f"
}

# scrape PORT [PATH]: prints the HTTP status, then the body.
scrape() {
    python3 - "$1" "${2:-/metrics}" <<'PY'
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), timeout=60)
    print(r.status); print(r.headers.get("Content-Type")); sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code); print(e.headers.get("Content-Type")); sys.stdout.write(e.read().decode())
PY
}

# metric NAME{LABELS} from a scrape in $1 (exact sample name with labels as printed): the value.
# Checks the exposition's shape on the way: every sample's family has # HELP and # TYPE.
metric() {
    SCRAPE="$1" python3 - "$2" <<'PY'
import os, sys
want = sys.argv[1]
lines = os.environ["SCRAPE"].splitlines()[2:]
types, helps, samples = {}, set(), {}
for l in lines:
    if l.startswith("# HELP "):
        helps.add(l.split()[2])
    elif l.startswith("# TYPE "):
        _, _, name, t = l.split(None, 3)
        assert t in ("counter", "gauge", "histogram", "summary"), l
        types[name] = t
    elif l:
        name, value = l.rsplit(" ", 1)
        base = name.split("{")[0]
        fam = base
        for suf in ("_bucket", "_sum", "_count"):
            if base.endswith(suf) and base[: -len(suf)] in types:
                fam = base[: -len(suf)]
        assert fam in types and fam in helps, "no # TYPE/# HELP for " + l
        samples[name] = float(value)
if want not in samples:
    sys.exit("no sample %s in:\n%s" % (want, "\n".join(lines)))
v = samples[want]
print(int(v) if v == int(v) else v)
PY
}

@test "metrics: off by default, no TCP listener of the agent's" {
    start_agent plain --log-level info
    run ! grep -q "metrics:" "$BATS_TEST_TMPDIR/plain.log"
    python3 - "${AGENT_PIDS[plain]}" <<'PY'
import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir("/proc/%s/fd" % pid):
    try:
        t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
    except OSError:
        continue
    if t.startswith("socket:["):
        inodes.add(t[8:-1])
for f in ("tcp", "tcp6"):
    for l in open("/proc/%s/net/%s" % (pid, f)).read().splitlines()[1:]:
        p = l.split()
        assert not (p[3] == "0A" and p[9] in inodes), "the agent listens on TCP: " + l
PY
}

@test "metrics: GET /metrics in the text format, other paths 404, other methods refused" {
    local port
    port=$(free_ports 1)
    start_agent m --config "$(metrics_conf "$port")" --log-level info
    grep -q "metrics: serving http://127.0.0.1:$port/metrics" "$BATS_TEST_TMPDIR/m.log"
    run scrape "$port"
    expect_status 0
    [ "${lines[0]}" = 200 ]
    [[ "${lines[1]}" == "text/plain; version=0.0.4"* ]]
    [ "$(metric "$output" tmpi_jobs_running)" = 0 ]
    [ "$(metric "$output" tmpi_jobs_started_total)" = 0 ]
    [ "$(metric "$output" 'tmpi_pool_capacity_bytes')" = 67108864 ]
    [ "$(metric "$output" 'tmpi_job_launch_seconds_count')" = 0 ]
    metric "$output" 'tmpi_messages_total{channel="p2p",direction="sent"}'
    metric "$output" 'tmpi_bytes_total{channel="ctl",direction="received"}'
    [[ "$output" == *"# TYPE tmpi_job_launch_seconds histogram"* ]]
    # a job on this one node moves the job metrics: running, then over
    local out="$BATS_TEST_TMPDIR/out" pid i
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 3 "$(prog sleeper)" >"$out" 2>&1 &
    pid=$!
    for ((i = 0; i < 300; i++)); do
        grep -q started "$out" && break
        sleep 0.1
    done
    run scrape "$port"
    [ "$(metric "$output" tmpi_jobs_running)" = 1 ]
    [ "$(metric "$output" tmpi_ranks_running)" = 3 ]
    [ "$(metric "$output" tmpi_jobs_started_total)" = 1 ]
    [ "$(metric "$output" 'tmpi_job_launch_seconds_count')" = 1 ]
    [ "$(metric "$output" 'tmpi_job_load_seconds_bucket{le="+Inf"}')" = 1 ]
    [ "$(metric "$output" 'tmpi_programs_cached')" = 1 ]
    run tmpictl --agent "$AGENT_SOCK" cancel 1
    expect_status 0
    wait "$pid" || true
    # the job leaves the table once its process is reaped, a moment after the launcher ends
    for ((i = 0; i < 300; i++)); do
        run scrape "$port"
        [ "$(metric "$output" tmpi_ranks_running)" = 0 ] && break
        sleep 0.1
    done
    [ "$(metric "$output" tmpi_ranks_running)" = 0 ]
    [ "$(metric "$output" tmpi_jobs_running)" = 0 ]
    [ "$(metric "$output" tmpi_jobs_failed_total)" = 1 ]
    run scrape "$port" /
    [ "${lines[0]}" = 404 ]
    run scrape "$port" /metrics/x
    [ "${lines[0]}" = 404 ]
    # only GET and HEAD: evhttp answers 501 Not Implemented to anything else
    run python3 -c '
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s/metrics" % sys.argv[1], method="DELETE"), timeout=60)
    print("served")
except urllib.error.HTTPError as e:
    print(e.code)' "$port"
    [ "$output" = 501 ]
}

@test "metrics: bounded: max_connections, timeout and max_request_size" {
    local port
    port=$(free_ports 1)
    start_agent m --config "$(metrics_conf "$port" max_connections=2 timeout=1 max_request_size=1024)"
    run python3 - "$port" <<'PY'
import socket, sys, urllib.request, urllib.error
port = int(sys.argv[1])
# two idle connections take both slots; the agent closes each after timeout (1 s)
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(2)]
for s in idle:
    s.settimeout(60)
    assert s.recv(100) == b"", "an idle connection got data"
# a request whose header lines pass max_request_size is refused, not served
try:
    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                                  headers={"X-Big": "a" * 4096}), timeout=60)
    sys.exit("a 4 KiB header was served")
except urllib.error.HTTPError as e:
    assert e.code in (400, 413, 431), e.code
body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=60).read().decode()
assert "tmpi_metrics_connections " in body, body
print("ok")
PY
    expect_status 0
    [ "$output" = ok ]
}

# The issue's flood: 5,000 idle connections (and 100 slow ones) held by one client, which
# raises its own descriptor limit to hold them.
@test "metrics: scrapes are answered under 5,000 idle and 100 slow connections (the idlest evicted)" {
    local port
    port=$(free_ports 1)
    start_agent m --config "$(metrics_conf "$port" max_connections=4 timeout=30)"
    run python3 - "$port" <<'PY'
import resource, socket, sys, threading, time, urllib.request
port = int(sys.argv[1])
IDLE, SLOW, SCRAPES = 5000, 100, 5
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
need = IDLE + SLOW + SCRAPES + 100
if hard != resource.RLIM_INFINITY and hard < need:
    print("skip: RLIMIT_NOFILE's hard limit %d is below the %d descriptors the flood needs"
          % (hard, need))
    sys.exit(0)
if soft != resource.RLIM_INFINITY and soft < need:
    resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
# held open, never sending (idle), and dripping a request that never ends (slow); the idle
# ones opened by 20 threads: one connect at a time waits for the kernel's softirq each time,
# which on a loaded machine made 5,000 take 38 s
idle = []
def opener(k):
    for _ in range(k):
        idle.append(socket.create_connection(("127.0.0.1", port)))
openers = [threading.Thread(target=opener, args=(IDLE // 20,)) for _ in range(20)]
for t in openers:
    t.start()
for t in openers:
    t.join()
assert len(idle) == IDLE, len(idle)
slow = []
for _ in range(SLOW):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    slow.append(c)
for i in range(SCRAPES):
    t = time.time()
    body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=3).read().decode()
    took = time.time() - t
    assert took < 2, "scrape %d took %.1f s" % (i, took)
    c = socket.create_connection(("127.0.0.1", port))  # the flood goes on between scrapes
    c.sendall(b"GET /met")
    slow.append(c)
ev = [l for l in body.splitlines() if l.startswith("tmpi_metrics_evictions_total ")]
assert ev and int(ev[0].split()[1]) >= IDLE + SLOW - 10, ev
conns = [l for l in body.splitlines() if l.startswith("tmpi_metrics_connections ")]
assert conns and int(conns[0].split()[1]) <= 4, conns
print("ok")
PY
    echo "$output"
    expect_status 0
    [[ "$output" != skip:* ]] || skip "${output#skip: }"
    [ "$output" = ok ]
}

@test "metrics: a bad [metrics] listen stops the agent with a clear error" {
    printf '[metrics]\nlisten = 127.0.0.1:99999\n' >"$BATS_TEST_TMPDIR/bad.conf"
    run -1 "$TMPID" --socket "$BATS_TEST_TMPDIR/bad.sock" --config "$BATS_TEST_TMPDIR/bad.conf"
    [[ "$output" == *"[metrics] listen"* ]] || { echo "$output"; false; }
    printf '[metrics]\nmax_connections = 0\n' >"$BATS_TEST_TMPDIR/bad.conf"
    run "$TMPID" --check-config "$BATS_TEST_TMPDIR/bad.conf"
    [ "$status" -ne 0 ]
    [[ "$output" == *"max_connections"* ]] || { echo "$output"; false; }
}

# bats test_tags=multinode
@test "metrics: a job across nodes moves jobs, launch times, mesh and data-link traffic, peers" {
    start_cluster 2
    local port two="$BATS_TEST_TMPDIR/two"
    port=$(free_ports 1)
    stop_agent node1
    start_cluster_agent 1 --config "$(metrics_conf "$port")"
    cp "$CLUSTER_HOSTFILE" "$two"
    local before after i
    # node2 shows as a peer that is up once its heartbeats answer
    for ((i = 0; i < 300; i++)); do
        before=$(scrape "$port")
        [ "$(metric "$before" "tmpi_peer_up{peer=\"127.0.0.1:${CLUSTER_PORTS[1]}\",name=\"node2\"}" 2>/dev/null)" = 1 ] && break
        sleep 0.1
    done
    [ "$(metric "$before" "tmpi_peer_up{peer=\"127.0.0.1:${CLUSTER_PORTS[1]}\",name=\"node2\"}")" = 1 ]
    run launch --agent "${CLUSTER_SOCKS[0]}" --hostfile "$two" -n 4 "$(prog mn_ring)"
    expect_status 0
    [[ "$output" == *"ring ok 4"* ]]
    # the data links' traffic is added when node1's part has unloaded
    for ((i = 0; i < 300; i++)); do
        after=$(scrape "$port")
        [ "$(metric "$after" 'tmpi_messages_total{channel="p2p",direction="sent"}')" -gt 0 ] && break
        sleep 0.1
    done
    [ "$(metric "$after" 'tmpi_messages_total{channel="p2p",direction="sent"}')" -gt 0 ]
    [ "$(metric "$after" 'tmpi_bytes_total{channel="p2p",direction="received"}')" -gt 1048576 ]
    [ "$(metric "$after" tmpi_jobs_started_total)" -gt "$(metric "$before" tmpi_jobs_started_total)" ]
    [ "$(metric "$after" tmpi_job_launch_seconds_count)" = 1 ]
    [ "$(metric "$after" 'tmpi_messages_total{channel="ctl",direction="sent"}')" -gt \
      "$(metric "$before" 'tmpi_messages_total{channel="ctl",direction="sent"}')" ]
}

# bats test_tags=multinode
@test "metrics: a running job's data-link traffic shows before it ends" {
    start_cluster 2
    local port out="$BATS_TEST_TMPDIR/out" pid i m
    port=$(free_ports 1)
    stop_agent node2
    start_cluster_agent 2 --config "$(metrics_conf "$port")"
    "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 \
        "$(prog mn_send_wait)" >"$out" 2>&1 &
    pid=$!
    for ((i = 0; i < 300; i++)); do
        grep -q received "$out" && break
        sleep 0.1
    done
    grep -q received "$out" || { cat "$out"; false; }
    # node2 received the 64 KiB while the job still runs: its host reports every 2 s
    for ((i = 0; i < 300; i++)); do
        m=$(metric "$(scrape "$port")" 'tmpi_bytes_total{channel="p2p",direction="received"}')
        [ "$m" -ge 65536 ] && break
        sleep 0.1
    done
    [ "$m" -ge 65536 ] || { echo "p2p bytes received on node2: $m"; false; }
    [ "$(metric "$(scrape "$port")" tmpi_jobs_running)" = 1 ]
    [ "$(metric "$(scrape "$port")" tmpi_ranks_running)" = 2 ]
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" --json jobs
    local id
    id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["id"])' <<<"$output")
    run tmpictl --agent "${CLUSTER_SOCKS[1]}" cancel "$id"
    expect_status 0
    wait "$pid" || true
}
