"""Writes docs/bench/RESULTS.md and the PNG plots from the medians collected by run.py.

Can be re-run on stored results:  python3 tests/bench/report.py  (reads tests/bench/results/).
"""

import json
import os
import shlex
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
IMPLS = ["tmpi", "ompi", "mpich"]
LABEL = {"tmpi": "TMPI", "ompi": "Open MPI", "mpich": "MPICH", "tmpi-private": "TMPI (private agent)"}
PEERS = ["ompi", "mpich"]


def out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def rel(p):
    return os.path.relpath(p, TOP) if isinstance(p, str) and p.startswith(TOP) else p


def cmdline(cmd):
    return " ".join(shlex.quote(rel(str(c))) for c in cmd)


def fmt(v, digits=3):
    if v is None:
        return "–"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.{digits}f}"


class View:
    """Medians and caps for one figure; metric picks a field of tuple values."""

    def __init__(self, st, fig, idx=None):
        self.st, self.fig, self.idx = st, fig, idx

    def med(self, impl, key):
        vals = self.st["values"].get((self.fig, impl, key))
        if not vals:
            return None
        if self.idx is not None:
            vals = [v[self.idx] for v in vals]
        return statistics.median(vals)

    def n(self, impl, key):
        return len(self.st["values"].get((self.fig, impl, key), []))

    def cap(self, impl, key):
        return self.st["capped"].get((self.fig, impl, key))

    def cell(self, impl, key, lower_is_better=True, bound=None):
        m = self.med(impl, key)
        c = self.cap(impl, key)
        if m is None and c is not None:
            if c == "failed":
                return "failed"
            b = bound(c) if bound else None
            return (("> " if lower_is_better else "< ") + fmt(b) if b is not None else f"> {c} s") + " (capped)"
        s = fmt(m)
        k = self.n(impl, key)
        if m is not None and k < self.st["runs"]:
            s += f" ({k} run{'s' if k != 1 else ''})"
        return s

    def ratio(self, key, other, lower_is_better=True, bound=None):
        t = self.med("tmpi", key)
        if t is None:
            return "–"
        if other == "best":
            vals = [self.med(p, key) for p in PEERS]
            vals = [v for v in vals if v is not None]
            if not vals:
                caps = [self.cap(p, key) for p in PEERS]
                if all(c not in (None, "failed") for c in caps) and bound:
                    b = (min if lower_is_better else max)(bound(c) for c in caps)
                    return ("< " if lower_is_better else "> ") + fmt(t / b) if b else "–"
                return "–"
            o = min(vals) if lower_is_better else max(vals)
        else:
            o = self.med(other, key)
            if o is None:
                c = self.cap(other, key)
                if c not in (None, "failed") and bound and bound(c):
                    return ("< " if lower_is_better else "> ") + fmt(t / bound(c))
                return "–"
        return fmt(t / o) if o else "–"


def table(rows, header):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(lines) + "\n"


def impl_cols(v, key, lower, bound=None, impls=IMPLS):
    return [v.cell(i, key, lower, bound) for i in impls] + \
           [v.ratio(key, "best", lower, bound), v.ratio(key, "ompi", lower, bound), v.ratio(key, "mpich", lower, bound)]


HDR = ["TMPI", "Open MPI", "MPICH", "TMPI / best other", "TMPI / Open MPI", "TMPI / MPICH"]


def size_label(s):
    s = int(s)
    if s >= 1 << 20 and s % (1 << 20) == 0:
        return f"{s >> 20} MiB"
    if s >= 1024 and s % 1024 == 0:
        return f"{s >> 10} KiB"
    return f"{s} B"


# --------------------------------------------------------------------------- plots

def gnuplot(outdir, name, script):
    gp = os.path.join(outdir, "data", name + ".gp")
    with open(gp, "w") as f:
        f.write(f"set terminal pngcairo size 900,560 font 'DejaVu Sans,11'\n")
        f.write(f"set output '{os.path.join(outdir, name + '.png')}'\n")
        f.write("set grid\nset key top left\n")
        f.write(script)
    subprocess.run(["gnuplot", gp], check=False, cwd=os.path.join(outdir, "data"))


def write_dat(outdir, name, keys, cols):
    """cols: list of functions key -> value or None; writes '?' for missing."""
    p = os.path.join(outdir, "data", name + ".dat")
    any_value = False
    with open(p, "w") as f:
        for k in keys:
            vals = [c(k) for c in cols]
            f.write(" ".join([str(k)] + ["?" if v is None else f"{v:.6g}" for v in vals]) + "\n")
            any_value = any_value or any(v is not None for v in vals)
    return name + ".dat" if any_value else None


def plot_lines(outdir, name, dat, title, xlabel, ylabel, logx, logy, labels, extra=""):
    if dat is None:
        return
    s = f"set title '{title}'\nset xlabel '{xlabel}'\nset ylabel '{ylabel}'\n"
    s += "set datafile missing '?'\n"
    if logx:
        s += "set logscale x 2\n"
    if logy:
        s += "set logscale y\n"
    s += extra
    s += "plot " + ", ".join(f"'{dat}' using 1:{i + 2} with linespoints lw 2 title '{l}'"
                             for i, l in enumerate(labels)) + "\n"
    gnuplot(outdir, name, s)


# --------------------------------------------------------------------------- report

