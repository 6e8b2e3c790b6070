#!/usr/bin/env python3
"""Genuine torch.export programs for the scaling benchmarks: stacks of real blocks at ~1k, ~10k, ~100k nodes.

    third_party/venv/bin/python tools/anchors/scaling.py [--cache DIR] [--only decoder,vit,resnet]
        [--sizes 1k,10k,100k] [--list]

Three stacks, each a chain of one block repeated, small in weights (tiny widths),
captured with torch.export.export, decomposed to core ATen with the default
run_decompositions() (the form exir and torch.onnx lower from, and that of
tests/corpus), and written with torch.export.save:

  decoder  a decoder LM block (Llama style): RMSNorm, rotary position embedding on
           q and k, grouped-query attention over a KV cache held in buffers and
           updated in place with index_copy_ (buffer mutations), SwiGLU MLP
  vit      torchvision's vision-transformer EncoderBlock (LayerNorm,
           nn.MultiheadAttention, MLPBlock)
  resnet   a ResNet stage: torchvision's BasicBlock (conv, batch norm, relu,
           residual)

The files are cached, never committed: DIR is --cache, else $FXPORT_BENCH_CACHE,
else $XDG_CACHE_HOME/fxport/bench (~/.cache/fxport/bench). Each program is
DIR/<model>_<size>.pt2 beside DIR/<model>_<size>.json (nodes, blocks, torch
version, capture time). A file is regenerated when this script or the torch
version changes (the key is in the .json). Prints one line per program:
path, nodes, blocks.
"""

import sys

sys.dont_write_bytecode = True

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

SIZES = {"1k": 1000, "10k": 10000, "100k": 100000}
MODELS = ("decoder", "vit", "resnet")


def cache_dir(arg):
    if arg:
        return arg
    if os.environ.get("FXPORT_BENCH_CACHE"):
        return os.environ["FXPORT_BENCH_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fxport", "bench")


