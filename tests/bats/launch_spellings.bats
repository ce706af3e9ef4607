#!/usr/bin/env bats
# tmpi-launch accepts the usual Open MPI and Hydra spellings: -N/--npernode/-ppn and
# --map-by ppr:K:node, -genv/-genvlist, -wdir/--wdir, --output-filename, MPIEXEC_TIMEOUT,
# --bind-to/-bind-to and --report-bindings; unknown options and bad values are errors that say
# what is wrong (MPMD: launch_mpmd.bats; what binding does: binding.bats).

bats_require_minimum_version 1.5.0
load helpers

setup() {
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID MPIEXEC_TIMEOUT
}

teardown() { stop_all_agents; }

usage_error() {
    local msg=$1
    shift
    run --separate-stderr launch "$@"
    expect_status 2
    if [[ "$stderr" != *"$msg"* ]]; then
        echo "expected a message containing: $msg" >&2
        echo "got: $stderr" >&2
        return 1
    fi
}

@test "launch: -N, --npernode, -ppn and --map-by ppr:K:node place like --ppn" {
    local want
    want=$(launch -n 5 -H a:4,b:4,c:4 --ppn 2 --display-map)
    [ -n "$want" ]
    local spelling
    for spelling in "-N 2" "--npernode 2" "--npernode=2" "-ppn 2" "--map-by ppr:2:node"; do
        # shellcheck disable=SC2086
        run --separate-stderr launch -n 5 -H a:4,b:4,c:4 $spelling --display-map
        expect_status 0
        [ "$output" = "$want" ] || { echo "$spelling: expected $want, got $output" >&2; return 1; }
    done
    usage_error "--map-by ppr:0:node: must be ppr:K:node" -n 2 --map-by ppr:0:node --display-map
    usage_error "--map-by ppr:2:socket: must be ppr:K:node" -n 2 --map-by ppr:2:socket --display-map
    usage_error "-N needs the number of ranks per node" -n 2 -N
}

@test "launch: -genv and -genvlist set the ranks' environment" {
    need_agent
    local app
    app=$(prog args)
    # Ranks see only forwarded variables (tmpi-launch(1), "Environment of the ranks").
    FWD_A=one FWD_B=two TMPI_TEST_SHOW=G1,FWD_A,FWD_B run --separate-stderr launch -n 2 -x TMPI_TEST_SHOW \
        -genv G1 "a value" -genvlist FWD_A,FWD_B "$app"
    expect_status 0
    expect_line "env G1=a value"
    expect_line "env FWD_A=one"
    expect_line "env FWD_B=two"
    usage_error "-genv needs VAR and VALUE" -n 1 -genv ONLY
    usage_error "-genv 1X: not a valid variable name" -n 1 -genv 1X v "$app"
    unset FWD_NOT_SET
    usage_error "-genvlist: FWD_NOT_SET is not set here" -n 1 -genvlist FWD_NOT_SET "$app"
}

@test "launch (fake agent): -wdir and --wdir are sent as the ranks' directory, made absolute" {
    start_fake_agent f
    run launch --agent "$AGENT_SOCK" -n 1 -wdir /srv/data "$(prog args)" cwd
    expect_status 0
    expect_output_line "cwd=/srv/data"
    cd "$BATS_TEST_TMPDIR"
    run launch --agent "$AGENT_SOCK" -n 1 --wdir=sub "$(prog args)" cwd
    expect_output_line "cwd=$BATS_TEST_TMPDIR/sub"
    run launch --agent "$AGENT_SOCK" -n 1 "$(prog args)" cwd
    expect_output_line "cwd=$BATS_TEST_TMPDIR"
    usage_error "-wdir needs a directory" -n 1 -wdir
}

expect_output_line() {
    [ "$output" = "$1" ] || { echo "expected: $1; got: $output" >&2; return 1; }
}

