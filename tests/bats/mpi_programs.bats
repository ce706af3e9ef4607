#!/usr/bin/env bats
# MPI test programs (tests/mpi/*.c) built with tmpicc and run under tmpi-launch with 1, 2, 4
# and 16 ranks: each must exit 0 and print OK.

load helpers

setup() {
    : "${TMPI_BUILD:?run through tests/check.sh}"
    : "${TMPI_SRC:?run through tests/check.sh}"
}

teardown() { stop_all_agents; }

# Programs are built into this run's own directory, never into the shared $BATS_TMPDIR: a
# binary left there by another build (say build/ while this run tests build-tsan/) carries
# that build's RUNPATH, so the agent would load that build's libtmpi.  An uninstrumented
# libtmpi under a TSan agent hides every atomic from TSan while its memcpy/memset calls still
# reach TSan's interceptors: every message then looks like a data race.
run_prog() {
    local prog=$1
    shift
    local exe="$BATS_FILE_TMPDIR/mpi_$prog"
    if [ ! -x "$exe" ]; then
        "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$TMPI_SRC/tests/mpi/$prog.c"
    fi
    for n in "$@"; do
        # shellcheck disable=SC2086 # ARGS: the program's arguments, split
        # shellcheck disable=SC2086 # LAUNCH_ARGS: tmpi-launch's own options, split
        run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" ${SWITCHING:+-x "TMPI_RANK_SWITCHING=$SWITCHING"} ${LAUNCH_ARGS:-} -n "$n" "$exe" ${ARGS:-}
        # Sanitizer reports and libtmpi's build-mismatch warning fail the test wherever they
        # appear in the output, not only when they displace the final OK.
        if [ "$status" -ne 0 ] || [ "${lines[${#lines[@]}-1]}" != "OK" ] ||
            [[ "$output" == *Sanitizer* ]]; then
            echo "$prog with $n ranks: status $status, output:"
            echo "$output"
            return 1
        fi
    done
}

@test "mpi: point-to-point order with wildcards" {
    run_prog p2p_order 1 2 4 16
}

@test "mpi: messages across the eager limit, Ssend, truncation" {
    run_prog p2p_large 1 2 4 16
}

@test "mpi: large copies shared by both ranks: contiguous and strided, both orders, truncation, threads, persistent, cancel" {
    run_prog coop_copy 1 2 4 16
    SWITCHING=user run_prog coop_copy 2 5
}

@test "mpi: receives into sparse layouts laid out by the receiver: every completion call, truncation, many senders, threads, a freed receive" {
    run_prog handoff_sparse 1 2 3 4 16
    ARGS=multiple run_prog handoff_sparse 2 4
    SWITCHING=user run_prog handoff_sparse 2 5
}

@test "mpi: nothing lost: random sizes across the eager limits, specific and wildcard receives, slow receivers, non-overtaking per (source, tag, comm)" {
    run_prog nothing_lost 1 2 4 16
}

@test "mpi: nonblocking requests, Probe, Cancel" {
    run_prog nonblocking 1 2 4 16
}

@test "mpi: MPI_Cancel of sends of every mode and size: a cancelled send is never received, a received one is not cancelled, a receive racing the cancel" {
    run_prog send_cancel 1 2 3 4
}

@test "mpi: derived datatypes through point-to-point (vector, struct, indexed, subarray, darray; partial receives)" {
    run_prog datatypes_p2p 1 2 4 16
}

@test "mpi: collectives with derived datatypes (vector reductions, user op on a vector, Bcast, Gather, MINLOC)" {
    run_prog datatypes_coll 1 2 4 16
}

@test "mpi: every collective with non-contiguous datatypes, blocking and non-blocking, gaps kept" {
    run_prog coll_dtypes 1 2 4 16
}

@test "mpi: threads of a rank create, use and free datatypes and ops at once (MPI_THREAD_MULTIPLE)" {
    run_prog type_threads 1 2 4
}

@test "mpi: datatype constructors, envelopes, Pack/Unpack, external32, error classes" {
    run_prog datatypes_api 1 2 4 16
}

