#!/usr/bin/env python3
"""The data plane between nodes on each transport, side by side in one alternating run.

    tests/bench/fabric.py [--build DIR] [--runs N] [--provider tcp] [--quick] [--results FILE]
                          [--eager] [--no-ompi]

Rows (issue 36): ping-pong 8 B .. 4 MiB across two agents on loopback (2 x 1 ranks), Allreduce
on 3 nodes x 4 ranks (8 B and 64 KiB), Put + flush (8 B and 1 MiB, Win_allocate) across two
agents; for TMPI over TCP (TMPI_TRANSPORT=tcp), TMPI over libfabric (TMPI_TRANSPORT=ofi with
FI_PROVIDER=PROVIDER), and Open MPI on this machine over its TCP path (--mca btl self,tcp) and
its OFI path (--mca pml cm --mca mtl ofi, the same provider), when mpirun is installed.
Rounds alternate the implementations; every figure is the median of its runs.  Nothing here
asserts a time; a markdown table goes to stdout, and with --results into that file's
section between fabric.py's markers (docs/bench/RESULTS.md; report.py keeps it).  --eager
adds a ping-pong side "tmpi-ofi-eager": TMPI over OFI on agents started with
FI_OFI_RXM_BUFFER_SIZE raised so that frames up to 64 KiB go eager (one message) instead of by
the rendezvous read that 16-64 KiB take by default on ofi_rxm (what that costs).  Programs are tests/bench's, built by each
implementation's own compiler wrapper.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the bench driver's agents, runner and parser)

PP_SIZES = [8, 1024, 16384, 32768, 65536, 1048576, 4194304]
# ofi_rxm's buffer that lets 64 KiB of payload go eager (tp_ofi.c eager_limit: the buffer less
# the prefix, the frame header and rxm's own header reserve)
EAGER64_RXM_BUFFER = 65536 + 16 + 80 + 128


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(run.TOP, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--provider", default="tcp")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--results", metavar="FILE", help="RESULTS.md: its transports section is replaced")
    ap.add_argument("--eager", action="store_true", help="add the tmpi-ofi-eager ping-pong side")
    ap.add_argument("--no-ompi", action="store_true", help="leave Open MPI out")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = tempfile.mkdtemp(prefix="fabric.")
    T = "0.2" if a.quick else "0.5"
    bins = {}
    tmpicc = os.path.join(build, "launcher", "tmpicc")
    have_ompi = shutil.which("mpirun") and shutil.which("mpicc") and not a.no_ompi
    for impl, cc in [("tmpi", tmpicc)] + ([("ompi", "mpicc")] if have_ompi else []):
        d = os.path.join(work, impl)
        os.makedirs(d)
        for p in ["pingpong", "coll", "rma"]:
            run.sh([cc] + run.CFLAGS + ["-I", run.HERE, "-o", os.path.join(d, p),
                                        os.path.join(run.HERE, p + ".c"), "-lm"])
        bins[impl] = d
    cluster = run.Cluster(build, work, 3)
    eager_cluster = None
    if a.eager:  # libfabric reads FI_* in the job hosts, which have their agent's environment
        os.environ["FI_OFI_RXM_BUFFER_SIZE"] = str(EAGER64_RXM_BUFFER)
        try:
            eager_cluster = run.Cluster(build, work, 2)
        finally:
            del os.environ["FI_OFI_RXM_BUFFER_SIZE"]
    env_base = dict(os.environ)
    env_base.pop("TMPI_TRANSPORT", None)

    def job(side, nodes, ppn, prog, args):
        impl, net = side
        env = dict(env_base)
        exe = os.path.join(bins[impl], prog)
        if impl == "tmpi":
            cl = eager_cluster if net == "ofi-eager" else cluster
            net = "ofi" if net == "ofi-eager" else net
            env["TMPI_TRANSPORT"] = net
            if net == "ofi":
                env["FI_PROVIDER"] = a.provider
            cmd = [os.path.join(build, "launcher", "tmpi-launch"), "--agent", cl.sock,
                   "--hostfile", cl.hostfile(nodes, ppn), "--ppn", str(ppn),
                   "-n", str(nodes * ppn), exe] + args
        else:
            mca = (["--mca", "btl", "self,tcp", "--mca", "pml", "ob1"] if net == "tcp" else
                   ["--mca", "pml", "cm", "--mca", "mtl", "ofi", "--mca", "mtl_ofi_provider_include",
                    a.provider])
            env["OMPI_ALLOW_RUN_AS_ROOT"] = env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
            if net == "ofi":
                env["FI_PROVIDER"] = a.provider
            cmd = ["mpirun", "--oversubscribe", "-n", str(nodes * ppn)] + mca + \
                  ["--mca", "osc", "pt2pt" if net == "tcp" else "rdma"] + [exe] + args
        rc, so, se, _ = run.run_cmd(cmd, 300, env=env)
        if rc != 0:
            run.log(f"{impl}-{net} {prog} failed ({rc}): {se[-400:]}")
            return []
        return run.parse_results(so)

    sides = [("tmpi", "tcp"), ("tmpi", "ofi")] + ([("tmpi", "ofi-eager")] if a.eager else []) + \
        ([("ompi", "tcp"), ("ompi", "ofi")] if have_ompi else [])
    vals = {}
    try:
        for i in range(a.runs):
            for side in sides:
                name = f"{side[0]}-{side[1]}"
                for r in job(side, 2, 1, "pingpong", ["-t", T, "-min", "8", "-max", "4194304"]):
                    if int(r["size"]) in PP_SIZES:
                        vals.setdefault(("pingpong us", int(r["size"]), name), []).append(r["usec"])
                if side[1] == "ofi-eager":  # ping-pong only: what the eager limit changes
                    run.log(f"round {i + 1}/{a.runs}: {name} done")
                    continue
                for r in job(side, 3, 4, "coll", ["-t", T, "-p", "allreduce:8,allreduce:65536"]):
                    if r.get("op") == "allreduce":
                        vals.setdefault(("allreduce 3x4 us", int(r["size"]), name), []).append(r["usec"])
                for r in job(side, 2, 1, "rma", ["-t", T, "-w", "allocate"]):
                    if r.get("op") == "put":
                        vals.setdefault(("put+flush us", int(r["size"]), name), []).append(r["usec"])
                run.log(f"round {i + 1}/{a.runs}: {name} done")
    finally:
        cluster.stop()
        if eager_cluster:
            eager_cluster.stop()
    names = [f"{s[0]}-{s[1]}" for s in sides]
    out = []
    out.append(f"Provider {a.provider}; median of {a.runs} alternating runs; load "
               f"{min(x for x in run.LOADS if x is not None):.1f}-{max(x for x in run.LOADS if x is not None):.1f}\n")
    out.append("| row | size | " + " | ".join(names) + " | tmpi ofi/tcp |")
    out.append("|---|---|" + "---|" * (len(names) + 1))
    for row, size in sorted({(k[0], k[1]) for k in vals}):
        cells = []
        med = {}
        for n in names:
            v = vals.get((row, size, n))
            med[n] = statistics.median(v) if v else None
            cells.append(f"{med[n]:.3g}" if v else "-")
        ratio = (f"{med['tmpi-ofi'] / med['tmpi-tcp']:.2f}"
                 if med.get("tmpi-ofi") and med.get("tmpi-tcp") else "-")
        out.append(f"| {row} | {size} | " + " | ".join(cells) + f" | {ratio} |")
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if a.results:
        write_section(a.results, text, a)


SEAM_BEGIN = "<!-- tests/bench/ab.py seam: begin -->\n"
SEAM_END = "<!-- tests/bench/ab.py seam: end -->\n"


def write_section(path, table, a):
    """Replaces (or adds, before "## Machine and versions") the transports section of path."""
    import report
    head = ("## Transports between nodes: TCP and libfabric (issue 36)\n\n"
            "`tests/bench/fabric.py` (run by `make bench` after the figures above): agents on "
            "loopback, TMPI over its TCP data plane and over libfabric (`TMPI_TRANSPORT=ofi`, "
            f"`FI_PROVIDER={a.provider}`), Open MPI over TCP (`--mca btl self,tcp`) and over "
            f"its OFI path (`--mca pml cm --mca mtl ofi`, the same provider). Ping-pong: 2 nodes x "
            "1 rank, half round trip; Allreduce: 3 nodes x 4 ranks; Put + flush: 2 nodes x 1 rank, "
            "Win_allocate. us; lower is better. Why OFI is slower here: ANALYSIS.md, \"Transports\".\n\n")
    try:
        text = open(path).read()
    except OSError:
        text = ""
    i, j = text.find(report.FABRIC_BEGIN), text.find(report.FABRIC_END)
    # the seam's before/after figures (tests/bench/ab.py, issue 36) stay with the section
    kept = ""
    if 0 <= i < j:
        a_, b_ = text.find(SEAM_BEGIN, i, j), text.find(SEAM_END, i, j)
        if 0 <= a_ < b_:
            kept = "\n" + text[a_:b_ + len(SEAM_END)]
    sec = report.FABRIC_BEGIN + head + table + kept + report.FABRIC_END
    if 0 <= i < j:
        text = text[:i] + sec + text[j + len(report.FABRIC_END):]
    else:
        k = text.find("## Machine and versions")
        text = text[:k] + sec + "\n" + text[k:] if k >= 0 else text + "\n" + sec
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
