"""A Mamba-style selective state-space block (reference "selective_scan" loop).

in_proj to (x, z); causal depthwise conv1d + SiLU; x_proj to (delta, B, C)
with split_with_sizes; softplus(dt_proj(delta)); discretised A and B; then
the sequential scan h_t = exp(delta_t A) h_{t-1} + delta_t B_t x_t,
y_t = C_t h_t, written as a Python loop over the sequence; D skip, SiLU(z)
gate, out_proj.

Tracing unrolls the loop: the graph holds one step per position (sequence
length 8), as torch.export does for Python loops without a scan HOP.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

D_MODEL = 32
D_INNER = 64
D_STATE = 8
D_CONV = 4
DT_RANK = math.ceil(D_MODEL / 16)
SEQ = 8


class MambaBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.in_proj = nn.Linear(D_MODEL, 2 * D_INNER, bias=False)
        self.conv1d = nn.Conv1d(D_INNER, D_INNER, kernel_size=D_CONV, groups=D_INNER, padding=D_CONV - 1)
        self.x_proj = nn.Linear(D_INNER, DT_RANK + 2 * D_STATE, bias=False)
        self.dt_proj = nn.Linear(DT_RANK, D_INNER)
        a = torch.arange(1, D_STATE + 1, dtype=torch.float32).repeat(D_INNER, 1)
        self.A_log = nn.Parameter(torch.log(a))
        self.D = nn.Parameter(torch.ones(D_INNER) + 0.1 * torch.randn(D_INNER))
        self.out_proj = nn.Linear(D_INNER, D_MODEL, bias=False)

    def forward(self, hidden_states):
        b, length, _ = hidden_states.shape
        x, z = self.in_proj(hidden_states).chunk(2, dim=-1)
        x = self.conv1d(x.transpose(1, 2))[..., :length].transpose(1, 2)
        x = F.silu(x)
        delta, bmat, cmat = torch.split(self.x_proj(x), [DT_RANK, D_STATE, D_STATE], dim=-1)
        delta = F.softplus(self.dt_proj(delta))
        a = -torch.exp(self.A_log.float())
        delta_a = torch.exp(delta.unsqueeze(-1) * a)
        delta_b_u = delta.unsqueeze(-1) * bmat.unsqueeze(2) * x.unsqueeze(-1)
        h = torch.zeros(b, D_INNER, D_STATE, dtype=x.dtype, device=x.device)
        ys = []
        for i in range(length):
            h = delta_a[:, i] * h + delta_b_u[:, i]
            ys.append(torch.matmul(h, cmat[:, i].unsqueeze(-1)).squeeze(-1))
        y = torch.stack(ys, dim=1) + x * self.D
        y = y * F.silu(z)
        return self.out_proj(y)


def selective_scan():
    """Mamba block: d_model 32, d_inner 64, d_state 8, conv 4; input [2, 8, 32]; scan unrolled 8 steps."""
    torch.manual_seed(0)
    return MambaBlock(), (torch.randn(2, SEQ, D_MODEL),)