def write(store, cfg, im, outdir, quick):
    st = {"values": {}, "capped": {}, "runs": cfg["runs"]}
    for (fig, impl, key), v in store.values.items():
        st["values"][(fig, impl, key)] = v
    for (fig, impl, key), v in store.capped.items():
        st["capped"][(fig, impl, key)] = v
    os.makedirs(os.path.join(outdir, "data"), exist_ok=True)
    md = []
    w = md.append
    w("# TMPI benchmarks: TMPI beside Open MPI and MPICH\n\n")
    w(f"Generated by `{'make bench QUICK=1' if quick else 'make bench'}` (tests/bench/run.py) on "
      f"{cfg['started']}; {cfg['runs']} runs of every figure, implementations alternating run by run "
      f"(TMPI, Open MPI, MPICH, TMPI, ...); every number is the **median over the runs**. "
      f"Inside a run, each point is calibrated to about {cfg['point_sec']} s and split into 5 timed chunks "
      f"(each started by a barrier, timed to the slowest rank); the run reports the median chunk. "
      f"A run that exceeds {cfg['cap']} s is abandoned and the point is shown as a bound, "
      f"\"(capped)\". Whole run took {cfg.get('elapsed', 0) / 60:.1f} min. "
      f"Profiling of the missed targets: [ANALYSIS.md](ANALYSIS.md).\n\n")
    if cfg.get("load"):
        lo, me, hi = cfg["load"]
        w(f"**Machine load.** The 1-minute load average before each run was {lo:.1f} (min) / {me:.1f} "
          f"(median) / {hi:.1f} (max; the average lags and includes the benchmark's own processes, e.g. after a 256-rank Open MPI job): the 2-core machine was {'shared with other work (builds, tests) during the run, which makes single points noisy; medians over alternating runs keep the comparison fair but absolute numbers can be worse than on an idle machine' if hi > 1.5 else 'otherwise idle'}.\n\n")
    if getattr(store, "failures", None):
        w("**Peer jobs that could not run** (shown as \"failed\" in the tables):\n\n")
        for line in store.failures:
            w(f"- {line}\n")
        w("\n")
    w("Ratios are TMPI / other of the table's metric: for times, below 1 means TMPI is faster; "
      "for rates (MB/s, MFLOP/s), above 1 means TMPI is faster. \"best other\" is the better of "
      "Open MPI and MPICH for that point.\n\n")

    # ---- targets
    targets = target_rows(st, cfg)
    w("## Targets of issue 5\n\n")
    w(table(targets, ["figure", "TMPI", "Open MPI", "MPICH", "target", "achieved", "verdict"]))
    w("\nInter-node rows: one agent per \"node\" on this one machine, peers forced over TCP; see "
      "[across nodes](#point-to-point-across-nodes-2-nodes-x-1-rank) for what that means and its "
      "caveats.\n\n")

    # ---- ping-pong
    if keys_of(st, "pingpong") or keys_of(st, "oneway"):
        w("## Point-to-point, one node (2 ranks)\n\n")
        p2p_sections(w, st, outdir, "", "",
                     "Both ranks reuse the same buffers, so sizes up to the L2 cache run from cache "
                     "for every implementation (the seed's \"transfer rate\" measure).\n\n")

    net_sections(w, st, cfg, outdir)
    hosts_sections(w, st, cfg)
    rma_sections(w, st)
    binding_sections(w, st, cfg)

    # ---- collectives
    cv = View(st, "coll")
    opkeys = sorted({(k[2][0], k[2][1], k[2][3]) for k in list(st["values"]) + list(st["capped"])
                     if k[0] == "coll"},
                    key=lambda x: (["barrier", "bcast", "reduce", "allreduce"].index(x[0]),
                                   ["-", "fixed", "rotate", "combo"].index(x[1]), x[2]))
    if opkeys:
        w("## Collectives, one node (us per call)\n\n")
        w("Bcast and Reduce: 8 B (one double); roots fixed (0), rotating (i mod P) and combo (each root "
          "for 4 calls, then the next), seed 000 section 4.2. Allreduce: MPI_SUM on doubles. "
          "From 4 ranks on, the 2 cores are oversubscribed. Fixed-root Bcast lets the root run ahead "
          "(a chunk ends when the slowest rank has received everything), so it measures pipelined "
          "throughput.\n\n")
        for P in sorted({k[2][2] for k in [kk for kk in list(st["values"]) + list(st["capped"]) if kk[0] == "coll"]}):
            w(f"### {P} ranks\n\n")
            rows = []
            for op, root, size in opkeys:
                key = (op, root, P, size)
                rows.append([op, root if root != "-" else "", size_label(size) if op != "barrier" else ""] +
                            impl_cols(cv, key, True, bound=lambda c: None))
            w(table(rows, ["op", "root", "size"] + HDR))
            w("\n")
        w("![collectives](coll.png)\n\n")
        coll_plot(outdir, cv, opkeys)

    a1 = View(st, "allreduce1000")
    rk = sorted({k[2] for k in list(st["values"]) + list(st["capped"]) if k[0] == "allreduce1000"})
    if rk:
        w("## Seed 002 Allreduce benchmark (1000 x MPI_Allreduce of one int, checked every iteration; us per call)\n\n")
        w(table([[P] + impl_cols(a1, P, True, bound=lambda c: c * 1e6 / 1000) for P in rk], ["ranks"] + HDR))
        w("\n![seed 002 allreduce](allreduce1000.png)\n\n")
        dat = write_dat(outdir, "allreduce1000", rk, [lambda k, i=i: a1.med(i, k) for i in IMPLS])
        plot_lines(outdir, "allreduce1000", dat, "seed 002 Allreduce (1000 calls, checked)", "ranks (2 cores)",
                   "us per call", True, True, [LABEL[i] for i in IMPLS])

    rg = View(st, "ring")
    rk = sorted({k[2] for k in list(st["values"]) + list(st["capped"]) if k[0] == "ring"})
    if rk:
        w("## Oversubscription: 2 cores, up to 16 ranks\n\n")
        w("Ring: one 4-byte token passed 0 -> 1 -> ... -> P-1 -> 0 (MPI_Send/MPI_Recv), us per hop:\n\n")
        w(table([[P] + impl_cols(rg, P, True) for P in rk], ["ranks"] + HDR))
        w("\n8 B Allreduce (from the collectives figure), us per call:\n\n")
        w(table([[P] + impl_cols(cv, ("allreduce", "-", P, 8), True) for P in rk if P >= 2], ["ranks"] + HDR))
        w("\n![ring](ring.png)\n\n")
        dat = write_dat(outdir, "ring", rk, [lambda k, i=i: rg.med(i, k) for i in IMPLS])
        plot_lines(outdir, "ring", dat, "ring hop time (2 cores)", "ranks", "us per hop", True, True,
                   [LABEL[i] for i in IMPLS])

    hv = View(st, "halo")
    hk = sorted({k[2] for k in list(st["values"]) + list(st["capped"]) if k[0] == "halo"})
    if hk:
        w("## 2-D halo exchange with column vectors (us per exchange)\n\n")
        w("Each rank owns an N x N block of doubles in an (N+2) x (N+2) array on a periodic process "
          "grid and exchanges its edge rows (contiguous) and edge columns (MPI_Type_vector(N, 1, N+2, "
          "MPI_DOUBLE)) with its four neighbours (Irecv/Isend/Waitall, checked): tests/bench/halo.c. "
          "TMPI copies a column once, from the sender's layout into the receiver's.\n\n")
        w(table([[f"{P} ranks, N = {N}"] + impl_cols(hv, (P, N), True) for P, N in hk], ["job"] + HDR))
        w("\n")

    for prog, title in [("mm", "Matrix multiply (point-to-point, 1-D systolic row blocks)"),
                        ("ge", "Gaussian elimination (Bcast of every pivot row, rotating root)")]:
        v = View(st, prog)
        rk = sorted({k[2] for k in list(st["values"]) + list(st["capped"]) if k[0] == prog})
        if not rk:
            continue
        n = cfg["n_macro"]
        flops = 2 * n ** 3 if prog == "mm" else 2 * n ** 3 / 3
        w(f"## {title}, N = {n}, MFLOP/s\n\n")
        w(table([[P] + impl_cols(v, P, False, bound=lambda c, f=flops: f / c / 1e6) for P in rk], ["ranks"] + HDR))
        w(f"\n![{prog}]({prog}.png)\n\n")
        dat = write_dat(outdir, prog, rk, [lambda k, i=i, v=v: v.med(i, k) for i in IMPLS])
        plot_lines(outdir, prog, dat, title + f", N={n}", "ranks (2 cores)", "MFLOP/s", True, False,
                   [LABEL[i] for i in IMPLS], extra="set yrange [0:*]\n")

    third_party_sections(w, st, cfg)

    lv = View(st, "launch")
    rk = sorted({k[2] for k in list(st["values"]) + list(st["capped"]) if k[0] == "launch"})
    if rk:
        names = ["tmpi", "tmpi-private", "ompi", "mpich"]
        w("## Launch: wall time of a hello job (s, launcher start to exit)\n\n")
        w("Every rank prints one line and joins one Allreduce. TMPI: warm agent (already running) and "
          "private agent (tmpi-launch starts and stops its own tmpid). Peers are tried at a size only "
          "while the previous size finished within 60 s. Speed-up = peer time / TMPI warm time.\n\n")
        rows = []
        for P in rk:
            r = [P] + [lv.cell(n_, P, True) for n_ in names]
            t = lv.med("tmpi", P)
            for p in PEERS:
                o = lv.med(p, P)
                r.append(f"{o / t:.0f}x" if (o and t) else "–")
            rows.append(r)
        w(table(rows, ["ranks", "TMPI warm", "TMPI private", "Open MPI", "MPICH",
                       "Open MPI / TMPI warm", "MPICH / TMPI warm"]))
        w("\n![launch](launch.png)\n\n")
        dat = write_dat(outdir, "launch", rk, [lambda k, i=i: lv.med(i, k) for i in names])
        plot_lines(outdir, "launch", dat, "hello job wall time", "ranks", "seconds", True, True,
                   [LABEL[i] for i in names])

    mv = View(st, "memory")
    rk = sorted({k[2][0] for k in st["values"] if k[0] == "memory"})
    if rk:
        w("## Memory while every rank sleeps in the job (MB = 10^6 bytes)\n\n")
        w("TMPI: RSS of the agent process (`Rss` of /proc/PID/smaps_rollup; a fresh agent per run, "
          "its idle RSS shown apart) plus the PSS of tmpi-launch. Peers: the sum of `Pss` over every "
          "rank process, and separately over their launcher processes (mpirun/orted, "
          "mpiexec/hydra_pmi_proxy).\n\n")
        rows = []
        for P in rk:
            g = lambda impl, k: mv.med(impl, (P, k))
            arss = g("tmpi", "agent_rss")
            idle = g("tmpi", "agent_idle_rss")
            row = [P, mb(arss), mb(idle), mb(g("tmpi", "launcher_pss"))]
            for p in PEERS:
                rp = g(p, "ranks_pss")
                op_ = g(p, "other_pss")
                row += [mb(rp) if rp else ("not started" if P > 256 else "–"), mb(op_) if op_ else "–"]
            sums = [g(p, "ranks_pss") for p in PEERS if g(p, "ranks_pss")]
            row.append(f"{arss / min(sums):.3f}" if (arss and sums) else "–")
            row.append(f"{arss / P / 1000:.2f}" if arss else "–")
            rows.append(row)
        w(table(rows, ["ranks", "TMPI agent RSS", "agent idle RSS", "tmpi-launch PSS",
                       "Open MPI ranks PSS", "Open MPI launchers PSS", "MPICH ranks PSS",
                       "MPICH launchers PSS", "TMPI RSS / smaller peer PSS", "TMPI MB per rank"]))
        w("\n")

    # ---- machine and versions
    # the transports' section is fabric.py's (make bench runs it after this report): kept
    w(fabric_section(os.path.join(outdir, "RESULTS.md")))
    w("## Machine and versions\n\n```\n")
    lscpu = out(["lscpu"])
    keep = ("Architecture", "CPU(s)", "On-line", "Model name", "Thread(s) per core", "Core(s) per socket",
            "Socket(s)", "Hypervisor", "L1d", "L2", "L3", "NUMA node(s)")
    w("\n".join(l for l in lscpu.splitlines() if l.startswith(keep)) + "\n")
    w(f"nproc: {out(['nproc'])}\n")
    w(f"uname -a: {out(['uname', '-a'])}\n")
    mem = out(["free", "-m"]).splitlines()
    if len(mem) > 1:
        w(f"memory (free -m): {mem[1]}\n")
    w("```\n\n")
    w("```\n" + out(["dpkg-query", "-W", "openmpi-bin", "libopenmpi-dev", "mpich", "libmpich-dev",
                     "gnuplot-nox", "gcc", "libc6", "linux-perf", "libopenblas0-pthread"]) + "\n")
    measured = cfg.get("git") or out(["git", "-C", TOP, "log", "-1", "--format=%h (%s)"])
    w(f"TMPI: git {measured[:80]}\n```\n\n")

    # ---- commands
    w("## Exact commands\n\n")
    w("Build (from the top of the tree, after `make`):\n\n```\n")
    for impl in IMPLS:
        cc = cmdline(im.cc(impl))
        w(f"{cc} {' '.join(cfg.get('cflags', ['-O2']))} -o build/bench/{impl}/PROG tests/bench/PROG.c -lm\n")
    w("```\n\nPROG is one of pingpong, oneway, coll, allreduce1000, ring, mm, ge, hello, halo.\n\n")
    w("Warm agent (TMPI, all figures but the private-agent launch and memory, which starts a fresh "
      "agent the same way for each run):\n\n```\n" +
      cmdline([c if not c.startswith("/tmp/") else "$DIR/" + os.path.basename(c) for c in cfg["agent_cmd"]]).replace(
          "--ready-fd " + cfg["agent_cmd"][cfg["agent_cmd"].index("--ready-fd") + 1], "--ready-fd 3") +
      "   # empty tmpid.conf; READY=1 arrives on fd 3\n```\n\n")
    if cfg.get("cluster_agent_cmd"):
        c = [("$DIR/" + os.path.basename(x) if x.startswith("/tmp/") else x)
             for x in cfg["cluster_agent_cmd"]]
        c = [("$PORT1" if x.startswith("127.0.0.1:") else x) for x in c]
        c[c.index("--ready-fd") + 1] = "3"
        w("Agents across nodes (node1..node4, each with its own socket, name and free loopback port "
          "PORTi, one key for all: `head -c 32 /dev/urandom`, mode 600); $HOSTFILE has one line "
          "`127.0.0.1 slots=K port=PORTi` per node of the layout, node1 first:\n\n```\n" +
          cmdline(c) + "\n```\n\n")

    w("Runs (first and last command of each series, the others differ only in -n; every layout "
      "of the figures across nodes):\n\n```\n")
    for fig, d in store.cmds.items():
        for impl, cmds in d.items():
            for c in cmds if fig.startswith("net") or len(cmds) < 2 else cmds[:1] + cmds[-1:]:
                c2 = [("$SOCK" if str(x).endswith("tmpid.sock") else x) for x in c]
                c2 = [("$HOLDFILE" if "/hold." in str(x) else x) for x in c2]
                c2 = [("$HOSTFILE" if str(x).startswith("/tmp/") and
                       os.path.basename(str(x)).startswith("hosts") else x) for x in c2]
                if fig.startswith("netns") and c2[:3] == ["ip", "netns", "exec"]:
                    c2[3] = "$NS_A"
                w(f"# {fig}, {LABEL.get(impl, impl)}\n{cmdline(c2)}\n")
    w("```\n\n")
    state_section(w, store, cfg)

    w("Rerun: `make bench` (full, about an hour) or `make bench QUICK=1` (quick mode: shorter points, "
      "N = 512 macro problems, runs over 20 s abandoned, Open MPI/MPICH launches over 10 s not repeated); "
      "one figure: `tests/bench/run.py --quick --only coll` (figures: p2p, coll, a1000, oversub, macro, halo, "
      "launch, memory, net, hosts, rma, binding, hpl, osu, ior, npb, lulesh; hpl, osu, ior, npb and lulesh need `--hpl-src DIR`, `--osu-src DIR`, `--ior-src DIR`, `--npb-src DIR` and `--lulesh-src DIR`, "
      "e.g. `make bench BENCH_ARGS='--hpl-src ~/hpl-2.3'`). Every program prints `RESULT key=value ...` lines and aborts on a wrong answer.\n")

    with open(os.path.join(outdir, "RESULTS.md"), "w") as f:
        f.write("".join(md))


