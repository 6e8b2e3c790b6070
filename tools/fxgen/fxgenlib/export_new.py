"""The torch >= 2.6 path: torch.export.export + torch.export.save."""

import os
import shutil
import tempfile


def export(module, inputs, dynamic_spec, out_path, eager_outputs):
    """Export with torch.export, check it against eager_outputs, save to out_path atomically."""
    import torch
    from torch.export import Dim
    from torch.utils import _pytree as pytree

    from .eager import compare

    dims = {}
    shapes = []
    for i in range(len(inputs)):
        spec = dynamic_spec.get(i)
        if not spec:
            shapes.append(None)
            continue
        per_input = {}
        for dim, (name, lo, hi) in sorted(spec.items()):
            if name not in dims:
                kwargs = {}
                if lo is not None:
                    kwargs["min"] = lo
                if hi is not None:
                    kwargs["max"] = hi
                dims[name] = Dim(name, **kwargs)
            per_input[dim] = dims[name]
        shapes.append(per_input)
    ep = torch.export.export(module.eval(), inputs, dynamic_shapes=tuple(shapes) if dims else None)
    with torch.no_grad():
        got = pytree.tree_flatten(ep.module()(*[x.detach().clone() for x in inputs]))[0]
    compare(got, eager_outputs, "exported program at example sizes")
    out_dir = os.path.dirname(os.path.abspath(out_path))
    tmp_dir = tempfile.mkdtemp(prefix=".fxgen-", dir=out_dir)
    try:
        tmp = os.path.join(tmp_dir, os.path.basename(out_path))
        torch.export.save(ep, tmp)
        os.replace(tmp, out_path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return ep, os.path.getsize(out_path)
