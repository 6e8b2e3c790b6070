#!/usr/bin/env python3
"""make anchors: torch's own exporters beside fxport on the same programs, one run.

    third_party/venv/bin/python tools/anchors/anchors.py [--only NAME,...] [--runs N]
        [--repeat R] [--out docs/benchmarks.md] [--fxport bin/fxport] [--list]

For every tests/corpus program (model factory from tools/fxgen/gen_corpus.py's
PROGRAMS, inputs from tests/corpus/<name>/io/) it runs

  * torch.onnx.export(ep, dynamo=True, optimize=True)   vs  fxport export --target onnx
  * exir to_edge_transform_and_lower(ep, [XnnpackPartitioner()]).to_executorch()
                                                          vs  fxport export --target executorch-xnnpack

and records success, wall time, peak memory, ONNX node count, XNNPACK nodes
and delegate calls, planned arena, file size, latency of every file on its
genuine runtime (executorch.runtime for .pte, onnxruntime for .onnx) and
whether the outputs match torch eager. The table goes to --out (markdown).

The script itself needs only the standard library: torch's side runs in a
worker process (this file with --worker, the venv's interpreter) that answers
one JSON request per line; a worker that dies (a runtime abort) is restarted
and the request that killed it is recorded as a crash.
"""

import sys

sys.dont_write_bytecode = True

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FXGEN = os.path.join(REPO, "tools", "fxgen")

# fp32 rule of the project's judges: max |got - want| <= 1e-4 * max |want|.
REL_TOL = 1e-4

# executorch::runtime::Error codes, to name what the runtime refused.
ERROR_NAMES = {0x01: "Internal", 0x02: "InvalidState", 0x10: "NotSupported", 0x11: "NotImplemented",
               0x12: "InvalidArgument", 0x13: "InvalidType", 0x14: "OperatorMissing", 0x20: "NotFound",
               0x21: "MemoryAllocationFailed", 0x22: "AccessFailed", 0x23: "InvalidProgram",
               0x24: "InvalidExternalData", 0x25: "OutOfResources", 0x30: "DelegateInvalidCompatibility",
               0x31: "DelegateMemoryAllocationFailed", 0x32: "DelegateInvalidHandle"}


# ---------------------------------------------------------------------------
# Programs


def corpus_programs(corpus):
    """(name, model path, factory) for every corpus directory with a program.pt2.

    The model factories come from gen_corpus.PROGRAMS (the corpus generator's
    own table); a directory without a row gets model None (fxport-only row).
    """
    sys.path.insert(0, FXGEN)
    try:
        import gen_corpus  # standard library only
    finally:
        sys.path.remove(FXGEN)
    table = {p[0]: (os.path.join(FXGEN, "models", p[1]), p[2]) for p in gen_corpus.PROGRAMS}
    order = [p[0] for p in gen_corpus.PROGRAMS]
    names = sorted(d for d in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, d, "program.pt2")))
    names.sort(key=lambda n: (order.index(n) if n in order else len(order), n))
    out = []
    for n in names:
        model, factory = table.get(n, (None, None))
        out.append({"name": n, "kind": "corpus", "model": model, "factory": factory, "dir": os.path.join(corpus, n),
                    "pt2": os.path.join(corpus, n, "program.pt2")})
    return out


def scaling_programs(cache):
    """Every program of tools/anchors/scaling.py (model x size), captured or not: <model>_<size>."""
    sys.path.insert(0, HERE)
    try:
        import scaling  # standard library only until build()
    finally:
        sys.path.remove(HERE)
    d = scaling.cache_dir(cache)
    out = []
    for size in scaling.SIZES:
        for m in scaling.MODELS:
            pt2 = os.path.join(d, "%s_%s.pt2" % (m, size))
            meta = None
            try:
                with open(pt2[:-4] + ".json") as f:
                    meta = json.load(f)
            except (OSError, ValueError):
                pass
            out.append({"name": "%s_%s" % (m, size), "kind": "scaling", "model": m, "size": size, "pt2": pt2,
                        "meta": meta if meta and os.path.exists(pt2) else None})
    return out


def select_programs(spec, corpus, scaling_cache):
    """The programs a --programs list names: corpus, a corpus program, a size (1k, 10k, 100k: the three
    stacks at that size), or <model>_<size>. Returns (programs, notes): a size's programs that are not
    captured are left out with a note; a scaling program named alone must be captured."""
    corp = corpus_programs(corpus)
    scal = scaling_programs(scaling_cache)
    by_name = {p["name"]: p for p in corp + scal}
    sizes = sorted({p["size"] for p in scal})
    picked, notes = [], []
    for item in [x for x in spec.split(",") if x]:
        if item == "corpus":
            group = corp
        elif item in sizes:
            group = [p for p in scal if p["size"] == item]
            for p in group:
                if p["meta"] is None:
                    notes.append("%s is not captured (%s; make bench-programs), left out" % (p["name"], p["pt2"]))
            group = [p for p in group if p["meta"] is not None]
        elif item in by_name:
            group = [by_name[item]]
            if item not in {p["name"] for p in corp} and by_name[item]["meta"] is None:
                raise SystemExit("anchors: %s is not captured: %s (make bench-programs)" % (item, by_name[item]["pt2"]))
        else:
            raise SystemExit("anchors: unknown program %r (corpus, a corpus program, %s, or <model>_<size>; known: %s)"
                             % (item, ", ".join(sizes), ", ".join(sorted(by_name))))
        for p in group:
            if p not in picked:
                picked.append(p)
    return picked, notes


# ---------------------------------------------------------------------------
# fxport side: the built binary as a subprocess


def run_timed(cmd, log_path, timeout=None):
    """Run cmd; return (rc, wall seconds, peak RSS bytes, stderr text); rc None when it ran past timeout s (killed)."""
    import threading

    with open(log_path, "wb") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=REPO)
        killed = []
        timer = None
        if timeout:
            timer = threading.Timer(timeout, lambda: (killed.append(1), proc.kill()))
            timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if timer:
            timer.cancel()
        proc.returncode = None if killed else os.waitstatus_to_exitcode(status)
    with open(log_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    run_timed.cpu = usage.ru_utime + usage.ru_stime  # CPU seconds of the last command, all its threads
    return proc.returncode, wall, usage.ru_maxrss * 1024, text


def first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:200]
    return ""


