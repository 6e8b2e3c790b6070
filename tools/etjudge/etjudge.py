"""Judge ExecuTorch files with the genuine ExecuTorch runtime.

Usage: etjudge.py [MANIFEST.json]      (the manifest is read from stdin without one)
       etjudge.py --operators          (print the runtime's registered operators, one a line)

The manifest is a JSON list of cases, or an object {"cases": [...]}. A case:

    {"name": "resnet18.portable",        # echoed in the result
     "pte": "out/resnet18.pte",          # a .pte, or
     "bpte": "out/resnet18.bpte",        #   a bundled program (its test cases are run)
     "ptd": ["out/resnet18.ptd"],        # optional external data (one file; a string works too)
     "inputs": "tests/corpus/x/io",      # input_<i>.npy (not used for a .bpte)
     "expected": "tests/corpus/x/io",    # output_<i>.npy, torch eager's outputs
     "method": "forward",                # optional, default "forward"
     "skip_outputs": 0}                  # optional: leading method outputs not in expected
                                         #   (fxport returns mutated buffers first)

For each case the program is loaded with Verification.InternalConsistency (a .bpte's
embedded program too), its method loaded and executed, and every output compared with the
expected one: same dtype and shape; floating point passes when
max|got - exp| <= 1e-4 * max|exp| (NaN matches NaN), other dtypes must be equal. A .bpte is
also run through the runtime's bundled-program API: verify_result_with_bundled_expected_output
loads each test case's inputs from the bundle, executes them and checks the bundle's expected
outputs; its outputs are compared with the expected directory as above.

One JSON line per case is printed on stdout:

    {"name", "loaded", "ran", "ok", "error", "max_error", "scale", "outputs", "seconds"}

(max_error and scale belong to the output with the largest max_error / scale ratio.) Each case
runs in a forked child of this one process, so a runtime that aborts (a failed ET_CHECK)
fails only its case; the runtime's log lines from that case are part of "error".
Exit status: 0 when every case passed, 1 when any failed, 2 on a bad manifest, 3 when
torch or executorch is not importable.
"""

import json
import os
import signal
import struct
import sys
import tempfile
import time

RTOL = 1e-4  # fp rule: max|got - exp| <= RTOL * max|exp|
CASE_TIMEOUT_S = 300


def read_manifest(argv):
    if len(argv) > 1:
        with open(argv[1]) as f:
            doc = json.load(f)
    else:
        doc = json.load(sys.stdin)
    if isinstance(doc, dict):
        doc = doc.get("cases")
    if not isinstance(doc, list):
        raise ValueError("manifest: want a list of cases or {\"cases\": [...]}")
    for i, c in enumerate(doc):
        if not isinstance(c, dict):
            raise ValueError("manifest: case %d is not an object" % i)
        if ("pte" in c) == ("bpte" in c):
            raise ValueError("manifest: case %d (%s): want exactly one of pte and bpte" % (i, c.get("name")))
    return doc


def ptd_paths(case):
    p = case.get("ptd") or []
    if isinstance(p, str):
        p = [p]
    if len(p) > 1:
        raise ValueError("%d .ptd files: the runtime's Python API takes one data file" % len(p))
    return p


def npy_files(d, prefix):
    """The arrays prefix_0.npy, prefix_1.npy, ... of directory d, in index order."""
    import numpy as np

    out = []
    i = 0
    while True:
        p = os.path.join(d, "%s_%d.npy" % (prefix, i))
        if not os.path.exists(p):
            break
        out.append(np.load(p, allow_pickle=False))
        i += 1
    if not out:
        raise ValueError("%s: no %s_0.npy" % (d, prefix))
    return out


# --- bundled program: the flatbuffer fields the judge needs (bundled_program.fbs) ---

def _table_field(buf, table, slot):
    """Absolute position of field slot of the table at table, or None when absent."""
    vt = table - struct.unpack_from("<i", buf, table)[0]
    vt_size = struct.unpack_from("<H", buf, vt)[0]
    off = 4 + 2 * slot
    if off + 2 > vt_size:
        return None
    rel = struct.unpack_from("<H", buf, vt + off)[0]
    return table + rel if rel else None


def _deref(buf, pos):
    return pos + struct.unpack_from("<I", buf, pos)[0]


def bundled_layout(buf):
    """(embedded program bytes, [(method name, number of test cases)]) of a .bpte."""
    if buf[4:8] != b"BP08":
        raise ValueError("not a bundled program (identifier %r, want 'BP08')" % bytes(buf[4:8]))
    root = _deref(buf, 0)
    suites = []
    f = _table_field(buf, root, 1)  # method_test_suites
    if f is not None:
        vec = _deref(buf, f)
        n = struct.unpack_from("<I", buf, vec)[0]
        for i in range(n):
            suite = _deref(buf, vec + 4 + 4 * i)
            name = ""
            nf = _table_field(buf, suite, 0)
            if nf is not None:
                s = _deref(buf, nf)
                ln = struct.unpack_from("<I", buf, s)[0]
                name = bytes(buf[s + 4:s + 4 + ln]).decode()
            cases = 0
            cf = _table_field(buf, suite, 1)
            if cf is not None:
                cases = struct.unpack_from("<I", buf, _deref(buf, cf))[0]
            suites.append((name, cases))
    pf = _table_field(buf, root, 2)  # program
    if pf is None:
        raise ValueError("bundled program without an embedded program")
    pv = _deref(buf, pf)
    ln = struct.unpack_from("<I", buf, pv)[0]
    return bytes(buf[pv + 4:pv + 4 + ln]), suites