@test "mpi: persistent requests, inactive requests, Isendrecv(_replace), PROC_NULL and zero counts" {
    run_prog persistent 1 2 4 16
}

@test "mpi: persistent collectives (every *_init, Start, Startall)" {
    run_prog persistent_coll 1 2 4 16
}

@test "mpi: persistent collectives made and freed in a loop, on the world and on freed duplicates, leave the job host's threads as they were" {
    run_prog persistent_coll_free 2 4
}

@test "mpi: persistent collectives started in different orders on different members match by their *_init order, on intra- and inter-communicators and neighbourhoods" {
    run_prog persistent_coll_order 2 3 4 16
}

@test "mpi: MPI_THREAD_MULTIPLE: threads of a rank in Sendrecv, ANY_SOURCE receives, matched probes, Iallreduce, Waitany/Testsome, Comm_dup at once" {
    run_prog thread_multiple 1 2 4 16
}

@test "mpi: buffered mode: attached buffer with MPI_BSEND_OVERHEAD, MPI_ERR_BUFFER, detach waits; buffers per communicator and session, automatic, flushes" {
    run_prog bsend 1 2 4 16
}

@test "mpi: matched probe (Mprobe, Improbe, Mrecv, Imrecv, MPI_MESSAGE_NO_PROC)" {
    run_prog mprobe 1 2 4 16
}

@test "mpi: generalized requests, Request_get_status, status setters, cancel of unmatched sends" {
    run_prog grequest 1 2 4 16
}

@test "mpi: Barrier, Bcast, Reduce, Allreduce, Comm_split" {
    run_prog collectives 1 2 4 16
}

@test "mpi: blocking Bcast round after round: rotating roots, small and large, strided, lagging members, a small Bcast's root goes on first" {
    run_prog bcast_rounds 1 2 4 16
    SWITCHING=user run_prog bcast_rounds 3
    ARGS=early SWITCHING=kernel run_prog bcast_rounds 2 4
}

@test "mpi: every collective, user ops, non-blocking collectives, split_type" {
    run_prog coll_all 1 4 16
}

@test "mpi: non-blocking collectives progress while ranks send point-to-point" {
    run_prog nbc_progress 1 2 4 16
}

@test "mpi: every rank has private globals" {
    run_prog globals 1 2 4 16
}

# Each rank's libc process state (tests/mpi/libc_state.c): getopt, strtok, rand/random/drand48,
# the locale, the program names, tmpnam; on kernel threads and on carriers.  error() and
# warnx() name the program as a process would (its argv[0], its last component).
@test "mpi: libc state of each rank: getopt, strtok, rand, random, drand48, locale, program names, tmpnam" {
    ARGS="-v extra --level=3" run_prog libc_state 1 2 4 16
    local exe="$BATS_FILE_TMPDIR/mpi_libc_state"
    [[ "$output" == *"mpi_libc_state: warnx of rank 15"* ]] || { echo "$output"; return 1; }
    [[ "$output" == *"$exe: error of rank 15: No such file or directory"* ]] || { echo "$output"; return 1; }
    run_prog libc_state 3
    ARGS="-v extra --level=3" SWITCHING=user run_prog libc_state 3 5
}

@test "mpi: invalid arguments return error classes" {
    run_prog errors 1 2 4 16
}

@test "mpi: a collective refused by its argument check under MPI_ERRORS_RETURN takes no part: where the others made it, the refused member's next call fails out of step on every member if it differs, pairs if it is the same; no crash, no other call's buffers read" {
    run_prog coll_out_of_step 1 2 4 16
    SWITCHING=user run_prog coll_out_of_step 4
}

@test "mpi: groups, Comm_create, Comm_create_group, Comm_compare, names, split_type" {
    run_prog groups 1 2 3 4 16
}

@test "mpi: inter-communicators: create, point-to-point, every collective with MPI_ROOT and MPI_PROC_NULL, dup, split, create, merge" {
    run_prog intercomm 1 2 3 4 16
}

