#!/usr/bin/env bats
# tmpi-launch: option checking, the module check, the job protocol (against the real agent and
# against fake_agent for cases the real one cannot be made to produce), output tagging,
# signals, and the private agent's life cycle.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    # No test may reach the system agent by accident.
    export TMPI_AGENT="$BATS_TEST_TMPDIR/no-agent.sock"
    unset TMPI_TMPID
}

teardown() { stop_all_agents; }

# --- usage errors: status 2 and one clear line, before any agent is contacted -------------

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

@test "launch: usage errors exit 2 with a message" {
    local app
    app=$(prog args)
    usage_error "no program given" -n 2
    usage_error "number of ranks is missing" "$app"
    usage_error "-n needs the number of ranks" -n
    usage_error "-n x: the number of ranks must be a whole number >= 1" -n x "$app"
    usage_error "-n 0: the number of ranks must be a whole number >= 1" -n 0 "$app"
    usage_error "-n -3: the number of ranks" -n -3 "$app"
    usage_error "-n 2x: the number of ranks" -np 2x "$app"
    usage_error "unknown option --bogus" -n 2 --bogus "$app"
    usage_error "--timeout soon: not a whole number of seconds" -n 2 --timeout soon "$app"
    usage_error "--timeout -1: not a whole number" -n 2 --timeout -1 "$app"
    usage_error "--timeout needs a number of seconds" -n 2 --timeout
    usage_error "--agent needs a socket path" -n 2 --agent
}

@test "launch: -x errors exit 2" {
    local app
    app=$(prog args)
    usage_error "-x needs VAR or VAR=VALUE" -n 1 -x
    usage_error "-x 1ABC=2: not a valid variable name" -n 1 -x 1ABC=2 "$app"
    usage_error "-x =v: not a valid variable name" -n 1 -x =v "$app"
    unset TMPI_TEST_UNSET_VAR
    usage_error "-x TMPI_TEST_UNSET_VAR: the variable is not set here" -n 1 -x TMPI_TEST_UNSET_VAR "$app"
}

@test "launch: --help and --version exit 0" {
    run launch --help
    expect_status 0
    [[ "$output" == *"usage: tmpi-launch -n N"* ]]
    run launch --version
    expect_status 0
    [[ "$output" == "tmpi-launch (TMPI) "* ]]
}

@test "launch: a missing or unreadable program exits 2" {
    usage_error "$BATS_TEST_TMPDIR/none: No such file or directory" -n 2 "$BATS_TEST_TMPDIR/none"
    if [ "$(id -u)" -ne 0 ]; then
        cp "$(prog args)" "$BATS_TEST_TMPDIR/secret"
        chmod 000 "$BATS_TEST_TMPDIR/secret"
        usage_error "Permission denied" -n 2 "$BATS_TEST_TMPDIR/secret"
    fi
}

@test "launch: files that are not TMPI modules are refused" {
    local d=$BATS_TEST_TMPDIR
    echo "just text" >"$d/text"
    printf 'int main(void) { return 0; }\n' >"$d/plain.c"
    cc -o "$d/plain" "$d/plain.c"
    cc -shared -fPIC -o "$d/plain.so" "$d/plain.c"
    head -c 200 "$(prog args)" >"$d/trunc"
    # a module whose section table is cut off: the header still points past the end
    local size
    size=$(stat -c %s "$(prog args)")
    head -c $((size - 100)) "$(prog args)" >"$d/cut"
    : >"$d/empty"
    mkdir "$d/dir"
    for f in text plain plain.so trunc cut empty dir; do
        usage_error "$d/$f is not a TMPI program (build it with tmpicc" -n 2 "$d/$f"
    done
}

