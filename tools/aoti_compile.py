#!/usr/bin/env python3
"""Compile one fxport CUDA partition (.pt2) with AOTInductor.

Usage: python3 tools/aoti_compile.py IN.pt2 OUT.so

fxport (`fxport export --target executorch-cuda`) writes each CUDA partition
as IN.pt2 and runs this script (or the command given with --aoti-command /
FXPORT_AOTI_COMMAND). It must write OUT.so, a shared library exporting the
AOTInductor model-container interface, and may write OUT.so.weights, the
weights blob the ExecuTorch CUDA runtime feeds to
AOTInductorModelUpdateConstantsFromBlob. The options follow ExecuTorch's
CUDA backend: link_libtorch=False, embed_kernel_binary=True,
package_constants_in_so=False.

It needs torch with CUDA and a visible GPU (Triton compiles and autotunes
kernels on the device); without them it exits with status 2 and says which
is missing.
"""
import os
import shutil
import sys
import tempfile


def fail(msg):
    print("aoti_compile: " + msg, file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) != 3:
        fail("usage: aoti_compile.py IN.pt2 OUT.so")
    src, out = argv[1], argv[2]
    try:
        import torch
    except ImportError:
        fail("torch is not installed (needs torch with CUDA and a GPU)")
    if not torch.cuda.is_available():
        fail("torch %s has no usable CUDA device (torch.version.cuda=%s); needs torch with CUDA and a GPU"
             % (torch.__version__, torch.version.cuda))
    ep = torch.export.load(src)
    options = {
        "aot_inductor.link_libtorch": False,
        "aot_inductor.embed_kernel_binary": True,
        "aot_inductor.package_constants_in_so": False,
        "aot_inductor.package_constants_on_disk_format": "binary_blob",
        "aot_inductor.package": True,
        "max_autotune": False,
    }
    # Example inputs on the GPU, one per user input, from the placeholders'
    # recorded values (the partition's static shapes).
    user = set(ep.graph_signature.user_inputs)
    args = tuple(
        torch.zeros(n.meta["val"].shape, dtype=n.meta["val"].dtype, device="cuda")
        for n in ep.graph.nodes if n.op == "placeholder" and n.name in user)
    mod = ep.module().to("cuda")
    with tempfile.TemporaryDirectory() as tmp:
        if hasattr(torch._inductor, "aot_compile"):
            files = torch._inductor.aot_compile(mod, args, options=options)
        elif hasattr(torch._export, "aot_compile"):
            files = torch._export.aot_compile(mod, args, options=options)
        else:
            fail("torch %s has neither torch._inductor.aot_compile nor torch._export.aot_compile" % torch.__version__)
        if isinstance(files, str):
            files = [files]
        so = [f for f in files if f.endswith(".so")]
        blobs = [f for f in files if f.endswith((".bin", ".blob", "_weights_blob"))]
        if len(so) != 1:
            fail("AOTInductor produced %r, expected exactly one .so" % (files,))
        shutil.copyfile(so[0], out)
        if blobs:
            shutil.copyfile(blobs[0], out + ".weights")
        del tmp
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
