#!/usr/bin/env bash
# profile.sh — where the time of a TMPI benchmark goes: perf record/stat on the agent process
# (every rank is a thread in it) while one benchmark job runs. Used for docs/bench/ANALYSIS.md.
#   tests/bench/profile.sh [BUILD]        (after make bench, which builds build/bench/tmpi/*)
# Needs linux-perf; run as root or with kernel.perf_event_paranoid <= 1.
set -eu
build=$(cd "${1:-build}" && pwd)
dir=$(mktemp -d /tmp/tmpi-prof.XXXXXX)
: >"$dir/tmpid.conf"
mkfifo "$dir/ready"
(cd / && exec "$build/agent/tmpid" --config "$dir/tmpid.conf" --socket "$dir/s.sock" --ready-fd 3 \
    --log-level warning 3>"$dir/ready" >"$dir/tmpid.log" 2>&1) &
agent=$!
read -r _ <"$dir/ready"
trap 'kill -TERM $agent 2>/dev/null; wait $agent 2>/dev/null; rm -rf "$dir"' EXIT
launch() { "$build/launcher/tmpi-launch" --agent "$dir/s.sock" "$@"; }

profile() { # NAME RANKS PROG ARGS...
    local name=$1 n=$2
    shift 2
    echo "=== $name: $n ranks: $*"
    launch -n "$n" "$@" -t 4 >"$dir/$name.out" &
    local job=$!
    sleep 1.5
    perf stat -e task-clock,context-switches,cpu-migrations,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield \
        -p "$agent" -- sleep 1 2>&1 | grep -E "task-clock|context|migr|futex|yield|elapsed"
    perf record -q -g -o "$dir/$name.data" -p "$agent" -- sleep 1 >/dev/null 2>&1
    wait "$job" || true
    grep RESULT "$dir/$name.out" || true
    perf report -i "$dir/$name.data" --no-children --sort symbol --stdio 2>/dev/null |
        grep -E '^ +[0-9.]+%' | head -15
}

profile pingpong8 2 "$build/bench/tmpi/pingpong" -min 8 -max 8
profile ring16 16 "$build/bench/tmpi/ring"
profile allreduce16 16 "$build/bench/tmpi/allreduce1000" -i 20000