# A libtool build tree: ./ltprog is the wrapper script libtool writes, .libs/ltprog the program,
# linked against the uninstalled .libs/libcount.so that only the script's LD_LIBRARY_PATH finds.
@test "launch: a libtool wrapper script runs the program it wraps on every rank, with the script's LD_LIBRARY_PATH" {
    command -v libtool >/dev/null || skip "libtool is not installed (libtool-bin, tools/install-deps.sh)"
    local d=$BATS_TEST_TMPDIR/lt
    mkdir -p "$d"
    cd "$d"
    printf 'int count_twice(int x) { return 2 * x; }\n' >count.c
    cat >main.c <<'EOF2'
#include <mpi.h>
#include <stdio.h>
int count_twice(int x);
int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d of %d: %d %s\n", rank, size, count_twice(rank), argc > 1 ? argv[1] : "-");
    return MPI_Finalize();
}
EOF2
    local cc="$TMPI_BUILD/launcher/tmpicc"
    libtool --quiet --tag=CC --mode=compile "$cc" -c count.c
    libtool --quiet --tag=CC --mode=link "$cc" -o libcount.la count.lo -rpath /nonexistent/lib
    libtool --quiet --tag=CC --mode=compile "$cc" -c main.c
    libtool --quiet --tag=CC --mode=link "$cc" -o ltprog main.lo libcount.la
    head -5 ltprog | grep -q "temporary wrapper script" || skip "libtool made no wrapper script here"
    run --separate-stderr launch -n 3 ./ltprog "an arg"
    expect_status 0
    [ "$(printf '%s\n' "$output" | sort)" = "$(printf 'rank 0 of 3: 0 an arg\nrank 1 of 3: 2 an arg\nrank 2 of 3: 4 an arg')" ] ||
        { echo "output: $output / stderr: $stderr" >&2; return 1; }
    # the script found by PATH, as a build system's test driver may run it
    cd "$BATS_TEST_TMPDIR"
    PATH="$d:$PATH" run --separate-stderr launch -n 2 ltprog
    cd "$d"
    expect_status 0
    [ "${#lines[@]}" -eq 2 ] || { echo "output: $output / stderr: $stderr" >&2; return 1; }
    # a wrapper whose program is gone: the script's own error, then ours
    mv .libs/ltprog .libs/gone
    run --separate-stderr launch -n 2 ./ltprog
    expect_status 2
    [[ "$stderr" == *"./ltprog is a libtool wrapper script"*"the script failed"* ]] ||
        { echo "stderr: $stderr" >&2; return 1; }
}

@test "launch: a corrupt ELF with wild offsets is refused, not crashed on" {
    local d=$BATS_TEST_TMPDIR
    cp "$(prog args)" "$d/bad"
    # e_shoff (offset 0x28), e_shnum (0x3c) and e_shstrndx (0x3e) set to nonsense
    printf '\xff\xff\xff\xff\xff\xff\xff\x7f' | dd of="$d/bad" bs=1 seek=$((0x28)) conv=notrunc status=none
    usage_error "is not a TMPI program" -n 1 "$d/bad"
    cp "$(prog args)" "$d/bad2"
    printf '\xff\xff\xfe\xff' | dd of="$d/bad2" bs=1 seek=$((0x3c)) conv=notrunc status=none
    usage_error "is not a TMPI program" -n 1 "$d/bad2"
}

# --- programs other builds make: needs libtmpi (DT_NEEDED), another MPI, a fixed address ---

# ordinary_prog OUT [CC ARGS...]: an MPI program linked by cc with -ltmpi only (no tmpicc
# marker, no entry point), as a build system that reads no flags of ours would link it.
ordinary_prog() {
    local out=$1
    shift
    printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n' \
        >"$BATS_TEST_TMPDIR/ordinary.c"
    # --no-as-needed first: the extra libraries define nothing the program calls
    cc -I"$TMPI_SRC/libclient/include" -o "$out" -Wl,--no-as-needed "$BATS_TEST_TMPDIR/ordinary.c" \
        "$@" -L"$TMPI_BUILD/libclient" -ltmpi
}

# fake_lib SONAME: builds a library with that soname (as $BATS_TEST_TMPDIR/fake/libfake-N.so)
# and prints its path, to link a program with.
fake_lib() {
    local d="$BATS_TEST_TMPDIR/fake" n
    mkdir -p "$d"
    n=$(find "$d" -name 'libfake-*.so' | wc -l)
    printf 'int fake_lib_fn_%s(void) { return 0; }\n' "$n" >"$d/f$n.c"
    cc -shared -fPIC -Wl,-soname,"$1" -o "$d/libfake-$n.so" "$d/f$n.c"
    echo "$d/libfake-$n.so"
}

# passes_check FILE: the launcher accepted the file and went on to look for the agent.
passes_check() {
    run --separate-stderr launch --agent "$BATS_TEST_TMPDIR/dead.sock" -n 2 "$1"
    expect_status 1
    [[ "$stderr" == *"no agent at $BATS_TEST_TMPDIR/dead.sock"* ]] ||
        { echo "expected the check to pass; got: $stderr" >&2; return 1; }
}

