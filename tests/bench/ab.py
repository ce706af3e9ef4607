#!/usr/bin/env python3
"""Two TMPI builds side by side in one run: the speed rows a change must not make worse.

    tests/bench/ab.py --before DIR --after DIR [--runs N] [--quick] [--rows all|net]

DIR is a build directory (meson's, holding launcher/ and agent/) of any TMPI revision, e.g. a
worktree of the commit before a change built with `make`.  Every program is compiled from this
tree's tests/bench sources by each build's own tmpicc, so only the runtime differs.  Each build
gets its own private agent and its own two keyed loopback agents (a job of 2 nodes x 1 rank
runs TCP between them).  Rounds alternate before, after, before, ... with a memory-copy probe
(memprobe.c) before each round; every figure is reported as the median per build and machine
state, with the ratio after / before (below 1: after is faster).

Rows: ping-pong latency and bandwidth on one node and across two agents (8 B, 1 KiB, 64 KiB, 1 MiB,
4 MiB), one-sided communication across two agents (rma.c, Win_allocate: Put 8 B and 1 MiB with
flush, Fetch_and_op with flush, in a passive epoch), and the wall time of a hello job of 64 and
4096 ranks (launcher start to exit).  --rows net keeps the rows between agents and adds
Allreduce on 3 agents x 4 ranks (coll.c, 8 B and 64 KiB): what a change of the data plane
between nodes (the transport seam, issue 36) must leave as fast as it was.
Nothing here asserts a time; the table goes to stdout (markdown).
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the bench driver's agents, runner and probe)
import report  # noqa: E402  (its machine-state split)

SIZES = [8, 1024, 65536, 1048576, 4194304]
HELLO_RANKS = [64, 4096]


class Side:
    """One build: its compiled programs, its private agent and its two-agent cluster."""

    def __init__(self, name, build, workdir):
        self.name = name
        self.build = os.path.abspath(build)
        self.bindir = tempfile.mkdtemp(prefix=name + ".bin.", dir=workdir)
        cc = os.path.join(self.build, "launcher", "tmpicc")
        for prog in ["pingpong", "hello", "rma", "coll"]:
            run.sh([cc] + run.CFLAGS + ["-I", run.HERE, "-o", os.path.join(self.bindir, prog),
                                        os.path.join(run.HERE, prog + ".c"), "-lm"])
        self.agent = run.Agent(self.build, workdir, name)
        self.cluster = run.Cluster(self.build, workdir, 3)

    def launch(self, n, prog, args, net=False, nodes=2):
        cmd = [os.path.join(self.build, "launcher", "tmpi-launch")]
        if net:
            ppn = n // nodes
            cmd += ["--agent", self.cluster.sock, "--hostfile", self.cluster.hostfile(nodes, ppn),
                    "--ppn", str(ppn)]
        else:
            cmd += ["--agent", self.agent.sock]
        return cmd + ["-n", str(n), os.path.join(self.bindir, prog)] + [str(a) for a in args]

    def stop(self):
        self.cluster.stop()
        self.agent.stop()


def one_round(side, T, values, state, rows):
    def add(key, v):
        values.setdefault((side.name, key, state), []).append(v)

    for net in (False, True) if rows == "all" else (True,):
        rc, so, se, _ = run.run_cmd(side.launch(2, "pingpong", ["-t", T]), 180) if not net else \
            run.run_cmd(side.launch(2, "pingpong", ["-t", T], net=True), 180)
        if rc != 0:
            raise run.Failure(f"{side.name} pingpong (net={net}) failed: {se[-500:]}")
        for r in run.parse_results(so):
            if int(r["size"]) in SIZES:
                where = "2 agents" if net else "one node"
                add(("pingpong us", where, int(r["size"])), r["usec"])
    rc, so, se, _ = run.run_cmd(side.launch(2, "rma", ["-t", T, "-w", "allocate"], net=True), 180)
    if rc != 0:
        raise run.Failure(f"{side.name} rma across agents failed: {se[-500:]}")
    for r in run.parse_results(so):
        if r["op"] in ("put", "fop"):
            add((f"rma {r['op']}+flush us", "2 agents", int(r["size"])), r["usec"])
    if rows == "net":
        rc, so, se, _ = run.run_cmd(side.launch(12, "coll", ["-t", T, "-p", "allreduce:8,allreduce:65536"],
                                                net=True, nodes=3), 300)
        if rc != 0:
            raise run.Failure(f"{side.name} allreduce 3x4 failed: {se[-500:]}")
        for r in run.parse_results(so):
            if r.get("op") == "allreduce":
                add(("allreduce us", "3 agents x 4", int(r["size"])), r["usec"])
        return
    for n in HELLO_RANKS:
        rc, so, se, sec = run.run_cmd(side.launch(n, "hello", []), 300)
        if rc != 0:
            raise run.Failure(f"{side.name} hello -n {n} failed: {se[-500:]}")
        add(("hello s", "one node", n), sec)


def quartiles(v):
    """The middle half of a row's runs: whether two medians differ by more than the noise."""
    if len(v) < 4:
        return "-"
    q = statistics.quantiles(v, n=4)
    return f"{q[0]:.3g}-{q[2]:.3g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="shorter points")
    ap.add_argument("--rows", choices=["all", "net"], default="all",
                    help="net: only the rows between agents, with Allreduce 3 x 4")
    a = ap.parse_args()
    T = 0.03 if a.quick else 0.2
    workdir = tempfile.mkdtemp(prefix="tmpi-ab.")
    sides = []
    values, probes = {}, []
    try:
        sides = [Side("before", a.before, workdir), Side("after", a.after, workdir)]
        probe_im = run.Impls(sides[1].build, sides[1].bindir, None)
        run.sh([os.path.join(sides[1].build, "launcher", "tmpicc"), "-O2", "-o",
                os.path.join(sides[1].bindir, "memprobe"), os.path.join(run.HERE, "memprobe.c")])
        rounds = []
        for i in range(a.runs):
            for side in (sides if i % 2 == 0 else sides[::-1]):
                gbps = run.machine_probe(probe_im)
                probes.append(gbps)
                rounds.append((side, gbps))
                one_round(side, T, values, gbps, a.rows)
                run.log(f"round {i + 1}/{a.runs}: {side.name} done")
    finally:
        for s in sides:
            s.stop()
    thr = report.state_threshold([p for p in probes if p is not None])
    label = (lambda g: "one state") if thr is None else \
        (lambda g: "unknown" if g is None else ("fast" if g >= thr else "slow"))
    merged = {}
    for (name, key, g), vs in values.items():
        merged.setdefault((key, label(g)), {}).setdefault(name, []).extend(vs)
    print(f"Probes (GB/s memcpy): {', '.join(f'{p:.1f}' for p in probes if p is not None)}; "
          f"load before runs {min(x for x in run.LOADS if x is not None):.1f}-"
          f"{max(x for x in run.LOADS if x is not None):.1f}\n")
    print("| row | where | size/ranks | state | before | after | after/before | before p25-p75 | after p25-p75 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (key, st), by in sorted(merged.items(), key=lambda kv: (kv[0][0][0], kv[0][0][1], kv[0][0][2], kv[0][1])):
        if "before" not in by or "after" not in by:
            continue
        b, f = statistics.median(by["before"]), statistics.median(by["after"])
        print(f"| {key[0]} | {key[1]} | {key[2]} | {st} | {b:.3g} | {f:.3g} | {f / b:.2f} | "
              f"{quartiles(by['before'])} | {quartiles(by['after'])} |")


if __name__ == "__main__":
    main()
