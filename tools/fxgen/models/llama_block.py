"""A Llama decoder block in the style of Meta's reference / gpt-fast code.

RMSNorm, rotary position embedding, grouped-query attention (4 query heads,
2 key/value heads) over a KV cache, SwiGLU feed-forward. The KV cache is two
persistent buffers updated in place with index_copy_ at the positions given
by input_pos: torch.export turns that into buffer mutations (extra leading
outputs), and so does fxgen.

The rotary cos/sin tables are non-persistent buffers that are strided views
of one shared tensor (they land in the constants payload as one record with
two views at different storage offsets).

Attention is written with matmul + softmax: scaled_dot_product_attention
does not exist in torch 1.13 (it appears in torch 2.0).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

DIM = 64
N_HEADS = 4
N_KV_HEADS = 2
HEAD_DIM = DIM // N_HEADS
HIDDEN = 128
MAX_SEQ = 16
BATCH = 1


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(DIM, N_HEADS * HEAD_DIM, bias=False)
        self.wk = nn.Linear(DIM, N_KV_HEADS * HEAD_DIM, bias=False)
        self.wv = nn.Linear(DIM, N_KV_HEADS * HEAD_DIM, bias=False)
        self.wo = nn.Linear(N_HEADS * HEAD_DIM, DIM, bias=False)
        cache = (BATCH, N_KV_HEADS, MAX_SEQ, HEAD_DIM)
        # A cache already holding a few earlier tokens.
        self.register_buffer("k_cache", 0.5 * torch.randn(cache))
        self.register_buffer("v_cache", 0.5 * torch.randn(cache))

    def forward(self, x, cos, sin, input_pos):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, N_HEADS, HEAD_DIM)
        k = self.wk(x).view(b, t, N_KV_HEADS, HEAD_DIM)
        v = self.wv(x).view(b, t, N_KV_HEADS, HEAD_DIM)
        cos = cos.unsqueeze(0).unsqueeze(2)
        sin = sin.unsqueeze(0).unsqueeze(2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        self.k_cache.index_copy_(2, input_pos, k)
        self.v_cache.index_copy_(2, input_pos, v)
        n_rep = N_HEADS // N_KV_HEADS
        keys = self.k_cache.unsqueeze(2).expand(b, N_KV_HEADS, n_rep, MAX_SEQ, HEAD_DIM)
        keys = keys.reshape(b, N_HEADS, MAX_SEQ, HEAD_DIM)
        values = self.v_cache.unsqueeze(2).expand(b, N_KV_HEADS, n_rep, MAX_SEQ, HEAD_DIM)
        values = values.reshape(b, N_HEADS, MAX_SEQ, HEAD_DIM)
        scores = torch.matmul(q, keys.transpose(2, 3)) / math.sqrt(HEAD_DIM)
        visible = torch.arange(MAX_SEQ).unsqueeze(0) <= input_pos.unsqueeze(1)
        scores = scores.masked_fill(visible.logical_not(), float("-inf"))
        probs = F.softmax(scores.float(), dim=-1).type_as(q)
        out = torch.matmul(probs, values).transpose(1, 2).reshape(b, t, N_HEADS * HEAD_DIM)
        return self.wo(out)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(DIM, HIDDEN, bias=False)
        self.w2 = nn.Linear(HIDDEN, DIM, bias=False)
        self.w3 = nn.Linear(DIM, HIDDEN, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, rope_base=10000.0):
        super().__init__()
        self.attention = Attention()
        self.feed_forward = FeedForward()
        self.attention_norm = RMSNorm(DIM)
        self.ffn_norm = RMSNorm(DIM)
        inv_freq = 1.0 / (rope_base ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
        freqs = torch.outer(torch.arange(MAX_SEQ).float(), inv_freq)
        emb = torch.cat([freqs, freqs], dim=-1)
        table = torch.cat([emb.cos(), emb.sin()], dim=-1)  # [MAX_SEQ, 2 * HEAD_DIM]
        self.register_buffer("rope_cos", table[:, :HEAD_DIM], persistent=False)
        self.register_buffer("rope_sin", table[:, HEAD_DIM:], persistent=False)

    def forward(self, x, input_pos):
        cos = self.rope_cos[input_pos]
        sin = self.rope_sin[input_pos]
        h = x + self.attention(self.attention_norm(x), cos, sin, input_pos)
        return h + self.feed_forward(self.ffn_norm(h))


def llama_block():
    """Llama block: dim 64, 4 heads / 2 KV heads, SwiGLU 128, KV cache 16, decoding 4 tokens at 3..6."""
    torch.manual_seed(0)
    return TransformerBlock(), (torch.randn(BATCH, 4, DIM), torch.arange(3, 7))
