#!/usr/bin/env python3
"""Small programs saved by genuine torch releases, for the .pt2 reader's tests.

    PYTHON gen.py            # writes torch-<version>/ beside this file

Run it once with each torch release (a throwaway venv per release: torch
2.5.x writes the legacy flat zip, 2.8 the PT2 archive with pickled weights,
2.9 and later the PT2 archive with raw payloads). It exports every program
below with torch.export.export, saves it with torch.export.save as
torch-<version>/<program>.pt2 and records in torch-<version>/manifest.json
what the Go test checks: the torch release, the signature (input and output
kinds and names), the user inputs' and outputs' dtypes and shapes, the
symbolic dims and their ranges, every parameter, buffer and constant with its
dtype, shape and values, and the example inputs with torch's outputs. The
saved program is what torch.export.export returns (the form a user hands to
fxport), loaded back with torch.export.load and checked against eager.
"""

import json
import os
import platform
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


class State(nn.Module):
    """Parameters, a persistent and a non-persistent buffer, an int64 buffer,
    a tensor attribute (a constant) and a tensor made in forward (lifted)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("scale", torch.tensor([0.5, -1.25, 2.0]))
        self.register_buffer("offset", torch.tensor([0.1, 0.2, -0.3]), persistent=False)
        self.register_buffer("steps", torch.tensor([3, 1, 2], dtype=torch.int64))
        self.table = torch.linspace(-1.0, 1.0, 3)

    def forward(self, x):
        bias = torch.tensor([1.0, 2.0, 3.0])
        y = self.fc(x) * self.scale + self.offset + self.table
        return y * self.steps.to(y.dtype) + bias


class Strided(nn.Module):
    """A transposed (non-contiguous) parameter and buffers that are views of
    one storage at different offsets and strides."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 4).t())  # [4, 3], strides (1, 4)
        base = torch.arange(24, dtype=torch.float32) / 8.0
        self.register_buffer("a", base[2:8].view(2, 3))  # offset 2
        self.register_buffer("b", base[10:22:2])  # offset 10, stride 2
        self.register_buffer("c", base.view(4, 6)[:, 1:4].t())  # [3, 4], strides (1, 6), offset 1

    def forward(self, x):
        y = x @ self.w  # [2, 3]
        return y + self.a + self.b.view(2, 3) + self.c.sum(1)


class StructuredIO(nn.Module):
    """A keyword input and pytree outputs: a dict holding a tensor and a tuple."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3, bias=False)

    def forward(self, x, *, gain):
        h = self.proj(x)
        return {"scaled": h * gain, "pair": (h.relu(), (h - gain).abs())}


class Dynamic(nn.Module):
    """A batch dim that is symbolic, with a range."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        n = x.shape[0]
        return self.fc(x.reshape(n, 6)).softmax(-1) * n


class Cond(nn.Module):
    """torch.cond on a data-dependent predicate, branches with a parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.5, -0.5, 0.25, 2.0]))

    def forward(self, x):
        def true_fn(x, w):
            return (x * w).sin()

        def false_fn(x, w):
            return x.cos() + w

        return torch.cond(x.sum() > 0, true_fn, false_fn, (x, self.w))


def programs():
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", min=2, max=8)
    return [
        ("state", State(), (torch.randn(2, 4),), {}, None),
        ("strided", Strided(), (torch.randn(2, 4),), {}, None),
        ("structured_io", StructuredIO(), (torch.randn(2, 3),), {"gain": torch.tensor([2.0, 0.5, -1.0])}, None),
        ("dynamic", Dynamic(), (torch.randn(3, 2, 3),), {}, ({0: batch},)),
        ("cond", Cond(), (torch.randn(4),), {}, None),
    ]


def relative_stack_traces(ep):
    """File names in stack_trace metadata relative to this folder or to
    site-packages (torch records absolute paths)."""
    import re
    pattern = re.compile(r'File "(%s/|[^"]*/site-packages/)' % re.escape(HERE))
    for gm in ep.graph_module.modules():
        for node in getattr(gm, "graph", None).nodes if hasattr(gm, "graph") else []:
            st = node.meta.get("stack_trace")
            if st:
                node.meta["stack_trace"] = pattern.sub('File "', st)


def values(t):
    t = t.detach()
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape),
            "values": t.reshape(-1).tolist()}


def flatten(out):
    from torch.utils import _pytree as pytree
    return pytree.tree_flatten(out)[0]


def describe(ep, path):
    sig = ep.graph_signature
    ins = []
    for spec in sig.input_specs:
        ins.append({"kind": spec.kind.name.lower(), "name": spec.arg.name, "target": spec.target,
                    "persistent": spec.persistent})
    outs = [{"kind": spec.kind.name.lower(), "name": spec.arg.name, "target": spec.target}
            for spec in sig.output_specs]
    state = {}
    for fqn, t in list(ep.state_dict.items()) + list(ep.constants.items()):
        state[fqn] = values(t)
    ranges = {}
    for sym, vr in ep.range_constraints.items():
        hi = vr.upper
        ranges[str(sym)] = [int(vr.lower), None if hi > 2 ** 62 else int(hi)]
    user_inputs = [n for n in ep.graph.nodes if n.op == "placeholder"
                   and n.name in [s.arg.name for s in sig.input_specs if s.kind.name == "USER_INPUT"]]
    types = {}
    for n in user_inputs:
        v = n.meta["val"]
        types[n.name] = {"dtype": str(v.dtype).replace("torch.", ""), "shape": [str(d) for d in v.shape]}
    return {"file": os.path.basename(path), "inputs": ins, "outputs": outs, "state": state,
            "range_constraints": ranges, "user_input_types": types}


def main():
    version = torch.__version__.split("+")[0]
    out_dir = os.path.join(HERE, "torch-" + version)
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    manifest = {"torch": torch.__version__, "python": platform.python_version(), "programs": {}}
    for name, module, args, kwargs, dyn in programs():
        module.eval()
        with torch.no_grad():
            want = flatten(module(*args, **kwargs))
        if dyn is not None:
            ep = torch.export.export(module, args, kwargs, dynamic_shapes=dyn)
        else:
            ep = torch.export.export(module, args, kwargs)
        path = os.path.join(out_dir, name + ".pt2")
        relative_stack_traces(ep)
        torch.export.save(ep, path)
        loaded = torch.export.load(path)
        with torch.no_grad():
            got = flatten(loaded.module()(*args, **kwargs))
        for g, w in zip(got, want):
            if not torch.allclose(g, w, rtol=1e-5, atol=1e-6):
                sys.exit("gen: %s: torch.export.load'ed program differs from eager" % name)
        entry = describe(ep, path)
        entry["example"] = {"args": [values(a) for a in args],
                            "kwargs": {k: values(v) for k, v in kwargs.items()},
                            "outputs": [values(w) for w in want]}
        manifest["programs"][name] = entry
        print("gen: wrote %s (%d bytes)" % (path, os.path.getsize(path)))
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
