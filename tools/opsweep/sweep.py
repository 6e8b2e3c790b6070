"""The op-by-op conformance sweep's Python half (one process per step).

  sweep.py gen OUTDIR [--anchors] [--only OP,...] [--dtypes f32,...]
      For every case of cases.py at each of its dtypes: a one-op module
      captured with genuine torch.export, decomposed to Core ATen
      (run_decompositions) and saved as OUTDIR/<case>/program.pt2 with its
      inputs and torch eager's outputs (input_<i>.npy, output_<i>.npy) and
      meta.json (op, dtype, how outputs are judged, whether the op reached
      the graph); OUTDIR/not_swept.json lists torch's Core ATen ops and
      those not swept with the reason. With --anchors also torch's own exporters on the same
      module (as sweep.py anchors): torch.onnx.export(dynamo=True) judged by onnx.checker and
      ONNX Runtime, and exir (to_edge_transform_and_lower, portable and
      with the XNNPACK partitioner, then to_executorch) judged by the
      genuine ExecuTorch runtime; OUTDIR/anchors.json holds the verdicts.
  sweep.py anchors OUTDIR [--only OP,...] [--dtypes f32,...] [--timeout S] [--limit N]
      Only the anchors (what gen --anchors runs after the captures; they
      need no captured case): one worker process imports torch,
      onnxscript, exir and the runtimes once and answers every (case,
      target) in turn. OUTDIR/anchors.json is rewritten after each verdict,
      so an interrupted run keeps what it did and a rerun resumes; a
      target that runs past --timeout seconds (default 300) or kills the
      worker is recorded as that verdict and the worker restarted.
      --limit N stops after N cases (to measure the cost).
  sweep.py judge MANIFEST OUT
      Judges fxport's files: MANIFEST is a JSON list of {name, kind
      ("onnx"|"pte"), path, case (the case directory)}; OUT gets one
      verdict per name ("pass" or "fail: why").

Comparison with torch eager: floating outputs within 1e-4 x max(1, max|want|)
(fp16/bf16: 1e-2), NaN and inf at the same places; integers and bools
exactly; shapes and dtypes equal. Random and uninitialized outputs are
judged by shape and dtype (and bounds where given).
"""

import json
import os
import re
import sys
import time
import traceback
import warnings

warnings.filterwarnings("ignore")
os.environ.setdefault("PYTHONWARNINGS", "ignore")

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402