# --- comparison ---

def compare(got, exp):
    """(ok, max_error, scale, message) for one output against its expected array."""
    import numpy as np
    import torch

    if isinstance(got, torch.Tensor):
        g = got.detach().contiguous().numpy()
    elif isinstance(got, (bool, int, float)):
        g = np.asarray(got)
    else:
        return False, None, None, "output is a %s, not a tensor" % type(got).__name__
    if g.dtype != exp.dtype:
        return False, None, None, "dtype %s, want %s" % (g.dtype, exp.dtype)
    if tuple(g.shape) != tuple(exp.shape):
        return False, None, None, "shape %s, want %s" % (list(g.shape), list(exp.shape))
    if g.size == 0:
        return True, 0.0, 0.0, ""
    if np.issubdtype(exp.dtype, np.floating):
        g64 = g.astype(np.float64)
        e64 = exp.astype(np.float64)
        nan_g, nan_e = np.isnan(g64), np.isnan(e64)
        if (nan_g != nan_e).any():
            return False, float("nan"), None, "%d NaN where torch has none (or the reverse)" % int((nan_g != nan_e).sum())
        fin = ~nan_e
        scale = float(np.abs(e64[fin]).max()) if fin.any() else 0.0
        same = (g64 == e64) | nan_e  # equal infinities too
        diff = np.where(same, 0.0, np.abs(g64 - e64))
        err = float(diff.max())
        if err <= RTOL * scale:
            return True, err, scale, ""
        at = np.unravel_index(int(np.argmax(diff)), diff.shape)
        return False, err, scale, "max error %.3g > %.0e x max|expected| %.3g; worst at %s: got %r, want %r" % (
            err, RTOL, scale, list(map(int, at)), float(g64[at]), float(e64[at]))
    neq = g != exp
    if neq.any():
        at = tuple(np.argwhere(neq)[0])
        return False, None, None, "%d of %d elements differ (exact comparison for %s); first at %s: got %r, want %r" % (
            int(neq.sum()), g.size, exp.dtype, list(map(int, at)), g[at].item(), exp[at].item())
    return True, 0.0, float(np.abs(exp.astype(np.float64)).max()), ""


def compare_all(outs, expected, skip, what):
    res = {"outputs": len(outs), "max_error": 0.0, "scale": 0.0}
    outs = list(outs)
    if skip < 0 or skip > len(outs):
        return False, "%s: %d outputs, cannot skip %d" % (what, len(outs), skip), res
    user = outs[skip:]
    if len(user) != len(expected):
        return False, "%s: %d outputs (after skipping %d), torch has %d" % (what, len(user), skip, len(expected)), res
    worst = -1.0
    for i, (g, e) in enumerate(zip(user, expected)):
        ok, err, scale, msg = compare(g, e)
        if not ok:
            return False, "%s: output %d: %s" % (what, i + skip, msg), res
        ratio = err / scale if scale else 0.0
        if ratio > worst:
            worst = ratio
            res["max_error"], res["scale"] = err, scale
    return True, "", res


# --- one case (runs in the child) ---

def run_case(case, result):
    import torch
    from executorch.runtime import Runtime, Verification

    rt = Runtime.get()
    method = case.get("method", "forward")
    ptd = ptd_paths(case)
    expected = npy_files(case["expected"], "output")
    skip = int(case.get("skip_outputs", 0))
    if "pte" in case:
        prog = rt.load_program(case["pte"], verification=Verification.InternalConsistency,
                               data_path=ptd[0] if ptd else None)
        if method not in prog.method_names:
            raise RuntimeError("no method %r (methods: %s)" % (method, sorted(prog.method_names)))
        m = prog.load_method(method)
        result["loaded"] = True
        inputs = [torch.from_numpy(a.copy()) for a in npy_files(case["inputs"], "input")]
        outs = m.execute(inputs)
        result["ran"] = True
        ok, msg, res = compare_all(outs, expected, skip, "method %s" % method)
        result.update(res)
        result["ok"] = ok
        result["error"] = msg
        return
    # A bundled program: its embedded program with full verification, then its test cases.
    import executorch.extension.pybindings.portable_lib as lib

    with open(case["bpte"], "rb") as f:
        buf = f.read()
    program, suites = bundled_layout(buf)
    prog = rt.load_program(program, verification=Verification.InternalConsistency,
                           data_path=ptd[0] if ptd else None)
    prog.load_method(method)
    ncases = dict(suites).get(method, 0)
    if ncases == 0:
        raise RuntimeError("bundled program has no test case for method %r (suites: %s)" % (method, suites))
    if ptd:
        raise ValueError("a .bpte with a .ptd: the runtime's bundled-program API takes no data file")
    bundle = lib._load_bundled_program_from_buffer(buf)
    result["loaded"] = True
    result["cases"] = ncases
    # The bundle's own expected outputs, with the runtime's rtol and an atol
    # of the judge's rule's order of magnitude.
    scale = max([float(abs(e.astype("float64")).max()) for e in expected if e.size and e.dtype.kind == "f"] or [0.0])
    for i in range(ncases):
        # Loads test case i's inputs, executes and checks the bundle's expected
        # outputs (raising on a mismatch); returns the outputs.
        outs = bundle.verify_result_with_bundled_expected_output(method, i, rtol=1e-5, atol=max(RTOL * scale, 1e-8))
        result["ran"] = True
        ok, msg, res = compare_all(outs, expected, skip, "test case %d" % i)
        result.update(res)
        if not ok:
            result["ok"] = False
            result["error"] = msg
            return
    result["ok"] = True
    result["error"] = ""