@test "mpi: inter-communicator non-blocking collectives and Comm_idup return at once: p2p between start and wait, any completion order, persistent forms, bad roots" {
    run_prog inter_nbc 1 2 3 4 16
}

@test "mpi: attributes and keyvals: callbacks on dup, free and MPI_Finalize, predefined attributes" {
    run_prog attrs 1 2 4 16
}

@test "mpi: error handlers, added error classes and codes, info objects and MPI_INFO_ENV" {
    run_prog errh_info 1 2 4 16
}

@test "mpi: threads of a rank create and free communicators at once (MPI_THREAD_MULTIPLE)" {
    run_prog comm_threads 1 2 4
}

@test "mpi: Comm_idup is non-blocking: crossed orders, several in flight, inherits attributes, topology, hints" {
    run_prog comm_idup 1 2 3 4 16
}

@test "mpi: the standard's letter: MPI_BOTTOM with absolute addresses, one status keeps MPI_ERROR, negative extents, attributes on predefined types, freed keyvals in use" {
    run_prog std_letter 1 2 3 4 16
    SWITCHING=user run_prog std_letter 2 5
}

@test "mpi: large-count (_c) calls: point-to-point, persistent, matched probe, Pack, type queries, reductions, RMA agree with the int forms; counts past INT_MAX in statuses" {
    run_prog large_count 1 2 3 4 16
    SWITCHING=user run_prog large_count 3
}

@test "mpi: MPI-4.1: status field accessors, Request_get_status_any/all/some leave requests alone, Type_get_value_index, hardware split types and resource info" {
    run_prog mpi41 1 2 4 16
    SWITCHING=user run_prog mpi41 3
    # two rank threads per core (on 2 cores): an inter-communicator's groups share cores
    SWITCHING=kernel LAUNCH_ARGS="--bind-to core" run_prog mpi41 4
}

@test "mpi: MPI-4.0: version 4.1, Intercomm_create_from_groups, Remove_error_class/code/string" {
    run_prog mpi4 1 2 3 4 16
}

@test "mpi: a 2-D halo exchange on a Cartesian communicator: column vectors, Neighbor_alltoallw, Jacobi sweeps" {
    run_prog halo_cart 1 2 3 4 6 16
}

@test "mpi: fence and passive epochs on one window with derived types, both window kinds" {
    run_prog rma_mixed 1 2 3 4 16
}

@test "mpi: error classes of groups, graph topologies, neighbourhood collectives, RMA with derived types" {
    run_prog error_classes 1 2 3 4 16
}

@test "mpi: a THREAD_MULTIPLE task farm: worker threads, a wildcard dispatcher, Comm_idup from threads" {
    run_prog task_farm 1 2 3 4
}

@test "mpi: ranks that start and join a thread every round, the threads exchanging in a ring" {
    run_prog thread_join 1 2 4 16
}

@test "mpi: 20000 communicators created and freed, no slowdown" {
    run_prog comm_loop 1 2 4 16
}

@test "mpi: handle and status conversion, addresses, predefined attributes and callbacks" {
    run_prog handles 1 2 4
}

@test "mpi: Cartesian topologies: Dims_create, Cart_*, Topo_test, reorder, error classes" {
    run_prog topo_cart 1 2 4 16
}

@test "mpi: graph topologies: ring and star, Graph_*, Graph_map, reorder, error classes" {
    run_prog topo_graph 1 2 3 4 16
}

@test "mpi: distributed graphs: created adjacent and from edges named anywhere, weights, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY, error classes" {
    run_prog topo_dist 1 2 3 4 16
}

@test "mpi: neighbourhood collectives (blocking, non-blocking, persistent) on Cartesian, graph and distributed graph communicators" {
    run_prog topo_neighbor 1 2 3 4 16
}

@test "mpi: a 16-rank token ring finishes" {
    run_prog ring 1 2 16
}

