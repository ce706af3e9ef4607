#!/usr/bin/env bats
# tools/layer-check: every #include "..." of agent/, libclient/, launcher/ and proto/ against the
# may-use list (docs/layers.conf).  The planted cases run on a copy of the sources, outside git.

bats_require_minimum_version 1.5.0
load helpers

setup() {
    copy="$BATS_TEST_TMPDIR/src"
    mkdir -p "$copy/docs" "$copy/tools"
    (cd "$TMPI_SRC" && git ls-files agent libclient launcher proto | grep -E '\.[ch]$' |
        tar -cf - -T -) | tar -xf - -C "$copy"
    cp "$TMPI_SRC/docs/layers.conf" "$copy/docs/"
    cp "$TMPI_SRC/tools/layer-check" "$copy/tools/"
}

@test "layer-check: the tree keeps to its may-use list" {
    run -0 "$TMPI_SRC/tools/layer-check"
}

@test "layer-check: a copy outside git, or inside another work tree's ignored build directory, passes as the tree does" {
    run -0 "$copy/tools/layer-check" --root "$copy"
    # packaging/build-deb.sh copies the tree under the build directory, which git ignores
    inside="$TMPI_BUILD/layer-check-copy.$$"
    rm -rf "$inside" && cp -r "$copy" "$inside"
    run "$inside/tools/layer-check" --root "$inside"
    rm -rf "$inside"
    [ "$status" -eq 0 ] || { echo "$output"; false; }
}

@test "layer-check: a planted include against the list fails naming both folders" {
    # the network device may not use the agent struct
    sed -i '0,/#include "pool.h"/s//#include "pool.h"\n#include "agent.h"/' "$copy/agent/netd/pool.c"
    grep -q '#include "agent.h"' "$copy/agent/netd/pool.c"
    run -1 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'agent/netd/pool.c:'*'#include "agent.h": agent/netd may not use agent/jobs'* ]]
    # and in libtmpi: the process state may not use the MPI functions' layer
    sed -i '0,/#include "pool.h"/s/#include "agent.h"//' "$copy/agent/netd/pool.c"
    printf '#include "greq.h"\n' >>"$copy/libclient/core/request.c"
    run -1 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'libclient/core/request.c:'*'libclient/core may not use libclient/mpi'* ]]
}

@test "layer-check: tmpid keeps no include against its list: the agent's jobs/ includes nothing of the job host's host/" {
    # issue 32: the agent's side of a job and the job host's are two folders, one way
    run -1 grep -E '^pending agent/' "$TMPI_SRC/docs/layers.conf"
    printf '#include "rank.h"\n' >>"$copy/agent/jobs/job.c"
    run -1 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'agent/jobs/job.c:'*'agent/jobs may not use agent/host'* ]]
}

@test "layer-check: libtmpi's folders keep no pending include (a cycle broken stays broken)" {
    run grep -n '^pending libclient/' "$TMPI_SRC/docs/layers.conf"
    [ "$status" -eq 1 ] || { echo "against the graph again: $output"; false; }
}

@test "layer-check: a cycle in the may-use list itself is refused" {
    sed -i 's|^proto/wire:$|proto/wire: proto/svc|' "$copy/docs/layers.conf"
    run -2 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'cycle: '*'proto/svc -> proto/wire -> proto/svc'* || "$output" == *'cycle: '*'proto/wire -> proto/svc -> proto/wire'* ]]
}

@test "layer-check: a pending include that is gone must leave the list, an unlisted folder fails" {
    echo 'pending agent/netd/pool.c agent/daemon/agent.h' >>"$copy/docs/layers.conf"
    run -1 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'pending agent/netd/pool.c agent/daemon/agent.h is no longer needed'* ]]
    sed -i '$d' "$copy/docs/layers.conf"
    mkdir "$copy/agent/newfolder" && echo 'int x;' >"$copy/agent/newfolder/x.c"
    run -1 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'its folder agent/newfolder is not in docs/layers.conf'* ]]
    echo 'agent/daemon: agent/nowhere' >"$copy/docs/layers.conf"
    run -2 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'agent/daemon may use agent/nowhere, which the list does not name'* ]]
}

