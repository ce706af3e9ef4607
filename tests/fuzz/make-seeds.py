#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz targets into corpus/<target>/ (run once; the files are
committed). Protobuf bodies are built by hand from control.proto's field numbers, so no
protobuf module is needed."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def f_varint(num, v):
    return varint(num << 3) + varint(v)


def f_bytes(num, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(num << 3 | 2) + varint(len(b)) + b


def f_fixed64(num, v):
    return varint(num << 3 | 1) + struct.pack("<Q", v)


def placement(host, port, ranks):
    return f_bytes(1, host) + f_varint(2, port) + f_bytes(3, b"".join(varint(r) for r in ranks))


def submit(nodes=None):
    m = f_varint(1, 4) + f_bytes(2, b"\x11" * 32) + f_varint(3, 4096) + f_bytes(4, "./app")
    m += f_bytes(5, "--size") + f_bytes(5, "10") + f_bytes(6, "/home/user")
    m += f_bytes(7, f_bytes(1, "OMP_NUM_THREADS") + f_bytes(2, "1")) + f_varint(8, 60)
    for n in nodes or []:
        m += f_bytes(9, n)
    return m


def assign():
    m = f_fixed64(1, 0x1234) + f_varint(2, 1)
    m += f_bytes(3, placement("127.0.0.1", 7470, [0, 1])) + f_bytes(3, placement("127.0.0.1", 7471, [2, 3]))
    m += f_varint(4, 4) + f_bytes(5, b"\x22" * 32) + f_varint(6, 4096) + f_bytes(7, "./app")
    m += f_bytes(9, "/tmp") + f_varint(12, 1000) + f_bytes(13, "user")
    return m


def output():
    return f_varint(1, 3) + f_varint(2, 1) + f_bytes(3, "hello from rank 3\n")


def frame(field, body):
    env = f_bytes(field, body)
    return struct.pack(">I", len(env)) + env


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


two_nodes = [placement("node1", 7470, [0, 1]), placement("node2", 7470, [2, 3])]
write("frame", "submit_one_node", frame(1, submit()))
write("frame", "submit_two_nodes", frame(1, submit(two_nodes)))
write("frame", "job_assign", frame(19, assign()))
write("frame", "output", frame(5, output()))
write("frame", "status_request", frame(9, b""))
write("frame", "cancel", frame(13, f_varint(1, 7)))
def app(n, name):
    return f_varint(1, n) + f_bytes(2, b"\x33" * 32) + f_varint(3, 2048) + f_bytes(4, name) + f_bytes(5, "x")


mpmd = f_varint(1, 5) + f_bytes(6, "/home/user") + f_bytes(12, app(2, "./a")) + f_bytes(12, app(3, "./b"))
write("frame", "submit_mpmd", frame(1, mpmd))
write("msg_check", "submit_mpmd", b"\x00" + mpmd)
write("frame", "signal_job", frame(27, f_varint(1, 7) + f_varint(2, 10)))
write("msg_check", "submit", b"\x00" + submit(two_nodes))
write("msg_check", "assign", b"\x01" + assign())
write("msg_check", "output", b"\x02" + output())

hdr = bytearray(64)
hdr[0:2] = struct.pack(">H", 2)  # a version field; the decoder decides what is valid
write("netd_hdr", "zero", bytes(64))
write("netd_hdr", "version", bytes(hdr))

write("mesh_auth", "hello", b"TMPIMESH" + struct.pack(">II", 1, 3) + b"\x01" * 32 + b"peer".ljust(64, b"\0"))

write("hostfile", "plain", "node1 slots=4\nnode2 slots=4 max_slots=8 port=7471\n# comment\nnode3:2\n\0node1:2,node2")
write("hostfile", "ipv6", "[::1] slots=2 port=7470\nfe80::1 slots=1\n\0[::1]:2")
write("slurm", "ranges", "node[01-04,07],gpu[1-2]\0" + "2(x3),1,4(x2)")
write("slurm", "plain", "n1,n2\0" + "8,8")
write("config", "full", """[agent]
name = node1
[mesh]
listen = 127.0.0.1:7470
peers = 127.0.0.1:7471, 127.0.0.1:7472
[pool]
size = 64M
[mpi]
eager_limit = 64K
rank_switching = auto
coll_tree = binomial
""")

# A job host's channel: state bytes (member and uid, stdin in flight), then the frames of a
# member's run: loaded, linked, output, a rank's exit, its log, stdin acks, end, unloaded.
chan = (frame(20, f_varint(1, 5) + f_varint(2, 1)) + frame(22, f_varint(1, 5) + f_varint(2, 1))
        + frame(5, output()) + frame(6, f_varint(1, 0) + f_varint(2, 4) + f_bytes(4, "rank 0 killed"))
        + frame(28, f_varint(1, 3) + f_bytes(2, "job 1: \x1b[2Jforged\r\n<3>line"))
        + frame(41, f_varint(1, 90)) + frame(7, f_fixed64(1, 1) + f_varint(2, 0))
        + frame(26, f_varint(1, 5)))
write("chan", "member_run", b"\x0b\x01" + chan)
write("chan", "single_node", b"\x00\x00" + frame(4, f_fixed64(1, 1) + f_varint(2, 4)) + frame(5, output())
      + frame(7, f_fixed64(1, 1)) + frame(7, f_fixed64(1, 1)))
# protobuf-c's decoding of one message: the first byte picks the type (fuzz_proto.c)
for i, body in enumerate([submit(two_nodes), assign(), output(), b"", f_varint(1, 7)]):
    write("proto", "msg%d" % i, bytes([i]) + body)
write("proto", "envelope", b"\x00" + f_bytes(1, submit()))
write("http", "get", "GET /metrics HTTP/1.1\r\nHost: node1:9470\r\nUser-Agent: Prometheus/2\r\n\r\n")
write("http", "keepalive", "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nHEAD /metrics HTTP/1.0\r\n\r\n")
write("http", "bad", "DELETE /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
write("http", "split", "GET /metrics?x=%zz HTTP/1.1\r\nX: a\r\n b\r\n\r\n")
