"""A GPT-2 transformer block in the style of Hugging Face's GPT2Block.

Conv1D projections (addmm with [in, out] weights), causal self-attention,
the tanh GELU ("gelu_new") written out elementwise, pre-LayerNorm residuals.
The sequence length is dynamic.

Differences from HF GPT-2, forced by torch 1.13's symbolic tracing (which
cannot trace split, slicing or select on symbolic sizes): q, k and v come
from three Conv1D projections instead of one c_attn + split, and the causal
mask is built from ones().tril() instead of slicing a registered buffer.
"""

import math

import torch
import torch.nn as nn

N_EMBD = 64
N_HEAD = 4


class Conv1D(nn.Module):
    """HF's Conv1D: a linear layer with transposed ([nx, nf]) weights."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(0.02 * torch.randn(nx, nf))
        self.bias = nn.Parameter(0.02 * torch.randn(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_dim = N_EMBD // N_HEAD
        self.q_attn = Conv1D(N_EMBD, N_EMBD)
        self.k_attn = Conv1D(N_EMBD, N_EMBD)
        self.v_attn = Conv1D(N_EMBD, N_EMBD)
        self.c_proj = Conv1D(N_EMBD, N_EMBD)

    def _split_heads(self, x):
        return x.view(x.size()[:-1] + (N_HEAD, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, hidden_states):
        q = self._split_heads(self.q_attn(hidden_states))
        k = self._split_heads(self.k_attn(hidden_states))
        v = self._split_heads(self.v_attn(hidden_states))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        t = hidden_states.size(1)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        w = w.masked_fill(causal.logical_not(), float("-inf"))
        w = nn.functional.softmax(w, dim=-1)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (N_EMBD,))
        return self.c_proj(a)


class GPT2MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = Conv1D(4 * N_EMBD, N_EMBD)
        self.c_proj = Conv1D(N_EMBD, 4 * N_EMBD)

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(N_EMBD, eps=1e-5)
        self.attn = GPT2Attention()
        self.ln_2 = nn.LayerNorm(N_EMBD, eps=1e-5)
        self.mlp = GPT2MLP()

    def forward(self, hidden_states):
        h = hidden_states + self.attn(self.ln_1(hidden_states))
        return h + self.mlp(self.ln_2(h))


def gpt2_block():
    """GPT-2 block: n_embd 64, 4 heads, MLP 256; input [1, seq, 64] with seq dynamic in [2, 64]."""
    torch.manual_seed(0)
    return GPT2Block(), (torch.randn(1, 8, N_EMBD),)


gpt2_block.dynamic_shapes = {0: {1: ("seq", 2, 64)}}