@test "launch: a program that needs libtmpi (DT_NEEDED) is a TMPI program without the marker" {
    local d=$BATS_TEST_TMPDIR
    ordinary_prog "$d/pie"
    if readelf -S "$d/pie" | grep -qF .tmpi_module; then
        echo "the program has the marker: the test proves nothing" >&2
        return 1
    fi
    passes_check "$d/pie"
    # a tmpicc module still passes (the marker)
    passes_check "$(prog args)"
}

@test "launch: a program that needs another MPI's library is refused, naming the library" {
    local d=$BATS_TEST_TMPDIR soname
    for soname in libmpi.so.40 libmpich.so.12 libmpi.so.12 libmpi_mpifh.so.40 \
        libmpi_usempif08.so.40 libmpicxx.so.12 libmpifort.so.12 libopen-pal.so.40; do
        ordinary_prog "$d/other" "$(fake_lib "$soname")"
        usage_error "$d/other needs $soname, a library of another MPI" -n 2 "$d/other"
    done
    # a tmpicc module (with the marker) that also links one is refused too
    tmpicc -o "$d/module" "$BATS_TEST_DIRNAME/progs/args.c" -Wl,--no-as-needed "$(fake_lib libmpi.so.40)"
    usage_error "$d/module needs libmpi.so.40, a library of another MPI" -n 2 "$d/module"
    # names that only begin like one are no MPI: a profiler, mpi4py's, one of ours
    for soname in libmpiP.so.3 libmpi4py.so.1 libtmpi_extra.so.1; do
        ordinary_prog "$d/fine" "$(fake_lib "$soname")"
        passes_check "$d/fine"
    done
}

@test "launch: programs built with Open MPI's or MPICH's mpicc are refused, naming the library" {
    local d=$BATS_TEST_TMPDIR cc found=0
    printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n' \
        >"$d/other.c"
    for cc in mpicc.openmpi mpicc.mpich; do
        command -v "$cc" >/dev/null || continue
        found=1
        "$cc" -o "$d/$cc" "$d/other.c"
        run --separate-stderr launch -n 2 "$d/$cc"
        expect_status 2
        [[ "$stderr" =~ "$d/$cc needs "(libmpi|libmpich)\.so\.[0-9]+", a library of another MPI" ]] ||
            { echo "got: $stderr" >&2; return 1; }
    done
    [ "$found" -eq 1 ] || skip "neither Open MPI's nor MPICH's mpicc is installed"
}

@test "launch: a fixed-address (ET_EXEC) TMPI program is refused with how to rebuild it" {
    local d=$BATS_TEST_TMPDIR
    ordinary_prog "$d/exec" -no-pie
    readelf -h "$d/exec" | grep -q 'Type: *EXEC' || skip "cc -no-pie made no ET_EXEC here"
    usage_error "$d/exec is not position-independent" -n 2 "$d/exec"
    local advice="-fPIE and link it with -pie (CMake: -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_EXE_LINKER_FLAGS=-pie)"
    [[ "$stderr" == *"$advice"* ]] || { echo "no rebuild advice: $stderr" >&2; return 1; }
    # one that does not link TMPI at all is simply not a TMPI program
    printf 'int main(void) { return 0; }\n' >"$d/plain.c"
    cc -no-pie -o "$d/plain" "$d/plain.c"
    usage_error "$d/plain is not a TMPI program" -n 2 "$d/plain"
}

@test "launch: needed names up to MODULE_NEEDED_NAME_MAX (255) are read, a longer one is skipped" {
    local d=$BATS_TEST_TMPDIR at over
    at="libmpi.so.40.$(printf 'x%.0s' $(seq $((255 - 13))))"
    over="${at}x"
    [ "${#at}" -eq 255 ] && [ "${#over}" -eq 256 ]
    ordinary_prog "$d/at" "$(fake_lib "$at")"
    usage_error "needs $at, a library of another MPI" -n 2 "$d/at"
    ordinary_prog "$d/over" "$(fake_lib "$over")"
    passes_check "$d/over"
}

@test "launch: a corrupt dynamic section is read safely: no needed libraries, not a program" {
    local d=$BATS_TEST_TMPDIR field
    ordinary_prog "$d/pie"
    # one field of the .dynamic section header set to nonsense: the link to its string table,
    # its offset, its size
    for field in link offset size; do
        python3 "$BATS_TEST_DIRNAME/elf_shdr_set.py" "$d/pie" "$d/bad-$field" 6 "$field" 0xfffffffe
        usage_error "$d/bad-$field is not a TMPI program" -n 2 "$d/bad-$field"
    done
}