def fxport_export(fxport, program, target, out, log, repeat, timeout=None):
    walls, peaks, cpus = [], [], []
    for _ in range(repeat):
        if os.path.exists(out):
            os.remove(out)
        rc, wall, peak, text = run_timed([fxport, "export", program, "--target", target, "-o", out], log, timeout)
        if rc is None:
            return {"ok": False, "timeout": timeout, "error": "timed out after %d s" % timeout, "wall": wall}
        if rc != 0:
            return {"ok": False, "error": first_line(text) or "exit status %d" % rc, "wall": wall, "peak": peak}
        walls.append(wall)
        peaks.append(peak)
        cpus.append(run_timed.cpu)
    return {"ok": True, "wall": statistics.median(walls), "cpu": statistics.median(cpus), "peak": max(peaks),
            "size": file_bytes(out)}


def file_bytes(path):
    """Size of a file plus any ONNX external-data files beside it that it names."""
    total = os.path.getsize(path)
    if path.endswith(".onnx"):
        d = os.path.dirname(path)
        stem = os.path.basename(path)
        for f in os.listdir(d):
            if f.startswith(stem) and f != stem:
                total += os.path.getsize(os.path.join(d, f))
    return total


_INSTR = re.compile(r"^    (\d+): (.*)$")
_XNN = re.compile(r"XN01 graph .*?: (\d+) value\(s\), (\d+) node\(s\)")
_ARENA = re.compile(r"non_const_buffer_sizes: \[([0-9 ]*)\]")


def inspect_pte(fxport, path, log, timeout=None):
    """Delegate calls, XNNPACK nodes, kernel calls and arena of method forward (fxport inspect)."""
    rc, _, _, text = run_timed([fxport, "inspect", path], log, timeout)
    if rc is None:
        return {"inspect_error": "timed out after %d s" % timeout}
    if rc != 0:
        return {"inspect_error": first_line(text)}
    method = None
    res = {"delegate_calls": 0, "xnn_nodes": 0, "kernel_calls": 0, "arena": None}
    for line in text.splitlines():
        m = re.match(r"^method (\S+):", line)
        if m:
            method = m.group(1)
            continue
        if method != "forward":
            continue
        m = _ARENA.search(line)
        if m and res["arena"] is None:
            res["arena"] = sum(int(x) for x in m.group(1).split())
            continue
        m = _INSTR.match(line)
        if m:
            body = m.group(2)
            if body.startswith("delegate "):
                res["delegate_calls"] += 1
            elif not body.startswith(("move ", "jump_false ", "free ")):
                res["kernel_calls"] += 1
            continue
        m = _XNN.search(line)
        if m:
            res["xnn_nodes"] += int(m.group(2))
    return res


# ---------------------------------------------------------------------------
# torch side: the worker process


class Worker:
    """A torch worker process answering one JSON request per line."""

    def __init__(self, python, log_path):
        self.python = python
        self.log_path = log_path
        self.proc = None
        self.state = None  # the last successful load, replayed after a restart

    def start(self):
        log = open(self.log_path, "ab")
        r_fd, w_fd = os.pipe()
        self.proc = subprocess.Popen([self.python, os.path.abspath(__file__), "--worker", str(w_fd)],
                                     stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(w_fd,), cwd=REPO,
                                     env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        os.close(w_fd)
        log.close()
        self.replies = r_fd
        self.buf = b""
        hello = self._read()
        if hello is None:
            raise SystemExit("anchors: the torch worker did not start (see %s)" % self.log_path)
        return hello

    def _read(self, timeout=None):
        """The next reply; None at the worker's end; "timeout" when none came within timeout seconds."""
        import select

        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buf:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.replies], [], [], left)[0]:
                    return "timeout"
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def _drop(self):
        os.close(self.replies)
        self.proc = None

    def call(self, req, timeout=None):
        """Send req; a worker that dies answers {"ok": False, "error": "crashed ..."}, one that runs past
        timeout seconds is killed and answers {"ok": False, "timeout": timeout, ...}."""
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None:
                self._drop()
            self.start()
            if req["op"] not in ("load", "load_scaling") and self.state is not None:
                self.call(self.state)
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        rep = self._read(timeout)
        if rep == "timeout":
            self.proc.kill()
            self.proc.wait()
            self._drop()
            return {"ok": False, "timeout": timeout, "error": "timed out after %d s in %s" % (timeout, req["op"])}
        if rep is None:
            self.proc.wait()
            code = self.proc.returncode
            self._drop()
            why = "signal %d" % -code if code < 0 else "exit status %d" % code
            return {"ok": False, "error": "the process crashed (%s) in %s" % (why, req["op"])}
        if req["op"] in ("load", "load_scaling") and rep.get("ok"):
            self.state = req
        return rep

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()
            os.close(self.replies)


