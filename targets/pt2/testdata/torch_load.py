#!/usr/bin/env python3
"""Genuine torch loads what fxport's .pt2 writer wrote and runs it.

    PYTHON torch_load.py JOBS.json

JOBS.json is a list of {"name", "pt2", "io"}: for each, torch.export.load
the archive, run ep.module() on io/input_<i>.npy and compare the
pytree-flattened outputs with io/output_<i>.npy (max error <= 1e-4 x max
|expected|, plus 1e-5). Prints one JSON object per job on stdout:
{"name", "ok", "error", "max_abs"}. One process serves every job (importing
torch takes seconds).
"""

import glob
import json
import os
import sys
import traceback


def main():
    import numpy as np
    import torch
    from torch.utils import _pytree as pytree

    torch.set_num_threads(1)
    with open(sys.argv[1]) as f:
        jobs = json.load(f)
    for job in jobs:
        res = {"name": job["name"], "ok": False, "error": "", "max_abs": None}
        try:
            ep = torch.export.load(job["pt2"])
            n_in = len(glob.glob(os.path.join(job["io"], "input_*.npy")))
            args = [torch.from_numpy(np.load(os.path.join(job["io"], "input_%d.npy" % i))) for i in range(n_in)]
            with torch.no_grad():
                got = pytree.tree_flatten(ep.module()(*args))[0]
            n_out = len(glob.glob(os.path.join(job["io"], "output_*.npy")))
            if len(got) != n_out:
                raise ValueError("%d outputs, the fixture has %d" % (len(got), n_out))
            worst = 0.0
            for i, g in enumerate(got):
                w = torch.from_numpy(np.load(os.path.join(job["io"], "output_%d.npy" % i)))
                if tuple(g.shape) != tuple(w.shape) or g.dtype != w.dtype:
                    raise ValueError("output %d is %s%s, expected %s%s" % (i, g.dtype, list(g.shape), w.dtype,
                                                                          list(w.shape)))
                d = (g.double() - w.double()).abs().max().item() if w.numel() else 0.0
                worst = max(worst, d)
                tol = 1e-4 * w.double().abs().max().item() + 1e-5 if w.is_floating_point() else 0.0
                if d > tol:
                    raise ValueError("output %d differs: max abs %g > %g" % (i, d, tol))
            res["ok"], res["max_abs"] = True, worst
        except Exception as e:  # noqa: BLE001 - report every failure to the Go test
            lines = traceback.format_exception_only(type(e), e)
            res["error"] = "".join(lines).strip()[-2000:]
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
