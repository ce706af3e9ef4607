#!/usr/bin/env bats
# MPMD: "tmpi-launch -n 2 ./a : -n 3 ./b" runs one MPI_COMM_WORLD of 5 ranks, ranks 0-1
# running a and 2-4 running b, with MPI_APPNUM 0 and 1; per-program arguments, -x, -env and
# -wdir; on one agent and across 3 agents; errors that say what is wrong.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    unset SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE SLURM_NTASKS TMPI_TEST_VAR
    # two program files with different contents, so the agent holds two programs
    A="$BATS_TEST_TMPDIR/prog_a" B="$BATS_TEST_TMPDIR/prog_b"
    tmpicc -o "$A" "$TMPI_SRC/tests/bats/progs/mpmd_info.c"
    tmpicc -DMPMD_SECOND_PROGRAM -o "$B" "$TMPI_SRC/tests/bats/progs/mpmd_info.c"
    cmp -s "$A" "$B" && { echo "the two programs must differ" >&2; return 1; }
    return 0
}

teardown() {
    stop_cluster
    stop_all_agents
}

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

# expect_ranks FIRST LAST LABEL SIZE APPNUM: every rank in FIRST..LAST printed its line.
expect_ranks() {
    local r
    for ((r = $1; r <= $2; r++)); do
        grep -q "^$3 rank $r of $4 appnum $5 " <<<"$output" ||
            { echo "expected '$3 rank $r of $4 appnum $5' in:" >&2; echo "$output" >&2; return 1; }
    done
}

@test "mpmd: -n 2 a : -n 3 b is one world of 5, MPI_APPNUM 0 and 1 (one agent)" {
    start_agent a
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 2 "$A" first : -n 3 "$B" second
    expect_status 0
    expect_ranks 0 1 first 5 0
    expect_ranks 2 4 second 5 1
    [ "$(grep -c ' rank ' <<<"$output")" -eq 5 ] || { echo "$output"; false; }
    # each program file is held once by the agent, and a second run needs no upload
    run --separate-stderr launch --agent "$AGENT_SOCK" -n 1 "$B" x : -n 1 "$A" y : -n 1 "$B" z
    expect_status 0
    expect_ranks 0 0 x 3 0
    expect_ranks 1 1 y 3 1
    expect_ranks 2 2 z 3 2
}

@test "mpmd: per-program -x, -env and -wdir; the job's -x reaches every program" {
    start_agent a
    local d1="$BATS_TEST_TMPDIR/d1" d2="$BATS_TEST_TMPDIR/d2"
    mkdir -p "$d1" "$d2"
    run --separate-stderr launch --agent "$AGENT_SOCK" -x TMPI_TEST_VAR=job -wdir "$d1" -n 1 "$A" a \
        : -n 2 -wdir "$d2" -x TMPI_TEST_VAR=second "$B" b : -n 1 -env TMPI_TEST_VAR third "$A" c
    expect_status 0
    expect_line "a rank 0 of 4 appnum 0 wd $d1"
    expect_line "a rank 0 env TMPI_TEST_VAR=job"
    expect_line "b rank 1 of 4 appnum 1 wd $d2"
    expect_line "b rank 2 env TMPI_TEST_VAR=second"
    expect_line "c rank 3 of 4 appnum 2 wd $d1"
    expect_line "c rank 3 env TMPI_TEST_VAR=third"
}

# bats test_tags=multinode
@test "mpmd: one world across 3 agents, programs split over nodes" {
    start_cluster 3
    run --separate-stderr launch --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" \
        -n 2 "$A" first : -n 3 "$B" second
    expect_status 0
    expect_ranks 0 1 first 5 0
    expect_ranks 2 4 second 5 1
    # round robin: every node runs ranks of both programs
    run --separate-stderr launch --agent "${CLUSTER_SOCKS[0]}" --hostfile "$CLUSTER_HOSTFILE" \
        --map-by node -n 3 "$B" one : -n 3 "$A" two
    expect_status 0
    expect_ranks 0 2 one 6 0
    expect_ranks 3 5 two 6 1
}

@test "mpmd: command-line errors name the program and the option" {
    usage_error "program 2 ($B): the number of ranks is missing: -n N" -n 1 "$A" : "$B"
    usage_error "no program after ':' (program 2)" -n 1 "$A" :
    usage_error "no program after ':' (program 2)" -n 1 "$A" : : -n 1 "$B"
    usage_error "--tag-output after ':' (program 2): only -n, -x, -env and -wdir" \
        -n 1 "$A" : -n 1 --tag-output "$B"
    usage_error "the number of ranks of the first program is missing: -n N" "$A" : -n 1 "$B"
    usage_error "-n 0: the number of ranks must be a whole number >= 1" -n 1 "$A" : -n 0 "$B"
    usage_error "-env 1X: not a valid variable name" -n 1 "$A" : -n 1 -env 1X v "$B"
    usage_error "-env needs VAR and VALUE" -n 1 "$A" : -n 1 -env ONLY
    usage_error "nope: No such file or directory" -n 1 "$A" : -n 1 ./nope
}