def worker_main(fd):
    """The worker: torch, exir, executorch.runtime, onnxruntime in one process."""
    replies = os.fdopen(int(fd), "w")
    os.dup2(2, 1)  # whatever the libraries print goes to the log, not the protocol
    import warnings
    warnings.filterwarnings("ignore")
    import logging
    logging.disable(logging.WARNING)
    import numpy as np
    import torch
    torch.manual_seed(0)
    import onnx
    import onnxruntime as ort
    import onnxscript
    import executorch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime, Verification
    from importlib import metadata as md

    sys.path.insert(0, FXGEN)
    from fxgenlib import factory

    runtime = Runtime.get()

    def version(dist, mod=None):
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            return getattr(mod, "__version__", "?")

    def hwm_reset():
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")

    def status(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        return 0

    def measured(fn):
        """Run fn(); return (result, wall seconds, peak RSS, RSS before) — peak since a reset."""
        import gc
        gc.collect()
        hwm_reset()
        before = status("VmRSS")
        import resource
        u0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        res = fn()
        wall = time.perf_counter() - t0
        u1 = resource.getrusage(resource.RUSAGE_SELF)
        st["cpu"] = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)  # every thread of the worker
        return res, wall, status("VmHWM"), before

    st = {}

    def capture():
        if st.get("pt2"):  # a scaling program: the cached .pt2 itself, the program fxport reads
            ep = torch.export.load(st["pt2"])
            # torch.export.load gives parameters requires_grad; exir's passes then refuse the
            # decoder's in-place KV-cache update ("a leaf Variable that requires grad ...").
            for v in ep.state_dict.values():
                v.requires_grad_(False)
            return ep
        from torch.export import Dim
        dims, shapes = {}, []
        for i in range(len(st["inputs"])):
            spec = st["dynamic"].get(i) or {}
            per = {}
            for dim, (name, lo, hi) in sorted(spec.items()):
                if name not in dims:
                    kw = {}
                    if lo is not None:
                        kw["min"] = lo
                    if hi is not None:
                        kw["max"] = hi
                    dims[name] = Dim(name, **kw)
                per[dim] = dims[name]
            shapes.append(per or None)
        import copy
        mod = copy.deepcopy(st["module"]).eval()
        ep = torch.export.export(mod, tuple(st["inputs"]), dynamic_shapes=tuple(shapes) if dims else None)
        return ep.run_decompositions()

    def compare(got):
        want = st["eager"]
        if len(got) < len(want):
            return {"match": False, "why": "%d outputs, torch eager has %d" % (len(got), len(want))}
        got = got[len(got) - len(want):]  # leading extra outputs are buffer mutations
        worst = 0.0
        for g, w in zip(got, want):
            g = np.asarray(g)
            if tuple(g.shape) != tuple(w.shape):
                return {"match": False, "why": "shape %s, torch eager %s" % (list(g.shape), list(w.shape))}
            if w.dtype.kind in "biu":
                if not np.array_equal(g.astype(w.dtype), w):
                    return {"match": False, "why": "integer outputs differ"}
                continue
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            if not np.isfinite(g64).all() and not np.array_equal(np.isnan(g64), np.isnan(w64)):
                return {"match": False, "why": "non-finite values"}
            scale = max(float(np.max(np.abs(w64[np.isfinite(w64)]), initial=0.0)), 1e-30)
            fin = np.isfinite(w64)
            err = float(np.max(np.abs(g64[fin] - w64[fin]), initial=0.0)) / scale
            worst = max(worst, err)
        return {"match": worst <= REL_TOL, "rel_err": worst}

    def latency(fn, runs):
        for _ in range(3):
            fn()
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    def op_load(req):
        module, inputs, dynamic, _ = factory.load(req["model"], req["factory"])
        io = os.path.join(req["dir"], "io")
        n = 0
        while os.path.exists(os.path.join(io, "input_%d.npy" % n)):
            n += 1
        arrays = [np.load(os.path.join(io, "input_%d.npy" % i)) for i in range(n)]
        if len(arrays) != len(inputs):
            raise ValueError("io/ has %d inputs, the factory %d" % (len(arrays), len(inputs)))
        for i, (a, x) in enumerate(zip(arrays, inputs)):
            if list(a.shape) != list(x.shape):
                raise ValueError("io/input_%d.npy is %s, the factory's input %s" % (i, list(a.shape), list(x.shape)))
        st["module"] = module.eval()
        st["inputs"] = [torch.from_numpy(a.copy()) for a in arrays]
        st["arrays"] = arrays
        st["dynamic"] = {int(k): {int(d): v for d, v in s.items()} for k, s in dynamic.items()}
        st["pt2"] = None
        return eager()

    def eager():
        import copy
        from torch.utils import _pytree as pytree
        with torch.no_grad():
            out = copy.deepcopy(st["module"])(*[x.clone() for x in st["inputs"]])
        st["eager"] = [t.detach().numpy() for t in pytree.tree_flatten(out)[0]]
        return {"ok": True, "inputs": [list(a.shape) for a in st["arrays"]]}

    def op_load_scaling(req):
        """A scaling program: scaling.build's module and example inputs; torch's exporters get the cached .pt2."""
        sys.path.insert(0, HERE)
        import scaling
        module, inputs = scaling.build(req["model"], req["blocks"])
        st["module"] = module.eval()
        st["inputs"] = [x.clone() for x in inputs]
        st["arrays"] = [x.numpy().copy() for x in inputs]
        st["dynamic"] = {}
        st["pt2"] = req["pt2"]
        return eager()

    def op_onnx(req):
        ep, cap, _, _ = measured(capture)

        def step():
            torch.onnx.export(ep, (), req["out"], dynamo=True, optimize=True, external_data=False,
                              verbose=False)
        _, wall, peak, before = measured(step)
        return {"ok": True, "capture": cap, "wall": wall, "cpu": st["cpu"], "peak": peak, "before": before}

    def op_exir(req):
        ep, cap, _, _ = measured(capture)
        box = {}

        def step():
            et = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
            with open(req["out"], "wb") as f:
                f.write(et.buffer)
            box["et"] = et
        _, wall, peak, before = measured(step)
        arena = None
        for plan in box["et"].executorch_program.execution_plan:
            if plan.name == "forward":
                arena = sum(plan.non_const_buffer_sizes)
        return {"ok": True, "capture": cap, "wall": wall, "cpu": st["cpu"], "peak": peak, "before": before,
                "arena": arena}

    def runtime_said(fn):
        """Call fn with fd 2 captured; on an error, add the runtime's own reason (e.g. a missing kernel)."""
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile() as cap:
            os.dup2(cap.fileno(), 2)
            try:
                return fn()
            except Exception as e:  # noqa: BLE001 - re-raised with the runtime's words
                os.dup2(saved, 2)
                cap.seek(0)
                text = cap.read().decode("utf-8", "replace")
                os.write(2, text.encode())
                code = re.search(r"error: 0x:?([0-9a-fA-F]+)", str(e))
                why = [ERROR_NAMES.get(int(code.group(1), 16), "")] if code else []
                why += sorted(set(re.findall(r"kernel '([^']+)' not found", text)))
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise RuntimeError(first + ("" if not any(why) else " (%s)" % ", ".join(w for w in why if w)))
            finally:
                os.dup2(saved, 2)
                os.close(saved)

    def op_run_pte(req):
        def load():
            prog = runtime.load_program(req["path"], verification=Verification.InternalConsistency)
            return prog, prog.load_method("forward")
        prog, method = runtime_said(load)
        args = [torch.from_numpy(a.copy()) for a in st["arrays"]]
        outs = runtime_said(lambda: method.execute(args))
        res = compare([o.detach().numpy() if hasattr(o, "detach") else np.asarray(o) for o in outs])
        res["latency"] = latency(lambda: method.execute(args), req["runs"])
        res["ok"] = True
        return res

    def op_run_onnx(req):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(req["path"], so, providers=["CPUExecutionProvider"])
        names = [i.name for i in sess.get_inputs()]
        if len(names) != len(st["arrays"]):
            return {"ok": False, "error": "the model has %d inputs, the program %d" % (len(names), len(st["arrays"]))}
        feed = dict(zip(names, st["arrays"]))
        res = compare(sess.run(None, feed))
        res["latency"] = latency(lambda: sess.run(None, feed), req["runs"])
        res["ok"] = True
        return res

    def op_nodes(req):
        m = onnx.load(req["path"], load_external_data=False)
        return {"ok": True, "nodes": len(m.graph.node), "functions": len(m.functions),
                "opset": max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default=0)}

    def warm_up():
        """One tiny export through each exporter, so no program pays the lazy imports."""
        tmp = tempfile.mkdtemp(prefix="anchors-warm-")
        try:
            mod = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval()
            ep = torch.export.export(mod, (torch.randn(1, 4),))
            torch.onnx.export(ep, (), os.path.join(tmp, "w.onnx"), dynamo=True, optimize=True, external_data=False)
            et = to_edge_transform_and_lower(torch.export.export(mod, (torch.randn(1, 4),)),
                                             partitioner=[XnnpackPartitioner()]).to_executorch()
            with open(os.path.join(tmp, "w.pte"), "wb") as f:
                f.write(et.buffer)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    ops = {"load": op_load, "load_scaling": op_load_scaling, "onnx": op_onnx, "exir": op_exir, "run_pte": op_run_pte, "run_onnx": op_run_onnx,
           "nodes": op_nodes}
    warm_up()
    hello = {"ok": True, "versions": {
        "python": platform.python_version(), "torch": torch.__version__,
        "executorch": version("executorch", executorch), "onnx": onnx.__version__,
        "onnxruntime": ort.__version__, "onnxscript": version("onnxscript", onnxscript),
        "torchvision": version("torchvision"), "numpy": np.__version__}}
    replies.write(json.dumps(hello) + "\n")
    replies.flush()
    for line in sys.stdin:
        req = json.loads(line)
        try:
            rep = ops[req["op"]](req)
        except Exception as e:  # noqa: BLE001 - every exporter error is a result to report
            msg = str(e).strip().splitlines()
            rep = {"ok": False, "error": "%s: %s" % (type(e).__name__, msg[0] if msg else "")}
        replies.write(json.dumps(rep) + "\n")
        replies.flush()
    return 0