@test "launch: --agent naming a dead socket exits 1 and starts nothing" {
    run --separate-stderr launch --agent "$BATS_TEST_TMPDIR/dead.sock" -n 2 "$(prog args)"
    expect_status 1
    [[ "$stderr" == *"no agent at $BATS_TEST_TMPDIR/dead.sock"* ]]
}

# --- the protocol, against the real agent -------------------------------------------------

@test "launch: the program gets its arguments, -x variables and working directory" {
    start_agent a
    export TMPI_TEST_FWD="forwarded value"
    cd "$BATS_TEST_TMPDIR"
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 -x TMPI_TEST_SHOW=TMPI_TEST_FWD,TMPI_TEST_SET \
        -x TMPI_TEST_FWD -x TMPI_TEST_SET=a=b "$(prog args)" -n 5 "two words" --tag-output
    expect_status 0
    expect_line "argc=5"
    expect_line "arg1=-n"
    expect_line "arg2=5"
    expect_line "arg3=two words"
    expect_line "arg4=--tag-output"
    expect_line "env TMPI_TEST_FWD=forwarded value"
    expect_line "env TMPI_TEST_SET=a=b"
}

@test "launch: exit status is the failing rank's code, with the reason on stderr" {
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 3 "$(prog exit_code)" 0
    expect_status 0
    [ -z "$stderr" ]
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 3 "$(prog exit_code)" 7 2
    expect_status 7
    [[ "$stderr" == "tmpi-launch: "*"rank 2"* ]]
    # 256 truncates to 0 as an exit code: still a failure
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$(prog exit_code)" 256 1
    expect_status 1
}

@test "launch: output of every rank arrives on the right stream" {
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$(prog output)"
    expect_status 0
    for r in 0 1; do
        expect_line "out $r first"
        expect_line "out $r second"
        grep -q "last $r" <<<"$output"
        grep -qx "err $r" <<<"$stderr"
    done
}

@test "launch: --tag-output prefixes every line with its rank" {
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" --tag-output -n 3 "$(prog output)"
    expect_status 0
    for r in 0 1 2; do
        expect_line "[$r] out $r first"
        expect_line "[$r] out $r second"
        expect_line "[$r] last $r"
        grep -qxF "[$r] err $r" <<<"$stderr"
    done
    # every line carries exactly one prefix
    [ "$(grep -cv '^\[[0-9]\] [^[]*$' <<<"$output")" -eq 0 ]
}

@test "launch: SIGTERM cancels a running job, which still ends through the agent" {
    start_agent a
    local out="$BATS_TEST_TMPDIR/out" line=""
    mkfifo "$out"
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 "$(prog sleeper)" >"$out" 2>"$BATS_TEST_TMPDIR/err" &
    local pid=$!
    exec 5<"$out"
    read -r line <&5
    [ "$line" = started ]
    kill -TERM "$pid"
    local st=0
    wait "$pid" || st=$?
    exec 5<&-
    [ "$st" -eq 143 ] || { echo "expected 143, got $st"; cat "$BATS_TEST_TMPDIR/err"; false; }
    grep -q "^tmpi-launch: .*cancelled" "$BATS_TEST_TMPDIR/err"
    # the agent is still there and runs the next job
    run launch --agent "$AGENT_SOCK" -n 2 "$(prog exit_code)" 0
    expect_status 0
}

# --- private agent ---------------------------------------------------------------------------

@test "launch: without an agent a private one runs the job and is cleaned up" {
    need_agent
    export TMPDIR="$BATS_TEST_TMPDIR/tmp"
    mkdir -p "$TMPDIR"
    run --separate-stderr launch -n 2 "$(prog exit_code)" 3 1
    expect_status 3
    [ -z "$(ls -A "$TMPDIR")" ]
    if pgrep -f -- "--socket $TMPDIR/" >/dev/null; then false; fi
}

@test "launch: the private agent's life cycle (fake agent: pid and directory checked)" {
    export TMPI_TMPID=$(fake_agent_bin)
    export TMPDIR="$BATS_TEST_TMPDIR/tmp" FAKE_AGENT_PIDFILE="$BATS_TEST_TMPDIR/pid"
    mkdir -p "$TMPDIR"
    run --separate-stderr launch -n 2 "$(prog args)" args one
    expect_status 0
    expect_line "rank 1 arg 1: one"
    local pid
    pid=$(cat "$FAKE_AGENT_PIDFILE")
    if kill -0 "$pid" 2>/dev/null; then false; fi
    [ -z "$(ls -A "$TMPDIR")" ]
}

