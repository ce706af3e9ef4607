#!/usr/bin/env bats
# tmpi-launch accepts the usual Open MPI and Hydra spellings: -N/--npernode/-ppn and
# --map-by ppr:K:node (with and without -n), -genv/-genvlist, -wdir/--wdir, --output-filename,
# MPIEXEC_TIMEOUT, --bind-to/-bind-to and --report-bindings, --mca (ignored with a warning),
# --allow-run-as-root, -f/-machinefile/-hostfile, -host/-hosts, -l/-prepend-rank,
# --merge-stderr-to-stdout, --timestamp-output, -V; hosts that do not resolve or are not this
# machine; unknown options and bad values are errors that say what is wrong (MPMD and --app:
# launch_mpmd.bats; what binding does: binding.bats).

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

# --- the spellings of scripts written for Open MPI's mpirun and MPICH's mpiexec ---------------

@test "launch (fake agent): --mca, -mca and --gmca are ignored with one warning each naming the parameter" {
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" --mca btl tcp,self -mca pml ob1 \
        --gmca btl_tcp_if_include eth0 -n 1 "$(prog args)" args
    expect_status 0
    [[ "$output" == "rank 0/1 name="* ]] || { echo "the job did not run: $output" >&2; return 1; }
    local want
    want="tmpi-launch: warning: --mca btl tcp,self: Open MPI's MCA parameters do not apply to TMPI; ignored
tmpi-launch: warning: -mca pml ob1: Open MPI's MCA parameters do not apply to TMPI; ignored
tmpi-launch: warning: --gmca btl_tcp_if_include eth0: Open MPI's MCA parameters do not apply to TMPI; ignored"
    [ "$stderr" = "$want" ] || { echo "expected: $want"$'\n'"got: $stderr" >&2; return 1; }
    usage_error "--mca needs a parameter name and a value" -n 1 --mca btl
}

@test "launch (fake agent): --allow-run-as-root is accepted without a word" {
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" --allow-run-as-root -n 1 "$(prog args)" args
    expect_status 0
    [[ "$output" == "rank 0/1 name="* ]] || { echo "the job did not run: $output" >&2; return 1; }
    [ -z "$stderr" ] || { echo "expected nothing on stderr, got: $stderr" >&2; return 1; }
}

@test "launch: -f, -machinefile, --machinefile and -hostfile read a host file as --hostfile; -host and -hosts are -H" {
    unset SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS
    local f="$BATS_TEST_TMPDIR/machines" want spelling
    printf 'a:2\nb slots=2\n' >"$f"
    want=$(launch -n 3 --hostfile "$f" --display-map)
    [ -n "$want" ]
    for spelling in "-f" "-machinefile" "--machinefile" "-hostfile"; do
        run --separate-stderr launch -n 3 "$spelling" "$f" --display-map
        expect_status 0
        [ "$output" = "$want" ] || { echo "$spelling: expected $want, got $output" >&2; return 1; }
    done
    run --separate-stderr launch -n 3 --machinefile="$f" --display-map
    [ "$output" = "$want" ] || { echo "--machinefile=: expected $want, got $output" >&2; return 1; }
    want=$(launch -n 3 -H a:2,b:2 --display-map)
    for spelling in "-host" "-hosts"; do
        run --separate-stderr launch -n 3 "$spelling" a:2,b:2 --display-map
        expect_status 0
        [ "$output" = "$want" ] || { echo "$spelling: expected $want, got $output" >&2; return 1; }
    done
    usage_error "-f needs a file name" -n 1 -f
    usage_error "--hostfile given twice" -n 1 -f "$f" -machinefile "$f" --display-map
}

@test "launch (fake agent): -l, -prepend-rank and --prepend-rank prefix lines with \"[RANK] \", as Hydra does" {
    start_fake_agent f
    local spelling
    for spelling in -l -prepend-rank --prepend-rank; do
        run --separate-stderr launch --agent "$AGENT_SOCK" "$spelling" -n 2 "$(prog args)" output
        expect_status 0
        [ "$output" = $'[0] out 0\n[1] b\n[0] ac\n[1] tail' ] ||
            { echo "$spelling: got $output" >&2; return 1; }
        [ "$stderr" = "[1] err 1" ] || { echo "$spelling: stderr $stderr" >&2; return 1; }
    done
}

@test "launch (fake agent): --merge-stderr-to-stdout writes the ranks' stderr to stdout, in order" {
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" --merge-stderr-to-stdout -n 2 \
        "$(prog args)" output
    expect_status 0
    [ "$output" = $'out 0\nerr 1\nab\nc\ntail' ] || { echo "got $output" >&2; return 1; }
    [ -z "$stderr" ] || { echo "expected nothing on stderr, got: $stderr" >&2; return 1; }
    # tagged: a rank's stderr and stdout lines are one stream, so "b" follows "err 1"
    run --separate-stderr launch --agent "$AGENT_SOCK" --merge-stderr-to-stdout --tag-output \
        -n 2 "$(prog args)" output
    [ "$output" = $'[0] out 0\n[1] err 1\n[1] b\n[0] ac\n[1] tail' ] ||
        { echo "tagged: got $output" >&2; return 1; }
    [ -z "$stderr" ]
}

