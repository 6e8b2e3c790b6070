"""The capture itself: steps applied, torch.export run, program and I/O written."""

import contextlib
import json
import os
import time

import torch
import torch.utils._pytree as pytree

from . import skips
from . import steps as S
from .errors import CaptureError

META_CAPTURE_STEPS = "export.capture_steps"
META_DYNAMIC_SHAPES = "export.dynamic_shapes"
META_MODEL_CLASS = "export.model_class"  # the key of fxport's ONNX disable-optimize table


def _dynamic_spec(inputs, auto, dims, factory_dynamic, report):
    """DYN-S04: the dynamic-shape spec torch.export takes.

    ``auto``: Dim.AUTO on every dim of every tensor input; ``dims``: a list of
    (input, dim, min, max) with user ranges; ``factory_dynamic``: fxgen's form
    ``{input_index: {dim: (name, min, max)}}``. Returns (spec, description).
    """
    from torch.export import Dim

    names = list(inputs)
    spec = {k: None for k in names}
    desc = []
    if auto:
        for k, v in inputs.items():
            if isinstance(v, torch.Tensor):
                spec[k] = {d: Dim.AUTO for d in range(v.dim())}
        desc.append("Dim.AUTO on every dim")
    shared = {}
    named = {}
    if factory_dynamic:
        for idx, per in factory_dynamic.items():
            key = names[int(idx)]
            spec[key] = dict(spec[key] or {})
            for d, (name, lo, hi) in per.items():
                dim = shared.setdefault(name, Dim(name, min=lo, max=hi))
                spec[key][int(d)] = dim
                named.setdefault(key, {})[str(int(d))] = {"name": name, "min": lo, "max": hi}
                desc.append(f"{key}.{d}={name}[{lo},{hi}]")
    for key, d, dname, lo, hi in dims:
        if key not in inputs:
            if key.isdigit() and int(key) < len(names):
                key = names[int(key)]
            else:
                raise CaptureError(f"--dim {key}.{d}: no input named {key!r} (inputs: {', '.join(names)})")
        t = inputs[key]
        if not isinstance(t, torch.Tensor) or d >= t.dim():
            raise CaptureError(f"--dim {key}.{d}: input {key!r} has no dim {d}")
        spec[key] = dict(spec[key] or {})
        dname = dname or f"{key}_{d}"
        dim = shared.setdefault(dname, Dim(dname, min=lo, max=hi))
        spec[key][d] = dim
        named.setdefault(key, {})[str(d)] = {"name": dname, "min": lo, "max": hi}
        desc.append(f"{key}.{d}={dname}[{lo},{hi}]")
    fired = any(v for v in spec.values())
    report.record("DYN-S04", "auto-dynamic-shapes", fired, "; ".join(desc) if desc else "static shapes")
    return (spec if fired else None), desc, named


def _flat_tensors(tree):
    leaves, _ = pytree.tree_flatten(tree)
    return [x for x in leaves if isinstance(x, torch.Tensor)]


def _save_npy(path, t):
    import numpy as np

    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        raise CaptureError(f"{os.path.basename(path)}: bfloat16 has no .npy form")
    np.save(path, t.contiguous().numpy(), allow_pickle=False)


def _check_close(got, want, what):
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            raise CaptureError(f"{what}: output {i} has shape {tuple(g.shape)}, eager {tuple(w.shape)}")
        if g.is_floating_point():
            scale = max(float(w.abs().max()) if w.numel() else 0.0, 1e-30)
            err = float((g.double() - w.double()).abs().max()) if w.numel() else 0.0
            if err > 1e-4 * scale + 1e-6:
                raise CaptureError(f"{what}: output {i} differs from eager by {err:.3g} (scale {scale:.3g})")
        elif not torch.equal(g, w):
            raise CaptureError(f"{what}: output {i} differs from eager")
    if len(got) != len(want):
        raise CaptureError(f"{what}: {len(got)} outputs, eager {len(want)}")