@test "launch: a private agent that fails to start is reported, exit 1" {
    export TMPI_TMPID=$(fake_agent_bin) FAKE_AGENT_FAIL_START=1
    export TMPDIR="$BATS_TEST_TMPDIR/tmp"
    mkdir -p "$TMPDIR"
    run --separate-stderr launch -n 1 "$(prog args)"
    expect_status 1
    [[ "$stderr" == *"tmpi-launch: could not start a private agent"* ]]
    [ -z "$(ls -A "$TMPDIR")" ]
    export TMPI_TMPID="$BATS_TEST_TMPDIR/no-such-tmpid"
    run --separate-stderr launch -n 1 "$(prog args)"
    expect_status 1
    [[ "$stderr" == *"could not start a private agent"* ]]
}

# --- protocol cases produced by the fake agent -----------------------------------------------

@test "launch (fake agent): the program is uploaded in chunks matching its hash" {
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 1 "$(prog args)" args
    expect_status 0
    [[ "$output" == "rank 0/1 name="*"/args cwd=$PWD" ]]
}

@test "launch (fake agent): partial lines are tagged once, at their start" {
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" --tag-output -n 2 "$(prog args)" output
    expect_status 0
    [ "$output" = $'[0] out 0\n[1] b\n[0] ac\n[1] tail' ]
    [ "$stderr" = "[1] err 1" ]
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$(prog args)" output
    [ "$output" = $'out 0\nab\nc\ntail' ]
}

@test "launch (fake agent): JobEnd status, reason and failed rank" {
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$(prog args)" exit 9 1
    expect_status 9
    [ "$stderr" = "tmpi-launch: rank 1 exited with code 9" ]
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$(prog args)" exit 512 0
    expect_status 1
}

@test "launch (fake agent): an Error reply and a lost connection exit 1" {
    start_fake_agent f
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$(prog args)" error
    expect_status 1
    [ "$stderr" = "tmpi-launch: fake agent refuses this job" ]
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$(prog args)" drop
    expect_status 1
    [ "$stderr" = "tmpi-launch: lost the connection to the agent" ]
}

@test "launch (fake agent): --timeout is passed on" {
    start_fake_agent f
    run launch --agent "$AGENT_SOCK" -n 1 --timeout=42 "$(prog args)" timeout
    expect_status 0
    [ "$output" = "timeout=42" ]
}

@test "launch (fake agent): SIGTERM sends CancelJob and the job's end decides the status" {
    start_fake_agent f
    local out="$BATS_TEST_TMPDIR/out" line=""
    mkfifo "$out"
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 "$(prog args)" wait >"$out" 2>"$BATS_TEST_TMPDIR/err" &
    local pid=$!
    exec 5<"$out"
    read -r line <&5
    [ "$line" = started ]
    kill -TERM "$pid"
    local st=0
    wait "$pid" || st=$?
    exec 5<&-
    [ "$st" -eq 143 ]
    grep -q "was cancelled" "$BATS_TEST_TMPDIR/err"
}

@test "launch (fake agent): a second SIGTERM leaves at once with 130" {
    start_fake_agent f
    local out="$BATS_TEST_TMPDIR/out" err="$BATS_TEST_TMPDIR/errfifo" line=""
    mkfifo "$out" "$err"
    "$LAUNCH_BIN" --agent "$AGENT_SOCK" -n 2 "$(prog args)" stuck >"$out" 2>"$err" &
    local pid=$!
    exec 5<"$out" 6<"$err"
    read -r line <&5
    [ "$line" = started ]
    kill -TERM "$pid"
    # Two signals sent at once may merge into one: send the second after the first was heard.
    read -r line <&6
    [[ "$line" == *"cancelling the job"* ]]
    kill -TERM "$pid"
    local st=0
    wait "$pid" || st=$?
    exec 5<&- 6<&-
    [ "$st" -eq 130 ] || { echo "expected 130, got $st"; false; }
}