@test "launch (fake agent): MPIEXEC_TIMEOUT is the default --timeout" {
    start_fake_agent f
    MPIEXEC_TIMEOUT=17 run launch --agent "$AGENT_SOCK" -n 1 "$(prog args)" timeout
    expect_status 0
    expect_output_line "timeout=17"
    MPIEXEC_TIMEOUT=17 run launch --agent "$AGENT_SOCK" -n 1 --timeout 5 "$(prog args)" timeout
    expect_output_line "timeout=5"
    MPIEXEC_TIMEOUT=soon usage_error "MPIEXEC_TIMEOUT=soon: not a whole number of seconds" \
        -n 1 "$(prog args)"
}

@test "launch (fake agent): --bind-to and --report-bindings reach the agent in every spelling" {
    start_fake_agent f
    local app spelling want
    app=$(prog args)
    run launch --agent "$AGENT_SOCK" -n 1 "$app" bind
    expect_status 0
    expect_output_line "bind_to=0 report_bindings=0"
    # tmpi.BindTo: none 1, hwthread 2, core 3, l3cache 4, numa 5, package 6 (socket too)
    for spelling in "--bind-to none:1" "--bind-to=hwthread:2" "-bind-to core:3" \
        "--bind-to l3cache:4" "--bind-to numa:5" "--bind-to socket:6" "--bind-to package:6" \
        "--bind-to core:overload-allowed:3" "-bind-to numa:if-supported:5"; do
        want=${spelling##*:}
        # shellcheck disable=SC2086
        run launch --agent "$AGENT_SOCK" -n 1 ${spelling%:*} --report-bindings "$app" bind
        expect_status 0
        expect_output_line "bind_to=$want report_bindings=1"
    done
}

@test "launch: bad --bind-to values are refused, naming the option and the value" {
    local app
    app=$(prog args)
    usage_error "--bind-to sideways: must be core, hwthread, l3cache, numa, socket, package or none" \
        -n 1 --bind-to sideways "$app"
    usage_error "-bind-to core:loose: must be core" -n 1 -bind-to core:loose "$app"
    usage_error "--bind-to : must be core" -n 1 --bind-to= "$app"
    usage_error "--bind-to needs core, hwthread" -n 1 --bind-to
    usage_error "--bind-to after ':' (program 2)" -n 1 "$app" : -n 1 --bind-to core "$app"
}

@test "launch: MPIEXEC_TIMEOUT ends a job that runs on" {
    need_agent
    local app
    app=$(prog sleeper)
    MPIEXEC_TIMEOUT=1 run --separate-stderr timeout 60 "$LAUNCH_BIN" -n 2 "$app"
    # the job never ends by itself: only the timeout can end it, with --timeout's status
    expect_status 124
}

@test "launch: --output-filename writes DIR/1/rank.N/stdout and stderr" {
    need_agent
    local d="$BATS_TEST_TMPDIR/out" r
    run --separate-stderr launch -n 3 --output-filename "$d" "$(prog output)"
    expect_status 0
    [ -z "$output" ] || { echo "output reached the terminal: $output" >&2; return 1; }
    for r in 0 1 2; do
        [ -d "$d/1/rank.$r" ] || { echo "no $d/1/rank.$r; have: $(find "$d")" >&2; return 1; }
    done
    # every rank's stdout file holds only that rank's lines
    local f
    for f in "$d"/1/rank.*/stdout; do
        r=${f%/stdout}
        r=${r##*rank.}
        if grep -v "$r" "$f" | grep -q .; then
            echo "$f holds another rank's lines:" >&2
            cat "$f" >&2
            return 1
        fi
    done
    usage_error "--output-filename needs a directory" -n 1 --output-filename
}

@test "launch: unknown options are errors that name them, also after ':'" {
    local app
    app=$(prog args)
    usage_error "--oversubscribe after ':' (program 2): only -n, -x, -env and -wdir" \
        -n 1 "$app" : -n 1 --oversubscribe "$app"
    usage_error "unknown option --bind-to-everything" -n 1 --bind-to-everything "$app"
    usage_error "unknown option -genvall" -n 1 -genvall "$app"
}