class OneOp(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def flat(out):
    if isinstance(out, torch.Tensor):
        return [out]
    res = []
    for o in out:
        res.extend(flat(o) if isinstance(o, (list, tuple)) else [o] if isinstance(o, torch.Tensor) else [])
    return res


def to_np(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy()


def short(e):
    s = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", str(e)).strip().split("\n")[0]
    return (type(e).__name__ + ": " + s)[:300]


def compare(got, want, loose):
    """'' when got matches torch's want, else why not."""
    if tuple(got.shape) != tuple(want.shape):
        return "shape %s, torch %s" % (tuple(got.shape), tuple(want.shape))
    if got.dtype != want.dtype:
        return "dtype %s, torch %s" % (got.dtype, want.dtype)
    if loose is not None:
        if loose == "shape" or got.numel() == 0:
            return ""
        if isinstance(loose, tuple):
            lo, hi = loose
            if got.double().min().item() < lo or got.double().max().item() > hi:
                return "values outside [%g, %g]" % (lo, hi)
        return ""
    if want.dtype.is_complex:
        # Complex results (an FFT's) are judged as their real and imaginary parts.
        return compare(torch.view_as_real(got.resolve_conj()), torch.view_as_real(want.resolve_conj()), None)
    if want.dtype.is_floating_point:
        g, w = got.double(), want.double()
        if not torch.equal(torch.isnan(g), torch.isnan(w)):
            return "NaN at other places"
        fin = torch.isfinite(w)
        if not torch.equal(g[~fin & ~torch.isnan(w)], w[~fin & ~torch.isnan(w)]):
            return "inf at other places"
        if fin.any():
            err = (g[fin] - w[fin]).abs().max().item()
            scale = max(1.0, w[fin].abs().max().item())
            # bfloat16 keeps 8 bits of mantissa (a relative step of 2^-8 ~ 4e-3;
            # a few roundings apart from torch's eager result), float16 11.
            tol = {torch.bfloat16: 2e-2, torch.float16: 1e-2}.get(want.dtype, 1e-4)
            if not err <= tol * scale:
                return "max error %.3g (scale %.3g)" % (err, scale)
        return ""
    return "" if torch.equal(got, want) else "values differ"


def compare_all(gots, wants, loose):
    if len(gots) != len(wants):
        return "%d outputs, torch %d" % (len(gots), len(wants))
    for i, (g, w) in enumerate(zip(gots, wants)):
        why = compare(g, w, loose)
        if why:
            return "output %d: %s" % (i, why)
    return ""


def run_ort(path, inputs):
    import onnx
    import onnxruntime as ort

    onnx.checker.check_model(path, full_check=True)
    model = onnx.load(path)
    bf16_out = [o.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16 for o in model.graph.output]
    if any(bf16_out):
        model = cast_bf16_outputs(model)
    sess = ort.InferenceSession(model.SerializeToString() if any(bf16_out) else path,
                                providers=["CPUExecutionProvider"])
    if any(x.dtype == torch.bfloat16 for x in inputs):
        outs = run_ort_values(sess, inputs)
    else:
        feed = {}
        for i, x in zip(sess.get_inputs(), inputs):
            feed[i.name] = to_np(x)
        outs = sess.run(None, feed)
    res = []
    for o, bf in zip(outs, bf16_out):
        t = torch.from_numpy(np.array(o, order="C", copy=True)) if isinstance(o, np.ndarray) else torch.tensor(o)
        res.append(t.to(torch.bfloat16) if bf else t)
    return res


def cast_bf16_outputs(model):
    """The model with each bfloat16 graph output cast to float32, exactly
    (numpy, which ONNX Runtime's Python results are, has no bfloat16); the
    judge casts them back."""
    import onnx
    from onnx import helper

    g = model.graph
    for o in g.output:
        if o.type.tensor_type.elem_type != onnx.TensorProto.BFLOAT16:
            continue
        inner = o.name + "__bf16"
        for n in g.node:
            n.output[:] = [inner if x == o.name else x for x in n.output]
            n.input[:] = [inner if x == o.name else x for x in n.input]
        g.node.append(helper.make_node("Cast", [inner], [o.name], to=onnx.TensorProto.FLOAT))
        o.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    return model


def run_ort_values(sess, inputs):
    """sess.run with OrtValue inputs: numpy has no bfloat16, so bf16 tensors
    travel as their raw 16-bit words (uint16) typed BFLOAT16."""
    import onnx
    import onnxruntime as ort

    feed = {}
    for i, x in zip(sess.get_inputs(), inputs):
        if x.dtype == torch.bfloat16:
            words = x.detach().contiguous().view(torch.int16).numpy().view(np.uint16)
            feed[i.name] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(words, onnx.TensorProto.BFLOAT16)
        else:
            feed[i.name] = ort.OrtValue.ortvalue_from_numpy(to_np(x))
    outs = sess.run_with_ort_values([o.name for o in sess.get_outputs()], feed)
    return [o.numpy() for o in outs]


_rt = [None]


def run_et(path, inputs):
    from executorch.runtime import Runtime, Verification

    if _rt[0] is None:
        _rt[0] = Runtime.get()
    prog = _rt[0].load_program(path, verification=Verification.InternalConsistency)
    m = prog.load_method("forward")
    outs = m.execute([x.contiguous() for x in inputs])
    return [o for o in outs if isinstance(o, torch.Tensor)]


def verdict(fn):
    try:
        why = fn()
        return "pass" if not why else "fail: " + why
    except Exception as e:  # the judge's refusal is the verdict
        return "fail: " + short(e)


def case_names():
    for op in sorted(C.CASES):
        for dt in C.DTYPES[op]:
            yield op, dt, "%s.%s" % (op[len("aten."):], dt)


def core_ops():
    """The IR names of torch's Core ATen overloads (torch.Tag.core)."""
    out = []
    for name in sorted(dir(torch.ops.aten)):
        try:
            packet = getattr(torch.ops.aten, name)
        except (AttributeError, RuntimeError):
            continue
        if not hasattr(packet, "overloads"):
            continue
        for ov in packet.overloads():
            if torch.Tag.core in getattr(packet, ov).tags:
                out.append("aten.%s.%s" % (name, ov))
    return sorted(out)


def ops_in(ep):
    seen = set()
    for n in ep.graph.nodes:
        if n.op == "call_function" and hasattr(n.target, "_schema"):
            seen.add(str(n.target).replace("::", ".").replace("aten.", "aten.", 1))
            name = n.target.name()  # aten::add.Tensor
            ns, rest = name.split("::")
            if "." not in rest:
                rest += ".default"
            seen.add(ns + "." + rest)
    return seen


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def relative_traces(ep):
    """Cuts the checkout's path from the stack traces torch.export keeps in node metadata.

    The saved program then names tools/opsweep/sweep.py, not the absolute
    path of whichever checkout generated it.
    """
    prefix = REPO + os.sep
    for gm in ep.graph_module.modules():
        if not isinstance(gm, torch.fx.GraphModule):
            continue
        for n in gm.graph.nodes:
            tr = n.meta.get("stack_trace")
            if isinstance(tr, str) and prefix in tr:
                n.meta["stack_trace"] = tr.replace(prefix, "")


def gen(outdir, anchors, only, dtypes):
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "not_swept.json"), "w") as f:
        json.dump({"torch": torch.__version__.split("+")[0], "not_swept": C.NOT_SWEPT, "core": core_ops()}, f, indent=1, sort_keys=True)
    for op, dt, name in case_names():
        if only and op not in only or dtypes and dt not in dtypes:
            continue
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        meta = {"op": op, "dtype": dt, "loose": C.LOOSE.get(op), "core": op not in C.EXTRA}
        try:
            C._seed[0] = sum(map(ord, name))  # stable per case: inputs do not depend on the set swept
            inputs, fn = C.CASES[op](dt)
            mod = OneOp(fn)
            torch.manual_seed(0)
            wants = flat(fn(*inputs))
            ep = torch.export.export(mod, tuple(inputs))
            core = ep
            if op not in C.EXTRA:
                # torch's Core ATen table minus the op itself: a few core ops
                # (fill, the pads, squeeze.dim, var.dim) have an entry there.
                table = torch.export.default_decompositions()
                table.pop(eval("torch.ops." + op), None)
                core = ep.run_decompositions(table)
            graph_op = op.split("_scales")[0] if op.endswith("_scales") else op
            meta["in_graph"] = graph_op in ops_in(core)
            relative_traces(core)
            torch.export.save(core, os.path.join(d, "program.pt2"))
        except Exception as e:
            meta["capture_error"] = short(e)
            with open(os.path.join(d, "meta.json"), "w") as f:
                json.dump(meta, f, indent=1, sort_keys=True)
            print("capture %s: %s" % (name, meta["capture_error"]), file=sys.stderr)
            continue
        for i, x in enumerate(inputs):
            np.save(os.path.join(d, "input_%d.npy" % i), to_np(x))
        for i, w in enumerate(wants):
            np.save(os.path.join(d, "output_%d.npy" % i), to_np(w))
        meta["outputs"] = len(wants)
        meta["bf16_outputs"] = [i for i, w in enumerate(wants) if w.dtype == torch.bfloat16]
        meta["bf16_inputs"] = [i for i, x in enumerate(inputs) if x.dtype == torch.bfloat16]
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
    if anchors:
        run_anchors(outdir, only, dtypes)