FABRIC_BEGIN = "<!-- tests/bench/fabric.py: begin -->\n"
FABRIC_END = "<!-- tests/bench/fabric.py: end -->\n"


def fabric_section(path):
    """The section tests/bench/fabric.py wrote into RESULTS.md (between its markers), or ""."""
    try:
        text = open(path).read()
    except OSError:
        return ""
    a, b = text.find(FABRIC_BEGIN), text.find(FABRIC_END)
    return text[a:b + len(FABRIC_END)] + "\n" if 0 <= a < b else ""


def p2p_sections(w, st, outdir, prefix, what, bw_note):
    """Ping-pong and one-way tables and plots of figures PREFIX+pingpong / PREFIX+oneway; plot
    files carry the prefix, plot titles end with `what`."""
    pp_lat = View(st, prefix + "pingpong", 0)
    pp_bw = View(st, prefix + "pingpong", 1)
    lat_sizes = sizes(4, 1 << 20)
    # as far as the runs went (one node: 64 MiB, beyond the L3; across nodes: 4 MiB)
    top = max([k[-1] for k in st["values"] if k[0] == prefix + "pingpong" and isinstance(k[-1], int)],
              default=4 << 20)
    bw_sizes = sizes(1024, max(top, 4 << 20))
    w("### Ping-pong latency (half round trip, us)\n\n")
    w(table([[size_label(s)] + impl_cols(pp_lat, s, True) for s in lat_sizes], ["size"] + HDR))
    w(f"\n![ping-pong latency]({prefix}pingpong_latency.png)\n\n")
    w("### Ping-pong bandwidth (size / half round trip, MB/s, 10^6 bytes)\n\n")
    w(table([[size_label(s)] + impl_cols(pp_bw, s, False) for s in bw_sizes], ["size"] + HDR))
    w(f"\n![ping-pong bandwidth]({prefix}pingpong_bandwidth.png)\n\n")
    w(bw_note)
    for name, v, ss, lab, logy in [("pingpong_latency", pp_lat, lat_sizes, "us", True),
                                   ("pingpong_bandwidth", pp_bw, bw_sizes, "MB/s", False)]:
        dat = write_dat(outdir, prefix + name, ss, [lambda k, i=i: v.med(i, k) for i in IMPLS])
        plot_lines(outdir, prefix + name, dat, name.replace("_", " ") + what, "message size (bytes)",
                   lab, True, logy, [LABEL[i] for i in IMPLS])

    ow_t = View(st, prefix + "oneway", 0)
    ow_r = View(st, prefix + "oneway", 1)
    w("### One-way streaming (rank 0 sends back to back, rank 1 receives)\n\n")
    w("Time per send (us), small messages:\n\n")
    small = sizes(4, 8192)
    w(table([[size_label(s)] + impl_cols(ow_t, s, True) for s in small], ["size"] + HDR))
    w("\nRate (MB/s), large messages:\n\n")
    large = sizes(16384, 4 << 20)
    w(table([[size_label(s)] + impl_cols(ow_r, s, False) for s in large], ["size"] + HDR))
    w(f"\n![one-way time per send]({prefix}oneway_time.png) "
      f"![one-way rate]({prefix}oneway_rate.png)\n\n")
    dat = write_dat(outdir, prefix + "oneway_time", small, [lambda k, i=i: ow_t.med(i, k) for i in IMPLS])
    plot_lines(outdir, prefix + "oneway_time", dat, "one-way streaming: time per send" + what,
               "message size (bytes)", "us", True, True, [LABEL[i] for i in IMPLS])
    dat = write_dat(outdir, prefix + "oneway_rate", large, [lambda k, i=i: ow_r.med(i, k) for i in IMPLS])
    plot_lines(outdir, prefix + "oneway_rate", dat, "one-way streaming: rate" + what,
               "message size (bytes)", "MB/s", True, False, [LABEL[i] for i in IMPLS])


