#!/usr/bin/env python3
"""TMPI benchmarks beside Open MPI and MPICH: build, run, report.

    tests/bench/run.py [--quick] [--runs N] [--only FIG,...] [--build DIR] [--out DIR]

`make bench` runs it (`make bench QUICK=1` adds --quick). It installs the peer MPI libraries and
gnuplot if missing (apt-get), builds every program in tests/bench/ three ways from the same
source (tmpicc, mpicc.openmpi, mpicc.mpich), runs each figure several times with the
implementations alternating run by run (TMPI, Open MPI, MPICH, TMPI, ...), and writes
docs/bench/RESULTS.md (medians, ratios, machine, versions, command lines) and PNG plots.
Raw results go to tests/bench/results/ (not committed).

Figures across nodes (`--only net`) run one keyed agent per "node" on this machine (Cluster) and
force the peers over TCP; when network namespaces are permitted, a TMPI ping-pong also runs
between two agents in two namespaces joined by a veth pair.

Emulated hosts (`--only hosts`, issue 21): network namespaces on a bridge (192.0.2.0/24), one
TMPI agent per namespace, and the peers as on a real cluster: one mpirun/mpiexec whose daemons
an ssh stand-in starts inside each namespace, shared memory inside a host and TCP across.
Ping-pong across two hosts; Allreduce 8 B and 64 KiB, Bcast and Reduce 1 MiB, Alltoall 1 KiB
on 3x1, 3x4 and 4x4. Skipped, with the reason in the report, where namespaces are not
permitted; everything made is removed afterwards.

Machine state: this VM flips between a fast and a slow state between runs (issue 21: 4 MiB
ping-pong 40 GB/s in one, 7.8 GB/s minutes later).  Before every round of a series (one run of
each job and implementation) a 1-second memory-copy probe (memprobe.c: 64 MiB buffers) measures
the copy bandwidth; every result is stored with the probe of its round, and report.py splits the
figures by state (report.state_threshold: the largest gap in the sorted probes, when the fastest
probe is at least 1.5x the slowest; otherwise one state) so that no ratio mixes the two states.

Third-party programs (`--only hpl,osu`, thirdparty.py), built as their own documentation says
from a source tree given on the command line and three ways like ours: HPL (`--hpl-src`, Debian's
OpenBLAS, 4 ranks, and 3 x 4 on emulated hosts, one BLAS thread per rank for all three), the
OSU micro-benchmarks (`--osu-src`, osu_latency and osu_bw with options) and LULESH
(`--lulesh-src`, 8 ranks, and 3 x 9 on emulated hosts). Without the tree the figure is skipped with
a note in the report; a build or run that fails is reported there too, and the other figures
still run.

Nothing here asserts on a time; a benchmark program that gets a wrong answer aborts, and the
driver then stops with an error.
"""

import argparse
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import thirdparty

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
PROGRAMS = ["pingpong", "oneway", "coll", "allreduce1000", "ring", "mm", "ge", "hello", "halo",
            "rma"]
# halo: ranks x N (an N x N block of doubles per rank; columns move as MPI_Type_vector)
HALO_RANKS = [2, 4]
HALO_SIZES = [64, 512, 2048]
# libopenblas-dev: the BLAS of the HPL figure (--hpl-src)
PACKAGES = ["openmpi-bin", "libopenmpi-dev", "mpich", "libmpich-dev", "gnuplot-nox", "libopenblas-dev"]
IMPLS = ["tmpi", "ompi", "mpich"]
# The same flags for all three builds. Hot loops are aligned to 64 bytes because otherwise where
# the linker happens to put a loop decides the figure: mm's inner loop straddled a 64-byte fetch
# block in the tmpicc build and not in the mpicc one, costing 12-15 % with identical instructions
# (2x in a 3-line kernel; docs/bench/ANALYSIS.md section 4), which measures layout, not MPI.
CFLAGS = ["-O2", "-falign-loops=64"]
LABEL = {"tmpi": "TMPI", "ompi": "Open MPI", "mpich": "MPICH"}


