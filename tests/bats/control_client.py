#!/usr/bin/env python3
"""Abusive control-socket clients for tests/bats/limits.bats.

control_client.py SOCKET MODE [ARGS]; prints one result line per mode:
  flood N HOLD          opens N connections, holds them HOLD s; "held H refused R"
  partial N SIZE HOLD   N connections each send a frame header announcing SIZE bytes and all
                        but the last byte of its body; "closed C of N" after HOLD s
  drip GAP              sends a frame one byte every GAP s; "closed after S s" (or "never")
  idle                  sends nothing; "closed after S s"
  unread N              sends N status requests without reading a reply; "closed" or "open"
  stall N HOLD          N job submissions that never send their program (uploads in flight);
                        "waiting W refused R" (W asked for their program), then holds HOLD s
Refused or closed connections get an Error frame first when the agent can send one; its
message is printed as "error: ..." (the first one seen)."""
import resource
import socket
import sys
import time

STATUS_REQUEST = b"\x00\x00\x00\x02\x4a\x00"  # Envelope{status_request (9): {}}


def error_of(data):
    """The message of an Error frame (Envelope field 8), or None."""
    if len(data) < 6 or data[4] != 0x42:
        return None
    body = data[4:]
    i = 1
    ln, shift = 0, 0
    while True:
        b = body[i]; i += 1
        ln |= (b & 0x7F) << shift; shift += 7
        if b < 0x80: break
    err = body[i:i + ln]
    j = 0
    while j < len(err):
        tag = err[j]; j += 1
        if (tag & 7) == 0:
            while err[j] & 0x80: j += 1
            j += 1
        elif (tag & 7) == 2:
            n, shift = 0, 0
            while True:
                b = err[j]; j += 1
                n |= (b & 0x7F) << shift; shift += 7
                if b < 0x80: break
            if tag >> 3 == 2:
                return err[j:j + n].decode(errors="replace")
            j += n
        else:
            return None
    return None


def closed(s, wait=0.0):
    """True once the agent closed s (EOF or reset); remembers the first Error message."""
    s.settimeout(wait if wait > 0 else None)
    if wait <= 0:
        s.setblocking(False)
    try:
        d = s.recv(65536)
    except (BlockingIOError, socket.timeout):
        return False
    except OSError:
        return True
    global first_error
    if d and first_error is None:
        first_error = error_of(d)
    if d:
        return closed(s, wait)
    return True


first_error = None


def pb_len(field, data):
    """A length-delimited protobuf field."""
    out = bytes([field << 3 | 2])
    n = len(data)
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80]); n >>= 7
    return out + bytes([n]) + data


def submit_frame(n):
    """Envelope{submit: SubmitJob{nprocs 1, a hash nobody has, size 1000, name, cwd /}}."""
    job = (b"\x08\x01" + pb_len(2, n.to_bytes(4, "big") * 8) + b"\x18\xe8\x07" +
           pb_len(4, b"stalled") + pb_len(6, b"/"))
    env = pb_len(1, job)
    return len(env).to_bytes(4, "big") + env


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return s


def main():
    path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if mode == "flood":
        n, hold = int(args[0]), float(args[1])
        socks = [connect(path) for _ in range(n)]
        time.sleep(1)
        refused = sum(1 for s in socks if closed(s))
        # one line: the test reads it as soon as it appears
        print(f"held {n - refused} refused {refused}" +
              (f"; error: {first_error}" if first_error else ""), flush=True)
        time.sleep(hold)
        return
    elif mode == "partial":
        n, size, hold = int(args[0]), int(args[1]), float(args[2])
        socks = []
        body = b"\x4a" + b"\x00" * (size - 2)  # never completed
        for _ in range(n):
            s = connect(path)
            try:
                s.sendall(size.to_bytes(4, "big") + body)
            except OSError:
                pass
            socks.append(s)
        time.sleep(hold)
        c = sum(1 for s in socks if closed(s))
        print(f"closed {c} of {n}", flush=True)
    elif mode == "stall":
        n, hold = int(args[0]), float(args[1])
        socks, waiting = [], 0
        for i in range(n):
            s = connect(path)
            s.sendall(submit_frame(i + 1))
            s.settimeout(10)
            try:
                d = s.recv(65536)
            except OSError:
                d = b""
            if len(d) > 4 and d[4] == 0x12:  # NeedProgram
                waiting += 1
            elif first_error is None:
                globals()["first_error"] = error_of(d)
            socks.append(s)
        print(f"waiting {waiting} refused {n - waiting}" +
              (f"; error: {first_error}" if first_error else ""), flush=True)
        time.sleep(hold)
        return
    elif mode == "drip":
        gap = float(args[0])
        s = connect(path)
        frame = (100).to_bytes(4, "big") + b"\x4a" * 100
        t0 = time.monotonic()
        for b in frame:
            try:
                s.send(bytes([b]))
            except OSError:
                break
            if closed(s, gap):
                break
        else:
            print("never", flush=True)
            return
        print(f"closed after {time.monotonic() - t0:.1f} s", flush=True)
    elif mode == "idle":
        s = connect(path)
        t0 = time.monotonic()
        closed(s, 120)
        print(f"closed after {time.monotonic() - t0:.1f} s", flush=True)
    elif mode == "unread":
        n = int(args[0])
        s = connect(path)
        s.settimeout(10)
        try:
            for _ in range(n):
                s.sendall(STATUS_REQUEST)
        except OSError:
            pass
        time.sleep(1)
        # now read everything: the agent must have closed the stream
        s.settimeout(10)
        try:
            while s.recv(1 << 20):
                pass
            print("closed", flush=True)
        except socket.timeout:
            print("open", flush=True)
        except OSError:
            print("closed", flush=True)
        return
    if first_error:
        print("error: " + first_error, flush=True)


main()