def keys_of(st, fig):
    return {k[2] for k in list(st["values"]) + list(st["capped"]) if k[0] == fig}


NET_SETUP = (
    "Jobs spanning several agents on this one machine (2 cores): TMPI runs one `tmpid` per "
    "\"node\", each keyed and listening on its own 127.0.0.1 port, and places the job with "
    "`tmpi-launch --hostfile HOSTFILE --ppn K` (shared memory between ranks of one node, TCP "
    "between agents). mpirun/mpiexec cannot split one host into nodes without ssh, so the peers "
    "run every rank on this machine with **every pair over TCP**: Open MPI with "
    "`--mca btl self,tcp`, MPICH (Debian's is ch4:ucx) with the environment "
    "`MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self`. (Open MPI's TCP BTL leaves out 127.0.0.0/8 by "
    "default and uses this machine's own eth0 address, which the kernel also delivers "
    "locally.)\n\n"
    "Caveats. All \"nodes\" share the 2 cores and the kernel's loopback path, so there is no "
    "wire: these figures measure software overhead (system calls, copies, progress), not a "
    "network. In layouts with several ranks per node (3x4, 4x4) **the peers also use TCP between "
    "ranks of one \"node\", while TMPI uses shared memory inside a node**; on a real cluster the "
    "peers would use shared memory there as well, so those layouts favour TMPI. The one-node "
    "layout (1x4) runs the peers as they are (shared memory) and TMPI on node1's agent.\n\n")


def net_sections(w, st, cfg, outdir):
    """Point-to-point, collectives and seed 002 across nodes (figures net_* and netns_*)."""
    if not any(keys_of(st, f) for f in ("net_pingpong", "net_oneway", "net_coll", "net_allreduce1000")):
        return
    w("## Point-to-point across nodes (2 nodes x 1 rank)\n\n")
    w(NET_SETUP)
    p2p_sections(w, st, outdir, "net_", " (2 nodes)", "")

    w("### Across two network namespaces (veth link)\n\n")
    ns = keys_of(st, "netns_pingpong")
    if ns:
        lat, bw, lo_lat, lo_bw = (View(st, "netns_pingpong", 0), View(st, "netns_pingpong", 1),
                                  View(st, "net_pingpong", 0), View(st, "net_pingpong", 1))
        w("TMPI only: two agents in two network namespaces joined by a veth pair "
          "(192.0.2.1/24 and 192.0.2.2/24), so the link is a real (virtual) Ethernet device, not "
          "loopback; the peers' launchers would need ssh into the namespaces. Beside it, TMPI's "
          "loopback figure from above.\n\n")
        rows = []
        for s in sorted(ns):
            rows.append([size_label(s), lat.cell("tmpi", s), lo_lat.cell("tmpi", s),
                         bw.cell("tmpi", s, False), lo_bw.cell("tmpi", s, False)])
        w(table(rows, ["size", "veth latency (us)", "loopback latency (us)", "veth MB/s",
                       "loopback MB/s"]))
        w("\n")
    elif cfg.get("netns_failed"):
        w("Not measured: the run failed:\n\n```\n" + cfg["netns_failed"] + "\n```\n\n")
    else:
        w("Not measured: " + cfg.get("netns_skipped", "not run") + ".\n\n")

    cv = View(st, "net_coll")
    ck = keys_of(st, "net_coll")
    if ck:
        w("## Collectives across nodes (us per call)\n\n")
        w("Seed 000 Fig. 13 layouts, nodes x ranks per node; the same program and points as the "
          "one-node collectives (Bcast/Reduce of 8 B with fixed, rotating and combo roots; "
          "Allreduce MPI_SUM). Peers as described under point-to-point across nodes.\n\n")
        opkeys = sorted({(k[0], k[1], k[4]) for k in ck}, key=coll_order)
        for nodes, ppn in sorted({(k[2], k[3]) for k in ck}, key=lambda L: (L[0] * L[1], L)):
            w(f"### {nodes} node{'s' if nodes > 1 else ''} x {ppn} rank{'s' if ppn > 1 else ''} "
              f"({nodes * ppn} ranks)\n\n")
            rows = [[op, root if root != "-" else "", size_label(size) if op != "barrier" else ""] +
                    impl_cols(cv, (op, root, nodes, ppn, size), True, bound=lambda c: None)
                    for op, root, size in opkeys]
            w(table(rows, ["op", "root", "size"] + HDR))
            w("\n")

    av = View(st, "net_allreduce1000")
    ak = sorted(keys_of(st, "net_allreduce1000"), key=lambda L: (L[0] * L[1], L))
    if ak:
        w("## Seed 002 Allreduce across nodes (1000 x MPI_Allreduce of one int, us per call)\n\n")
        w("Capped runs: the whole run, start-up included, exceeded the cap; the bound is the cap "
          "over 1000 calls.\n\n")
        w(table([[f"{n} x {k}", n * k] + impl_cols(av, (n, k), True, bound=lambda c: c * 1e6 / 1000)
                 for n, k in ak], ["nodes x ranks", "ranks"] + HDR))
        w("\n")


HOSTS_SETUP = (
    "Like for like across hosts: every host is a network namespace with one interface "
    "(`tmpi0`, 192.0.2.11-14/24) on a bridge, and every implementation runs as on a real "
    "cluster, shared memory inside a host and TCP across. TMPI: one `tmpid` per host, the job "
    "placed with `tmpi-launch --hostfile HOSTFILE --ppn K`. Open MPI: one `mpirun` with a host "
    "file naming the hosts' addresses, its daemons started in each namespace by an ssh "
    "stand-in (`--mca plm_rsh_agent`, which runs the command under `ip netns exec` with the "
    "host's own hostname), `--mca btl self,vader,tcp` on `tmpi0`, and `mpi_yield_when_idle 1` "
    "(all hosts share this machine's two cores, so a busy-polling rank would starve the others). "
    "MPICH: one `mpiexec` with the same stand-in (`-launcher-exec`), its shared memory inside "
    "a host and UCX over TCP across (`UCX_TLS=tcp,self`). The launchers run on host 1.\n\n"
    "Caveats: the hosts share the 2 cores, so the layouts with 4 ranks per host oversubscribe "
    "the machine 6-8 times; the link is a veth pair through a bridge (kernel copies, no wire); "
    "figures are only as quiet as the machine's load (see the load below).\n\n")

HOSTS_OPS = [("allreduce", 8), ("allreduce", 65536), ("bcast", 1048576), ("reduce", 1048576),
             ("alltoall", 1024)]


def hosts_sections(w, st, cfg):
    """Emulated hosts (issue 21): ping-pong across two hosts, Fig. 13 operations per layout."""
    pk, ck = keys_of(st, "hosts_pingpong"), keys_of(st, "hosts_coll")
    if not pk and not ck:
        if cfg.get("hosts_skipped"):
            w("## Emulated hosts (network namespaces)\n\nNot measured: " + cfg["hosts_skipped"] + "\n\n")
        return
    w("## Emulated hosts (network namespaces)\n\n")
    w(HOSTS_SETUP)
    if pk:
        lat, bw = View(st, "hosts_pingpong", 0), View(st, "hosts_pingpong", 1)
        w("### Ping-pong across two hosts (1 rank each)\n\n")
        rows = [[size_label(s)] + impl_cols(lat, s, True)[:4] + impl_cols(bw, s, False)[:4]
                for s in sorted(pk)]
        w(table(rows, ["size", "TMPI us", "Open MPI us", "MPICH us", "TMPI / best (time)",
                       "TMPI MB/s", "Open MPI MB/s", "MPICH MB/s", "TMPI / best (MB/s)"]))
        w("\n")
    cv = View(st, "hosts_coll")
    for nodes, ppn in sorted({(k[1], k[2]) for k in ck}, key=lambda L: (L[0] * L[1], L)):
        w(f"### {nodes} hosts x {ppn} rank{'s' if ppn > 1 else ''} ({nodes * ppn} ranks), us per call\n\n")
        rows = [[op, size_label(size)] + impl_cols(cv, (op, nodes, ppn, size), True,
                                                  bound=lambda c: None)
                for op, size in HOSTS_OPS if (op, nodes, ppn, size) in ck]
        w(table(rows, ["op", "size"] + HDR))
        w("\n")


