#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# Copy the BTF of a kernel image out of it: the raw BTF blob the kernel
# serves at /sys/kernel/btf/vmlinux, for `bpftool btf dump file OUT format c`.
#
#   tests/vm/image_btf.py VMLINUZ OUT
#
# VMLINUZ is a kernel as Debian ships it (/boot/vmlinuz-*: arm64's is a
# gzipped Image, a raw binary with no ELF sections).  The blob is found by its
# header: magic 0xeb9f, version 1, hdr_len 24, then the type and string
# sections, the string section starting with "\0" and ending the blob.  The
# largest well-formed candidate wins (the kernel's own BTF is megabytes;
# anything else matching the magic is small or malformed).
import gzip
import struct
import sys


def image(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def candidates(data):
    at = data.find(b"\x9f\xeb\x01\x00")
    while at >= 0:
        if at + 24 <= len(data):
            hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<IIIII", data, at + 4)
            end = at + hdr_len + str_off + str_len
            if (hdr_len == 24 and type_off == 0 and str_off == type_len and str_len > 1 and
                    end <= len(data) and data[at + hdr_len + str_off] == 0 and data[end - 1] == 0):
                yield at, end
        at = data.find(b"\x9f\xeb\x01\x00", at + 1)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: image_btf.py VMLINUZ OUT")
    data = image(sys.argv[1])
    best = max(candidates(data), key=lambda c: c[1] - c[0], default=None)
    if not best:
        sys.exit("image_btf: no BTF in %s (a kernel without CONFIG_DEBUG_INFO_BTF?)" % sys.argv[1])
    with open(sys.argv[2], "wb") as f:
        f.write(data[best[0]:best[1]])
    print("image_btf: %d bytes of BTF at offset %#x" % (best[1] - best[0], best[0]))


main()
