#!/usr/bin/env python3
"""Regenerate the committed fxgen corpus (tests/corpus/) and its MANIFEST.md.

    third_party/venv/bin/python tools/fxgen/gen_corpus.py [--only NAME,...] [--out DIR] [--determinism]

Runs fxgen.py once per program (each in a fresh interpreter, the one running
this script: the venv's genuine torch), validates every archive with
check_archive.py (structure, op table, non-degenerate outputs, and execution
against io/output_<i>.npy), and rewrites MANIFEST.md. --determinism
generates everything a second time into a scratch directory and fails
unless every file is byte-identical.
"""

import sys

sys.dont_write_bytecode = True

import argparse  # noqa: E402
import ast  # noqa: E402
import filecmp  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import check_archive  # noqa: E402

# Programs whose un-decomposed torch.export.export program is kept too, as
# exported.pt2: each adds ops or forms the core-ATen program.pt2 lacks.
EXPORTED = {
    "resnet18": "in-place add_/relu_, batch_norm, conv2d, adaptive_avg_pool2d, linear, a dynamic batch",
    "vit_b_16": "scaled_dot_product_attention, linear, layer_norm, dropout, unflatten, contiguous",
    "llama_block": "index_copy_ on buffers (mutations), matmul, softmax.int, type_as, to.dtype",
    "selective_scan": "conv1d, softplus, chunk, matmul, an unrolled scan",
}

# name, model file (tools/fxgen/models/), factory, source model, how it was reduced
PROGRAMS = [
    ("resnet18", "torchvision_cnns.py", "resnet18", "torchvision resnet18 (ResNet, BasicBlock [2,2,2,2])",
     "stage widths 8/16/32/64 (1/8), 10 classes, 32x32 input"),
    ("mobilenet_v3_small", "torchvision_cnns.py", "mobilenet_v3_small", "torchvision mobilenet_v3_small",
     "width_mult 0.25, 10 classes, 32x32 input"),
    ("efficientnet_b0", "torchvision_cnns.py", "efficientnet_b0", "torchvision efficientnet_b0",
     "width_mult 0.25, depth_mult 0.5, 10 classes, 32x32 input"),
    ("vit_b_16", "vit.py", "vit_b_16", "torchvision VisionTransformer (vit_b_16 layout, patch 16)",
     "image 64, hidden 64, 3 layers, 4 heads, MLP 128, 10 classes"),
    ("convnext_tiny", "torchvision_cnns.py", "convnext_tiny", "torchvision ConvNeXt (convnext_tiny layout)",
     "dims 16/32/64/128, depths 1/1/2/1, 10 classes, 32x32 input"),
    ("transformer_encoder_layer", "transformer_encoder_layer.py", "transformer_encoder_layer",
     "torch.nn.TransformerEncoderLayer", "d_model 64, 4 heads, FFN 128, GELU, norm_first, batch_first"),
    ("llama_block", "llama_block.py", "llama_block", "Llama decoder block (Meta / gpt-fast style)",
     "dim 64, 4 heads / 2 KV heads, SwiGLU 128, KV cache 16"),
    ("gpt2_block", "gpt2_block.py", "gpt2_block", "GPT-2 block (HF GPT2Block style)",
     "n_embd 64, 4 heads, MLP 256"),
    ("bert_block", "bert_block.py", "bert_block", "BERT embeddings + encoder layer (HF BertModel style)",
     "hidden 64, 4 heads, FFN 128, vocab 100"),
    ("moe_router", "moe_router.py", "moe_router", "top-2 MoE block (HF Mixtral sparse MoE style)",
     "dim 32, 4 SwiGLU experts (hidden 64)"),
    ("whisper_frontend", "whisper_frontend.py", "whisper_frontend", "Whisper audio encoder front end",
     "80 mels x 64 frames, d 64, 4 heads, 1 block"),
    ("selective_scan", "selective_scan.py", "selective_scan", "Mamba block with the reference selective scan",
     "d_model 32, d_inner 64, d_state 8, 8 steps"),
]


def generate(names, out_root, python):
    for name, model, factory, _, _ in PROGRAMS:
        if names and name not in names:
            continue
        out = os.path.join(out_root, name)
        cmd = [python, os.path.join(HERE, "fxgen.py"), "--module", os.path.join(HERE, "models", model),
               "--factory", factory, "--out", out]
        if name in EXPORTED:
            cmd.append("--exported")
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
        proc = subprocess.run(cmd, env=env, cwd=REPO)
        if proc.returncode != 0:
            raise SystemExit("gen_corpus: fxgen failed for %s" % name)
        stale = os.path.join(out, "exported.pt2")
        if name not in EXPORTED and os.path.exists(stale):
            os.remove(stale)


