#!/usr/bin/env bats
# tmpi-launch --bind-to and --report-bindings (tmpi-launch(1) "Binding"): the report names
# objects of this machine, every rank's own thread has exactly the CPUs its line reports, the
# default binds to cores only when the node's ranks fit them (on carriers or not), and the same
# holds across two agents.  Option spellings and bad values: launch_spellings.bats.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID TMPI_RANK_SWITCHING
}

teardown() { stop_all_agents; }

# This machine as the agents see it (they run with our affinity).
ncores() { hwloc-calc -N core all 2>/dev/null || nproc; }

# "0-2,5" or "0,1,2,5" -> "0 1 2 5"
expand() {
    local item out=() a b i
    IFS=, read -r -a items <<<"$1"
    for item in "${items[@]}"; do
        a=${item%-*} b=${item#*-}
        for ((i = a; i <= b; i++)); do out+=("$i"); done
    done
    echo "${out[*]}"
}

fail() {
    echo "$1" >&2
    echo "stdout: $output" >&2
    echo "stderr: $stderr" >&2
    return 1
}

# report_of R: rank R's report line (exactly one) from $stderr.
report_of() {
    local l
    l=$(grep -E "^\[[^]]+:rank $1\] " <<<"$stderr") || return 1
    [ "$(wc -l <<<"$l")" -eq 1 ] || return 1
    echo "$l"
}

# affinity_of R: "LIST CPU" of rank R from $output ("rank R affinity LIST cpu C").
affinity_of() {
    local l
    l=$(grep -E "^rank $1 affinity " <<<"$output") || return 1
    set -- $l
    echo "$4 $6"
}

# check_ranks N KIND: ranks 0..N-1 each have one line "bound to KIND ..." (KIND core: a core
# of this machine, with hwloc's PUs for it; cpu: a core or one hardware thread of it) or "not
# bound" (KIND none: every CPU we have), and the CPUs the line reports are exactly the ones the
# rank's thread has, which it runs on.
check_ranks() {
    local n=$1 kind=$2 r line cpus aff cpu core cores all
    cores=$(ncores)
    all=$(expand "$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')")
    for ((r = 0; r < n; r++)); do
        line=$(report_of "$r") || fail "rank $r: no (or more than one) report line"
        [[ "$line" =~ \(cpus\ ([0-9,-]+)\) ]] || fail "rank $r: no cpus in: $line"
        cpus=$(expand "${BASH_REMATCH[1]}")
        read -r aff cpu < <(affinity_of "$r") || fail "rank $r printed no affinity"
        [ "$(expand "$aff")" = "$cpus" ] ||
            fail "rank $r: reported cpus $cpus, its thread has $(expand "$aff")"
        [[ " $cpus " == *" $cpu "* ]] || fail "rank $r runs on cpu $cpu, outside $cpus"
        case $kind in
        core | cpu)
            [[ "$line" =~ \]\ bound\ to\ core\ ([0-9]+)\[hwt\ [0-9,-]+\]:\ [][B./]+\  ]] ||
                fail "rank $r: expected 'bound to core C[hwt H]: LAYOUT', got: $line"
            core=${BASH_REMATCH[1]}
            ((core < cores)) || fail "rank $r: core $core, but this machine has $cores"
            if command -v hwloc-calc >/dev/null; then
                local want
                want=$(expand "$(hwloc-calc --physical-output --intersect pu "core:$core")")
                if [ "$kind" = core ]; then
                    [ "$want" = "$cpus" ] || fail "rank $r: core $core is PUs $want, reported $cpus"
                else
                    local c
                    for c in $cpus; do
                        [[ " $want " == *" $c "* ]] || fail "rank $r: cpu $c is not in core $core ($want)"
                    done
                fi
            fi
            ;;
        none)
            [[ "$line" =~ \]\ not\ bound:\  ]] || fail "rank $r: expected 'not bound', got: $line"
            [ "$cpus" = "$all" ] || fail "rank $r: expected every CPU ($all), has $cpus"
            ;;
        esac
    done
}

@test "binding: --bind-to core --report-bindings: one line per rank, a core each, the thread's own mask" {
    need_agent
    local n
    n=$(ncores)
    ((n > 4)) && n=4
    run --separate-stderr timeout 60 "$LAUNCH_BIN" -n "$n" --bind-to core --report-bindings \
        "$(prog affinity)"
    expect_status 0
    check_ranks "$n" core
    # ranks that fit the cores get one each
    local used
    used=$(grep -oE 'bound to core [0-9]+' <<<"$stderr" | sort -u | wc -l)
    [ "$used" -eq "$n" ] || fail "expected $n different cores, got $used"
}

@test "binding: by default ranks that fit the cores are bound, more are not, on carriers or not" {
    need_agent
    local cores
    cores=$(ncores)
    run --separate-stderr timeout 60 "$LAUNCH_BIN" -n 1 --report-bindings "$(prog affinity)"
    expect_status 0
    check_ranks 1 core
    local n=$((2 * cores + 1))
    # one thread per rank, more threads than cores: left to the kernel
    TMPI_RANK_SWITCHING=kernel run --separate-stderr timeout 60 "$LAUNCH_BIN" \
        -x TMPI_RANK_SWITCHING -n "$n" --report-bindings "$(prog affinity)"
    expect_status 0
    check_ranks "$n" none
    # the same ranks on carriers (one per CPU): oversubscribed too, so the carriers are not
    # bound either (--bind-to core binds them: the carriers test below)
    TMPI_RANK_SWITCHING=user run --separate-stderr timeout 60 "$LAUNCH_BIN" \
        -x TMPI_RANK_SWITCHING -n "$n" --report-bindings "$(prog affinity)"
    expect_status 0
    check_ranks "$n" none
}