@test "launch: mangled module headers never crash the ELF check" {
    local app
    app=$(prog args)
    # Random bytes over the ELF header and the section table; each copy must be either refused
    # (2) or accepted and then fail to find the dead agent (1) -- never a crash.
    python3 - "$app" "$BATS_TEST_TMPDIR/m" <<'PY'
import random, struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
shoff = struct.unpack_from("<Q", data, 0x28)[0]
rng = random.Random(1)
for i in range(150):
    d = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        region = rng.choice([(0, 64), (shoff, len(d))])
        pos = rng.randrange(region[0], region[1])
        d[pos] = rng.randrange(256)
    open("%s%d" % (sys.argv[2], i), "wb").write(d)
PY
    local i st
    for i in $(seq 0 149); do
        st=0
        launch --agent "$BATS_TEST_TMPDIR/dead.sock" -n 1 "$BATS_TEST_TMPDIR/m$i" 2>/dev/null || st=$?
        if [ "$st" -ne 1 ] && [ "$st" -ne 2 ]; then
            echo "copy $i: status $st"
            return 1
        fi
    done
}

# --- placement: host files, -H, Slurm, --ppn, --map-by, --display-map ---------------------

# No test may pick up a Slurm allocation from the shell that runs the suite.
no_slurm() { unset SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS; }

@test "launch: a bad host file exits 2 with every problem as FILE:LINE" {
    no_slurm
    local f=$BATS_TEST_TMPDIR/hosts
    cat >"$f" <<'HOSTS'
# comment
node01 slots=0
node02 slots=2 port=70000
  slots=3
node04 slots=2 junk
node05 colour=blue
good slots=2
fe80::1 slots=1
HOSTS
    run --separate-stderr launch -n 2 --hostfile "$f" "$BATS_TEST_TMPDIR/none"
    expect_status 2
    local want
    for want in "$f:2: slots=0: not a positive integer" \
        "$f:3: port=70000: not a port number (1..65535)" \
        "$f:4: empty host name: the line starts with 'slots=3'" \
        "$f:5: unexpected 'junk' (settings are KEY=VALUE)" \
        "$f:6: unknown key 'colour' (expected slots, max_slots or port)" \
        "$f:8: 'fe80::1': IPv6 addresses must be written in brackets, e.g. [fe80::1]" \
        "tmpi-launch: $f: 6 errors in the host file"; do
        if ! grep -qxF -- "$want" <<<"$stderr"; then
            echo "expected the line: $want" >&2
            echo "got: $stderr" >&2
            return 1
        fi
    done
    [ "$(wc -l <<<"$stderr")" -eq 7 ]
    [ -z "$output" ]
    usage_error "$BATS_TEST_TMPDIR/missing: No such file or directory" -n 2 \
        --hostfile "$BATS_TEST_TMPDIR/missing" --display-map
    printf '# nothing\n' >"$f"
    usage_error "$f: no hosts in the file" -n 2 --hostfile "$f" --display-map
}

@test "launch: placement options are checked, exit 2" {
    no_slurm
    local app f=$BATS_TEST_TMPDIR/hosts
    app=$(prog args)
    printf 'a slots=2\nb slots=2\n' >"$f"
    usage_error "--ppn 0: the ranks per node must be a whole number from 1 to 1048576" -n 2 --ppn 0 "$app"
    usage_error "--ppn x: the ranks per node" -n 2 --ppn x "$app"
    usage_error "--ppn needs the number of ranks per node" -n 2 --ppn
    usage_error "--map-by core: must be slot, node or ppr:K:node" -n 2 --map-by core "$app"
    usage_error "--map-by needs slot, node or ppr:K:node" -n 2 --map-by
    usage_error "--hostfile and -H cannot be used together" -n 2 --hostfile "$f" -H a "$app"
    usage_error "--hostfile given twice" -n 2 --hostfile "$f" --hostfile "$f" "$app"
    usage_error "-H given twice" -n 2 -H a -H b "$app"
    usage_error "-H needs HOST[,HOST...]" -n 2 -H
    usage_error "-H: a:0: the slots after ':' must be a positive integer" -n 2 -H a:0 "$app"
    usage_error "-H: '': empty host name" -n 2 -H a,,b "$app"
    usage_error "not enough slots: 5 ranks requested but the hosts have 4 slots (--oversubscribe allows more ranks than slots)" \
        -n 5 --hostfile "$f" "$app"
    usage_error "--ppn 2 with 6 ranks needs 3 nodes, but only 2 hosts are given" \
        -n 6 --ppn 2 --hostfile "$f" "$app"
    usage_error "--ppn 2 with 3 ranks needs 2 nodes, but no hosts are given" -n 3 --ppn 2 "$app"
    usage_error "no program given" -n 2 --hostfile "$f"
}