# check_stamped LINES WANT: every line is "DATE REST" with DATE in ctime's layout and within a
# minute of now, and the RESTs are WANT.
check_stamped() {
    local line stamp rest now t rests=""
    now=$(date +%s)
    while IFS= read -r line; do
        [[ "$line" =~ ^([A-Z][a-z]{2}\ [A-Z][a-z]{2}\ [\ 0-9][0-9]\ [0-9]{2}:[0-9]{2}:[0-9]{2}\ [0-9]{4})\ (.*)$ ]] ||
            { echo "not timestamped: '$line'" >&2; return 1; }
        stamp=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
        t=$(date -d "$stamp" +%s) || { echo "not a date: '$stamp'" >&2; return 1; }
        ((t <= now + 1 && t >= now - 60)) || { echo "'$stamp' is not now" >&2; return 1; }
        rests+="$rest"$'\n'
    done <<<"$1"
    [ "$rests" = "$2"$'\n' ] || { echo "expected lines: $2"$'\n'"got: $rests" >&2; return 1; }
}

@test "launch (fake agent): --timestamp-output puts the time before every line, before the rank tag" {
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" --timestamp-output -n 2 "$(prog args)" output
    expect_status 0
    check_stamped "$output" $'out 0\nb\nac\ntail'
    check_stamped "$stderr" "err 1"
    run --separate-stderr launch --agent "$AGENT_SOCK" --timestamp-output -l -n 2 "$(prog args)" output
    expect_status 0
    check_stamped "$output" $'[0] out 0\n[1] b\n[0] ac\n[1] tail'
    check_stamped "$stderr" "[1] err 1"
}

@test "launch: -V prints the version as --version does" {
    local want
    want=$(launch --version)
    [[ "$want" == "tmpi-launch (TMPI) "* ]]
    run launch -V
    expect_status 0
    [ "$output" = "$want" ]
}

@test "launch: -N, --npernode, -ppn and --map-by ppr:K:node without -n put K ranks on every node" {
    unset SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS
    local want spelling
    want=$(launch -n 6 -H a:4,b:4,c:4 --ppn 2 --display-map)
    for spelling in "-N 2" "--npernode 2" "-ppn 2" "--ppn=2" "--map-by ppr:2:node"; do
        # shellcheck disable=SC2086
        run --separate-stderr launch -H a:4,b:4,c:4 $spelling --display-map
        expect_status 0
        [ "$output" = "$want" ] || { echo "$spelling: expected $want, got $output" >&2; return 1; }
    done
    # without hosts: K ranks on the local agent
    run --separate-stderr launch -N 3 --display-map
    expect_status 0
    [ "$output" = "$(launch -n 3 --display-map)" ] || { echo "got $output" >&2; return 1; }
    # -n still wins; the first program of several still needs its -n
    run --separate-stderr launch -n 3 -N 2 -H a:4,b:4,c:4 --display-map
    [ "$(grep -c '^rank ' <<<"$output")" -eq 3 ]
    usage_error "the number of ranks of the first program is missing: -n N" \
        -N 2 "$(prog args)" : -n 1 "$(prog args)"
    usage_error "not enough slots: --ppn 2 puts 2 ranks on a:7470, which has 1 slot" \
        -N 2 -H a,b --display-map
}

@test "launch (fake agent): -N K without -n runs K ranks per node" {
    unset SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" -N 3 "$(prog args)" args
    expect_status 0
    [ "$(grep -c '^rank [0-2]/3 name=' <<<"$output")" -eq 3 ] || { echo "$output" >&2; return 1; }
}

@test "launch: a host file or -H naming a host that does not resolve fails naming it, before any agent" {
    unset SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS
    local f="$BATS_TEST_TMPDIR/hosts" app
    app=$(prog args)
    # one host only: it used to run on this machine without a word
    printf 'nosuchhost.invalid slots=2\n' >"$f"
    run --separate-stderr launch -n 2 --hostfile "$f" "$app"
    expect_status 1
    [ "$stderr" = "tmpi-launch: --hostfile $f: host nosuchhost.invalid does not resolve: Name or service not known" ] ||
        { echo "got: $stderr" >&2; return 1; }
    [ -z "$output" ]
    # every bad host the job uses is named, in one round; a host that gets no rank is not used
    run --separate-stderr launch -n 3 -H localhost,nosuchhost.invalid,other.invalid,unused.invalid "$app"
    expect_status 1
    [[ "$stderr" == *"-H: host nosuchhost.invalid does not resolve"*"-H: host other.invalid does not resolve"* ]] ||
        { echo "got: $stderr" >&2; return 1; }
    [[ "$stderr" != *localhost* && "$stderr" != *unused* ]]
    # --display-map places without looking hosts up
    run --separate-stderr launch -n 2 --hostfile "$f" --display-map
    expect_status 0
}

@test "launch: a lone host that is not this machine's default agent needs the local agent's mesh, naming the host" {
    unset SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS
    local f="$BATS_TEST_TMPDIR/hosts" app
    app=$(prog args)
    # 192.0.2.1 (TEST-NET-1) resolves as an address and is no interface of this machine
    run --separate-stderr launch -n 1 -H 192.0.2.1 "$app"
    expect_status 1
    [[ "$stderr" == "tmpi-launch: a job on 192.0.2.1:7470 (not this machine's default agent) needs a running tmpid with a mesh here"* ]] ||
        { echo "got: $stderr" >&2; return 1; }
    # this machine, but another agent's port
    printf '127.0.0.1 slots=2 port=1\n' >"$f"
    run --separate-stderr launch -n 1 --hostfile "$f" "$app"
    expect_status 1
    [[ "$stderr" == "tmpi-launch: a job on 127.0.0.1:1 (not this machine's default agent)"* ]] ||
        { echo "got: $stderr" >&2; return 1; }
}