RMA_OPS = {"put": "Put + flush", "fop": "Fetch_and_op + flush", "halo": "halo exchange + fence"}


# The ping-pong sizes the binding table shows (the figure measures every power of two).
BIND_PP_SIZES = {8, 1024, 65536}


def third_party_note(w, cfg, fig, what):
    """Why a third-party figure has no table (skipped, or its build or run failed)."""
    if cfg.get(fig + "_failed"):
        w(f"{what}: not measured, the build or a TMPI run failed:\n\n```\n{cfg[fig + '_failed']}\n```\n\n")
    elif cfg.get(fig + "_skipped"):
        w(f"{what}: not measured ({cfg[fig + '_skipped']}; see the rerun line at the end).\n\n")


def third_party_sections(w, st, cfg):
    """HPL and the OSU micro-benchmarks (run.py hpl_figure, osu_figure): programs from outside
    this tree, built as their own documentation says."""
    hk = sorted(keys_of(st, "hpl"))
    ok = keys_of(st, "osu_latency") | keys_of(st, "osu_bw")
    ik = sorted(keys_of(st, "ior"))
    ihk = sorted(keys_of(st, "ior_hosts"))
    nk = sorted(keys_of(st, "npb"))
    nhk = sorted(keys_of(st, "npb_hosts"))
    hhk = sorted(keys_of(st, "hpl_hosts"))
    lk = sorted(keys_of(st, "lulesh")) + sorted(keys_of(st, "lulesh_hosts"))
    notes = [f for f in ("hpl", "osu", "ior", "npb", "lulesh")
             if cfg.get(f + "_failed") or cfg.get(f + "_skipped")]
    if not hk and not ok and not ik and not nk and not nhk and not hhk and not lk and not notes:
        return
    w("## Third-party programs, built as their own documentation says\n\n")
    w("Each from one source tree named on the command line, built three ways (tmpicc, "
      "mpicc.openmpi, mpicc.mpich) as its documentation says; nothing of theirs is kept in this tree "
      "(tests/bench/thirdparty.py; how to run them: [THIRDPARTY.md](THIRDPARTY.md)).\n\n")
    if hk:
        w(f"### HPL (GFLOP/s, one problem of order N = {cfg.get('hpl_n')}, NB = {cfg.get('hpl_nb')})\n\n")
        w("HPL's own build: a `Make.<arch>` in a copy of the tree naming the compiler wrapper and "
          "Debian's OpenBLAS (`-lopenblas`, Fortran 77 BLAS interface), `make arch=<arch>`, `xhpl` "
          "reading an HPL.dat of HPL's sample settings on a 2 x 2 grid. "
          f"{' and '.join('`' + e + '`' for e in cfg.get('hpl_env', []))} in every rank for all three "
          "implementations alike (one BLAS thread per rank, as with one rank per core; "
          "otherwise each Open MPI or MPICH process starts a pool as large as the machine). "
          "4 ranks on the 2 cores: oversubscribed. Every run passed HPL's residual check (a "
          "failed one stops the benchmarks). Source: "
          f"`{cfg.get('hpl_src', '?')}`.\n\n")
        for impl, (cc, where) in cfg.get("hpl_build", {}).items():
            w(f"- {LABEL[impl]}: `CC = {rel(cc)}`, {rel(where)}\n")
        w("\n")
        v = View(st, "hpl")
        w(table([[f"{r} ranks, N = {n}"] + impl_cols(v, (r, n), False, bound=lambda c: None)
                 for r, n in hk], ["job"] + HDR))
        w("\n")
    if hhk:
        nodes, ppn = cfg.get("hpl_hosts", ["?", "?"])
        w(f"### HPL on {nodes} x {ppn} emulated hosts (GFLOP/s)\n\n")
        w("The same programs and problem on a 3 x 4 grid, one agent per network namespace (TMPI), "
          "Open MPI and MPICH over TCP between the namespaces (as the emulated-hosts figure), the "
          "same one BLAS thread per rank; 12 ranks on the 2 cores.\n\n")
        v = View(st, "hpl_hosts")
        w(table([[f"{r} ranks, N = {n}"] + impl_cols(v, (r, n), False, bound=lambda c: None)
                 for r, n in hhk], ["job"] + HDR))
        w("\n")
    elif cfg.get("hpl_hosts_skipped"):
        w(f"HPL on emulated hosts: not measured ({cfg['hpl_hosts_skipped']}).\n\n")
    third_party_note(w, cfg, "hpl", "HPL")
    if ok:
        w(f"### OSU micro-benchmarks, 2 ranks on one node (`{' '.join(cfg.get('osu_args', []))}`)\n\n")
        w("Built with `configure CC=WRAPPER CXX=WRAPPER && make` (the C and C++ wrappers of each "
          f"implementation) in a build directory of its own. Source: `{cfg.get('osu_src', '?')}`.\n\n")
        for fig, title, lower in (("osu_latency", "osu_latency (us)", True),
                                  ("osu_bw", "osu_bw (MB/s, OSU's: 10^6 bytes)", False)):
            keys = sorted(keys_of(st, fig))
            if not keys:
                continue
            w(f"{title}:\n\n")
            v = View(st, fig)
            w(table([[size_label(k)] + impl_cols(v, k, lower) for k in keys], ["size"] + HDR))
            w("\n")
    third_party_note(w, cfg, "osu", "OSU micro-benchmarks")
    if ik:
        w(f"### IOR, MPI-IO, {4} ranks on one node (MiB/s, higher is better)\n\n")
        w("Built with `./bootstrap; configure CC=WRAPPER; make` in a copy per implementation; "
          f"`ior -a MPIIO [-c] -t XFER -b 16m -s {cfg.get('ior_segments', '?')} -w -r -e -C -i 1`. "
          f"Source: `{cfg.get('ior_src', '?')}`.\n\n")
        v = View(st, "ior")
        w(table([[f"{'collective' if k[0] else 'independent'} {size_label(k[1])} "
                  f"{'write' if k[2] == 0 else 'read'}"] + impl_cols(v, k, False) for k in ik],
                ["access"] + HDR))
        w("\n")
    if ihk:
        nodes, ppn = cfg.get("ior_hosts", ["?", "?"])
        w(f"### IOR on {nodes} x {ppn} emulated hosts (MiB/s, higher is better)\n\n")
        w("The same programs and arguments, one agent per network namespace (TMPI), Open MPI and "
          "MPICH over TCP between the namespaces (as the emulated-hosts figure); one file "
          "system, this machine's.\n\n")
        v = View(st, "ior_hosts")
        w(table([[f"{'collective' if k[0] else 'independent'} {size_label(k[1])} "
                  f"{'write' if k[2] == 0 else 'read'}"] + impl_cols(v, k, False) for k in ihk],
                ["access"] + HDR))
        w("\n")
    elif cfg.get("ior_hosts_skipped"):
        w(f"IOR on emulated hosts: not measured ({cfg['ior_hosts_skipped']}).\n\n")
    third_party_note(w, cfg, "ior", "IOR")
    if nk:
        w(f"### NAS Parallel Benchmarks 3.4 (s, class {cfg.get('npb_class')}, "
          f"{cfg.get('npb_ranks')} ranks on one node)\n\n")
        w("NPB's own build: `config/make.def` with `MPIFC` the Fortran wrapper "
          f"({', '.join('`' + rel(c) + '`' for c in cfg.get('npb_build', {}).values())}) and `MPICC` "
          "the C one, `make KERNEL NPROCS=4 CLASS=c`; the time is NPB's `Time in seconds`, and every "
          "run printed `Verification = SUCCESSFUL` (one that does not stops the benchmarks). "
          f"Source: `{cfg.get('npb_src', '?')}`.\n\n")
        v = View(st, "npb")
        w(table([[k.upper()] + impl_cols(v, k, True) for k in nk], ["kernel"] + HDR))
        w("\n")
    if nhk:
        nodes, ppn = cfg.get("npb_hosts", ["?", "?"])
        act = cfg.get("npb_hosts_active", {})
        w(f"### NAS Parallel Benchmarks 3.4 on {nodes} x {ppn} emulated hosts (s, class "
          f"{cfg.get('npb_class')})\n\n")
        w("The same programs, one agent per network namespace (TMPI), Open MPI and MPICH over "
          "TCP between the namespaces (as the emulated-hosts figure), ranks filling the hosts in "
          "order. `NPB_NPROCS_STRICT=off`: a kernel that takes fewer ranks than the job's computes "
          "on the largest count it takes (active) and leaves the others idle.\n\n")
        v = View(st, "npb_hosts")
        w(table([[k.upper(), str(act.get(k, "?"))] + impl_cols(v, k, True) for k in nhk],
                ["kernel", "active"] + HDR))
        w("\n")
    elif cfg.get("npb_hosts_skipped"):
        w(f"NPB on emulated hosts: not measured ({cfg['npb_hosts_skipped']}).\n\n")
    third_party_note(w, cfg, "npb", "NPB")
    if lk:
        nodes, ppn = cfg.get("lulesh_hosts", ["?", "?"])
        w(f"### LULESH 2.0 (figure of merit, zones a second, higher is better; "
          f"`{' '.join(cfg.get('lulesh_args', []))}`)\n\n")
        w("LULESH's own Makefile with `MPICXX` the C++ wrapper "
          f"({', '.join('`' + rel(c) + '`' for c in cfg.get('lulesh_build', {}).values())}) and "
          "its flags for a build without OpenMP (one thread per rank); its decomposition needs a "
          f"cube of ranks: {cfg.get('lulesh_ranks', '?')} on one node, {nodes} x {ppn} on emulated "
          "hosts (one agent per network namespace for TMPI, TCP between the namespaces for Open "
          "MPI and MPICH). Every run's symmetry check (MaxRelDiff) showed round-off only (one "
          f"that does not stops the benchmarks). Source: `{cfg.get('lulesh_src', '?')}`.\n\n")
        rows = [[f"{r} ranks on one node, {sz}^3 zones a rank"] +
                impl_cols(View(st, "lulesh"), (r, sz), False)
                for r, sz in sorted(keys_of(st, "lulesh"))]
        rows += [[f"{r} ranks on {nodes} x {ppn} hosts, {sz}^3 zones a rank"] +
                 impl_cols(View(st, "lulesh_hosts"), (r, sz), False)
                 for r, sz in sorted(keys_of(st, "lulesh_hosts"))]
        w(table(rows, ["job"] + HDR))
        w("\n")
    if cfg.get("lulesh_hosts_skipped"):
        w(f"LULESH on emulated hosts: not measured ({cfg['lulesh_hosts_skipped']}).\n\n")
    third_party_note(w, cfg, "lulesh", "LULESH")


