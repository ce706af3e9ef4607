#!/usr/bin/env bats
# The large-count (_c) calls (MPI 4.0 §2.5.8): collectives of every kind, datatype
# constructors and decoders with counts, sizes and extents past 2^31, external32 packing,
# MPI_Op_create_c, the attached buffer and the windows; every _c call with a count past INT_MAX
# of a type without data (bigcount_probe.c); counts and displacements past INT_MAX folded into
# types by the collectives (bigfold.c), v sides without a common factor taken whole (bigfold.c
# vspan); a message, a Bcast and a Put of one element spanning 2 GiB + 4 KiB of
# addresses (a reserved, barely touched buffer: little memory).  One node with threads and
# carriers, and 2 agents.  Bcast_c, Allreduce_c, the rooted and all-to-all _c collectives past
# 2^31 bytes per block (bigcoll.c, bigrooted.c) and 3 GiB through Ibcast_c, Bcast_init_c and
# one hvector_c element (bigfold.c big) need TMPI_TEST_BIG_MIN_KB of MemAvailable.
# mpi41.bats moves 3 GiB through Send_c, Allreduce_c and Put_c.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() { stop_all_agents; }

# Status 0, a line OK, and no sanitizer report.
expect_ok() {
    if [ "$status" -ne 0 ] || ! printf '%s\n' "${lines[@]}" | grep -qx OK ||
        [[ "$output" == *Sanitizer* ]]; then
        echo "expected status 0 and an OK line, got status $status; output:" >&2
        echo "$output" >&2
        return 1
    fi
}

@test "bigcount: the _c calls and a 2 GiB span on one node, threads and carriers" {
    local exe
    exe=$(prog bigcount)
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe"
    expect_ok
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe"
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: the _c calls and a 2 GiB span across 2 agents" {
    start_cluster 2
    local exe
    exe=$(prog bigcount)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe"
    expect_ok
}

# Every _c call but the file ones (io_large_count.c) with a count, displacement, buffer size or
# window size past INT_MAX, of a type without data: none may refuse (bigcount_probe.c prints the
# calls and their answers).
expect_probe_ok() {
    if [ "$status" -ne 0 ] || [ "${lines[${#lines[@]}-1]}" != OK ] || [[ "$output" == *Sanitizer* ]]; then
        echo "expected every _c call to take counts past INT_MAX, got status $status:" >&2
        printf '%s\n' "${lines[@]}" | grep -v ' ok$' >&2
        return 1
    fi
    [ "$(printf '%s\n' "${lines[@]}" | grep -c ' ok$')" -ge 116 ] || {
        echo "fewer than 116 calls answered" >&2
        return 1
    }
}

@test "bigcount: every _c call takes counts, displacements and sizes past INT_MAX on one node, threads and carriers" {
    local exe
    exe=$(prog bigcount_probe)
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe"
    expect_probe_ok
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe"
    expect_probe_ok
}

# bats test_tags=multinode
@test "bigcount: every _c call takes counts, displacements and sizes past INT_MAX across 2 agents" {
    start_cluster 2
    local exe
    exe=$(prog bigcount_probe)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe"
    expect_probe_ok
}

# Data through the folds of counts and displacements past INT_MAX (count_narrow.h): w blocks at
# byte displacements past 2^31 (MPI_Alltoallw_c, MPI_Ialltoallw_c) and v sides whose element
# displacements past 2^31 share a factor with the counts (MPI_Gatherv_c, MPI_Allgatherv_init_c),
# in reserved, barely touched buffers (little memory).
@test "bigcount: Alltoallw_c, Ialltoallw_c, Gatherv_c and Allgatherv_init_c with displacements past 2^31 on one node" {
    local exe
    exe=$(prog bigfold)
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" span
    expect_ok
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe" span
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: Alltoallw_c, Ialltoallw_c, Gatherv_c and Allgatherv_init_c with displacements past 2^31 across 2 agents" {
    start_cluster 2
    local exe
    exe=$(prog bigfold)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe" span
    expect_ok
}