def capture(
    model,
    inputs,
    out_dir,
    *,
    name="model",
    auto_dynamic=False,
    dims=(),
    factory_dynamic=None,
    decompose=True,
    contiguous=True,
    ignore_skips=False,
):
    """Export ``model`` on ``inputs`` (a tuple of positional inputs or a dict
    of keyword inputs) into ``out_dir`` and return the report dict."""
    report = S.Report()
    skip = skips.lookup(type(model).__name__)
    if skip and not ignore_skips:
        raise CaptureError(
            f"{type(model).__name__} is in EXPORT_SKIPS: {skip['reason']} (waits for: {skip['fix']}); "
            f"--ignore-skips tries anyway"
        )
    model.eval()
    if isinstance(inputs, tuple):
        sig_names = [p for p in __import__("inspect").signature(model.forward).parameters][: len(inputs)]
        if len(sig_names) != len(inputs):
            sig_names = [f"arg{i}" for i in range(len(inputs))]
        kwargs = dict(zip(sig_names, inputs))
        positional = True
    elif isinstance(inputs, dict):
        kwargs = dict(inputs)
        positional = False
    else:
        raise CaptureError("example inputs must be a tuple (positional) or a dict (keyword)")

    flags = S.prepare_inputs(model, kwargs, report)
    kwargs = S.cast_leaf_tensors(model, kwargs, report)
    if contiguous:
        kwargs = S.contiguous_inputs(kwargs, report)
    spec, dyn_desc, dyn_named = _dynamic_spec(kwargs, auto_dynamic, dims, factory_dynamic, report)

    with contextlib.ExitStack() as stack:
        stack.enter_context(S.patch_model_config(model, flags, report))
        stack.enter_context(S.reset_model_state(model, report))
        stack.enter_context(S.kernels_unavailable(report))
        stack.enter_context(S.sdpa_math_on_cpu(report))
        stack.enter_context(S.batched_experts(model, report))
        if not positional:
            stack.enter_context(S.patch_forward_signature(model, list(kwargs), report))
        with torch.no_grad():
            eager = model(*kwargs.values()) if positional else model(**kwargs)
            t0 = time.perf_counter()
            try:
                if positional:
                    ep = torch.export.export(
                        model, tuple(kwargs.values()), dynamic_shapes=(tuple(spec.values()) if spec else None), strict=False
                    )
                else:
                    ep = torch.export.export(model, (), kwargs, dynamic_shapes=spec, strict=False)
            except CaptureError:
                raise
            except Exception as e:  # torch's own errors: one line, the first of its message
                first = (str(e).strip().splitlines() or [type(e).__name__])[0]
                raise CaptureError(f"torch.export failed for {name}: {type(e).__name__}: {first}") from e
            report.record("DYN-S09", "torch-export-call", True, "torch.export.export(strict=False)")
            if decompose:
                ep = ep.run_decompositions()
            seconds = time.perf_counter() - t0
            eager_flat = _flat_tensors(eager)
            got = _flat_tensors(ep.module()(*kwargs.values()) if positional else ep.module()(**kwargs))
        _check_close(got, eager_flat, f"{name}: the exported program")

    fired = report.fired_ids()
    custom = ep.graph_module.meta.setdefault("custom", {})
    custom[META_CAPTURE_STEPS] = fired
    custom[META_MODEL_CLASS] = type(model).__name__
    if dyn_named:
        custom[META_DYNAMIC_SHAPES] = json.dumps(dyn_named, sort_keys=True)

    os.makedirs(os.path.join(out_dir, "io"), exist_ok=True)
    torch.export.save(ep, os.path.join(out_dir, "program.pt2"))
    flat_in = _flat_tensors(tuple(kwargs.values()))
    for i, t in enumerate(flat_in):
        _save_npy(os.path.join(out_dir, "io", f"input_{i}.npy"), t)
    for i, t in enumerate(eager_flat):
        _save_npy(os.path.join(out_dir, "io", f"output_{i}.npy"), t)

    nodes = sum(1 for n in ep.graph.nodes if n.op == "call_function")
    result = {
        "model": name,
        "torch": torch.__version__,
        "program": os.path.join(out_dir, "program.pt2"),
        "decomposed": bool(decompose),
        "nodes": nodes,
        "export_seconds": round(seconds, 3),
        "inputs": [{"name": k, "shape": list(v.shape), "dtype": str(v.dtype)} for k, v in kwargs.items() if isinstance(v, torch.Tensor)],
        "outputs": [{"shape": list(t.shape), "dtype": str(t.dtype)} for t in eager_flat],
        "capture_steps": report.steps,
        "fired": fired,
        "dynamic_shapes": dyn_desc,
    }
    with open(os.path.join(out_dir, "capture.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    return result
