"""Run .pte files on the genuine ExecuTorch runtime and compare with torch eager.

Reads a JSON manifest (argv[1]): a list of cases
  {"name": ..., "pte": path, "inputs": [npy paths], "ref": "python expression"}
where ref computes the expected output from x0, x1, … (torch tensors) with
torch and F (torch.nn.functional) in scope. Loads each program with full
verification (Verification.InternalConsistency), runs method "forward",
and prints one JSON line per case: {"name", "ok", "err", "detail"}.
Floating outputs pass when max |got − want| ≤ 1e-4·max(1, max |want|);
integer and bool outputs must be equal. Also prints the genuine runtime's
registered operator names (one line, {"registry": [...]}), so the caller
can cross-check the kernel list. One process for every case: importing
torch and executorch takes seconds.
"""

import json
import struct
import sys

import torch
import torch.nn.functional as F
from executorch.runtime import Runtime, Verification

DT = {"<f4": (torch.float32, "f", 4), "<i8": (torch.int64, "q", 8), "|b1": (torch.bool, "?", 1), "<i4": (torch.int32, "i", 4)}


def read_npy(path):
    """A .npy file (format 1.x, C order) as a torch tensor."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s is not a .npy file" % path)
    hl = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10 : 10 + hl].decode("latin1"))  # a Python dict literal by the format's definition
    dtype, code, size = DT[header["descr"]]
    shape = tuple(header["shape"])
    n = 1
    for d in shape:
        n *= d
    vals = struct.unpack("<%d%s" % (n, code), data[10 + hl : 10 + hl + n * size])
    return torch.tensor(vals, dtype=dtype).reshape(shape)


def compare(got, want):
    if got.shape != want.shape:
        return False, "shape %s, torch %s" % (tuple(got.shape), tuple(want.shape))
    if got.dtype != want.dtype:
        return False, "dtype %s, torch %s" % (got.dtype, want.dtype)
    if want.dtype.is_floating_point:
        err = (got - want).abs().max().item() if want.numel() else 0.0
        scale = max(1.0, want.abs().max().item() if want.numel() else 0.0)
        return err <= 1e-4 * scale, "max error %.3g (scale %.3g)" % (err, scale)
    same = torch.equal(got, want)
    return same, "equal" if same else "values differ"


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    rt = Runtime.get()
    print(json.dumps({"registry": sorted(rt.operator_registry.operator_names)}), flush=True)
    for c in cases:
        res = {"name": c["name"], "ok": False, "err": "", "detail": ""}
        try:
            xs = [read_npy(p) for p in c["inputs"]]
            env = {"x%d" % i: x for i, x in enumerate(xs)}
            want = eval(c["ref"], {"torch": torch, "F": F}, env)
            prog = rt.load_program(c["pte"], verification=Verification.InternalConsistency)
            outs = prog.load_method("forward").execute(xs)
            ok, detail = compare(outs[0], want)
            res["ok"], res["detail"] = ok, detail
        except Exception as e:  # report every case, then fail in Go
            res["err"] = "%s: %s" % (type(e).__name__, e)
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
