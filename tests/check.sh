#!/usr/bin/env bash
# The one test command (make check): C unit tests through meson, then the bats end-to-end
# suite against the same build.  Ends with "N passed, N failed".
set -u
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0

# Formatting (make format-check) counts as one test, so it cannot drift.
if "$top/tools/format-check"; then
    echo "ok format-check"
    passed=$((passed + 1))
else
    echo "not ok format-check"
    failed=$((failed + 1))
fi

# Every test program is registered and every MPI program runs on one node and across agents.
if "$top/tools/test-list-check"; then
    echo "ok test-list-check"
    passed=$((passed + 1))
else
    echo "not ok test-list-check"
    failed=$((failed + 1))
fi

# Every #include keeps to the may-use list of its folder (docs/layers.conf).
if "$top/tools/layer-check"; then
    echo "ok layer-check"
    passed=$((passed + 1))
else
    echo "not ok layer-check"
    failed=$((failed + 1))
fi

log=$(mktemp)
meson test -C "$build" --print-errorlogs --num-processes 2 \
    --timeout-multiplier "${TMPI_TIMEOUT_MULTIPLIER:-1}" 2>&1 | tee "$log"
ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -1)
xfail=$(sed -n 's/^Expected Fail: *\([0-9]*\).*/\1/p' "$log" | tail -1)
[ -n "$ok" ] && ok=$((ok + ${xfail:-0}))
bad=0
for k in Fail Timeout Unexpected\ Pass; do
    v=$(sed -n "s/^$k: *\([0-9]*\).*/\1/p" "$log" | tail -1)
    bad=$((bad + ${v:-0}))
done
if [ -z "$ok" ]; then bad=$((bad + 1)); ok=0; fi
passed=$((passed + ok))
failed=$((failed + bad))

export TMPI_BUILD="$build" TMPI_SRC="$top"
bats --tap --timing "$top/tests/bats" 2>&1 | tee "$log"
p=$(grep -c '^ok ' "$log")
f=$(grep -c '^not ok ' "$log")
if ! grep -q '^1\.\.' "$log"; then f=$((f + 1)); fi
passed=$((passed + p))
failed=$((failed + f))

# The multi-node tests (tagged multinode) once more with every job on the OFI transport over
# libfabric's tcp provider (helpers.bash: TMPI_TEST_TRANSPORT), named "[ofi] ..." in the output.
# Tests also tagged tcp run in the first pass only: each says why it does not hold on OFI;
# and so do those tagged bigdata (gigabytes through a path another test of the pass takes on
# OFI: bigcount.bats), which would take minutes of the CI's 30 a second time.
# TMPI_CHECK_OFI=0 leaves the pass out (a machine without libfabric's tcp provider).
if [ "${TMPI_CHECK_OFI:-1}" != 0 ]; then
    TMPI_TEST_TRANSPORT=ofi BATS_TEST_NAME_PREFIX="[ofi] " \
        bats --tap --timing --filter-tags 'multinode,!tcp,!bigdata' "$top/tests/bats" 2>&1 | tee "$log"
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^not ok ' "$log")
    if ! grep -q '^1\.\.' "$log"; then f=$((f + 1)); fi
    passed=$((passed + p))
    failed=$((failed + f))
    # And the tests/mpi programs across 3 agents on libfabric's shm provider, which applies
    # because agents on loopback are one host (point-to-point, collectives, RMA, datatypes, on
    # threads and on carriers); the whole multi-node set passes on shm too but takes 10
    # minutes more than make check may (tests/README.md: TMPI_TEST_PROVIDER=shm by hand).
    TMPI_TEST_TRANSPORT=ofi TMPI_TEST_PROVIDER=shm BATS_TEST_NAME_PREFIX="[shm] " \
        bats --tap --timing --filter-tags 'multinode,!tcp' --filter 'the tests/mpi programs on 3 nodes' \
        "$top/tests/bats" 2>&1 | tee "$log"
    p=$(grep -c '^ok ' "$log")
    f=$(grep -c '^not ok ' "$log")
    if ! grep -q '^1\.\.' "$log" || [ "$p" -eq 0 ]; then f=$((f + 1)); fi
    passed=$((passed + p))
    failed=$((failed + f))
fi
rm -f "$log"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