# With more ranks than CPUs the agent runs ranks on carrier threads (rank_switching auto): the
# tests above cover that at 16 ranks on small machines; these force each way for everyone.
@test "mpi: ranks sharing carrier threads: polling loops, a blocked rank beside a busy one, MPI_Initialized, errno" {
    run_prog carriers 1 2 3 4 16
    SWITCHING=user run_prog carriers 2 3
    SWITCHING=kernel run_prog carriers 4
    # each placement of the ranks on their carriers (tmpid.conf carrier_placement)
    LAUNCH_ARGS="-x TMPI_CARRIER_PLACEMENT=block" SWITCHING=user run_prog carriers 3 4
    LAUNCH_ARGS="-x TMPI_CARRIER_PLACEMENT=cyclic" SWITCHING=user run_prog carriers 3 4
}

@test "mpi: point-to-point and collectives with rank_switching forced to user and to kernel" {
    SWITCHING=user run_prog p2p_order 2 3 5
    SWITCHING=user run_prog nonblocking 3
    SWITCHING=user run_prog coll_all 3 5
    SWITCHING=user run_prog topo_neighbor 3 16
    # mains that join their MPI_THREAD_MULTIPLE workers park, not their carrier (carrier_join.h)
    SWITCHING=user run_prog thread_multiple 4 5
    SWITCHING=user run_prog task_farm 4 8
    # joins parked in a loop, the threads' ends and messages their only wake-ups (carrier.c)
    SWITCHING=user run_prog thread_join 2 4 5
    SWITCHING=kernel run_prog p2p_order 16
    SWITCHING=kernel run_prog coll_all 16
}

# docs/USER.md "What a rank shares with the other ranks of its node": every rank's own
# environment, MPI rank variables, directory, umask, CPUs and pid, with a thread per rank and
# on carriers; bound to cores, each rank counts the hardware threads of one core.
@test "mpi: each rank has its own process state: environment, rank variables, cwd, umask, CPUs, pid" {
    run_prog rank_process 1 2 4
    ARGS=carried SWITCHING=user run_prog rank_process 2 3
    LAUNCH_ARGS="--bind-to core" ARGS="carried bound" SWITCHING=user run_prog rank_process 3
    LAUNCH_ARGS="--bind-to core" ARGS=bound run_prog rank_process 2
    local pus r
    pus=$(hwloc-calc -N pu core:0 2>/dev/null || echo 1)
    for r in 0 1; do
        grep -qx "rank $r cpus $pus" <<<"$output" ||
            { echo "--bind-to core: expected 'rank $r cpus $pus' in:"; echo "$output"; return 1; }
    done
}

@test "mpi: a program with thread-local variables keeps one thread per rank under auto" {
    local exe="$BATS_FILE_TMPDIR/mpi_tls"
    printf '%s\n' '#include <mpi.h>' '#include <stdio.h>' 'static __thread int mine;' \
        'int main(int c, char **v) { MPI_Init(&c, &v); int r, bad = 0, any;' \
        '  MPI_Comm_rank(MPI_COMM_WORLD, &r); mine = r; MPI_Barrier(MPI_COMM_WORLD);' \
        '  bad = mine != r; MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);' \
        '  if (r == 0) puts(any ? "SHARED" : "OK"); MPI_Finalize(); return 0; }' > "$exe.c"
    "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$exe.c"
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -n 16 "$exe"
    [ "$status" -eq 0 ]
    [ "${lines[${#lines[@]}-1]}" = "OK" ] || { echo "$output"; return 1; }
}

# auto keeps a thread per rank up to kernel_ranks_per_cpu ranks a CPU (tmpid.conf(5), default
# 4): a rank on a thread of its own has a pid of its own, carried ranks share the job host's
# (rank_process.c).  The agent's key and the job's TMPI_KERNEL_RANKS_PER_CPU each take effect.
pids_prog() {
    local exe="$BATS_FILE_TMPDIR/mpi_pids"
    printf '%s\n' '#include <mpi.h>' '#include <stdio.h>' '#include <unistd.h>' \
        'int main(int c, char **v) { MPI_Init(&c, &v); int p = getpid(), lo, hi;' \
        '  MPI_Allreduce(&p, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);' \
        '  MPI_Allreduce(&p, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); int r;' \
        '  MPI_Comm_rank(MPI_COMM_WORLD, &r); if (r == 0) puts(lo == hi ? "carried" : "threads");' \
        '  MPI_Finalize(); return 0; }' >"$exe.c"
    [ -x "$exe" ] || "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$exe.c"
    echo "$exe"
}