# MPI_Allgather_c and MPI_Alltoall_c (blocking, I, _init_c) of one element of a non-contiguous
# type whose extent passes 2^31 (two 4 KiB blocks 2^31 + 8 KiB apart: bigfold.c ncvec), every
# byte of the blocks and the holes beside them checked, in reserved, barely touched buffers.
# The bytes stay small, so no count passes INT_MAX here: the extent and the block offsets do.
@test "bigcount: Allgather_c and Alltoall_c of a vector whose extent passes 2^31 on one node" {
    local exe
    exe=$(prog bigfold)
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" ncvec
    expect_ok
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe" ncvec
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: Allgather_c and Alltoall_c of a vector whose extent passes 2^31 across 2 agents" {
    start_cluster 2
    local exe
    exe=$(prog bigfold)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe" ncvec
    expect_ok
}

# v sides past INT_MAX whose counts and displacements share no factor (counts 3, 5 ... at odd
# displacements past 2^31; counts 2 and 2^31 + 1): the engine takes MPI_Count / MPI_Aint
# arrays whole (bigfold.c vspan), where a fold used to refuse them with MPI_ERR_COUNT.
@test "bigcount: Gatherv_c, Scatterv_c, Allgatherv_c, Alltoallv_c and I forms of v sides without a common factor on one node" {
    local exe
    exe=$(prog bigfold)
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" vspan
    expect_ok
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe" vspan
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: Gatherv_c, Scatterv_c, Allgatherv_c, Alltoallv_c and I forms of v sides without a common factor across 2 agents" {
    start_cluster 2
    local exe
    exe=$(prog bigfold)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe" vspan
    expect_ok
}

# The persistent (_init_c) and neighbourhood (Neighbor_*v_c, *w_c and their I and _init forms)
# v and w sides past INT_MAX whose counts and displacements share no factor (bigvfar.c): taken
# whole, where a fold used to refuse them with MPI_ERR_COUNT.
@test "bigcount: persistent and neighbourhood v and w collectives of sides without a common factor past 2^31 on one node" {
    local exe m
    exe=$(prog bigvfar)
    for m in persist nbr; do
        run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" "$m"
        expect_ok || { echo "bigvfar $m"; return 1; }
        run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe" "$m"
        expect_ok || { echo "bigvfar $m, 3 ranks"; return 1; }
    done
}

# bats test_tags=multinode
@test "bigcount: persistent and neighbourhood v and w collectives of sides without a common factor past 2^31 across 2 agents" {
    start_cluster 2
    local exe m
    exe=$(prog bigvfar)
    for m in persist nbr; do
        run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe" "$m"
        expect_ok || { echo "bigvfar $m"; return 1; }
    done
}

# The inter-communicator v and w collectives and Reduce_scatter_c (blocking, I and _init_c) of
# sides past INT_MAX whose counts and displacements share no factor (bigvfar.c inter): taken
# whole over the _c point-to-point calls, where a fold into types used to refuse them with
# MPI_ERR_COUNT.  2 ranks (groups of 1 and 1) and 3 (2 and 1) on one node, 4 across 2 agents.
@test "bigcount: inter-communicator v and w collectives of sides without a common factor past 2^31 on one node" {
    local exe
    exe=$(prog bigvfar)
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" inter
    expect_ok
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe" inter
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: inter-communicator v and w collectives of sides without a common factor past 2^31 across 2 agents" {
    start_cluster 2
    local exe
    exe=$(prog bigvfar)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe" inter
    expect_ok
}

# Regular types past TM_TYPE_MAX_BLOCKS (2^24 blocks) keep a shape instead of a map
# (bigvec.c): a vector of 2^24 + 3 blocks through Send/Recv, Sendrecv to an hvector, a resized
# twin, Pack/Unpack and Put as the target type (32 MiB); MPICH large_count's vector of 2^30
# blocks queried; a struct of an int, the vector and a byte (three strided runs, no map) sent,
# received, packed and copied into a resized twin, where it used to be refused with MPI_ERR_ARG.
@test "bigcount: vectors of more than 2^24 blocks move by stride, MPI_Type_vector of 2^30 blocks, on one node" {
    local exe
    exe=$(prog bigvec)
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe"
    expect_ok
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe"
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: vectors of more than 2^24 blocks move by stride, MPI_Type_vector of 2^30 blocks, across 2 agents" {
    start_cluster 2
    local exe
    exe=$(prog bigvec)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$exe"
    expect_ok
}

