"""Writes exir_calls.pte: exir's own portable program for a module whose ops
have several outputs or a tensor-list out (the calling convention's cases),
and a scalar in a Tensor slot. Run with the project's venv:

    third_party/venv/bin/python targets/executorch/callconv/testdata/gen_exir_calls.py
"""
import os

import torch
from executorch.exir import to_edge


class Calls(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(8)
        self.bn = torch.nn.BatchNorm2d(2).eval()
        self.pool = torch.nn.MaxPool2d(2, return_indices=True)

    def forward(self, x, img):
        a = self.ln(x)
        v, i = torch.topk(a, 3)
        p, q = torch.split(a, [3, 5], dim=1)
        r, s = torch.split(a, 4, dim=1)
        y, idx = self.pool(self.bn(img))
        return v * 0.5, i, p, q, r + s, y, idx


def main():
    torch.manual_seed(0)
    m = Calls().eval()
    args = (torch.randn(2, 8), torch.randn(1, 2, 4, 4))
    ep = torch.export.export(m, args)
    prog = to_edge(ep).to_executorch()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exir_calls.pte")
    with open(out, "wb") as f:
        f.write(prog.buffer)
    print("wrote", out, len(prog.buffer), "bytes")


if __name__ == "__main__":
    main()