# expect_switching WANT N [tmpi-launch options...]
expect_switching() {
    local want=$1 n=$2
    shift 2
    run timeout 120 "$TMPI_BUILD/launcher/tmpi-launch" "$@" -n "$n" "$(pids_prog)"
    [ "$status" -eq 0 ] && [ "${lines[${#lines[@]}-1]}" = "$want" ] || {
        echo "$* -n $n: expected $want, status $status: $output"
        return 1
    }
}

@test "mpi: auto gives a thread per rank up to kernel_ranks_per_cpu ranks a CPU, carriers beyond" {
    local cpus n
    cpus=$(getconf _NPROCESSORS_ONLN)
    n=$((cpus * 2))
    expect_switching threads "$n"                       # 2 a CPU: threads under the default (4)
    expect_switching carried $((cpus * 4 + 1))          # beyond 4 a CPU: carriers
    expect_switching carried "$n" -x TMPI_KERNEL_RANKS_PER_CPU=1
    expect_switching threads $((cpus * 8)) -x TMPI_KERNEL_RANKS_PER_CPU=8
    local conf="$BATS_TEST_TMPDIR/tmpid.conf"
    printf '[mpi]\nkernel_ranks_per_cpu = 1\n' >"$conf"
    start_agent kr --config "$conf"
    expect_switching carried "$n" --agent "$AGENT_SOCK"
    # the job's variable wins over the agent's key
    expect_switching threads "$n" --agent "$AGENT_SOCK" -x TMPI_KERNEL_RANKS_PER_CPU=2
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_KERNEL_RANKS_PER_CPU=0 -n "$n" "$(pids_prog)"
    [ "$status" -ne 0 ]
    [[ "$output" == *'TMPI_KERNEL_RANKS_PER_CPU="0": expected 1 to 1024'* ]] || {
        echo "$output"
        return 1
    }
    # refused also when the job forces a mode, where the number would not be used
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_RANK_SWITCHING=kernel \
        -x TMPI_KERNEL_RANKS_PER_CPU=x -n 2 "$(pids_prog)"
    [ "$status" -ne 0 ]
    [[ "$output" == *'TMPI_KERNEL_RANKS_PER_CPU="x": expected 1 to 1024'* ]] || {
        echo "$output"
        return 1
    }
}

@test "mpi: a bad TMPI_RANK_SWITCHING fails the job with a clear message" {
    local exe="$BATS_FILE_TMPDIR/mpi_nop"
    printf '%s\n' '#include <mpi.h>' \
        'int main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }' > "$exe.c"
    "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$exe.c"
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_RANK_SWITCHING=fibers -n 4 "$exe"
    [ "$status" -ne 0 ]
    [[ "$output" == *'TMPI_RANK_SWITCHING="fibers": expected auto, kernel or user'* ]] || {
        echo "$output"
        return 1
    }
}

# Twice as many ranks as CPUs on carriers: with cyclic placement the pairs (i, i + n/2) share a
# carrier, and a wake-up between ranks of one carrier takes no slow path (wait.c).
# The counts are a property of the schedule: under a sanitizer (TMPI_TIMEOUT_MULTIPLIER above 1)
# every call is 5-15 times slower, the carriers' stuck-rank rule moves ranks that merely look
# stuck, and the counts say nothing; there the programs still run both placements to the end.
@test "mpi: pairs i, i + n/2 on one carrier wake each other without the slow path" {
    local n=$(($(getconf _NPROCESSORS_ONLN) * 2)) few=few many=many
    if [ "${TMPI_TIMEOUT_MULTIPLIER:-1}" -gt 1 ]; then few=any many=any; fi
    LAUNCH_ARGS="-x TMPI_CARRIER_PLACEMENT=cyclic" ARGS=$few SWITCHING=user run_prog carrier_wakes "$n"
    [ "$n" -gt 2 ] || return 0 # one carrier: every placement shares it
    ARGS=$many SWITCHING=user run_prog carrier_wakes "$n" # block, the default: split
}

