"""Eager reference outputs and output comparison (any torch version)."""

import copy


class MismatchError(Exception):
    """A traced program disagrees with eager PyTorch."""


def eager(module, inputs):
    """Flattened outputs of a fresh copy of module (buffers are not touched)."""
    import torch
    from torch.utils import _pytree as pytree
    m = copy.deepcopy(module).eval()
    with torch.no_grad():
        out = m(*[x.detach().clone() for x in inputs])
    return pytree.tree_flatten(out)[0]


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
