"""The torch 1.13 path: trace, serialize, pack payloads, write the PT2 archive."""

import io
import os

import torch

from . import archive, payload, serialize113, trace113


def torch_version_string():
    """torch_version written into the program: the real version plus a +fxgen tag."""
    return "%s+fxgen" % torch.__version__.split("+")[0]


def _weights(module):
    items = []
    for fqn, t in module.state_dict(keep_vars=True).items():
        items.append((fqn, t, isinstance(t, torch.nn.Parameter)))
    return items


def _constants(prog):
    items = []
    for info in prog.inputs:
        if info.kind == "buffer" and not info.persistent:
            items.append((info.target, info.value, False))
    for info in prog.inputs:
        if info.kind == "constant":
            items.append((info.target, info.value, False))
    return items


def _sample_inputs(inputs):
    buf = io.BytesIO()
    torch.save((tuple(t.detach().clone() for t in inputs), {}), buf)
    return buf.getvalue()


def build(module, inputs, dims, frame_filter, model_name="model"):
    """Trace module; returns (TracedProgram, archive records)."""
    weights = _weights(module)
    prog = trace113.trace(module, inputs, dims)
    ep = serialize113.Serializer(prog, frame_filter, torch_version_string()).exported_program()
    records = archive.build_records(
        model_name,
        serialize113.to_json_bytes(ep),
        payload.build_payloads(weights, "weight_"),
        payload.build_payloads(_constants(prog), "tensor_"),
        _sample_inputs(inputs),
    )
    return prog, records


def write(out_path, records):
    """Write the archive; its root folder is out_path's base name without extension."""
    root = os.path.splitext(os.path.basename(out_path))[0]
    return archive.write_archive(out_path, root, records)