def factory_doc(model, factory):
    """First docstring line of the factory, read without importing the model (no torch)."""
    with open(os.path.join(HERE, "models", model)) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == factory:
            return (ast.get_docstring(node) or "").strip().split("\n")[0]
    return ""


_NPY_NAMES = {"|u1": "uint8", "|i1": "int8", "<i2": "int16", "<i4": "int32", "<i8": "int64", "<f2": "float16",
              "<f4": "float32", "<f8": "float64", "|b1": "bool"}


def _io_types(io_dir, kind):
    out = []
    i = 0
    while os.path.exists(os.path.join(io_dir, "%s_%d.npy" % (kind, i))):
        descr, shape, _ = check_archive.read_npy(os.path.join(io_dir, "%s_%d.npy" % (kind, i)))
        out.append([_NPY_NAMES.get(descr, descr), list(shape)])
        i += 1
    return out


def summaries_from_disk(out_root):
    """What MANIFEST.md shows, read from the committed files (no torch needed)."""
    from fxgenlib.summary import summarize
    result = {}
    for name, model, factory, _, _ in PROGRAMS:
        d = os.path.join(out_root, name)
        if not os.path.exists(os.path.join(d, "producer.json")):
            continue
        with open(os.path.join(d, "producer.json")) as f:
            s = json.load(f)
        s.update(summarize(os.path.join(d, "program.pt2")))
        s["size"] = os.path.getsize(os.path.join(d, "program.pt2"))
        s["doc"] = factory_doc(model, factory)
        s["inputs"] = _io_types(os.path.join(d, "io"), "input")
        s["outputs"] = _io_types(os.path.join(d, "io"), "output")
        ex = os.path.join(d, "exported.pt2")
        s["exported"] = dict(summarize(ex), size=os.path.getsize(ex)) if os.path.exists(ex) else None
        result[name] = s
    return result


def validate(names, out_root, execute):
    ops_spec = os.path.join(REPO, "gen", "ops.spec")
    ops = check_archive.load_ops_spec(ops_spec) if os.path.exists(ops_spec) else None
    for name in names:
        for line in check_archive.check_path(os.path.join(out_root, name), ops, execute):
            print("gen_corpus: ok %s %s" % (name, line))
        exported = os.path.join(out_root, name, "exported.pt2")
        if os.path.exists(exported):
            # The export IR holds composite and in-place ops outside the op
            # table; its structure is checked, and it is executed.
            for line in check_archive.check_path(exported, None, execute):
                print("gen_corpus: ok %s exported.pt2 %s" % (name, line))


def _fmt_dyn(summary):
    rc = summary.get("range_constraints") or {}
    if not summary.get("dynamic"):
        return "static"
    parts = []
    for idx, dim, sym in summary["dynamic"]:
        r = rc.get(sym, {})
        parts.append("input %d dim %d = %s in [%s, %s]" % (idx, dim, sym, r.get("min_val"),
                                                          "inf" if r.get("max_val") is None else r.get("max_val")))
    return "; ".join(parts)


def _fmt_tensors(ts):
    return ", ".join("%s%s" % (dt, list(shape)) for dt, shape in ts)