def build(model, blocks):
    """(module, example inputs) of a stack of `blocks` blocks."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    if model == "decoder":
        dim, heads, kv_heads, hidden, max_seq, tokens = 16, 2, 1, 32, 8, 2
        head_dim = dim // heads

        class RMSNorm(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

            def forward(self, x):
                return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight

        def rotate_half(x):
            half = x.shape[-1] // 2
            return torch.cat([-x[..., half:], x[..., :half]], dim=-1)

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.wq = nn.Linear(dim, heads * head_dim, bias=False)
                self.wk = nn.Linear(dim, kv_heads * head_dim, bias=False)
                self.wv = nn.Linear(dim, kv_heads * head_dim, bias=False)
                self.wo = nn.Linear(heads * head_dim, dim, bias=False)
                self.w1 = nn.Linear(dim, hidden, bias=False)
                self.w2 = nn.Linear(hidden, dim, bias=False)
                self.w3 = nn.Linear(dim, hidden, bias=False)
                self.attention_norm = RMSNorm()
                self.ffn_norm = RMSNorm()
                self.register_buffer("k_cache", 0.5 * torch.randn(1, kv_heads, max_seq, head_dim))
                self.register_buffer("v_cache", 0.5 * torch.randn(1, kv_heads, max_seq, head_dim))

            def forward(self, x, cos, sin, input_pos):
                b, t, _ = x.shape
                h = self.attention_norm(x)
                q = self.wq(h).view(b, t, heads, head_dim)
                k = self.wk(h).view(b, t, kv_heads, head_dim)
                v = self.wv(h).view(b, t, kv_heads, head_dim)
                q = q * cos + rotate_half(q) * sin
                k = k * cos + rotate_half(k) * sin
                q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
                self.k_cache.index_copy_(2, input_pos, k)
                self.v_cache.index_copy_(2, input_pos, v)
                rep = heads // kv_heads
                keys = self.k_cache.repeat_interleave(rep, dim=1)
                values = self.v_cache.repeat_interleave(rep, dim=1)
                scores = torch.matmul(q, keys.transpose(2, 3)) / math.sqrt(head_dim)
                visible = torch.arange(max_seq).unsqueeze(0) <= input_pos.unsqueeze(1)
                scores = scores.masked_fill(visible.logical_not(), float("-inf"))
                out = torch.matmul(F.softmax(scores, dim=-1), values).transpose(1, 2).reshape(b, t, dim)
                x = x + self.wo(out)
                h = self.ffn_norm(x)
                return x + self.w2(F.silu(self.w1(h)) * self.w3(h))

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList(Block() for _ in range(blocks))
                inv = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
                freqs = torch.outer(torch.arange(max_seq).float(), inv)
                emb = torch.cat([freqs, freqs], dim=-1)
                self.register_buffer("rope_cos", emb.cos(), persistent=False)
                self.register_buffer("rope_sin", emb.sin(), persistent=False)

            def forward(self, x, input_pos):
                cos = self.rope_cos[input_pos].unsqueeze(0).unsqueeze(2)
                sin = self.rope_sin[input_pos].unsqueeze(0).unsqueeze(2)
                for layer in self.layers:
                    x = layer(x, cos, sin, input_pos)
                return x

        return Stack(), (torch.randn(1, tokens, dim), torch.arange(3, 3 + tokens))
    if model == "vit":
        from torchvision.models.vision_transformer import EncoderBlock

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(*[EncoderBlock(2, 16, 32, 0.0, 0.0) for _ in range(blocks)])

            def forward(self, x):
                return self.layers(x)

        return Stack(), (torch.randn(1, 5, 16),)
    if model == "resnet":
        from torchvision.models.resnet import BasicBlock

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.Sequential(*[BasicBlock(4, 4) for _ in range(blocks)])
                for m in self.modules():
                    if isinstance(m, nn.BatchNorm2d):
                        m.running_mean.uniform_(-0.1, 0.1)
                        m.running_var.uniform_(0.5, 1.5)

            def forward(self, x):
                return self.layers(x)

        return Stack(), (torch.randn(1, 4, 8, 8),)
    raise SystemExit("scaling: unknown model %r (known: %s)" % (model, ", ".join(MODELS)))


def capture(model, blocks):
    import torch
    module, inputs = build(model, blocks)
    t0 = time.perf_counter()
    ep = torch.export.export(module.eval(), inputs).run_decompositions()
    return ep, time.perf_counter() - t0


def nodes(ep):
    return len(ep.graph.nodes)


def key():
    import torch
    with open(os.path.abspath(__file__), "rb") as f:
        src = f.read()
    return hashlib.sha256(src + torch.__version__.encode()).hexdigest()[:16]


def per_block(model):
    """(fixed nodes, nodes per block) from captures of 1 and 3 blocks."""
    a, b = nodes(capture(model, 1)[0]), nodes(capture(model, 3)[0])
    return a - (b - a) // 2, (b - a) // 2


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", help="cache directory (default $FXPORT_BENCH_CACHE or $XDG_CACHE_HOME/fxport/bench)")
    ap.add_argument("--only", default=",".join(MODELS), help="models: " + ", ".join(MODELS))
    ap.add_argument("--sizes", default=",".join(SIZES), help="sizes: " + ", ".join(SIZES))
    ap.add_argument("--list", action="store_true", help="print the cache directory and the programs, build nothing")
    args = ap.parse_args(argv)
    models = [m for m in args.only.split(",") if m]
    sizes = [s for s in args.sizes.split(",") if s]
    for m in models:
        if m not in MODELS:
            ap.error("unknown model %r (known: %s)" % (m, ", ".join(MODELS)))
    for s in sizes:
        if s not in SIZES:
            ap.error("unknown size %r (known: %s)" % (s, ", ".join(SIZES)))
    d = cache_dir(args.cache)
    if args.list:
        print(d)
        for m in models:
            for s in sizes:
                print(os.path.join(d, "%s_%s.pt2" % (m, s)))
        return 0
    import torch
    torch.set_num_threads(1)
    os.makedirs(d, exist_ok=True)
    k = key()
    for m in models:
        shape = None
        for s in sizes:
            path = os.path.join(d, "%s_%s.pt2" % (m, s))
            meta_path = path[:-4] + ".json"
            try:
                with open(meta_path) as f:
                    meta = json.load(f)
                if meta.get("key") == k and os.path.exists(path):
                    print("%s\t%d nodes\t%d blocks\t(cached)" % (path, meta["nodes"], meta["blocks"]))
                    continue
            except (OSError, ValueError):
                pass
            if shape is None:
                shape = per_block(m)
            fixed, each = shape
            blocks = max(1, round((SIZES[s] - fixed) / each))
            ep, secs = capture(m, blocks)
            tmp = path + ".tmp"
            torch.export.save(ep, tmp)
            os.replace(tmp, path)
            meta = {"key": k, "model": m, "size": s, "blocks": blocks, "nodes": nodes(ep),
                    "torch": torch.__version__, "capture_s": round(secs, 1), "bytes": os.path.getsize(path)}
            with open(meta_path + ".tmp", "w") as f:
                json.dump(meta, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(meta_path + ".tmp", meta_path)
            print("%s\t%d nodes\t%d blocks\tcaptured in %.0f s" % (path, meta["nodes"], blocks, secs))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