# ---------------------------------------------------------------------------
# The run


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {"cores": os.cpu_count(), "cpu": model, "mem": mem, "load": os.getloadavg()[0],
            "kernel": platform.release()}


def git_head():
    try:
        return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def go_version():
    try:
        return subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def run_program(p, args, worker, work):
    name = p["name"]
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    program = p["pt2"]
    row = {"name": name, "kind": p["kind"]}
    if p["kind"] == "scaling":
        row["nodes"], row["blocks"] = p["meta"]["nodes"], p["meta"]["blocks"]
    tmo = args.timeout or None
    log = os.path.join(d, "fxport.log")
    files = {"fx_onnx": os.path.join(d, "fxport.onnx"), "fx_pte": os.path.join(d, "fxport.pte"),
             "t_onnx": os.path.join(d, "torch.onnx"), "t_pte": os.path.join(d, "exir.pte")}
    row["fx_onnx"] = fxport_export(args.fxport, program, "onnx", files["fx_onnx"], log, args.repeat, tmo)
    row["fx_pte"] = fxport_export(args.fxport, program, "executorch-xnnpack", files["fx_pte"], log, args.repeat, tmo)
    if p["kind"] == "scaling":
        row["load"] = worker.call({"op": "load_scaling", "name": name, "model": p["model"],
                                   "blocks": p["meta"]["blocks"], "pt2": program}, tmo)
    elif p["model"] is None:
        row["load"] = {"ok": False, "error": "no model factory in tools/fxgen/gen_corpus.py"}
    else:
        row["load"] = worker.call({"op": "load", "name": name, "model": p["model"], "factory": p["factory"],
                                   "dir": p["dir"]}, tmo)
    if row["load"].get("ok"):
        for key, op, size in (("t_onnx", "onnx", file_bytes), ("t_pte", "exir", os.path.getsize)):
            walls, cpus = [], []
            for _ in range(args.repeat):
                rep = worker.call({"op": op, "out": files[key]}, tmo)
                if not rep.get("ok"):
                    break
                walls.append(rep["wall"])
                cpus.append(rep.get("cpu"))
            if rep.get("ok"):
                rep["wall"] = statistics.median(walls)
                rep["cpu"] = statistics.median(cpus) if None not in cpus else None
                rep["size"] = size(files[key])
            row[key] = rep
    for key in ("fx_onnx", "t_onnx"):
        r = row.get(key)
        if r and r.get("ok"):
            nd = worker.call({"op": "nodes", "path": files[key]}, tmo)
            if nd.get("ok"):
                r.update({k: v for k, v in nd.items() if k != "ok"})
            if row["load"].get("ok"):
                r["run"] = worker.call({"op": "run_onnx", "path": files[key], "runs": args.runs}, tmo)
    for key in ("fx_pte", "t_pte"):
        r = row.get(key)
        if r and r.get("ok"):
            r["inspect"] = inspect_pte(args.fxport, files[key], os.path.join(d, "inspect.log"), tmo)
            if row["load"].get("ok"):
                r["run"] = worker.call({"op": "run_pte", "path": files[key], "runs": args.runs}, tmo)
    return row