def _dir_size(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def write_manifest(out_root, summaries):
    rows = []
    details = []
    total = 0
    for name, model, factory, source, reduced in PROGRAMS:
        s = summaries.get(name)
        if s is None:
            continue
        size = _dir_size(os.path.join(out_root, name))
        total += size
        ex = s.get("exported")
        rows.append("| `%s` | %s | %s | %s | %d | %d | %s | %.0f KiB | %.0f KiB |" % (
            name, source, reduced, _fmt_dyn(s), s["nodes"], len(s["ops"]),
            "%d / %d" % (ex["nodes"], len(ex["ops"])) if ex else "—", s["size"] / 1024.0, size / 1024.0))
        muts = ", ".join("`%s`" % m for m in s.get("mutations", [])) or "none"
        details.append("### `%s`\n\n" % name)
        details.append("- model: `tools/fxgen/models/%s`, factory `%s()` — %s\n" % (model, factory, s.get("doc", "")))
        details.append("- inputs: %s; outputs: %s\n" % (_fmt_tensors(s["inputs"]), _fmt_tensors(s["outputs"])))
        details.append("- dynamic dims: %s; buffer mutations: %s\n" % (_fmt_dyn(s), muts))
        details.append("- `program.pt2` (core ATen): %d nodes, %d distinct ops, %.1f KiB of weights and constants, "
                       "schema %s, written by torch %s\n"
                       % (s["nodes"], len(s["ops"]), s.get("state_bytes", 0) / 1024.0, s["schema_version"],
                          s["torch_version"]))
        details.append("- ops: %s\n" % ", ".join("`%s`" % o.replace("torch.ops.", "") for o in s["ops"]))
        if ex:
            details.append("- `exported.pt2` (export IR, kept for: %s): %d nodes, %d distinct ops, written by torch %s\n"
                           % (EXPORTED[name], ex["nodes"], len(ex["ops"]), ex["torch_version"]))
            details.append("- export-IR ops: %s\n" % ", ".join("`%s`" % o.replace("torch.ops.", "") for o in ex["ops"]))
        details.append("\n")
    torches = sorted({s["torch_version"] for s in summaries.values()})
    any_s = next(iter(summaries.values()))
    text = [
        "# fxgen corpus\n\n",
        "Programs written by genuine `torch.export` (torch %s, torchvision %s, Python %s) through\n"
        % (", ".join(torches), any_s.get("torchvision", "-"), any_s.get("python", "-")),
        "`tools/fxgen/fxgen.py`, from PyTorch modules with random, seeded weights (no pretrained downloads).\n",
        "Regenerate with `make fixtures` (`tools/fxgen/gen_corpus.py` in the project venv); CI reads the\n",
        "committed files and needs no torch. Do not edit by hand.\n\n",
        "Each `<name>/` holds:\n\n",
        "- `program.pt2`: `torch.export.save` of `torch.export.export(module, inputs, dynamic_shapes=...)`\n",
        "  `.run_decompositions()`, the core-ATen program that exir and torch.onnx consume (PT2 archive,\n",
        "  raw payloads indexed by `PayloadConfig`, model name `model`, root folder `program/`);\n",
        "- `exported.pt2` (%s only): the un-decomposed program\n" % ", ".join("`%s`" % n for n in sorted(EXPORTED)),
        "  `torch.export.export` returns, what a user hands to fxport (composite and in-place ops);\n",
        "- `io/input_<i>.npy` (the example inputs) and `io/output_<i>.npy` (eager outputs of the original\n",
        "  module, pytree-flattened); none is degenerate (constant, all zero, NaN/Inf: `check_archive.py` fails);\n",
        "- `producer.json`: the torch, torchvision, numpy and Python releases that wrote it, and the form,\n",
        "  schema version, node count and ops of each archive.\n\n",
        "fxgen checks every archive after saving it: `torch.export.load` + `.module()` on the example inputs\n",
        "must give the eager outputs.\n\n",
        "| program | source | reduced | dynamic dims | nodes | ops | exported.pt2 nodes / ops | program.pt2 | with io/ |\n",
        "|---|---|---|---|---|---|---|---|---|\n",
    ]
    text += [r + "\n" for r in rows]
    text.append("\nTotal: %.2f MiB.\n\n" % (total / 1048576.0))
    text += details
    path = os.path.join(out_root, "MANIFEST.md")
    with open(path + ".tmp", "w") as f:
        f.write("".join(text))
    os.replace(path + ".tmp", path)


def compare_trees(a, b, names):
    diffs = []
    for name in names:
        for root, _, files in os.walk(os.path.join(a, name)):
            for f in files:
                pa = os.path.join(root, f)
                pb = os.path.join(b, os.path.relpath(pa, a))
                if not os.path.exists(pb) or not filecmp.cmp(pa, pb, shallow=False):
                    diffs.append(os.path.relpath(pa, a))
    return diffs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated program names")
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "corpus"), help="corpus directory")
    ap.add_argument("--determinism", action="store_true", help="generate twice and require identical bytes")
    ap.add_argument("--no-execute", action="store_true", help="skip running the programs in validation")
    ap.add_argument("--manifest-only", action="store_true",
                    help="only rewrite MANIFEST.md from the committed files (no torch needed)")
    args = ap.parse_args(argv)
    known = [p[0] for p in PROGRAMS]
    names = args.only.split(",") if args.only else known
    for n in names:
        if n not in known:
            raise SystemExit("gen_corpus: unknown program %r (known: %s)" % (n, ", ".join(known)))
    os.makedirs(args.out, exist_ok=True)
    if args.manifest_only:
        write_manifest(args.out, summaries_from_disk(args.out))
        return 0
    import torch  # noqa: F401 - fail early, before any output is touched, without genuine torch
    generate(names, args.out, sys.executable)
    validate(names, args.out, not args.no_execute)
    write_manifest(args.out, summaries_from_disk(args.out))
    if args.determinism:
        scratch = tempfile.mkdtemp(prefix="fxgen-det-")
        try:
            generate(names, scratch, sys.executable)
            diffs = compare_trees(args.out, scratch, names)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if diffs:
            raise SystemExit("gen_corpus: not deterministic: %s" % ", ".join(diffs))
        print("gen_corpus: second generation is byte-identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
