"""Genuine torch.export: export, decompose to core ATen, save, load back.

The program a user hands to fxport is what ``torch.export.export`` returns
(the "export IR": ATen ops as the model called them, in-place ops and
composite ops such as ``linear`` or ``scaled_dot_product_attention``
included). ``ExportedProgram.run_decompositions()`` with its default table
turns it into the core-ATen form that exir and torch.onnx consume. fxgen saves
the core-ATen form as ``program.pt2`` and, on request, the un-decomposed
export as ``exported.pt2``.
"""

import os
import re
import shutil
import tempfile


class ExportError(Exception):
    """torch.export could not export the module, or the program disagrees with eager."""


def dynamic_shapes(dynamic_spec, n_inputs):
    """torch.export dynamic_shapes (a tuple, or None) from the factory's plain-data spec."""
    from torch.export import Dim

    dims = {}
    shapes = []
    for i in range(n_inputs):
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
    return tuple(shapes) if dims else None


def export(module, inputs, dynamic_spec):
    """(exported, core): torch.export.export's program and its run_decompositions() form."""
    import torch

    try:
        ep = torch.export.export(module.eval(), inputs, dynamic_shapes=dynamic_shapes(dynamic_spec, len(inputs)))
        core = ep.run_decompositions()
    except Exception as e:  # noqa: BLE001 - torch.export raises many types; report them all
        raise ExportError("torch.export failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
    return ep, core


def run(ep, inputs):
    """Flattened outputs of ep.module() on copies of inputs."""
    import torch
    from torch.utils import _pytree as pytree

    with torch.no_grad():
        return pytree.tree_flatten(ep.module()(*[x.detach().clone() for x in inputs]))[0]


def _path_prefixes(repo):
    """Absolute path prefixes to strip from stack traces (the checkout, site-packages)."""
    import site
    import sysconfig

    prefixes = {os.path.realpath(repo) + os.sep, os.path.abspath(repo) + os.sep}
    for p in [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]] + site.getsitepackages():
        prefixes.add(os.path.realpath(p) + os.sep)
        prefixes.add(os.path.abspath(p) + os.sep)
    return sorted(prefixes, key=len, reverse=True)


def relative_stack_traces(ep, repo):
    """Make the file names in every node's stack_trace repository- or package-relative.

    torch records absolute paths; they would make the archive depend on where
    the checkout lives. Only this metadata string changes.
    """
    pattern = re.compile(r'File "(%s)' % "|".join(re.escape(p) for p in _path_prefixes(repo)))
    for gm in ep.graph_module.modules():
        graph = getattr(gm, "graph", None)
        if graph is None:
            continue
        for node in graph.nodes:
            st = node.meta.get("stack_trace")
            if st:
                node.meta["stack_trace"] = pattern.sub('File "', st)


def save(ep, out_path):
    """torch.export.save(ep) to out_path, atomically (a temporary name in the same directory)."""
    import torch

    out_dir = os.path.dirname(os.path.abspath(out_path))
    tmp_dir = tempfile.mkdtemp(prefix=".fxgen-", dir=out_dir)
    try:
        # The archive's root folder is the file's base name: write under the final name.
        tmp = os.path.join(tmp_dir, os.path.basename(out_path))
        torch.export.save(ep, tmp)
        os.replace(tmp, out_path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    return os.path.getsize(out_path)


def load(path):
    import torch
    return torch.export.load(path)