# ---------------------------------------------------------------------------
# Rendering


def ms(s):
    if s is None:
        return "—"
    if s >= 10:
        return "%.1f s" % s
    if s >= 1:
        return "%.2f s" % s
    return "%.0f ms" % (s * 1000) if s >= 0.01 else "%.2f ms" % (s * 1000)


def mib(b):
    return "—" if b is None else "%.0f MiB" % (b / 1048576.0)


def kib(b):
    return "—" if b is None else "%.0f KiB" % (b / 1024.0) if b >= 1024 else "%d B" % b


def ratio(a, b):
    if not a or not b:
        return "—"
    r = a / b
    return "%.0f×" % r if r >= 10 else "%.1f×" % r


def cell_err(r):
    if r.get("timeout"):
        return "**timed out** (> %s)" % ms(r["timeout"])
    return "**fails**: %s" % r.get("error", "?").replace("|", "\\|")


def speedup(f, t):
    """torch's time over fxport's; a lower bound (">") when torch ran past the timeout."""
    if not f.get("ok"):
        return "—"
    if t.get("ok"):
        return ratio(t.get("wall"), f.get("wall"))
    if t.get("timeout"):
        return "> " + ratio(t["timeout"], f.get("wall"))
    return "—"


def match_cell(r):
    run = (r or {}).get("run")
    if not r or not r.get("ok"):
        return "—"
    if run is None:
        return "not run"
    if not run.get("ok"):
        return "**fails to run**: %s" % run.get("error", "?").replace("|", "\\|")
    if run.get("match"):
        return "yes (%.0e)" % run["rel_err"]
    if "why" in run:
        return "**no**: %s" % run["why"]
    return "**no** (%.0e)" % run["rel_err"]


def lat(r):
    run = (r or {}).get("run")
    if not run or not run.get("ok"):
        return "—"
    return ms(run["latency"])


