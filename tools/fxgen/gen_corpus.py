#!/usr/bin/env python3
"""Regenerate the committed fxgen corpus (tests/corpus/) and its MANIFEST.md.

    /usr/bin/python3 tools/fxgen/gen_corpus.py [--only NAME,...] [--out DIR] [--determinism]

Runs fxgen.py once per program (each in a fresh interpreter), validates
every archive with check_archive.py (structure, op table, and execution
against io/output_<i>.npy), and rewrites MANIFEST.md. --determinism
generates everything a second time into a scratch directory and fails
unless every file is byte-identical.
"""

import sys

sys.dont_write_bytecode = True

import argparse  # noqa: E402
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
    summaries = {}
    for name, model, factory, _, _ in PROGRAMS:
        if names and name not in names:
            continue
        out = os.path.join(out_root, name)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            summary_path = tmp.name
        try:
            cmd = [python, os.path.join(HERE, "fxgen.py"), "--module", os.path.join(HERE, "models", model),
                   "--factory", factory, "--out", out, "--summary", summary_path]
            env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
            proc = subprocess.run(cmd, env=env, cwd=REPO)
            if proc.returncode != 0:
                raise SystemExit("gen_corpus: fxgen failed for %s" % name)
            with open(summary_path) as f:
                summaries[name] = json.load(f)
        finally:
            os.remove(summary_path)
    return summaries


def validate(names, out_root, execute):
    ops_spec = os.path.join(REPO, "gen", "ops.spec")
    ops = check_archive.load_ops_spec(ops_spec) if os.path.exists(ops_spec) else None
    for name in names:
        for line in check_archive.check_path(os.path.join(out_root, name), ops, execute):
            print("gen_corpus: ok %s %s" % (name, line))


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
        rows.append("| `%s` | %s | %s | %s | %d | %d | %.0f KiB | %.0f KiB |" % (
            name, source, reduced, _fmt_dyn(s), s["nodes"], len(s["ops"]), s["size"] / 1024.0, size / 1024.0))
        muts = ", ".join("`%s`" % m for m in s.get("mutations", [])) or "none"
        details.append("### `%s`\n\n" % name)
        details.append("- model: `tools/fxgen/models/%s`, factory `%s()` — %s\n" % (model, factory, s.get("doc", "")))
        details.append("- inputs: %s; outputs: %s\n" % (_fmt_tensors(s["inputs"]), _fmt_tensors(s["outputs"])))
        details.append("- dynamic dims: %s; buffer mutations: %s\n" % (_fmt_dyn(s), muts))
        details.append("- %d nodes, %d distinct ops, %.1f KiB of weights and constants, traced with torch %s (%s)\n"
                       % (s["nodes"], len(s["ops"]), s.get("state_bytes", 0) / 1024.0, s["torch"], s["path"]))
        details.append("- ops: %s\n\n" % ", ".join("`%s`" % o.replace("torch.ops.", "") for o in s["ops"]))
    text = [
        "# fxgen corpus\n\n",
        "Programs written by `tools/fxgen/fxgen.py` from real PyTorch modules with random, seeded weights\n",
        "(no pretrained downloads). Regenerate with `make fixtures` (`tools/fxgen/gen_corpus.py`, needs torch);\n",
        "CI reads the committed files and needs no torch. Do not edit by hand.\n\n",
        "Each `<name>/` holds `program.pt2` (PT2 archive, torch >= 2.9 layout: raw weight payloads indexed by\n",
        "`PayloadConfig`, schema 8.20, model name `model`, root folder `program/`), `io/input_<i>.npy` (the\n",
        "example inputs) and `io/output_<i>.npy` (eager outputs of the original module on those inputs).\n",
        "Traced with Debian's torch 1.13 through `make_fx` (see `tools/fxgen/README.md` for how that path\n",
        "differs from `torch.export`: e.g. `linear` appears as `t` + `addmm`, batch norm as\n",
        "`native_batch_norm`, attention as `bmm` + `_softmax`).\n\n",
        "| program | source | reduced | dynamic dims | nodes | ops | program.pt2 | with io/ |\n",
        "|---|---|---|---|---|---|---|---|\n",
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
    args = ap.parse_args(argv)
    known = [p[0] for p in PROGRAMS]
    names = args.only.split(",") if args.only else known
    for n in names:
        if n not in known:
            raise SystemExit("gen_corpus: unknown program %r (known: %s)" % (n, ", ".join(known)))
    os.makedirs(args.out, exist_ok=True)
    summaries = generate(names, args.out, sys.executable)
    validate(names, args.out, not args.no_execute)
    if not args.only:
        write_manifest(args.out, summaries)
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
