"""Capture steps: the catalog's capture-only workarounds as reversible patches.

Each step has the catalog ID the Go side declares (``pm.CaptureStep``) and is
a context manager active for one export only. A step that finds nothing to do
does not fire; one that fires records what it did, per module, in the report.
The IDs of the fired steps go into the program's metadata
(``export.capture_steps``), which fxport's ``check-capture-steps`` pass reads.
"""

import contextlib
import inspect

import torch

# Inputs that make transformers compute a loss (DYN-S01 refuses them) and the
# output flags it pops from the inputs and sets on the config (DYN-S07).
LOSS_INPUTS = ("labels", "future_values", "return_loss")
OUTPUT_FLAGS = ("use_cache", "output_attentions", "output_hidden_states", "return_dict")

# Module attributes that hold eager state a trace must not capture (DYN-S06).
STATEFUL_ATTRS = (
    "_cached_keys",
    "_cached_decode_position_ids",
    "_prefill_len",
    "cached_rotary_positional_embedding",
    "cached_sequence_length",
)

# Where transformers asks whether Hub kernels are available (DYN-P06).
KERNEL_CHECK_MODULES = (
    "transformers.utils.import_utils",
    "transformers.utils",
    "transformers.modeling_utils",
    "transformers.models.sam3_video.modeling_sam3_video",
    "transformers.models.mra.modeling_mra",
    "transformers.models.rwkv.modeling_rwkv",
    "transformers.models.yoso.modeling_yoso",
)


class Report:
    """What the capture steps did: one entry per step, fired or not."""

    def __init__(self):
        self.steps = []

    def record(self, step_id, name, fired, detail=None, modules=None):
        self.steps.append(
            {
                "id": step_id,
                "name": name,
                "fired": bool(fired),
                "detail": detail or "",
                "modules": sorted(modules or []),
            }
        )

    def fired_ids(self):
        return [s["id"] for s in self.steps if s["fired"]]


def prepare_inputs(model, inputs, report):
    """DYN-S01: refuse loss inputs; pop the output flags (handed to DYN-S07)."""
    for key in LOSS_INPUTS:
        if key in inputs and inputs[key] is not None:
            from .errors import CaptureError

            raise CaptureError(
                f"input {key!r} makes the model compute a loss; export the inference "
                f"forward without it"
            )
    flags = {k: inputs.pop(k) for k in OUTPUT_FLAGS if k in inputs}
    report.record(
        "DYN-S01",
        "prepare-for-export",
        bool(flags),
        f"popped output flags {sorted(flags)}" if flags else "no loss inputs or output flags",
    )
    return flags


def cast_leaf_tensors(model, inputs, report):
    """DYN-S03: floating inputs take the model's dtype; every input its device."""
    try:
        p = next(model.parameters())
        dtype, device = p.dtype, p.device
    except StopIteration:
        report.record("DYN-S03", "cast-leaf-tensors", False, "model has no parameters")
        return inputs
    changed = []

    def fix(name, t):
        if not isinstance(t, torch.Tensor):
            return t
        u = t
        if u.is_floating_point() and u.dtype != dtype:
            u = u.to(dtype)
        if u.device != device:
            u = u.to(device)
        if u is not t:
            changed.append(name)
        return u

    out = {k: fix(k, v) for k, v in inputs.items()}
    report.record(
        "DYN-S03",
        "cast-leaf-tensors",
        bool(changed),
        f"cast {changed} to {dtype} on {device}" if changed else f"inputs already {dtype} on {device}",
    )
    return out


def contiguous_inputs(inputs, report):
    """ET-B05: ExecuTorch rejects stride-0 placeholders; inputs become contiguous."""
    changed = [k for k, v in inputs.items() if isinstance(v, torch.Tensor) and not v.is_contiguous()]
    out = {k: (v.contiguous() if k in changed else v) for k, v in inputs.items()}
    report.record(
        "ET-B05",
        "contiguous-inputs",
        bool(changed),
        f"made {changed} contiguous" if changed else "inputs already contiguous",
    )
    return out


@contextlib.contextmanager
def patch_model_config(model, flags, report):
    """DYN-S07: write the popped flags (use_cache off) on every config, reversibly."""
    configs = []
    for name, mod in model.named_modules():
        cfg = getattr(mod, "config", None)
        if cfg is not None and all(cfg is not c for _, c in configs):
            configs.append((name or "<root>", cfg))
    wanted = dict(flags)
    wanted.setdefault("use_cache", False)
    saved = []
    changes = set()
    touched = set()
    for name, cfg in configs:
        for key, value in wanted.items():
            if hasattr(cfg, key) and getattr(cfg, key) != value:
                saved.append((cfg, key, getattr(cfg, key)))
                changes.add(f"{key}={value!r}")
                setattr(cfg, key, value)
                touched.add(name)
        if getattr(cfg, "use_mamba_kernels", False):
            saved.append((cfg, "use_mamba_kernels", True))
            changes.add("use_mamba_kernels=False")
            cfg.use_mamba_kernels = False
            touched.add(name)
    detail = ", ".join(sorted(changes)) if changes else ("no config" if not configs else "config flags already set")
    report.record("DYN-S07", "patch-model-config", bool(saved), detail, touched)
    try:
        yield
    finally:
        for cfg, key, value in reversed(saved):
            setattr(cfg, key, value)


