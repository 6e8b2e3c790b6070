"""Eager reference outputs, output comparison and the degenerate-output test."""

import copy


class MismatchError(Exception):
    """An exported program disagrees with eager PyTorch."""


def eager(module, inputs):
    """Flattened outputs of a fresh copy of module (its buffers are not touched)."""
    import torch
    from torch.utils import _pytree as pytree
    m = copy.deepcopy(module).eval()
    with torch.no_grad():
        out = m(*[x.detach().clone() for x in inputs])
    return pytree.tree_flatten(out)[0]


def degenerate(t):
    """Why tensor t cannot catch errors as an expected output ("" when it can)."""
    import torch
    if t.numel() == 0:
        return "empty"
    if t.is_floating_point():
        if not torch.isfinite(t).all():
            return "not finite (NaN or Inf)"
        if (t == 0).all():
            return "all zero"
    if t.numel() > 1 and (t == t.reshape(-1)[0]).all():
        return "constant (every element %s)" % t.reshape(-1)[0].item()
    return ""


def compare(got, want, what):
    import torch
    if len(got) != len(want):
        raise MismatchError("%s: %d outputs, eager has %d" % (what, len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            raise MismatchError("%s: output %d is %s %s, eager gives %s %s"
                                % (what, i, g.dtype, tuple(g.shape), w.dtype, tuple(w.shape)))
        if w.is_floating_point():
            ok = torch.allclose(g, w, rtol=1e-4, atol=1e-5)
        else:
            ok = torch.equal(g, w)
        if not ok:
            raise MismatchError("%s: output %d differs from eager (max abs diff %s)"
                                % (what, i, (g.double() - w.double()).abs().max().item()))