def binding_sections(w, st, cfg):
    """TMPI's tmpi-launch --bind-to choices (figure binding), us per hop."""
    keys = [k for k in keys_of(st, "binding") if k[0] != "pingpong" or k[2] in BIND_PP_SIZES]
    if not keys:
        return
    w("## Binding: `tmpi-launch --bind-to` (TMPI only; us per hop)\n\n")
    w("The default binds to core when the threads that run a node's ranks fit its cores and "
      "binds nothing otherwise (tmpi-launch(1) \"Binding\"): here the 2-rank jobs' default and "
      "the 16-rank ring on carriers' default (rank_switching auto: one carrier thread per CPU, "
      "pinned one per core) are `core`; the 16-rank ring with a thread per rank "
      "(`TMPI_RANK_SWITCHING=kernel`) defaults to `none`, and `--bind-to core` pins 8 rank "
      "threads to each core. Runs alternate default, core, none.")
    if cfg.get("load"):
        w(f" Load average before the runs: {cfg['load'][0]:.1f} / {cfg['load'][1]:.1f} / "
          f"{cfg['load'][2]:.1f} (min / median / max).")
    w("\n\n")
    v = View(st, "binding")
    names = ["default", "core", "none"]
    order = ["pingpong", "ring", "ring, a thread per rank"]
    rows = []
    for key in sorted(keys, key=lambda k: (order.index(k[0]) if k[0] in order else 9, k[1], k[2])):
        rows.append([key[0], key[1], size_label(key[2])] + [v.cell(n, key) for n in names])
    w(table(rows, ["job", "ranks", "size"] + ["`--bind-to " + n + "`" if n != "default" else "default"
                                                for n in names]))
    w("\n")


def rma_sections(w, st):
    """One-sided communication (figures rma and net_rma), us per operation."""
    for fig, title in (("rma", "one node (2 ranks)"), ("net_rma", "across nodes (2 nodes x 1 rank)")):
        keys = keys_of(st, fig)
        if not keys:
            continue
        w(f"## One-sided communication, {title} (us per operation)\n\n")
        w("Rank 0 is the origin and rank 1 the target, inside one MPI_Win_lock_all epoch (Put, "
          "Fetch_and_op: each followed by MPI_Win_flush); the halo exchange puts 8 KiB into each "
          "ring neighbour and closes with MPI_Win_fence. Windows from MPI_Win_allocate and from "
          "MPI_Win_create on malloc'd memory.\n\n")
        v = View(st, fig)
        rows = [[RMA_OPS.get(op, op), win, size_label(size)] + impl_cols(v, (op, win, size), True)
                for op, win, size in sorted(keys, key=lambda k: (list(RMA_OPS).index(k[0]) if k[0] in RMA_OPS else 9, k[1], k[2]))]
        w(table(rows, ["operation", "window", "size"] + HDR))
        w("\n")


def coll_order(x):
    return (["barrier", "bcast", "reduce", "allreduce"].index(x[0]),
            ["-", "fixed", "rotate", "combo"].index(x[1]), x[2])


def mb(kb):
    return f"{kb / 1000:.1f}" if kb else "–"


def sizes(lo, hi):
    s, r = lo, []
    while s <= hi:
        r.append(s)
        s *= 2
    return r


def coll_plot(outdir, cv, opkeys):
    ranks = [2, 4, 8, 16]
    panels = [("barrier", "-", 0, "Barrier"), ("bcast", "rotate", 8, "Bcast 8 B, rotating root"),
              ("reduce", "rotate", 8, "Reduce 8 B, rotating root"), ("allreduce", "-", 8, "Allreduce 8 B")]
    s = "set terminal pngcairo size 1100,800 font 'DejaVu Sans,10'\n"
    s += f"set output '{os.path.join(outdir, 'coll.png')}'\nset multiplot layout 2,2\nset grid\n"
    s += "set datafile missing '?'\nset logscale y\nset logscale x 2\nset key top left\n"
    for op, root, size, title in panels:
        name = f"coll_{op}_{root if root != '-' else 'none'}"
        dat = write_dat(outdir, name, ranks, [lambda k, i=i: cv.med(i, (op, root, k, size)) for i in IMPLS])
        s += f"set title '{title}'\nset xlabel 'ranks (2 cores)'\nset ylabel 'us per call'\n"
        s += "plot " + ", ".join(f"'{dat}' using 1:{j + 2} with linespoints lw 2 title '{LABEL[i]}'"
                                 for j, i in enumerate(IMPLS)) + "\n"
    s += "unset multiplot\n"
    gp = os.path.join(outdir, "data", "coll.gp")
    with open(gp, "w") as f:
        f.write(s)
    subprocess.run(["gnuplot", gp], check=False, cwd=os.path.join(outdir, "data"))