# Windows with a displacement unit past INT_MAX (bigfold.c wunit): Win_create_c,
# Win_allocate_c, Win_allocate_shared_c with 2^32 + 8; Put, Accumulate and Get 4 GiB into a
# reserved buffer; MPI_UNDEFINED from the int outputs.
@test "bigcount: windows with a displacement unit past INT_MAX on one node" {
    local exe
    exe=$(prog bigfold)
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" wunit
    expect_ok
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 -x TMPI_RANK_SWITCHING=user "$exe" wunit
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: windows with a displacement unit past INT_MAX across 2 agents" {
    start_cluster 2
    local exe
    exe=$(prog bigfold)
    run timeout 120 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe" wunit
    expect_ok
}

# Skips a test whose ranks hold 2^31-byte buffers where they cannot fit: below
# TMPI_TEST_BIG_MIN_KB of MemAvailable (default 6 GiB, as mpi41.bats), or under ThreadSanitizer,
# whose shadow of every touched byte multiplies the job's memory (the OOM killer ended the
# 2-agent run of make tsan).
need_big_memory() {
    local avail need=${TMPI_TEST_BIG_MIN_KB:-$((6 * 1024 * 1024))}
    [ "$(build_sanitizer)" != thread ] || skip "2^31-byte buffers and their TSan shadow do not fit"
    avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    [ "$avail" -ge "$need" ] || skip "needs $need kB of MemAvailable, the machine has $avail kB"
}

# 2^31 + 2^20 bytes per rank (about 2 GiB, 4 GiB for the job): a broadcast and an allreduce of
# more elements than int holds.
@test "bigcount: MPI_Bcast_c and MPI_Allreduce_c of more than 2^31 bytes on one node" {
    need_big_memory
    local exe
    exe=$(prog bigcoll)
    run timeout 300 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe"
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: MPI_Bcast_c and MPI_Allreduce_c of more than 2^31 bytes across 2 agents" {
    need_big_memory
    start_cluster 2
    local exe
    exe=$(prog bigcoll)
    run timeout 300 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$exe"
    expect_ok
}

# A user op (an int MPI_User_function) over 2^31 + 4096 bytes: MPI_Scan_c in place and
# MPI_Exscan_c take the count whole and call the function in pieces of at most INT_MAX
# elements (bigfold.c uop; about 4 GiB for the job, mostly untouched pages).
@test "bigcount: MPI_Scan_c and MPI_Exscan_c of more than 2^31 elements with a user op on one node" {
    need_big_memory
    local exe
    exe=$(prog bigfold)
    run timeout 300 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" uop $(((1 << 31) + 4096))
    expect_ok
}

# bigdata: gigabytes through the transport's large path, which the OFI pass checks with
# "MPI_Bcast_c and MPI_Allreduce_c of more than 2^31 bytes across 2 agents"; this one runs
# in the first pass only (tests/check.sh)
# bats test_tags=multinode,bigdata
@test "bigcount: MPI_Scan_c and MPI_Exscan_c of more than 2^31 elements with a user op across 2 agents" {
    need_big_memory
    start_cluster 2
    local exe
    exe=$(prog bigfold)
    run timeout 300 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$exe" uop $(((1 << 31) + 4096))
    expect_ok
}

# MPI_Bcast_c of 2^31 + 4096 bytes where one rank passes MPI_BYTE and the other a
# non-contiguous type of that signature (bigfold.c mixed): both cut at the same byte pieces
# (about 6 GiB for the job: the non-contiguous rank's packed stand-in); with 11 GiB of
# MemAvailable MPI_Gather_c and MPI_Scatter_c of such blocks too (about 9 GiB).
@test "bigcount: MPI_Bcast_c, Gather_c and Scatter_c of more than 2^31 bytes, a contiguous and a non-contiguous type on the two ranks, on one node" {
    need_big_memory
    local exe avail gather=()
    exe=$(prog bigfold)
    avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    [ "$avail" -lt $((11 * 1024 * 1024)) ] || gather=(-x BIGFOLD_GATHER=1)
    run timeout 500 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "${gather[@]}" "$exe" mixed $(((1 << 31) + 4096))
    expect_ok
}

# MPI_Bcast of 2^31 + 4096 bytes where one rank calls the int form (an int count of MPI_INT, or one
# element of a contiguous type) and the other MPI_Bcast_c of that signature (bigfold.c intc):
# both forms decide by the bytes, so they meet, where the int form used to take one call against
# the _c form's pieces (MPI_ERR_TRUNCATE).  About 4 GiB for the job.
@test "bigcount: MPI_Bcast against MPI_Bcast_c of one signature past 2^31 bytes on one node" {
    need_big_memory
    local exe
    exe=$(prog bigfold)
    run timeout 300 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" intc $(((1 << 31) + 4096))
    expect_ok
}