@test "binding: the agent's bind_to is the default of launches without --bind-to" {
    need_agent
    printf '[mpi]\nbind_to = none\n' >"$BATS_TEST_TMPDIR/none.conf"
    start_agent a --config "$BATS_TEST_TMPDIR/none.conf"
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 --report-bindings \
        "$(prog affinity)"
    expect_status 0
    check_ranks 1 none
    # the launch's option wins
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 1 --bind-to core \
        --report-bindings "$(prog affinity)"
    expect_status 0
    check_ranks 1 core
}

@test "binding: --bind-to none leaves every rank thread the full mask" {
    need_agent
    run --separate-stderr timeout 60 "$LAUNCH_BIN" -n 2 --bind-to none --report-bindings \
        "$(prog affinity)"
    expect_status 0
    check_ranks 2 none
    # without --report-bindings nothing is reported, and the binding holds all the same
    run --separate-stderr timeout 60 "$LAUNCH_BIN" -n 2 --bind-to none "$(prog affinity)"
    expect_status 0
    [[ "$stderr" != *"bound"* ]] || fail "a report without --report-bindings"
    local all r aff cpu
    all=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
    for r in 0 1; do
        read -r aff cpu < <(affinity_of "$r") || fail "rank $r printed no affinity"
        local have
        have=$(expand "$aff" | wc -w)
        [ "$have" -eq "$all" ] || fail "rank $r: $have CPUs, expected all $all"
    done
}

@test "binding: other kinds name their object and bind to it" {
    need_agent
    local kind word
    for kind in hwthread:core socket:package package:package numa:numa l3cache:l3cache; do
        word=${kind#*:}
        run --separate-stderr timeout 60 "$LAUNCH_BIN" -n 2 --bind-to "${kind%:*}" \
            --report-bindings "$(prog affinity)"
        expect_status 0
        check_ranks 2 any
        # a machine without the level falls back to the enclosing one, so only where
        # hwloc sees one do we insist on its name
        if [ "$word" != core ] && hwloc-calc -N "$word" all >/dev/null 2>&1 &&
            [ "$(hwloc-calc -N "$word" all)" -gt 0 ]; then
            report_of 0 | grep -qE "bound to $word [0-9]+\[core " ||
                fail "--bind-to ${kind%:*}: expected 'bound to $word N[core ...]'"
        fi
    done
}

@test "binding: ranks on carriers: the carriers are bound, each rank reports its carrier" {
    need_agent
    local cores n
    cores=$(ncores)
    n=$((2 * cores))
    TMPI_RANK_SWITCHING=user run --separate-stderr timeout 60 "$LAUNCH_BIN" -x TMPI_RANK_SWITCHING \
        -n "$n" --bind-to core --report-bindings "$(prog affinity)"
    expect_status 0
    check_ranks "$n" core
    local r
    for ((r = 0; r < n; r++)); do
        report_of "$r" | grep -qE ' on carrier [0-9]+ of [0-9]+$' ||
            fail "rank $r: no 'on carrier C of N'"
    done
}

# bats test_tags=multinode
@test "binding: across two agents each node binds and reports its own ranks" {
    start_cluster 2
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" \
        --hostfile "$CLUSTER_HOSTFILE" -n 4 --bind-to core --report-bindings "$(prog affinity)"
    expect_status 0
    local cores
    cores=$(ncores)
    if ((cores >= 2)); then check_ranks 4 core; else check_ranks 4 any; fi
    grep -q '^\[node1:rank ' <<<"$stderr" || fail "no line from node1"
    grep -q '^\[node2:rank ' <<<"$stderr" || fail "no line from node2"
    # one rank per node: the two agents share this machine, and the second node's rank starts
    # at its global rank's core, not at core 0 like the first's
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" \
        --hostfile "$(cluster_hostfile 1)" -n 2 --report-bindings "$(prog affinity)"
    expect_status 0
    if ((cores >= 2)); then
        check_ranks 2 core
        [ "$(grep -oE 'bound to core [0-9]+' <<<"$stderr" | sort -u | wc -l)" -eq 2 ] ||
            fail "the ranks of the two nodes share a core"
    fi
}

# bats test_tags=multinode
@test "binding: a thread libtmpi starts for a pinned rank (the Ibarrier runner) is not pinned" {
    start_cluster 2
    run --separate-stderr timeout 60 "$LAUNCH_BIN" --agent "${CLUSTER_SOCKS[0]}" \
        --hostfile "$CLUSTER_HOSTFILE" -n 4 --bind-to core "$(prog runner_mask)"
    expect_status 0
    grep -qx done <<<"$output" || fail "rank 0 did not finish"
    local all n=0 list
    all=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
    while read -r list; do
        n=$((n + 1))
        [ "$(expand "$list" | wc -w)" -eq "$all" ] ||
            fail "a thread started after MPI_Ibarrier is pinned to $list (expected all $all CPUs)"
    done < <(sed -n 's/^new thread [0-9]* cpus //p' <<<"$output")
    ((n > 0)) || fail "no thread appeared after MPI_Ibarrier across nodes"
}
