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
    [[ "$output" == *'agent/netd/pool.c:'*'#include "agent.h": agent/netd may not use agent/daemon'* ]]
    # and in libtmpi: the process state may not use the MPI functions' layer
    sed -i '0,/#include "pool.h"/s/#include "agent.h"//' "$copy/agent/netd/pool.c"
    printf '#include "greq.h"\n' >>"$copy/libclient/core/job.c"
    run -1 "$copy/tools/layer-check" --root "$copy"
    [[ "$output" == *'libclient/core/job.c:'*'libclient/core may not use libclient/mpi'* ]]
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
    [[ "$output" == *'agent/netd may not use agent/daemon'* ]]
    [ ! -e "$copy/stamp" ]
}
