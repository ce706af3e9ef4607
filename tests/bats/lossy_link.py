#!/usr/bin/env python3
"""lossy_link.py — one job across two emulated hosts whose packets are dropped at random for a
while (tests/bats/liveness.bats).

Uses the soak's emulated network (tests/bench/soak.py, Net: network namespaces 192.0.2.1-3 with
a TUN device each, every IPv4 packet forwarded by this process, which drops a fraction of them),
starts an agent on hosts 1 and 2, runs PROG across both (4 ranks), and once it printed its first
line drops --loss of all packets for --seconds, then none.  Prints the job's output and the
agents' lines about data links; exits with the job's status (1 if it did not end in --timeout).
Root only; everything it makes (namespaces, agents) is removed by name of its own making and by
PID."""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "bench"))
from soak import Net, PORT  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--loss", type=float, default=0.3)
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--config", default=None, help="tmpid.conf for both agents")
    ap.add_argument("prog", nargs="+", help="program and its arguments")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tmpilossy.")
    net = Net("l%d" % os.getpid(), 0.0)
    agents, logs = [], []
    try:
        net.up()
        key = os.path.join(work, "key")
        with open(key, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(key, 0o600)
        socks = []
        for i in range(2):
            sock = os.path.join(work, "h%d.sock" % (i + 1))
            logs.append(os.path.join(work, "h%d.log" % (i + 1)))
            r, w = os.pipe()
            cmd = ["ip", "netns", "exec", net.ns[i], os.path.join(args.build, "agent", "tmpid"),
                   "--socket", sock, "--name", "h%d" % (i + 1), "--listen",
                   "192.0.2.%d:%d" % (i + 1, PORT), "--key-file", key, "--log-level", "warning",
                   "--ready-fd", str(w)]
            if args.config:
                cmd += ["--config", args.config]
            with open(logs[-1], "w") as log:
                agents.append(subprocess.Popen(cmd, pass_fds=(w,), stdout=log,
                                               stderr=subprocess.STDOUT))
            os.close(w)
            ready = os.read(r, 64)
            os.close(r)
            if b"READY=1" not in ready:
                raise RuntimeError("agent h%d did not start" % (i + 1))
            socks.append(sock)
        hosts = os.path.join(work, "hosts")
        with open(hosts, "w") as f:
            for i in range(2):
                f.write("192.0.2.%d slots=2 port=%d\n" % (i + 1, PORT))
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
        print("lossy_link: %d packets dropped during %.0f s of %.0f %% loss; job status %d" %
              (dropped, args.seconds, args.loss * 100, status))
        for log in logs:
            with open(log) as f:
                for line in f:
                    if "data link" in line:
                        sys.stdout.write(os.path.basename(log) + ": " + line)
        return status
    finally:
        for p in agents:
            p.send_signal(signal.SIGTERM)
        for p in agents:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        net.down()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
