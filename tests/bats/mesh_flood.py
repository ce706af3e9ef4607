#!/usr/bin/env python3
"""A stranger without the cluster key floods a mesh port (tests/bats/hostile.bats).

mesh_flood.py PORT ADDRESSES PER_ADDRESS SECONDS [RATE]
From ADDRESSES loopback source addresses (127.0.0.2, 127.0.0.3, ...), PER_ADDRESS connections
each; every connection sends one byte and is reopened as soon as the agent closes it, at most
RATE connects a second in all (default 200).  Prints "connects N closed C" at the end."""
import resource
import selectors
import socket
import sys
import time


def main():
    port, naddr, per, secs = (int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]),
                              float(sys.argv[4]))
    rate = float(sys.argv[5]) if len(sys.argv) > 5 else 200.0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    todo = [f"127.0.0.{2 + i}" for i in range(naddr) for _ in range(per)]
    connects = closed = 0
    end = time.monotonic() + secs
    next_at = time.monotonic()
    while time.monotonic() < end:
        # (re)open what is due, paced at RATE a second
        while todo and time.monotonic() >= next_at:
            src = todo.pop()
            s = socket.socket()
            s.setblocking(False)
            try:
                s.bind((src, 0))
                s.connect_ex(("127.0.0.1", port))
            except OSError:
                s.close()
                todo.append(src)
                break
            sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, [src, False])
            connects += 1
            next_at += 1.0 / rate
        if not todo:
            next_at = max(next_at, time.monotonic())
        for key, ev in sel.select(timeout=0.005):
            s, data = key.fileobj, key.data
            if ev & selectors.EVENT_WRITE and not data[1]:
                try:
                    s.send(b"\x01")
                except OSError:
                    pass
                data[1] = True
                sel.modify(s, selectors.EVENT_READ, data)
                continue
            if ev & selectors.EVENT_READ:
                try:
                    d = s.recv(4096)
                except OSError:
                    d = b""
                if not d:
                    sel.unregister(s)
                    s.close()
                    closed += 1
                    todo.append(data[0])
    print(f"connects {connects} closed {closed}", flush=True)


main()