@contextlib.contextmanager
def reset_model_state(model, report):
    """DYN-S06: stateful cache attributes are None for the trace, restored after."""
    saved = []
    for name, mod in model.named_modules():
        for attr in STATEFUL_ATTRS:
            if attr in vars(mod) and getattr(mod, attr) is not None:
                saved.append((name or "<root>", mod, attr, getattr(mod, attr)))
                setattr(mod, attr, None)
    report.record(
        "DYN-S06",
        "reset-model-state",
        bool(saved),
        ", ".join(f"{n}.{a}" for n, _, a, _ in saved) or "no stateful cache attributes",
        {n for n, _, _, _ in saved},
    )
    try:
        yield
    finally:
        for _, mod, attr, value in reversed(saved):
            setattr(mod, attr, value)


@contextlib.contextmanager
def patch_forward_signature(model, keys, report):
    """DYN-S08: a forward taking ``**kwargs`` gets one explicit parameter per input."""
    sig = inspect.signature(model.forward)
    has_var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
    named = {n for n, p in sig.parameters.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    if not has_var_kw or all(k in named for k in keys):
        report.record("DYN-S08", "patch-forward-signature", False, "forward names every input")
        yield
        return
    original = model.forward

    def flat_forward(*args, **kwargs):
        return original(*args, **kwargs)

    flat_forward.__signature__ = inspect.Signature(
        [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None) for k in keys]
    )
    model.forward = flat_forward
    report.record(
        "DYN-S08", "patch-forward-signature", True, f"forward(**kwargs) → forward({', '.join(keys)})", {type(model).__name__}
    )
    try:
        yield
    finally:
        del model.forward


@contextlib.contextmanager
def sdpa_math_on_cpu(report):
    """DYN-P05: CPU attention runs the math kernel (no flash/efficient guards)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    original = F.scaled_dot_product_attention
    calls = {"n": 0}

    def sdpa(query, *args, **kwargs):
        if isinstance(query, torch.Tensor) and query.device.type == "cpu":
            calls["n"] += 1
            with sdpa_kernel(SDPBackend.MATH):
                return original(query, *args, **kwargs)
        return original(query, *args, **kwargs)

    F.scaled_dot_product_attention = sdpa
    try:
        yield
    finally:
        F.scaled_dot_product_attention = original
        report.record(
            "DYN-P05",
            "sdpa-math-on-cpu",
            calls["n"] > 0,
            f"{calls['n']} attention calls on the math kernel" if calls["n"] else "no attention call",
        )


@contextlib.contextmanager
def kernels_unavailable(report):
    """DYN-P06: transformers' Hub-kernel check answers False during capture."""
    import sys

    saved = []
    for modname in KERNEL_CHECK_MODULES:
        mod = sys.modules.get(modname)  # only what the model imported
        if mod is not None and hasattr(mod, "is_kernels_available"):
            saved.append((modname, mod, mod.is_kernels_available))
            mod.is_kernels_available = lambda *a, **k: False
    report.record(
        "DYN-P06",
        "kernels-unavailable",
        bool(saved),
        "is_kernels_available() answers False" if saved else "transformers not imported",
        {m for m, _, _ in saved},
    )
    try:
        yield
    finally:
        for _, mod, fn in reversed(saved):
            mod.is_kernels_available = fn


@contextlib.contextmanager
def batched_experts(model, report):
    """ET-B01 (prepare-for-xnnpack's experts switch): mixture-of-experts layers
    run the batched_mm experts implementation during capture.

    transformers' default, grouped_mm, traces to aten._grouped_mm or (off
    bf16 / on the CPU) to its custom op transformers.grouped_mm_fallback,
    a loop over data-dependent expert row ranges that no ExecuTorch kernel
    runs; its eager implementation loops over ``nonzero()`` experts, which
    torch.export cannot capture. batched_mm gathers each token's expert
    weights and runs one bmm: plain ops with static shapes for every target
    (ONNX, portable and XNNPACK programs come from one capture). Restored
    after the export.
    """
    can_set = getattr(model, "_can_set_experts_implementation", None)
    get = getattr(model, "get_experts_implementation", None)
    saved = None
    if callable(can_set) and callable(get) and hasattr(model, "set_experts_implementation"):
        try:
            if can_set():
                current = get()
                if any(v != "batched_mm" for v in current.values()):
                    saved = current
        except Exception:  # a model whose experts cannot be switched: left alone
            saved = None
    if saved is not None:
        model.set_experts_implementation("batched_mm")
    report.record(
        "ET-B01",
        "prepare-for-xnnpack",
        saved is not None,
        ("experts implementation " + ", ".join(f"{k or '<root>'}: {v}" for k, v in sorted(saved.items())) + " → batched_mm")
        if saved is not None
        else "no switchable experts implementation",
        {type(model).__name__} if saved is not None else None,
    )
    try:
        yield
    finally:
        if saved is not None:
            model.set_experts_implementation(saved)