@test "mpi: a bad TMPI_CARRIER_PLACEMENT fails the job with a clear message" {
    local exe="$BATS_FILE_TMPDIR/mpi_nop"
    printf '%s\n' '#include <mpi.h>' \
        'int main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }' > "$exe.c"
    "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$exe.c"
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -x TMPI_RANK_SWITCHING=user \
        -x TMPI_CARRIER_PLACEMENT=scattered -n 4 "$exe"
    [ "$status" -ne 0 ]
    [[ "$output" == *'TMPI_CARRIER_PLACEMENT="scattered": expected block or cyclic'* ]] || {
        echo "$output"
        return 1
    }
}

@test "mpi: an invalid rank with the default handler fails the job with a clear message" {
    local exe="$BATS_FILE_TMPDIR/mpi_fatal"
    printf '%s\n' '#include <mpi.h>' \
        'int main(int c, char **v) { MPI_Init(&c, &v); int x = 0;' \
        '  MPI_Send(&x, 1, MPI_INT, 99, 0, MPI_COMM_WORLD); MPI_Finalize(); return 0; }' \
        > "$BATS_FILE_TMPDIR/mpi_fatal.c"
    "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$BATS_FILE_TMPDIR/mpi_fatal.c"
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -n 2 "$exe"
    [ "$status" -ne 0 ]
    [[ "$output" == *"MPI_Send: invalid rank 99 (MPI_ERR_RANK)"* ]]
}

# The agent must run a program with the libtmpi of the build under test.  Under a TSan agent,
# another build's (uninstrumented) libtmpi makes every message look like a data race.
@test "mpi: a program runs with this build's libtmpi" {
    local exe="$BATS_FILE_TMPDIR/mpi_whichlib"
    printf '%s\n' '#include <mpi.h>' '#include <stdio.h>' '#include <string.h>' \
        'int main(int c, char **v) { MPI_Init(&c, &v); char l[4096];' \
        '  FILE *f = fopen("/proc/self/maps", "r");' \
        '  while (f && fgets(l, sizeof l, f)) if (strstr(l, "/libtmpi.so")) { fputs(strchr(l, 47), stdout); break; }' \
        '  if (f) fclose(f); MPI_Finalize(); return 0; }' > "$exe.c"
    "$TMPI_BUILD/launcher/tmpicc" -o "$exe" "$exe.c"
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -n 1 "$exe"
    [ "$status" -eq 0 ]
    [[ "$output" == "$(cd "$TMPI_BUILD/libclient" && pwd -P)/libtmpi.so"* ]] || {
        echo "libtmpi loaded: $output"
        return 1
    }
}

@test "mpi: one-sided communication on every kind of window" {
    run_prog rma_basic 1 2 4 16
}

@test "mpi: concurrent accumulates checked element by element, long transfers" {
    run_prog rma_acc 1 2 4 16
}

@test "mpi: one-sided calls with derived datatypes on origin, result and target" {
    run_prog rma_dtypes 1 2 4 16
}

@test "mpi: accumulates on the padded pair types (MPI_DOUBLE_INT ...) through derived datatypes, packed without padding" {
    run_prog rma_pairs 1 2 4
}

@test "mpi: every misuse of the one-sided calls returns its error class" {
    run_prog rma_errors 1 2 4 16
}

@test "mpi: one-sided calls on MPI_PROC_NULL do nothing in every synchronisation mode" {
    run_prog rma_null 1 2 4
}

@test "mpi: passive target: flushes complete while the target computes" {
    run_prog rma_passive 2 4 16
}

@test "mpi: Put, flush, Get back and compare, round after round, in one passive epoch" {
    run_prog rma_steady 1 2 4 16
}