def log_tail(path, limit=6):
    """The runtime's log lines of a case that say what went wrong (each distinct line
    once, the last ones kept); all its lines when none does."""
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f]
    except OSError:
        return ""
    noise = ("operator_registry.cpp:278]", "cpuinfo_utils.cpp", "_pytree.py")
    seen, keep = set(), []
    for l in lines:
        if not l or l in seen or any(n in l for n in noise) or l.startswith("W1"):
            continue
        seen.add(l)
        keep.append(l)
    telling = [l for l in keep if any(w in l for w in ("rror", "ailed", "not found", "Missing", "Expected", "must", "nvalid"))]
    return " | ".join((telling or keep)[-limit:])


def judge(case):
    start = time.monotonic()
    result = {"name": case.get("name", case.get("pte") or case.get("bpte")), "loaded": False, "ran": False,
              "ok": False, "error": "", "max_error": None, "scale": None, "outputs": 0}
    logf = tempfile.NamedTemporaryFile(prefix="etjudge-", suffix=".log", delete=False)
    logf.close()
    rfd, wfd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: run the case, send the result, never return
        code = 0
        try:
            os.close(rfd)
            fd = os.open(logf.name, os.O_WRONLY | os.O_TRUNC)
            os.dup2(fd, 2)
            os.dup2(fd, 1)
            try:
                # One intra-op thread: the parent's OpenMP pool does not
                # survive fork (libgomp), and a torch op large enough to go
                # parallel (a segmentation output's comparison) would wait
                # on its threads forever.
                import torch

                torch.set_num_threads(1)
                run_case(case, result)
            except Exception as e:  # the runtime raises RuntimeError, ValueError, ...
                result["error"] = "%s: %s" % (type(e).__name__, e)
            with os.fdopen(wfd, "w") as w:
                w.write(json.dumps(result))
        except BaseException:
            code = 3
        os._exit(code)
    os.close(wfd)
    chunks = []
    deadline = time.monotonic() + CASE_TIMEOUT_S
    import select

    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        r, _, _ = select.select([rfd], [], [], left)
        if r:
            b = os.read(rfd, 1 << 16)
            if not b:
                break
            chunks.append(b)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    tail = log_tail(logf.name)
    os.unlink(logf.name)
    if chunks:
        result = json.loads(b"".join(chunks).decode())
    elif timed_out:
        result["error"] = "timed out after %d s" % CASE_TIMEOUT_S
    elif os.WIFSIGNALED(status):
        result["error"] = "runtime aborted (%s)" % signal.Signals(os.WTERMSIG(status)).name
    else:
        result["error"] = "judge child exited with status %d" % os.WEXITSTATUS(status)
    if not result["ok"] and tail:
        result["error"] = (result["error"] + "; runtime log: " + tail) if result["error"] else "runtime log: " + tail
    result["seconds"] = round(time.monotonic() - start, 3)
    return result


def main(argv):
    if len(argv) > 1 and argv[1] == "--operators":
        try:
            from executorch.runtime import Runtime
        except ImportError as e:
            print("etjudge: the ExecuTorch runtime is not importable: %s" % e, file=sys.stderr)
            return 3

        for name in sorted(Runtime.get().operator_registry.operator_names):
            print(name)
        return 0
    try:
        cases = read_manifest(argv)
        for c in cases:
            ptd_paths(c)
    except (ValueError, OSError) as e:
        print("etjudge: %s" % e, file=sys.stderr)
        return 2
    # Import once in this process; every forked child shares it.
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
        import executorch.runtime  # noqa: F401
        import executorch.extension.pybindings.portable_lib  # noqa: F401
    except ImportError as e:
        print("etjudge: the ExecuTorch runtime is not importable: %s" % e, file=sys.stderr)
        return 3

    failed = 0
    for c in cases:
        r = judge(c)
        failed += 0 if r["ok"] else 1
        print(json.dumps(r), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
