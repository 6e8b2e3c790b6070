"""A small attention block that needs four capture steps: a **kwargs forward
(DYN-S08), a stateful cache attribute (DYN-S06), a config with use_cache
(DYN-S07) and CPU attention (DYN-P05)."""

import types

import torch
import torch.nn.functional as F


class TinyAttention(torch.nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)
        self.norm = torch.nn.LayerNorm(dim)
        self.config = types.SimpleNamespace(use_cache=True)
        # Eager state a trace must not capture (DYN-S06 clears it).
        self.cached_sequence_length = 7

    def forward(self, **kwargs):
        x = kwargs["hidden_states"]
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm(x)).split(d, dim=-1)
        shape = (b, s, self.heads, d // self.heads)
        q, k, v = (t.reshape(shape).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(b, s, d)
        scale = 2.0 if self.config.use_cache else 1.0
        return self.out(y) * scale + kwargs["bias"]


def tiny_attention():
    torch.manual_seed(0)
    m = TinyAttention()
    return m, {"hidden_states": torch.randn(2, 6, 16), "bias": torch.randn(16), "use_cache": False}
