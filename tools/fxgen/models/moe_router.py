"""A top-k mixture-of-experts layer in the style of Mixtral's sparse MoE block.

A linear router scores 4 experts per token; softmax, top-2, renormalised
weights; every expert is a SwiGLU MLP. Returns (output, router_logits) like
Hugging Face's MixtralSparseMoeBlock.

Difference from Mixtral: the experts run on all tokens and are combined with
a dense [tokens, experts] routing-weight matrix (scatter of the top-k
weights) instead of gathering each expert's tokens with torch.where, which
has a data-dependent size that torch 1.13 cannot trace.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

DIM = 32
HIDDEN = 64
N_EXPERTS = 4
TOP_K = 2


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, HIDDEN, bias=False)
        self.w2 = nn.Linear(HIDDEN, DIM, bias=False)
        self.w3 = nn.Linear(DIM, HIDDEN, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoeBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(DIM, N_EXPERTS, bias=False)
        self.experts = nn.ModuleList([Expert() for _ in range(N_EXPERTS)])

    def forward(self, hidden_states):
        batch, seq, dim = hidden_states.shape
        flat = hidden_states.view(-1, dim)
        router_logits = self.gate(flat)
        probs = F.softmax(router_logits, dim=1, dtype=torch.float)
        weights, selected = torch.topk(probs, TOP_K, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        routing = torch.zeros_like(probs).scatter(1, selected, weights).to(hidden_states.dtype)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            out = out + routing[:, e:e + 1] * expert(flat)
        return out.view(batch, seq, dim), router_logits


def moe_router():
    """MoE: dim 32, 4 SwiGLU experts (hidden 64), top-2 router; input [2, 6, 32]; outputs (hidden, logits)."""
    torch.manual_seed(0)
    return SparseMoeBlock(), (torch.randn(2, 6, DIM),)
