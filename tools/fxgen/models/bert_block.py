"""BERT embeddings + one encoder layer in the style of Hugging Face's BertModel.

Word, position and token-type embeddings with LayerNorm; self-attention with
the additive extended attention mask; intermediate dense + erf GELU; output
dense + LayerNorm residuals. Batch and sequence length are dynamic.

Differences from HF BERT, forced by torch 1.13's symbolic tracing: position
ids come from arange(seq) instead of slicing a registered buffer, and the
mask is expanded with unsqueeze instead of None-indexing.
"""

import math

import torch
import torch.nn as nn

VOCAB = 100
HIDDEN = 64
HEADS = 4
INTERMEDIATE = 128
MAX_POS = 64


class BertEmbeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN, padding_idx=0)
        self.position_embeddings = nn.Embedding(MAX_POS, HIDDEN)
        self.token_type_embeddings = nn.Embedding(2, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, input_ids):
        seq = input_ids.size(1)
        position_ids = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        token_type_ids = torch.zeros_like(input_ids)
        e = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        e = e + self.position_embeddings(position_ids)
        return self.LayerNorm(e)


class BertSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.head_size = HIDDEN // HEADS
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)

    def transpose_for_scores(self, x):
        return x.view(x.size()[:-1] + (HEADS, self.head_size)).permute(0, 2, 1, 3)

    def forward(self, hidden_states, extended_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        probs = nn.functional.softmax(scores + extended_mask, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (HIDDEN,))


class BertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = BertSelfAttention()
        self.attention_output = nn.Linear(HIDDEN, HIDDEN)
        self.attention_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.intermediate = nn.Linear(HIDDEN, INTERMEDIATE)
        self.output = nn.Linear(INTERMEDIATE, HIDDEN)
        self.output_norm = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, hidden_states, extended_mask):
        a = self.attention(hidden_states, extended_mask)
        a = self.attention_norm(self.attention_output(a) + hidden_states)
        i = nn.functional.gelu(self.intermediate(a))
        return self.output_norm(self.output(i) + a)


class BertBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = BertEmbeddings()
        self.layer = BertLayer()

    def forward(self, input_ids, attention_mask):
        ext = attention_mask.unsqueeze(1).unsqueeze(2).to(torch.float32)
        ext = (1.0 - ext) * torch.finfo(torch.float32).min
        return self.layer(self.embeddings(input_ids), ext)


def bert_block():
    """BERT embeddings + 1 layer: hidden 64, 4 heads, FFN 128; ids and mask [batch, seq], both dynamic."""
    torch.manual_seed(0)
    ids = torch.randint(1, VOCAB, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0
    return BertBlock(), (ids, mask)


bert_block.dynamic_shapes = {0: {0: ("batch", 2, 16), 1: ("seq", 2, 64)},
                             1: {0: ("batch", 2, 16), 1: ("seq", 2, 64)}}
