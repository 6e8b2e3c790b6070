#!/usr/bin/env python3
"""make models: the transformers / torchvision model sweep behind docs/models.md.

    third_party/venv/bin/python tools/models/sweep.py [--list tools/models/archs.json]
        [--results tools/models/results.json] [--fxport bin/fxport] [--work out/models]
        [--only NAME,...] [--no-anchors]

For every entry of the list (data: name, source, architecture, task, config,
inputs, dynamic dims) it builds the model with random weights from a tiny
config (no downloads), captures it with fxport capture's machinery
(capture/fxport_capture: the catalog's capture steps, torch.export,
run_decompositions; eager outputs saved), exports the program with
``fxport export`` to ONNX, portable .pte and XNNPACK .pte, and judges each
file with the genuine tools against torch eager (fp32 rule
max|got - exp| <= 1e-4 x max|exp|): ONNX with onnx.checker + ONNX Runtime
(tools/onnxcheck), .pte files on the genuine ExecuTorch runtime
(tools/etjudge, each run in a forked child). Where the installed transformers
ships transformers.exporters, its OnnxExporter and ExecutorchExporter
(XNNPACK) export the same model on the same inputs, judged the same way.

Everything runs in this one process (torch is imported once). The results
are merged into --results (one record per entry; entries of a partial --only
run replace theirs, entries no longer listed are dropped); docs/models.md is
rendered from them by `go test ./tools/models -run TestModelsDoc -update`.
"""

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "capture"))
sys.path.insert(0, os.path.join(REPO, "tools", "etjudge"))
sys.path.insert(0, os.path.join(REPO, "tools", "onnxcheck"))

STEP_TIMEOUT_S = 600
FXPORT_TARGETS = (("onnx", "onnx", ".onnx"), ("portable", "executorch-portable", ".pte"), ("xnnpack", "executorch-xnnpack", ".pte"))


class StepTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds):
    def on_alarm(signum, frame):
        raise StepTimeout(f"timed out after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def repo_relative(x):
    """x with the checkout's absolute path cut from every string (error texts name files under --work)."""
    if isinstance(x, str):
        return x.replace(REPO + os.sep, "")
    if isinstance(x, dict):
        return {k: repo_relative(v) for k, v in x.items()}
    if isinstance(x, list):
        return [repo_relative(v) for v in x]
    return x


def one_line(e, limit=300):
    text = str(e).strip()
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    first = lines[0] if lines else ""
    msg = f"{type(e).__name__}: {first}" if first else type(e).__name__
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


# ---------------------------------------------------------------------------
# Models


def build_hf(entry, seed=0):
    """A transformers model with random weights from a tiny config, and its inputs."""
    import torch
    import transformers
    from fxport_capture import models as M

    from transformers import AutoConfig

    given = entry.get("config", {})
    cfg = AutoConfig.for_model(entry["arch"], **given)
    applied = dict(given)
    if entry.get("tiny", True):
        for key, value in M.TINY.items():
            if key not in given and hasattr(cfg, key) and not isinstance(getattr(cfg, key), (list, tuple, dict)):
                setattr(cfg, key, value)
                applied[key] = value
        heads = getattr(cfg, "num_attention_heads", None)
        kv = getattr(cfg, "num_key_value_heads", None)
        if isinstance(heads, int) and isinstance(kv, int) and heads % kv:
            cfg.num_key_value_heads = heads
        if "head_dim" not in given and getattr(cfg, "head_dim", None) and isinstance(heads, int) and isinstance(getattr(cfg, "hidden_size", None), int):
            try:
                cfg.head_dim = cfg.hidden_size // heads
            except AttributeError:  # a derived property (falcon)
                pass
    torch.manual_seed(seed)
    cls_name = entry.get("class") or M.TASKS[entry.get("task", "base")]
    cls = getattr(transformers, cls_name)
    model = cls.from_config(cfg) if cls_name.startswith("Auto") else cls(cfg)
    model.eval()
    g = torch.Generator().manual_seed(seed + 1)
    batch, seq = entry.get("batch", 2), entry.get("seq", 8)
    inputs = {}
    vocab = getattr(cfg, "vocab_size", None) or getattr(getattr(cfg, "text_config", None), "vocab_size", 128)
    for kind in entry["inputs"]:
        if kind == "input_ids":
            inputs["input_ids"] = torch.randint(0, vocab, (batch, seq), generator=g)
        elif kind == "attention_mask":
            m = torch.ones(batch, seq, dtype=torch.long)
            m[-1, -2:] = 0  # a padded row: masks are really used
            inputs["attention_mask"] = m
        elif kind == "token_type_ids":
            inputs["token_type_ids"] = torch.zeros(batch, seq, dtype=torch.long)
        elif kind == "decoder_input_ids":
            inputs["decoder_input_ids"] = torch.randint(0, vocab, (batch, entry.get("decoder_seq", seq)), generator=g)
        elif kind == "pixel_values":
            vc = getattr(cfg, "vision_config", cfg)
            size = entry.get("image_size") or getattr(vc, "image_size", 32)
            size = size if isinstance(size, int) else size[0]
            ch = getattr(vc, "num_channels", 3)
            inputs["pixel_values"] = torch.randn(batch, ch, size, size, generator=g)
        elif kind == "video_pixel_values":
            size, frames = cfg.image_size, cfg.num_frames
            inputs["pixel_values"] = torch.randn(batch, frames, cfg.num_channels, size, size, generator=g)
        elif kind == "bool_masked_pos":
            n = (cfg.num_frames // cfg.tubelet_size) * (cfg.image_size // cfg.patch_size) ** 2
            m = torch.zeros(batch, n, dtype=torch.bool)
            m[:, : n // 2] = True
            inputs["bool_masked_pos"] = m
        elif kind == "input_values":
            inputs["input_values"] = torch.randn(batch, entry.get("samples", 1600), generator=g)
        elif kind == "input_features":
            mels = getattr(cfg, "num_mel_bins", 80)
            inputs["input_features"] = torch.randn(batch, mels, entry.get("frames", 2 * seq), generator=g)
        else:
            raise ValueError(f"{entry['name']}: unknown input kind {kind!r}")
    return model, inputs, type(model).__name__, applied


def build_tv(entry, seed=0):
    """A torchvision model with random weights, and one tiny input."""
    import torch
    import torchvision.models as tvm

    torch.manual_seed(seed)
    kwargs = dict(entry.get("kwargs", {}))
    model = tvm.get_model(entry["arch"], weights=None, **kwargs)
    model.eval()
    if entry.get("fill_zero_params"):
        # A parameter torchvision initializes to zeros (ViT's classifier
        # head) would make the output identically zero and the judge
        # vacuous: such parameters get small random values instead.
        gz = torch.Generator().manual_seed(seed + 2)
        with torch.no_grad():
            for prm in model.parameters():
                if prm.numel() and not prm.any():
                    prm.copy_(torch.randn(prm.shape, generator=gz) * 0.02)
    g = torch.Generator().manual_seed(seed + 1)
    shape = entry.get("shape", [2, 3, 64, 64])
    return model, (torch.randn(*shape, generator=g),), type(model).__name__, kwargs


# A dynamic batch is judged at a second size too: the example's batch is what
# torch.export traced, so only another size shows the dim really stays symbolic.
SECOND_BATCH = 3


def second_batch_io(entry, model, work):
    """For a torchvision entry with a dynamic batch: inputs of batch
    SECOND_BATCH and torch eager's outputs on them, written to work/io_b<N>.
    Returns the directory, or None for entries without one."""
    import numpy as np
    import torch
    from fxport_capture.driver import _flat_tensors

    if entry.get("source") != "torchvision" or "batch" not in entry.get("dyn", []):
        return None
    shape = list(entry.get("shape", [2, 3, 64, 64]))
    if shape[0] == SECOND_BATCH:
        raise ValueError(f"{entry['name']}: the example batch is the second batch {SECOND_BATCH}")
    shape[0] = SECOND_BATCH
    g = torch.Generator().manual_seed(7)
    x = torch.randn(*shape, generator=g)
    with torch.no_grad():
        outs = _flat_tensors(model(x))
    d = os.path.join(work, f"io_b{SECOND_BATCH}")
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    np.save(os.path.join(d, "input_0.npy"), x.numpy(), allow_pickle=False)
    for i, t in enumerate(outs):
        np.save(os.path.join(d, f"output_{i}.npy"), t.detach().contiguous().numpy(), allow_pickle=False)
    return d


# The dynamic dims an entry names ("dyn"): the dim of each input it makes
# symbolic, and the range torch.export is asked to keep.
DYN_DIMS = {
    "batch": (None, 0, 1, 8),  # None: every tensor input
    "seq": (("input_ids", "attention_mask", "token_type_ids"), 1, 2, 32),
    "dseq": (("decoder_input_ids",), 1, 2, 32),
}


def capture_dims(entry, inputs):
    """The dynamic dims of an entry as (input, dim, name, min, max) tuples."""
    out = []
    for dname in entry.get("dyn", []):
        keys, dim, lo, hi = DYN_DIMS[dname]
        for key, v in inputs.items():
            if (keys is None or key in keys) and hasattr(v, "dim") and v.dim() > dim:
                out.append((key, dim, dname, lo, hi))
    return out


# ---------------------------------------------------------------------------
# Judges


def judge_onnx(path, io_dir, n_in, n_out):
    import numpy as np
    import onnx
    import onnx.checker
    import onnxruntime as ort
    import check

    case = {
        "name": os.path.basename(path),
        "model": path,
        "inputs": [os.path.join(io_dir, f"input_{i}.npy") for i in range(n_in)],
        "outputs": [os.path.join(io_dir, f"output_{i}.npy") for i in range(n_out)],
    }
    line = check.run_case(case, onnx, ort, np)
    ok = line.startswith("ok ")
    worst = None
    if ok and "worst scaled error" in line:
        worst = float(line.rsplit(" ", 1)[1])
    return ok, ("" if ok else line.split(": ", 1)[1] if ": " in line else line), worst


def judge_pte(path, io_dir, skip=0):
    import etjudge

    r = etjudge.judge({"name": os.path.basename(path), "pte": path, "inputs": io_dir, "expected": io_dir, "skip_outputs": skip})
    worst = (r["max_error"] / r["scale"]) if r.get("ok") and r.get("scale") else (0.0 if r.get("ok") else None)
    return bool(r["ok"]), r.get("error", ""), worst


# ---------------------------------------------------------------------------
# fxport


def fxport_export(fxport, program, target, out, extra=()):
    t0 = time.perf_counter()
    p = subprocess.run([fxport, "export", program, "--target", target, "-o", out, *extra], capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    secs = time.perf_counter() - t0
    if p.returncode != 0:
        lines = [l for l in (p.stderr or p.stdout).strip().splitlines() if l.strip()]
        msg = lines[0] if lines else f"exit status {p.returncode}"
        # the first line names the failure; the lines after list the nodes
        if len(lines) > 1:
            msg += " | " + " | ".join(l.strip() for l in lines[1:4])
        return False, secs, msg[:600]
    return True, secs, ""


# ---------------------------------------------------------------------------
# transformers.exporters


def have_hf_exporters():
    try:
        import transformers.exporters  # noqa: F401
        from transformers.exporters import ExecutorchExporter, OnnxExporter  # noqa: F401

        return True
    except Exception:
        return False


def run_hf_anchor(kind, model, inputs, dynamic, out_dir, io_dir, n_in, n_out):
    """transformers.exporters' OnnxExporter / ExecutorchExporter(xnnpack) on the same model."""
    import copy

    import torch
    from transformers.exporters import ExecutorchConfig, ExecutorchExporter, OnnxConfig, OnnxExporter

    res = {"status": "fail", "seconds": None, "error": "", "worst": None}
    t0 = time.perf_counter()
    try:
        with time_limit(STEP_TIMEOUT_S), torch.no_grad():
            if kind == "onnx":
                exp = OnnxExporter()
                prog, _ = exp.export_program(model, copy.deepcopy(inputs), OnnxConfig(dynamic=dynamic))
                path = os.path.join(out_dir, "hf.onnx")
            else:
                exp = ExecutorchExporter()
                prog, _ = exp.export_program(model, copy.deepcopy(inputs), ExecutorchConfig(dynamic=dynamic, backend="xnnpack"))
                path = os.path.join(out_dir, "hf.pte")
            res["seconds"] = round(time.perf_counter() - t0, 2)
            exp.save_program(prog, path)
    except Exception as e:
        res["seconds"] = round(time.perf_counter() - t0, 2)
        res["status"] = "export-failed"
        res["error"] = one_line(e)
        return res
    if kind == "onnx":
        ok, err, worst = judge_onnx(path, io_dir, n_in, n_out)
    else:
        ok, err, worst = judge_pte(path, io_dir)
    res["status"] = "pass" if ok else "mismatch"
    res["error"] = err
    res["worst"] = worst
    return res


# ---------------------------------------------------------------------------
# One entry


def try_capture(capture, CaptureError, model, inputs, work, name, dims, ignore_skips=False):
    cap = {"status": "fail"}
    try:
        with time_limit(STEP_TIMEOUT_S):
            t1 = time.perf_counter()
            res = capture(model, inputs, work, name=name, dims=dims, ignore_skips=ignore_skips)
            cap["seconds"] = round(time.perf_counter() - t1, 2)
        cap["status"] = "ok"
        cap["nodes"] = res["nodes"]
        cap["fired"] = res["fired"]
    except (CaptureError, StepTimeout) as e:
        cap["status"] = "capture-failed"
        cap["error"] = str(e)[:600]
    except Exception as e:
        cap["status"] = "capture-failed"
        cap["error"] = one_line(e)
    return cap


def run_entry(entry, args, anchors):
    import torch
    from fxport_capture.driver import capture
    from fxport_capture.errors import CaptureError

    name = entry["name"]
    rec = {k: entry.get(k) for k in ("name", "source", "arch", "task", "family") if entry.get(k) is not None}
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    t0 = time.perf_counter()
    try:
        with time_limit(STEP_TIMEOUT_S):
            if entry.get("source", "transformers") == "torchvision":
                model, inputs, cls, applied = build_tv(entry)
            else:
                model, inputs, cls, applied = build_hf(entry)
            with torch.no_grad():
                model(*inputs) if isinstance(inputs, tuple) else model(**inputs)
    except Exception as e:
        rec["class"] = entry.get("class", "")
        rec["capture"] = {"status": "build-failed", "error": one_line(e)}
        return rec
    rec["class"] = cls
    rec["params"] = sum(p.numel() for p in model.parameters())
    dims = capture_dims(entry, inputs if isinstance(inputs, dict) else {str(i): t for i, t in enumerate(inputs)})
    rec["dynamic"] = [f"{k}.{d}" for k, d, _, _, _ in dims]
    prev = args.previous.get(name) if args.reuse else None
    if prev and prev.get("capture", {}).get("status") == "ok" and os.path.exists(os.path.join(work, "program.pt2")):
        cap = prev["capture"]  # --reuse: the program captured before, exports and judges again
        rec["dynamic"] = prev.get("dynamic", [])
        dims = [d for d in dims if f"{d[0]}.{d[1]}" in rec["dynamic"]]
    else:
        cap = try_capture(capture, CaptureError, model, inputs, work, name, dims, bool(entry.get("recheck")))
    if cap["status"] != "ok" and dims:
        # Keep a static capture and say why the dynamic one failed.
        static = try_capture(capture, CaptureError, model, inputs, work, name, (), bool(entry.get("recheck")))
        if static["status"] == "ok":
            static["dynamic_error"] = cap["error"]
            cap = static
            dims = ()
            rec["dynamic"] = []
    rec["capture"] = cap
    n_in = n_out = 0
    if cap["status"] == "ok":
        io_dir = os.path.join(work, "io")
        n_in = len([f for f in os.listdir(io_dir) if f.startswith("input_")])
        n_out = len([f for f in os.listdir(io_dir) if f.startswith("output_")])
        program = os.path.join(work, "program.pt2")
        io2 = second_batch_io(entry, model, work) if dims else None
        if io2:
            rec["judged_batches"] = [int(inputs[0].shape[0]), SECOND_BATCH]
        fx = {}
        targets = list(FXPORT_TARGETS)
        if entry.get("recheck") == "disable-optimize":
            # ONNX_DISABLE_OPTIMIZE re-check: fxport's optimizer forced on for the listed class.
            targets.append(("onnx_optimized", "onnx", ".onnx", "--optimize"))
        for key, target, ext, *extra in targets:
            out = os.path.join(work, f"fxport.{key}{ext}")
            if os.path.exists(out):
                os.unlink(out)
            r = {}
            try:
                ok, secs, err = fxport_export(args.fxport, program, target, out, extra)
            except subprocess.TimeoutExpired:
                ok, secs, err = False, STEP_TIMEOUT_S, f"fxport export timed out after {STEP_TIMEOUT_S} s"
            r["seconds"] = round(secs, 2)
            if not ok:
                r["status"] = "export-failed"
                r["error"] = err
            else:
                judge = (lambda d: judge_onnx(out, d, n_in, n_out)) if key.startswith("onnx") else (lambda d: judge_pte(out, d))
                jok, jerr, worst = judge(io_dir)
                if jok and io2:
                    jok, jerr, worst2 = judge(io2)
                    if not jok:
                        jerr = f"at batch {SECOND_BATCH}: {jerr}"
                    elif worst2 is not None and (worst is None or worst2 > worst):
                        worst = worst2
                r["status"] = "pass" if jok else "mismatch"
                r["error"] = jerr[:600]
                r["worst"] = worst
            fx[key] = r
        rec["fxport"] = fx
        if anchors and entry.get("anchor"):
            hf_inputs = dict(inputs)
            if getattr(model.config, "use_cache", None):
                hf_inputs["use_cache"] = False  # the outputs fxport's capture has (DYN-S07)
            rec["hf"] = {
                kind: run_hf_anchor(kind, model, hf_inputs, bool(dims), work, io_dir, n_in, n_out) for kind in ("onnx", "executorch")
            }
    rec["seconds"] = round(time.perf_counter() - t0, 2)
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="append", default=[], help="a list of entries (repeatable; default archs.json and torchvision.json)")
    ap.add_argument("--results", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--fxport", default=os.path.join(REPO, "bin", "fxport"))
    ap.add_argument("--work", default=os.path.join(REPO, "out", "models"))
    ap.add_argument("--only", default="", help="comma-separated entry names")
    ap.add_argument("--no-anchors", action="store_true", help="skip transformers.exporters")
    ap.add_argument("--reuse", action="store_true", help="keep a model's earlier capture (its program in --work); export and judge again")
    args = ap.parse_args(argv)
    results_path = args.results
    lists = args.list or [os.path.join(HERE, n) for n in ("archs.json", "torchvision.json", "skips.json")]
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.getLogger("torch.utils._pytree").setLevel(logging.ERROR)
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    torch.set_num_threads(2)
    entries = []
    for path in lists:
        with open(path) as f:
            entries += json.load(f)["models"]
    only = {s for s in args.only.split(",") if s}
    unknown = only - {e["name"] for e in entries}
    if unknown:
        print(f"sweep: --only names no entry: {sorted(unknown)}", file=sys.stderr)
        return 2
    old = {}
    if os.path.exists(results_path):
        with open(results_path) as f:
            old = {r["name"]: r for r in json.load(f)["models"]}
    args.previous = old
    anchors = not args.no_anchors and have_hf_exporters()
    import torchvision

    # The judges' imports, once here: each .pte is judged in a forked child,
    # which would import the runtime again for every file.
    import executorch.extension.pybindings.portable_lib  # noqa: F401
    import executorch.runtime  # noqa: F401
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401

    env = {"torch": torch.__version__.split("+")[0], "transformers": transformers.__version__, "torchvision": torchvision.__version__.split("+")[0]}
    try:
        import executorch, onnxruntime

        env["onnxruntime"] = onnxruntime.__version__
        from importlib.metadata import version

        env["executorch"] = version("executorch")
    except Exception:
        pass
    out = {e["name"]: old[e["name"]] for e in entries if e["name"] in old}
    for e in entries:
        if only and e["name"] not in only:
            continue
        print(f"sweep: {e['name']} …", file=sys.stderr, flush=True)
        try:
            rec = run_entry(e, args, anchors)
        except Exception as ex:  # a sweep bug, not a model result
            traceback.print_exc()
            rec = {"name": e["name"], "capture": {"status": "sweep-error", "error": one_line(ex)}}
        if not anchors and e["name"] in old and "hf" in old[e["name"]] and "hf" not in rec:
            rec["hf"] = old[e["name"]]["hf"]
        out[e["name"]] = rec
        summary = {k: v.get("status") for k, v in rec.get("fxport", {}).items()}
        print(f"sweep: {e['name']}: capture {rec['capture']['status']} {summary} {({k: v['status'] for k, v in rec.get('hf', {}).items()})} ({rec.get('seconds')} s)", file=sys.stderr, flush=True)
        with open(results_path, "w") as f:  # after every entry: a killed sweep keeps what it did
            json.dump(repo_relative({"env": env, "models": [out[x["name"]] for x in entries if x["name"] in out]}), f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
