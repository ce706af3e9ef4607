#!/usr/bin/env python3
"""elf_shdr_set.py SRC DST TYPE FIELD VALUE: copy the ELF64 little-endian file SRC to DST with
FIELD (link, offset or size) of every section header of type TYPE (a number: 6 is SHT_DYNAMIC)
set to VALUE.  For tests/bats/launcher.bats: a corrupt file the launcher must read safely."""
import struct
import sys

# (offset in an Elf64_Shdr, struct format) of the fields a test may break
FIELDS = {"link": (0x28, "<I"), "offset": (0x18, "<Q"), "size": (0x20, "<Q")}


def main():
    src, dst, sh_type, field, value = sys.argv[1:]
    b = bytearray(open(src, "rb").read())
    (shoff,) = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3A)
    at, fmt = FIELDS[field]
    hits = 0
    for i in range(shnum):
        h = shoff + i * shentsize
        if struct.unpack_from("<I", b, h + 4)[0] == int(sh_type, 0):
            struct.pack_into(fmt, b, h + at, int(value, 0))
            hits += 1
    if hits == 0:
        sys.exit(f"{src}: no section of type {sh_type}")
    open(dst, "wb").write(b)


if __name__ == "__main__":
    main()
