"""Sample inputs and eager outputs as .npy files (io/input_<i>.npy, io/output_<i>.npy)."""

import glob
import io
import os

import numpy as np


def to_numpy(t):
    import torch
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        raise ValueError("bfloat16 tensors cannot be stored as .npy")
    return t.numpy()


def write_io(out_dir, inputs, outputs):
    """Replace DIR/io/{input,output}_<i>.npy; each file is written atomically."""
    io_dir = os.path.join(out_dir, "io")
    os.makedirs(io_dir, exist_ok=True)
    for stale in glob.glob(os.path.join(io_dir, "input_*.npy")) + glob.glob(os.path.join(io_dir, "output_*.npy")):
        os.remove(stale)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, t in enumerate(tensors):
            buf = io.BytesIO()
            np.save(buf, to_numpy(t), allow_pickle=False)
            path = os.path.join(io_dir, "%s_%d.npy" % (kind, i))
            with open(path + ".tmp", "wb") as f:
                f.write(buf.getvalue())
            os.replace(path + ".tmp", path)