@test "mpmd: --app FILE runs one program per line, as ':' does, with quoted words and comments" {
    start_agent a
    local f="$BATS_TEST_TMPDIR/appfile" d="$BATS_TEST_TMPDIR/d"
    mkdir -p "$d"
    cat >"$f" <<APP
# Open MPI's appfile: one program per line
-np 2 $A 'the first'

   -n 3 -x TMPI_TEST_VAR=from_file -wdir $d "$B" second   # comment after the words
APP
    run --separate-stderr launch --agent "$AGENT_SOCK" --tag-output --app "$f"
    expect_status 0
    output=$(sed 's/^\[[0-9]*\] //' <<<"$output")
    expect_ranks 0 1 "the first" 5 0
    expect_ranks 2 4 second 5 1
    expect_line "second rank 2 of 5 appnum 1 wd $d"
    expect_line "second rank 4 env TMPI_TEST_VAR=from_file"
    [ "$(grep -c 'env TMPI_TEST_VAR' <<<"$output")" -eq 3 ] || { echo "$output" >&2; false; }
}

@test "mpmd: --app FILE errors name the file and the line" {
    local f="$BATS_TEST_TMPDIR/appfile"
    printf -- '-n 1 %s\n-n 1 --host a %s\n' "$A" "$B" >"$f"
    usage_error "$f:2: --host: only -n, -x, -env and -wdir may be given per program" --app "$f"
    printf -- '-n 1 %s "open\n-n 1 %s : -n 1 %s\n' "$A" "$A" "$B" >"$f"
    run --separate-stderr launch --app "$f"
    expect_status 2
    [[ "$stderr" == *"$f:1: a quote is not closed"*"$f:2: ':' separates programs on the command line"* ]] ||
        { echo "got: $stderr" >&2; false; }
    printf -- '-n 1\n' >"$f"
    usage_error "$f:1: no program after the options" --app "$f"
    printf -- '# only\n%s x\n' "$A" >"$f"
    usage_error "$f:2: $A: the number of ranks is missing: -n N" --app "$f"
    printf -- '-n 0 %s\n' "$A" >"$f"
    usage_error "(on line 1 of --app $f)" --app "$f"
    printf -- '# nothing\n\n' >"$f"
    usage_error "--app $f: no program in the file" --app "$f"
    printf -- '-n 1 %s\n' "$A" >"$f"
    usage_error "--app $f: the programs come from the file; give none on the command line" \
        --app "$f" "$A"
    usage_error "--app $f: -n and -env go on the program's line of the file" -n 2 --app "$f"
    usage_error "--app given twice" --app "$f" --app "$f"
    usage_error "--app $BATS_TEST_TMPDIR/none: No such file or directory" --app "$BATS_TEST_TMPDIR/none"
    # LAUNCH_APPFILE_MAX_BYTES: 1 MiB is read, one byte more is refused
    { printf -- '-n 1 %s ' "$A"; head -c $((1048576 - ${#A} - 7)) /dev/zero | tr '\0' x; echo; } >"$f"
    [ "$(stat -c %s "$f")" -eq 1048576 ]
    run --separate-stderr launch --app "$f" --display-map
    expect_status 0
    echo x >>"$f"
    usage_error "--app $f: larger than 1048576 bytes" --app "$f"
}

@test "mpmd: an agent that does not know apps refuses the job instead of running one program" {
    # What an older agent sees: a submission without a program.  The new agent's validator
    # must say the same thing about a submission that names a program AND apps.
    start_agent a
    run python3 - "$AGENT_SOCK" <<'PY'
import socket, struct, sys
def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])
def fv(num, v): return varint(num << 3) + varint(v)
def fb(num, b):
    b = b.encode() if isinstance(b, str) else b
    return varint(num << 3 | 2) + varint(len(b)) + b
app = fv(1, 1) + fb(2, b"\x11" * 32) + fv(3, 100) + fb(4, "./a")
sub = fv(1, 1) + fb(2, b"\x22" * 32) + fv(3, 100) + fb(4, "./b") + fb(6, "/tmp") + fb(12, app)
env = fb(1, sub)
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(struct.pack(">I", len(env)) + env)
data = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    data += d
print(data)
PY
    [[ "$output" == *"a job of several programs names them in apps only"* ]] || { echo "got: $output"; false; }
}