@test "launch: --display-map with slot mapping (the default) fills hosts in order" {
    no_slurm
    local f=$BATS_TEST_TMPDIR/hosts
    printf 'node01 slots=4\nnode02 slots=2 port=7471 # second agent\n[::1]:2\n' >"$f"
    run --separate-stderr launch -n 7 --hostfile "$f" --display-map
    expect_status 0
    # the map, then the rule of which libraries the ranks of a node share (private_libs.bats),
    # then (several nodes) what carries the links between them (multinode_ofi.bats)
    [[ "${lines[${#lines[@]}-3]}" == "libraries shared by the ranks of a node: "* ]] ||
        { echo "$output"; false; }
    [[ "${lines[${#lines[@]}-2]}" == "links between nodes: "* ]] || { echo "$output"; false; }
    output=$(printf '%s\n' "${lines[@]:0:${#lines[@]}-3}")
    [ "$output" = "node 0: node01:7470, 4 ranks: 0-3
node 1: node02:7471, 2 ranks: 4-5
node 2: [::1]:7470, 1 rank: 6
rank 0: node 0 (node01:7470), local rank 0
rank 1: node 0 (node01:7470), local rank 1
rank 2: node 0 (node01:7470), local rank 2
rank 3: node 0 (node01:7470), local rank 3
rank 4: node 1 (node02:7471), local rank 0
rank 5: node 1 (node02:7471), local rank 1
rank 6: node 2 ([::1]:7470), local rank 0" ]
    # a program may follow; it is neither checked nor run
    run --separate-stderr launch -n 2 --hostfile "$f" --map-by slot --display-map "$BATS_TEST_TMPDIR/none" x
    expect_status 0
    expect_line "node 0: node01:7470, 2 ranks: 0-1"
}

@test "launch: --display-map with node mapping deals ranks round robin" {
    no_slurm
    run --separate-stderr launch -n 5 -H a:2,b,c:3 --map-by node --display-map
    expect_status 0
    expect_line "node 0: a:7470, 2 ranks: 0,3"
    expect_line "node 1: b:7470, 1 rank: 1"
    expect_line "node 2: c:7470, 2 ranks: 2,4"
    expect_line "rank 4: node 2 (c:7470), local rank 1"
}

@test "launch: --display-map with --ppn and --oversubscribe" {
    no_slurm
    run --separate-stderr launch -n 5 -H a:4,b:4,c:4,d:4 --ppn 2 --display-map
    expect_status 0
    expect_line "node 0: a:7470, 2 ranks: 0-1"
    expect_line "node 1: b:7470, 2 ranks: 2-3"
    expect_line "node 2: c:7470, 1 rank: 4"
    [[ "$output" != *"d:7470"* ]]
    run --separate-stderr launch -n 5 -H a:4,b:4,c:4 --ppn 2 --map-by node --display-map
    expect_status 0
    expect_line "node 0: a:7470, 2 ranks: 0,3"
    expect_line "node 2: c:7470, 1 rank: 2"
    usage_error "not enough slots: --ppn 3 puts 3 ranks on a:7470, which has 1 slot" \
        -n 3 -H a,b --ppn 3 --display-map
    run --separate-stderr launch -n 3 -H a,b --ppn 3 --oversubscribe --display-map
    expect_status 0
    expect_line "node 0: a:7470, 3 ranks: 0-2"
    # -H a,a,b: a host named twice has two slots
    run --separate-stderr launch -n 3 -H a,a,b --display-map
    expect_status 0
    expect_line "node 0: a:7470, 2 ranks: 0-1"
    expect_line "node 1: b:7470, 1 rank: 2"
    # oversubscribed: each host takes its slots again per pass
    run --separate-stderr launch -n 5 -H a,a,b --oversubscribe --display-map
    expect_status 0
    expect_line "node 0: a:7470, 4 ranks: 0-3"
    expect_line "node 1: b:7470, 1 rank: 4"
    # no hosts: the local agent takes every rank
    run --separate-stderr launch -n 3 --display-map
    expect_status 0
    expect_line "node 0: local agent, 3 ranks: 0-2"
    expect_line "rank 2: node 0 (local agent), local rank 2"
}

@test "launch: a Slurm allocation gives the hosts unless --hostfile or -H is given" {
    export SLURM_JOB_NODELIST='node[01-02,10],gpu[1-2]-ib' SLURM_TASKS_PER_NODE='2(x3),1,1'
    run --separate-stderr launch -n 8 --display-map
    expect_status 0
    expect_line "node 0: node01:7470, 2 ranks: 0-1"
    expect_line "node 2: node10:7470, 2 ranks: 4-5"
    expect_line "node 3: gpu1-ib:7470, 1 rank: 6"
    expect_line "node 4: gpu2-ib:7470, 1 rank: 7"
    run --separate-stderr launch -n 8 --map-by node --display-map
    expect_status 0
    expect_line "node 0: node01:7470, 2 ranks: 0,5"
    expect_line "node 4: gpu2-ib:7470, 1 rank: 4"
    run --separate-stderr launch -n 2 -H other:2 --display-map
    expect_status 0
    expect_line "node 0: other:7470, 2 ranks: 0-1"
    usage_error "not enough slots: 9 ranks requested but the hosts have 8 slots" -n 9 --display-map
    export SLURM_TASKS_PER_NODE='2(x3)'
    usage_error "SLURM_TASKS_PER_NODE gives slots for 3 nodes but SLURM_JOB_NODELIST has 5" \
        -n 2 --display-map
    export SLURM_JOB_NODELIST='node[01-03'
    usage_error "SLURM_JOB_NODELIST: 'node[01-03': '[' without ']'" -n 2 --display-map
    # no task counts: one slot per node; node names keep their zero padding
    export SLURM_JOB_NODELIST='n[008-010]'
    unset SLURM_TASKS_PER_NODE
    run --separate-stderr launch -n 3 --display-map
    expect_status 0
    expect_line "node 0: n008:7470, 1 rank: 0"
    expect_line "node 2: n010:7470, 1 rank: 2"
}

@test "launch: without -n a Slurm allocation gives the number of ranks (SLURM_NTASKS)" {
    export SLURM_JOB_NODELIST='node[01-02]' SLURM_TASKS_PER_NODE='2(x2)' SLURM_NTASKS=3
    run --separate-stderr launch --display-map
    expect_status 0
    expect_line "node 0: node01:7470, 2 ranks: 0-1"
    expect_line "node 1: node02:7470, 1 rank: 2"
    # -n still wins
    run --separate-stderr launch -n 1 --display-map
    expect_status 0
    expect_line "node 0: node01:7470, 1 rank: 0"
    export SLURM_NTASKS=0
    usage_error "SLURM_NTASKS=0: not a number of ranks" --display-map
    export SLURM_NTASKS=4x
    usage_error "SLURM_NTASKS=4x: not a number of ranks" --display-map
    # salloc -N2 without -n: no SLURM_NTASKS; one rank per task slot, as srun
    unset SLURM_NTASKS
    run --separate-stderr launch --display-map
    expect_status 0
    expect_line "node 1: node02:7470, 2 ranks: 2-3"
    export SLURM_TASKS_PER_NODE='2(x'
    usage_error "SLURM_TASKS_PER_NODE=2(x: not a list of task counts; give -n N" --display-map
    unset SLURM_TASKS_PER_NODE
    usage_error "the number of ranks is missing: -n N (or run inside a Slurm allocation" \
        --display-map
}

@test "launch: without -n, SLURM_NTASKS runs that many ranks on the local agent" {
    no_slurm
    start_agent a
    SLURM_NTASKS=3 run --separate-stderr launch --agent "$AGENT_SOCK" "$(prog mpmd_info)"
    expect_status 0
    expect_line "app rank 2 of 3 appnum 0 wd $PWD"
}

@test "launch: a placement over several nodes needs a running agent with a mesh, exit 1" {
    no_slurm
    local app
    app=$(prog args)
    run --separate-stderr launch -n 2 -H 127.0.0.1:1,127.0.0.2:1 "$app"
    expect_status 1
    [[ "$stderr" == "tmpi-launch: a job across several nodes needs a running tmpid with a mesh (see tmpid --listen/--key-file)"* ]]
    # the program is still checked first
    echo "just text" >"$BATS_TEST_TMPDIR/text"
    run --separate-stderr launch -n 2 -H a,b "$BATS_TEST_TMPDIR/text"
    expect_status 2
}

@test "launch: a placement on one node runs as before" {
    no_slurm
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 3 -H localhost:4 --tag-output "$(prog args)" x
    expect_status 0
    expect_line "[0] argc=2"
    local f=$BATS_TEST_TMPDIR/hosts
    printf 'localhost slots=2\n' >"$f"
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 4 --hostfile "$f" --oversubscribe "$(prog args)"
    expect_status 0
    expect_line "argc=1"
}
