#!/usr/bin/env bats
# MPI 4.1 behaviour outside tests/mpi: erroneous programs the standard leaves to the
# implementation that must still end cleanly.

bats_require_minimum_version 1.5.0
load helpers
load sanitizer

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

# Every run: exit status 1, the error names MPI_Finalize and the waiting rank's call, no
# signal.  Repeated: the crash it replaces came in 2 runs of 4.
finalize_early() {
    local exe=$1 n=$2 what=$3 call=$4 i
    shift 4
    for i in 1 2 3 4 5 6; do
        run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" "$@" -n "$n" "$exe" "$what"
        if [ "$status" -ne 1 ] || [[ "$output" == *signal* ]] ||
            [[ "$output" != *"rank 0 called MPI_Finalize while rank "*" waits in $call"* ]]; then
            echo "run $i, $n ranks, $what $*: status $status"
            echo "$output"
            return 1
        fi
    done
}

@test "mpi41: MPI_Finalize while peers wait in MPI_Allreduce or MPI_Bcast ends the job with an error naming both, threads and carriers" {
    local exe
    exe=$(prog finalize_early)
    finalize_early "$exe" 2 allreduce MPI_Allreduce
    finalize_early "$exe" 4 allreduce MPI_Allreduce
    finalize_early "$exe" 3 bcast MPI_Bcast
    finalize_early "$exe" 4 allreduce MPI_Allreduce -x TMPI_RANK_SWITCHING=user
    finalize_early "$exe" 3 bcast MPI_Bcast -x TMPI_RANK_SWITCHING=user
}

# More than 2^31 bytes in one Send_c/Recv_c, one Allreduce_c and one Put_c between two ranks
# of one node: 3 GiB when the machine has room for it, else 2^31 + 4099 bytes; skipped below
# TMPI_TEST_BIG_MIN_KB of MemAvailable (docs/USER.md, "Large counts").
@test "mpi41: a message, an Allreduce and a Put of more than 2^31 bytes with the _c calls" {
    local avail need_small=$((6 * 1024 * 1024)) need_big=$((11 * 1024 * 1024)) n
    # ThreadSanitizer shadows every byte the buffers touch (several times 2^31 bytes more):
    # the normal and ASan builds carry this test
    [ "$(build_sanitizer)" != thread ] || skip "2^31-byte buffers and their TSan shadow do not fit"
    avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    if [ "$avail" -ge "$need_big" ]; then
        n=$((3 * 1024 * 1024 * 1024))
    elif [ "$avail" -ge "${TMPI_TEST_BIG_MIN_KB:-$need_small}" ]; then
        n=$((2147483648 + 4099))
    else
        skip "needs ${TMPI_TEST_BIG_MIN_KB:-$need_small} kB of MemAvailable, the machine has $avail kB"
    fi
    local exe="$BATS_FILE_TMPDIR/large_count"
    tmpicc -o "$exe" "$TMPI_SRC/tests/mpi/large_count.c"
    run timeout 600 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" "$n"
    [ "$status" -eq 0 ] && [ "${lines[${#lines[@]}-1]}" = "OK" ] || {
        echo "$n bytes: status $status"
        echo "$output"
        return 1
    }
}

# split_run ARGS...: tmpi-launch ARGS, which must print "split_carrier ok"
split_run() {
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" "$@"
    [ "$status" -eq 0 ] && [[ "$output" == *"split_carrier ok"* ]] || { echo "tmpi-launch $*: status $status"; echo "$output"; false; }
}

@test "mpi41: MPI_Comm_split_type HW_GUIDED Core and PU under carriers groups the ranks of one carrier, pinned or not; unbound rank threads get MPI_COMM_NULL" {
    local exe nc
    exe=$(prog split_carrier)
    nc=$(nproc)
    # more ranks than kernel_ranks_per_cpu times the CPUs: carriers, unbound by default
    split_run -n $((5 * nc)) "$exe" "$nc"
    split_run -x TMPI_RANK_SWITCHING=user -x TMPI_CARRIER_PLACEMENT=cyclic -n $((2 * nc + 1)) "$exe" "$nc"
    split_run -x TMPI_RANK_SWITCHING=user --bind-to core -n $((3 * nc)) "$exe" "$nc"
    # threads of their own, oversubscribed and so unbound: in no one core
    split_run -x TMPI_RANK_SWITCHING=kernel -n $((2 * nc)) "$exe" null
}