# bats test_tags=multinode
@test "bigcount: MPI_Bcast against MPI_Bcast_c of one signature past 2^31 bytes across 2 agents" {
    need_big_memory
    start_cluster 2
    local exe
    exe=$(prog bigfold)
    run timeout 300 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$exe" intc $(((1 << 31) + 4096))
    expect_ok
}

# MPI_Gather_c, MPI_Scatter_c, MPI_Allgather_c and MPI_Alltoall_c of blocks of 2^31 + 2^20 + 3
# bytes (more elements than int holds), in place: at most about 4.5 GiB for the job (the
# senders' blocks are mostly untouched pages).
bigrooted_all() {
    local m
    for m in gather scatter allgather alltoall; do
        run timeout 300 "$@" "$(prog bigrooted)" "$m"
        expect_ok || { echo "bigrooted $m"; return 1; }
    done
}

@test "bigcount: MPI_Gather_c, MPI_Scatter_c, MPI_Allgather_c and MPI_Alltoall_c of more than 2^31 bytes per block on one node" {
    need_big_memory
    bigrooted_all "$TMPI_BUILD/launcher/tmpi-launch" -n 2
}

# bigdata: gigabytes through the transport's large path, which the OFI pass checks with
# "MPI_Bcast_c and MPI_Allreduce_c of more than 2^31 bytes across 2 agents"; this one runs
# in the first pass only (tests/check.sh)
# bats test_tags=multinode,bigdata
@test "bigcount: MPI_Gather_c, MPI_Scatter_c, MPI_Allgather_c and MPI_Alltoall_c of more than 2^31 bytes per block across 2 agents" {
    need_big_memory
    start_cluster 2
    bigrooted_all "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2
}

# MPI_T performance variables of the data links (category tmpi.link): zero on one node,
# counting a job's p2p bytes across 2 agents; the pool's (tmpi.pool) read the agent's pool,
# here tmpid.conf's default [pool] size of 64 MiB.
# bats test_tags=multinode
@test "bigcount: MPI_T link-traffic pvars stay 0 on one node and count bytes across 2 agents, pool pvars read the agent's pool" {
    local exe
    exe=$(prog mpit_link)
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe"
    expect_ok
    [[ "$output" == *"pool capacity $((64 * 1024 * 1024))"* ]] || {
        echo "$output"
        return 1
    }
    start_cluster 2
    run timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" -n 4 "$exe"
    expect_ok
}

# More than 2^31 bytes for real through a folded count and a type of more than 2^31 bytes:
# MPI_Ibcast_c and MPI_Bcast_init_c of N MPI_BYTE, and a Send_c/Recv_c of one element of two
# blocks of N / 2 bytes with a 1 GiB hole (MPI_Type_create_hvector_c).  N is 3 GiB when
# MemAvailable has 11 GiB, else 2^31 + 4096 (2 ranks hold N each).
big_fold_bytes() {
    local avail
    avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
    if [ "$avail" -ge $((11 * 1024 * 1024)) ]; then
        echo $((3 * 1024 * 1024 * 1024))
    else
        echo $((2147483648 + 4096))
    fi
}

@test "bigcount: Ibcast_c, Bcast_init_c of more than 2^31 bytes and a Send_c of a type of more than 2^31 bytes on one node" {
    need_big_memory
    local exe
    exe=$(prog bigfold)
    run timeout 600 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe" big "$(big_fold_bytes)"
    expect_ok
}

# bigdata: gigabytes through the transport's large path, which the OFI pass checks with
# "MPI_Bcast_c and MPI_Allreduce_c of more than 2^31 bytes across 2 agents"; this one runs
# in the first pass only (tests/check.sh)
# bats test_tags=multinode,bigdata
@test "bigcount: Ibcast_c, Bcast_init_c of more than 2^31 bytes and a Send_c of a type of more than 2^31 bytes across 2 agents" {
    need_big_memory
    start_cluster 2
    local exe
    exe=$(prog bigfold)
    run timeout 600 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" --map-by node -n 2 "$exe" big "$(big_fold_bytes)"
    expect_ok
}