def write_page(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


CORPUS_HEADING = "## ONNX: `fxport export --target onnx`"


def kept_corpus(page):
    """The corpus tables and summary of an earlier page, headed by which run they come from; '' if none."""
    try:
        with open(page) as f:
            text = f.read()
    except OSError:
        return ""
    i = text.find(CORPUS_HEADING)
    if i < 0:
        return ""
    j = text.find("\n## Scaling", i)
    body = text[i:] if j < 0 else text[i:j + 1]
    if "<!-- kept from" in text[:i]:  # already kept once: keep its own header line
        k = text.rfind("<!-- kept from", 0, i)
        return text[k:i] + body.rstrip("\n") + "\n"
    commit = re.search(r"fxport: commit `([^`]*)`", text)
    load = re.search(r"load average ([0-9.]+) at the start", text)
    run = re.search(r"the run: (.*?); whole run ([0-9]+) s", text)
    head = ("<!-- kept from an earlier page -->\n**The corpus tables below are from an earlier run** (fxport commit `%s`, "
            "load average %s at its start, whole run %s s, same measurements as above); this run measured only the "
            "programs of the scaling section (`--keep-corpus`).\n\n"
            % (commit.group(1) if commit else "?", load.group(1) if load else "?", run.group(2) if run else "?"))
    return head + body.rstrip("\n") + "\n"


def render(rows, info, args, elapsed, partial=None, notes=(), kept=""):
    L = []
    a = L.append
    a("# Anchors: fxport beside torch's own exporters\n")
    a("<!-- Code generated by tools/anchors/anchors.py (make anchors). DO NOT EDIT. -->\n")
    if partial:
        a("**Partial run: %d of %d programs so far.**\n" % (len(rows), partial))
    a("Generated by `make anchors` (`tools/anchors/anchors.py`); do not edit by hand. Every figure comes from one")
    a("run on the machine below%s; timings and memory vary between runs, everything else is deterministic.\n"
      % (" (except the corpus tables, kept from an earlier run: see there)" if kept and not any(
          r.get("kind", "corpus") == "corpus" for r in rows) else ""))
    m, v = info["machine"], info["versions"]
    a("## Machine and versions\n")
    a("- machine: %d cores, %s, %.0f GiB RAM, Linux %s; 1-minute load average %.1f at the start of the run"
      % (m["cores"], m["cpu"], m["mem"] / 1073741824.0, m["kernel"], m["load"]))
    a("- fxport: commit `%s`, %s; torch %s, torchvision %s, executorch %s, onnx %s, onnxscript %s, onnxruntime %s, "
      "numpy %s, Python %s" % (info["commit"], info["go"], v["torch"], v["torchvision"], v["executorch"], v["onnx"],
                               v["onnxscript"], v["onnxruntime"], v["numpy"], v["python"]))
    a("- the run: %d programs (`--programs %s`), latency = median of %d runs after 3 warm-up runs, exporter times = "
      "median of %d run(s), every exporter step and runtime call stopped after %s (shown as *timed out*); whole run "
      "%.0f s\n" % (len(rows), args.programs, args.runs, args.repeat, ms(args.timeout) if args.timeout else "no limit",
                    elapsed))
    for n in notes:
        a("- not in this run: %s" % n)
    if notes:
        a("")
    a("## What is measured\n")
    a("- **program**: a `tests/corpus/<name>` program, or a scaling program (below). fxport reads `program.pt2`;")
    a("  for the corpus torch's exporters get the")
    a("  `ExportedProgram` of `torch.export.export(...).run_decompositions()` on the model factory's module")
    a("  (`tools/fxgen/models`, with the factory's dynamic dims): the core-ATen capture that `tools/fxgen` saves as")
    a("  the corpus's `program.pt2`, so both sides start from the same program. Inputs are `io/input_<i>.npy`.")
    a("- **time** (exporter step only): fxport — wall time of the process `bin/fxport export program.pt2 --target T")
    a("  -o OUT`, from its start to its exit (reading the `.pt2`, every pass, writing the file). torch.onnx — the call")
    a("  `torch.onnx.export(ep, (), OUT, dynamo=True, optimize=True, external_data=False)` (translation, the")
    a("  onnxscript optimizer, writing the file). exir — `to_edge_transform_and_lower(ep,")
    a("  partitioner=[XnnpackPartitioner()]).to_executorch()` and writing `.buffer` to the file. torch's calls run in")
    a("  a process that has already imported everything and exported one tiny module through both exporters; the")
    a("  `torch.export` capture itself is not in torch's time (it is shown apart as *capture*).")
    a("- **peak**: fxport — peak RSS of its process (`wait4`); torch — peak RSS of the worker process during the")
    a("  call (`/proc/self/clear_refs` reset before, `VmHWM` after), with the rise over the RSS before the call in")
    a("  brackets (the process already holds torch, the module and the `ExportedProgram`).")
    a("- **ONNX nodes**: nodes of the top-level graph. **XNN nodes / calls**: XNNPACK nodes inside every delegate")
    a("  blob, and delegate calls in method `forward`; **kernels**: the other (portable) kernel calls; **arena**:")
    a("  the sum of `non_const_buffer_sizes` of `forward` — all read from each `.pte` by `fxport inspect` (exir's")
    a("  arena is also read from its own `execution_plan`, and must agree).")
    a("- **latency**: `.pte` on the genuine ExecuTorch runtime (`executorch.runtime`, `Verification.InternalConsistency`,")
    a("  portable + optimized kernels and the XNNPACK delegate), `.onnx` in ONNX Runtime (CPU, 1 intra-op thread);")
    a("  same inputs, median of %d runs. **matches eager**: the outputs against torch eager on the same module" % args.runs)
    a("  and inputs, max |got − want| ≤ 1e-4 × max |want| (the worst relative error in brackets; extra leading")
    a("  outputs of a `.pte` are buffer mutations and are not compared).\n")

    corpus = [r for r in rows if r.get("kind", "corpus") == "corpus"]
    scal = [r for r in rows if r.get("kind") == "scaling"]
    if not corpus and kept:
        a(kept)
    if corpus:
        a("## ONNX: `fxport export --target onnx` vs `torch.onnx.export(dynamo=True)` + onnxscript optimizer\n")
        onnx_table(a, corpus, scaling=False)
        a("## ExecuTorch + XNNPACK: `fxport export --target executorch-xnnpack` vs exir `to_edge_transform_and_lower` "
          "+ `XnnpackPartitioner` + `to_executorch`\n")
        pte_table(a, corpus, scaling=False)
        a(summary(corpus))
    if scal:
        a("## Scaling: genuine torch.export stacks of 1k to 100k nodes\n")
        a("The programs of `tools/anchors/scaling.py` (`make bench-programs`): a stack of one real block repeated —")
        a("*decoder* a Llama-style decoder block (RMSNorm, rotary embedding, grouped-query attention over a KV cache")
        a("held in buffers and updated in place, SwiGLU MLP), *vit* torchvision's ViT `EncoderBlock`, *resnet*")
        a("torchvision's `BasicBlock` — tiny widths, captured with `torch.export.export(...).run_decompositions()` and")
        a("saved with `torch.export.save`, cached outside git (`~/.cache/fxport/bench`). fxport reads the cached `.pt2`;")
        a("torch's exporters get `torch.export.load` of the same file (its time is the *load* column, outside theirs;")
        a("its tensors with `requires_grad` off, without which exir refuses the decoder's in-place KV-cache update),")
        a("and the outputs are compared with torch eager on `scaling.build`'s module and example inputs. *nodes*: the")
        a("program's graph nodes. *CPU*: CPU seconds of the exporter step (every thread; fxport's process from")
        a("`wait4`, torch's worker from `getrusage` around the call), steadier than wall time on a loaded machine.")
        a("The goal (issue #16): at 10k nodes or more fxport at least 50× faster than each of")
        a("torch's exporters, with a planned arena no larger than exir's.\n")
        a("### ONNX\n")
        onnx_table(a, scal, scaling=True)
        a("### ExecuTorch + XNNPACK\n")
        pte_table(a, scal, scaling=True)
        a(goal(scal))
    return "\n".join(L) + "\n"


def no_run(r):
    return {"ok": False, "timeout": r["load"].get("timeout"), "error": r["load"].get("error", "not run")}


def cpu_cell(f, t):
    """CPU seconds of the exporter step, fxport / torch, and their ratio: steadier than wall time under load."""
    fc, tc = f.get("cpu") if f.get("ok") else None, t.get("cpu") if t.get("ok") else None
    if fc is None and tc is None:
        return "—"
    return "%s / %s%s" % (ms(fc), ms(tc), " (%s)" % ratio(tc, fc) if fc and tc else "")


def peak_cell(t):
    return "%s (+%s)" % (mib(t["peak"]), mib(max(t["peak"] - t["before"], 0))) if t.get("ok") else "—"


def onnx_table(a, rows, scaling):
    a("| program | %sfxport | torch.onnx | speed-up | %s%s | fxport peak | torch.onnx peak | nodes fxport / torch | "
      "size fxport / torch | ORT latency fxport / torch | fxport matches eager | torch.onnx matches eager |"
      % ("nodes | " if scaling else "", "CPU fxport / torch | " if scaling else "", "load" if scaling else "capture"))
    a("|---|%s---|---|---|---|---|---|---|---|---|---|---|" % ("---|---|" if scaling else ""))
    for r in rows:
        f, t = r["fx_onnx"], r.get("t_onnx") or no_run(r)
        a("| `%s` | %s%s | %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["name"], ("%d | " % r["nodes"]) if scaling else "",
            ms(f["wall"]) if f["ok"] else cell_err(f),
            ms(t["wall"]) if t["ok"] else cell_err(t),
            speedup(f, t), (cpu_cell(f, t) + " | ") if scaling else "",
            ms(t.get("capture")) if t.get("ok") else "—",
            mib(f.get("peak")) if f["ok"] else "—",
            peak_cell(t),
            "%s / %s" % (f.get("nodes", "—"), t.get("nodes", "—")),
            "%s / %s" % (kib(f.get("size")), kib(t.get("size"))),
            "%s / %s" % (lat(f), lat(t)),
            match_cell(f), match_cell(t)))
    a("")


