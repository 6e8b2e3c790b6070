#!/usr/bin/env python3
"""Compile one fxport OpenVINO partition (.pt2) into an exported compiled model.

Usage: python3 tools/openvino_compile.py IN.pt2 OUT

fxport (`fxport export --target executorch-openvino`) writes each OpenVINO
partition as IN.pt2 and runs this script (or the command given with
--openvino-command / FXPORT_OPENVINO_COMMAND). It must write OUT, the bytes
of CompiledModel.export_model(): the ExecuTorch OpenVINO runtime imports
them with Core.import_model on the device of the compile spec (CPU, catalog
row ET-B06). The steps follow ExecuTorch's OpenvinoBackend.preprocess:
load the partition, convert it with OpenVINO's PyTorch frontend
(openvino.convert_model), compile it for "CPU" and export it.

It needs torch >= 2 (torch.export.load) and the openvino Python package;
without them it exits with status 2 and says which is missing.
"""
import io
import sys

DEVICE = "CPU"


def fail(msg):
    print("openvino_compile: " + msg, file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) != 3:
        fail("usage: openvino_compile.py IN.pt2 OUT")
    src, out = argv[1], argv[2]
    missing = []
    try:
        import torch
    except ImportError:
        torch = None
        missing.append("torch >= 2 (torch.export.load)")
    if torch is not None and not hasattr(getattr(torch, "export", None), "load"):
        missing.append("torch >= 2 (torch.export.load; found torch %s)" % torch.__version__)
    try:
        import openvino
    except ImportError:
        openvino = None
        missing.append("the openvino Python package (pip install openvino)")
    if missing:
        fail("missing " + " and ".join(missing))
    ep = torch.export.load(src)
    model = openvino.convert_model(ep)
    compiled = openvino.Core().compile_model(model, DEVICE)
    blob = compiled.export_model()
    if not isinstance(blob, (bytes, bytearray)):
        # Older bindings export into a stream.
        stream = io.BytesIO()
        compiled.export_model(stream)
        blob = stream.getvalue()
    if not blob:
        fail("export_model returned no bytes")
    with open(out, "wb") as f:
        f.write(blob)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