# ---------------------------------------------------------------------------
# The anchors: torch's own exporters on every case, in one long-lived worker


ANCHOR_TARGETS = ("onnx", "portable", "xnnpack")


def case_index():
    return {name: (op, dt) for op, dt, name in case_names()}


def build_case(name, op, dt):
    """(module, inputs, torch eager's outputs) of a case, as gen builds them."""
    C._seed[0] = sum(map(ord, name))
    inputs, fn = C.CASES[op](dt)
    mod = OneOp(fn)
    torch.manual_seed(0)
    wants = flat(fn(*inputs))
    return mod, inputs, wants


def anchor_verdict(mod, inputs, wants, op, tgt, d):
    """One anchor's verdict on a case: torch.onnx (dynamo) judged by ORT, or exir judged by ExecuTorch."""
    loose = C.LOOSE.get(op)
    xs = [x.clone() for x in inputs]  # a mutating program must not change the next target's inputs
    if tgt == "onnx":
        p = os.path.join(d, "anchor.onnx")

        def onnx_anchor():
            try:
                prog = torch.onnx.export(mod, tuple(xs), dynamo=True, verbose=False)
            except Exception as e:
                c = e
                while c.__cause__ is not None:
                    c = c.__cause__
                if c is e:
                    raise
                # the first lines are torch.onnx's boilerplate; the innermost cause says why
                return "%s: %s" % (type(e).__name__, short(c))
            prog.save(p)
            return compare_all(run_ort(p, [x.clone() for x in inputs]), wants, loose)

        return verdict(onnx_anchor)
    pte = os.path.join(d, "anchor.%s.pte" % tgt)

    def exir_anchor():
        from executorch.exir import to_edge_transform_and_lower

        parts = []
        if tgt == "xnnpack":
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

            parts = [XnnpackPartitioner()]
        et = to_edge_transform_and_lower(torch.export.export(mod, tuple(xs)), partitioner=parts).to_executorch()
        with open(pte, "wb") as f:
            f.write(et.buffer)
        return compare_all(run_et_said(pte, [x.clone() for x in inputs]), wants, loose)

    return verdict(exir_anchor)