def deleg(x):
    i = x.get("inspect") if x.get("ok") else None
    if not i:
        return "—"
    if "inspect_error" in i:
        return "inspect: %s" % i["inspect_error"]
    return "%d / %d / %d" % (i["xnn_nodes"], i["delegate_calls"], i["kernel_calls"])


def arena_of(x):
    i = x.get("inspect") if x.get("ok") else None
    return None if not i else i.get("arena")


def arena(x):
    v = arena_of(x)
    if v is None:
        return "—"
    s = kib(v)
    if x.get("arena") is not None and x["arena"] != v:
        s += " (execution_plan: %s)" % kib(x["arena"])
    return s


def pte_table(a, rows, scaling):
    a("| program | %sfxport | exir | speed-up | %sfxport peak | exir peak | XNN nodes / calls / kernels fxport | "
      "exir | arena fxport / exir | size fxport / exir | runtime latency fxport / exir | fxport matches eager | "
      "exir matches eager |" % ("nodes | " if scaling else "", "CPU fxport / exir | " if scaling else ""))
    a("|---|%s---|---|---|---|---|---|---|---|---|---|---|---|" % ("---|---|" if scaling else ""))
    for r in rows:
        f, t = r["fx_pte"], r.get("t_pte") or no_run(r)
        a("| `%s` | %s%s | %s | %s | %s%s | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s | %s |" % (
            r["name"], ("%d | " % r["nodes"]) if scaling else "",
            ms(f["wall"]) if f["ok"] else cell_err(f),
            ms(t["wall"]) if t["ok"] else cell_err(t),
            speedup(f, t), (cpu_cell(f, t) + " | ") if scaling else "",
            mib(f.get("peak")) if f["ok"] else "—",
            peak_cell(t),
            deleg(f), deleg(t), arena(f), arena(t),
            kib(f.get("size")) if f["ok"] else "—", kib(t.get("size")) if t["ok"] else "—",
            lat(f), lat(t), match_cell(f), match_cell(t)))
    a("")


def goal(rows):
    """Each scaling program of 10k nodes or more against the goal: >= 50x faster than each, arena <= exir's."""
    out = ["### Against the goal\n"]
    big = [r for r in rows if r.get("nodes", 0) >= 9000]
    if not big:
        out.append("No program of 10k nodes in this run.\n")
        return "\n".join(out) + "\n"
    out.append("| program | nodes | speed-up over torch.onnx | speed-up over exir | arena fxport / exir | "
               "≥ 50× over both, arena ≤ exir's |")
    out.append("|---|---|---|---|---|---|")
    met = nos = 0
    for r in big:
        fo, to = r["fx_onnx"], r.get("t_onnx") or no_run(r)
        fp, tp = r["fx_pte"], r.get("t_pte") or no_run(r)

        def factor(f, t):
            if not f.get("ok") or not f.get("wall"):
                return None
            if t.get("ok"):
                return t["wall"] / f["wall"]
            if t.get("timeout"):
                return t["timeout"] / f["wall"]  # a lower bound
            return None
        so, sp = factor(fo, to), factor(fp, tp)
        af, ae = arena_of(fp), arena_of(tp)
        why, unshown = [], []
        for label, x, exact in (("torch.onnx", so, to.get("ok")), ("exir", sp, tp.get("ok"))):
            if x is None:
                unshown.append("%s not compared" % label)
            elif x < 50 and exact:
                why.append("%.0f× over %s" % (x, label))
            elif x < 50:
                unshown.append("over %s only > %.0f× (timed out)" % (label, x))
        if af is None or ae is None:
            unshown.append("arena not compared (%s)" % ("exir's .pte missing" if ae is None else "fxport's missing"))
        elif af > ae:
            why.append("arena %.2f× exir's" % (af / ae))
        ok = not why and not unshown
        met += ok
        nos += bool(why)
        arena_cell = "—" if af is None or ae is None else "%s / %s (%.2f×)" % (kib(af), kib(ae), af / ae if ae else 0)
        out.append("| `%s` | %d | %s | %s | %s | %s |" % (
            r["name"], r["nodes"], speedup(fo, to), speedup(fp, tp), arena_cell,
            "yes" if ok else "**no**: " + ", ".join(why + unshown) if why else "not shown: " + ", ".join(unshown)))
    unsettled = len(big) - met - nos
    out.append("\nOf %d programs of about 10k nodes or more, %d meet%s the goal, %d miss%s it and %d %s not settled by "
               "this run. Speed-ups are wall-time ratios of the exporter step on the machine above (`>` where torch's "
               "exporter ran past the timeout: a lower bound).\n" % (
                   len(big), met, "s" if met == 1 else "", nos, "es" if nos == 1 else "", unsettled,
                   "is" if unsettled == 1 else "are"))
    return "\n".join(out) + "\n"


