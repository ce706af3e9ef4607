#!/usr/bin/env python3
"""soak.py — two users' mixed jobs across 3 emulated hosts with packet loss, for an hour.

Part of `make bench`, not of CI (docs/RELIABILITY.md, "Soak").  Needs root: it makes three
network namespaces (hosts 192.0.2.1-3, the documentation range), each with a TUN device, and
forwards IPv4 packets between them itself, dropping --loss of them at random (the kernel here
may have no netem or tc actions, so the loss is injected in user space, on every packet in
both directions).  One agent runs in each namespace; two throwaway users submit, each in a
loop until --minutes are over, a mix of jobs:

  - nothing_lost across the 3 hosts (tests/mpi/nothing_lost.c: every message checked for loss,
    duplication and order), submitted to host 1;
  - ring across the 3 hosts, submitted to host 2;
  - hello on one host (host 3), 4 ranks.

Every job must end with status 0 (nothing_lost printing OK).  Every --sample seconds the
agents' resident memory and open descriptors are recorded; after the run they must be flat:
memory growth from the first sample after the warm-up to the last within --rss-slack MiB,
descriptors of the idle agents (before the first job, after the last) within --fd-slack.  Prints a report (and writes it to --report); exit status 1 when a
job failed or memory or descriptors grew.  Everything it makes (namespaces, users, agents) is
removed by name of its own making and by PID.
"""
import argparse
import ctypes
import fcntl
import os
import random
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
CLONE_NEWNET = 0x40000000
NHOSTS = 3
PORT = 7470


def sh(*args, check=True):
    return subprocess.run(args, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def setns(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + path)
    finally:
        os.close(fd)


class Net:
    """Three namespaces, a TUN device in each, and the lossy forwarder between them."""

    def __init__(self, tag, loss):
        self.ns = ["tmpisoak%s_%d" % (tag, i + 1) for i in range(NHOSTS)]
        self.loss = loss
        self.fds = []
        self.stats = {"forwarded": 0, "dropped": 0}
        self.stop = False
        # None, or drop(pkt, src, dst) -> True to drop that packet (hosts 0..NHOSTS-1), asked
        # before the random loss: a test's faults aimed at one connection
        self.drop = None

    def up(self):
        own = os.open("/proc/self/ns/net", os.O_RDONLY)
        try:
            for i, ns in enumerate(self.ns):
                sh("ip", "netns", "add", ns)
                # the forwarder (this thread) opens the device inside the namespace
                setns("/run/netns/" + ns)
                fd = os.open("/dev/net/tun", os.O_RDWR)
                fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"tsoak", IFF_TUN | IFF_NO_PI))
                self.fds.append(fd)
                libc = ctypes.CDLL(None, use_errno=True)
                libc.setns(own, CLONE_NEWNET)
                for cmd in (["addr", "add", "192.0.2.%d/24" % (i + 1), "dev", "tsoak"],
                            ["link", "set", "tsoak", "up"], ["link", "set", "lo", "up"]):
                    sh("ip", "-n", ns, *cmd)
        finally:
            os.close(own)
        threading.Thread(target=self.forward, daemon=True).start()

    def forward(self):
        by_fd = {fd: i for i, fd in enumerate(self.fds)}
        rnd = random.Random(1)
        while not self.stop:
            r, _, _ = select.select(self.fds, [], [], 0.5)
            for fd in r:
                try:
                    pkt = os.read(fd, 65536)
                except OSError:
                    continue
                if len(pkt) < 20 or pkt[0] >> 4 != 4:
                    continue
                dst = pkt[19]  # 192.0.2.N
                if not 1 <= dst <= NHOSTS or dst - 1 == by_fd[fd]:
                    continue
                if (self.drop and self.drop(pkt, by_fd[fd], dst - 1)) or rnd.random() < self.loss:
                    self.stats["dropped"] += 1
                    continue
                self.stats["forwarded"] += 1
                try:
                    os.write(self.fds[dst - 1], pkt)
                except OSError:
                    pass

    def down(self):
        self.stop = True
        for fd in self.fds:
            os.close(fd)
        for ns in self.ns:
            sh("ip", "netns", "del", ns, check=False)


def start_agent(build, net, i, sock, key, log, level="notice", config=None):
    """Starts tmpid on emulated host i (0-based) of net, listening on 192.0.2.(i+1):PORT, its
    output to the open file log; returns the Popen once the agent said READY=1."""
    r, w = os.pipe()
    cmd = ["ip", "netns", "exec", net.ns[i], os.path.join(build, "agent", "tmpid"), "--socket",
           sock, "--name", "h%d" % (i + 1), "--listen", "192.0.2.%d:%d" % (i + 1, PORT),
           "--key-file", key, "--log-level", level, "--ready-fd", str(w)]
    if config:
        cmd += ["--config", config]
    p = subprocess.Popen(cmd, pass_fds=(w,), stdout=log, stderr=subprocess.STDOUT)
    os.close(w)
    ready = os.read(r, 64)
    os.close(r)
    if b"READY=1" not in ready:
        p.kill()
        p.wait()
        raise RuntimeError("agent h%d did not start; see %s" % (i + 1, log.name))
    return p


def stop_agents(agents, net):
    """Ends the agents (SIGTERM, then SIGKILL after 15 s; by their Popen) and takes the
    emulated network down."""
    for p in agents:
        p.send_signal(signal.SIGTERM)
    for p in agents:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    net.down()