def run_et_said(path, inputs):
    """run_et, an error naming the kernels the runtime reported missing (it prints them on fd 2)."""
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as cap:
        os.dup2(cap.fileno(), 2)
        try:
            return run_et(path, inputs)
        except Exception as e:
            os.dup2(saved, 2)
            cap.seek(0)
            text = cap.read().decode("utf-8", "replace")
            missing = sorted(set(re.findall(r"Missing operator: \[\d+\] (\S+)", text)))
            if not missing:
                raise
            raise RuntimeError("%s (missing kernels: %s)" % (str(e).strip().split("\n")[0], ", ".join(missing)))
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def anchor_worker(outdir):
    """The worker: reads "CASE TARGET" lines, answers one JSON verdict line each.

    Imports torch, onnxscript, exir and both runtimes once. The protocol
    goes over the original stdout; whatever the libraries print goes to
    stderr.
    """
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    torch.set_num_threads(1)
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
    import onnxscript  # noqa: F401
    import executorch.exir  # noqa: F401
    import executorch.backends.xnnpack.partition.xnnpack_partitioner  # noqa: F401
    import executorch.runtime  # noqa: F401

    # one tiny module through every anchor, so no case pays the lazy imports
    warm = os.path.join(outdir, ".warm-up")
    os.makedirs(warm, exist_ok=True)
    x = torch.randn(2, 3)
    for tgt in ANCHOR_TARGETS:
        anchor_verdict(OneOp(torch.relu), [x], [torch.relu(x)], "aten.relu.default", tgt, warm)
    index = case_index()
    built = {}
    replies.write("ready\n")
    replies.flush()
    for line in sys.stdin:
        name, tgt = line.split()
        op, dt = index[name]
        if name not in built:
            built.clear()
            try:
                built[name] = build_case(name, op, dt)
            except Exception as e:
                built[name] = "fail: building the case: " + short(e)
        d = os.path.join(outdir, name)
        os.makedirs(d, exist_ok=True)
        b = built[name]
        v = b if isinstance(b, str) else anchor_verdict(*b, op, tgt, d)
        replies.write(json.dumps({"case": name, "target": tgt, "verdict": v}) + "\n")
        replies.flush()


