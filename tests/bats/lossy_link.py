#!/usr/bin/env python3
"""lossy_link.py — one job across two emulated hosts whose packets are dropped at random for a
while, or whose first connections are cut (tests/bats/liveness.bats).

Uses the soak's emulated network (tests/bench/soak.py, Net: network namespaces 192.0.2.1-3 with
a TUN device each, every IPv4 packet forwarded by this process, which drops a fraction of them),
starts an agent on hosts 1 and 2, runs PROG across both (4 ranks), and once it printed its first
line drops --loss of all packets for --seconds, then none.  With --from-start the loss starts
before the job is submitted, so the job's connections and links are set up under it.  Each
--blackhole N drops every packet of the Nth TCP connection host 1 opens to host 2's mesh port
(1: the coordinator's control connection, 2 and 3: the job's two data links): a handshake that
never completes.  Prints the job's output and the agents' lines about connections and data
links; exits with the job's status (1 if it did not end in --timeout).  Root only; everything it
makes (namespaces, agents) is removed by name of its own making and by PID."""
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
from soak import Net, PORT, start_agent, stop_agents  # noqa: E402


class Blackhole:
    """Net.drop: every packet of the chosen connections from host 1 to host 2's PORT."""

    def __init__(self, which):
        self.which = set(which)
        self.seen = {}  # source port of each connection, in the order of their first SYN
        self.cut = set()
        self.dropped = 0

    def __call__(self, pkt, src, dst):
        ihl = (pkt[0] & 0xF) * 4
        if pkt[9] != 6 or len(pkt) < ihl + 14:
            return False
        sport = int.from_bytes(pkt[ihl:ihl + 2], "big")
        dport = int.from_bytes(pkt[ihl + 2:ihl + 4], "big")
        flags = pkt[ihl + 13]
        if src == 0 and dst == 1 and dport == PORT:
            if flags & 0x02 and not flags & 0x10 and sport not in self.seen:
                self.seen[sport] = len(self.seen) + 1
                if self.seen[sport] in self.which:
                    self.cut.add(sport)
            hit = sport in self.cut
        else:
            hit = src == 1 and dst == 0 and sport == PORT and dport in self.cut
        self.dropped += hit
        return hit


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--loss", type=float, default=0.3)
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--from-start", action="store_true",
                    help="the loss starts before the job is submitted")
    ap.add_argument("--blackhole", type=int, action="append", default=[],
                    help="drop every packet of host 1's Nth connection to host 2 (repeatable)")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--config", default=None, help="tmpid.conf for both agents")
    ap.add_argument("prog", nargs="+", help="program and its arguments")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tmpilossy.")
    net = Net("l%d" % os.getpid(), 0.0)
    hole = Blackhole(args.blackhole) if args.blackhole else None
    agents, logs = [], []
    try:
        net.up()
        key = os.path.join(work, "key")
        with open(key, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(key, 0o600)
        socks = []
        for i in range(2):
            socks.append(os.path.join(work, "h%d.sock" % (i + 1)))
            logs.append(os.path.join(work, "h%d.log" % (i + 1)))
            with open(logs[-1], "w") as log:
                agents.append(start_agent(args.build, net, i, socks[-1], key, log, "info",
                                          args.config))
        hosts = os.path.join(work, "hosts")
        with open(hosts, "w") as f:
            for i in range(2):
                f.write("192.0.2.%d slots=2 port=%d\n" % (i + 1, PORT))
        net.drop = hole
        if args.from_start:
            net.loss = args.loss
        t0 = time.time()
        job = subprocess.Popen([os.path.join(args.build, "launcher", "tmpi-launch"), "--agent",
                                socks[0], "--hostfile", hosts, "-n", "4"] + args.prog,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out = []
        first = threading.Event()

        def read():
            for line in job.stdout:
                out.append(line)
                first.set()
            first.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        if args.from_start:
            time.sleep(max(0.0, args.seconds - (time.time() - t0)))
        else:
            first.wait(60)
            net.loss = args.loss
            time.sleep(args.seconds)
        net.loss = 0.0
        dropped = net.stats["dropped"]
        try:
            status = job.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            job.kill()
            status = job.wait()
            out.append("lossy_link: the job did not end within %.0f s\n" % args.timeout)
            status = status or 1
        reader.join(5)
        sys.stdout.write("".join(out))
        print("lossy_link: %d packets dropped during %.0f s of %.0f %% loss%s; job status %d" %
              (dropped, args.seconds, args.loss * 100,
               " (from the start)" if args.from_start else "", status))
        if hole:
            print("lossy_link: connections %s of %d cut, %d of their packets dropped" %
                  (sorted(hole.seen[p] for p in hole.cut), len(hole.seen), hole.dropped))
        for log in logs:
            with open(log) as f:
                for line in f:
                    if "data link" in line or "cannot connect" in line or \
                            "stopped answering" in line:
                        sys.stdout.write(os.path.basename(log) + ": " + line)
        return status
    finally:
        stop_agents(agents, net)
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