# Short reasons for missed targets, from the profiles in docs/bench/ANALYSIS.md.
WHY = {
    "pp8": "a message is one fast-box cell moving between the cores, ~0.04 us above a bare "
           "cache-line ping-pong here; a miss means a noisy run; ANALYSIS.md 1",
    "ring": "with rank_switching = kernel each hop is a kernel context switch through "
            "sched_yield (86% of cycles in finish_task_switch); the default (auto) runs 16 ranks "
            "on carriers and switches in user space; ANALYSIS.md 2",
    "allreduce16": "two counting barriers per call, each needs all 16 ranks scheduled; ANALYSIS.md 3",
    "mm": "compute-bound: the best peer already runs at {peer:.0%} of two cores' worth of its own "
          "1-rank rate, so 1.5x of it would be {need:.0%} of TMPI's; TMPI reaches {got:.0%}; ANALYSIS.md 4",
    "ge": "two synchronisations per Bcast, each a full schedule of 16 ranks; ANALYSIS.md 5",
    "net8": "both sides are the kernel's loopback TCP (84 % of the rank's cycles are in the "
            "kernel); the waiting rank's spin reads its links and yields between polls (agents "
            "on one machine do not see each other's ranks); ANALYSIS.md 7",
    "netbw": "the same loopback TCP path as the peers (one copy in, one out) plus an RTS/CTS "
             "round trip; 1.3x needs fewer copies than TCP allows; ANALYSIS.md 7",
}


def target_rows(st, cfg):
    rows = []
    best = lambda v, key, lower: (min if lower else max)(
        [x for x in (v.med(p, key) for p in PEERS) if x is not None] or [None]) \
        if any(v.med(p, key) is not None for p in PEERS) else None

    def verdict(ok, text):
        return ("met" if ok else "**missed**") + (f" ({text})" if text else "")

    pp = View(st, "pingpong", 0)
    t, o = pp.med("tmpi", 8), best(pp, 8, True)
    if t and o:
        f = o / t
        rows.append(["intra-node ping-pong 8 B latency (us)", fmt(t), fmt(pp.med("ompi", 8)), fmt(pp.med("mpich", 8)),
                     ">= 1.2x lower", f"{f:.2f}x lower" if f >= 1 else f"{1 / f:.2f}x higher",
                     verdict(f >= 1.2, "" if f >= 1.2 else f"TMPI needs {t - o / 1.2:.3f} us less; " + WHY.get("pp8", ""))])
    bw = View(st, "pingpong", 1)
    k = 4 << 20
    t, o = bw.med("tmpi", k), best(bw, k, False)
    if t and o:
        f = t / o
        rows.append(["intra-node ping-pong 4 MiB bandwidth (MB/s)", fmt(t), fmt(bw.med("ompi", k)),
                     fmt(bw.med("mpich", k)), ">= 1.5x higher", f"{f:.2f}x",
                     verdict(f >= 1.5, WHY.get("bw", "") if f < 1.5 else "")])
    rows += net_target_rows(st, best, verdict)
    hv = View(st, "halo")
    for key in sorted({k[2] for k in st["values"] if k[0] == "halo" and k[1] == "tmpi"}):
        t, o = hv.med("tmpi", key), best(hv, key, True)
        if t and o:
            f = o / t
            rows.append([f"halo exchange, {key[0]} ranks, N = {key[1]} (us)", fmt(t), fmt(hv.med("ompi", key)),
                         fmt(hv.med("mpich", key)), ">= 2x faster than the best other", f"{f:.2f}x",
                         verdict(f >= 2, "")])
    rg = View(st, "ring")
    cv = View(st, "coll")
    for P in (16,):
        t, o = rg.med("tmpi", P), rg.med("ompi", P)
        if t and o:
            f = o / t
            rows.append([f"{P} ranks on 2 cores: ring hop (us)", fmt(t), fmt(o), rg.cell("mpich", P),
                         ">= 4x faster than Open MPI", f"{f:.2f}x", verdict(f >= 4, WHY.get("ring", "") if f < 4 else "")])
        key = ("allreduce", "-", P, 8)
        t, o = cv.med("tmpi", key), cv.med("ompi", key)
        if t and o:
            f = o / t
            rows.append([f"{P} ranks on 2 cores: 8 B Allreduce (us)", fmt(t), fmt(o), cv.cell("mpich", key),
                         ">= 4x faster than Open MPI", f"{f:.2f}x",
                         verdict(f >= 4, WHY.get("allreduce16", "") if f < 4 else "")])
    rows += net_allreduce_rows(st, verdict)
    lv = View(st, "launch")
    t, o = lv.med("tmpi", 64), lv.med("ompi", 64)
    if t and o:
        f = o / t
        rows.append(["hello job, 64 ranks, warm agent (s)", fmt(t), fmt(o), fmt(lv.med("mpich", 64)),
                     ">= 20x faster than Open MPI", f"{f:.0f}x", verdict(f >= 20, WHY.get("launch", "") if f < 20 else "")])
    big = max([k[2] for k in st["values"] if k[0] == "launch" and k[1] == "tmpi"] or [0])
    if big:
        tb = lv.med("tmpi", big)
        peer_big = {p: max([k[2] for k in st["values"] if k[0] == "launch" and k[1] == p] or [0]) for p in PEERS}
        rows.append(["largest hello job in 60 s (ranks)", f"{big} ({fmt(tb)} s)",
                     str(peer_big["ompi"]), str(peer_big["mpich"]), "4096 ranks",
                     f"{big}", verdict(big >= 4096 and tb < 60, "")])
    mv = View(st, "memory")
    a = mv.med("tmpi", (64, "agent_rss"))
    sums = [mv.med(p, (64, "ranks_pss")) for p in PEERS]
    sums = [s for s in sums if s]
    if a and sums:
        f = a / min(sums)
        rows.append(["memory at 64 ranks (MB)", f"{a / 1000:.1f} agent RSS",
                     mb(mv.med("ompi", (64, "ranks_pss"))) + " PSS sum", mb(mv.med("mpich", (64, "ranks_pss"))) + " PSS sum",
                     "agent RSS <= 1/10 of the sum of PSS", f"1/{1 / f:.1f}", verdict(f <= 0.1, WHY.get("mem", "") if f > 0.1 else "")])
    hv = View(st, "hpl")
    for key in sorted(k for k in keys_of(st, "hpl") if k[0] == 4):
        t, o = hv.med("tmpi", key), hv.med("ompi", key)
        if t and o:
            # issue 31: OpenBLAS in a TMPI rank is one library of the job host
            rows.append([f"HPL, 4 ranks, N = {key[1]}, Debian's OpenBLAS (GFLOP/s)", fmt(t), fmt(o),
                         hv.cell("mpich", key, False), ">= Open MPI (issue 31)", f"{t / o:.2f}x",
                         verdict(t >= o, "")])
    # issue 37: applications at least 1.2x the better peer, on one node and on emulated hosts
    for fig, what, unit in [("hpl_hosts", "HPL, {0} ranks on 3 x 4 emulated hosts, N = {1}", "GFLOP/s"),
                            ("lulesh", "LULESH, {0} ranks on one node, {1}^3 zones a rank", "z/s"),
                            ("lulesh_hosts", "LULESH, {0} ranks on 3 x 9 emulated hosts, {1}^3 zones a rank",
                             "z/s")]:
        av = View(st, fig)
        for key in sorted(keys_of(st, fig)):
            t = av.med("tmpi", key)
            peers = [x for x in (av.med(p, key) for p in PEERS) if x]
            if t and peers:
                peer = max(peers)
                rows.append([what.format(*key) + f" ({unit})", fmt(t), av.cell("ompi", key, False),
                             av.cell("mpich", key, False), ">= 1.2x the better peer (issue 37)",
                             f"{t / peer:.2f}x", verdict(t >= 1.2 * peer, "")])
    for prog, name in [("mm", "matrix multiply"), ("ge", "Gaussian elimination")]:
        v = View(st, prog)
        t = v.med("tmpi", 16)
        o = best(v, 16, False)
        capped = [p for p in PEERS if v.med(p, 16) is None and v.cap(p, 16) not in (None, "failed")]
        if t and o:
            f = t / o
            rows.append([f"{name}, 16 ranks (MFLOP/s)", fmt(t), v.cell("ompi", 16, False, lambda c: None),
                         v.cell("mpich", 16, False, lambda c: None),
                         ">= 1.5x MFLOP/s", f"{f:.2f}x", verdict(f >= 1.5, why_flops(v, prog, t, o) if f < 1.5 else "")])
    return rows