@test "layer-check: the build runs it, and the stamp it leaves goes with a wrong include" {
    # make builds the check by default (meson.build), so a wrong include fails the build
    run -0 ninja -C "$TMPI_BUILD" -t query layer-check.stamp
    [[ "$output" == *'input: CUSTOM_COMMAND'* ]]
    [[ "$(ninja -C "$TMPI_BUILD" -t targets all)" == *'layer-check.stamp'* ]]
    run -0 "$copy/tools/layer-check" --root "$copy" --stamp "$copy/stamp" --depfile "$copy/dep"
    [ -s "$copy/stamp" ]
    grep -q "$copy/agent/netd/pool.h" "$copy/dep"
    grep -q "$copy/docs/layers.conf" "$copy/dep"
    printf '#include "agent.h"\n' >>"$copy/agent/netd/pool.c"
    run -1 "$copy/tools/layer-check" --root "$copy" --stamp "$copy/stamp" --depfile "$copy/dep"
    [[ "$output" == *'agent/netd may not use agent/jobs'* ]]
    [ ! -e "$copy/stamp" ]
}

# compile_planted SRC COPY: compile COPY with the build's own command for SRC (its include
# directories), writing the object under the test's directory.
compile_planted() {
    local cmd
    cmd=$(python3 - "$TMPI_BUILD/compile_commands.json" "$1" "$2" "$BATS_TEST_TMPDIR/o.o" <<'PY'
import json, shlex, sys
db, src, copy, obj = sys.argv[1:]
for e in json.load(open(db)):
    if e["file"].endswith("/" + src):
        a = shlex.split(e["command"])
        out, skip = [], 0
        for w in a:
            if skip:
                skip -= 1
                continue
            if w in ("-MQ", "-MF", "-o"):
                skip = 1
                continue
            if w == "-MD":
                continue
            out.append(w)
        out[-1] = copy
        print("cd " + shlex.quote(e["directory"]) + " && " + shlex.join(out + ["-o", obj]))
        break
PY
    )
    [ -n "$cmd" ] || { echo "no compile command for $1"; return 1; }
    sh -c "$cmd"
}

@test "layer-check: each folder compiles seeing only the folders it may use; a planted wrong include fails the compile and the check names both folders" {
    [ -f "$TMPI_BUILD/compile_commands.json" ] || skip "no compile_commands.json in $TMPI_BUILD"
    # as the tree has it, the file compiles with its folder's include directories
    run -0 compile_planted agent/netd/pool.c "$copy/agent/netd/pool.c"
    sed -i '0,/#include "pool.h"/s//#include "pool.h"\n#include "agent.h"/' "$copy/agent/netd/pool.c"
    run compile_planted agent/netd/pool.c "$copy/agent/netd/pool.c"
    [ "$status" -ne 0 ]
    [[ "$output" == *'agent.h: No such file'* ]]
    run -1 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'agent/netd may not use agent/jobs'* ]]
    # libtmpi too: the entry point every executable exports may not see the process state
    run -0 compile_planted libclient/module/main_export.c "$copy/libclient/module/main_export.c"
    printf '#include "job.h"\n' >>"$copy/libclient/module/main_export.c"
    run compile_planted libclient/module/main_export.c "$copy/libclient/module/main_export.c"
    [ "$status" -ne 0 ]
    [[ "$output" == *'job.h: No such file'* ]]
    run -1 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'libclient/module may not use libclient/core'* ]]
}

@test "layer-check --includes: a folder's compile sees its own folder, the ones it may use and those its pending includes reach" {
    run -0 "$TMPI_SRC/tools/layer-check" --includes agent
    grep -qx 'netd base netd ../proto/coll ../proto/control ../proto/svc ../proto/wire' <<<"$output"
    grep -qx 'base base ../proto/coll ../proto/control ../proto/svc ../proto/wire' <<<"$output"
    # a pending include widens its folder's set: netd's compile sees the agent struct with it
    echo 'pending agent/netd/pool.c agent/daemon/agent.h' >>"$copy/docs/layers.conf"
    run -0 "$copy/tools/layer-check" --root "$copy" --includes agent
    grep -qx 'netd .* daemon .*' <<<"$output"
    run -2 "$TMPI_SRC/tools/layer-check" --includes nosuch
    [[ "$output" == *'no folder of nosuch'* ]]
}