@test "mpi: sessions: process sets, communicators from their groups, several sessions with MPI_Init between, error handlers" {
    run_prog sessions 1 2 4 16
    SWITCHING=user run_prog sessions 5
    ARGS=only run_prog sessions 1 3
}

@test "mpi: a rank that leaves with its session open fails the job, naming MPI_Session_finalize" {
    run_prog sessions 1 # builds it
    run timeout 60 "$TMPI_BUILD/launcher/tmpi-launch" -n 3 "$BATS_FILE_TMPDIR/mpi_sessions" leave
    [ "$status" -ne 0 ]
    [[ "$output" == *"rank 1 exited without calling MPI_Finalize (or MPI_Session_finalize"* ]] || {
        echo "status $status, output: $output"
        return 1
    }
}

@test "mpi: MPI_T: init before MPI_Init, every control variable, a collective counter through a handle, categories, enumerations, events, error codes" {
    run_prog mpit 1 2 4 16
    SWITCHING=user run_prog mpit 5
}

@test "mpi: process management without other jobs: no parent, MPI_UNIVERSE_SIZE and MPI_APPNUM, Comm_disconnect of intra- and inter-communicators, its errors" {
    run_prog dynproc 1 2 4 16
}

@test "mpi: MPI-IO: open errors, file handlers, hints, views, explicit/individual/shared/ordered access, read past the end, non-blocking, split collective, atomic mode, external32 and a user datarep" {
    run_prog io_file 1 2 4 16
    SWITCHING=user run_prog io_file 2 5
}

@test "mpi: MPI-IO large-count _c forms: every data-access form beside its int twin, get_type_extent_c, a count above INT_MAX, negative counts" {
    run_prog io_large_count 1 3 4
    SWITCHING=user run_prog io_large_count 4
}

@test "mpi: MPI-IO collective: two-phase with many rounds, interleaved strided views and memory, holes, zero counts, collective read past the end, collective buffering on and off, empty filetypes of ranks without data" {
    run_prog io_coll 1 2 4 16
    SWITCHING=user run_prog io_coll 3
}

# On 4 ranks over 2 carriers every carrier holds a rank blocked opening a FIFO: only a blocked
# open that leaves its carrier (libclient/io/io_pool.h) lets the FIFOs' writer run.
@test "mpi: MPI-IO's long file system calls leave a carried rank's carrier: FIFO opens on every carrier, errors of moved calls (/dev/full), bad TMPI_IO_THREADS / TMPI_IO_OFFLOAD_MIN" {
    LAUNCH_ARGS="--timeout 60" SWITCHING=user run_prog io_pool 1 4 5
    LAUNCH_ARGS="--timeout 60" run_prog io_pool 1 2 4
}

# A 1 MiB tmpfs fills up: MPI_ERR_NO_SPACE (collective and independent writes, preallocate),
# and every round written before it reads back.
@test "mpi: MPI-IO on a full file system: MPI_ERR_NO_SPACE, nothing written before is lost" {
    [ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
    local d="$BATS_TEST_TMPDIR/full"
    mkdir -p "$d"
    mount -t tmpfs -o size=1m tmpfs "$d" || skip "cannot mount a tmpfs here"
    ARGS="$d" run_prog io_coll 1 4
    local rc=$?
    umount "$d"
    return $rc
}

# A tmpfs holding a file, remounted read-only: opening to write or create and deleting are
# MPI_ERR_READ_ONLY, the file reads back whole.
@test "mpi: MPI-IO on a read-only file system: MPI_ERR_READ_ONLY, the file intact" {
    [ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
    local d="$BATS_TEST_TMPDIR/ro"
    mkdir -p "$d"
    mount -t tmpfs -o size=1m tmpfs "$d" || skip "cannot mount a tmpfs here"
    python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("=1024i", *range(1024)))' \
        >"$d/ro.dat"
    mount -o remount,ro "$d" || { umount "$d"; skip "cannot remount read-only"; }
    ARGS="$d" run_prog io_file 1 4
    local rc=$?
    umount "$d"
    return $rc
}
