"""Judge ONNX files with the genuine tools: onnx.checker and ONNX Runtime.

Usage:
  check.py MODEL [MODEL ...]        full onnx.checker on each file
  check.py --manifest CASES.json    checker, then ONNX Runtime against torch

CASES.json is a list of cases, each
  {"name": str, "model": path, "inputs": [npy, ...], "outputs": [npy, ...],
   "rtol": float, "random": {"<output index>": [lo, hi] or null}}
("inputs"/"outputs" may be absent: then only the checker runs). Every model
is checked with onnx.checker.check_model(path, full_check=True); a case with
outputs is run in ONNX Runtime (CPU) on its inputs, and each output must match
torch's: floating outputs within max|got - exp| <= rtol * max|exp| (rtol
defaults to 1e-4, the fp32 rule), NaN and infinity at the same places;
integer and bool outputs exactly. Shapes and dtypes must match too. Outputs
listed under "random" (drawn by a random op) are compared by shape and dtype
only, their values checked to be finite and within [lo, hi] when given.

One line per case goes to stdout: "ok NAME ..." or "FAIL NAME: reason".
Exit status: 0 every case passed, 1 a case failed, 2 usage error, 3 the
onnx or onnxruntime package is not importable.
Run it with the project's venv (third_party/venv/bin/python, `make venv`).
"""
import json
import sys


def compare(got, exp, rtol, np):
    """Return "" when got matches exp, else the reason."""
    if tuple(got.shape) != tuple(exp.shape):
        return "shape %s, want %s" % (list(got.shape), list(exp.shape))
    if got.dtype != exp.dtype:
        return "dtype %s, want %s" % (got.dtype, exp.dtype)
    if exp.size == 0:
        return ""
    if not np.issubdtype(exp.dtype, np.floating) and not np.issubdtype(exp.dtype, np.complexfloating):
        bad = np.flatnonzero(got.reshape(-1) != exp.reshape(-1))
        if bad.size:
            i = int(bad[0])
            return "%d of %d elements differ (first at flat %d: got %s, want %s)" % (
                bad.size, exp.size, i, got.reshape(-1)[i], exp.reshape(-1)[i])
        return ""
    g = got.astype(np.float64).reshape(-1)
    e = exp.astype(np.float64).reshape(-1)
    gn, en = np.isnan(g), np.isnan(e)
    if (gn != en).any():
        return "NaN at different places (%d got, %d want)" % (int(gn.sum()), int(en.sum()))
    gi, ei = np.isinf(g), np.isinf(e)
    if (gi != ei).any() or (g[ei] != e[ei]).any():
        return "infinities differ"
    fin = ~(en | ei)
    if not fin.any():
        return ""
    err = float(np.max(np.abs(g[fin] - e[fin])))
    scale = float(np.max(np.abs(e[fin])))
    if err > rtol * scale:
        return "max|got-exp| = %.3g > %g x max|exp| (= %.3g)" % (err, rtol, scale)
    return ""


def compare_random(got, exp, bounds, np):
    """Shape, dtype and value range of a random output."""
    if tuple(got.shape) != tuple(exp.shape):
        return "shape %s, want %s" % (list(got.shape), list(exp.shape))
    if got.dtype != exp.dtype:
        return "dtype %s, want %s" % (got.dtype, exp.dtype)
    g = got.astype(np.float64)
    if g.size and not np.isfinite(g).all():
        return "non-finite random values"
    if bounds is not None and g.size and (g.min() < bounds[0] or g.max() > bounds[1]):
        return "random values in [%g, %g], want within [%g, %g]" % (g.min(), g.max(), bounds[0], bounds[1])
    return ""


def run_case(case, onnx, ort, np):
    name = case.get("name", case["model"])
    try:
        # A path (not a loaded proto) lets the checker follow external data.
        onnx.checker.check_model(case["model"], full_check=True)
    except Exception as e:  # the checker raises several exception types
        return "FAIL %s: onnx.checker: %s: %s" % (name, type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")
    outs = case.get("outputs")
    if not outs:
        return "ok %s: checker (onnx %s)" % (name, onnx.__version__)
    try:
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        sess = ort.InferenceSession(case["model"], opts, providers=["CPUExecutionProvider"])
        feeds = {}
        for meta, path in zip(sess.get_inputs(), case.get("inputs", [])):
            feeds[meta.name] = np.load(path)
        if len(feeds) != len(sess.get_inputs()):
            return "FAIL %s: model has %d inputs, case gives %d" % (name, len(sess.get_inputs()), len(feeds))
        got = sess.run(None, feeds)
    except Exception as e:
        msg = str(e).strip().splitlines()
        return "FAIL %s: onnxruntime: %s" % (name, msg[0] if msg else type(e).__name__)
    if len(got) != len(outs):
        return "FAIL %s: %d outputs, want %d" % (name, len(got), len(outs))
    rtol = float(case.get("rtol", 1e-4))
    worst = 0.0
    for i, (g, path) in enumerate(zip(got, outs)):
        exp = np.load(path)
        g = np.asarray(g)
        rnd = case.get("random") or {}
        if str(i) in rnd:
            why = compare_random(g, exp, rnd[str(i)], np)
            if why:
                return "FAIL %s: output %d: %s" % (name, i, why)
            continue
        why = compare(g, exp, rtol, np)
        if why:
            return "FAIL %s: output %d: %s" % (name, i, why)
        if np.issubdtype(exp.dtype, np.floating) and exp.size:
            fin = np.isfinite(exp)
            if fin.any():
                s = float(np.max(np.abs(exp[fin].astype(np.float64))))
                if s > 0:
                    worst = max(worst, float(np.max(np.abs(g[fin].astype(np.float64) - exp[fin]))) / s)
    return "ok %s: checker + onnxruntime %s, worst scaled error %.2g" % (name, ort.__version__, worst)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import numpy as np
        import onnx
        import onnx.checker
        import onnxruntime as ort
    except ImportError as e:
        print("onnx/onnxruntime not importable: %s (make venv)" % e, file=sys.stderr)
        return 3
    if argv[1] == "--manifest":
        if len(argv) != 3:
            print("usage: check.py --manifest CASES.json", file=sys.stderr)
            return 2
        with open(argv[2]) as f:
            cases = json.load(f)
    else:
        cases = [{"name": p, "model": p} for p in argv[1:]]
    failed = 0
    for case in cases:
        line = run_case(case, onnx, ort, np)
        if line.startswith("FAIL"):
            failed += 1
        print(line, flush=True)
    print("%d of %d cases passed" % (len(cases) - failed, len(cases)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