class AnchorWorker:
    """The supervisor's handle on one worker process."""

    def __init__(self, outdir, start_timeout):
        import subprocess

        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "anchor-worker", outdir],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=False)
        self.buf = b""
        if self.read(start_timeout) != "ready":
            self.kill()
            raise SystemExit("sweep: the anchors' worker did not start within %d s" % start_timeout)

    def read(self, timeout):
        """The next line, or None when the worker died or said nothing within timeout seconds."""
        import select

        deadline = time.time() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def ask(self, name, tgt, timeout):
        """(verdict, None), or (None, why) when the worker hung or died on the request."""
        try:
            self.proc.stdin.write(("%s %s\n" % (name, tgt)).encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        line = self.read(timeout)
        if line is not None:
            rep = json.loads(line)
            return rep["verdict"], None
        code = self.proc.poll()
        if code is None:
            self.kill()
            return None, "fail: timed out after %d s" % timeout
        self.kill()
        return None, "fail: the process crashed (%s)" % ("signal %d" % -code if code < 0 else "exit status %d" % code)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def run_anchors(outdir, only=(), dtypes=(), timeout=300, limit=0, start_timeout=900):
    """torch's exporters on every case into OUTDIR/anchors.json, one target at a time.

    The file is rewritten after every verdict, so a killed run keeps what it
    did and a rerun resumes at the first missing (case, target). A request
    that hangs past timeout seconds or kills the worker is that target's
    verdict; the worker is restarted for the next one.
    """
    os.makedirs(outdir, exist_ok=True)
    apath = os.path.join(outdir, "anchors.json")
    rows = {}
    if os.path.exists(apath):
        with open(apath) as f:
            rows = json.load(f)
    todo = [name for op, dt, name in case_names()
            if not (only and op not in only or dtypes and dt not in dtypes)
            and any(t not in rows.get(name, {}) for t in ANCHOR_TARGETS)]
    if limit:
        todo = todo[:limit]
    print("sweep: anchors on %d cases (%d already in %s)" % (len(todo), len(rows), apath), file=sys.stderr, flush=True)
    w = None
    t0 = time.time()
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # killed: the finally below ends the worker too
    try:
        for i, name in enumerate(todo):
            row = rows.setdefault(name, {})
            t1 = time.time()
            for tgt in ANCHOR_TARGETS:
                if tgt in row:
                    continue
                if w is None:
                    w = AnchorWorker(outdir, start_timeout)
                v, why = w.ask(name, tgt, timeout)
                if why is not None:
                    v, w = why, None
                row[tgt] = v
                with open(apath + ".tmp", "w") as f:
                    json.dump(rows, f, indent=1, sort_keys=True)
                os.replace(apath + ".tmp", apath)
            print("sweep: anchors %d/%d %s %.0fs (total %.0fs) onnx=%s portable=%s xnnpack=%s"
                  % (i + 1, len(todo), name, time.time() - t1, time.time() - t0,
                     row["onnx"][:50], row["portable"][:50], row["xnnpack"][:50]), file=sys.stderr, flush=True)
    finally:
        if w is not None:
            w.kill()


def load_np(path):
    a = np.load(path)
    return torch.from_numpy(np.array(a, order="C", copy=True))  # keeps 0-d arrays 0-d


def judge(manifest, out):
    with open(manifest) as f:
        items = json.load(f)
    res = {}
    for it in items:
        d = it["case"]
        with open(os.path.join(d, "meta.json")) as f:
            meta = json.load(f)
        inputs = []
        i = 0
        while os.path.exists(os.path.join(d, "input_%d.npy" % i)):
            inputs.append(load_np(os.path.join(d, "input_%d.npy" % i)))
            i += 1
        wants = [load_np(os.path.join(d, "output_%d.npy" % i)) for i in range(meta["outputs"])]
        for i in meta.get("bf16_outputs", []):
            wants[i] = wants[i].to(torch.bfloat16)
        for i in meta.get("bf16_inputs", []):
            inputs[i] = inputs[i].to(torch.bfloat16)
        loose = meta.get("loose")
        if isinstance(loose, list):
            loose = tuple(loose)
        if it["kind"] == "onnx":
            res[it["name"]] = verdict(lambda: compare_all(run_ort(it["path"], inputs), wants, loose))
        else:
            res[it["name"]] = verdict(lambda: compare_all(run_et(it["path"], inputs), wants, loose))
    with open(out, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "gen":
        only = set()
        if "--only" in sys.argv:
            only = set(sys.argv[sys.argv.index("--only") + 1].split(","))
        dtypes = set()
        if "--dtypes" in sys.argv:
            dtypes = set(sys.argv[sys.argv.index("--dtypes") + 1].split(","))
        gen(sys.argv[2], "--anchors" in sys.argv, only, dtypes)
    elif len(sys.argv) >= 3 and sys.argv[1] == "anchors":
        opt = lambda k, d: sys.argv[sys.argv.index(k) + 1] if k in sys.argv else d  # noqa: E731
        run_anchors(sys.argv[2], set(filter(None, opt("--only", "").split(","))),
                    set(filter(None, opt("--dtypes", "").split(","))), int(opt("--timeout", "300")), int(opt("--limit", "0")))
    elif len(sys.argv) == 3 and sys.argv[1] == "anchor-worker":
        anchor_worker(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "judge":
        judge(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