def summary(rows):
    """Counts and geometric-mean speed-ups over the programs both sides exported."""
    import math

    def gm(pairs):
        pairs = [(a, b) for a, b in pairs if a and b]
        if not pairs:
            return None, 0
        return math.exp(sum(math.log(b / a) for a, b in pairs) / len(pairs)), len(pairs)
    n = len(rows)
    out = ["## Summary\n"]
    for key_f, key_t, label in (("fx_onnx", "t_onnx", "ONNX"), ("fx_pte", "t_pte", "ExecuTorch XNNPACK")):
        fx_ok = sum(1 for r in rows if r[key_f]["ok"])
        t_ok = sum(1 for r in rows if (r.get(key_t) or {}).get("ok"))
        fx_m = sum(1 for r in rows if r[key_f].get("ok") and (r[key_f].get("run") or {}).get("match"))
        t_m = sum(1 for r in rows if (r.get(key_t) or {}).get("ok") and (r[key_t].get("run") or {}).get("match"))
        g, k = gm([(r[key_f].get("wall"), r[key_t].get("wall")) for r in rows
                   if r[key_f]["ok"] and (r.get(key_t) or {}).get("ok")])
        other = "torch.onnx" if key_t == "t_onnx" else "exir"
        out.append("- %s: fxport exports %d/%d programs, %d match torch eager on the genuine runtime; %s exports "
                   "%d/%d, %d match. Geometric-mean speed-up of fxport over %s on the %d programs both export: %s."
                   % (label, fx_ok, n, fx_m, other, t_ok, n, t_m, other, k,
                      "—" if g is None else ("%.0f×" % g if g >= 10 else "%.1f×" % g)))
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.path.join(REPO, "tests", "corpus"))
    ap.add_argument("--programs", default="corpus,10k",
                    help="comma-separated: corpus (every tests/corpus program), a corpus program's name, a size "
                         "(1k, 10k, 100k: scaling.py's three stacks at that size, those captured), or <model>_<size> "
                         "(default corpus,10k)")
    ap.add_argument("--only", help="the same as --programs")
    ap.add_argument("--scaling-cache", help="scaling.py's cache directory (default: scaling.py's)")
    ap.add_argument("--keep-corpus", action="store_true",
                    help="when this run has no corpus program, keep the corpus tables of the existing --out page "
                         "(marked as from an earlier run)")
    ap.add_argument("--timeout", type=float, default=1800,
                    help="seconds one exporter step or runtime call may take before it is stopped and recorded as "
                         "timed out (0: no limit; default 1800)")
    ap.add_argument("--fxport", default=os.path.join(REPO, "bin", "fxport"), help="the built fxport binary")
    ap.add_argument("--runs", type=int, default=20, help="runtime latency: median of this many runs")
    ap.add_argument("--repeat", type=int, default=1, help="exporter time: median of this many exports, every exporter")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"), help="markdown to write")
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--work", help="keep the exported files here (default: a temporary directory, removed)")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the torch worker (the venv's)")
    ap.add_argument("--list", action="store_true", help="print the programs and their factories, run nothing")
    ap.add_argument("--smallest-first", action="store_true",
                    help="run the programs smallest .pt2 first (the page is rewritten after each)")
    ap.add_argument("--render-json", metavar="FILE",
                    help="run nothing: write --out again from the raw results of an earlier run (its --json)")
    ap.add_argument("--elapsed", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker is not None:
        return worker_main(args.worker)
    if args.runs < 1 or args.repeat < 1:
        ap.error("--runs and --repeat must be at least 1")
    if args.only:
        args.programs = args.only
    if args.render_json:
        with open(args.render_json) as f:
            raw = json.load(f)
        for k in ("programs", "runs", "repeat", "timeout"):
            if k in raw:
                setattr(args, k, raw[k])
        kept = kept_corpus(args.out) if args.keep_corpus else ""
        write_page(args.out, render(raw["rows"], raw["info"], args, raw.get("elapsed", args.elapsed or 0),
                                    partial=raw.get("partial"), notes=raw.get("notes", []), kept=kept))
        print("anchors: wrote %s" % args.out, file=sys.stderr)
        return 0
    if args.list:  # lists what --programs names, captured or not
        corp = corpus_programs(args.corpus)
        scal = scaling_programs(args.scaling_cache)
        for item in [x for x in args.programs.split(",") if x]:
            for p in corp + scal:
                if item == "corpus" and p["kind"] == "corpus" or item == p["name"] or item == p.get("size"):
                    if p["kind"] == "corpus":
                        where = "%s:%s" % (os.path.relpath(p["model"], REPO), p["factory"]) if p["model"] else "no factory"
                    else:
                        where = "tools/anchors/scaling.py:%s %s%s" % (p["model"], p["pt2"], "" if p["meta"] else " (not captured)")
                    print("%s\t%s" % (p["name"], where))
        return 0
    progs, notes = select_programs(args.programs, args.corpus, args.scaling_cache)
    kept = kept_corpus(args.out) if args.keep_corpus else ""
    for n in notes:
        print("anchors: %s" % n, file=sys.stderr)
    if args.smallest_first:
        progs.sort(key=lambda p: os.path.getsize(p["pt2"]))
    if not os.access(args.fxport, os.X_OK):
        raise SystemExit("anchors: %s is not built (make build)" % args.fxport)
    args.fxport = os.path.abspath(args.fxport)
    work = args.work or tempfile.mkdtemp(prefix="anchors-")
    os.makedirs(work, exist_ok=True)
    t0 = time.perf_counter()
    info = {"machine": machine(), "commit": git_head(), "go": go_version()}
    worker = Worker(args.python, os.path.join(work, "worker.log"))
    try:
        print("anchors: starting the torch worker (imports torch, exir, onnxruntime)", file=sys.stderr)
        info["versions"] = worker.start()["versions"]
        rows = []
        for p in progs:
            t1 = time.perf_counter()
            rows.append(run_program(p, args, worker, work))
            print("anchors: %s done in %.0f s" % (p["name"], time.perf_counter() - t1), file=sys.stderr)
            if args.json:  # the raw results so far: --render-json redraws the page of a run cut short
                with open(args.json, "w") as f:
                    json.dump({"info": info, "rows": rows, "elapsed": time.perf_counter() - t0, "notes": notes,
                               "programs": args.programs, "runs": args.runs, "repeat": args.repeat,
                               "timeout": args.timeout, "partial": len(progs) if len(rows) < len(progs) else None},
                              f, indent=1, sort_keys=True)
            if len(rows) < len(progs):  # a partial page after each program, marked so
                write_page(args.out, render(rows, info, args, time.perf_counter() - t0, partial=len(progs), notes=notes, kept=kept))
    finally:
        worker.close()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    elapsed = time.perf_counter() - t0
    write_page(args.out, render(rows, info, args, elapsed, notes=notes, kept=kept))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "rows": rows, "elapsed": elapsed, "notes": notes, "programs": args.programs,
                       "runs": args.runs, "repeat": args.repeat, "timeout": args.timeout}, f, indent=1, sort_keys=True)
    print("anchors: wrote %s" % args.out, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
