#!/usr/bin/env python3
"""Export a program with >= 4 GiB of weights and compare with cp of the same bytes.

    python3 tools/bigweights/bigweights.py --fxport BIN [--dir DIR] [--gib 4] [--keep]

Writes, in DIR (default: a new directory under $TMPDIR), a zip archive of
stored entries w0..w7, each 1/8 of the weights: a distinct 4 KiB head
(so no two weights deduplicate) and zeros after it, left as holes (the
file is sparse: it takes about 8 × 4 KiB on disk), with the CRC-32 each
entry's bytes have; and an IR program (big.fxir) whose weights are those
entries (pt2(...) sources) and whose graph adds each to the input in turn.
Then it runs, each as its own process (wall time; peak RSS from
/usr/bin/time):

  fxport export big.fxir --target onnx -o big.onnx            (external data)
  fxport export big.fxir --target executorch-portable --external-constants -o big.pte  (+ big.ptd)
  cp big.ptd copy.ptd                                        (the same bytes, for reference)

and prints one line per step: seconds, peak RSS, bytes written, MB/s, and
the export's throughput as a share of cp's. Everything is removed at the
end unless --keep. Needs about 2 × the weights free on DIR's disk.
"""

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HEAD = 4096


def entry_crc(i, size):
    crc = zlib.crc32(head(i))
    zeros = bytes(1 << 24)
    left = size - HEAD
    while left > 0:
        n = min(left, len(zeros))
        crc = zlib.crc32(zeros[:n] if n < len(zeros) else zeros, crc)
        left -= n
    return crc & 0xFFFFFFFF


def head(i):
    return struct.pack("<f", float(i + 1)) * (HEAD // 4)


def write_zip(path, n, size):
    """Stored zip64 entries w<i> of size bytes each, the zeros left as holes."""
    cds = []
    with open(path, "wb") as f:
        for i in range(n):
            name = ("w%d" % i).encode()
            crc = entry_crc(i, size)
            off = f.tell()
            extra = struct.pack("<HHQQ", 1, 16, size, size)
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra)))
            f.write(name + extra)
            f.write(head(i))
            f.seek(size - HEAD, os.SEEK_CUR)
            cds.append((name, crc, off))
        cd_off = f.tell()
        for name, crc, off in cds:
            extra = struct.pack("<HHQQQ", 1, 24, size, size, off)
            f.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                                len(name), len(extra), 0, 0, 0, 0, 0xFFFFFFFF))
            f.write(name + extra)
        cd_end = f.tell()
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_end - cd_off, cd_off))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, cd_end, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))


def write_program(path, archive, n, size):
    elems = size // 4
    lines = []
    for i in range(n):
        lines.append('input p_w%d: parameter "w%d"' % (i, i))
    lines.append("input x: user_input")
    lines.append("output user_output")
    for i in range(n):
        lines.append('weight "w%d": f32[%d] = pt2("%s", "w%d", offset=0, size=%d)' % (i, elems, archive, i, size))
    lines.append("")
    params = ", ".join("%%p_w%d: f32[%d]" % (i, elems) for i in range(n))
    lines.append("graph forward(%s, %%x: f32[%d]) {" % (params, elems))
    prev = "x"
    for i in range(n):
        lines.append("  %%a%d: f32[%d] = aten.add.Tensor(%%%s, %%p_w%d)" % (i, elems, prev, i))
        prev = "a%d" % i
    lines.append("  return %%%s" % prev)
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run(argv, d):
    """Wall seconds and peak RSS (bytes) of argv, run under /usr/bin/time
    (a fork of this interpreter would count its memory in the child's)."""
    rss = os.path.join(d, "rss")
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    secs = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(argv), p.returncode, p.stderr.decode(errors="replace")[-2000:]))
    with open(rss) as f:
        kb = int(f.read().split()[-1])
    os.remove(rss)
    return secs, kb * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fxport", required=True)
    ap.add_argument("--dir")
    ap.add_argument("--gib", type=float, default=4.0)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    d = args.dir or tempfile.mkdtemp(prefix="fxport-bigweights-")
    os.makedirs(d, exist_ok=True)
    n = 8
    size = int(args.gib * (1 << 30)) // n // HEAD * HEAD
    try:
        archive = os.path.join(d, "big.zip")
        t0 = time.perf_counter()
        write_zip(archive, n, size)
        write_program(os.path.join(d, "big.fxir"), archive, n, size)
        total = n * size
        print("weights: %d × %d bytes = %.2f GiB (archive %.0f KiB on disk), generated in %.1f s" % (
            n, size, total / (1 << 30), os.stat(archive).st_blocks * 512 / 1024, time.perf_counter() - t0))
        steps = [
            ("onnx (external data)", [args.fxport, "export", os.path.join(d, "big.fxir"), "--target", "onnx", "-o", os.path.join(d, "big.onnx")]),
            ("pte + ptd (portable)", [args.fxport, "export", os.path.join(d, "big.fxir"), "--target", "executorch-portable", "--external-constants", "-o", os.path.join(d, "big.pte")]),
        ]
        res = []
        for name, argv in steps:
            secs, rss = run(argv, d)
            out = [f for f in os.listdir(d) if f.startswith("big.") and f not in ("big.zip", "big.fxir")]
            res.append((name, secs, rss))
            print("%-22s %7.1f s  peak RSS %6.1f MiB" % (name, secs, rss / (1 << 20)))
            sys.stdout.flush()
            if name.startswith("onnx"):
                onnx_bytes = sum(os.path.getsize(os.path.join(d, f)) for f in out if f.startswith("big.onnx"))
                for f in out:
                    if f.startswith("big.onnx"):
                        os.remove(os.path.join(d, f))
                res[-1] += (onnx_bytes,)
        ptd = os.path.join(d, "big.ptd")
        pte_bytes = os.path.getsize(ptd) + os.path.getsize(os.path.join(d, "big.pte"))
        res[1] += (pte_bytes,)
        secs, rss = run(["cp", ptd, os.path.join(d, "copy.ptd")], d)
        cp_rate = os.path.getsize(ptd) / secs
        print("%-22s %7.1f s  peak RSS %6.1f MiB  %.0f MB/s" % ("cp of big.ptd", secs, rss / (1 << 20), cp_rate / 1e6))
        for name, s, rss, nbytes in res:
            rate = nbytes / s
            print("%-22s %.2f GiB written, %.0f MB/s = %.0f%% of cp" % (name, nbytes / (1 << 30), rate / 1e6, 100 * rate / cp_rate))
    finally:
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