@test "layer-check --docs: ARCHITECTURE.md names every .c file once, in its folder's block; a missing, a doubled or a misplaced row fails" {
    run -0 "$TMPI_SRC/tools/layer-check" --docs
    cp "$TMPI_SRC/docs/ARCHITECTURE.md" "$copy/docs/"
    run -0 "$copy/tools/layer-check" --root "$copy" --docs
    # a new file without its row
    printf '/* x.c */\n' >"$copy/agent/netd/netd_extra.c"
    run -1 "$copy/tools/layer-check" --root "$copy" --docs
    [[ "$output" == *"agent/netd/netd_extra.c: no row in "*"(in the block of agent/netd/)"* ]] || { echo "$output"; false; }
    rm "$copy/agent/netd/netd_extra.c"
    # a row twice
    grep -m1 '^| `netd/pool.c`' "$copy/docs/ARCHITECTURE.md" >"$BATS_TEST_TMPDIR/row"
    [ -s "$BATS_TEST_TMPDIR/row" ]
    sed -i "/^\*\*\`agent\/base\/\`\*\*/r $BATS_TEST_TMPDIR/row" "$copy/docs/ARCHITECTURE.md"
    run -1 "$copy/tools/layer-check" --root "$copy" --docs
    [[ "$output" == *"agent/netd/pool.c: 2 rows in "* ]] || { echo "$output"; false; }
    # only in another folder's block
    sed -i '0,/^| `netd\/pool.c`/{/^| `netd\/pool.c`/d}' "$copy/docs/ARCHITECTURE.md"
    run -1 "$copy/tools/layer-check" --root "$copy" --docs
    [[ "$output" == *"agent/netd/pool.c: its row ("*") is not in the block of agent/netd/"* ]] || { echo "$output"; false; }
}

@test "layer-check --docs: ARCHITECTURE.md shows each folder's may-use list as layers.conf has it; a stale, a missing or a doubled line fails" {
    cp "$TMPI_SRC/docs/ARCHITECTURE.md" "$copy/docs/"
    run -0 "$copy/tools/layer-check" --root "$copy" --docs
    # the list grows an edge the page does not show
    sed -i 's|^libclient/coll_base: libclient/comm |libclient/coll_base: libclient/intra libclient/comm |' "$copy/docs/layers.conf"
    run -0 "$copy/tools/layer-check" --root "$copy"
    run -1 "$copy/tools/layer-check" --root "$copy" --docs
    [[ "$output" == *"libclient/coll_base/ may use, by the list: also libclient/intra"* ]] || { echo "$output"; false; }
    cp "$TMPI_SRC/docs/layers.conf" "$copy/docs/"
    # the page names an edge the list does not have
    sed -i 's|^\*\*`libclient/coll_base/`\*\* may use: |&`libclient/mpi`, |' "$copy/docs/ARCHITECTURE.md"
    run -1 "$copy/tools/layer-check" --root "$copy" --docs
    [[ "$output" == *"libclient/coll_base/ may use, by the list: not libclient/mpi"* ]] || { echo "$output"; false; }
    # a folder of the list without its line, and a line twice (the second segment of a line too)
    cp "$TMPI_SRC/docs/ARCHITECTURE.md" "$copy/docs/"
    sed -i 's|^\*\*`libclient/coll_base/`\*\* may use: |**`libclient/coll_baseline/`** may use: |' "$copy/docs/ARCHITECTURE.md"
    run -1 "$copy/tools/layer-check" --root "$copy" --docs
    [[ "$output" == *"no may-use line for libclient/coll_base/"* ]] || { echo "$output"; false; }
    [[ "$output" == *"libclient/coll_baseline/ is not in the may-use list"* ]] || { echo "$output"; false; }
    cp "$TMPI_SRC/docs/ARCHITECTURE.md" "$copy/docs/"
    sed -i 's|^\(\*\*`agent/netd/`\*\* may use: .*\)$|\1; **`agent/base/`**: `proto/wire`|' "$copy/docs/ARCHITECTURE.md"
    run -1 "$copy/tools/layer-check" --root "$copy" --docs
    [[ "$output" == *"agent/base/ has a may-use line already"* ]] || { echo "$output"; false; }
}