def proc_sample(pid):
    rss = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return rss, len(os.listdir("/proc/%d/fd" % pid))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--loss", type=float, default=0.02, help="fraction of packets dropped")
    ap.add_argument("--sample", type=float, default=30, help="seconds between samples")
    ap.add_argument("--warmup", type=float, default=120, help="seconds before the baseline")
    ap.add_argument("--rss-slack", type=float, default=8, help="MiB of growth allowed")
    ap.add_argument("--fd-slack", type=int, default=4)
    ap.add_argument("--report", default=None)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("soak: needs root (network namespaces, TUN devices, users)")
    build = os.path.abspath(args.build)
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tag = str(os.getpid())
    work = tempfile.mkdtemp(prefix="tmpisoak.")
    os.chmod(work, 0o755)
    users = ["tmpisoak_a%s" % tag, "tmpisoak_b%s" % tag]
    net = Net(tag, args.loss)
    agents = []
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    try:
        tmpicc = os.path.join(build, "launcher", "tmpicc")
        progs = {}
        for name, path in (("nothing_lost", "tests/mpi/nothing_lost.c"),
                           ("ring", "tests/mpi/ring.c"), ("hello", "examples/hello.c")):
            progs[name] = os.path.join(work, name)
            sh(tmpicc, "-O2", "-o", progs[name], os.path.join(src, path))
            os.chmod(progs[name], 0o755)
        for u in users:
            sh("useradd", "-M", "-s", "/bin/sh", u)
        net.up()
        key = os.path.join(work, "cluster.key")
        with open(key, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(key, 0o600)
        socks = []
        for i in range(NHOSTS):
            sock = os.path.join(work, "h%d.sock" % (i + 1))
            with open(os.path.join(work, "h%d.log" % (i + 1)), "w") as log:
                agents.append(start_agent(build, net, i, sock, key, log))
            socks.append(sock)
        hostfile = os.path.join(work, "hosts")
        with open(hostfile, "w") as f:
            for i in range(NHOSTS):
                f.write("192.0.2.%d slots=2 port=%d\n" % (i + 1, PORT))
        os.chmod(hostfile, 0o644)
        launch = os.path.join(build, "launcher", "tmpi-launch")
        mix = [
            ("nothing_lost", [launch, "--agent", socks[0], "--hostfile", hostfile, "-n", "6",
                              progs["nothing_lost"], "", "24"], "OK"),
            ("ring", [launch, "--agent", socks[1], "--hostfile", hostfile, "-n", "6",
                      progs["ring"]], None),
            ("hello", [launch, "--agent", socks[2], "-n", "4", progs["hello"]], None),
        ]
        deadline = time.time() + args.minutes * 60
        results = {u: {"ok": 0, "failed": 0} for u in users}
        failures = []
        lock = threading.Lock()

        def worker(user, first):
            k = first
            while time.time() < deadline:
                name, cmd, want = mix[k % len(mix)]
                k += 1
                t = time.time()
                pr = subprocess.run(["runuser", "-u", user, "--"] + cmd, cwd=work,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    timeout=600)
                ok = pr.returncode == 0 and (want is None or want in pr.stdout)
                with lock:
                    results[user]["ok" if ok else "failed"] += 1
                    if not ok:
                        failures.append("%s %s after %.1f s, status %d:\n%s" %
                                        (user, name, time.time() - t, pr.returncode,
                                         pr.stdout[-2000:]))

        threads = [threading.Thread(target=worker, args=(u, i)) for i, u in enumerate(users)]
        for t in threads:
            t.start()
        samples = []
        t0 = time.time()
        while any(t.is_alive() for t in threads):
            row = [time.time() - t0] + [proc_sample(p.pid) for p in agents]
            samples.append(row)
            say("t=%5.0fs  " % row[0] + "  ".join("h%d rss=%d KiB fds=%d" % (i + 1, s[0], s[1])
                                                 for i, s in enumerate(row[1:])) +
                "  jobs ok=%d failed=%d  packets forwarded=%d dropped=%d" %
                (sum(r["ok"] for r in results.values()),
                 sum(r["failed"] for r in results.values()), net.stats["forwarded"],
                 net.stats["dropped"]))
            for t in threads:
                t.join(timeout=args.sample / len(threads))
        time.sleep(2)  # the last job hosts reaped
        final = [time.time() - t0] + [proc_sample(p.pid) for p in agents]
        samples.append(final)
        base = next((s for s in samples if s[0] >= args.warmup), samples[0])
        bad = 0
        say("")
        say("soak: %.1f min, %d hosts, loss %.1f %% (%d of %d packets dropped)" %
            (final[0] / 60, NHOSTS, args.loss * 100, net.stats["dropped"],
             net.stats["dropped"] + net.stats["forwarded"]))
        for u in users:
            say("  %s: %d jobs ok, %d failed" % (u, results[u]["ok"], results[u]["failed"]))
        for i in range(NHOSTS):
            # memory from the warm-up on; descriptors idle before the first job and after the last
            (r0, _), (r1, f1), f0 = base[i + 1], final[i + 1], samples[0][i + 1][1]
            rmax = max(s[i + 1][0] for s in samples)
            grew = (r1 - r0) / 1024 > args.rss_slack or f1 - f0 > args.fd_slack
            bad |= grew
            say("  agent h%d: rss %d -> %d KiB (max %d) from t=%.0fs, fds idle %d -> %d%s" %
                (i + 1, r0, r1, rmax, base[0], f0, f1, "  GREW" if grew else ""))
        for f in failures[:10]:
            say("FAILED: " + f)
        if failures:
            bad = 1
        say("soak: " + ("FAILED" if bad else "ok: nothing lost, memory and descriptors flat"))
        return 1 if bad else 0
    finally:
        stop_agents(agents, net)
        for u in users:
            sh("userdel", "-r", "-f", u, check=False)
        if args.report and lines:
            with open(args.report, "w") as f:
                f.write("\n".join(lines) + "\n")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
