"""Where a model comes from: a factory in a Python file or module, or a
transformers architecture built from a small random config (no downloads)."""

import importlib
import importlib.util
import os
import sys

import torch

from .errors import CaptureError

# Size fields a tiny random config shrinks, with the values used unless the
# user gives others (--config). Only fields the architecture's config has are
# set.
TINY = {
    "hidden_size": 32,
    "d_model": 32,
    "n_embd": 32,
    "dim": 32,
    "intermediate_size": 64,
    "ffn_dim": 64,
    "n_inner": 64,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
    "num_hidden_layers": 2,
    "n_layer": 2,
    "num_layers": 2,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "num_attention_heads": 4,
    "n_head": 4,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 128,
    "max_position_embeddings": 64,
    "n_positions": 64,
    "image_size": 32,
    "patch_size": 8,
}

TASKS = {
    "base": "AutoModel",
    "causal-lm": "AutoModelForCausalLM",
    "masked-lm": "AutoModelForMaskedLM",
    "seq-cls": "AutoModelForSequenceClassification",
    "image-cls": "AutoModelForImageClassification",
}


def _parse_value(text):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def load_factory(spec):
    """``path/to/file.py:factory`` or ``package.module:factory``; the factory
    returns ``(module, example_inputs)`` where the inputs are a tuple or a dict."""
    if ":" not in spec:
        raise CaptureError(f"--model {spec!r}: expected FILE.py:FACTORY or MODULE:FACTORY")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise CaptureError(f"--model: no such file {where!r}")
        modname = "_fxport_capture_model_" + os.path.splitext(os.path.basename(where))[0]
        sp = importlib.util.spec_from_file_location(modname, where)
        mod = importlib.util.module_from_spec(sp)
        sys.modules[modname] = mod
        sp.loader.exec_module(mod)
    else:
        try:
            mod = importlib.import_module(where)
        except ImportError as e:
            raise CaptureError(f"--model: cannot import {where!r}: {e}") from None
    fn = getattr(mod, name, None)
    if fn is None or not callable(fn):
        raise CaptureError(f"--model: {where!r} has no factory {name!r}")
    got = fn()
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], torch.nn.Module)):
        raise CaptureError(f"--model: {name}() must return (module, example_inputs)")
    module, inputs = got
    dynamic = getattr(fn, "dynamic_shapes", None)
    return module, inputs, dynamic, f"{where}:{name}"


def tiny_config(arch, overrides):
    from transformers import AutoConfig

    try:
        cfg = AutoConfig.for_model(arch)
    except (ValueError, KeyError):
        raise CaptureError(f"--hf: transformers knows no architecture {arch!r}") from None
    applied = {}
    for key, value in TINY.items():
        if hasattr(cfg, key):
            setattr(cfg, key, value)
            applied[key] = value
    # Keep heads consistent with the hidden size and the KV heads.
    heads = getattr(cfg, "num_attention_heads", None)
    kv = getattr(cfg, "num_key_value_heads", None)
    if heads and kv and heads % kv:
        cfg.num_key_value_heads = heads
    if hasattr(cfg, "head_dim") and heads and hasattr(cfg, "hidden_size"):
        cfg.head_dim = cfg.hidden_size // heads
    for item in overrides:
        if "=" not in item:
            raise CaptureError(f"--config {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        if not hasattr(cfg, key):
            raise CaptureError(f"--config {key!r}: {arch} configs have no such field")
        setattr(cfg, key, _parse_value(value))
        applied[key] = getattr(cfg, key)
    return cfg, applied


def load_transformers(arch, task, overrides, batch, seq, seed):
    import transformers

    cls_name = TASKS.get(task)
    if cls_name is None:
        raise CaptureError(f"--task {task!r}: one of {', '.join(sorted(TASKS))}")
    cfg, applied = tiny_config(arch, overrides)
    torch.manual_seed(seed)
    try:
        model = getattr(transformers, cls_name).from_config(cfg)
    except ValueError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CaptureError(f"--hf {arch} --task {task}: {first}") from None
    model.eval()
    g = torch.Generator().manual_seed(seed + 1)
    inputs = {}
    main = getattr(model, "main_input_name", "input_ids")
    if main == "pixel_values":
        size = getattr(cfg, "image_size", 32)
        size = size if isinstance(size, int) else size[0]
        ch = getattr(cfg, "num_channels", 3)
        inputs["pixel_values"] = torch.randn(batch, ch, size, size, generator=g)
    elif main == "input_ids":
        vocab = getattr(cfg, "vocab_size", 128)
        inputs["input_ids"] = torch.randint(0, vocab, (batch, seq), generator=g)
        inputs["attention_mask"] = torch.ones(batch, seq, dtype=torch.long)
        if getattr(cfg, "is_encoder_decoder", False):
            inputs["decoder_input_ids"] = torch.randint(0, vocab, (batch, seq), generator=g)
    elif main in ("input_values", "input_features"):
        if main == "input_values":
            inputs[main] = torch.randn(batch, 16 * seq * 10, generator=g)
        else:
            mels = getattr(cfg, "num_mel_bins", 80)
            inputs[main] = torch.randn(batch, mels, 2 * seq, generator=g)
    else:
        raise CaptureError(f"--hf {arch}: no sample inputs for main input {main!r}; use --model with a factory")
    return model, inputs, f"transformers {arch} ({cls_name}, tiny random config {applied})"
