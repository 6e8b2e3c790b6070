"""Check a traced program against eager PyTorch, at the example sizes and,
for dynamic programs, at other sizes (a baked-in example size shows up as a
mismatch or a shape error)."""

import torch

from .eager import MismatchError, compare, eager


def run_traced(prog, inputs):
    args = []
    for info in prog.inputs:
        if info.kind == "user_input":
            continue
        args.append(info.value.detach().clone() if info.kind == "buffer" else info.value.detach())
    args += [x.detach().clone() for x in inputs]
    with torch.no_grad():
        out = prog.gm(*args)
    return list(out)[len(prog.mutations):]


def _alt_inputs(inputs, dims, seed):
    sizes = {}
    for d in dims:
        if d.symbol in sizes:
            continue
        hint = inputs[d.input_index].shape[d.dim]
        alt = hint + 3
        if d.max_val is not None and alt > d.max_val:
            alt = max(2, hint - 1)
        sizes[d.symbol] = alt
    gen = torch.Generator().manual_seed(seed)
    out = []
    for i, x in enumerate(inputs):
        shape = list(x.shape)
        for d in dims:
            if d.input_index == i:
                shape[d.dim] = sizes[d.symbol]
        if x.is_floating_point():
            out.append(torch.randn(shape, generator=gen, dtype=x.dtype))
        elif x.dtype == torch.bool:
            out.append(torch.randint(0, 2, shape, generator=gen).bool())
        else:
            hi = int(x.max().item()) + 1 if x.numel() else 1
            out.append(torch.randint(0, max(hi, 1), shape, generator=gen, dtype=x.dtype))
    return out, sizes


def verify(prog, module, inputs, dims, eager_outputs):
    """Raise MismatchError unless the traced graph reproduces eager outputs."""
    try:
        compare(run_traced(prog, inputs), eager_outputs, "traced graph at example sizes")
        if dims:
            alt, sizes = _alt_inputs(inputs, dims, seed=1234)
            compare(run_traced(prog, alt), eager(module, alt), "traced graph at sizes %s" % sizes)
    except RuntimeError as e:
        raise MismatchError("traced graph failed to run: %s" % str(e).splitlines()[0]) from e