def log(*a):
    print("[bench]", *a, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


def out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


# ---------------------------------------------------------------------------- setup

def ensure_packages():
    missing = []
    for p in PACKAGES:
        st = out(["dpkg-query", "-W", "-f=${Status}", p])
        if "install ok installed" not in st:
            missing.append(p)
    if not missing:
        return
    log("installing", " ".join(missing))
    pre = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    sh(pre + ["apt-get", "update"], env=env)
    sh(pre + ["apt-get", "install", "-y", "--no-install-recommends"] + missing, env=env)


class Impls:
    def __init__(self, build, bindir, agent_sock):
        self.build = build
        self.bindir = bindir
        self.sock = agent_sock
        self.root = os.geteuid() == 0

    def cc(self, impl):
        return {
            "tmpi": [os.path.join(self.build, "launcher", "tmpicc")],
            "ompi": ["mpicc.openmpi"],
            "mpich": ["mpicc.mpich"],
        }[impl]

    def fc(self, impl):
        return {
            "tmpi": [os.path.join(self.build, "launcher", "tmpif90")],
            "ompi": ["mpif90.openmpi"],
            "mpich": ["mpif90.mpich"],
        }[impl]

    def cxx(self, impl):
        return {
            "tmpi": [os.path.join(self.build, "launcher", "tmpicxx")],
            "ompi": ["mpicxx.openmpi"],
            "mpich": ["mpicxx.mpich"],
        }[impl]

    def prog(self, impl, name):
        return os.path.join(self.bindir, impl, name)

    def launch(self, impl, n, prog, args=(), private=False):
        if impl == "tmpi":
            cmd = [os.path.join(self.build, "launcher", "tmpi-launch")]
            if not private:
                cmd += ["--agent", self.sock]
            cmd += ["-n", str(n), prog]
        elif impl == "ompi":
            cmd = ["mpirun.openmpi"] + (["--allow-run-as-root"] if self.root else []) + \
                  ["--oversubscribe", "-np", str(n), prog]
        else:
            cmd = ["mpiexec.mpich", "-n", str(n), prog]
        return cmd + [str(a) for a in args]


def build_programs(im, impls=IMPLS):
    probe = os.path.join(im.bindir, "memprobe")
    src = os.path.join(HERE, "memprobe.c")
    if not os.path.exists(probe) or os.path.getmtime(probe) < os.path.getmtime(src):
        os.makedirs(im.bindir, exist_ok=True)
        sh(["cc", "-O2", "-o", probe, src])
    for impl in impls:
        d = os.path.join(im.bindir, impl)
        os.makedirs(d, exist_ok=True)
        for p in PROGRAMS:
            src = os.path.join(HERE, p + ".c")
            dst = im.prog(impl, p)
            if os.path.exists(dst) and os.path.getmtime(dst) > max(
                    os.path.getmtime(src), os.path.getmtime(os.path.join(HERE, "bench.h")),
                    os.path.getmtime(__file__)):
                continue
            sh(im.cc(impl) + CFLAGS + ["-o", dst, src, "-lm"])
    log("programs built in", im.bindir)


class Agent:
    """A tmpid of our own on a private socket; readiness through --ready-fd. extra: more tmpid
    arguments (name, listen address, key file); prefix: a command to run it under (ip netns exec)."""

    def __init__(self, build, workdir, name, extra=(), prefix=()):
        self.dir = tempfile.mkdtemp(prefix=name + ".", dir=workdir)
        self.sock = os.path.join(self.dir, "tmpid.sock")
        conf = os.path.join(self.dir, "tmpid.conf")
        open(conf, "w").close()  # defaults only: no system config file
        self.log = open(os.path.join(self.dir, "tmpid.log"), "w")
        r, w = os.pipe()
        self.cmd = [os.path.join(build, "agent", "tmpid"), "--config", conf, "--socket", self.sock,
                    "--ready-fd", str(w), "--log-level", "warning"] + list(extra)
        self.proc = subprocess.Popen(list(prefix) + self.cmd, pass_fds=(w,), stdout=self.log,
                                     stderr=self.log, cwd="/")
        self.pid = self.proc.pid
        os.close(w)
        with os.fdopen(r) as f:
            line = f.readline().strip()
        if line != "READY=1":
            self.stop()
            with open(self.log.name) as f:
                tail = f.read()[-1000:]
            raise RuntimeError(f"tmpid {name} did not become ready ({self.log.name}):\n{tail}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log.closed:
            self.log.close()


def free_ports(k, host="127.0.0.1"):
    """k TCP ports the kernel had free a moment ago (bound together so they differ)."""
    socks = [socket.socket() for _ in range(k)]
    try:
        for s in socks:
            s.bind((host, 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def write_key(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(32))


class Cluster:
    """K agents node1..nodeK on one machine, each keyed and listening on its own loopback port:
    a job placed over several of them runs one agent per "node" and talks TCP between them.
    Jobs are submitted to node1. stop() ends each agent by its PID."""

    def __init__(self, build, workdir, k):
        self.dir = tempfile.mkdtemp(prefix="cluster.", dir=workdir)
        self.key = os.path.join(self.dir, "cluster.key")
        write_key(self.key)
        self.ports = free_ports(k)
        self.agents = []
        try:
            for i, port in enumerate(self.ports, 1):
                self.agents.append(Agent(build, self.dir, f"node{i}",
                                         ["--name", f"node{i}", "--listen", f"127.0.0.1:{port}",
                                          "--key-file", self.key]))
        except Exception:
            self.stop()
            raise
        self.sock = self.agents[0].sock

    def hostfile(self, nodes, slots):
        """The first `nodes` agents with `slots` slots each, node1 first; returns its path."""
        if nodes > len(self.agents):
            raise ValueError(f"cluster has {len(self.agents)} nodes, {nodes} asked")
        path = os.path.join(self.dir, f"hosts.{nodes}x{slots}")
        with open(path, "w") as f:
            for port in self.ports[:nodes]:
                f.write(f"127.0.0.1 slots={slots} port={port}\n")
        return path

    def stop(self):
        for a in reversed(self.agents):
            a.stop()
        self.agents = []


# ---------------------------------------------------------------------------- running

RESULT_RE = re.compile(r"^RESULT (.*)$", re.M)


def parse_results(text):
    res = []
    for m in RESULT_RE.finditer(text):
        d = {}
        for kv in m.group(1).split():
            k, _, v = kv.partition("=")
            try:
                d[k] = float(v) if re.match(r"^-?[0-9.eE+-]+$", v) else v
            except ValueError:
                d[k] = v
        res.append(d)
    return res


class Failure(Exception):
    pass


LOADS = []  # 1-minute load average seen before each run (the machine may be shared)
PROBES = []  # memory-copy GB/s of every machine-state probe, in order (machine_probe)
PROBE_SEC = 1.0  # how long one probe copies


def machine_probe(im):
    """The machine's memory-copy bandwidth now (GB/s, memprobe.c), or None if the probe failed:
    labels the results of the round that follows with the machine's state."""
    try:
        p = subprocess.run([os.path.join(im.bindir, "memprobe"), str(PROBE_SEC)], capture_output=True,
                           text=True, timeout=60)
        gbps = float(p.stdout.split()[1]) if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, IndexError, ValueError):
        gbps = None
    if gbps is None:
        log("machine-state probe failed: results of this round carry no state")
    else:
        PROBES.append(gbps)
        log(f"machine-state probe: {gbps:.2f} GB/s memcpy (load {loadavg()})")
    return gbps


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError):
        return None


def run_cmd(cmd, timeout, env=None):
    """Runs cmd in its own session; returns (rc or None on timeout, stdout, stderr, seconds)."""
    LOADS.append(loadavg())
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, env=env, cwd=TOP)
    try:
        so, se = p.communicate(timeout=timeout)
        return p.returncode, so, se, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the session we created for this command only
        so, se = p.communicate()
        return None, so, se, time.monotonic() - t0


class Store:
    """values[(figure, impl, key)] = [measurements]; capped[(figure, impl, key)] = cap text."""

    def __init__(self):
        self.values = {}
        self.probes = {}  # (figure, impl, key) -> memcpy GB/s before each value's round (or None)
        self.capped = {}
        self.cmds = {}
        self.runs = {}
        self.failures = []  # why a peer's job could not run (reported under the tables)

    def add(self, fig, impl, key, v, probe=None):
        self.values.setdefault((fig, impl, key), []).append(v)
        self.probes.setdefault((fig, impl, key), []).append(probe)

    def med(self, fig, impl, key):
        v = self.values.get((fig, impl, key))
        return statistics.median(v) if v else None

    def n(self, fig, impl, key):
        return len(self.values.get((fig, impl, key), []))

    def dump(self, path):
        with open(path, "w") as f:
            json.dump({"values": [[list(k), v] for k, v in self.values.items()],
                       "capped": [[list(k), v] for k, v in self.capped.items()],
                       "probes": [[list(k), v] for k, v in self.probes.items()],
                       "cmds": self.cmds, "failures": self.failures}, f, indent=1)

    def merge(self, path):
        """Takes in the figures of an earlier run's raw.json (--merge): a run stopped part way
        can be completed with --only for the figures it did not reach."""
        def tup(x):
            return tuple(tup(y) for y in x) if isinstance(x, list) else x
        with open(path) as f:
            raw = json.load(f)
        for k, v in raw["values"]:
            self.values[tup(k)] = [tuple(x) if isinstance(x, list) else x for x in v]
        for k, v in raw["capped"]:
            self.capped[tup(k)] = v
        for k, v in raw.get("probes", []):
            self.probes[tup(k)] = v
        for fig, by in raw["cmds"].items():
            self.cmds.setdefault(fig, by)
        self.failures += raw.get("failures", [])


def run_series(st, im, fig, jobs, runs, timeout, keyfn, valfn, cap_keys=None, launch=None,
               impls=IMPLS, cmd_label=None, parse=None):
    """jobs: list of (n, prog, args). Runs every job `runs` times with the implementations
    alternating (A B C A B C ...). A run that times out caps that (job, impl): it is not
    repeated, and cap_keys(n) names the points it would have produced. launch(impl, n, prog,
    args) gives the command line when it is not im.launch's (jobs across nodes); cmd_label
    files the commands under another name than fig (the layout of a job across nodes);
    parse(stdout) reads the results of a program that prints no RESULT lines (third-party
    programs: thirdparty.py)."""
    dead = set()
    for rep in range(runs):
        gbps = machine_probe(im)
        for (n, prog, args) in jobs:
            for impl in impls:
                if (n, prog, impl) in dead:
                    continue
                cmd = (launch or im.launch)(impl, n, im.prog(impl, prog), args)
                if rep == 0:
                    st.cmds.setdefault(cmd_label or fig, {}).setdefault(impl, []).append(cmd)
                rc, so, se, sec = run_cmd(cmd, timeout)
                got = (parse or parse_results)(so)
                for r in got:
                    st.add(fig, impl, keyfn(r), valfn(r), probe=gbps)
                if rc is None:
                    dead.add((n, prog, impl))
                    for k in (cap_keys(n) if cap_keys else []):
                        if st.n(fig, impl, k) == 0:
                            st.capped[(fig, impl, k)] = timeout
                    log(f"{fig}: {LABEL[impl]} n={n} timed out after {timeout} s (capped)")
                    continue
                if rc != 0 and impl != "tmpi" and "VALIDATION FAILED" not in se:
                    # A peer that cannot run the job at all (Open MPI 4.1 refuses Win_create
                    # over its TCP transport) is a fact to report, not a reason to lose the
                    # rest of the run; a wrong answer still stops everything.
                    dead.add((n, prog, impl))
                    for k in (cap_keys(n) if cap_keys else [r_key for (f_, i_, r_key) in st.values
                                                            if f_ == fig and i_ == "tmpi"]):
                        if st.n(fig, impl, k) == 0:
                            st.capped[(fig, impl, k)] = "failed"
                    first = next((ln for ln in se.splitlines() if "error" in ln.lower()), se.strip()[:200])
                    st.failures.append(f"{fig}: {LABEL[impl]} {' '.join(map(str, args))}: rc {rc}: {first}")
                    log(f"{fig}: {LABEL[impl]} n={n} failed (rc {rc}), reported as failed: {first}")
                    continue
                if rc != 0 or "VALIDATION FAILED" in se:
                    raise Failure(f"{fig}: {' '.join(cmd)} failed (rc {rc}):\n{se[-3000:]}")
                log(f"{fig} run {rep + 1}/{runs}: {LABEL[impl]} n={n} {sec:.1f} s")


# ---------------------------------------------------------------------------- memory

def smaps(pid):
    d = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[-1] == "kB":
                    d[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        pass
    return d


def descendants(pid):
    kids = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat") as f:
                s = f.read()
            ppid = int(s[s.rindex(")") + 2:].split()[1])
            kids.setdefault(ppid, []).append(int(e))
        except (OSError, ValueError):
            continue
    res, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            res.append(c)
            todo.append(c)
    return res


def comm_of(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def memory_run(im, impl, n, workdir, timeout, build):
    """Starts hello -hold at n ranks, measures while every rank sleeps. Returns a dict (kB)."""
    hold = os.path.join(workdir, f"hold.{impl}.{n}")
    open(hold, "w").close()
    agent = None
    if impl == "tmpi":
        agent = Agent(build, workdir, "memagent")
        idle = smaps(agent.pid)
        cmd = [os.path.join(build, "launcher", "tmpi-launch"), "--agent", agent.sock, "-n", str(n),
               im.prog(impl, "hello"), "-hold", hold]
    else:
        cmd = im.launch(impl, n, im.prog(impl, "hello"), ["-hold", hold])
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         start_new_session=True, cwd=TOP)
    t0 = time.monotonic()
    res = None
    try:
        import select
        fd = p.stdout.fileno()
        buf = b""
        while b"HOLDING" not in buf:
            left = timeout - (time.monotonic() - t0)
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
        if b"HOLDING" in buf:
            time.sleep(0.5)  # let every rank reach its sleep
            if impl == "tmpi":
                a = smaps(agent.pid)
                lp = smaps(p.pid)
                res = {"agent_rss": a.get("Rss", 0), "agent_pss": a.get("Pss", 0),
                       "agent_idle_rss": idle.get("Rss", 0), "launcher_pss": lp.get("Pss", 0),
                       "procs": 2}
            else:
                ranks_pss = ranks_rss = other_pss = 0
                nranks = 0
                pids = [p.pid] + descendants(p.pid)
                for q in pids:
                    m = smaps(q)
                    if comm_of(q) == "hello":
                        ranks_pss += m.get("Pss", 0)
                        ranks_rss += m.get("Rss", 0)
                        nranks += 1
                    else:
                        other_pss += m.get("Pss", 0)
                res = {"ranks_pss": ranks_pss, "ranks_rss": ranks_rss, "other_pss": other_pss,
                       "nranks": nranks, "procs": len(pids)}
                if nranks != n:
                    log(f"memory: {impl} found {nranks} rank processes, expected {n}")
    finally:
        os.unlink(hold)
        try:
            p.communicate(timeout=max(30, timeout))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        if agent:
            agent.stop()
    return res, cmd


# ---------------------------------------------------------------------------- figures

def coll_points(alist):
    """(op, root, size) of every point coll.c prints for `-a alist`."""
    return ([("barrier", "-", 0)] +
            [(o, rt, 8) for o in ("bcast", "reduce") for rt in ("fixed", "rotate", "combo")] +
            [("allreduce", "-", 8)] + [("allreduce", "-", int(x)) for x in alist.split(",")])


def sizes(lo, hi):
    s, r = lo, []
    while s <= hi:
        r.append(s)
        s *= 2
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="shorter points and problems (a few minutes)")
    ap.add_argument("--runs", type=int, default=5, help="runs per figure and implementation (>= 5 for medians)")
    ap.add_argument("--only", default="", help="comma-separated figures: p2p,coll,a1000,oversub,macro,halo,launch,memory,net,hosts,rma,binding,hpl,osu,ior,npb,lulesh")
    ap.add_argument("--hpl-src", metavar="DIR", help="an HPL source tree (netlib HPL 2.x): the hpl figure "
                    "(without it the figure is skipped)")
    ap.add_argument("--osu-src", metavar="DIR", help="an OSU micro-benchmarks release tree, not configured "
                    "in place: the osu figure (without it the figure is skipped)")
    ap.add_argument("--ior-src", metavar="DIR", help="an IOR source tree (github.com/hpc/ior): the ior "
                    "figure, MPI-IO (without it the figure is skipped)")
    ap.add_argument("--npb-src", metavar="DIR", help="an NPB3.4-MPI source tree: the npb figure "
                    "(without it the figure is skipped)")
    ap.add_argument("--lulesh-src", metavar="DIR", help="a LULESH 2.0 source tree (github.com/LLNL/LULESH): "
                    "the lulesh figure (without it the figure is skipped)")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--out", default=os.path.join(TOP, "docs", "bench"))
    ap.add_argument("--merge", metavar="RAW", help="start from an earlier run's raw.json (its figures are kept; "
                    "run the missing ones with --only)")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get missing packages")
    a = ap.parse_args()
    quick = a.quick
    a.build = os.path.abspath(a.build)
    a.out = os.path.abspath(a.out)
    only = set(x for x in a.only.split(",") if x)
    want = lambda f: not only or f in only

    # the binding figure is TMPI's alone: run by itself it needs no peer and no plot
    tmpi_only = bool(only) and only <= TMPI_ONLY_FIGS
    if not a.no_install and not tmpi_only:
        ensure_packages()
    for tool in [] if tmpi_only else ["mpicc.openmpi", "mpicc.mpich", "mpirun.openmpi",
                                      "mpiexec.mpich", "gnuplot"]:
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} not found (install {' '.join(PACKAGES)})")
    if not os.path.exists(os.path.join(a.build, "agent", "tmpid")):
        sys.exit(f"bench: {a.build}/agent/tmpid missing: run make first")

    resdir = os.path.join(HERE, "results")
    os.makedirs(resdir, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="tmpi-bench.")
    agent = Agent(a.build, workdir, "warm")
    im = Impls(a.build, os.path.join(a.build, "bench"), agent.sock)
    build_programs(im, ["tmpi"] if tmpi_only else IMPLS)
    st = Store()
    if a.merge:
        st.merge(a.merge)
    cfg = {"quick": quick, "runs": a.runs, "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
           "agent_cmd": agent.cmd, "cflags": CFLAGS,
           # the tree measured, for a report written again later from raw.json (report.py)
           "git": subprocess.run(["git", "-C", TOP, "log", "-1", "--format=%h (%s)"],
                                 capture_output=True, text=True).stdout.strip()}
    t_start = time.monotonic()
    T = 0.03 if quick else 0.2      # seconds per measured point inside a program
    cap = 20 if quick else 120      # seconds before a run is abandoned (capped)
    N_mm = 512 if quick else 1024
    cfg.update(point_sec=T, cap=cap, n_macro=N_mm)
    coll_ranks = [2, 4, 8, 16]
    macro_ranks = [1, 2, 4, 8, 16]
    try:
        if want("p2p"):
            # up to 64 MiB: beyond the L3, where issue 21 asks for the lead in both states
            run_series(st, im, "pingpong", [(2, "pingpong", ["-t", T, "-max", 64 << 20])], a.runs,
                       cap * 3,
                       lambda r: int(r["size"]), lambda r: (r["usec"], r["mbps"]))
            run_series(st, im, "oneway", [(2, "oneway", ["-t", T])], a.runs, cap * 3,
                       lambda r: int(r["size"]), lambda r: (r["usec"], r["mbps"]))
        if want("coll"):
            alist = "1024,65536" if quick else "1024,65536,1048576"
            run_series(st, im, "coll", [(n, "coll", ["-t", T, "-a", alist]) for n in coll_ranks],
                       a.runs, cap * 2, lambda r: (r["op"], r["root"], int(r["ranks"]), int(r["size"])),
                       lambda r: r["usec"],
                       cap_keys=lambda n: [(op, root, n, sz) for op, root, sz in coll_points(alist)])
        if want("a1000"):
            run_series(st, im, "allreduce1000", [(n, "allreduce1000", []) for n in coll_ranks],
                       a.runs, cap, lambda r: int(r["ranks"]), lambda r: r["usec"],
                       cap_keys=lambda n: [n])
        if want("oversub"):
            run_series(st, im, "ring", [(n, "ring", ["-t", T]) for n in [2, 4, 8, 16]],
                       a.runs, cap, lambda r: int(r["ranks"]), lambda r: r["usec"],
                       cap_keys=lambda n: [n])
        if want("macro"):
            for prog in ["mm", "ge"]:
                run_series(st, im, prog, [(n, prog, ["-t", 0.01 if quick else 0.5, "-N", N_mm]) for n in macro_ranks],
                           a.runs, cap, lambda r: int(r["ranks"]), lambda r: r["mflops"],
                           cap_keys=lambda n: [n])
        if want("halo"):
            run_series(st, im, "halo", [(n, "halo", ["-t", T, "-N", N]) for n in HALO_RANKS
                                        for N in HALO_SIZES],
                       a.runs, cap, lambda r: (int(r["ranks"]), int(r["size"])), lambda r: r["usec"],
                       cap_keys=lambda n: [(n, N) for N in HALO_SIZES])
        if want("net"):
            net_figure(st, im, a, T, cap, quick, workdir, cfg)
        if want("hosts"):
            hosts_figure(st, im, a, T, cap, workdir, cfg)
        if want("rma"):
            rma_figure(st, im, a, T, cap, workdir)
        if want("launch"):
            launch_figure(st, im, a, quick, workdir)
        if want("binding"):
            binding_figure(st, im, a, T, cap)
        if want("hpl"):
            third_party(cfg, "hpl", a.hpl_src,
                        lambda: hpl_figure(st, im, a, cap, quick, cfg, workdir))
        if want("osu"):
            third_party(cfg, "osu", a.osu_src, lambda: osu_figure(st, im, a, cap, quick, cfg))
        if want("ior"):
            third_party(cfg, "ior", a.ior_src, lambda: ior_figure(st, im, a, cap, quick, cfg, workdir))
        if want("npb"):
            third_party(cfg, "npb", a.npb_src,
                        lambda: npb_figure(st, im, a, cap, quick, cfg, workdir))
        if want("lulesh"):
            third_party(cfg, "lulesh", a.lulesh_src,
                        lambda: lulesh_figure(st, im, a, cap, quick, cfg, workdir))
        if want("memory"):
            memory_figure(st, im, a, quick, workdir)
    finally:
        agent.stop()
        st.dump(os.path.join(resdir, "raw.json"))
        shutil.rmtree(workdir, ignore_errors=True)
    cfg["elapsed"] = time.monotonic() - t_start
    loads = sorted(x for x in LOADS if x is not None)
    if loads:
        cfg["load"] = [loads[0], loads[len(loads) // 2], loads[-1]]
    cfg["probes"] = None if a.merge else PROBES  # merged: every stored probe counts
    with open(os.path.join(resdir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    import report
    report.write(st, cfg, im, a.out, quick)
    log(f"done in {cfg['elapsed']:.0f} s; see {a.out}/RESULTS.md")


# ---------------------------------------------------------------------------- third-party programs

# HPL: 4 ranks on one node (2 x 2 grid), the problem order by mode. One BLAS thread per rank for
# all three implementations, as one sets it when binding one rank per core (without it each
# Open MPI or MPICH rank would start an OpenBLAS pool as large as the machine).
HPL_RANKS = [4]
# HPL on emulated hosts (issue 37): nodes x ranks per node, a 3 x 4 grid.
HPL_HOSTS = (3, 4)
HPL_N = {True: 2000, False: 4000}
BLAS_ENV = [("OPENBLAS_NUM_THREADS", "1"), ("OMP_NUM_THREADS", "1")]
# OSU: 2 ranks; sizes (and, quick, iterations) given as options, as users run them.
OSU_BENCHES = ["osu_latency", "osu_bw"]
OSU_ARGS = {True: ["-m", "8:1048576", "-i", "1000", "-x", "100"], False: ["-m", "8:4194304"]}


def with_env(impl, cmd, env):
    """cmd (im.launch's) with the variables env set in every rank, each launcher's way."""
    flags = []
    for k, v in env:
        flags += ["-genv", k, v] if impl == "mpich" else ["-x", f"{k}={v}"]
    return cmd[:1] + flags + cmd[1:]


def third_party(cfg, fig, src, run_fig):
    """Runs a third-party figure when its source tree was given; a build that fails or a run
    that fails is a note in the report (cfg[fig + "_failed"]), not the end of the benchmarks.
    A wrong answer (HPL's residual check) still stops everything."""
    if not src:
        cfg[fig + "_skipped"] = f"no --{fig}-src given"
        log(f"{fig}: skipped (no --{fig}-src)")
        return
    try:
        run_fig()
    except thirdparty.WrongAnswer as e:
        raise Failure(f"{fig}: {e}")
    except (thirdparty.BuildError, Failure, OSError) as e:
        cfg[fig + "_failed"] = str(e)[-1500:]
        log(f"{fig} FAILED:", e)


@contextlib.contextmanager
def on_emulated_hosts(a, im, workdir, cfg, fig, layout, env=()):
    """The emulated hosts (NetnsHosts) a figure's rows across nodes run on, deleted when the
    block ends: yields run_series' launch for layout (nodes, ranks per node) with env added to
    every rank's environment, or None when the hosts cannot be made (the reason in
    cfg[fig + "_hosts_skipped"]; the figure's other rows stand).  cfg[fig + "_hosts"] records
    the layout for the report."""
    nodes, ppn = layout
    try:
        hosts = NetnsHosts(a.build, workdir, nodes)
    except Skip as e:
        cfg[fig + "_hosts_skipped"] = str(e)
        log(fig, "on emulated hosts skipped:", e)
        yield None
        return
    cfg[fig + "_hosts"] = [nodes, ppn]
    try:
        yield hosts.launcher(im, nodes, ppn, env)
    finally:
        hosts.delete()


def hpl_figure(st, im, a, cap, quick, cfg, workdir):
    """HPL (thirdparty.py) from --hpl-src built with each implementation's compiler and Debian's
    OpenBLAS; GFLOP/s of one problem per run, 4 ranks on one node and 3 x 4 on emulated hosts,
    runs alternating."""
    dest = os.path.join(im.bindir, "hpl")
    os.makedirs(dest, exist_ok=True)
    dirs = {}
    for impl in IMPLS:
        dirs[impl] = thirdparty.build_hpl(a.hpl_src, dest, impl, im.cc(impl), CFLAGS)
    log("HPL built in", dest)
    n = HPL_N[quick]
    cfg.update(hpl_n=n, hpl_nb=thirdparty.HPL_NB, hpl_src=os.path.abspath(a.hpl_src),
               hpl_env=[f"{k}={v}" for k, v in BLAS_ENV],
               hpl_build={impl: [" ".join(im.cc(impl)), f"Make.tmpibench in a copy at {d}"]
                          for impl, d in dirs.items()})

    def launch(impl, ranks, prog, args):
        d = dirs[impl]
        p, q = thirdparty.grid(ranks)
        with open(os.path.join(d, "HPL.dat"), "w") as f:
            f.write(thirdparty.hpl_dat(n, thirdparty.HPL_NB, p, q))
        # xhpl reads HPL.dat in its working directory
        return ["env", "-C", d] + with_env(impl, im.launch(impl, ranks, os.path.join(d, "xhpl")),
                                            BLAS_ENV)

    run_series(st, im, "hpl", [(r, "xhpl", []) for r in HPL_RANKS], a.runs, cap * 3,
               lambda r: (int(r["p"] * r["q"]), int(r["n"])), lambda r: r["gflops"],
               cap_keys=lambda r: [(r, n)], launch=launch, parse=thirdparty.parse_hpl)
    # the same problem on emulated hosts (a 3 x 4 grid): shared memory inside a host, TCP across
    nodes, ppn = HPL_HOSTS
    with on_emulated_hosts(a, im, workdir, cfg, "hpl", HPL_HOSTS, BLAS_ENV) as on_hosts:
        if not on_hosts:
            return

        def launch_hosts(impl, ranks, prog, args):
            d = dirs[impl]
            p, q = thirdparty.grid(ranks)
            with open(os.path.join(d, "HPL.dat"), "w") as f:
                f.write(thirdparty.hpl_dat(n, thirdparty.HPL_NB, p, q))
            return ["env", "-C", d] + on_hosts(impl, ranks, os.path.join(d, "xhpl"), args)
        run_series(st, im, "hpl_hosts", [(nodes * ppn, "xhpl", [])], a.runs, cap * 3,
                   lambda r: (int(r["p"] * r["q"]), int(r["n"])), lambda r: r["gflops"],
                   cap_keys=lambda r: [(r, n)], launch=launch_hosts, parse=thirdparty.parse_hpl,
                   cmd_label=f"hpl {nodes}x{ppn}")


# LULESH 2.0: a cube of ranks (its decomposition needs one): 8 on one node, 27 on 3 x 9
# emulated hosts; -s (zones per rank edge) and -i (cycles) by mode.  Key: (ranks, size).
LULESH_RANKS = 8
LULESH_HOSTS = (3, 9)
LULESH_ARGS = {True: ["-s", "10", "-i", "50"], False: ["-s", "20", "-i", "100"]}


def lulesh_figure(st, im, a, cap, quick, cfg, workdir):
    """LULESH (thirdparty.py) from --lulesh-src built with each implementation's C++ wrapper,
    one thread per rank; its figure of merit (zones a second) per run, on one node and on
    emulated hosts, runs alternating; a run whose symmetry check fails stops everything."""
    dest = os.path.join(im.bindir, "lulesh")
    os.makedirs(dest, exist_ok=True)
    progs = {impl: thirdparty.build_lulesh(a.lulesh_src, dest, impl, im.cxx(impl))
             for impl in IMPLS}
    log("LULESH built in", dest)
    args = LULESH_ARGS[quick]
    cfg.update(lulesh_src=os.path.abspath(a.lulesh_src), lulesh_args=args,
               lulesh_ranks=LULESH_RANKS,
               lulesh_build={impl: " ".join(im.cxx(impl)) for impl in IMPLS})
    key = lambda r: (r["ranks"], r["size"])
    run_series(st, im, "lulesh", [(LULESH_RANKS, "lulesh2.0", args)], a.runs, cap * 3, key,
               lambda r: r["fom"],
               launch=lambda impl, n, prog, args: im.launch(impl, n, progs[impl], args),
               parse=thirdparty.parse_lulesh)
    nodes, ppn = LULESH_HOSTS
    with on_emulated_hosts(a, im, workdir, cfg, "lulesh", LULESH_HOSTS) as on_hosts:
        if not on_hosts:
            return
        run_series(st, im, "lulesh_hosts", [(nodes * ppn, "lulesh2.0", args)], a.runs, cap * 3,
                   key, lambda r: r["fom"],
                   launch=lambda impl, n, prog, args: on_hosts(impl, n, progs[impl], args),
                   parse=thirdparty.parse_lulesh, cmd_label=f"lulesh {nodes}x{ppn}")


def osu_figure(st, im, a, cap, quick, cfg):
    """osu_latency and osu_bw (thirdparty.py) from --osu-src built with each implementation's
    wrappers, 2 ranks on one node, runs alternating; us and MB/s per size as OSU prints them."""
    dest = os.path.join(im.bindir, "osu")
    os.makedirs(dest, exist_ok=True)
    progs = {}
    for impl in IMPLS:
        bdir = thirdparty.build_osu(a.osu_src, dest, impl, im.cc(impl), im.cxx(impl))
        for b in OSU_BENCHES:
            path = thirdparty.osu_program(bdir, b)
            if not path:
                raise thirdparty.BuildError(f"{b} not built in {bdir}")
            progs[(impl, b)] = path
    log("OSU built in", dest)
    cfg.update(osu_src=os.path.abspath(a.osu_src), osu_args=OSU_ARGS[quick])
    for b in OSU_BENCHES:
        run_series(st, im, b, [(2, b, OSU_ARGS[quick])], a.runs, cap * 3,
                   lambda r: int(r["size"]), lambda r: r["value"],
                   launch=lambda impl, n, prog, args, b=b: im.launch(impl, n, progs[(impl, b)], args),
                   parse=thirdparty.parse_osu)


# IOR: MPI-IO, 4 ranks on one node, collective (-c) and independent, 1 MiB and 64 KiB
# transfers, each rank a 16 MiB block per segment, write then read (fsync included: -e), the
# read from another rank's data (-C).
IOR_RANKS = 4
IOR_XFERS = [1 << 20, 64 << 10]
IOR_SEGMENTS = {True: 2, False: 8}
# IOR on emulated hosts (issue 35): nodes x ranks per node, as hosts_figure runs them.
IOR_HOSTS = (3, 4)


def ior_figure(st, im, a, cap, quick, cfg, workdir):
    """IOR (thirdparty.py) from --ior-src built with each implementation's compiler; MiB/s of
    collective and independent write and read per run, runs alternating.  Key: (collective,
    transfer bytes, 0 write / 1 read)."""
    dest = os.path.join(im.bindir, "ior")
    os.makedirs(dest, exist_ok=True)
    progs = {impl: thirdparty.build_ior(a.ior_src, dest, impl, im.cc(impl)) for impl in IMPLS}
    log("IOR built in", dest)
    data = os.path.join(workdir, "ior.dat")
    cfg.update(ior_src=os.path.abspath(a.ior_src), ior_segments=IOR_SEGMENTS[quick])
    def ior_args(coll, xfer):
        return ["-a", "MPIIO"] + (["-c"] if coll else []) + [
            "-t", str(xfer), "-b", str(16 << 20), "-s", str(IOR_SEGMENTS[quick]),
            "-w", "-r", "-e", "-C", "-i", "1", "-o", data]
    for coll in (1, 0):
        for xfer in IOR_XFERS:
            run_series(st, im, "ior", [(IOR_RANKS, "ior", ior_args(coll, xfer))], a.runs, cap * 3,
                       lambda r, c=coll, x=xfer: (c, x, int(r["op"])), lambda r: r["value"],
                       launch=lambda impl, n, prog, args: im.launch(impl, n, progs[impl], args),
                       parse=thirdparty.parse_ior)
    # the same on emulated hosts: one file system (this machine's), TCP between the hosts
    nodes, ppn = IOR_HOSTS
    with on_emulated_hosts(a, im, workdir, cfg, "ior", IOR_HOSTS) as on_hosts:
        if not on_hosts:
            return
        for coll in (1, 0):
            for xfer in IOR_XFERS:
                run_series(st, im, "ior_hosts", [(nodes * ppn, "ior", ior_args(coll, xfer))],
                           a.runs, cap * 3,
                           lambda r, c=coll, x=xfer: (c, x, int(r["op"])), lambda r: r["value"],
                           launch=lambda impl, n, prog, args: on_hosts(impl, n, progs[impl], args),
                           parse=thirdparty.parse_ior, cmd_label=f"ior {nodes}x{ppn}")


# NPB: the kernels of thirdparty.NPB_KERNELS on 4 ranks (BT and SP need a square), class by mode.
NPB_RANKS = 4
NPB_CLASS = {True: "S", False: "A"}
# NPB on emulated hosts (issue 34): nodes x ranks per node, as hosts_figure runs them.  12 ranks
# suit only EP and LU (4 x 3): NPB_NPROCS_STRICT=off has the others compute on the largest
# count they take (BT, SP 9; CG, FT, IS, MG 8) and leave the rest idle, the same for all three.
NPB_HOSTS = (3, 4)
NPB_HOSTS_ENV = (("NPB_NPROCS_STRICT", "off"),)


def npb_figure(st, im, a, cap, quick, cfg, workdir):
    """The NAS Parallel Benchmarks (thirdparty.py) from --npb-src built with each
    implementation's Fortran and C wrappers (MPIFC, MPICC in config/make.def); seconds per
    kernel as NPB reports them, 4 ranks on one node, runs alternating; a kernel that does not
    verify stops everything."""
    dest = os.path.join(im.bindir, "npb")
    os.makedirs(dest, exist_ok=True)
    klass = NPB_CLASS[quick]
    dirs = {}
    for impl in IMPLS:
        dirs[impl] = thirdparty.build_npb(a.npb_src, dest, impl, im.fc(impl), im.cc(impl), klass,
                                          NPB_RANKS)
    log("NPB built in", dest)
    cfg.update(npb_src=os.path.abspath(a.npb_src), npb_class=klass, npb_ranks=NPB_RANKS,
               npb_build={impl: " ".join(im.fc(impl)) for impl in IMPLS})
    def npb_prog(impl, prog):
        # run_series hands im.prog's path (the bench programs' directory): NPB's are elsewhere
        return os.path.join(dirs[impl], os.path.basename(prog))

    jobs = [(NPB_RANKS, f"{k}.{klass}.x", []) for k in thirdparty.NPB_KERNELS]
    run_series(st, im, "npb", jobs, a.runs, cap * 3, lambda r: r["kernel"], lambda r: r["sec"],
               launch=lambda impl, n, prog, args: im.launch(impl, n, npb_prog(impl, prog), args),
               parse=thirdparty.parse_npb)
    # the same programs on emulated hosts: shared memory inside a host, TCP across
    nodes, ppn = NPB_HOSTS
    active = {}

    def parse(text):
        got = thirdparty.parse_npb(text)
        for r in got:
            active[r["kernel"]] = r["active"]
        return got
    with on_emulated_hosts(a, im, workdir, cfg, "npb", NPB_HOSTS, NPB_HOSTS_ENV) as on_hosts:
        if not on_hosts:
            return
        cfg["npb_hosts_active"] = active
        jobs = [(nodes * ppn, f"{k}.{klass}.x", []) for k in thirdparty.NPB_KERNELS]
        run_series(st, im, "npb_hosts", jobs, a.runs, cap * 3, lambda r: r["kernel"],
                   lambda r: r["sec"],
                   launch=lambda impl, n, prog, args: on_hosts(impl, n, npb_prog(impl, prog), args),
                   parse=parse, cmd_label=f"npb {nodes}x{ppn}")


# Figures that run TMPI alone (no peer to compare with).
TMPI_ONLY_FIGS = {"binding"}
# tmpi-launch --bind-to choices the binding figure compares (key: its column in the report).
BIND_VARIANTS = [("default", []), ("core", ["--bind-to", "core"]), ("none", ["--bind-to", "none"])]


def binding_figure(st, im, a, T, cap):
    """TMPI's --bind-to choices (issue 19), alternating run by run: a 2-rank ping-pong and a
    2-rank ring (the ranks fit the cores: the default binds to core), and a 16-rank ring
    (oversubscribed: the default binds nothing), on carriers (rank_switching auto) and with one
    thread per rank (TMPI_RANK_SWITCHING=kernel).  Keys: (job, ranks, size); us per hop."""
    fig = "binding"
    jobs = [("pingpong", 2, "pingpong", ["-t", T, "-min", 8, "-max", 65536], []),
            ("ring", 2, "ring", ["-t", T], []),
            ("ring", 16, "ring", ["-t", T], []),
            ("ring, a thread per rank", 16, "ring", ["-t", T],
             ["-x", "TMPI_RANK_SWITCHING=kernel"])]
    launcher = os.path.join(im.build, "launcher", "tmpi-launch")
    for rep in range(a.runs):
        gbps = machine_probe(im)
        for (label, n, prog, args, extra) in jobs:
            for name, opts in BIND_VARIANTS:
                cmd = [launcher, "--agent", im.sock] + opts + extra + \
                      ["-n", str(n), im.prog("tmpi", prog)] + [str(x) for x in args]
                if rep == 0:
                    st.cmds.setdefault(fig, {}).setdefault(name, []).append(cmd)
                rc, so, se, sec = run_cmd(cmd, cap)
                if rc is None:
                    st.capped[(fig, name, (label, n, 0))] = cap
                    log(f"binding: {label} n={n} {name} timed out after {cap} s (capped)")
                    continue
                if rc != 0 or "VALIDATION FAILED" in se:
                    raise Failure(f"binding: {' '.join(cmd)} failed (rc {rc}):\n{se[-3000:]}")
                for r in parse_results(so):
                    st.add(fig, name, (label, n, int(r.get("size", 4))), r["usec"], probe=gbps)
                log(f"binding run {rep + 1}/{a.runs}: {label} n={n} --bind-to {name} {sec:.1f} s")


LAUNCH_N = [1, 8, 64, 256]
LAUNCH_TMPI_EXTRA = [1024, 4096]


def launch_figure(st, im, a, quick, workdir):
    """Wall time of a whole hello job, launcher start to exit. Peers: a size is only tried
    while the previous one finished within 60 s. In quick mode a peer run longer than 10 s
    is not repeated (marked in the report)."""
    fig = "launch"
    variants = [("tmpi", False), ("tmpi-private", True), ("ompi", False), ("mpich", False)]
    stop_n = {}  # variant -> smallest size that failed or timed out
    slow_once = set()
    env = dict(os.environ)
    env.pop("TMPI_AGENT", None)
    for rep in range(a.runs):
        for n in LAUNCH_N + LAUNCH_TMPI_EXTRA:
            for name, private in variants:
                impl = "tmpi" if name.startswith("tmpi") else name
                if n in LAUNCH_TMPI_EXTRA and impl != "tmpi":
                    continue
                if n >= stop_n.get(name, 1 << 30):
                    continue
                if (name, n) in slow_once:
                    continue
                cmd = im.launch(impl, n, im.prog(impl, "hello"), [], private=private)
                if rep == 0:
                    st.cmds.setdefault(fig, {}).setdefault(name, []).append(cmd)
                rc, so, se, sec = run_cmd(cmd, 60, env=env)
                if rc is None:
                    stop_n[name] = min(n, stop_n.get(name, n))
                    st.capped[(fig, name, n)] = 60
                    log(f"launch: {name} n={n} did not finish in 60 s")
                    continue
                if rc != 0 or so.count("hello from rank") != n:
                    # a peer that cannot start this many ranks is capped there, not an error
                    if impl != "tmpi":
                        stop_n[name] = min(n, stop_n.get(name, n))
                        st.capped[(fig, name, n)] = "failed"
                        log(f"launch: {name} n={n} failed (rc {rc}): {se.strip()[-300:]}")
                        continue
                    raise Failure(f"launch: {' '.join(cmd)} failed (rc {rc}):\n{se[-2000:]}")
                st.add(fig, name, n, sec)
                if quick and impl != "tmpi" and sec > 10:
                    slow_once.add((name, n))
                log(f"launch run {rep + 1}: {name} n={n} {sec:.2f} s")



def memory_figure(st, im, a, quick, workdir):
    fig = "memory"
    for rep in range(a.runs):
        for n in [64, 1024]:
            for impl in IMPLS:
                # peers: 1024 processes do not start within 60 s here (see the launch figure)
                if impl != "tmpi" and n > 256:
                    continue
                res, cmd = memory_run(im, impl, n, workdir, 60, a.build)
                if rep == 0:
                    st.cmds.setdefault(fig, {}).setdefault(impl, []).append(cmd)
                if res is None:
                    st.capped[(fig, impl, n)] = 60
                    log(f"memory: {impl} n={n} did not reach the hold in 60 s")
                    continue
                for k, v in res.items():
                    st.add(fig, impl, (n, k), v)
                log(f"memory run {rep + 1}: {impl} n={n} {res}")


# ---------------------------------------------------------------------------- across nodes

# Peers across "nodes" on one machine: mpirun/mpiexec cannot split one host into nodes without
# ssh, so every pair of their ranks is forced over TCP instead. Open MPI: the TCP and self BTLs
# only, and its one-sided operations as messages over them (osc pt2pt: osc sm, and osc rdma for
# the processes of one machine, map windows in shared memory whatever the BTLs are, so a Put
# would be a store, not a message). MPICH (Debian's is ch4:ucx): no local shortcut and UCX
# restricted to TCP.
OMPI_TCP = ["--mca", "btl", "self,tcp", "--mca", "osc", "pt2pt"]
MPICH_TCP_ENV = ["MPIR_CVAR_NOLOCAL=1", "UCX_TLS=tcp,self"]
NET_LAYOUTS_A1000 = [(3, 1), (3, 4)]
NET_LAYOUTS_COLL = [(4, 1), (1, 4), (4, 4)]


def net_launcher(im, cluster, nodes, ppn):
    """launch() for run_series: a job of nodes x ppn ranks. TMPI: one agent of the cluster per
    node, exactly ppn ranks on each (shared memory inside a node, TCP between agents). Peers:
    all ranks on this machine over TCP; a one-node layout runs them as they are (shared memory),
    as a real single node would."""

    def launch(impl, n, prog, args):
        args = [str(x) for x in args]
        if impl == "tmpi":
            return [os.path.join(im.build, "launcher", "tmpi-launch"), "--agent", cluster.sock,
                    "--hostfile", cluster.hostfile(nodes, ppn), "--ppn", str(ppn), "-n", str(n),
                    prog] + args
        cmd = im.launch(impl, n, prog, args)
        if nodes == 1:
            return cmd
        if impl == "ompi":
            return cmd[:1] + OMPI_TCP + cmd[1:]
        return ["env"] + MPICH_TCP_ENV + cmd

    return launch


def net_figure(st, im, a, T, cap, quick, workdir, cfg):
    """Jobs spanning several agents on this machine (issue 5's inter-node figures)."""
    cluster = Cluster(a.build, workdir, max(n for n, _ in NET_LAYOUTS_COLL + NET_LAYOUTS_A1000))
    cfg["cluster_agent_cmd"] = cluster.agents[0].cmd
    try:
        pp = net_launcher(im, cluster, 2, 1)
        for fig, prog in [("net_pingpong", "pingpong"), ("net_oneway", "oneway")]:
            run_series(st, im, fig, [(2, prog, ["-t", T])], a.runs, cap * 3,
                       lambda r: int(r["size"]), lambda r: (r["usec"], r["mbps"]), launch=pp,
                       cmd_label=fig + " 2x1")
        for nodes, ppn in NET_LAYOUTS_A1000:
            run_series(st, im, "net_allreduce1000", [(nodes * ppn, "allreduce1000", [])], a.runs,
                       cap, lambda r, L=(nodes, ppn): L, lambda r: r["usec"],
                       cap_keys=lambda n, L=(nodes, ppn): [L],
                       launch=net_launcher(im, cluster, nodes, ppn),
                       cmd_label=f"net_allreduce1000 {nodes}x{ppn}")
        alist = "1024,65536" if quick else "1024,65536,1048576"
        for nodes, ppn in NET_LAYOUTS_COLL:
            run_series(st, im, "net_coll", [(nodes * ppn, "coll", ["-t", T, "-a", alist])], a.runs,
                       cap * 2,
                       lambda r, L=(nodes, ppn): (r["op"], r["root"]) + L + (int(r["size"]),),
                       lambda r: r["usec"],
                       cap_keys=lambda n, L=(nodes, ppn): [(op, root) + L + (sz,)
                                                           for op, root, sz in coll_points(alist)],
                       launch=net_launcher(im, cluster, nodes, ppn),
                       cmd_label=f"net_coll {nodes}x{ppn}")
    finally:
        cluster.stop()
    try:
        netns_pingpong(st, im, a, T, cap, workdir, cfg)
    except Skip as e:
        cfg["netns_skipped"] = str(e)
        log("netns ping-pong skipped:", e)
    except (Failure, RuntimeError) as e:
        # optional figure: its failure is reported, the other figures still are
        cfg["netns_failed"] = str(e)[-1500:]
        log("netns ping-pong FAILED:", e)


RMA_WINDOWS = ["allocate", "create"]


def rma_figure(st, im, a, T, cap, workdir):
    """One-sided communication (tests/bench/rma.c): Put 8 B and 1 MiB with flush in a passive
    epoch, Fetch_and_op, a fence-synchronised halo exchange; for windows from Win_allocate and
    from Win_create, on one node and across two agents (peers over TCP as in net_figure)."""
    key = lambda r: (r["op"], r["win"], int(r["size"]))
    jobs = [(2, "rma", ["-t", T, "-w", w]) for w in RMA_WINDOWS]
    run_series(st, im, "rma", jobs, a.runs, cap * 3, key, lambda r: r["usec"])
    cluster = Cluster(a.build, workdir, 2)
    try:
        run_series(st, im, "net_rma", jobs, a.runs, cap * 3, key, lambda r: r["usec"],
                   launch=net_launcher(im, cluster, 2, 1), cmd_label="net_rma 2x1")
    finally:
        cluster.stop()


class Skip(Exception):
    pass


class NetnsPair:
    """Two network namespaces joined by a veth pair, 192.0.2.1/24 and 192.0.2.2/24 (TEST-NET-1,
    the documentation range), one keyed agent in each: two hosts as far as TCP can tell. Names
    carry our PID; delete() removes exactly what was made, agents first (by PID)."""

    PORT = 7470

    def __init__(self, build, workdir):
        tag = str(os.getpid())
        self.ns = [f"tmpib{tag}a", f"tmpib{tag}b"]
        self.addr = ["192.0.2.1", "192.0.2.2"]
        self.made = []
        self.agents = []
        r = subprocess.run(["ip", "netns", "add", self.ns[0]], capture_output=True, text=True)
        if r.returncode != 0:
            raise Skip("ip netns add is not permitted here: " + (r.stderr.strip() or f"rc {r.returncode}"))
        self.made.append(self.ns[0])
        try:
            self._ip("netns", "add", self.ns[1])
            self.made.append(self.ns[1])
            va, vb = f"tvb{tag}a", f"tvb{tag}b"
            # the pair moves into the namespaces whole, so deleting them deletes it
            self._ip("link", "add", va, "type", "veth", "peer", "name", vb)
            for ns, dev, addr in zip(self.ns, (va, vb), self.addr):
                self._ip("link", "set", dev, "netns", ns)
                self._ip("-n", ns, "addr", "add", addr + "/24", "dev", dev)
                self._ip("-n", ns, "link", "set", "lo", "up")
                self._ip("-n", ns, "link", "set", dev, "up")
            self.dir = tempfile.mkdtemp(prefix="netns.", dir=workdir)
            self.key = os.path.join(self.dir, "cluster.key")
            write_key(self.key)
            for i, (ns, addr) in enumerate(zip(self.ns, self.addr), 1):
                self.agents.append(Agent(build, self.dir, f"host{i}",
                                         ["--name", f"host{i}", "--listen", f"{addr}:{self.PORT}",
                                          "--key-file", self.key],
                                         prefix=["ip", "netns", "exec", ns]))
            self.hosts = os.path.join(self.dir, "hosts")
            with open(self.hosts, "w") as f:
                for addr in self.addr:
                    f.write(f"{addr} slots=1 port={self.PORT}\n")
        except Exception:
            self.delete()
            raise

    @staticmethod
    def _ip(*args):
        r = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
        if r.returncode != 0:
            raise Skip(f"ip {' '.join(args)}: {r.stderr.strip()}")

    def delete(self):
        for ag in reversed(self.agents):
            ag.stop()
        self.agents = []
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.made = []


def netns_pingpong(st, im, a, T, cap, workdir, cfg):
    """TMPI ping-pong between two agents in two network namespaces (a veth link, not loopback).
    TMPI only: the peers' launchers would need ssh into the namespaces."""
    pair = NetnsPair(a.build, workdir)
    try:
        def launch(impl, n, prog, args):
            return ["ip", "netns", "exec", pair.ns[0],
                    os.path.join(im.build, "launcher", "tmpi-launch"), "--agent",
                    pair.agents[0].sock, "--hostfile", pair.hosts, "--ppn", "1", "-n", str(n),
                    prog] + [str(x) for x in args]
        run_series(st, im, "netns_pingpong", [(2, "pingpong", ["-t", T])], a.runs, cap * 3,
                   lambda r: int(r["size"]), lambda r: (r["usec"], r["mbps"]), launch=launch,
                   impls=["tmpi"])
    finally:
        pair.delete()


# ---------------------------------------------------------------------------- emulated hosts

# Layouts hosts x ranks per host, and the points of seed 000's Fig. 13 operations measured on
# them (coll.c -p): small and 64 KiB Allreduce, 1 MiB Bcast and Reduce, Alltoall.
HOST_LAYOUTS = [(3, 1), (3, 4), (4, 4)]
HOST_POINTS = "allreduce:8,allreduce:65536,bcast:1048576,reduce:1048576,alltoall:1024"
HOST_IF = "tmpi0"  # the host's interface, the same name in every namespace
HOST_PORT = 7470

# ssh stand-in given to mpirun (plm_rsh_agent) and mpiexec (-launcher-exec): called as
# "[OPTIONS] HOST COMMAND...", it runs COMMAND in HOST's namespace under HOST's own hostname
# (a UTS namespace of its own), as ssh would run it on that host.
RSH_WRAPPER = """#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
host=$1
shift
ns=$(awk -v h="$host" '$1 == h { print $2 }' "{map}")
[ -n "$ns" ] || { echo "$0: unknown host $host" >&2; exit 255; }
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$ns" "$*"
"""


class NetnsHosts:
    """k emulated hosts: network namespaces tmpih<pid>-<i>, each with one interface tmpi0
    (192.0.2.<10+i>/24, TEST-NET-1) on a bridge that lives in a namespace of its own
    (tmpisw<pid>), and one keyed TMPI agent. Peers reach them as a real cluster's hosts: their
    launchers start daemons through RSH_WRAPPER. delete() stops the agents by PID and removes
    exactly the namespaces made here (their devices go with them)."""

    def __init__(self, build, workdir, k):
        tag = str(os.getpid())
        self.sw = f"tmpisw{tag}"
        self.ns = [f"tmpih{tag}-{i}" for i in range(1, k + 1)]
        self.addr = [f"192.0.2.{10 + i}" for i in range(1, k + 1)]
        self.made = []
        self.agents = []
        r = subprocess.run(["ip", "netns", "add", self.sw], capture_output=True, text=True)
        if r.returncode != 0:
            raise Skip("ip netns add is not permitted here: " + (r.stderr.strip() or f"rc {r.returncode}"))
        self.made.append(self.sw)
        try:
            NetnsPair._ip("-n", self.sw, "link", "add", "br0", "type", "bridge")
            NetnsPair._ip("-n", self.sw, "link", "set", "br0", "up")
            for i, (ns, addr) in enumerate(zip(self.ns, self.addr), 1):
                NetnsPair._ip("netns", "add", ns)
                self.made.append(ns)
                h, p = f"th{tag}-{i}", f"ts{tag}-{i}"
                NetnsPair._ip("link", "add", h, "type", "veth", "peer", "name", p)
                NetnsPair._ip("link", "set", p, "netns", self.sw)
                NetnsPair._ip("link", "set", h, "netns", ns)
                NetnsPair._ip("-n", self.sw, "link", "set", p, "master", "br0", "up")
                NetnsPair._ip("-n", ns, "link", "set", h, "name", HOST_IF)
                NetnsPair._ip("-n", ns, "addr", "add", addr + "/24", "dev", HOST_IF)
                NetnsPair._ip("-n", ns, "link", "set", "lo", "up")
                NetnsPair._ip("-n", ns, "link", "set", HOST_IF, "up")
            self.dir = tempfile.mkdtemp(prefix="hosts.", dir=workdir)
            self.key = os.path.join(self.dir, "cluster.key")
            write_key(self.key)
            mapfile = os.path.join(self.dir, "hostmap")
            with open(mapfile, "w") as f:
                for ns, addr in zip(self.ns, self.addr):
                    f.write(f"{addr} {ns}\n")
            self.rsh = os.path.join(self.dir, "rsh")
            with open(self.rsh, "w") as f:
                f.write(RSH_WRAPPER.replace("{map}", mapfile))
            os.chmod(self.rsh, 0o755)
            for i, (ns, addr) in enumerate(zip(self.ns, self.addr), 1):
                self.agents.append(Agent(build, self.dir, f"host{i}",
                                         ["--name", f"host{i}", "--listen", f"{addr}:{HOST_PORT}",
                                          "--key-file", self.key],
                                         prefix=["ip", "netns", "exec", ns]))
        except Exception:
            self.delete()
            raise

    def hostfile(self, impl, nodes, ppn):
        path = os.path.join(self.dir, f"hosts.{impl}.{nodes}x{ppn}")
        with open(path, "w") as f:
            for addr in self.addr[:nodes]:
                f.write({"tmpi": f"{addr} slots={ppn} port={HOST_PORT}\n",
                         "ompi": f"{addr} slots={ppn}\n",
                         "mpich": f"{addr}:{ppn}\n"}[impl])
        return path

    def launcher(self, im, nodes, ppn, env=()):
        """launch() for run_series: the launcher runs on host 1 (its namespace and hostname).
        TMPI: host 1's agent, one agent per host. Open MPI: shared memory (vader) inside a
        host, TCP on tmpi0 across, daemons through the wrapper; idle ranks yield, since all
        hosts share this machine's cores. MPICH (ch4): its shared memory inside a host, UCX
        over TCP across, proxies through the wrapper. env: (NAME, VALUE) pairs every rank
        gets."""
        on_host1 = ["ip", "netns", "exec", self.ns[0], "unshare", "--uts", "sh", "-c",
                    'hostname "$0" && exec "$@"', self.ns[0]]

        def launch(impl, n, prog, args):
            args = [str(x) for x in args]
            hf = self.hostfile(impl, nodes, ppn)
            if impl == "tmpi":
                cmd = [os.path.join(im.build, "launcher", "tmpi-launch"), "--agent",
                       self.agents[0].sock, "--hostfile", hf, "--ppn", str(ppn), "-n", str(n)]
                cmd += [x for k, v in env for x in ("-x", f"{k}={v}")]
            elif impl == "ompi":
                cmd = ["mpirun.openmpi"] + (["--allow-run-as-root"] if im.root else []) + \
                      ["--hostfile", hf, "--map-by", "slot", "--mca", "plm_rsh_agent", self.rsh,
                       "--mca", "btl", "self,vader,tcp", "--mca", "btl_tcp_if_include", HOST_IF,
                       "--mca", "oob_tcp_if_include", HOST_IF, "--mca", "mpi_yield_when_idle", "1",
                       "-np", str(n)]
                cmd += [x for k, v in env for x in ("-x", f"{k}={v}")]
            else:
                cmd = ["env", "UCX_TLS=tcp,self", "UCX_NET_DEVICES=" + HOST_IF, "mpiexec.mpich",
                       "-f", hf, "-launcher", "ssh", "-launcher-exec", self.rsh, "-iface", HOST_IF,
                       "-n", str(n)]
                cmd += [x for k, v in env for x in ("-genv", k, v)]
            return on_host1 + cmd + [prog] + args

        return launch

    def delete(self):
        for ag in reversed(self.agents):
            ag.stop()
        self.agents = []
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.made = []


def hosts_figure(st, im, a, T, cap, workdir, cfg):
    """Emulated hosts (issue 21): every implementation as on a real cluster, shared memory inside
    a host and TCP across, on network namespaces joined by a bridge."""
    try:
        hosts = NetnsHosts(a.build, workdir, max(n for n, _ in HOST_LAYOUTS))
    except Skip as e:
        cfg["hosts_skipped"] = str(e)
        log("emulated hosts skipped:", e)
        return
    cfg["hosts_agent_cmd"] = hosts.agents[0].cmd
    try:
        run_series(st, im, "hosts_pingpong", [(2, "pingpong", ["-t", T])], a.runs, cap * 3,
                   lambda r: int(r["size"]), lambda r: (r["usec"], r["mbps"]),
                   launch=hosts.launcher(im, 2, 1), cmd_label="hosts_pingpong 2x1")
        for nodes, ppn in HOST_LAYOUTS:
            run_series(st, im, "hosts_coll",
                       [(nodes * ppn, "coll", ["-t", T, "-p", HOST_POINTS])], a.runs, cap * 2,
                       lambda r, L=(nodes, ppn): (r["op"],) + L + (int(r["size"]),),
                       lambda r: r["usec"],
                       cap_keys=lambda n, L=(nodes, ppn): [
                           (p.split(":")[0],) + L + (int(p.split(":")[1]),)
                           for p in HOST_POINTS.split(",")],
                       launch=hosts.launcher(im, nodes, ppn),
                       cmd_label=f"hosts_coll {nodes}x{ppn}")
    finally:
        hosts.delete()


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    try:
        main()
    except Failure as e:
        print("bench: FAILED:", e, file=sys.stderr)
        sys.exit(1)