def why_flops(v, prog, t, o):
    """The reason for a missed MFLOP/s target, measured against the machine's ceiling: two
    cores running the 1-rank rate (nothing is sent at 1 rank)."""
    why = WHY.get(prog, "")
    one_t = v.med("tmpi", 1)
    one_o = max([x for x in (v.med(p, 1) for p in PEERS) if x] or [0])
    if "{" not in why:
        return why
    if not one_t or not one_o:
        return why.split(": ")[0]
    return why.format(peer=o / (2 * one_o), need=1.5 * o / (2 * one_t), got=t / (2 * one_t))


def net_target_rows(st, best, verdict):
    """Inter-node 8 B latency (no worse than the best peer, aim 0.7x) and 4 MiB bandwidth
    (>= 1.3x the best peer), 2 nodes x 1 rank."""
    rows = []
    pp = View(st, "net_pingpong", 0)
    t, o = pp.med("tmpi", 8), best(pp, 8, True)
    if t and o:
        f = t / o
        aim = "aim 0.7x reached" if f <= 0.7 else f"aim 0.7x not reached: TMPI needs {t - 0.7 * o:.2f} us less"
        rows.append(["inter-node ping-pong 8 B latency, 2 nodes x 1 rank (us)", fmt(t),
                     fmt(pp.med("ompi", 8)), fmt(pp.med("mpich", 8)),
                     "<= best peer (aim 0.7x)", f"{f:.2f}x of best",
                     verdict(f <= 1.0, aim if f <= 1.0 else f"TMPI needs {t - o:.2f} us less; {aim}; {WHY['net8']}")])
    bw = View(st, "net_pingpong", 1)
    k = 4 << 20
    t, o = bw.med("tmpi", k), best(bw, k, False)
    if t and o:
        f = t / o
        rows.append(["inter-node ping-pong 4 MiB bandwidth, 2 nodes x 1 rank (MB/s)", fmt(t),
                     fmt(bw.med("ompi", k)), fmt(bw.med("mpich", k)), ">= 1.3x higher", f"{f:.2f}x",
                     verdict(f >= 1.3, "" if f >= 1.3 else WHY["netbw"])])
    return rows


def net_allreduce_rows(st, verdict):
    """Seed 002 Allreduce (one int, latency-bound like 8 B) across nodes against Open MPI:
    3 x 4 at least 3x faster, 3 x 1 no slower. A capped Open MPI run gives a lower bound."""
    rows = []
    av = View(st, "net_allreduce1000")
    for (n, k), want, text in [((3, 4), 3.0, ">= 3x faster than Open MPI"),
                               ((3, 1), 1.0, "no slower than Open MPI")]:
        t, o, c = av.med("tmpi", (n, k)), av.med("ompi", (n, k)), av.cap("ompi", (n, k))
        if not t:
            continue
        if o:
            f = o / t
            got = f"{f:.2f}x" + (f" (TMPI {1 / f:.1f}x slower)" if f < 1 else "")
        elif c not in (None, "failed"):
            f = c * 1e6 / 1000 / t
            got = f"> {f:.2f}x (Open MPI capped)"
        else:
            continue
        rows.append([f"Allreduce, {n} hosts x {k} rank{'s' if k > 1 else ''} (seed 002, one int; us)",
                     fmt(t), av.cell("ompi", (n, k), True, lambda c: c * 1e6 / 1000),
                     av.cell("mpich", (n, k), True, lambda c: c * 1e6 / 1000), text, got,
                     verdict(f >= want, "")])
    return rows


# ---------------------------------------------------------------------------- machine state

STATE_SPLIT = 1.5  # the fastest probe at least this many times the slowest: two states
STATE_GAP = 1.3    # ... and one gap between neighbouring probes at least this ratio
STATE_MIN = 2      # ... with at least this many probes on each side of it


def state_threshold(probes):
    """The memcpy GB/s that splits the probes into a slow and a fast state: the geometric middle
    of the largest gap (as a ratio) between consecutive sorted probes; None when the probes do
    not spread by STATE_SPLIT, or the gap is a drift rather than a jump (under STATE_GAP), or
    one side holds fewer than STATE_MIN probes (an outlier is not a state: a run of 08:36 had
    114 probes at 8.1-12.9 GB/s and one at 13.4, and was reported as 114 slow rounds)."""
    p = sorted(x for x in probes if x)
    if len(p) < 2 * STATE_MIN or p[-1] < STATE_SPLIT * p[0]:
        return None
    i = max(range(STATE_MIN - 1, len(p) - STATE_MIN), key=lambda j: p[j + 1] / p[j])
    if p[i + 1] < STATE_GAP * p[i]:
        return None
    return (p[i] * p[i + 1]) ** 0.5


def state_of(gbps, threshold):
    if gbps is None:
        return "unprobed"
    if threshold is None:
        return "one state"
    return "fast" if gbps >= threshold else "slow"


# figures whose value is a rate, with its unit: higher is better
STATE_HIGHER = {"mm": "MFLOP/s", "ge": "MFLOP/s", "hpl": "GFLOP/s", "hpl_hosts": "GFLOP/s",
                "lulesh": "z/s", "lulesh_hosts": "z/s", "osu_bw": "MB/s"}


def state_section(w, store, cfg):
    """Per machine state, the median of every point for each implementation and TMPI's ratios, so
    that no figure is read off the wrong state (run.py's docstring: the probe)."""
    probes = getattr(store, "probes", {})
    allp = cfg.get("probes") or [g for v in probes.values() for g in v if g]
    if not allp:
        return
    th = state_threshold(allp)
    w("## Ratios by machine state\n\n")
    w(f"Before each round of a series a 1-second memcpy probe (tests/bench/memprobe.c, 64 MiB buffers) "
      f"measured {len(allp)} times between {min(allp):.2f} and {max(allp):.2f} GB/s (median "
      f"{statistics.median(allp):.2f}). ")
    if th is None:
        w(f"No jump divides them (a gap of {STATE_GAP}x between neighbouring probes with at least "
          f"{STATE_MIN} on each side, and {STATE_SPLIT}x between the extremes): the machine stayed in "
          "one state, and the tables above hold for it.\n\n")
    else:
        nf = sum(1 for x in allp if x >= th)
        w(f"They split at {th:.2f} GB/s (the largest gap): {nf} rounds in the fast state, "
          f"{len(allp) - nf} in the slow one. Each value below is the median over the rounds of one "
          "state only; ratios are TMPI / other as above (times: below 1 means TMPI is faster; "
          "MFLOP/s: above 1).\n\n")
    groups = {}
    for (fig, impl, key), vals in store.values.items():
        pr = probes.get((fig, impl, key), [None] * len(vals))
        for v, g in zip(vals, pr):
            x = v[0] if isinstance(v, (tuple, list)) else v
            groups.setdefault((fig, key), {}).setdefault(state_of(g, th), {}).setdefault(impl, []).append(x)
    rows = []
    try:  # keys of one figure are alike (sizes, rank counts, tuples of them)
        order = sorted(groups)
    except TypeError:
        order = sorted(groups, key=lambda fk: (fk[0], str(fk[1])))
    for (fig, key) in order:
        for state in sorted(groups[(fig, key)]):
            if state == "unprobed":  # figures outside run_series (launch, memory): no state
                continue
            by = groups[(fig, key)][state]
            m = {i: statistics.median(by[i]) if by.get(i) else None for i in IMPLS}
            ratio = lambda o: fmt(m["tmpi"] / m[o]) if m["tmpi"] and m[o] else "-"
            unit = STATE_HIGHER.get(fig, "us")
            rows.append([fig, str(key), state, unit] + [fmt(m[i]) if m[i] is not None else "-" for i in IMPLS]
                        + [ratio("ompi"), ratio("mpich")])
    w(table(rows, ["figure", "point", "state", "unit"] + [LABEL[i] for i in IMPLS]
                  + ["TMPI/Open MPI", "TMPI/MPICH"]))
    w("\n")


if __name__ == "__main__":
    # The report again from tests/bench/results (raw.json and config.json), e.g. after a change
    # to this file: `tests/bench/report.py [OUTDIR]`.
    sys.path.insert(0, HERE)
    import run as runmod
    resdir = os.path.join(HERE, "results")
    with open(os.path.join(resdir, "config.json")) as f:
        cfg = json.load(f)
    st = runmod.Store()
    st.merge(os.path.join(resdir, "raw.json"))
    im = runmod.Impls(os.path.join(TOP, "build"), os.path.join(TOP, "build", "bench"), "$SOCK")
    write(st, cfg, im, sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "docs", "bench"), cfg["quick"])
