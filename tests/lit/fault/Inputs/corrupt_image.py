#!/usr/bin/env python3
"""Corrupt the OpenMP device image(s) embedded in an executable built by
clang-14 -fopenmp -fopenmp-targets=...

usage: corrupt_image.py IN OUT [--objcopy PATH]

clang 14's offload wrapper embeds each device image as a local object symbol
named `.omp_offloading.device_image[.N]`, inside an ordinary section
(.rodata), not in a section of its own. This script finds those symbols in
the ELF symbol table, dumps the containing section with
`llvm-objcopy --dump-section`, overwrites the bytes of each image from
offset 64 up to 4 KiB (never touching the section-header table) with 0xA5
— the 64-byte ELF header stays, so the image still says x86_64 and a plugin
still accepts it, but its program headers (and whatever else sits in the
first page) are garbage, so it cannot be loaded — and writes the section
back with `llvm-objcopy --update-section`.
"""
import os
import struct
import subprocess
import sys
import tempfile

KEEP = 64          # bytes of the ELF header left intact
END = 4096         # corrupt up to here (image-relative)
FILL = 0xA5


def sections(data):
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    out = []
    for i in range(e_shnum):
        base = e_shoff + i * e_shentsize
        name, typ, flags, addr, off, size, link, info, align, entsize = \
            struct.unpack_from("<IIQQQQIIQQ", data, base)
        out.append(dict(name_off=name, type=typ, addr=addr, offset=off,
                        size=size, link=link, entsize=entsize))
    strtab = out[e_shstrndx]
    for s in out:
        s["name"] = cstr(data, strtab["offset"] + s["name_off"])
    return out


def cstr(data, off):
    end = data.index(b"\0", off)
    return data[off:end].decode()


def device_images(data, secs):
    """Yield (name, section index, value, size) of each device-image symbol."""
    for sec in secs:
        if sec["type"] != 2:       # SHT_SYMTAB
            continue
        strtab = secs[sec["link"]]
        for i in range(sec["size"] // sec["entsize"]):
            base = sec["offset"] + i * sec["entsize"]
            st_name, st_info, st_other, st_shndx, st_value, st_size = \
                struct.unpack_from("<IBBHQQ", data, base)
            name = cstr(data, strtab["offset"] + st_name)
            if name.startswith(".omp_offloading.device_image") and \
                    not name.startswith(".omp_offloading.device_images"):
                yield name, st_shndx, st_value, st_size


def main():
    args = sys.argv[1:]
    objcopy = "llvm-objcopy-14"
    if "--objcopy" in args:
        i = args.index("--objcopy")
        objcopy = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.stderr.write(__doc__)
        return 2
    src, dst = args
    data = open(src, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("corrupt_image: %s is not a 64-bit ELF file" % src)
    secs = sections(data)
    images = list(device_images(data, secs))
    if not images:
        sys.exit("corrupt_image: no .omp_offloading.device_image symbol in %s" % src)

    by_section = {}
    for name, shndx, value, size in images:
        by_section.setdefault(shndx, []).append((name, value, size))

    cmd = [objcopy]
    with tempfile.TemporaryDirectory() as tmp:
        for shndx, imgs in by_section.items():
            sec = secs[shndx]
            dump = os.path.join(tmp, "sec%d.bin" % shndx)
            subprocess.check_call([objcopy, "--dump-section",
                                   "%s=%s" % (sec["name"], dump), src, os.path.join(tmp, "scratch")])
            blob = bytearray(open(dump, "rb").read())
            for name, value, size in imgs:
                start = value - sec["addr"]
                image = bytes(blob[start:start + size])
                if image[:4] != b"\x7fELF":
                    sys.exit("corrupt_image: %s does not start with an ELF header" % name)
                (shoff,) = struct.unpack_from("<Q", image, 0x28)
                end = min(END, size, shoff if shoff else size)
                blob[start + KEEP:start + end] = bytes([FILL]) * (end - KEEP)
                (machine,) = struct.unpack_from("<H", image, 0x12)
                sys.stderr.write("corrupt_image: %s (%d bytes, e_machine %d) in %s: "
                                 "bytes %d..%d overwritten\n"
                                 % (name, size, machine, sec["name"], KEEP, end))
            open(dump, "wb").write(blob)
            cmd += ["--update-section", "%s=%s" % (sec["name"], dump)]
        cmd += [src, dst]
        subprocess.check_call(cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
